# A10G managed node groups on the Amazon Linux 2 GPU AMI (driver and
# container toolkit, no device plugin) and NVIDIA's device plugin from the
# eks-data-addons module at its default chart and values: the one plugin.

provider "aws" {
  region = "us-west-2"
}

module "eks" {
  source             = "terraform-aws-modules/eks/aws"
  version            = "~> 21.0"
  name               = "protein"
  kubernetes_version = "1.32"
  subnet_ids         = ["subnet-2a", "subnet-2b"]

  eks_managed_node_groups = {
    a10g = {
      instance_types = ["g5.4xlarge"]
      ami_type       = "AL2_x86_64_GPU"
      min_size       = 1
      max_size       = 2
      taints = {
        gpu = {
          key    = "nvidia.com/gpu"
          effect = "NO_SCHEDULE"
        }
      }
    }
  }
}

module "eks_data_addons" {
  source            = "aws-ia/eks-data-addons/aws"
  version           = "~> 1.37"
  oidc_provider_arn = module.eks.oidc_provider_arn

  enable_nvidia_device_plugin = true
}
