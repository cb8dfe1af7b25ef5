variable "project_id" {
  type = string
}

variable "cluster_name" {
  type = string
}

variable "region" {
  type = string
}

variable "kubernetes_version" {
  type    = string
  default = "1.33"
}

variable "cpu_pools" {
  type = list(map(any))
  default = [
    { name = "cpu-pool", machine_type = "n2-standard-8", min_count = 1, max_count = 3 },
  ]
}

variable "gpu_pools" {
  type    = list(map(any))
  default = []
}

variable "network" {
  type    = string
  default = "default"
}

variable "release_channel" {
  type = string
}
