provider "aws" {
  region = "us-east-1"
}

module "eks" {
  source             = "terraform-aws-modules/eks/aws"
  version            = "~> 21.0"
  name               = "batch-gpu"
  kubernetes_version = "1.34"
}

locals {
  node_pools = {
    for f in fileset("${path.module}/pools", "*.yaml") :
    f => templatefile("${path.module}/pools/${f}", { cluster = module.eks.cluster_name })
  }
  node_classes = provider::kubernetes::manifest_decode_multi(
    templatefile("${path.module}/classes.yaml.tpl", { role = module.eks.cluster_iam_role_name })
  )
}

resource "kubectl_manifest" "pools" {
  for_each  = local.node_pools
  yaml_body = each.value
}

resource "kubectl_manifest" "classes" {
  for_each  = { for i, m in local.node_classes : i => m }
  yaml_body = yamlencode(each.value)
}
