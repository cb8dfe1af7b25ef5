provider "aws" {
  region = "us-east-2"
}

locals {
  cluster = "train-east"
}

module "eks" {
  source          = "terraform-aws-modules/eks/aws"
  version         = "~> 20.0"
  cluster_name    = local.cluster
  cluster_version = "1.31"
}

resource "kubernetes_manifest" "h100_pool" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata = {
      name = "h100"
    }
    spec = {
      template = {
        spec = {
          nodeClassRef = {
            group = "karpenter.k8s.aws"
            kind  = "EC2NodeClass"
            name  = "h100"
          }
          requirements = [
            {
              key      = "node.kubernetes.io/instance-type"
              operator = "In"
              values   = ["p5.48xlarge"]
            },
            {
              key      = "karpenter.sh/capacity-type"
              operator = "In"
              values   = ["reserved"]
            },
          ]
          taints = [
            {
              key    = "nvidia.com/gpu"
              effect = "NoSchedule"
            },
          ]
        }
      }
      limits = {
        "nvidia.com/gpu" = 32
      }
    }
  }
}

resource "kubernetes_manifest" "h100_class" {
  manifest = yamldecode(file("${path.module}/h100-class.yaml"))
}
