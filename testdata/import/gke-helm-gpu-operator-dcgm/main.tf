# A GKE L4 pool with GKE's driver install turned off, NVIDIA's GPU
# Operator installing the driver instead (set blocks and a values file),
# and the standalone dcgm-exporter chart for metrics.
resource "google_container_node_pool" "l4" {
  name     = "l4-ops"
  cluster  = "inference-prod"
  location = "europe-west4"

  autoscaling {
    min_node_count = 0
    max_node_count = 3
  }

  node_config {
    machine_type = "g2-standard-16"
    image_type   = "UBUNTU_CONTAINERD"
    labels = {
      "nvidia.com/gpu.deploy.operands" = "true"
    }
    guest_accelerator {
      type  = "nvidia-l4"
      count = 1
      gpu_driver_installation_config {
        gpu_driver_version = "INSTALLATION_DISABLED"
      }
    }
  }
}

resource "helm_release" "gpu_operator" {
  name             = "gpu-operator"
  repository       = "https://helm.ngc.nvidia.com/nvidia"
  chart            = "gpu-operator"
  version          = "v25.10.1"
  namespace        = "gpu-operator"
  create_namespace = true

  values = [file("${path.module}/gpu-operator-values.yaml")]

  set {
    name  = "driver.version"
    value = "580.95.05"
  }

  set {
    name  = "dcgmExporter.enabled"
    value = "false"
  }
}

resource "helm_release" "dcgm_exporter" {
  name       = "dcgm-exporter"
  repository = "https://nvidia.github.io/dcgm-exporter/helm-charts"
  chart      = "dcgm-exporter"
  version    = "4.6.0"
  namespace  = "monitoring"

  values = [yamlencode({
    serviceMonitor = { enabled = true }
  })]
}

resource "helm_release" "prometheus" {
  name       = "kube-prometheus-stack"
  repository = "https://prometheus-community.github.io/helm-charts"
  chart      = "kube-prometheus-stack"
  namespace  = "monitoring"
}
