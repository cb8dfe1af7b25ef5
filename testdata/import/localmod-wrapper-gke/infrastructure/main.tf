# A platform folder that calls its own wrapper module around the
# terraform-google-modules registry module, once (count), with the GPU
# pools built in a local.
variable "project_id" {
  type    = string
  default = "ml-platform"
}

variable "cluster_name" {
  type    = string
  default = "ml-standard"
}

variable "create_cluster" {
  type    = bool
  default = true
}

variable "gpu_pools" {
  type = list(object({
    name         = string
    machine_type = string
    gpu          = string
    gpus         = number
  }))
  default = [
    { name = "l4", machine_type = "g2-standard-24", gpu = "nvidia-l4", gpus = 2 },
  ]
}

locals {
  gpu_pools = [for p in var.gpu_pools : {
    name               = "gpu-${p.name}"
    machine_type       = p.machine_type
    node_locations     = "us-central1-a"
    min_count          = 0
    max_count          = 4
    accelerator_type   = p.gpu
    accelerator_count  = p.gpus
    gpu_driver_version = "LATEST"
  }]
}

module "standard_cluster" {
  count  = var.create_cluster ? 1 : 0
  source = "../modules/gke-standard"

  project_id   = var.project_id
  cluster_name = var.cluster_name
  region       = "us-central1"
  gpu_pools    = local.gpu_pools
}

module "autopilot_cluster" {
  count  = var.create_cluster ? 0 : 1
  source = "../modules/gke-autopilot"

  cluster_name = var.cluster_name
}

module "legacy_cluster" {
  source = "../modules/gke-legacy"
}
