package accept

import (
	"fmt"
	"time"
)

// Verdict is the outcome of one stage or of a whole run.
type Verdict string

// Verdicts, from best to worst. SKIPPED marks a stage that did not run (opted
// out, or stopped by an earlier FAIL); it does not count towards a run's
// verdict.
const (
	Pass         Verdict = "PASS"
	Skipped      Verdict = "SKIPPED"
	Inconclusive Verdict = "INCONCLUSIVE"
	Fail         Verdict = "FAIL"
)

func (v Verdict) rank() int {
	switch v {
	case Pass:
		return 1
	case Inconclusive:
		return 2
	case Fail:
		return 3
	}
	return 0 // Skipped and unknown values
}

// Worst returns the run verdict of the given stage verdicts: FAIL over
// INCONCLUSIVE over PASS. SKIPPED stages are ignored; a run in which nothing
// passed, failed or was inconclusive (everything skipped, or nothing at all) is
// INCONCLUSIVE, because nothing was shown about the node.
func Worst(vs ...Verdict) Verdict {
	worst := Verdict("")
	for _, v := range vs {
		if v.rank() > worst.rank() {
			worst = v
		}
	}
	if worst == "" {
		return Inconclusive
	}
	return worst
}

// Stage names one acceptance layer. Stages run in the order of AllStages.
type Stage string

// The stages. Kubernetes reads the API only and creates no Job; the others
// each run one Job pinned to the node.
const (
	StageKubernetes Stage = "kubernetes"
	StageInventory  Stage = "inventory"
	StageTopology   Stage = "topology"
	StageCUDA       Stage = "cuda"
	StageNCCL       Stage = "nccl"
	StageDCGM       Stage = "dcgm"
)

// AllStages lists every stage in run order. DCGM is opt-in.
var AllStages = []Stage{StageKubernetes, StageInventory, StageTopology, StageCUDA, StageNCCL, StageDCGM}

// DefaultStages are the stages run when none are chosen.
var DefaultStages = []Stage{StageKubernetes, StageInventory, StageTopology, StageCUDA, StageNCCL}

// ParseStage returns the Stage named s, or an error listing the valid names.
func ParseStage(s string) (Stage, error) {
	for _, st := range AllStages {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown stage %q (want one of kubernetes, inventory, topology, cuda, nccl, dcgm)", s)
}

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
	Verdict  Verdict           `json:"verdict"`
	Reason   string            `json:"reason"`
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Image    string            `json:"image,omitempty"`
	Evidence []Evidence        `json:"evidence"`
	Facts    map[string]string `json:"facts,omitempty"`
}

func result(st Stage, v Verdict, format string, args ...any) StageResult {
	return StageResult{Name: st, Verdict: v, Reason: fmt.Sprintf(format, args...), Evidence: []Evidence{}}
}
