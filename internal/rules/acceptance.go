package rules

import (
	"fmt"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// checkAcceptance: the sweep's image is pinned by digest
// (ACCEPT-IMAGE-DIGEST) and its parallelism fits the pools' nodes
// (ACCEPT-PARALLEL). spec.Load has refused what the CronJob cannot run.
func (v *validator) checkAcceptance() {
	a := v.s.Acceptance
	if a == nil {
		return
	}
	if a.Image != "" && !spec.ImagePinned(a.Image) {
		v.add(RuleAcceptImageDigest, "", "spec.acceptance.image", fmt.Sprintf("the acceptance sweep's image %s is named by tag, not by digest", a.Image), "")
	}
	nodes := 0
	for _, p := range v.s.NodePools {
		nodes += p.Autoscaling.Max
	}
	if nodes > 0 && a.Parallel > nodes {
		v.add(RuleAcceptParallel, "", "spec.acceptance.parallel", fmt.Sprintf("acceptance.parallel %d is above the %d nodes the GPU pools may have (autoscaling.max)", a.Parallel, nodes), "")
	}
}
