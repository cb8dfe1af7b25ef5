# A CPU pool that leaves machine_type to the module (e2-medium) next to an
# L4 pool; the module call names no version.
variable "project_id" {
  type = string
}

variable "system_max_nodes" {
  type = number
}

module "gke" {
  source = "terraform-google-modules/kubernetes-engine/google//modules/private-cluster"

  project_id        = var.project_id
  name              = "l4-cluster"
  region            = "us-central1"
  network           = "vpc"
  subnetwork        = "subnet"
  ip_range_pods     = "pods"
  ip_range_services = "services"

  node_pools = [
    {
      name      = "system"
      max_count = var.system_max_nodes
    },
    {
      name               = "l4"
      machine_type       = "g2-standard-8"
      node_locations     = "us-central1-a"
      min_count          = 0
      max_count          = 2
      accelerator_count  = 1
      accelerator_type   = "nvidia-l4"
      gpu_driver_version = "LATEST"
    },
  ]
}
