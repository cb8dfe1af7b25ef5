package matrix

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Options tune a validation run.
type Options struct {
	// AsOf is the date lifecycle rules evaluate at (driver EOL, EKS support,
	// waivers); the zero value means today (UTC).
	AsOf time.Time
	// Policy is the organisation's default policy (a --policy file); the
	// spec's own spec.policy overrides it field by field (spec.MergePolicy).
	// With neither, no POLICY-* rule fires.
	Policy *spec.Policy
}

func (o Options) asOf() time.Time {
	if o.AsOf.IsZero() {
		return time.Now().UTC()
	}
	return o.AsOf
}

// GKE gpu_driver_version values.
const (
	gkeDefault     = "DEFAULT"
	gkeLatest      = "LATEST"
	gkeDisabled    = "INSTALLATION_DISABLED"
	gkeUnspecified = "GPU_DRIVER_VERSION_UNSPECIFIED"
)

// Validate checks a resolved cluster spec (no environments: see
// spec.Document.Resolve) against the matrix and returns its findings sorted
// by path, then rule. Each finding has Path set to the field to change;
// File, Line, Column and Environment are left for the caller. A nil spec
// yields no findings. Validate never fails: what it cannot judge it reports
// as an info finding (MATRIX-UNKNOWN-FACT).
func Validate(cs *spec.ClusterSpec, opts Options) []diag.Finding {
	if cs == nil {
		return []diag.Finding{}
	}
	v := newValidator(opts)
	v.cs, v.s = cs, &cs.Spec
	v.policy = spec.MergePolicy(opts.Policy, cs.Spec.Policy)
	v.checkSpec()
	v.checkOperator()
	for i := range v.s.NodePools {
		pc := v.resolvePool(i)
		v.checkMachine(pc)
		v.checkAMI(pc)
		v.checkDriverOwner(pc)
		v.checkOperatorPool(pc)
		v.checkDevicePlugin(pc)
		v.checkCompat(pc.subject())
		v.checkSharing(pc)
		v.checkLabels(pc)
		v.checkNCCL(pc)
		v.checkUpgrades(pc)
		v.checkPoolPolicy(pc)
	}
	v.checkMaintenanceWindows()
	v.checkClusterPolicy()
	v.checkDataAge()
	out := v.result()
	for i := range out {
		out[i].Sources = sourcesFor(cs.Spec.Provider, out[i].Sources)
	}
	return out
}

// otherCloud lists URL fragments of each provider's documentation; a
// finding on a GKE spec drops AWS sources (and the other way round) when
// sources of its own cloud or vendor remain.
var otherCloud = map[string][]string{
	spec.ProviderGKE: {"aws.amazon.com", "awslabs", "bottlerocket", "amazonaws"},
	spec.ProviderEKS: {"cloud.google.com", "cos.googlesource.com", "GoogleCloudPlatform"},
}

func sourcesFor(provider string, sources []string) []string {
	drop := otherCloud[provider]
	if len(drop) == 0 {
		return sources
	}
	kept := make([]string, 0, len(sources))
	for _, s := range sources {
		other := false
		for _, d := range drop {
			if strings.Contains(s, d) {
				other = true
				break
			}
		}
		if !other {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return sources
	}
	return kept
}

type validator struct {
	c        *catalog
	cs       *spec.ClusterSpec
	s        *spec.Spec
	asOf     time.Time
	k8s      Version // the parsed kubernetesVersion's major.minor, nil when unset or bad
	k8sVer   KubernetesVersion
	findings []diag.Finding

	policy *spec.Policy // the policy in force; nil: none
	// GPU capacity (autoscaling.max x GPUs per node) for maxSpotShare.
	gpuCapacity, spotCapacity float64
	unboundedSpot             []int // spot pools without autoscaling.max
}

func newValidator(opts Options) *validator {
	return &validator{c: cat(), asOf: opts.asOf()}
}

// add records a finding. sev "" means the rule's severity; fix "" the
// rule's fix. Sources are the facts' URLs, followed by the rule's own.
func (v *validator) add(rule string, sev diag.Severity, path, msg, fix string, sources ...string) {
	r, ok := ruleIndex[rule]
	if !ok {
		panic("matrix: finding with unregistered rule " + rule)
	}
	if sev == "" {
		sev = r.Severity
	}
	if fix == "" {
		fix = r.Fix
	}
	srcs := appendUnique([]string{}, sources...)
	srcs = appendUnique(srcs, r.Sources...)
	v.findings = append(v.findings, diag.Finding{Rule: rule, Severity: sev, Message: msg, Fix: fix, Sources: srcs, Path: path})
}

// unknown records a MATRIX-UNKNOWN-FACT note.
func (v *validator) unknown(path, msg string, sources ...string) {
	v.add(RuleUnknownFact, diag.SeverityInfo, path, msg, "", sources...)
}

func (v *validator) result() []diag.Finding {
	seen := map[string]bool{}
	out := []diag.Finding{}
	for _, f := range v.findings {
		k := f.Rule + "\x00" + f.Path + "\x00" + f.Message
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, f)
	}
	SortFindings(out)
	return out
}

// SortFindings orders findings by path, then rule, then message, the order
// Validate, Check and ApplyWaivers return.
func SortFindings(fs []diag.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
}

func (v *validator) gke() bool { return v.s.Provider == spec.ProviderGKE }
func (v *validator) eks() bool { return v.s.Provider == spec.ProviderEKS }

func (v *validator) date(t time.Time) string { return t.Format("2006-01-02") }

// resolvedMachine is one of a pool's machine/instance types.
type resolvedMachine struct {
	name string
	path string
	m    Machine
	ok   bool
}

// poolCtx is what the rules know about one node pool after resolving its
// machine types, GPU, image, driver and device plugin.
type poolCtx struct {
	i    int
	p    *spec.NodePool
	path string

	machines []resolvedMachine
	machine  *Machine // the first known machine type

	gpu     *GPUProduct // from gpu.type, else the machine type
	gpuPath string

	ami    *amiFact // EKS
	cos    bool     // GKE COS image
	ubuntu bool     // GKE Ubuntu image

	gkeDriver string // the GKE keyword in gpu.driver, if any
	exact     Version
	driver    driverRef

	cuda, cudaPath string

	dp     spec.DevicePlugin
	dpPath string
	dpSet  bool // a provider was written

	k8s string // the cluster's Kubernetes minor version ("1.33"), "" when unknown

	// gkeInstall is what GKE itself installs on the pool: gkeDefault,
	// gkeLatest, gkeNone, or gkeUnknownInstall (it depends on a version the
	// spec does not give). Empty off GKE.
	gkeInstall string
	// gkeUnsetWhy explains what an unset gpu.driver means here, for messages.
	gkeUnsetWhy string
	// gkeDriverNote says why the driver GKE installs cannot be judged
	// ("GKE's GPU driver table has no row for GKE 1.35, so the driver
	// LATEST installs"); gkeDriverSources back it.
	gkeDriverNote    string
	gkeDriverSources []string

	operatorDriver bool   // the GPU Operator installs the driver here
	operatorKMT    string // its driver.kernelModuleType
}

func (pc *poolCtx) f(suffix string) string { return pc.path + suffix }

func (pc *poolCtx) training() bool { return pc.p.Role == "training" }

// driverRef is what is known of the driver a pool's nodes run.
type driverRef struct {
	raw    string  // as written, or the fact's version
	exact  Version // nil when only the branch is known
	branch int     // 0 when unknown
	path   string  // the field to change
	origin string  // where it comes from, for messages
	// fix and sources replace the generic advice of driver findings where
	// the driver comes from a platform default (GKE's DEFAULT branch).
	fix     string
	sources []string
}

func (d driverRef) known() bool { return d.branch != 0 }

func (d driverRef) describe() string {
	if d.exact != nil {
		if d.origin != "" {
			return fmt.Sprintf("driver %s (%s)", d.raw, d.origin)
		}
		return "driver " + d.raw
	}
	return fmt.Sprintf("driver branch R%d (%s)", d.branch, d.origin)
}

func isGKEKeyword(s string) bool {
	switch s {
	case gkeDefault, gkeLatest, gkeDisabled, gkeUnspecified:
		return true
	}
	return false
}

func (v *validator) resolvePool(i int) *poolCtx {
	p := &v.s.NodePools[i]
	pc := &poolCtx{i: i, p: p, path: spec.PoolPath(i)}
	if v.k8s != nil {
		pc.k8s = v.k8s.String()
	}

	// Machine types.
	if p.MachineType != "" {
		pc.machines = append(pc.machines, resolvedMachine{name: p.MachineType, path: pc.f(".machineType")})
	}
	for j, t := range p.InstanceTypes {
		pc.machines = append(pc.machines, resolvedMachine{name: t, path: fmt.Sprintf("%s.instanceTypes[%d]", pc.path, j)})
	}
	for k := range pc.machines {
		rm := &pc.machines[k]
		rm.m, rm.ok = LookupMachine(v.s.Provider, rm.name)
		if rm.ok && pc.machine == nil {
			m := rm.m
			pc.machine = &m
		}
	}

	// GPU: gpu.type if it names one, else the machine type's.
	if p.GPU.Type != "" {
		if g, ok := LookupGPU(p.GPU.Type); ok {
			pc.gpu, pc.gpuPath = &g, pc.f(".gpu.type")
		}
	}
	if pc.gpu == nil && pc.machine != nil && pc.machine.GPU != "" {
		g := productOf(v.c.products[pc.machine.GPU], v.c)
		pc.gpu = &g
		pc.gpuPath = pc.machines[0].path
		for _, rm := range pc.machines {
			if rm.ok {
				pc.gpuPath = rm.path
				break
			}
		}
	}

	// Image.
	if v.eks() {
		pc.ami = v.c.amis[p.OSImage]
	}
	if v.gke() {
		pc.cos = p.OSImage == "COS_CONTAINERD" || p.OSImage == "" // COS is GKE's default image
		pc.ubuntu = p.OSImage == "UBUNTU_CONTAINERD"
	}

	// CUDA.
	pc.cuda, pc.cudaPath = v.s.CUDA, "spec.cuda"
	if p.CUDA != "" {
		pc.cuda, pc.cudaPath = p.CUDA, pc.f(".cuda")
	}

	// Device plugin.
	pc.dp, pc.dpPath, pc.dpSet = v.s.Addons.DevicePlugin, "spec.addons.devicePlugin.provider", v.s.Addons.DevicePlugin.Provider != ""
	if p.DevicePlugin != nil {
		pc.dp, pc.dpPath, pc.dpSet = *p.DevicePlugin, pc.f(".devicePlugin.provider"), p.DevicePlugin.Provider != ""
	}

	pc.operatorDriver = OperatorDriverOn(v.s, p) // driver.enabled unset: the chart default (on)
	pc.operatorKMT = v.s.Addons.GPUOperator.Driver.KernelModuleType
	v.resolveDriver(pc)
	return pc
}

// resolveDriver works out which driver the pool's nodes run: the exact
// gpu.driver, the GPU Operator's driver, or the image's.
func (v *validator) resolveDriver(pc *poolCtx) {
	d := pc.p.GPU.Driver
	op := v.s.Addons.GPUOperator
	switch {
	case isGKEKeyword(d):
		pc.gkeDriver = d
	case d != "":
		if x, err := ParseVersion(d); err == nil {
			pc.exact = x
			pc.driver = driverRef{raw: d, exact: x, branch: x.Major(), path: pc.f(".gpu.driver")}
			return
		}
	}
	if v.gke() {
		v.resolveGKEInstall(pc)
		if !pc.operatorDriver {
			v.resolveGKEDriver(pc)
			return
		}
	}
	if pc.operatorDriver {
		if op.Driver.Version != "" {
			if x, err := ParseVersion(op.Driver.Version); err == nil {
				pc.driver = driverRef{raw: op.Driver.Version, exact: x, branch: x.Major(),
					path: "spec.addons.gpuOperator.driver.version", origin: "installed by the GPU Operator"}
			}
			return
		}
		if r := v.operatorRelease(); r != nil && r.DefaultDriver != "" {
			x := MustVersion(r.DefaultDriver)
			pc.driver = driverRef{raw: r.DefaultDriver, exact: x, branch: x.Major(),
				path: "spec.addons.gpuOperator.driver.version", origin: "GPU Operator " + r.Version + " default"}
		}
		return
	}
	if a := pc.ami; a != nil && a.ShipsDriver {
		switch {
		case a.Driver != "":
			x := MustVersion(a.Driver)
			pc.driver = driverRef{raw: a.Driver, exact: x, branch: x.Major(), path: pc.f(".osImage"),
				origin: a.Name + " AMI, final release"}
		case a.DriverCurrent != "" && pc.p.ReleaseVersion == "":
			x := MustVersion(a.DriverCurrent)
			pc.driver = driverRef{raw: a.DriverCurrent, exact: x, branch: x.Major(), path: pc.f(".osImage"),
				origin: fmt.Sprintf("the newest %s release as of %s ships it; set releaseVersion to pin another", a.Name, a.AsOf)}
		case a.DriverBranch != 0:
			pc.driver = driverRef{branch: a.DriverBranch, path: pc.f(".osImage"),
				origin: fmt.Sprintf("shipped by %s as of %s", a.Name, a.AsOf)}
		}
	}
}

// operatorRelease returns the facts of the configured GPU Operator version,
// or nil.
func (v *validator) operatorRelease() *operatorFact {
	return v.c.operatorRelease(v.s.Addons.GPUOperator.Version)
}

func (c *catalog) operatorRelease(version string) *operatorFact {
	x, err := ParseVersion(version)
	if err != nil {
		return nil
	}
	for i := range c.operator.GPUOperator.Releases {
		r := &c.operator.GPUOperator.Releases[i]
		if r.version.Compare(x) == 0 {
			return r
		}
	}
	return nil
}

// operatorRange returns the validated Kubernetes range of an Operator
// release (CSP range when csp and known), inheriting from the newest
// earlier release of the same YY.MM line when the release has none.
func (c *catalog) operatorRange(version string, csp bool) (lo, hi Version, from string, ok bool) {
	x, err := ParseVersion(version)
	if err != nil {
		return nil, nil, "", false
	}
	var best *operatorFact
	for i := range c.operator.GPUOperator.Releases {
		r := &c.operator.GPUOperator.Releases[i]
		if len(r.version) < 2 || len(x) < 2 || r.version[0] != x[0] || r.version[1] != x[1] || x.Less(r.version) {
			continue
		}
		if r.Kubernetes == "" && r.KubernetesCSP == "" {
			continue
		}
		best = r
	}
	if best == nil {
		return nil, nil, "", false
	}
	rg := best.Kubernetes
	if csp && best.KubernetesCSP != "" {
		rg = best.KubernetesCSP
	}
	lo, hi, _ = parseRange(rg)
	return lo, hi, best.Version, true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
