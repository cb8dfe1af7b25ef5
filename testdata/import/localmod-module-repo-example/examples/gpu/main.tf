# An example of the module repository, calling the repository's own root.
provider "aws" {
  region = "us-west-2"
}

module "eks" {
  source = "../.."

  name               = "ex-gpu"
  kubernetes_version = "1.33"
  subnet_ids         = ["subnet-0a", "subnet-0b"]

  node_groups = {
    system = {
      instance_types = ["m6i.large"]
    }
    gpu = {
      instance_types = ["g6e.12xlarge"]
      ami_type       = "AL2023_x86_64_NVIDIA"
      min_size       = 0
      max_size       = 4
      labels         = { "nvidia.com/gpu.present" = "true" }
    }
    disabled = {
      create         = false
      instance_types = ["p5.48xlarge"]
    }
  }
}
