package matrix

import (
	"fmt"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"os"
)

// Tests may print and read the environment; their imports are held.
var _ = render.JSON
var _ = os.Getenv("HOME")
var _ = fmt.Println
