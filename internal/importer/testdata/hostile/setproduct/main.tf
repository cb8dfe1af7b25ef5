resource "google_container_node_pool" "gpu" {
  name     = "gpu"
  cluster  = "c"
  location = "us-central1-a"
  for_each = { for p in setproduct(range(1000), range(1000)) : "${p[0]}-${p[1]}" => p }
  node_config {
    machine_type = "g2-standard-8"
    labels       = { team = "ml" }
    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
      gpu_driver_installation_config {
        gpu_driver_version = "LATEST"
      }
    }
  }
}
