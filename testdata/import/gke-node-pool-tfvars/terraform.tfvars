project_id       = "my-project"
env              = "prod"
gpu_machine_type = "g2-standard-24"
gpu_driver       = "LATEST"
max_nodes        = 6
