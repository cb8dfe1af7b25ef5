variable "create" {
  type     = bool
  default  = true
  nullable = false
}

variable "cluster_name" {
  type = string
}

variable "name" {
  type = string
}

variable "instance_types" {
  type    = list(string)
  default = null
}

variable "ami_type" {
  type    = string
  default = "AL2023_x86_64_STANDARD"

  nullable = false
}

variable "min_size" {
  type = number
}

variable "max_size" {
  type = number
}

variable "labels" {
  type    = map(string)
  default = {}
}

variable "subnet_ids" {
  type = list(string)
}

resource "aws_eks_node_group" "this" {
  count = var.create ? 1 : 0

  cluster_name    = var.cluster_name
  node_group_name = var.name
  node_role_arn   = "arn:aws:iam::111122223333:role/nodes"
  subnet_ids      = var.subnet_ids
  instance_types  = var.instance_types
  ami_type        = var.ami_type
  labels          = var.labels

  scaling_config {
    min_size     = var.min_size
    max_size     = var.max_size
    desired_size = var.min_size
  }
}

output "node_group_name" {
  value = try(aws_eks_node_group.this[0].node_group_name, null)
}
