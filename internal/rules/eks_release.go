package rules

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
)

// EKS AMI releases (data/amis.yaml): a pool's releaseVersion against the
// cluster's Kubernetes minor, the releases the matrix knows, and the
// pinned driver.

const (
	srcEKSUpdateNodegroup = "https://docs.aws.amazon.com/eks/latest/APIReference/API_UpdateNodegroupVersion.html"
	srcEKSAMIReleases     = "https://github.com/awslabs/amazon-eks-ami/releases"
	srcBottlerocketGPU    = "https://bottlerocket.dev/en/os/1.57.x/version-information/gpu-drivers/"
)

// checkRelease: the pool's releaseVersion (EKS-RELEASE-K8S,
// EKS-RELEASE-UNKNOWN, EKS-RELEASE-DRIVER), or a pinned driver on an AMI
// that ships its own without one (EKS-RELEASE-PIN).
func (v *validator) checkRelease(pc *matrix.PoolFacts) {
	a, p := pc.AMI, pc.Pool
	if a == nil || !v.eks() || a.Custom {
		return
	}
	if p.ReleaseVersion == "" {
		v.checkReleasePin(pc)
		return
	}
	rv, err := matrix.ParseReleaseVersion(a.Name, p.ReleaseVersion)
	if err != nil {
		return // SPEC-VERSION says so
	}
	path := pc.Field(".releaseVersion")
	if rv.Kubernetes != "" && v.k8s != nil && rv.Kubernetes != v.k8s.String() {
		v.add(RuleEKSReleaseK8s, "", path, fmt.Sprintf("pool %s: releaseVersion %s is a release for Kubernetes %s, but the cluster runs %s: EKS takes only a release of the node group's Kubernetes version", p.Name, p.ReleaseVersion, rv.Kubernetes, v.s.KubernetesVersion),
			v.newestReleaseFix(a.Name, v.k8s.String()))
		return
	}
	v.checkReleaseKnown(pc, *pc.Release, path)
}

// newestReleaseFix names the newest release of amiType for minor k8s.
func (v *validator) newestReleaseFix(amiType, k8s string) string {
	for _, r := range matrix.NewestAMIReleases(amiType) {
		if r.Kubernetes == k8s {
			return fmt.Sprintf("Use a %s release for Kubernetes %s (the newest the matrix knows: %s, %s), or leave releaseVersion out for the newest.", amiType, k8s, r.Release, r.Date)
		}
	}
	return fmt.Sprintf("Use a %s release for Kubernetes %s, or leave releaseVersion out for the newest.", amiType, k8s)
}

// checkReleaseKnown judges what the matrix knows of the release.
func (v *validator) checkReleaseKnown(pc *matrix.PoolFacts, l matrix.ReleaseLookup, path string) {
	p, ami := pc.Pool, pc.AMI.Name
	date := l.TableDate.Format("2006-01-02")
	switch {
	case l.Status == matrix.ReleaseKnown:
		v.checkReleaseRows(pc, l.Releases)
	case l.Status == matrix.ReleaseNoSuch:
		v.add(RuleEKSReleaseUnknown, diag.SeverityError, path, fmt.Sprintf("pool %s: %s has no release %s: the matrix lists its releases from %s to %s (table %s, as of %s)%s", p.Name, ami, p.ReleaseVersion, l.Oldest, l.Newest, l.Table, date, sameDate(l.Releases)),
			v.newestReleaseFix(ami, v.k8sMinor()), srcFor(ami))
	case l.Status == matrix.ReleaseNewer && !l.Version.Date.IsZero() && l.Version.Date.After(v.asOf):
		v.add(RuleEKSReleaseUnknown, diag.SeverityError, path, fmt.Sprintf("pool %s: releaseVersion %s is dated %s, after the date checked at (%s): no such %s release exists yet", p.Name, p.ReleaseVersion, l.Version.Date.Format("2006-01-02"), v.date(v.asOf), ami),
			v.newestReleaseFix(ami, v.k8sMinor()), srcFor(ami))
	case l.Status == matrix.ReleaseNewer:
		v.add(RuleEKSReleaseUnknown, diag.SeverityWarning, path, fmt.Sprintf("pool %s: releaseVersion %s is newer than the newest %s release the matrix knows (%s; table %s, as of %s): its driver and Kubernetes versions cannot be judged", p.Name, p.ReleaseVersion, ami, l.Newest, l.Table, date),
			"Check the release in the AMI's release notes; a newer gpuctl knows more releases.", srcFor(ami))
	case l.Status == matrix.ReleaseOlder, l.Status == matrix.ReleaseUnlisted:
		v.add(RuleEKSReleaseUnknown, diag.SeverityInfo, path, fmt.Sprintf("pool %s: the matrix does not list %s release %s (table %s lists %s to %s, as of %s); its driver cannot be judged", p.Name, ami, p.ReleaseVersion, l.Table, l.Oldest, l.Newest, date), "", srcFor(ami))
	}
}

// k8sMinor is the cluster's Kubernetes minor, "" when unknown.
func (v *validator) k8sMinor() string {
	if v.k8s == nil {
		return ""
	}
	return v.k8s.String()
}

// sameDate names the releases of the same date, if any (": its release of
// 2025-12-09 for Kubernetes 1.34 is 1.34.2-20251209").
func sameDate(rs []matrix.AMIRelease) string {
	if len(rs) == 0 {
		return ""
	}
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s for Kubernetes %s", r.Release, r.Kubernetes))
	}
	return fmt.Sprintf("; its releases of %s are %s", rs[0].Date, strings.Join(parts, ", "))
}

func srcFor(ami string) string {
	if matrix.IsBottlerocket(ami) {
		return srcBottlerocketGPU
	}
	return srcEKSAMIReleases
}

// checkReleaseRows: a known release is published for the cluster's
// Kubernetes minor (Bottlerocket) and ships the pinned driver.
func (v *validator) checkReleaseRows(pc *matrix.PoolFacts, rows []matrix.AMIRelease) {
	p := pc.Pool
	row, ok := rows[0], true
	if v.k8s != nil {
		row, ok = releaseFor(rows, v.k8s.String())
	}
	if !ok {
		v.add(RuleEKSReleaseK8s, "", pc.Field(".releaseVersion"), fmt.Sprintf("pool %s: %s %s has no variant for Kubernetes %s (it is built for %s)", p.Name, pc.AMI.Name, rows[0].Release, v.s.KubernetesVersion, minors(rows)),
			"Use a release built for the cluster's Kubernetes version.", row.Source)
		return
	}
	drv := p.GPU.Driver
	if _, err := matrix.ParseVersion(drv); err != nil || row.Driver == "" || sameDriver(drv, row.Driver) {
		return
	}
	v.add(RuleEKSReleaseDriver, "", pc.Field(".gpu.driver"), fmt.Sprintf("pool %s: gpu.driver is %s, but %s release %s ships driver %s", p.Name, drv, pc.AMI.Name, p.ReleaseVersion, row.Driver),
		releasesFix(pc.AMI.Name, drv, v.k8sMinor()), row.Source)
}

func releaseFor(rows []matrix.AMIRelease, minor string) (matrix.AMIRelease, bool) {
	for _, r := range rows {
		if r.Kubernetes == minor {
			return r, true
		}
	}
	return matrix.AMIRelease{}, false
}

func minors(rows []matrix.AMIRelease) string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Kubernetes)
	}
	return strings.Join(out, ", ")
}

func sameDriver(a, b string) bool {
	x, err1 := matrix.ParseVersion(a)
	y, err2 := matrix.ParseVersion(b)
	return err1 == nil && err2 == nil && x.Compare(y) == 0
}

func releasesFix(ami, driver, k8s string) string {
	return "Pin a release that ships the driver, or leave gpu.driver out: " + matrix.ReleasesShipping(ami, driver, k8s) + "."
}

// checkReleasePin: an exact gpu.driver on an AMI that ships its own
// driver, with no releaseVersion: EKS picks the newest release, whose
// driver may differ, and generate refuses it (EKS-RELEASE-PIN).
func (v *validator) checkReleasePin(pc *matrix.PoolFacts) {
	a, p := pc.AMI, pc.Pool
	if !a.ShipsDriver || !exactDriver(p.GPU.Driver) {
		return
	}
	v.add(RuleEKSReleasePin, "", pc.Field(".gpu.driver"), fmt.Sprintf("pool %s: gpu.driver pins %s on %s without releaseVersion: EKS takes the newest release, whose driver may differ; %s", p.Name, p.GPU.Driver, a.Name, matrix.ReleasesShipping(a.Name, p.GPU.Driver, v.k8sMinor())),
		"Set releaseVersion to a release that ships the driver, or leave gpu.driver out to take the AMI's.")
}

// exactDriver reports whether s is a driver version or branch ("580.95.05",
// "580"), not a keyword: what generate holds to a pinned release.
func exactDriver(s string) bool {
	_, err := matrix.ParseVersion(s)
	return err == nil
}
