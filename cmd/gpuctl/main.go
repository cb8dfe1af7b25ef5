// Command gpuctl plans, validates, generates and accepts GPU node pools on
// Kubernetes (GKE and EKS).
package main

import (
	"os"

	"github.com/gpuctl/gpuctl/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}
