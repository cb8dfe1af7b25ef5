# A Karpenter A10G pool on Bottlerocket (whose NVIDIA variant runs its own
# device plugin) rendered by the eks-data-addons karpenter-resources chart,
# and NVIDIA's device plugin from the same module, whose nodeSelector the
# pool's label meets: two plugins on the same nodes.

provider "aws" {
  region = "eu-west-1"
}

variable "operator" {
  type    = bool
  default = false
}

module "eks" {
  source             = "terraform-aws-modules/eks/aws"
  version            = "~> 21.0"
  name               = "rapids"
  kubernetes_version = "1.34"
  subnet_ids         = ["subnet-0c", "subnet-0d"]
}

module "addons" {
  source            = "aws-ia/eks-data-addons/aws"
  version           = "1.36.0"
  oidc_provider_arn = module.eks.oidc_provider_arn

  enable_nvidia_device_plugin = !(var.operator)
  nvidia_device_plugin_helm_config = {
    version = "v0.17.1"
    values = [
      <<-EOT
        nodeSelector:
          gpu: a10g
      EOT
    ]
  }

  enable_karpenter_resources = true
  karpenter_resources_helm_config = {
    a10g = {
      values = [
        <<-EOT
          name: a10g
          ec2NodeClass:
            amiFamily: Bottlerocket
            karpenterRole: rapids-karpenter-node
          nodePool:
            labels:
              - gpu: a10g
            taints:
              - key: nvidia.com/gpu
                effect: NoSchedule
            requirements:
              - key: karpenter.k8s.aws/instance-family
                operator: In
                values: ["g5"]
              - key: karpenter.k8s.aws/instance-size
                operator: In
                values: ["xlarge", "2xlarge"]
        EOT
      ]
    }
  }
}
