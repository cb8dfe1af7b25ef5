package matrix

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// GKE gpu_driver_version values.
const (
	GKEDriverDefault     = "DEFAULT"
	GKEDriverLatest      = "LATEST"
	GKEDriverDisabled    = "INSTALLATION_DISABLED"
	GKEDriverUnspecified = "GPU_DRIVER_VERSION_UNSPECIFIED"
)

// What GKE itself installs on a pool (PoolFacts.GKEInstall), besides
// GKEDriverDefault and GKEDriverLatest.
const (
	GKEInstallNone    = "none"    // no driver from GKE
	GKEInstallUnknown = "unknown" // depends on a version the spec does not give
)

// The unexported spellings the facts files use.
const (
	gkeDefault        = GKEDriverDefault
	gkeLatest         = GKEDriverLatest
	gkeDisabled       = GKEDriverDisabled
	gkeUnspecified    = GKEDriverUnspecified
	gkeNone           = GKEInstallNone
	gkeUnknownInstall = GKEInstallUnknown
)

// IsGKEDriverKeyword reports whether s is one of GKE's gpu_driver_version
// values rather than a driver version.
func IsGKEDriverKeyword(s string) bool {
	switch s {
	case gkeDefault, gkeLatest, gkeDisabled, gkeUnspecified:
		return true
	}
	return false
}

// gkeVersion is the cluster's parsed Kubernetes version as the GKE facts
// read it: minor is nil when spec.kubernetesVersion is unset or bad.
type gkeVersion struct {
	minor Version
	full  KubernetesVersion
}

func clusterGKEVersion(kubernetesVersion string) gkeVersion {
	k, err := ParseKubernetesVersion(kubernetesVersion)
	if kubernetesVersion == "" || err != nil {
		return gkeVersion{}
	}
	return gkeVersion{minor: k.Minor(), full: k}
}

// atLeast reports whether the cluster's GKE version is at or past the GKE
// version from; ok is false without a Kubernetes version. A minor-only
// version is taken at its newest patch (new and upgraded pools get it), and
// the third result says the answer depends on the patch.
func (g gkeVersion) atLeast(from Version) (at, ok, patchDependent bool) {
	if g.minor == nil {
		return false, false, false
	}
	fromMinor := Version{from[0], from[1]}
	if g.full.Patch {
		return !g.full.Full.Less(from), true, false
	}
	switch c := g.minor.Compare(fromMinor); {
	case c < 0:
		return false, true, false
	case c > 0:
		return true, true, false
	}
	return true, true, true
}

// GKEUnsetDriver says what GKE installs on a node pool whose
// gpu_driver_version is not set, for the cluster's kubernetesVersion: "DEFAULT"
// from 1.30.1-gke.1156000 on (1.32.2-gke.1297000 for node auto-provisioning
// pools), "INSTALLATION_DISABLED" before, "" when the version is not given
// or not a Kubernetes version. A minor-only version counts at its newest
// patch, as validate judges it.
func GKEUnsetDriver(kubernetesVersion string, autoProvisioned bool) string {
	g := clusterGKEVersion(kubernetesVersion)
	if g.minor == nil {
		return ""
	}
	di := &cat().gcp.GKE.DriverInstall
	from := di.unsetFrom
	if autoProvisioned {
		from = di.napFrom
	}
	if at, _, _ := g.atLeast(from); at {
		return gkeDefault
	}
	return gkeDisabled
}

// resolveGKEInstall works out what GKE itself installs on the pool for its
// gpu.driver, by GKE version and node auto-provisioning.
func (r *poolResolver) resolveGKEInstall(pf *PoolFacts) {
	switch d := pf.Pool.GPU.Driver; {
	case d == gkeDefault || d == gkeLatest:
		pf.GKEInstall = d
	case d == gkeDisabled, pf.Exact != nil:
		pf.GKEInstall = gkeNone
	case d == "" || d == gkeUnspecified:
		pf.GKEInstall, pf.GKEUnsetWhy = r.gkeUnsetInstall(pf.Pool.AutoProvisioned)
	}
}

// gkeUnsetInstall is what GKE installs for an unset gpu.driver, and why.
func (r *poolResolver) gkeUnsetInstall(autoProvisioned bool) (install, why string) {
	di := &r.c.gcp.GKE.DriverInstall
	from, who := di.unsetFrom, "an unset gpu.driver"
	if autoProvisioned {
		from, who = di.napFrom, "an unset gpu.driver on a node auto-provisioning pool"
	}
	fromText := gkeVersionText(from)
	at, ok, patchDependent := r.gke.atLeast(from)
	switch {
	case !ok:
		return gkeUnknownInstall, fmt.Sprintf("%s installs the DEFAULT driver from GKE %s on and no driver before, and spec.kubernetesVersion is not set", who, fromText)
	case at && patchDependent:
		return gkeDefault, fmt.Sprintf("%s installs the DEFAULT driver from GKE %s on (%s patches before %s install none)", who, fromText, r.gke.minor, fromText)
	case at:
		return gkeDefault, fmt.Sprintf("%s installs the DEFAULT driver from GKE %s on", who, fromText)
	}
	return gkeNone, fmt.Sprintf("%s installs no driver before GKE %s", who, fromText)
}

func gkeVersionText(x Version) string {
	if len(x) == 4 {
		return fmt.Sprintf("%d.%d.%d-gke.%d", x[0], x[1], x[2], x[3])
	}
	return x.String()
}

// gkeDriverRow is GKE's driver table row for the cluster's minor, or nil.
func (r *poolResolver) gkeDriverRow() *gkeDriverMinor {
	if r.gke.minor == nil {
		return nil
	}
	for i := range r.c.gcp.GKE.DriverInstall.Minors {
		m := &r.c.gcp.GKE.DriverInstall.Minors[i]
		if m.minor.Compare(r.gke.minor) == 0 {
			return m
		}
	}
	return nil
}

// GKEImageName names a GKE osImage for messages; "" is COS, GKE's default.
func GKEImageName(s string) string {
	if s == "" {
		return "COS_CONTAINERD, the GKE default"
	}
	return s
}

// resolveGKEDriver sets the driver branch GKE installs (DEFAULT, LATEST, or
// DEFAULT for an unset driver) from GKE's driver table, so that the driver
// rules judge it like a pinned one. What the table cannot tell goes to
// GKEDriverNote instead.
func (r *poolResolver) resolveGKEDriver(pf *PoolFacts) {
	if pf.GKEInstall != gkeDefault && pf.GKEInstall != gkeLatest {
		return
	}
	if pf.GKEInstall == gkeLatest && pf.Ubuntu {
		return // LATEST is COS-only: GKE-DRIVER-OPTION
	}
	what := pf.GKEInstall
	if pf.Pool.GPU.Driver == "" || pf.Pool.GPU.Driver == gkeUnspecified {
		what = "DEFAULT (gpu.driver unset)"
	}
	di := &r.c.gcp.GKE.DriverInstall
	row := r.gkeDriverRow()
	if row == nil {
		r.noGKEDriverRow(pf, what)
		return
	}
	image := GKEImageName(pf.Pool.OSImage)
	if pf.Ubuntu {
		image = pf.Pool.OSImage
	}
	branch, ok := gkeBranch(pf, row)
	if !ok {
		pf.GKEDriverNote = ubuntuNoDefaultNote(di, row, image, what)
		pf.GKEDriverSources = row.rowSources(di)
		return
	}
	ref := DriverRef{Branch: branch, Path: pf.Field(".gpu.driver"), Origin: fmt.Sprintf("GKE %s %s on %s", row.Minor, what, image), Sources: row.rowSources(di)}
	if g := pf.GPU; g != nil && g.MinDriverBranch > branch && pf.GKEInstall == gkeDefault {
		if !r.gkeDefaultTooOld(pf, row, branch, what, &ref) {
			return
		}
	}
	pf.Driver = ref
}

// noGKEDriverRow notes that GKE's driver table has no row for the
// cluster's minor; a minor newer than its newest row is beyond the table
// (GKEDriverBeyond), which rules grade higher than a gap inside it.
func (r *poolResolver) noGKEDriverRow(pf *PoolFacts, what string) {
	di := &r.c.gcp.GKE.DriverInstall
	pf.GKEDriverNote = fmt.Sprintf("GKE's GPU driver table (as of %s) has no row for GKE %s, so the driver %s installs", di.tableDate(), cmp.Or(pf.K8s, "(kubernetesVersion unset)"), what)
	if len(di.Minors) > 0 && r.gke.minor != nil && di.Minors[0].minor.Less(r.gke.minor) {
		pf.GKEDriverBeyond = true
		pf.GKEDriverNote = fmt.Sprintf("GKE %s is newer than GKE's GPU driver table (as of %s, newest row %s): the matrix is older than the cluster, so the driver %s installs", pf.K8s, di.tableDate(), di.Minors[0].Minor, what)
	}
	pf.GKEDriverSources = []string{di.Source}
}

// ubuntuNoDefaultNote says why the Ubuntu DEFAULT of a minor is not known:
// GKE's table offers branches and marks none DEFAULT, or (rows from COS's
// release notes) no source gives Ubuntu's.
func ubuntuNoDefaultNote(di *gkeDriverInstall, row *gkeDriverMinor, image, what string) string {
	if len(row.UbuntuBranches) == 0 {
		return fmt.Sprintf("GKE's GPU driver table (as of %s) has GKE %s's driver on COS only (from COS %d's release notes), not on %s, so the driver %s installs", di.tableDate(), row.Minor, row.COS, image, what)
	}
	return fmt.Sprintf("GKE's GPU driver table (as of %s) offers %s on %s for GKE %s and marks none as DEFAULT, so the driver %s installs", di.tableDate(), BranchList(row.UbuntuBranches), image, row.Minor, what)
}

// rowSources are the sources of a row of GKE's driver table: its own
// (COS release notes) where it has them, else GKE's page.
func (m *gkeDriverMinor) rowSources(di *gkeDriverInstall) []string {
	if srcs := m.sources(); len(srcs) > 0 {
		return srcs
	}
	return []string{di.Source}
}

// tableDate is the date of GKE's driver table: its newest as_of (the
// page's, or a newer row's), as the table dating reads it.
func (di *gkeDriverInstall) tableDate() string { return TableAsOf(tableGKEDriverInstall) }

// tableGKEDriverInstall names GKE's driver table among the embedded tables.
const tableGKEDriverInstall = "gcp gke.driver_install"

// gkeBranch is the driver branch GKE's table gives the pool's install and
// image; ok is false when the table marks none as DEFAULT (Ubuntu).
func gkeBranch(pf *PoolFacts, row *gkeDriverMinor) (branch int, ok bool) {
	switch {
	case pf.GKEInstall == gkeLatest:
		return slices.Max(row.COSBranches), true
	case pf.COS:
		return row.COSDefault, true
	}
	return row.UbuntuDefault, row.UbuntuDefault != 0
}

// gkeDefaultTooOld handles a minor whose DEFAULT branch does not support
// the pool's GPU: it sets the fix of ref, or notes that the branch cannot
// be told (and returns false).
func (r *poolResolver) gkeDefaultTooOld(pf *PoolFacts, row *gkeDriverMinor, branch int, what string, ref *DriverRef) bool {
	di := &r.c.gcp.GKE.DriverInstall
	g := pf.GPU
	newer := []int{}
	for _, b := range row.COSBranches {
		if b >= g.MinDriverBranch {
			newer = append(newer, b)
		}
	}
	switch {
	case pf.COS && !row.COSNoFallback:
		pf.GKEDriverNote = fmt.Sprintf("GKE %s's DEFAULT on COS is R%d, which does not support %s; COS labels its drivers per GPU type, and which branch its DEFAULT is for %s is not in GKE's table, so the driver %s installs", row.Minor, branch, g.ID, g.ID, what)
		pf.GKEDriverSources = append(row.rowSources(di), di.COSPerGPUEvidence)
		return false
	case pf.COS && len(newer) > 0:
		ref.Fix = fmt.Sprintf("Set gpu.driver: LATEST (R%d on GKE %s COS), or upgrade GKE: GKE does not fall back to a newer branch for %s.", slices.Max(newer), row.Minor, g.ID)
		ref.Sources = append(ref.Sources, di.NoFallbackEvidence)
	case pf.COS:
		ref.Fix = fmt.Sprintf("Upgrade GKE: no branch GKE %s offers on COS supports %s.", row.Minor, g.ID)
		ref.Sources = append(ref.Sources, di.NoFallbackEvidence)
	default:
		ref.Fix = fmt.Sprintf("Use COS_CONTAINERD with gpu.driver: LATEST, or gpu.driver: INSTALLATION_DISABLED with a driver >= R%d installed by hand or by the GPU Operator: GKE says to install a supported driver manually when the DEFAULT does not support the GPU.", g.MinDriverBranch)
	}
	return true
}

// BranchList writes driver branches as "R535, R550", for messages.
func BranchList(xs []int) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("R%d", x)
	}
	return strings.Join(out, ", ")
}

// gcpPluginFor is the NCCL net plugin each GCP GPU network needs.
var gcpPluginFor = map[string]string{FabricTCPX: "tcpx", FabricTCPXO: "tcpxo", FabricRoCE: "gib"}

// GCPPluginFor returns the NCCL net plugin a GCP GPU network (fabric)
// needs: "tcpx", "tcpxo", "gib", or "" for none.
func GCPPluginFor(fabric string) string { return gcpPluginFor[fabric] }

var ncclFabricName = map[string]string{
	FabricEFA:   "EFA",
	FabricTCPX:  "GPUDirect-TCPX",
	FabricTCPXO: "GPUDirect-TCPXO",
	FabricRoCE:  "GPUDirect RDMA over RoCE",
}

// FabricName names a GPU network for people ("GPUDirect-TCPXO"); "" for
// FabricNone or an unknown fabric.
func FabricName(fabric string) string { return ncclFabricName[fabric] }

// ImpliedGCPPlugin returns the GCP NCCL plugin that a pool's NCCL
// variables configure (tcpx for NCCL_GPUDIRECTTCPX_*, tcpxo for
// NCCL_FASTRAK_*, gib for NCCL_NET=gIB) and the variable that says so.
func ImpliedGCPPlugin(env map[string]string) (plugin, key string) {
	c := cat()
	for _, k := range slices.Sorted(maps.Keys(env)) {
		for _, f := range c.nccl.Fabrics {
			for _, pre := range f.EnvPrefixes {
				if strings.HasPrefix(k, pre) {
					return f.Plugin, k
				}
			}
			if k == "NCCL_NET" && f.NetName != "" && f.Plugin != "aws-ofi-nccl" && strings.EqualFold(strings.TrimSpace(env[k]), f.NetName) {
				return f.Plugin, k
			}
		}
	}
	return "", ""
}
