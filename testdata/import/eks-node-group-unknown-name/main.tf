variable "cluster_name" {
  type    = string
  default = null
}

variable "gpu_nodes" {
  type    = number
  default = 1
}

resource "aws_eks_cluster" "ml" {
  name     = coalesce(var.cluster_name, "ml-dev")
  version  = "1.34"
  role_arn = "arn:aws:iam::111122223333:role/eks"
  vpc_config {
    subnet_ids = ["subnet-0a1b2c3d"]
  }
}

resource "aws_eks_node_group" "al2023_g5_2xlarge" {
  count           = var.gpu_nodes > 0 ? 1 : 0
  cluster_name    = aws_eks_cluster.ml.name
  node_group_name = "${var.cluster_name}-al2023-g5-2xlarge"
  node_role_arn   = "arn:aws:iam::111122223333:role/nodes"
  subnet_ids      = ["subnet-0a1b2c3d"]
  ami_type        = "AL2023_x86_64_NVIDIA"
  instance_types  = ["g5.2xlarge"]
  scaling_config {
    min_size     = 0
    max_size     = var.gpu_nodes
    desired_size = 0
  }
}

provider "aws" {
  region = "us-east-1"
}
