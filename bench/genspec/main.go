// Command genspec writes the benchmark's GKE spec with N node pools to
// stdout (internal/golden.GKEPools): go run ./bench/genspec 1000 > p1000.yaml
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/gpuctl/gpuctl/internal/golden"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genspec POOLS")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 1 {
		fmt.Fprintf(os.Stderr, "genspec: %q is not a pool count\n", os.Args[1])
		os.Exit(2)
	}
	os.Stdout.Write(golden.GKEPools(n))
}
