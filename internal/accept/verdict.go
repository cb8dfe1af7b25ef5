package accept

import (
	"fmt"

	"github.com/gpuctl/gpuctl/internal/diag"
)

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

func result(st Stage, v diag.Verdict, format string, args ...any) StageResult {
	return StageResult{Name: st, Verdict: v, Reason: fmt.Sprintf(format, args...), Evidence: []Evidence{}}
}
