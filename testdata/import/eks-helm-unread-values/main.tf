# NVIDIA's device plugin chart with values gpuctl has no field for (GFD,
# a time-slicing config map), and the GPU Operator's set of an unset var.

provider "aws" {
  region = "eu-west-1"
}

variable "dcgm_enabled" {
  type = bool
}

resource "aws_eks_node_group" "l4" {
  cluster_name    = "serve"
  node_group_name = "l4"
  instance_types  = ["g6.2xlarge"]
  ami_type        = "AL2023_x86_64_NVIDIA"
  scaling_config {
    min_size     = 1
    max_size     = 3
    desired_size = 1
  }
}

resource "helm_release" "device_plugin" {
  name       = "nvidia-device-plugin"
  repository = "https://nvidia.github.io/k8s-device-plugin"
  chart      = "nvidia-device-plugin"
  version    = "0.17.1"
  values = [yamlencode({
    gfd = { enabled = true }
    config = {
      map = {
        default = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
      }
    }
  })]
  set {
    name  = "nodeSelector.nvidia\\.com/gpu\\.present"
    value = "true"
  }
}

resource "helm_release" "dcgm" {
  name       = "dcgm-exporter"
  repository = "https://nvidia.github.io/dcgm-exporter/helm-charts"
  chart      = "dcgm-exporter"
  version    = "4.1.1"
  set {
    name  = "serviceMonitor.enabled"
    value = var.dcgm_enabled
  }
}
