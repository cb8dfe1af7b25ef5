variable "name" {
  type = string
}

variable "region" {
  type = string
}

variable "max_nodes" {
  type    = number
  default = 4
}

locals {
  gpu_zones = ["${var.region}-a", "${var.region}-b"]
}

resource "google_container_cluster" "this" {
  name                     = var.name
  location                 = var.region
  min_master_version       = "1.33"
  remove_default_node_pool = true
  initial_node_count       = 1
}

output "name" {
  value = google_container_cluster.this.name
}

output "location" {
  value = google_container_cluster.this.location
}

output "gpu_zones" {
  value = local.gpu_zones
}

output "max_nodes" {
  value = var.max_nodes
}

output "labels" {
  value = { team = var.name, module = path.module }
}

output "image_type" {
  value = google_container_cluster.this.node_config[0].image_type
}
