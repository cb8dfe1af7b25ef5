# An EKS cluster with a p5 training node group on a capacity block, its
# disk, placement group and EFA interfaces in a launch template.
provider "aws" {
  region = "us-east-1"
}

variable "node_role_arn" {
  type = string
}

variable "subnet_ids" {
  type = list(string)
}

variable "capacity_block_id" {
  type    = string
  default = "cr-0123456789abcdef0"
}

resource "aws_eks_cluster" "this" {
  name     = "ml-eks"
  version  = "1.34"
  role_arn = var.node_role_arn

  vpc_config {
    subnet_ids = var.subnet_ids
  }
}

resource "aws_placement_group" "train" {
  name     = "ml-eks-train"
  strategy = "cluster"
}

resource "aws_launch_template" "train" {
  name_prefix = "ml-eks-train-"

  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      volume_size = 500
      volume_type = "gp3"
    }
  }

  instance_market_options {
    market_type = "capacity-block"
  }

  capacity_reservation_specification {
    capacity_reservation_target {
      capacity_reservation_id = var.capacity_block_id
    }
  }

  placement {
    group_name = aws_placement_group.train.name
  }

  network_interfaces {
    device_index       = 0
    network_card_index = 0
    interface_type     = "efa"
  }

  network_interfaces {
    device_index       = 1
    network_card_index = 1
    interface_type     = "efa"
  }
}

resource "aws_eks_node_group" "train" {
  cluster_name    = aws_eks_cluster.this.name
  node_group_name = "train-p5"
  node_role_arn   = var.node_role_arn
  subnet_ids      = var.subnet_ids
  ami_type        = "AL2023_x86_64_NVIDIA"
  instance_types  = ["p5.48xlarge"]
  capacity_type   = "CAPACITY_BLOCK"

  scaling_config {
    desired_size = 0
    min_size     = 0
    max_size     = 4
  }

  labels = {
    "workload" = "training"
  }

  taint {
    key    = "nvidia.com/gpu"
    value  = "present"
    effect = "NO_SCHEDULE"
  }

  launch_template {
    id      = aws_launch_template.train.id
    version = aws_launch_template.train.latest_version
  }
}

resource "aws_eks_node_group" "system" {
  cluster_name    = aws_eks_cluster.this.name
  node_group_name = "system"
  node_role_arn   = var.node_role_arn
  subnet_ids      = var.subnet_ids
  instance_types  = ["m6i.large"]

  scaling_config {
    desired_size = 2
    min_size     = 2
    max_size     = 3
  }
}
