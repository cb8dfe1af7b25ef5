# An A10G managed node group on the Amazon Linux 2 GPU AMI and the GPU
# Operator from the eks-data-addons module, at the module's default chart
# version for its release: the Operator's operands need a newer glibc.

provider "aws" {
  region = "us-east-1"
}

resource "aws_eks_cluster" "tracking" {
  name     = "tracking"
  version  = "1.32"
  role_arn = "arn:aws:iam::111122223333:role/eks"
  vpc_config {
    subnet_ids = ["subnet-1a", "subnet-1b"]
  }
}

resource "aws_eks_node_group" "a10g" {
  cluster_name    = aws_eks_cluster.tracking.name
  node_group_name = "a10g"
  instance_types  = ["g5.2xlarge"]
  ami_type        = "AL2_x86_64_GPU"
  scaling_config {
    min_size     = 0
    max_size     = 2
    desired_size = 0
  }
}

module "eks_data_addons" {
  source            = "aws-ia/eks-data-addons/aws"
  version           = "1.33.0"
  oidc_provider_arn = "arn:aws:iam::111122223333:oidc-provider/example"

  enable_nvidia_gpu_operator = true
  nvidia_gpu_operator_helm_config = {
    values = [templatefile("${path.module}/operator-values.yaml", {})]
  }
}
