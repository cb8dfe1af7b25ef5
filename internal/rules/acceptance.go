package rules

import (
	"fmt"

	"github.com/gpuctl/gpuctl/internal/diag"
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

// checkRolloutGate: rollout.gate is accept or sweep (SPEC-ENUM), and sweep
// has the sweep of spec.acceptance to set the GPUAccepted condition it
// waits for (SPEC-REQUIRED).
func (v *validator) checkRolloutGate(p *spec.NodePool, base string) {
	if p.Rollout == nil || !v.enum(base+".rollout.gate", "rollout.gate", p.Rollout.Gate, enumRolloutGate) {
		return
	}
	if p.Rollout.Gate == spec.GateSweep && v.s.Acceptance == nil {
		v.add(RuleSpecRequired, diag.SeverityError, base+".rollout.gate", fmt.Sprintf("pool %s: rollout.gate sweep waits for the acceptance sweep's GPUAccepted condition, and the spec has no spec.acceptance", p.Name),
			"Add spec.acceptance (the sweep's CronJob: gpuctl generate acceptance), or set rollout.gate: accept.")
	}
}
