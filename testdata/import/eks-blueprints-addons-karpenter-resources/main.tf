provider "aws" {
  region = "ap-northeast-1"
}

module "eks" {
  source             = "terraform-aws-modules/eks/aws"
  version            = "~> 21.0"
  name               = "notebooks"
  kubernetes_version = "1.33"
}

module "addons" {
  source       = "aws-ia/eks-blueprints-addons/aws"
  version      = "~> 1.21"
  cluster_name = module.eks.cluster_name

  enable_karpenter = true

  helm_releases = {
    storage = {
      chart = "${path.module}/charts/storageclass"
    }
    karpenter-resources-a10g = {
      name       = "karpenter-resources-a10g"
      repository = "https://charts.example.com/platform"
      chart      = "karpenter-resources"
      values = [
        <<-EOT
          name: a10g
          clusterName: ${module.eks.cluster_name}
          ec2NodeClass:
            amiSelectorTerms:
              - alias: al2023@latest
            blockDeviceMappings:
              - deviceName: /dev/xvda
                ebs:
                  volumeSize: 250Gi
          nodePool:
            requirements:
              - key: node.kubernetes.io/instance-type
                operator: In
                values: ["g5.4xlarge"]
        EOT
      ]
    }
  }
}

resource "helm_release" "karpenter_t4" {
  name  = "karpenter-resources-t4"
  chart = "./charts/karpenter-resources"
  values = [yamlencode({
    name = "t4"
    nodePool = {
      labels = [{ tier = "batch" }]
      requirements = [{
        key      = "karpenter.k8s.aws/instance-family"
        operator = "In"
        values   = ["g4dn"]
        }, {
        key      = "karpenter.k8s.aws/instance-size"
        operator = "In"
        values   = ["xlarge"]
      }]
    }
  })]
}
