# terraform-google-modules node_pools with disk_type, enable_gcfs and local SSD
# ephemeral storage; a sibling pool holds a value gpuctl cannot evaluate.
module "gke" {
  source  = "terraform-google-modules/kubernetes-engine/google"
  version = "~> 36.0"
  name    = "c"
  region  = "us-central1"
  zones   = ["us-central1-a"]
  node_pools = [
    {
      name             = "h100"
      machine_type     = "a3-highgpu-1g"
      accelerator_type = "nvidia-h100-80gb"
      accelerator_count = 1
      disk_type        = "pd-ssd"
      enable_gcfs      = true
      local_ssd_ephemeral_storage_count = 2
    },
    {
      name         = "cpu"
      machine_type = "e2-standard-4"
      service_account = provider::google::project_from_id("x")
    },
  ]
}
