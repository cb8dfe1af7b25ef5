# A T4 pool whose machine type and zones come from data sources: unknown
# until Terraform applies, so import leaves them out and says why.
variable "region" {
  type    = string
  default = "europe-west4"
}

variable "cluster_name" {
  type = string
}

data "google_compute_zones" "available" {
  region = var.region
}

data "google_compute_machine_types" "gpu" {
  filter = "name = \"n1-standard-8\""
  zone   = data.google_compute_zones.available.names[0]
}

resource "google_container_node_pool" "t4" {
  name           = "t4-pool"
  cluster        = var.cluster_name
  location       = var.region
  node_locations = slice(data.google_compute_zones.available.names, 0, 2)
  node_count     = 1

  node_config {
    machine_type = data.google_compute_machine_types.gpu.machine_types[0].name
    image_type   = "UBUNTU_CONTAINERD"

    guest_accelerator {
      type  = "nvidia-tesla-t4"
      count = 1
    }
  }
}
