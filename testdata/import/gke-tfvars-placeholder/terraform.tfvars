project_id   = "<your project ID>"
cluster_name = "<cluster-name>"
