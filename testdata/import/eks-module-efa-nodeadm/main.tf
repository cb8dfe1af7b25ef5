# EFA node groups of module v21 (enable_efa_only defaults to true) and v20
# (defaults to false), nodeadm RAID0 user data and a reservation group.
resource "aws_resourcegroups_group" "odcr" {
  name = "h100-reservations"
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 21.0"

  name               = "llm-train"
  kubernetes_version = "1.33"

  eks_managed_node_groups = {
    h100 = {
      ami_type           = "AL2023_x86_64_NVIDIA"
      instance_types     = ["p5.48xlarge"]
      min_size           = 2
      max_size           = 4
      enable_efa_support = true
      efa_indices        = [0, 4]
      cloudinit_pre_nodeadm = [
        {
          content_type = "application/node.eks.aws"
          content      = <<-EOT
            ---
            apiVersion: node.eks.aws/v1alpha1
            kind: NodeConfig
            spec:
              instance:
                localStorage:
                  strategy: RAID0
          EOT
        }
      ]
      capacity_reservation_specification = {
        capacity_reservation_target = {
          capacity_reservation_resource_group_arn = aws_resourcegroups_group.odcr.arn
        }
      }
      taints = {
        gpu = {
          key    = "nvidia.com/gpu"
          value  = "true"
          effect = "NO_SCHEDULE"
        }
      }
    }
  }
}

module "eks_v20" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.31"

  cluster_name    = "llm-train"
  cluster_version = "1.33"

  eks_managed_node_groups = {
    a100 = {
      ami_type           = "AL2023_x86_64_NVIDIA"
      instance_types     = ["p4d.24xlarge"]
      min_size           = 0
      max_size           = 2
      enable_efa_support = true
      block_device_mappings = {
        xvda = {
          device_name = "/dev/xvda"
          ebs = {
            volume_size = 500
            volume_type = "io2"
          }
        }
      }
    }
  }
}
