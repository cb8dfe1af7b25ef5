# One GPU pool file of a folder that a deploy step copies into another root
# module: the cluster comes from a data source and the driver version from a
# variable this folder does not declare (the root module's shared variables
# file declares it). Both are unknown, not "unset".
data "google_container_cluster" "this" {
  name     = "gpu-team"
  location = "europe-west4"
}

resource "google_container_node_pool" "l4_x2" {
  name           = "l4-x2"
  cluster        = data.google_container_cluster.this.name
  location       = "europe-west4"
  node_locations = ["europe-west4-a", "europe-west4-b"]

  autoscaling {
    total_min_node_count = 0
    total_max_node_count = 8
  }

  node_config {
    machine_type = "g2-standard-24"

    guest_accelerator {
      type  = "nvidia-l4"
      count = 2

      gpu_driver_installation_config {
        gpu_driver_version = var.gpu_driver_version
      }
    }
  }
}
