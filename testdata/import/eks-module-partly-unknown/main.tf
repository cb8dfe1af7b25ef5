# Node groups whose subnets come from a VPC module: only those values are
# unknown, the groups are imported.
variable "reservation_id" {
  type        = string
  description = "An ML capacity reservation; no default"
}

data "aws_ami" "neuron_free" {
  most_recent = true
  owners      = ["amazon"]
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 5.0"
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 19.15"

  cluster_name    = "protein-lab"
  cluster_version = "1.30"
  subnet_ids      = module.vpc.private_subnets

  eks_managed_node_group_defaults = {
    iam_role_additional_policies = {
      ssm = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
    }
  }

  eks_managed_node_groups = {
    system = {
      name           = "system"
      instance_types = ["m6i.xlarge"]
      min_size       = 2
      max_size       = 4
      subnet_ids = compact([for id, cidr in zipmap(module.vpc.private_subnets, module.vpc.private_subnets_cidr_blocks) :
      startswith(cidr, "100.") ? id : null])
    }

    train = {
      name           = "train-a10g"
      ami_type       = "AL2_x86_64_GPU"
      instance_types = ["g5.12xlarge"]
      min_size       = 1
      max_size       = 3
      subnet_ids = compact([for id, cidr in zipmap(module.vpc.private_subnets, module.vpc.private_subnets_cidr_blocks) :
      startswith(cidr, "100.") ? id : null])
      block_device_mappings = {
        xvda = {
          device_name = "/dev/xvda"
          ebs = {
            volume_size = 300
            volume_type = "gp3"
          }
        }
      }
      labels = {
        accelerator = "a10g"
      }
      taints = {
        gpu = {
          key    = "nvidia.com/gpu"
          effect = "NO_SCHEDULE"
        }
      }
    }

    big = {
      name           = "big-a100"
      ami_type       = "AL2_x86_64_GPU"
      instance_types = ["p4d.24xlarge"]
      min_size       = 0
      max_size       = 2
      subnet_ids     = [element(module.vpc.private_subnets, 0)]
      capacity_type  = "CAPACITY_BLOCK"
      instance_market_options = {
        market_type = "capacity-block"
      }
      capacity_reservation_specification = {
        capacity_reservation_target = {
          capacity_reservation_id = var.reservation_id
        }
      }
    }

    custom = {
      name           = "custom-ami"
      ami_id         = data.aws_ami.neuron_free.id
      ami_type       = "AL2_x86_64_GPU"
      instance_types = ["g6.2xlarge"]
      min_size       = 0
      max_size       = 1
      tags           = provider::aws::arn_parse("arn:aws:iam::123456789012:role/x")
    }
  }
}
