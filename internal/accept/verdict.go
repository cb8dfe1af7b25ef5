package accept

import (
	"fmt"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
)

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
	// StageNCCLMulti is all_reduce across nodes of a selection (opt-in):
	// a fleet stage, run after every node's own stages (RunMulti).
	StageNCCLMulti Stage = "nccl-multi"
)

// AllStages lists every stage in run order. DCGM is opt-in.
var AllStages = []Stage{StageKubernetes, StageInventory, StageTopology, StageCUDA, StageNCCL, StageDCGM}

// DefaultStages are the stages run when none are chosen.
var DefaultStages = []Stage{StageKubernetes, StageInventory, StageTopology, StageCUDA, StageNCCL}

// FleetStages are the stages that run across the nodes of a selection,
// after their own stages; a node's Plan never holds them.
var FleetStages = []Stage{StageNCCLMulti}

// ParseStage returns the Stage named s, or an error listing the valid names.
func ParseStage(s string) (Stage, error) {
	for _, st := range append(append([]Stage(nil), AllStages...), FleetStages...) {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown stage %q (want one of kubernetes, inventory, topology, cuda, nccl, dcgm, nccl-multi)", s)
}

// IsFleetStage reports whether st runs across nodes (FleetStages).
func IsFleetStage(st Stage) bool {
	for _, f := range FleetStages {
		if f == st {
			return true
		}
	}
	return false
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
