# An L4 node group on the AL2023 NVIDIA AMI (driver, no device plugin)
# whose device plugin comes from the eks-data-addons module: NVIDIA's
# chart at the version the call's helm config sets, the one plugin.

provider "aws" {
  region = "us-west-2"
}

resource "aws_eks_cluster" "ml" {
  name     = "ml"
  version  = "1.34"
  role_arn = "arn:aws:iam::111122223333:role/eks"
  vpc_config {
    subnet_ids = ["subnet-0a", "subnet-0b"]
  }
}

resource "aws_eks_node_group" "l4" {
  cluster_name    = aws_eks_cluster.ml.name
  node_group_name = "l4"
  instance_types  = ["g6.2xlarge"]
  ami_type        = "AL2023_x86_64_NVIDIA"
  scaling_config {
    min_size     = 0
    max_size     = 2
    desired_size = 1
  }
  taint {
    key    = "nvidia.com/gpu"
    value  = "present"
    effect = "NO_SCHEDULE"
  }
}

module "eks_data_addons" {
  source  = "aws-ia/eks-data-addons/aws"
  version = "~> 1.37"

  oidc_provider_arn = "arn:aws:iam::111122223333:oidc-provider/example"

  enable_nvidia_device_plugin = true
  nvidia_device_plugin_helm_config = {
    version = "v0.17.1"
  }
  enable_nvidia_gpu_operator = false
}
