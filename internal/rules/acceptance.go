package rules

import (
	"fmt"
	"slices"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// checkAcceptance: the sweep's image and its probe images are pinned by
// digest (ACCEPT-IMAGE-DIGEST) and its parallelism fits the pools' nodes
// (ACCEPT-PARALLEL). spec.Load has refused what the CronJob cannot run.
func (v *validator) checkAcceptance() {
	a := v.s.Acceptance
	if a == nil {
		return
	}
	if a.Image != "" && !spec.ImagePinned(a.Image) {
		v.add(RuleAcceptImageDigest, "", "spec.acceptance.image", fmt.Sprintf("the acceptance sweep's image %s is named by tag, not by digest", a.Image), "")
	}
	for _, st := range spec.ImageStages(a) {
		if ref := a.Images[st]; ref != "" && !spec.ImagePinned(ref) {
			v.add(RuleAcceptImageDigest, "", "spec.acceptance.images"+spec.Key(st), fmt.Sprintf("the acceptance sweep's %s probe image %s is named by tag, not by digest", st, ref),
				fmt.Sprintf("Pin it by digest: images: {%s: REPO:TAG@sha256:HEX} (crane digest or docker buildx imagetools inspect print it).", st))
		}
	}
	nodes := 0
	for _, p := range v.s.NodePools {
		nodes += p.Autoscaling.Max
	}
	if nodes > 0 && a.Parallel > nodes {
		v.add(RuleAcceptParallel, "", "spec.acceptance.parallel", fmt.Sprintf("acceptance.parallel %d is above the %d nodes the GPU pools may have (autoscaling.max)", a.Parallel, nodes), "")
	}
	v.checkPreflightPools(a)
}

// checkPreflightPools: each pool acceptance.preflight.pools names has
// whole GPUs, which gpuctl preflight checks as accept does
// (ACCEPT-PREFLIGHT-POOL). spec.Load has refused a name that is no pool.
func (v *validator) checkPreflightPools(a *spec.Acceptance) {
	if a.Preflight == nil {
		return
	}
	for i, n := range a.Preflight.Pools {
		idx := slices.IndexFunc(v.s.NodePools, func(p spec.NodePool) bool { return p.Name == n })
		if idx < 0 {
			continue
		}
		p := &v.s.NodePools[idx]
		path := fmt.Sprintf("spec.acceptance.preflight.pools[%d]", i)
		if gpus, _ := matrix.PoolGPUsPerNode(v.s.Provider, p); gpus <= 0 {
			v.add(RuleAcceptPreflightPool, "", path, fmt.Sprintf("acceptance.preflight.pools names pool %s, which has no GPUs gpuctl can count: the preflight init container checks a node's GPUs", n),
				fmt.Sprintf("Remove %s from acceptance.preflight.pools, or give the pool a GPU machine type (and gpu.count where the machine type does not say it).", n))
			continue
		}
		if st := p.SharingStrategy(); st != spec.SharingNone {
			v.add(RuleAcceptPreflightPool, "", path, fmt.Sprintf("acceptance.preflight.pools names pool %s, whose GPUs are shared (sharing.strategy %s): preflight checks whole GPUs, as accept does, and a shared GPU's other tenants would fail it", n, st),
				fmt.Sprintf("Remove %s from acceptance.preflight.pools (leave the list empty for every pool with whole GPUs), or set the pool's sharing.strategy: none.", n))
		}
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
