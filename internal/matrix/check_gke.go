package matrix

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// What GKE itself installs on a pool (poolCtx.gkeInstall).
const (
	gkeNone           = "none"    // no driver from GKE
	gkeUnknownInstall = "unknown" // depends on a version the spec does not give
)

// checkGKEVersion: the GKE minor's support window at asOf, from GKE's
// release schedule. Past end of standard support GKE upgrades the cluster
// (on the Extended channel: past end of extended support); a minor newer
// than the schedule means the matrix is older than the cluster.
func (v *validator) checkGKEVersion() {
	rs := v.c.gcp.GKE.ReleaseSchedule
	path := "spec.kubernetesVersion"
	minor := v.k8s.String()
	srcs := []string{rs.Source, rs.ExtendedSource}
	newest, oldest := rs.Minors[0], rs.Minors[len(rs.Minors)-1]
	switch {
	case newest.minor.Less(v.k8s):
		v.add(RuleGKEK8sSupport, diag.SeverityWarning, path,
			fmt.Sprintf("GKE %s is newer than the matrix's GKE release schedule (as of %s, newest %s): the matrix is older than the cluster, so its support window and GKE's driver for it cannot be judged", minor, rs.AsOf, newest.Minor),
			"Update gpuctl (or check the version: GKE had no minor after "+newest.Minor+" as of "+rs.AsOf+").", srcs...)
		return
	case v.k8s.Less(oldest.minor):
		v.add(RuleGKEK8sSupport, "", path,
			fmt.Sprintf("GKE %s is older than %s, which left standard support on %s (as of %s): GKE no longer runs or creates %s clusters and upgrades such control planes and nodes automatically", minor, oldest.Minor, oldest.EndStandard, v.date(v.asOf), minor),
			"Upgrade the cluster (and these pools) to a GKE version in standard support.", srcs...)
		return
	}
	var m *gkeReleaseMinor
	for i := range rs.Minors {
		if rs.Minors[i].minor.Compare(v.k8s) == 0 {
			m = &rs.Minors[i]
		}
	}
	if m == nil {
		v.add(RuleGKEK8sSupport, diag.SeverityError, path, fmt.Sprintf("GKE never offered Kubernetes %s: GKE's release schedule goes from %s to %s without it", minor, oldest.Minor, newest.Minor), "Use a GKE minor version that exists.", srcs...)
		return
	}
	if v.asOf.Before(m.endStandard) {
		return
	}
	extended := !v.k8s.Less(MustVersion(rs.ExtendedFrom))
	endExt := m.regular.AddDate(0, rs.ExtendedMonths, 0) // first instant after the last day
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

// gkeAtLeast reports whether the cluster's GKE version is at or past the
// GKE version from; ok is false without a Kubernetes version. A minor-only
// version is taken at its newest patch (new and upgraded pools get it),
// and the third result says the answer depends on the patch.
func (v *validator) gkeAtLeast(from Version) (at, ok, patchDependent bool) {
	if v.k8s == nil {
		return false, false, false
	}
	fromMinor := Version{from[0], from[1]}
	if v.k8sVer.Patch {
		return !v.k8sVer.Full.Less(from), true, false
	}
	switch c := v.k8s.Compare(fromMinor); {
	case c < 0:
		return false, true, false
	case c > 0:
		return true, true, false
	}
	return true, true, true
}

// resolveGKEInstall works out what GKE itself installs on the pool for its
// gpu.driver, by GKE version and node auto-provisioning.
func (v *validator) resolveGKEInstall(pc *poolCtx) {
	di := &v.c.gcp.GKE.DriverInstall
	switch d := pc.p.GPU.Driver; {
	case d == gkeDefault || d == gkeLatest:
		pc.gkeInstall = d
	case d == gkeDisabled, pc.exact != nil:
		pc.gkeInstall = gkeNone
	case d == "" || d == gkeUnspecified:
		from, who := di.unsetFrom, "an unset gpu.driver"
		if pc.p.AutoProvisioned {
			from, who = di.napFrom, "an unset gpu.driver on a node auto-provisioning pool"
		}
		fromText := gkeVersionText(from)
		at, ok, patchDependent := v.gkeAtLeast(from)
		switch {
		case !ok:
			pc.gkeInstall = gkeUnknownInstall
			pc.gkeUnsetWhy = fmt.Sprintf("%s installs the DEFAULT driver from GKE %s on and no driver before, and spec.kubernetesVersion is not set", who, fromText)
		case at:
			pc.gkeInstall = gkeDefault
			pc.gkeUnsetWhy = fmt.Sprintf("%s installs the DEFAULT driver from GKE %s on", who, fromText)
			if patchDependent {
				pc.gkeUnsetWhy += fmt.Sprintf(" (%s patches before %s install none)", v.k8s, fromText)
			}
		default:
			pc.gkeInstall = gkeNone
			pc.gkeUnsetWhy = fmt.Sprintf("%s installs no driver before GKE %s", who, fromText)
		}
	}
}

func gkeVersionText(x Version) string {
	if len(x) == 4 {
		return fmt.Sprintf("%d.%d.%d-gke.%d", x[0], x[1], x[2], x[3])
	}
	return x.String()
}

// gkeDriverRow is GKE's driver table row for the cluster's minor, or nil.
func (v *validator) gkeDriverRow() *gkeDriverMinor {
	if v.k8s == nil {
		return nil
	}
	for i := range v.c.gcp.GKE.DriverInstall.Minors {
		m := &v.c.gcp.GKE.DriverInstall.Minors[i]
		if m.minor.Compare(v.k8s) == 0 {
			return m
		}
	}
	return nil
}

// resolveGKEDriver sets the driver branch GKE installs (DEFAULT, LATEST, or
// DEFAULT for an unset driver) from GKE's driver table, so that the driver
// rules judge it like a pinned one. What the table cannot tell is noted
// (MATRIX-UNKNOWN-FACT) instead.
func (v *validator) resolveGKEDriver(pc *poolCtx) {
	if pc.gkeInstall != gkeDefault && pc.gkeInstall != gkeLatest {
		return
	}
	di := &v.c.gcp.GKE.DriverInstall
	path := pc.f(".gpu.driver")
	what := pc.gkeInstall
	if pc.p.GPU.Driver == "" || pc.p.GPU.Driver == gkeUnspecified {
		what = "DEFAULT (gpu.driver unset)"
	}
	image := imageName(pc.p.OSImage)
	if pc.ubuntu {
		image = pc.p.OSImage
	}
	if pc.gkeInstall == gkeLatest && pc.ubuntu {
		return // LATEST is COS-only: GKE-DRIVER-OPTION
	}
	row := v.gkeDriverRow()
	if row == nil {
		pc.gkeDriverNote = fmt.Sprintf("GKE's GPU driver table (as of %s) has no row for GKE %s, so the driver %s installs", di.AsOf, orDefault(pc.k8s, "(kubernetesVersion unset)"), what)
		return
	}
	var branch int
	switch {
	case pc.gkeInstall == gkeLatest:
		branch = slices.Max(row.COSBranches)
	case pc.cos:
		branch = row.COSDefault
	case row.UbuntuDefault != 0:
		branch = row.UbuntuDefault
	default:
		pc.gkeDriverNote = fmt.Sprintf("GKE's GPU driver table (as of %s) offers %s on %s for GKE %s and marks none as DEFAULT, so the driver %s installs", di.AsOf, branchList(row.UbuntuBranches), image, row.Minor, what)
		return
	}
	origin := fmt.Sprintf("GKE %s %s on %s", row.Minor, what, image)
	ref := driverRef{branch: branch, path: path, origin: origin, sources: []string{di.Source}}
	if g := pc.gpu; g != nil && g.MinDriverBranch > branch && pc.gkeInstall == gkeDefault {
		// The minor's DEFAULT branch does not support the GPU.
		newer := []int{}
		for _, b := range row.COSBranches {
			if b >= g.MinDriverBranch {
				newer = append(newer, b)
			}
		}
		switch {
		case pc.cos && !row.COSNoFallback:
			pc.gkeDriverNote = fmt.Sprintf("GKE %s's DEFAULT on COS is R%d, which does not support %s; COS labels its drivers per GPU type, and which branch its DEFAULT is for %s is not in GKE's table, so the driver %s installs", row.Minor, branch, g.ID, g.ID, what)
			pc.gkeDriverSources = []string{di.Source, di.COSPerGPUEvidence}
			return
		case pc.cos && len(newer) > 0:
			ref.fix = fmt.Sprintf("Set gpu.driver: LATEST (R%d on GKE %s COS), or upgrade GKE: GKE does not fall back to a newer branch for %s.", slices.Max(newer), row.Minor, g.ID)
			ref.sources = append(ref.sources, di.NoFallbackEvidence)
		case pc.cos:
			ref.fix = fmt.Sprintf("Upgrade GKE: no branch GKE %s offers on COS supports %s.", row.Minor, g.ID)
			ref.sources = append(ref.sources, di.NoFallbackEvidence)
		default:
			ref.fix = fmt.Sprintf("Use COS_CONTAINERD with gpu.driver: LATEST, or gpu.driver: INSTALLATION_DISABLED with a driver >= R%d installed by hand or by the GPU Operator: GKE says to install a supported driver manually when the DEFAULT does not support the GPU.", g.MinDriverBranch)
		}
	}
	pc.driver = ref
}

// checkGKEUnsetDriver: what an unset gpu.driver means on this pool.
func (v *validator) checkGKEUnsetDriver(pc *poolCtx, op bool) {
	path := pc.f(".gpu.driver")
	switch pc.gkeInstall {
	case gkeNone:
		if !op {
			v.add(RuleGKEDriverOption, diag.SeverityWarning, path, fmt.Sprintf("pool %s: gpu.driver is not set, and %s: nothing in the spec installs the driver", pc.p.Name, pc.gkeUnsetWhy),
				"Set gpu.driver: DEFAULT or LATEST (COS), DEFAULT (Ubuntu), or INSTALLATION_DISABLED with another installer.", srcGKEGPUs, srcGKEDriverEnum)
		}
	case gkeUnknownInstall:
		if pc.p.AutoProvisioned && !op {
			// Node auto-provisioning installed no driver by default until
			// recently (GKE's data: GKEUnsetDriver): without the version,
			// the nodes may well come up without one.
			v.add(RuleGKEDriverOption, diag.SeverityWarning, path, fmt.Sprintf("pool %s: %s, so the nodes may come up without a driver", pc.p.Name, pc.gkeUnsetWhy),
				"Set gpu.driver (the accelerator's gpu-driver-version in the auto-provisioning defaults: DEFAULT or LATEST), and set kubernetesVersion so gpuctl can judge it.", srcGKEGPUs, srcGKEDriverEnum)
			return
		}
		v.unknown(path, fmt.Sprintf("pool %s: %s: whether GKE installs a driver cannot be told", pc.p.Name, pc.gkeUnsetWhy), srcGKEGPUs)
	}
}

// GKEUnsetDriver says what GKE installs on a node pool whose
// gpu_driver_version is not set, for the cluster's kubernetesVersion: "DEFAULT"
// from 1.30.1-gke.1156000 on (1.32.2-gke.1297000 for node auto-provisioning
// pools), "INSTALLATION_DISABLED" before, "" when the version is not given
// or not a Kubernetes version. A minor-only version counts at its newest
// patch, as validate judges it.
func GKEUnsetDriver(kubernetesVersion string, autoProvisioned bool) string {
	k, err := ParseKubernetesVersion(kubernetesVersion)
	if kubernetesVersion == "" || err != nil {
		return ""
	}
	v := &validator{c: cat(), k8s: k.Minor(), k8sVer: k}
	from := v.c.gcp.GKE.DriverInstall.unsetFrom
	if autoProvisioned {
		from = v.c.gcp.GKE.DriverInstall.napFrom
	}
	if at, _, _ := v.gkeAtLeast(from); at {
		return gkeDefault
	}
	return gkeDisabled
}
