# A node pool beside the local module that makes its cluster: the pool
# reads the module's outputs (module.cluster.X), one of them a value the
# provider computes; a remote module's output stays unknown.
module "cluster" {
  source = "./cluster"

  name   = "inference"
  region = "europe-west4"
}

module "vpc" {
  source = "git::https://example.com/network.git//vpc?ref=v1.0.0"
}

resource "google_container_node_pool" "l4" {
  name           = "l4"
  cluster        = module.cluster.name
  location       = module.cluster.location
  node_locations = module.cluster.gpu_zones

  autoscaling {
    total_min_node_count = 0
    total_max_node_count = module.cluster.max_nodes
  }

  node_config {
    machine_type = "g2-standard-8"
    image_type   = module.cluster.image_type
    labels       = module.cluster.labels
    disk_size_gb = module.vpc.node_disk_size_gb

    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
  }
}
