provider "aws" {
  region = "eu-west-1"
}

variable "gpu_zones" {
  type = list(string)
}

resource "aws_eks_cluster" "this" {
  name     = "vision"
  version  = "1.32"
  role_arn = aws_iam_role.cluster.arn
  vpc_config {
    subnet_ids = ["subnet-0a1", "subnet-0b2"]
  }
}

resource "aws_iam_role" "cluster" {
  name = "vision-cluster"
}

resource "kubectl_manifest" "gpu_nodepool" {
  yaml_body = <<-YAML
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: l40s
    spec:
      template:
        metadata:
          labels:
            workload: vision
            owner: ${aws_iam_role.cluster.arn}
        spec:
          nodeClassRef:
            group: karpenter.k8s.aws
            kind: EC2NodeClass
            name: l40s
          requirements:
            - key: node.kubernetes.io/instance-type
              operator: In
              values: ["g6e.12xlarge"]
            - key: topology.kubernetes.io/zone
              operator: In
              values: ${jsonencode(var.gpu_zones)}
          taints:
            - key: nvidia.com/gpu
              effect: NoSchedule
      limits:
        nvidia.com/gpu: 16
  YAML
}

resource "kubectl_manifest" "gpu_nodeclass" {
  yaml_body = templatefile("${path.module}/nodeclass.yaml.tpl", {
    cluster_name = aws_eks_cluster.this.name
    node_role    = aws_iam_role.cluster.arn
  })
}

resource "kubectl_manifest" "priority" {
  yaml_body = <<-YAML
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata:
      name: gpu-high
    value: 1000
  YAML
}
