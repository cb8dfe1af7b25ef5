module "gke" {
  source  = "terraform-google-modules/kubernetes-engine/google"
  version = "~> 36.0"

  project_id         = var.project_id
  name               = var.cluster_name
  region             = var.region
  kubernetes_version = var.kubernetes_version
  release_channel    = var.release_channel
  network            = var.network
  subnetwork         = var.network
  ip_range_pods      = "pods"
  ip_range_services  = "services"

  node_pools = concat(var.cpu_pools, var.gpu_pools)

  node_pools_labels = {
    all = { "created-by" = "gpuctl-fixture" }
  }
}
