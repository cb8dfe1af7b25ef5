package rules

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// gkeGPUTaint is the taint GKE puts on the GPU nodes of a pool added to a
// cluster that already runs a non-GPU pool, as every cluster the spec's
// pools join does (spec.clusterName names an existing cluster).
var gkeGPUTaint = spec.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}

// checkPoolPolicy: the policy's required taints, upgrade hold for
// training pools, and the pool's share of GPU capacity for maxSpotShare.
// Each part runs only when its policy field is set.
func (v *validator) checkPoolPolicy(pc *matrix.PoolFacts) {
	pol := v.policy
	if pol == nil {
		return
	}
	v.checkRequiredTaints(pc, pol.RequiredTaints)
	if pol.MaxSpotShare != nil {
		v.countCapacity(pc)
	}
	if pol.TrainingUpgradeHold != nil && *pol.TrainingUpgradeHold && pc.Training() && v.gke() {
		v.checkUpgradeHold(pc)
	}
}

// checkRequiredTaints: the pool carries the taints the policy requires
// (POLICY-GPU-TAINT); GKE adds its GPU taint itself.
func (v *validator) checkRequiredTaints(pc *matrix.PoolFacts, required []string) {
	if len(required) == 0 {
		return
	}
	p := pc.Pool
	have := append([]spec.Taint(nil), p.Taints...)
	if v.gke() {
		have = append(have, gkeGPUTaint) // GKE adds it itself
	}
	for _, req := range required {
		want, err := spec.ParseTaint(req)
		if err != nil {
			continue // spec.Load and LoadPolicy reject it
		}
		if hasTaint(have, want) {
			continue
		}
		path, msg := pc.Field(".taints"), fmt.Sprintf("pool %s lacks the taint %s that the policy requires (policy.requiredTaints)", p.Name, req)
		for j, t := range p.Taints {
			if t.Key == want.Key {
				path = fmt.Sprintf("%s.taints[%d]", pc.Path, j)
				msg = fmt.Sprintf("pool %s has the taint %s, but the policy requires %s (policy.requiredTaints)", p.Name, taintString(t), req)
				break
			}
		}
		v.add(RulePolicyTaint, "", path, msg, fmt.Sprintf("Add taints: [{key: %s, value: %q, effect: %s}] (any value matches when the policy names none).", want.Key, want.Value, want.Effect), srcK8sTaints)
	}
}

// countCapacity adds the pool's GPU capacity (autoscaling.max x GPUs per
// node) to the totals checkClusterPolicy judges maxSpotShare by.
func (v *validator) countCapacity(pc *matrix.PoolFacts) {
	p := pc.Pool
	gpus := 1.0
	switch {
	case pc.Machine != nil && pc.Machine.GPUFraction > 0:
		gpus = pc.Machine.GPUFraction
	case pc.Machine != nil && pc.Machine.GPUCount > 0:
		gpus = float64(pc.Machine.GPUCount)
	case p.GPU.Count > 0:
		gpus = float64(p.GPU.Count)
	}
	c := float64(p.Autoscaling.Max) * gpus
	v.gpuCapacity += c
	if p.Capacity == "spot" {
		v.spotCapacity += c
		if p.Autoscaling.Max == 0 {
			v.unboundedSpot = append(v.unboundedSpot, pc.Index)
		}
	}
}

// checkUpgradeHold: a GKE training pool's upgrades are held
// (POLICY-UPGRADE-HOLD).
func (v *validator) checkUpgradeHold(pc *matrix.PoolFacts) {
	p := pc.Pool
	if (p.AutoUpgrade != nil && !*p.AutoUpgrade) || v.gkeHasWindow() {
		return
	}
	why := "autoUpgrade is not false"
	if ch := v.s.ReleaseChannel; ch != "" && ch != "UNSPECIFIED" {
		why = fmt.Sprintf("the cluster is in the %s release channel, so nodes auto-upgrade", ch)
	}
	v.add(RulePolicyUpgrade, "", pc.Field(".autoUpgrade"),
		fmt.Sprintf("pool %s is a training pool whose upgrades are not held (policy.trainingUpgradeHold): %s and no maintenance window is set, so a node upgrade can drain a running job", p.Name, why),
		"Set autoUpgrade: false (clusters without a release channel) or a maintenanceWindow (cluster-wide on GKE).", srcGKEChannels, srcGKEMaint)
}

// hasTaint reports whether have holds want: the same key and effect, and
// the same value unless want names none.
func hasTaint(have []spec.Taint, want spec.Taint) bool {
	for _, t := range have {
		if t.Key == want.Key && t.Effect == want.Effect && (want.Value == "" || t.Value == want.Value) {
			return true
		}
	}
	return false
}

func taintString(t spec.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

// checkClusterPolicy: required tags and the spot share of GPU capacity,
// each only when its policy field is set.
func (v *validator) checkClusterPolicy() {
	pol := v.policy
	if pol == nil {
		return
	}
	var missing []string
	for _, k := range pol.RequiredTags {
		if strings.TrimSpace(v.s.Tags[k]) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		v.add(RulePolicyCostTags, "", "spec.tags", fmt.Sprintf("spec.tags lack %s, which the policy requires (policy.requiredTags)", strings.Join(missing, ", ")), fmt.Sprintf("Add %s to spec.tags.", strings.Join(missing, ", ")))
	}
	if pol.MaxSpotShare == nil {
		return
	}
	limit := *pol.MaxSpotShare
	switch {
	case limit >= 1:
	case len(v.unboundedSpot) > 0:
		for _, i := range v.unboundedSpot {
			p := v.s.NodePools[i]
			v.add(RulePolicySpotMax, "", spec.PoolPath(i)+".autoscaling.max",
				fmt.Sprintf("pool %s is a spot pool without autoscaling.max, so its share of the GPU capacity is unbounded (policy.maxSpotShare %g)", p.Name, limit),
				"Set autoscaling.max to the most nodes the policy's spot share allows.")
		}
	case v.spotCapacity > 0 && v.spotCapacity > limit*v.gpuCapacity:
		var spot []string
		first := -1
		for i, p := range v.s.NodePools {
			if p.Capacity == "spot" {
				spot = append(spot, p.Name)
				if first < 0 {
					first = i
				}
			}
		}
		v.add(RulePolicySpotMax, "", spec.PoolPath(first)+".autoscaling.max",
			fmt.Sprintf("spot pools (%s) hold %.0f%% of the GPU capacity (%g of %g GPUs at autoscaling.max); the policy allows %.0f%% (policy.maxSpotShare %g)",
				strings.Join(spot, ", "), 100*v.spotCapacity/v.gpuCapacity, v.spotCapacity, v.gpuCapacity, 100*limit, limit),
			"Lower the spot pools' autoscaling.max, or raise on-demand or reserved capacity.")
	}
}
