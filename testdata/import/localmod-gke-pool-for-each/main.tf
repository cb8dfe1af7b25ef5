# One node pool module instance per entry of var.gpu_pools (for_each,
# values from terraform.tfvars), and the same folder called with count.
variable "gpu_pools" {
  type = map(object({
    machine_type = string
    accelerator  = string
    gpus         = number
    zones        = list(string)
    max_nodes    = number
  }))
}

resource "google_container_cluster" "main" {
  name                     = "training"
  location                 = "us-central1"
  min_master_version       = "1.34"
  remove_default_node_pool = true
  initial_node_count       = 1
}

module "gpu_pool" {
  source   = "./modules/gpu-pool"
  for_each = var.gpu_pools

  cluster      = google_container_cluster.main.name
  location     = google_container_cluster.main.location
  name         = each.key
  machine_type = each.value.machine_type
  accelerator  = each.value.accelerator
  gpus         = each.value.gpus
  zones        = each.value.zones
  max_nodes    = each.value.max_nodes
}

module "spot_pool" {
  source = "./modules/gpu-pool"
  count  = 1

  cluster      = google_container_cluster.main.name
  location     = google_container_cluster.main.location
  name         = "spot-${count.index}"
  machine_type = "g2-standard-8"
  accelerator  = "nvidia-l4"
  gpus         = 1
  zones        = ["us-central1-a"]
  max_nodes    = 8
  spot         = true
  disk_size_gb = 200
}
