package accept

import (
	"fmt"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// Evidence is one saved raw output of a stage: a file name relative to the
// evidence directory, its sha256 (lowercase hex) and its size in bytes.
type Evidence struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// StageResult is the outcome of one stage. Reason is always set, also for
// PASS (what was checked). Facts are the values the stage established that
// end up in the record (for example the driver version); their keys are
// stable names.
type StageResult struct {
	Name     Stage             `json:"name"`
	Verdict  diag.Verdict      `json:"verdict"`
	Reason   string            `json:"reason"`
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Image    string            `json:"image,omitempty"`
	Evidence []Evidence        `json:"evidence"`
	Facts    map[string]string `json:"facts,omitempty"`
	// Cause says what the verdict is about: CauseNode, CauseHarness,
	// CauseCluster or CauseInterrupted ("" for SKIPPED).
	Cause string `json:"cause,omitempty"`
}

func result(st Stage, v diag.Verdict, format string, args ...any) StageResult {
	return StageResult{Name: st, Verdict: v, Reason: fmt.Sprintf(format, args...), Evidence: []Evidence{}}
}
