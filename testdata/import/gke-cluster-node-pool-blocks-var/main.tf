# A GKE cluster that manages its node pools as node_pool blocks: a CPU
# system pool and an A100 training pool. The environment and the GPU
# count come from the command line (args: --var ...).
variable "env" {
  type = string
}

variable "a100_nodes" {
  type    = number
  default = 1
}

variable "a100_machine" {
  type    = string
  default = "a2-highgpu-1g"
}

locals {
  gpus_per_machine = {
    "a2-highgpu-1g" = 1
    "a2-highgpu-2g" = 2
    "a2-highgpu-4g" = 4
  }
}

resource "google_container_cluster" "train" {
  name     = "train-${var.env}"
  location = "us-central1"

  min_master_version = "1.34"
  release_channel {
    channel = "STABLE"
  }

  node_pool {
    name       = "system"
    node_count = 1
    node_config {
      machine_type = "e2-standard-4"
    }
  }

  node_pool {
    name           = "a100"
    node_locations = ["us-central1-c"]
    node_count     = var.a100_nodes

    management {
      auto_repair  = true
      auto_upgrade = true
    }

    placement_policy {
      type = "COMPACT"
    }

    node_config {
      machine_type = var.a100_machine
      image_type   = "UBUNTU_CONTAINERD"
      disk_size_gb = 200
      labels = {
        "cloud.google.com/gke-accelerator-count" = tostring(lookup(local.gpus_per_machine, var.a100_machine, 1))
      }

      guest_accelerator {
        type  = "nvidia-tesla-a100"
        count = lookup(local.gpus_per_machine, var.a100_machine, 1)
        gpu_driver_installation_config {
          gpu_driver_version = "LATEST"
        }
      }

      taint {
        key    = "nvidia.com/gpu"
        value  = "present"
        effect = "NO_SCHEDULE"
      }
    }
  }
}
