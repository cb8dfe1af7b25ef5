variable "cluster_name" {
  type = string
}

resource "google_container_cluster" "this" {
  name             = var.cluster_name
  location         = "us-central1"
  enable_autopilot = true
}
