# GKE flex-start and queued provisioning pools (Dynamic Workload Scheduler).
variable "enable_queued_provisioning" {
  type    = bool
  default = true
}

resource "google_container_node_pool" "tune" {
  name           = "tune-l4"
  cluster        = "dws"
  location       = "us-central1"
  node_locations = ["us-central1-a"]

  autoscaling {
    total_min_node_count = 0
    total_max_node_count = 4
    location_policy      = "ANY"
  }
  management {
    auto_repair  = false
    auto_upgrade = true
  }

  node_config {
    machine_type = "g2-standard-24"
    flex_start   = true
    reservation_affinity {
      consume_reservation_type = "NO_RESERVATION"
    }
    guest_accelerator {
      type  = "nvidia-l4"
      count = 2
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
  }
}

resource "google_container_node_pool" "train" {
  name           = "train-h100"
  cluster        = "dws"
  location       = "us-central1"
  node_locations = ["us-central1-a"]

  autoscaling {
    total_min_node_count = 0
    total_max_node_count = 8
    location_policy      = "ANY"
  }
  management {
    auto_repair  = false
    auto_upgrade = true
  }
  dynamic "queued_provisioning" {
    for_each = var.enable_queued_provisioning ? [1] : []
    content {
      enabled = true
    }
  }

  node_config {
    machine_type = "a3-highgpu-8g"
    flex_start   = true
    reservation_affinity {
      consume_reservation_type = "NO_RESERVATION"
    }
    guest_accelerator {
      type  = "nvidia-h100-80gb"
      count = 8
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
  }
}
