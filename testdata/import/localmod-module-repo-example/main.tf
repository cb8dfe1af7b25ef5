# The root of a module repository: an EKS cluster and one node group
# module instance per entry of var.node_groups.
resource "aws_eks_cluster" "this" {
  count = var.create ? 1 : 0

  name     = var.name
  version  = var.kubernetes_version
  role_arn = "arn:aws:iam::111122223333:role/eks"

  vpc_config {
    subnet_ids = var.subnet_ids
  }
}

module "node_group" {
  source   = "./modules/node-group"
  for_each = var.create ? var.node_groups : {}

  create         = each.value.create
  cluster_name   = aws_eks_cluster.this[0].name
  name           = coalesce(each.value.name, each.key)
  instance_types = each.value.instance_types
  ami_type       = each.value.ami_type
  min_size       = each.value.min_size
  max_size       = each.value.max_size
  labels         = each.value.labels
  subnet_ids     = var.subnet_ids
}
