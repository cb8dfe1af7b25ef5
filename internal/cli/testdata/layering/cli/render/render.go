package render

import (
	"os"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// Broken: render imports a domain package and prints to the process.
func Write(f matrix.Finding) {
	os.Stdout.WriteString(f.Rule)
}
