package accept

import (
	"fmt"
	"time"
)

// Accept's default time limits: --timeout (each node's run) and
// --stage-timeout (each stage, and each group of a fleet stage).
const (
	DefaultRunTimeout   = time.Hour
	DefaultStageTimeout = 10 * time.Minute
)

// What SweepBound adds besides the runs' own limits: the cleanup after a
// node's run (Runner.cleanupTimeout's default); for a fleet group the 15
// seconds runGroup waits past its deadline, its Job's cleanup and the 30
// seconds deleteService may take; and the sweep's own API work (listing
// the nodes and pods, marking, the records' ConfigMaps) with its pod's
// start.
const (
	sweepNodeCleanup  = 60 * time.Second
	sweepGroupExtra   = 15*time.Second + sweepNodeCleanup + 30*time.Second
	sweepOverheadTime = 10 * time.Minute
)

// SweepBound is the longest `accept --sweep` over nodes nodes, parallel at
// a time, with stages runs under accept's default time limits: the nodes'
// own stages in waves of parallel nodes, each within DefaultRunTimeout and
// its cleanup; then each fleet stage's rounds of node groups (the default
// --nccl-multi pairs), parallel groups at a time, each within
// DefaultStageTimeout (one pass: a node lost mid-stage makes another,
// which the bound does not count); and a fixed overhead. Errors: nodes
// below 1.
func SweepBound(nodes, parallel int, stages []Stage) (time.Duration, error) {
	if nodes < 1 {
		return 0, fmt.Errorf("a sweep's time limit needs the most nodes it selects, got %d", nodes)
	}
	parallel = max(parallel, 1)
	waves := (nodes + parallel - 1) / parallel
	bound := time.Duration(waves)*(DefaultRunTimeout+sweepNodeCleanup) + sweepOverheadTime
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%d", i)
	}
	for _, st := range stages {
		if !IsFleetStage(st) {
			continue
		}
		for _, round := range MultiGroups(names, MultiPairs) {
			groupWaves := (len(round) + parallel - 1) / parallel
			bound += time.Duration(groupWaves) * (DefaultStageTimeout + sweepGroupExtra)
		}
	}
	return bound, nil
}
