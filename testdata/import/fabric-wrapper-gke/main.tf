# A root calling a local wrapper module that builds a GKE cluster and its
# pools with cloud-foundation-fabric's modules (by git source).
module "infra" {
  source       = "./modules/gke-infra"
  cluster_name = "bench"
  location     = "us-central1-a"
  pools = {
    cpu = {
      machine_type = "n2-standard-4"
    }
    l4 = {
      machine_type = "g2-standard-16"
      gpu = {
        type   = "nvidia-l4"
        count  = 1
        driver = "LATEST"
      }
      max_nodes = 4
    }
  }
}
