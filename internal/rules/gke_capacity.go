package rules

import (
	"fmt"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Sources of GKE's flex-start and queued provisioning requirements.
const (
	// srcGKEFlexStart: flex-start VMs (gcloud --flex-start with
	// --reservation-affinity=none and --no-enable-autorepair).
	srcGKEFlexStart = "https://cloud.google.com/kubernetes-engine/docs/how-to/dws-flex-start-training"
	// srcGKEFlexStartConcepts: flex-start's requirements and limits.
	srcGKEFlexStartConcepts = "https://cloud.google.com/kubernetes-engine/docs/concepts/dws"
	// srcGKEQueued: flex-start with queued provisioning (gcloud
	// --enable-queued-provisioning --flex-start --enable-autoscaling
	// --num-nodes=0 --location-policy=ANY --reservation-affinity=none
	// --no-enable-autorepair), ProvisioningRequest and Kueue.
	srcGKEQueued = "https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest"
	// srcGKENodePoolModule: cluster-toolkit's gke-node-pool module, whose
	// preconditions hold the same: flex-start needs auto_repair false and
	// NO_RESERVATION, queued provisioning total_min_nodes 0, NO_RESERVATION
	// and no COMPACT placement (checked 2026-12-03).
	srcGKENodePoolModule = "https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/1047080375afbb44da4b596be314634e7486af4a/modules/compute/gke-node-pool/main.tf"
)

// checkGKECapacity: what GKE requires of a flex-start or queued pool
// (GKE-FLEX-START): auto-repair off, no reservation, and for queued
// provisioning no minimum size; a queued pool that no team's LocalQueue
// submits to is a note.
func (v *validator) checkGKECapacity(pc *matrix.PoolFacts) {
	p := pc.Pool
	if !v.gke() || !p.FlexStart() {
		return
	}
	what := "flex-start"
	if p.Capacity == spec.CapacityQueued {
		what = "queued provisioning"
	}
	v.checkFlexStartVersion(pc, what)
	if p.AutoRepair != nil && *p.AutoRepair {
		v.add(RuleGKEFlexStart, "", pc.Field(".autoRepair"), fmt.Sprintf("pool %s: %s nodes cannot be auto-repaired; GKE rejects a %s node pool with auto-repair on", p.Name, what, what), "Remove autoRepair (gpuctl turns it off for these pools) or set it to false.", srcGKEFlexStart, srcGKENodePoolModule)
	}
	if p.Reservation != "" {
		v.add(RuleGKEFlexStart, "", pc.Field(".reservation"), fmt.Sprintf("pool %s: %s pools consume no reservation (reservation affinity none), but reservation is set", p.Name, what), "Remove reservation, or use capacity: reservation to consume it.", srcGKEFlexStart, srcGKENodePoolModule)
	}
	if p.Capacity != spec.CapacityQueued {
		return
	}
	if p.Autoscaling.Min > 0 {
		v.add(RuleGKEFlexStart, "", pc.Field(".autoscaling.min"), fmt.Sprintf("pool %s: a queued provisioning pool starts empty and grows only for ProvisioningRequests, but autoscaling.min is %d", p.Name, p.Autoscaling.Min), "Set autoscaling.min: 0.", srcGKEQueued, srcGKENodePoolModule)
	}
	if !v.teamUses(p.Name) {
		v.add(RuleGKEFlexStart, diag.SeverityInfo, pc.Field(".capacity"), fmt.Sprintf("pool %s: queued provisioning creates nodes only for a ProvisioningRequest; gpuctl's Kueue ClusterQueue runs the ProvisioningRequest admission check on the pool's flavor, but no team's LocalQueue submits to it", p.Name), "Add a team in spec.teams that may use the pool, or create ProvisioningRequests yourself.", srcGKEQueued)
	}
}

// gkeFlexStartGPUMin is the first GKE version with flex-start VMs for
// GPUs. Source: https://cloud.google.com/kubernetes-engine/docs/concepts/dws
// (Requirements: "To run GPUs, use GKE version 1.32.2-gke.1652000 or
// later"), checked 2026-12-03.
var gkeFlexStartGPUMin = matrix.Version{1, 32, 2, 1652000}

// checkFlexStartVersion: a flex-start pool needs GKE 1.32.2-gke.1652000
// or later (GKE-FLEX-START): an error below 1.32, a warning for a 1.32
// version that does not say its patch and build.
func (v *validator) checkFlexStartVersion(pc *matrix.PoolFacts, what string) {
	k, err := matrix.ParseKubernetesVersion(v.s.KubernetesVersion)
	if err != nil {
		return // unset or SPEC-VERSION's
	}
	p := pc.Pool
	switch {
	case k.Minor().Less(gkeFlexStartGPUMin[:2]) || (k.GKE && k.Full.Less(gkeFlexStartGPUMin)):
		v.add(RuleGKEFlexStart, "", "spec.kubernetesVersion", fmt.Sprintf("pool %s: %s for GPUs needs GKE 1.32.2-gke.1652000 or later; the cluster runs %s", p.Name, what, v.s.KubernetesVersion), "Upgrade the cluster to GKE 1.32.2-gke.1652000 or later, or use capacity on-demand, spot or reservation.", srcGKEFlexStartConcepts)
	case k.Minor().Compare(gkeFlexStartGPUMin[:2]) == 0 && !k.GKE:
		v.add(RuleGKEFlexStart, diag.SeverityWarning, "spec.kubernetesVersion", fmt.Sprintf("pool %s: %s for GPUs needs GKE 1.32.2-gke.1652000 or later; kubernetesVersion %s does not say whether the cluster's 1.32 build has it", p.Name, what, v.s.KubernetesVersion), "Write the cluster's GKE version (1.32.2-gke.1652000 or later), or move to 1.33.", srcGKEFlexStartConcepts)
	}
}

// teamUses reports whether a team of spec.teams may use pool.
func (v *validator) teamUses(pool string) bool {
	for _, t := range v.s.Teams {
		if t.Uses(pool) {
			return true
		}
	}
	return false
}
