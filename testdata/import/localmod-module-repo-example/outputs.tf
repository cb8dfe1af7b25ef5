output "cluster_name" {
  value = var.name
}
