variable "create" {
  type     = bool
  default  = true
  nullable = false
}

variable "name" {
  type = string
}

variable "kubernetes_version" {
  type    = string
  default = null
}

variable "subnet_ids" {
  type    = list(string)
  default = []
}

variable "node_groups" {
  type = map(object({
    create         = optional(bool)
    name           = optional(string)
    instance_types = optional(list(string))
    ami_type       = optional(string)
    min_size       = optional(number, 1)
    max_size       = optional(number, 3)
    labels         = optional(map(string), {})
  }))
  default = {}
}
