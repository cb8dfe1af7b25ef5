package hclgen

import (
	"os"

	"github.com/gpuctl/gpuctl/internal/accept"
)

var _ = os.ReadFile
var _ accept.Verdict
