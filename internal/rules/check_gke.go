package rules

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
)

// checkGKEVersion: the GKE minor's support window at asOf, from GKE's
// release schedule. Past end of standard support GKE upgrades the cluster
// (on the Extended channel: past end of extended support); a minor newer
// than the schedule means the matrix is older than the cluster.
func (v *validator) checkGKEVersion() {
	rs := v.c.GCP().GKE.ReleaseSchedule
	path := "spec.kubernetesVersion"
	minor := v.k8s.String()
	srcs := []string{rs.Source, rs.ExtendedSource}
	newest, oldest := rs.Minors[0], rs.Minors[len(rs.Minors)-1]
	switch {
	case newest.MinorVersion().Less(v.k8s):
		v.add(RuleGKEK8sSupport, diag.SeverityWarning, path,
			fmt.Sprintf("GKE %s is newer than the matrix's GKE release schedule (as of %s, newest %s): the matrix is older than the cluster, so its support window and GKE's driver for it cannot be judged", minor, rs.AsOf, newest.Minor),
			"Update gpuctl (or check the version: GKE had no minor after "+newest.Minor+" as of "+rs.AsOf+").", srcs...)
		return
	case v.k8s.Less(oldest.MinorVersion()):
		v.add(RuleGKEK8sSupport, "", path,
			fmt.Sprintf("GKE %s is older than %s, which left standard support on %s (as of %s): GKE no longer runs or creates %s clusters and upgrades such control planes and nodes automatically", minor, oldest.Minor, oldest.EndStandard, v.date(v.asOf), minor),
			"Upgrade the cluster (and these pools) to a GKE version in standard support.", srcs...)
		return
	}
	var m *matrix.GKEReleaseMinor
	for i := range rs.Minors {
		if rs.Minors[i].MinorVersion().Compare(v.k8s) == 0 {
			m = &rs.Minors[i]
		}
	}
	if m == nil {
		v.add(RuleGKEK8sSupport, diag.SeverityError, path, fmt.Sprintf("GKE never offered Kubernetes %s: GKE's release schedule goes from %s to %s without it", minor, oldest.Minor, newest.Minor), "Use a GKE minor version that exists.", srcs...)
		return
	}
	if v.asOf.Before(m.EndStandardDate()) {
		return
	}
	extended := !v.k8s.Less(matrix.MustVersion(rs.ExtendedFrom))
	endExt := m.RegularDate().AddDate(0, rs.ExtendedMonths, 0) // first instant after the last day
	onExtended := strings.EqualFold(v.s.ReleaseChannel, "EXTENDED")
	switch {
	case onExtended && extended && v.asOf.Before(endExt):
		// Chosen on purpose: the Extended channel keeps the minor patched.
		v.add(RuleGKEK8sSupport, diag.SeverityInfo, path,
			fmt.Sprintf("GKE %s left standard support on %s and is in (paid) extended support on the Extended channel until at most %s, %d months after its Regular availability on %s (as of %s)", minor, m.EndStandard, v.date(endExt.AddDate(0, 0, -1)), rs.ExtendedMonths, m.Regular, v.date(v.asOf)),
			"Plan the upgrade to a GKE version in standard support.", srcs...)
	case onExtended && extended:
		v.add(RuleGKEK8sSupport, "", path,
			fmt.Sprintf("GKE %s is past end of extended support (at most %d months after its Regular availability on %s; as of %s): GKE upgrades such clusters automatically", minor, rs.ExtendedMonths, m.Regular, v.date(v.asOf)),
			"Upgrade the cluster (and these pools) to a GKE version in standard support.", srcs...)
	default:
		hint := ""
		if extended && v.asOf.Before(endExt) {
			hint = fmt.Sprintf("; the Extended release channel would keep it in (paid) extended support until at most %s", v.date(endExt.AddDate(0, 0, -1)))
		}
		v.add(RuleGKEK8sSupport, "", path,
			fmt.Sprintf("GKE %s left standard support on %s (as of %s): GKE upgrades the control plane and nodes of such clusters automatically, whatever autoUpgrade says%s", minor, m.EndStandard, v.date(v.asOf), hint),
			"Upgrade the cluster (and these pools) to a GKE version in standard support, or enroll it in the Extended channel to stay longer.", srcs...)
	}
}

// checkGKEUnsetDriver: what an unset gpu.driver means on this pool.
func (v *validator) checkGKEUnsetDriver(pc *matrix.PoolFacts, op bool) {
	path := pc.Field(".gpu.driver")
	switch pc.GKEInstall {
	case matrix.GKEInstallNone:
		if !op {
			v.add(RuleGKEDriverOption, diag.SeverityWarning, path, fmt.Sprintf("pool %s: gpu.driver is not set, and %s: nothing in the spec installs the driver", pc.Pool.Name, pc.GKEUnsetWhy),
				"Set gpu.driver: DEFAULT or LATEST (COS), DEFAULT (Ubuntu), or INSTALLATION_DISABLED with another installer.", srcGKEGPUs, srcGKEDriverEnum)
		}
	case matrix.GKEInstallUnknown:
		if pc.Pool.AutoProvisioned && !op {
			// Node auto-provisioning installed no driver by default until
			// recently (GKE's data: GKEUnsetDriver): without the version,
			// the nodes may well come up without one.
			v.add(RuleGKEDriverOption, diag.SeverityWarning, path, fmt.Sprintf("pool %s: %s, so the nodes may come up without a driver", pc.Pool.Name, pc.GKEUnsetWhy),
				"Set gpu.driver (the accelerator's gpu-driver-version in the auto-provisioning defaults: DEFAULT or LATEST), and set kubernetesVersion so gpuctl can judge it.", srcGKEGPUs, srcGKEDriverEnum)
			return
		}
		v.unknown(path, fmt.Sprintf("pool %s: %s: whether GKE installs a driver cannot be told", pc.Pool.Name, pc.GKEUnsetWhy), srcGKEGPUs)
	}
}
