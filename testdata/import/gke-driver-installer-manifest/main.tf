resource "google_container_cluster" "ray" {
  name               = "ray-gpu"
  location           = "us-central1"
  min_master_version = "1.34"
}

resource "google_container_node_pool" "t4" {
  name           = "t4-pool"
  cluster        = google_container_cluster.ray.id
  location       = "us-central1"
  node_locations = ["us-central1-a"]
  node_count     = 1
  node_config {
    machine_type = "n1-standard-16"
    image_type   = "cos_containerd"
    guest_accelerator {
      type  = "nvidia-tesla-t4"
      count = 2
    }
  }
}

data "http" "nvidia_driver_installer_manifest" {
  url = "https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/master/nvidia-driver-installer/cos/daemonset-preloaded.yaml"
}

resource "kubectl_manifest" "nvidia_driver_installer" {
  yaml_body = data.http.nvidia_driver_installer_manifest.response_body
}
