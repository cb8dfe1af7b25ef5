package matrix

import (
	"fmt"
	"time"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// PoolFacts is what the matrix resolves about one node pool of a resolved
// spec: its machine types, GPU, image, driver, CUDA version and device
// plugin. The validation rules judge it; plan reads its driver
// (PoolDriver). Paths are spec field paths ("spec.nodePools[0].gpu.type").
type PoolFacts struct {
	Index int
	Pool  *spec.NodePool
	Path  string // spec.nodePools[i]

	// Machines are the pool's machine type and instance types, in order.
	Machines []ResolvedMachine
	// Machine is the first one the matrix knows; nil when none.
	Machine *Machine

	// GPU is the product gpu.type names, else the machine type's; nil when
	// neither is known. GPUPath is the field it comes from.
	GPU     *GPUProduct
	GPUPath string

	AMI *AMIFact // EKS: the osImage's AMI type, nil when unknown
	// Release is what the matrix knows of the pool's releaseVersion on
	// that AMI type (LookupAMIRelease); nil without a releaseVersion or a
	// known AMI type.
	Release *ReleaseLookup
	COS     bool // GKE COS image (COS is GKE's default)
	Ubuntu  bool // GKE Ubuntu image

	// GKEDriver is the GKE keyword in gpu.driver, if any; Exact the
	// version gpu.driver pins, nil when it pins none.
	GKEDriver string
	Exact     Version
	// Driver is what is known of the driver the pool's nodes run.
	Driver DriverRef

	// CUDA is the pool's CUDA version (nodePools[].cuda, else spec.cuda)
	// and CUDAPath its field.
	CUDA, CUDAPath string

	// DevicePlugin is the pool's device plugin (its own, else the
	// cluster's); DevicePluginSet says a provider was written.
	DevicePlugin     spec.DevicePlugin
	DevicePluginPath string
	DevicePluginSet  bool

	// K8s is the cluster's Kubernetes minor version ("1.33"), "" when
	// unknown.
	K8s string

	// GKEInstall is what GKE itself installs on the pool: GKEDriverDefault,
	// GKEDriverLatest, GKEInstallNone, or GKEInstallUnknown (it depends on
	// a version the spec does not give). Empty off GKE.
	GKEInstall string
	// GKEUnsetWhy explains what an unset gpu.driver means here, for
	// messages.
	GKEUnsetWhy string
	// GKEDriverNote says why the driver GKE installs cannot be judged
	// ("GKE's GPU driver table has no row for GKE 1.35, so the driver
	// LATEST installs"); GKEDriverSources back it.
	GKEDriverNote string
	// GKEDriverBeyond: the cluster's GKE minor is newer than GKE's driver
	// table's newest row (the note says so); a gap inside the table is not.
	GKEDriverBeyond  bool
	GKEDriverSources []string

	OperatorDriver bool   // the GPU Operator installs the driver here
	OperatorKMT    string // its driver.kernelModuleType
}

// Field returns the path of a field of the pool (suffix ".gpu.type").
func (pf *PoolFacts) Field(suffix string) string { return pf.Path + suffix }

// Training reports whether the pool's role is training.
func (pf *PoolFacts) Training() bool { return pf.Pool.Role == "training" }

// ResolvedMachine is one of a pool's machine/instance types.
type ResolvedMachine struct {
	Name    string
	Path    string
	Machine Machine // the matrix's facts, when Known
	Known   bool
}

// AMIFact is an EKS AMI type's facts (data/aws.yaml).
type AMIFact = amiFact

// EndOfSupportDate is EndOfSupport parsed; zero when none.
func (a *amiFact) EndOfSupportDate() time.Time { return a.endOfSupport }

// DriverRef is what is known of the driver a pool's nodes run.
type DriverRef struct {
	Raw    string  // as written, or the fact's version
	Exact  Version // nil when only the branch is known
	Branch int     // 0 when unknown
	Path   string  // the field to change
	Origin string  // where it comes from, for messages
	// Fix and Sources replace the generic advice of driver findings where
	// the driver comes from a platform default (GKE's DEFAULT branch).
	Fix     string
	Sources []string
}

// Known reports whether the driver's branch is known.
func (d DriverRef) Known() bool { return d.Branch != 0 }

// Describe names the driver for messages ("driver 580.95.05 (installed by
// the GPU Operator)", "driver branch R570 (...)").
func (d DriverRef) Describe() string {
	if d.Exact != nil {
		if d.Origin != "" {
			return fmt.Sprintf("driver %s (%s)", d.Raw, d.Origin)
		}
		return "driver " + d.Raw
	}
	return fmt.Sprintf("driver branch R%d (%s)", d.Branch, d.Origin)
}

// poolResolver resolves the pools of one spec.
type poolResolver struct {
	c   *catalog
	s   *spec.Spec
	gke gkeVersion
}

// ResolvePool resolves pool i of cs (a resolved spec, see
// spec.Document.Resolve) against the matrix.
func ResolvePool(cs *spec.ClusterSpec, i int) PoolFacts {
	r := &poolResolver{c: cat(), s: &cs.Spec, gke: clusterGKEVersion(cs.Spec.KubernetesVersion)}
	return r.resolve(i)
}

func (r *poolResolver) resolve(i int) PoolFacts {
	s := r.s
	p := &s.NodePools[i]
	pf := PoolFacts{Index: i, Pool: p, Path: spec.PoolPath(i)}
	if r.gke.minor != nil {
		pf.K8s = r.gke.minor.String()
	}
	r.resolveMachines(&pf)
	r.resolveGPU(&pf)
	switch s.Provider {
	case spec.ProviderEKS:
		pf.AMI = r.c.amis[p.OSImage]
		if pf.AMI != nil && p.ReleaseVersion != "" {
			l := LookupAMIRelease(pf.AMI.Name, p.ReleaseVersion)
			pf.Release = &l
		}
	case spec.ProviderGKE:
		pf.COS = p.OSImage == "COS_CONTAINERD" || p.OSImage == "" // COS is GKE's default image
		pf.Ubuntu = p.OSImage == "UBUNTU_CONTAINERD"
	}
	pf.CUDA, pf.CUDAPath = s.CUDA, "spec.cuda"
	if p.CUDA != "" {
		pf.CUDA, pf.CUDAPath = p.CUDA, pf.Field(".cuda")
	}
	pf.DevicePlugin, pf.DevicePluginPath, pf.DevicePluginSet = s.Addons.DevicePlugin, "spec.addons.devicePlugin.provider", s.Addons.DevicePlugin.Provider != ""
	if p.DevicePlugin != nil {
		pf.DevicePlugin, pf.DevicePluginPath, pf.DevicePluginSet = *p.DevicePlugin, pf.Field(".devicePlugin.provider"), p.DevicePlugin.Provider != ""
	}
	pf.OperatorDriver = OperatorDriverOn(s, p) // driver.enabled unset: the chart default (on)
	pf.OperatorKMT = s.Addons.GPUOperator.Driver.KernelModuleType
	r.resolveDriver(&pf)
	return pf
}

// resolveMachines looks up the pool's machine types.
func (r *poolResolver) resolveMachines(pf *PoolFacts) {
	p := pf.Pool
	if p.MachineType != "" {
		pf.Machines = append(pf.Machines, ResolvedMachine{Name: p.MachineType, Path: pf.Field(".machineType")})
	}
	for j, t := range p.InstanceTypes {
		pf.Machines = append(pf.Machines, ResolvedMachine{Name: t, Path: fmt.Sprintf("%s.instanceTypes[%d]", pf.Path, j)})
	}
	for k := range pf.Machines {
		rm := &pf.Machines[k]
		rm.Machine, rm.Known = LookupMachine(r.s.Provider, rm.Name)
		if rm.Known && pf.Machine == nil {
			m := rm.Machine
			pf.Machine = &m
		}
	}
}

// resolveGPU: gpu.type if it names one, else the machine type's.
func (r *poolResolver) resolveGPU(pf *PoolFacts) {
	if t := pf.Pool.GPU.Type; t != "" {
		if g, ok := LookupGPU(t); ok {
			pf.GPU, pf.GPUPath = &g, pf.Field(".gpu.type")
			return
		}
	}
	if pf.Machine == nil || pf.Machine.GPU == "" {
		return
	}
	g := productOf(r.c.products[pf.Machine.GPU], r.c)
	pf.GPU = &g
	pf.GPUPath = pf.Machines[0].Path
	for _, rm := range pf.Machines {
		if rm.Known {
			pf.GPUPath = rm.Path
			break
		}
	}
}

// resolveDriver works out which driver the pool's nodes run: the exact
// gpu.driver, the GPU Operator's driver, or the image's.
func (r *poolResolver) resolveDriver(pf *PoolFacts) {
	switch d := pf.Pool.GPU.Driver; {
	case IsGKEDriverKeyword(d):
		pf.GKEDriver = d
	case d != "":
		if x, err := ParseVersion(d); err == nil {
			pf.Exact = x
			pf.Driver = DriverRef{Raw: d, Exact: x, Branch: x.Major(), Path: pf.Field(".gpu.driver")}
			return
		}
	}
	if r.s.Provider == spec.ProviderGKE {
		r.resolveGKEInstall(pf)
		if !pf.OperatorDriver {
			r.resolveGKEDriver(pf)
			return
		}
	}
	if pf.OperatorDriver {
		pf.Driver = r.operatorDriver()
		return
	}
	if a := pf.AMI; a != nil && a.ShipsDriver {
		pf.Driver = amiDriver(a, pf)
	}
}

// operatorDriver is the driver the GPU Operator installs: the spec's
// driver.version, else the release's default; zero when neither is known.
func (r *poolResolver) operatorDriver() DriverRef {
	const path = "spec.addons.gpuOperator.driver.version"
	op := r.s.Addons.GPUOperator
	if op.Driver.Version != "" {
		if x, err := ParseVersion(op.Driver.Version); err == nil {
			return DriverRef{Raw: op.Driver.Version, Exact: x, Branch: x.Major(), Path: path, Origin: "installed by the GPU Operator"}
		}
		return DriverRef{}
	}
	if rel := r.c.operatorRelease(op.Version); rel != nil && rel.DefaultDriver != "" {
		x := MustVersion(rel.DefaultDriver)
		return DriverRef{Raw: rel.DefaultDriver, Exact: x, Branch: x.Major(), Path: path, Origin: "GPU Operator " + rel.Version + " default"}
	}
	return DriverRef{}
}

// amiDriver is the driver an EKS AMI type that ships one runs: the
// pinned release's (amis.yaml) where the pool pins a release the table
// knows, else the AMI type's.
func amiDriver(a *amiFact, pf *PoolFacts) DriverRef {
	path := pf.Field(".osImage")
	if d, ok := releaseDriver(a, pf); ok {
		return d
	}
	switch {
	case a.Driver != "":
		x := MustVersion(a.Driver)
		return DriverRef{Raw: a.Driver, Exact: x, Branch: x.Major(), Path: path, Origin: a.Name + " AMI, final release"}
	case a.DriverCurrent != "" && pf.Pool.ReleaseVersion == "":
		x := MustVersion(a.DriverCurrent)
		return DriverRef{Raw: a.DriverCurrent, Exact: x, Branch: x.Major(), Path: path,
			Origin: fmt.Sprintf("the newest %s release as of %s ships it; set releaseVersion to pin another", a.Name, a.AsOf)}
	case a.DriverBranch != 0:
		return DriverRef{Branch: a.DriverBranch, Path: path, Origin: fmt.Sprintf("shipped by %s as of %s", a.Name, a.AsOf)}
	}
	return DriverRef{}
}

// releaseDriver is the driver of the release the pool pins
// (releaseVersion), when the release table knows it and the driver it
// ships: for the cluster's Kubernetes minor where the release has a row
// per minor (Bottlerocket), else its first row with a driver.
func releaseDriver(a *amiFact, pf *PoolFacts) (DriverRef, bool) {
	l := pf.Release
	if l == nil || l.Status != ReleaseKnown {
		return DriverRef{}, false
	}
	for _, sameMinor := range []bool{true, false} {
		for _, r := range l.Releases {
			x, err := ParseVersion(r.Driver)
			if err == nil && (!sameMinor || r.Kubernetes == pf.K8s) {
				return DriverRef{Raw: r.Driver, Exact: x, Branch: x.Major(), Path: pf.Field(".releaseVersion"),
					Origin: fmt.Sprintf("%s release %s", a.Name, pf.Pool.ReleaseVersion), Sources: []string{r.Source}}, true
			}
		}
	}
	return DriverRef{}, false
}

// Driver owners: who installs the NVIDIA driver on a pool's nodes.
const (
	DriverOwnerGKE         = "gke"          // GKE's driver installation (DEFAULT, LATEST)
	DriverOwnerGPUOperator = "gpu-operator" // the GPU Operator's driver container
	DriverOwnerAMI         = "ami"          // the EKS AMI type ships it
	DriverOwnerNone        = "none"         // nothing in the spec installs one
	DriverOwnerUnknown     = "unknown"      // it depends on a version the spec does not give
)

// PoolDriverFacts are what the matrix resolves about the driver of one
// node pool: the same resolution the driver rules judge (ResolvePool), so
// that plan and validate say the same thing.
type PoolDriverFacts struct {
	// Owner is DriverOwnerGKE, DriverOwnerGPUOperator, DriverOwnerAMI,
	// DriverOwnerNone or DriverOwnerUnknown.
	Owner string
	// Version is the exact driver when it is known ("580.95.05"); Branch
	// its major (580), also when only the branch is known; 0 unknown.
	Version string
	Branch  int
	// Origin says where the driver comes from ("GKE 1.33 DEFAULT on COS",
	// "installed by the GPU Operator", "AL2023_x86_64_NVIDIA AMI ...").
	Origin string
	// Path is the spec field that decides it.
	Path string
	// Note says why the driver cannot be told, when it cannot.
	Note string
}

// PoolDriver resolves the driver of pool i of cs (a resolved spec).
func PoolDriver(cs *spec.ClusterSpec, i int) PoolDriverFacts {
	pf := ResolvePool(cs, i)
	out := PoolDriverFacts{Version: pf.Driver.Raw, Branch: pf.Driver.Branch, Origin: pf.Driver.Origin, Path: pf.Driver.Path, Note: pf.GKEDriverNote}
	if pf.Driver.Exact == nil {
		out.Version = ""
	}
	out.Owner = driverOwner(cs.Spec.Provider, &pf)
	if out.Owner == DriverOwnerUnknown {
		out.Note = pf.GKEUnsetWhy
	}
	if out.Path == "" {
		out.Path = pf.Field(".gpu.driver")
	}
	return out
}

// driverOwner says who installs the driver of a resolved pool.
func driverOwner(provider string, pf *PoolFacts) string {
	switch {
	case pf.OperatorDriver:
		return DriverOwnerGPUOperator
	case provider == spec.ProviderGKE:
		switch pf.GKEInstall {
		case gkeDefault, gkeLatest:
			return DriverOwnerGKE
		case gkeUnknownInstall:
			return DriverOwnerUnknown
		}
		return DriverOwnerNone
	case pf.AMI != nil && pf.AMI.ShipsDriver:
		return DriverOwnerAMI
	}
	return DriverOwnerNone
}

// NCCLTransport is the network NCCL uses between a pool's nodes.
type NCCLTransport struct {
	// Fabric is the machine type's GPU network (FabricNone, FabricEFA,
	// FabricTCPX, FabricTCPXO, FabricRoCE); "" when the machine type is
	// not in the matrix.
	Fabric string
	// Network names it for people ("GPUDirect-TCPXO", "TCP sockets").
	Network string
	// Plugin is the NCCL net plugin the spec names (nccl.plugin, or gib
	// where NCCL_NET=gIB selects it on GKE); "" for none.
	Plugin string
	// EnvPlugin is the plugin the pool's NCCL variables configure on GKE
	// (NCCL_GPUDIRECTTCPX_*: tcpx) when nccl.plugin names none; NCCL reads
	// them only when that plugin is in the images.
	EnvPlugin string
	// Want is the plugin the fabric needs ("tcpxo", "aws-ofi-nccl"); "" when none.
	Want string
}

// PoolNCCLTransport returns the NCCL transport of pool p of s, from the
// machine catalogue's fabric and the spec's NCCL settings.
func PoolNCCLTransport(s *spec.Spec, p *spec.NodePool) NCCLTransport {
	out := NCCLTransport{Plugin: p.NCCL.Plugin}
	for _, mt := range p.MachineTypes() {
		if m, ok := LookupMachine(s.Provider, mt); ok {
			out.Fabric = m.Fabric
			break
		}
	}
	if out.Plugin == "" && s.Provider == spec.ProviderGKE {
		// A plugin's own variables (NCCL_GPUDIRECTTCPX_*, NCCL_FASTRAK_*)
		// configure it but do not install it: they name the transport
		// configured, not a plugin present. NCCL_NET=gIB selects the gIB net.
		switch implied, key := ImpliedGCPPlugin(p.NCCL.Env); {
		case implied == "":
		case key != "NCCL_NET":
			out.EnvPlugin = implied
		case out.Fabric == FabricRoCE:
			out.Plugin = implied
		}
	}
	switch out.Fabric {
	case "":
	case FabricNone:
		out.Network = "TCP sockets (no GPU network)"
	default:
		out.Network = ncclFabricName[out.Fabric]
	}
	out.Want = gcpPluginFor[out.Fabric]
	if out.Fabric == FabricEFA {
		out.Want = "aws-ofi-nccl"
	}
	return out
}

// operatorRelease returns the facts of GPU Operator version, or nil.
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
