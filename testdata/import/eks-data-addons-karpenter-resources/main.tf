provider "aws" {
  region = "us-west-2"
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 5.0"
  name    = "ml-lab"
}

module "eks" {
  source             = "terraform-aws-modules/eks/aws"
  version            = "~> 21.0"
  name               = "ml-lab"
  kubernetes_version = "1.33"
  subnet_ids         = module.vpc.private_subnets
}

module "data_addons" {
  source            = "aws-ia/eks-data-addons/aws"
  version           = "~> 1.37"
  oidc_provider_arn = module.eks.oidc_provider_arn

  enable_karpenter_resources = true
  karpenter_resources_helm_config = {
    l4-inference = {
      values = [
        <<-EOT
          name: l4-inference
          clusterName: ${module.eks.cluster_name}
          ec2NodeClass:
            karpenterRole: ${module.eks.cluster_name}-karpenter-node
            subnetSelectorTerms:
              id: ${module.vpc.private_subnets[0]}
            instanceStorePolicy: RAID0
          nodePool:
            labels:
              - team: inference
            taints:
              - key: nvidia.com/gpu
                value: "true"
                effect: NoSchedule
            requirements:
              - key: karpenter.k8s.aws/instance-family
                operator: In
                values: ["g6"]
              - key: karpenter.k8s.aws/instance-size
                operator: In
                values: ["xlarge", "2xlarge"]
              - key: topology.kubernetes.io/zone
                operator: In
                values: ["${module.vpc.azs[0]}"]
              - key: karpenter.sh/capacity-type
                operator: In
                values: ["spot", "on-demand"]
            limits:
              cpu: 512
        EOT
      ]
    }
  }
}
