# A GKE cluster whose version is the latest master version a data source
# reports, and an L4 pool with no driver setting: whether GKE installs a
# driver depends on the version, which is unknown until Terraform applies.

data "google_container_engine_versions" "gke" {
  location       = "us-central1"
  version_prefix = "1.3"
}

resource "google_container_cluster" "ml" {
  name                     = "ml"
  location                 = "us-central1"
  min_master_version       = data.google_container_engine_versions.gke.latest_master_version
  remove_default_node_pool = true
  initial_node_count       = 1
}

resource "google_container_node_pool" "l4" {
  name       = "l4"
  cluster    = google_container_cluster.ml.name
  location   = "us-central1"
  node_count = 1

  node_config {
    machine_type = "g2-standard-8"
    image_type   = "COS_CONTAINERD"
    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
    }
  }
}
