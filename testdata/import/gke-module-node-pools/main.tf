# terraform-google-modules/kubernetes-engine with a GPU pool, labels and
# taints for all pools and per pool, values from a --var-file.
variable "project_id" {
  type = string
}

variable "region" {
  type    = string
  default = "us-central1"
}

variable "gpu_pool" {
  type = object({
    machine_type = string
    accelerator  = string
    count        = number
  })
  default = {
    machine_type = "a2-highgpu-1g"
    accelerator  = "nvidia-tesla-a100"
    count        = 1
  }
}

module "gke" {
  source  = "terraform-google-modules/kubernetes-engine/google//modules/beta-public-cluster"
  version = "~> 44.0"

  project_id         = var.project_id
  name               = "gpu-cluster"
  region             = var.region
  kubernetes_version = "1.34"
  release_channel    = "STABLE"
  network            = "default"
  subnetwork         = "default"
  ip_range_pods      = "pods"
  ip_range_services  = "services"

  node_pools = [
    {
      name         = "default-pool"
      machine_type = "e2-standard-4"
      min_count    = 1
      max_count    = 3
    },
    {
      name               = "gpu-pool"
      machine_type       = var.gpu_pool.machine_type
      node_locations     = "${var.region}-a,${var.region}-b"
      min_count          = 0
      max_count          = 4
      disk_size_gb       = 200
      accelerator_count  = var.gpu_pool.count
      accelerator_type   = var.gpu_pool.accelerator
      gpu_driver_version = "LATEST"
      spot               = true
    },
  ]

  node_pools_labels = {
    all = {
      env = "prod"
    }
    gpu-pool = {
      accelerator = "a100"
    }
  }

  node_pools_taints = {
    gpu-pool = [
      {
        key    = "nvidia.com/gpu"
        value  = "present"
        effect = "NO_SCHEDULE"
      },
    ]
  }
}
