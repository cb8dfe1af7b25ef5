machine_type = "g2-standard-24"
