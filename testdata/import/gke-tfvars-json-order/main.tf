# A GKE cluster and an L4 pool whose values come from HCL and JSON tfvars
# files and the command line, in Terraform's order.
provider "google" {
  project = "ml-project"
  region  = var.region
}

variable "region" {
  type    = string
  default = "us-central1"
}

variable "machine_type" {
  type    = string
  default = "g2-standard-4"
}

variable "max_nodes" {
  type    = number
  default = 1
}

variable "disk_gb" {
  type    = number
  default = 50
}

variable "labels" {
  type    = map(string)
  default = {}
}

resource "google_container_cluster" "main" {
  name                     = "infer"
  location                 = var.region
  remove_default_node_pool = true
  initial_node_count       = 1
  min_master_version       = "1.33"
}

resource "google_container_node_pool" "l4" {
  name     = "l4"
  cluster  = google_container_cluster.main.id
  location = var.region

  autoscaling {
    total_min_node_count = 0
    total_max_node_count = var.max_nodes
  }

  node_config {
    machine_type = var.machine_type
    disk_size_gb = var.disk_gb
    labels       = var.labels

    guest_accelerator {
      type  = "nvidia-l4"
      count = 2
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
  }
}
