# GKE pools with local SSDs as ephemeral storage, disk types and image
# streaming, written with dynamic blocks as modules write them.
variable "enable_gcfs" {
  type    = bool
  default = true
}

variable "team" {
  type        = string
  description = "The team whose workloads the L4 pool takes; no default"
}

variable "ephemeral_ssds" {
  type    = number
  default = 0
}

resource "google_container_node_pool" "h100" {
  name     = "h100"
  cluster  = "frontier"
  location = "us-central1"

  node_locations = ["us-central1-a"]

  autoscaling {
    total_min_node_count = 0
    total_max_node_count = 4
  }

  node_config {
    machine_type = "a3-highgpu-8g"
    disk_size_gb = 200
    disk_type    = "pd-ssd"

    guest_accelerator {
      type  = "nvidia-h100-80gb"
      count = 8
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }

    dynamic "ephemeral_storage_local_ssd_config" {
      for_each = var.ephemeral_ssds != null ? [1] : []
      content {
        local_ssd_count = var.ephemeral_ssds
      }
    }

    dynamic "gcfs_config" {
      for_each = var.enable_gcfs ? [1] : []
      content {
        enabled = true
      }
    }
  }
}

resource "google_container_node_pool" "l4" {
  name     = "l4"
  cluster  = "frontier"
  location = "us-central1-a"

  autoscaling {
    total_min_node_count = 0
    total_max_node_count = 2
  }

  node_config {
    machine_type = "g2-standard-24"
    disk_type    = "pd-balanced"

    guest_accelerator {
      type  = "nvidia-l4"
      count = 2
    }

    local_nvme_ssd_block_config {
      local_ssd_count = 2
    }

    dynamic "taint" {
      for_each = concat([{ key = "nvidia.com/gpu", value = "present", effect = "NO_SCHEDULE" }], [{ key = "team", value = var.team, effect = "NO_SCHEDULE" }])
      content {
        key    = taint.value.key
        value  = taint.value.value
        effect = taint.value.effect
      }
    }
  }
}
