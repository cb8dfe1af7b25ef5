module "cluster" {
  source             = "git::https://github.com/GoogleCloudPlatform/cloud-foundation-fabric.git//modules/gke-cluster-standard?ref=v30.0.0&depth=1"
  project_id         = var.project_id
  name               = var.cluster_name
  location           = var.location
  release_channel    = "REGULAR"
  min_master_version = "1.33"
}

module "vpc" {
  source     = "git::https://github.com/GoogleCloudPlatform/cloud-foundation-fabric.git//modules/net-vpc?ref=v30.0.0"
  project_id = var.project_id
  name       = "bench"
}

module "pool" {
  source       = "git::https://github.com/GoogleCloudPlatform/cloud-foundation-fabric.git//modules/gke-nodepool?ref=v30.0.0&depth=1"
  for_each     = var.pools
  depends_on   = [module.cluster]
  project_id   = var.project_id
  cluster_name = var.cluster_name
  name         = "${var.cluster_name}-${each.key}"
  location     = var.location

  node_config = {
    machine_type = each.value.machine_type
    spot         = each.value.spot
    image_type   = "cos_containerd"
    disk_size_gb = 200
    gvnic        = true
    guest_accelerator = each.value.gpu == null ? null : {
      type  = each.value.gpu.type
      count = each.value.gpu.count
      gpu_driver = {
        version = each.value.gpu.driver
      }
    }
  }
  nodepool_config = {
    autoscaling = {
      min_node_count = 0
      max_node_count = each.value.max_nodes
    }
    management = {
      auto_repair  = true
      auto_upgrade = true
    }
  }
  labels = {
    "gpuctl.dev/pool" = each.key
  }
  taints = {
    "nvidia.com/gpu" = {
      value  = "present"
      effect = "NO_SCHEDULE"
    }
  }
}
