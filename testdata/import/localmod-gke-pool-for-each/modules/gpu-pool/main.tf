variable "cluster" {
  type = string
}

variable "location" {
  type = string
}

variable "name" {
  type = string
}

variable "machine_type" {
  type = string
}

variable "accelerator" {
  type = string
}

variable "gpus" {
  type = number
}

variable "zones" {
  type = list(string)
}

variable "max_nodes" {
  type = number
}

variable "spot" {
  type    = bool
  default = false
}

variable "disk_size_gb" {
  type = number
}

locals {
  driver = var.spot ? "DEFAULT" : "LATEST"
}

resource "google_container_node_pool" "this" {
  name           = var.name
  cluster        = var.cluster
  location       = var.location
  node_locations = var.zones

  autoscaling {
    total_min_node_count = 0
    total_max_node_count = var.max_nodes
  }

  node_config {
    machine_type = var.machine_type
    spot         = var.spot
    disk_size_gb = var.disk_size_gb
    labels       = { pool = var.name }

    guest_accelerator {
      type  = var.accelerator
      count = var.gpus
      gpu_driver_installation_config {
        gpu_driver_version = local.driver
      }
    }
  }
}
