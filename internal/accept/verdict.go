package accept

import (
	"fmt"

	"github.com/gpuctl/gpuctl/internal/diag"
)

func result(st Stage, v diag.Verdict, format string, args ...any) StageResult {
	return StageResult{Name: st, Verdict: v, Reason: fmt.Sprintf(format, args...), Evidence: []Evidence{}}
}
