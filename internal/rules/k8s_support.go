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

// checkEKSVersion: the EKS Kubernetes version's support window at asOf.
func (v *validator) checkEKSVersion() {
	ev := v.c.AWS().EKSVersions
	path := "spec.kubernetesVersion"
	for _, e := range ev.Versions {
		if matrix.MustVersion(e.Kubernetes).Compare(v.k8s) != 0 {
			continue
		}
		switch {
		case e.EndStandardDate().IsZero():
			return // known version, support dates not captured
		case !v.asOf.Before(e.EndExtendedDate()):
			v.add(RuleEKSK8sSupport, "", path, fmt.Sprintf("EKS %s ended extended support on %s (as of %s): AWS upgrades such control planes automatically", e.Kubernetes, e.EndExtended, v.date(v.asOf)),
				"Upgrade the cluster (and these pools) to a version in standard support.", ev.Source)
		case !v.asOf.Before(e.EndStandardDate()):
			v.add(RuleEKSK8sSupport, "", path, fmt.Sprintf("EKS %s left standard support on %s and is in paid extended support until %s (as of %s)", e.Kubernetes, e.EndStandard, e.EndExtended, v.date(v.asOf)),
				"Plan the upgrade to a version in standard support.", ev.Source)
		}
		return
	}
	// Older than every listed version: EKS retires versions in order, so once
	// the oldest listed one is past extended support, so is this one.
	var oldest *matrix.EKSVersion
	for i := range ev.Versions {
		e := &ev.Versions[i]
		if !e.EndExtendedDate().IsZero() && (oldest == nil || matrix.MustVersion(e.Kubernetes).Compare(matrix.MustVersion(oldest.Kubernetes)) < 0) {
			oldest = e
		}
	}
	if oldest != nil && v.k8s.Compare(matrix.MustVersion(oldest.Kubernetes)) < 0 && !v.asOf.Before(oldest.EndExtendedDate()) {
		v.add(RuleEKSK8sSupport, "", path, fmt.Sprintf("EKS %s is older than %s, which ended extended support on %s (as of %s): EKS no longer runs or creates %s clusters, and AWS upgrades such control planes automatically", v.k8s, oldest.Kubernetes, oldest.EndExtended, v.date(v.asOf), v.k8s),
			"Upgrade the cluster (and these pools) to a version in standard support.", ev.Source)
		return
	}
	v.unknown(path, fmt.Sprintf("the EKS support window of Kubernetes %s is not in the matrix", v.k8s), ev.Source)
}
