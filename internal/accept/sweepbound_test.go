package accept

import (
	"testing"
	"time"
)

// TestSweepBound: waves of parallel nodes within a node's time limit and
// its cleanup, the fleet stages' rounds of pairs within the stage limit
// and the group's extra, and the overhead; no nodes is an error.
func TestSweepBound(t *testing.T) {
	node := DefaultRunTimeout + time.Minute // a node's run and its cleanup
	group := DefaultStageTimeout + 105*time.Second
	local := []Stage{StageKubernetes, StageInventory, StageTopology, StageCUDA}
	for _, c := range []struct {
		name            string
		nodes, parallel int
		stages          []Stage
		want            time.Duration
	}{
		{"the example: 4 nodes, 2 at a time", 4, 2, local, 2*node + 10*time.Minute},
		{"one node", 1, 1, local, node + 10*time.Minute},
		{"5 nodes, 2 at a time: 3 waves", 5, 2, local, 3*node + 10*time.Minute},
		{"parallel 0 is 1", 2, 0, local, 2*node + 10*time.Minute},
		// A ring of 4 pairs: 2 rounds of 2 groups, 2 at a time.
		{"nccl-multi over 4", 4, 2, append(local, StageNCCLMulti), 2*node + 2*group + 10*time.Minute},
		// One at a time: each round's 2 groups one after the other, twice
		// for two fleet stages.
		{"two fleet stages, 1 at a time", 4, 1, append(local, StageNCCLMulti, StageFrameworkMulti), 4*node + 8*group + 10*time.Minute},
	} {
		got, err := SweepBound(c.nodes, c.parallel, c.stages)
		if err != nil || got != c.want {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
	if _, err := SweepBound(0, 1, local); err == nil {
		t.Error("no nodes: want an error")
	}
}
