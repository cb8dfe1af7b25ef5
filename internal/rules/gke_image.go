package rules

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
)

// checkGKENodeImage: a GKE machine type that works only up to a COS
// milestone, on a COS pool of a GKE minor whose nodes run a newer one
// (GKE-NODE-IMAGE). A milestone a source reports failing is an error (the
// nodes do not come up, or come up broken); a newer one no source covers
// is a warning. Ubuntu pools, and minors whose COS milestone the matrix
// does not know, are not judged here.
func (v *validator) checkGKENodeImage(pc *matrix.PoolFacts) {
	if !v.gke() || !pc.COS || pc.Machine == nil {
		return
	}
	lim := matrix.GKECOSLimitFor(pc.Machine.Name)
	if lim == nil {
		return
	}
	cos, asOf := matrix.GKECOSMilestone(v.s.KubernetesVersion)
	if cos == 0 || cos <= lim.COSMax {
		return
	}
	p := pc.Pool
	image := matrix.GKEImageName(p.OSImage)
	fix := fmt.Sprintf("Keep this pool's nodes on GKE %s (COS %d; hold node upgrades with a maintenance exclusion), use osImage: UBUNTU_CONTAINERD, or move the workload to another machine type.", cmp.Or(matrix.GKENewestMinorOnCOS(lim.COSMax), "a minor whose nodes run COS "+fmt.Sprint(lim.COSMax)), lim.COSMax)
	if slices.Contains(lim.Failing, cos) {
		v.add(RuleGKENodeImage, diag.SeverityError, pc.Field(".machineType"),
			fmt.Sprintf("pool %s: GKE %s nodes run COS %d (%s), on which %s is reported to fail: it works on COS %d or older", p.Name, v.s.KubernetesVersion, cos, image, pc.Machine.Name, lim.COSMax),
			fix, lim.Sources()...)
		return
	}
	v.add(RuleGKENodeImage, diag.SeverityWarning, pc.Field(".machineType"),
		fmt.Sprintf("pool %s: GKE %s nodes run COS %d (%s); %s is known to work on COS %d or older, and no source as of %s says COS %d is fixed", p.Name, v.s.KubernetesVersion, cos, image, pc.Machine.Name, lim.COSMax, asOf, cos),
		fix, lim.Sources()...)
}
