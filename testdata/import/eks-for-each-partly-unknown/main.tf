# aws_eks_node_group over a map whose values are partly unknown: the
# subnets of each group come from a VPC module, the keys are known.
module "network" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 5.0"
}

locals {
  groups = {
    l4 = {
      instance_types = ["g6.4xlarge"]
      max            = 4
      subnet_ids     = module.network.private_subnets
    }
    h100 = {
      instance_types = ["p5.48xlarge"]
      max            = 2
      subnet_ids     = [element(module.network.private_subnets, 0)]
    }
  }
}

resource "aws_eks_node_group" "gpu" {
  for_each = local.groups

  cluster_name    = "vision"
  node_group_name = each.key
  node_role_arn   = "arn:aws:iam::123456789012:role/nodes"
  subnet_ids      = each.value.subnet_ids
  ami_type        = "AL2023_x86_64_NVIDIA"
  instance_types  = each.value.instance_types
  version         = "1.34"

  scaling_config {
    desired_size = 0
    min_size     = 0
    max_size     = each.value.max
  }

  taint {
    key    = "nvidia.com/gpu"
    value  = "true"
    effect = "NO_SCHEDULE"
  }
}
