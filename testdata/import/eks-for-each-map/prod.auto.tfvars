gpu_pools = {
  "infer-g6" = {
    instance_types = ["g6.xlarge", "g6.2xlarge"]
    max            = 10
    spot           = true
  }
  "infer-g5" = {
    instance_types = ["g5.2xlarge"]
    ami_type       = "BOTTLEROCKET_x86_64_NVIDIA"
    min            = 1
    max            = 4
  }
}
