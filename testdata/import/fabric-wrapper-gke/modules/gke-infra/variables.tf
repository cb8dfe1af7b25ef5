variable "cluster_name" {
  type = string
}

variable "location" {
  type = string
}

variable "project_id" {
  type    = string
  default = "example-project"
}

variable "pools" {
  type = map(object({
    machine_type = string
    spot         = optional(bool, false)
    max_nodes    = optional(number, 2)
    gpu = optional(object({
      type   = string
      count  = number
      driver = optional(string, "DEFAULT")
    }))
  }))
}
