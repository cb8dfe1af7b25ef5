# Per-zone node counts: GKE counts min_node_count, max_node_count and
# node_count per zone of node_locations; the spec's autoscaling is totals.

resource "google_container_cluster" "infer" {
  name     = "infer"
  location = "us-central1"
  release_channel {
    channel = "REGULAR"
  }
}

resource "google_container_node_pool" "l4_autoscaled" {
  name           = "l4-autoscaled"
  cluster        = google_container_cluster.infer.name
  location       = "us-central1"
  node_locations = ["us-central1-a", "us-central1-b", "us-central1-c"]

  autoscaling {
    min_node_count = 1
    max_node_count = 4
  }

  node_config {
    machine_type = "g2-standard-8"
    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
  }
}

resource "google_container_node_pool" "l4_fixed" {
  name           = "l4-fixed"
  cluster        = google_container_cluster.infer.name
  location       = "us-central1"
  node_locations = ["us-central1-a", "us-central1-b"]
  node_count     = 3

  node_config {
    machine_type = "g2-standard-8"
    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
  }
}

resource "google_container_node_pool" "l4_regional" {
  name     = "l4-regional"
  cluster  = google_container_cluster.infer.name
  location = "us-central1"

  autoscaling {
    min_node_count = 0
    max_node_count = 2
  }

  node_config {
    machine_type = "g2-standard-8"
    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
  }
}
