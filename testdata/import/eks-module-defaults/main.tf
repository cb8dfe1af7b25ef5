# terraform-aws-modules/eks v20 with a defaults block shared by two GPU
# node groups and a CPU group.
provider "aws" {
  region = local.region
}

locals {
  name   = "ml-mng"
  region = "us-west-2"
}

variable "gpu_max" {
  type    = number
  default = 8
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.0"

  cluster_name    = local.name
  cluster_version = "1.33"

  vpc_id     = module.vpc.vpc_id
  subnet_ids = module.vpc.private_subnets

  eks_managed_node_group_defaults = {
    ami_type = "AL2023_x86_64_NVIDIA"
    min_size = 0
    taints = {
      gpu = {
        key    = "nvidia.com/gpu"
        value  = "present"
        effect = "NO_SCHEDULE"
      }
    }
  }

  eks_managed_node_groups = {
    l40s = {
      instance_types = ["g6e.12xlarge"]
      max_size       = var.gpu_max
      capacity_type  = "SPOT"
      labels         = { workload = "inference" }
    }
    a100 = {
      instance_types = ["p4d.24xlarge"]
      max_size       = 2
      block_device_mappings = {
        xvda = {
          device_name = "/dev/xvda"
          ebs = {
            volume_size = 500
          }
        }
      }
      enable_efa_support = true
    }
    system = {
      ami_type       = "AL2023_x86_64_STANDARD"
      instance_types = ["m6i.large"]
      min_size       = 2
      max_size       = 3
      taints         = {}
    }
  }
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 5.0"
  name    = local.name
}

resource "helm_release" "device_plugin" {
  name       = "nvidia-device-plugin"
  repository = "https://nvidia.github.io/k8s-device-plugin"
  chart      = "nvidia-device-plugin"
  version    = "0.17.1"
  namespace  = "kube-system"
}
