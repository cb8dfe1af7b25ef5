# The cluster is named after the folder Terraform runs in, and the VPC's
# subnets are cut from one CIDR with cidrsubnet().
provider "aws" {
  region = "us-west-2"
}

locals {
  name     = "ex-${replace(basename(path.cwd), "_", "-")}"
  vpc_cidr = "10.0.0.0/16"
  azs      = ["us-west-2a", "us-west-2b"]
}

resource "aws_vpc" "this" {
  cidr_block = local.vpc_cidr
}

resource "aws_subnet" "private" {
  count             = length(local.azs)
  vpc_id            = aws_vpc.this.id
  availability_zone = local.azs[count.index]
  cidr_block        = cidrsubnet(local.vpc_cidr, 4, count.index)
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 21.0"

  name               = local.name
  kubernetes_version = "1.34"
  subnet_ids         = aws_subnet.private[*].id

  eks_managed_node_groups = {
    gpu = {
      ami_type       = "AL2023_x86_64_NVIDIA"
      instance_types = ["g6.xlarge"]
      max_size       = 2
      labels = {
        # the first private subnet, as a label value can hold it
        subnet = replace(cidrsubnet(local.vpc_cidr, 4, 0), "/[./]/", "-")
        hosts  = cidrhost(cidrsubnet(local.vpc_cidr, 4, 1), 5)
      }
    }
  }
}
