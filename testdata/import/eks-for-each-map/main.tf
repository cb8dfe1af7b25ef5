# EKS node groups from a map of pools with for_each; values from
# prod.auto.tfvars, defaults through lookup() and try().
variable "cluster_name" {
  type    = string
  default = "inference"
}

variable "node_role_arn" {
  type    = string
  default = "arn:aws:iam::123456789012:role/eks-nodes"
}

variable "gpu_pools" {
  type = map(object({
    instance_types = list(string)
    ami_type       = optional(string, "AL2023_x86_64_NVIDIA")
    min            = optional(number, 0)
    max            = number
    spot           = optional(bool, false)
  }))
}

locals {
  gpu_taint = {
    key    = "nvidia.com/gpu"
    value  = "present"
    effect = "NO_SCHEDULE"
  }
}

resource "aws_eks_node_group" "gpu" {
  for_each = var.gpu_pools

  cluster_name    = var.cluster_name
  node_group_name = each.key
  node_role_arn   = var.node_role_arn
  subnet_ids      = ["subnet-0a1b2c3d4e5f60789"]
  ami_type        = each.value.ami_type
  instance_types  = each.value.instance_types
  capacity_type   = each.value.spot ? "SPOT" : "ON_DEMAND"
  version         = "1.34"

  scaling_config {
    desired_size = each.value.min
    min_size     = each.value.min
    max_size     = each.value.max
  }

  labels = {
    "gpu-pool" = each.key
  }

  taint {
    key    = local.gpu_taint.key
    value  = local.gpu_taint.value
    effect = try(local.gpu_taint.effect, "NO_SCHEDULE")
  }
}
