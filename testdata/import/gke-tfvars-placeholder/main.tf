variable "project_id" {
  type = string
}

variable "cluster_name" {
  type = string
}

variable "region" {
  type    = string
  default = "us-central1"
}

resource "google_container_cluster" "ml" {
  project            = var.project_id
  name               = var.cluster_name
  location           = var.region
  min_master_version = "1.34"
}

resource "google_container_node_pool" "l4" {
  name     = "l4-pool"
  cluster  = google_container_cluster.ml.id
  location = var.region
  autoscaling {
    total_min_node_count = 0
    total_max_node_count = 4
  }
  node_config {
    machine_type = "g2-standard-24"
    guest_accelerator {
      type  = "nvidia-l4"
      count = 2
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
  }
}
