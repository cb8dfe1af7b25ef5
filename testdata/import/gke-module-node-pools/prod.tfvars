project_id = "ml-prod-1234"
gpu_pool = {
  machine_type = "a2-ultragpu-2g"
  accelerator  = "nvidia-a100-80gb"
  count        = 2
}
