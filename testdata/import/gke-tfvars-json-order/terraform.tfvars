machine_type = "g2-standard-8"
disk_gb      = 80
