gpu_pools = {
  h100 = {
    machine_type = "a3-highgpu-8g"
    accelerator  = "nvidia-h100-80gb"
    gpus         = 8
    zones        = ["us-central1-a"]
    max_nodes    = 4
  }
  l4 = {
    machine_type = "g2-standard-24"
    accelerator  = "nvidia-l4"
    gpus         = 2
    zones        = ["us-central1-a", "us-central1-b"]
    max_nodes    = 6
  }
}
