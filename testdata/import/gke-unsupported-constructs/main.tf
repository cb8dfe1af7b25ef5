# What import does not understand, and says so: a Terraform function
# outside go-cty's library (one), a for_each over a resource attribute,
# a reservation resource, a module from a source gpuctl does not read,
# and a check block.
variable "gpu_machines" {
  type    = list(string)
  default = ["a3-highgpu-8g"]
}

resource "google_compute_reservation" "h100" {
  name = "h100-res"
  zone = "us-east4-a"
  specific_reservation {
    count = 2
    instance_properties {
      machine_type = "a3-highgpu-8g"
    }
  }
}

resource "google_container_node_pool" "h100" {
  name     = "h100"
  cluster  = "train-east"
  location = "us-east4"
  version  = "1.35.1-gke.1396000"

  node_count = 2

  node_config {
    machine_type = one(var.gpu_machines)
    guest_accelerator {
      type  = "nvidia-h100-80gb"
      count = 8
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
    reservation_affinity {
      consume_reservation_type = "SPECIFIC_RESERVATION"
      key                      = "compute.googleapis.com/reservation-name"
      values                   = [google_compute_reservation.h100.name]
    }
  }
}

resource "google_container_node_pool" "per_zone" {
  for_each = toset(google_compute_reservation.h100.specific_reservation[0].instance_properties[0].local_ssds[*].interface)
  name     = "per-zone-${each.key}"
  cluster  = "train-east"
  node_config {
    machine_type = "a3-highgpu-8g"
  }
}

module "gpu_dashboards" {
  source  = "example-org/gpu-dashboards/google"
  version = "~> 2.0"
}

check "reservation_exists" {
  assert {
    condition     = google_compute_reservation.h100.name != ""
    error_message = "reservation missing"
  }
}
