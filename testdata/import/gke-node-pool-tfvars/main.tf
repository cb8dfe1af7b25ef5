# A GKE cluster and a separately managed L4 node pool, values in terraform.tfvars.
provider "google" {
  project = var.project_id
  region  = var.region
}

variable "project_id" {
  type = string
}

variable "region" {
  type    = string
  default = "us-central1"
}

variable "gpu_machine_type" {
  type    = string
  default = "g2-standard-8"
}

variable "gpu_driver" {
  type    = string
  default = "DEFAULT"
}

variable "max_nodes" {
  type    = number
  default = 2
}

locals {
  cluster_name = "ml-${var.env}"
  common_labels = {
    team = "research"
  }
}

variable "env" {
  type    = string
  default = "dev"
}

resource "google_container_cluster" "primary" {
  name     = local.cluster_name
  location = var.region

  remove_default_node_pool = true
  initial_node_count       = 1
  min_master_version       = "1.33"

  release_channel {
    channel = "REGULAR"
  }
}

resource "google_container_node_pool" "l4" {
  name           = "${local.cluster_name}-l4"
  cluster        = google_container_cluster.primary.id
  location       = var.region
  node_locations = ["${var.region}-a", "${var.region}-b"]

  autoscaling {
    total_min_node_count = 0
    total_max_node_count = var.max_nodes
  }

  management {
    auto_repair  = true
    auto_upgrade = true
  }

  node_config {
    machine_type = var.gpu_machine_type
    image_type   = "COS_CONTAINERD"
    disk_size_gb = 100
    spot         = true
    labels       = merge(local.common_labels, { workload = "inference" })

    taint {
      key    = "nvidia.com/gpu"
      value  = "present"
      effect = "NO_SCHEDULE"
    }

    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
      gpu_driver_installation_config {
        gpu_driver_version = var.gpu_driver
      }
    }
  }
}

resource "google_service_account" "nodes" {
  account_id = "gpu-nodes"
}
