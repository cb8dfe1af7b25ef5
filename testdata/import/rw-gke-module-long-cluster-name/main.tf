# A cluster name built from a local and an empty suffix comes out at 44
# characters; GKE takes at most 40. The GPU pool itself is fine.
locals {
  cluster_type = "node-pool-update-variant-public-beta"
}

variable "cluster_name_suffix" {
  type    = string
  default = ""
}

module "gke" {
  source  = "terraform-google-modules/kubernetes-engine/google//modules/beta-public-cluster-update-variant"
  version = "~> 38.0"

  project_id        = "gpuctl-fixture"
  name              = "${local.cluster_type}-cluster${var.cluster_name_suffix}"
  region            = "us-central1"
  network           = "default"
  subnetwork        = "default"
  ip_range_pods     = "pods"
  ip_range_services = "services"

  node_pools = [
    {
      name              = "l4-pool"
      machine_type      = "g2-standard-8"
      node_locations    = "us-central1-a,us-central1-b"
      min_count         = 0
      max_count         = 4
      accelerator_count = 1
      accelerator_type  = "nvidia-l4"
    },
  ]
}
