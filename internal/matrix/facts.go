package matrix

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agnivade/levenshtein"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// Fabric names: the GPU network of a machine type that NCCL should use.
const (
	FabricNone  = "none"  // no GPU network: TCP sockets over the primary NIC
	FabricEFA   = "efa"   // AWS Elastic Fabric Adapter (aws-ofi-nccl)
	FabricTCPX  = "tcpx"  // GCP GPUDirect-TCPX (A3 High/Edge)
	FabricTCPXO = "tcpxo" // GCP GPUDirect-TCPXO (A3 Mega)
	FabricRoCE  = "roce"  // GPUDirect RDMA over RoCE (GCP A3 Ultra, A4, A4X; gIB)
)

// GPUProduct is one NVIDIA GPU product as the matrix knows it.
type GPUProduct struct {
	// ID is the matrix's product ID, e.g. "H100-SXM", "A10G", "L4".
	ID string `json:"id"`
	// Name is NVIDIA's product name.
	Name string `json:"name"`
	// Family groups variants ("A100" for A100-40GB and A100-80GB).
	Family string `json:"family,omitempty"`
	// Arch is the architecture: Kepler ... Hopper, Blackwell.
	Arch string `json:"arch,omitempty"`
	// ComputeCapability is "major.minor", e.g. "9.0".
	ComputeCapability string `json:"computeCapability,omitempty"`
	// MemoryGiB is the memory of one GPU.
	MemoryGiB int `json:"memoryGiB,omitempty"`
	// DataCenter is true for NVIDIA data-center products (forward
	// compatibility applies to them, not to GeForce).
	DataCenter bool `json:"dataCenter,omitempty"`
	// MIG is true when the product supports Multi-Instance GPU.
	MIG bool `json:"mig,omitempty"`
	// MIGProfiles are the MIG profile names (e.g. "1g.10gb"); empty when
	// not captured.
	MIGProfiles []string `json:"migProfiles,omitempty"`
	// MIGInstances is, per profile of MIGProfiles, how many instances one
	// GPU holds when partitioned into that profile alone; a profile whose
	// count is not captured is absent.
	MIGInstances map[string]int `json:"migInstances,omitempty"`
	// MIGMinDriver is the minimum driver for MIG, when documented.
	MIGMinDriver string `json:"migMinDriver,omitempty"`
	// OpenModulesOnly is true when only the open GPU kernel modules support
	// the product (Blackwell, GH200).
	OpenModulesOnly bool `json:"openModulesOnly,omitempty"`
	// HostArch is the CPU architecture of the host ("arm64" for Grace
	// superchips), empty when any.
	HostArch string `json:"hostArch,omitempty"`
	// MinCUDA is the first CUDA toolkit that targets the product.
	MinCUDA string `json:"minCUDA,omitempty"`
	// MaxCUDA is the last toolkit major.minor that targets it (its
	// architecture was removed after), empty while supported.
	MaxCUDA string `json:"maxCUDA,omitempty"`
	// MinDriverBranch is the first driver branch (570 = R570) supporting
	// it; 0 where NVIDIA documents none.
	MinDriverBranch int `json:"minDriverBranch,omitempty"`
	// MinDriver is an exact minimum driver where documented ("570.133.20").
	MinDriver string `json:"minDriver,omitempty"`
	// LastDriverBranch is the last driver branch supporting it (470 for
	// Kepler, 580 for Maxwell/Pascal/Volta); 0 while supported.
	LastDriverBranch int      `json:"lastDriverBranch,omitempty"`
	Aliases          []string `json:"aliases,omitempty"`
	Notes            []string `json:"notes,omitempty"`
	Source           string   `json:"source"`
	AsOf             string   `json:"asOf"`
}

// Machine is one GKE machine type or EKS instance type with GPUs.
type Machine struct {
	// Provider is gke or eks.
	Provider string `json:"provider"`
	Name     string `json:"name"`
	// Series is the machine series or instance family ("A3", "N1", "p5").
	Series string `json:"series,omitempty"`
	// AcceleratorType is the GKE accelerator name ("nvidia-h100-80gb");
	// empty on EKS and for N1, where GPUs are attached.
	AcceleratorType string `json:"acceleratorType,omitempty"`
	// GPU is the product ID (see LookupGPU); empty for N1.
	GPU string `json:"gpu,omitempty"`
	// GPUCount is GPUs per machine; 0 for N1 (attached), fractional types
	// and families whose sizes are unknown.
	GPUCount int `json:"gpuCount,omitempty"`
	// GPUFraction is the share of one GPU for fractional types (0.125 ...).
	GPUFraction float64 `json:"gpuFraction,omitempty"`
	// GPUMemoryGiB is total GPU memory as the cloud reports it (EKS).
	GPUMemoryGiB float64 `json:"gpuMemoryGiB,omitempty"`
	// Arch is the host CPU architecture: amd64 or arm64.
	Arch string `json:"arch,omitempty"`
	// EFA is true when the instance type supports EFA.
	EFA bool `json:"efa,omitempty"`
	// NetworkCards is the number of network cards (one EFA interface each).
	NetworkCards int `json:"networkCards,omitempty"`
	// Fabric is the GPU network NCCL should use (FabricNone, FabricEFA, ...).
	Fabric string `json:"fabric,omitempty"`
	// NICs is the network interfaces of a GKE node (eth0 ...) where the type
	// has more than one; RDMANICs its RDMA NICs (mlx5_0 ...). 0 where not
	// captured.
	NICs     int `json:"nics,omitempty"`
	RDMANICs int `json:"rdmaNICs,omitempty"`
	// Attachable maps GKE accelerator types to the counts an N1 machine
	// accepts.
	Attachable map[string][]int `json:"attachable,omitempty"`
	// Spot is false when the type is not offered as Spot.
	Spot bool `json:"spot"`
	// MinDriverBranch / MaxDriverBranch bound the driver branch the
	// instance type supports, beyond its GPU's own limits (0 = none).
	MinDriverBranch int `json:"minDriverBranch,omitempty"`
	MaxDriverBranch int `json:"maxDriverBranch,omitempty"`
	// Family is true when the entry matched a family pattern ("g7.*")
	// whose sizes the matrix does not list.
	Family bool   `json:"family,omitempty"`
	Note   string `json:"note,omitempty"`
	Source string `json:"source"`
	AsOf   string `json:"asOf"`
}

func productOf(p *productFact, c *catalog) GPUProduct {
	g := GPUProduct{ID: p.ID, Name: p.Name, Family: p.Family, Arch: p.Arch, ComputeCapability: p.ComputeCapability,
		MemoryGiB: p.MemoryGiB, DataCenter: p.DataCenter, OpenModulesOnly: p.OpenModulesOnly, HostArch: p.HostArch,
		MinCUDA: p.MinCUDA, MinDriverBranch: p.MinDriverBranch, MinDriver: p.MinDriver,
		LastDriverBranch: p.LastDriverBranch, Aliases: append([]string(nil), p.Aliases...),
		Notes: append([]string(nil), p.Notes...), Source: p.Source, AsOf: p.AsOf}
	a := c.archs[p.Arch]
	if g.MinCUDA == "" {
		g.MinCUDA = a.FirstCUDA
	}
	if g.MinDriverBranch == 0 && !p.MinDriverUndocumented {
		g.MinDriverBranch = a.FirstDriverBranch
	}
	if a.OpenModulesOnly {
		g.OpenModulesOnly = true
	}
	for _, r := range c.cuda.ArchRemovals {
		if r.Arch == p.Arch {
			g.MaxCUDA = r.LastCUDA
			if g.LastDriverBranch == 0 {
				g.LastDriverBranch = r.LastDriverBranch
			}
		}
	}
	if p.MIG != nil {
		g.MIG = true
		for _, prof := range p.MIG.Profiles {
			g.MIGProfiles = append(g.MIGProfiles, prof.Name)
			if prof.Instances > 0 {
				if g.MIGInstances == nil {
					g.MIGInstances = map[string]int{}
				}
				g.MIGInstances[prof.Name] = prof.Instances
			}
		}
		g.MIGMinDriver = p.MIG.MinDriver
	}
	return g
}

// LookupGPU finds a GPU product by ID, name, alias, a name a tool prints
// (nvidia-smi's product name, GPU Feature Discovery's nvidia.com/gpu.product
// label, EC2's GpuInfo name; see gpus.yaml's printed) or GKE accelerator
// type, ignoring case, spaces, dashes and a leading "NVIDIA"/"Tesla": "H100",
// "nvidia-h100-80gb", "H100 SXM", "NVIDIA H100 80GB HBM3" and
// "NVIDIA-H100-80GB-HBM3" all name H100-SXM. A MIG suffix, as GFD's single
// strategy appends it ("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb") or CUDA names a
// MIG device ("NVIDIA H100 NVL MIG 3g.47gb"), names the GPU it is cut from.
func LookupGPU(name string) (GPUProduct, bool) {
	p, ok := cat().lookupGPU(name)
	if !ok {
		return GPUProduct{}, false
	}
	return productOf(p, cat()), true
}

// migSuffix matches the MIG profile GFD and CUDA append to a product name.
var migSuffix = regexp.MustCompile(`(?i)[-_ ]+MIG[-_ ]+[0-9]+g\.[0-9]+gb(\+me)?$`)

func (c *catalog) lookupGPU(name string) (*productFact, bool) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, false
	}
	if a, ok := c.accelerators[name]; ok {
		return c.products[a.GPU], true
	}
	if p, ok := c.aliases[normalizeGPU(name)]; ok {
		return p, true
	}
	if base := migSuffix.ReplaceAllString(name, ""); base != name && base != "" {
		if p, ok := c.aliases[normalizeGPU(base)]; ok {
			return p, true
		}
	}
	return nil, false
}

// gpuFamilyName returns the family a name stands for when it names a family
// of several products rather than one product: a family's own name ("A100",
// "H100") or a name a tool prints for several products of one family (EC2's
// "A100" on p4d and p4de).
func (c *catalog) gpuFamilyName(name string) (string, bool) {
	k := normalizeGPU(migSuffix.ReplaceAllString(strings.TrimSpace(name), ""))
	if f, ok := c.familyNames[k]; ok {
		return f, true
	}
	members := 0
	family := ""
	for _, p := range c.gpus.Products {
		if normalizeGPU(p.Family) == k {
			members++
			family = p.Family
		}
	}
	return family, members > 1
}

// GPUs returns every GPU product, sorted by ID.
func GPUs() []GPUProduct {
	c := cat()
	out := make([]GPUProduct, 0, len(c.products))
	for _, p := range c.gpus.Products {
		out = append(out, productOf(&p, c))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// NearestGPUs returns up to n known GPU names (product IDs and GKE
// accelerator types) closest to name.
func NearestGPUs(name string, n int) []string {
	c := cat()
	var names []string
	for _, p := range c.gpus.Products {
		names = append(names, p.ID)
		for _, a := range p.Aliases {
			if len(a) <= 12 { // short product names ("H100", "A10G"), not marketing strings
				names = append(names, a)
			}
		}
	}
	for a := range c.accelerators {
		names = append(names, a)
	}
	return nearest(name, names, n)
}

// LookupMachine finds a GKE machine type (provider "gke") or EKS instance
// type (provider "eks") with GPUs. EKS families whose sizes the matrix
// does not list (g7) match any size, with Family set.
func LookupMachine(provider, name string) (Machine, bool) {
	c := cat()
	m, ok := c.machines[provider][name]
	if ok {
		return m, true
	}
	if provider == "eks" {
		fam, size, found := strings.Cut(name, ".")
		for _, f := range c.aws.InstanceFamilies {
			if found && size != "" && fam == f.Family {
				return Machine{Provider: "eks", Name: name, Series: fam, GPU: f.GPU, Arch: f.Arch,
					MinDriverBranch: f.MinDriverBranch, Fabric: FabricNone, Spot: true, Family: true,
					Note: f.Note, Source: f.Source, AsOf: f.AsOf}, true
			}
		}
	}
	return Machine{}, false
}

// Machines returns the provider's machine types, sorted by name.
func Machines(provider string) []Machine {
	c := cat()
	out := make([]Machine, 0, len(c.machines[provider]))
	for _, m := range c.machines[provider] {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NearestMachines returns up to n known machine names of the provider
// closest to name: the closest by edit distance first, then machines with a
// GPU the name mentions, fewest GPUs first ("n1-standard-8-a100" suggests
// n1-standard-8, a2-highgpu-1g, a2-ultragpu-1g), then by edit distance.
func NearestMachines(provider, name string, n int) []string {
	c := cat()
	var names []string
	for k := range c.machines[provider] {
		names = append(names, k)
	}
	byDistance := nearest(name, names, n)
	var out []string
	if len(byDistance) > 0 && n > 0 {
		out = append(out, byDistance[0])
	}
	var preferred []Machine
	for _, tok := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '.' || r == '_' }) {
		p, ok := c.aliases[normalizeGPU(tok)]
		if !ok || len(tok) < 2 {
			continue
		}
		for _, k := range names {
			if m := c.machines[provider][k]; m.GPU != "" && c.products[m.GPU].Family == p.Family {
				preferred = append(preferred, m)
			}
		}
	}
	sort.Slice(preferred, func(i, j int) bool {
		if preferred[i].GPUCount != preferred[j].GPUCount {
			return preferred[i].GPUCount < preferred[j].GPUCount
		}
		return preferred[i].Name < preferred[j].Name
	})
	for _, m := range preferred {
		if len(out) >= min(n, 3) {
			break
		}
		if !slices.Contains(out, m.Name) {
			out = append(out, m.Name)
		}
	}
	for _, s := range byDistance {
		if len(out) >= n {
			break
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// closeEnough is the candidate nearest to s (as nearest ranks them) when it
// is within a did-you-mean distance of s (case folded: at most 2 edits, or a
// third of s), else "".
func closeEnough(s string, candidates []string) string {
	n := nearest(s, candidates, 1)
	if len(n) == 1 && levenshtein.ComputeDistance(strings.ToLower(s), strings.ToLower(n[0])) <= max(2, len(s)/3) {
		return n[0]
	}
	return ""
}

// nearest returns up to n candidates closest to s by edit distance (ties by
// name).
func nearest(s string, candidates []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	ls := strings.ToLower(s)
	var sc []scored
	for _, c := range candidates {
		d := levenshtein.ComputeDistance(ls, strings.ToLower(c))
		if strings.HasPrefix(ls, strings.ToLower(c)) || strings.HasPrefix(strings.ToLower(c), ls) {
			d -= 2 // a shared prefix is a strong hint
		}
		sc = append(sc, scored{c, d})
	}
	sort.Slice(sc, func(i, j int) bool {
		if sc[i].d != sc[j].d {
			return sc[i].d < sc[j].d
		}
		return sc[i].name < sc[j].name
	})
	var out []string
	for _, x := range sc {
		if len(out) >= n {
			break
		}
		if !slices.Contains(out, x.name) {
			out = append(out, x.name)
		}
	}
	return out
}

// DriverBranch is one NVIDIA data-center driver branch.
type DriverBranch struct {
	// Branch is the branch number (580 for R580).
	Branch int `json:"branch"`
	// Type is LTSB, PB or NFB; empty when not captured.
	Type string `json:"type,omitempty"`
	// EOL is the end-of-life month or date as published ("2026-06"), empty
	// when none (NFBs have none).
	EOL         string `json:"eol,omitempty"`
	Released    string `json:"released,omitempty"`
	LatestKnown string `json:"latestKnown,omitempty"`
	Note        string `json:"note,omitempty"`
	Source      string `json:"source"`
	AsOf        string `json:"asOf"`

	eol time.Time
}

// EndOfLife reports whether the branch is past its end of life at t.
func (b DriverBranch) EndOfLife(t time.Time) bool { return !b.eol.IsZero() && !t.Before(b.eol) }

// InSupport reports whether the branch is a production branch (LTSB or PB)
// that is not past EOL at t.
func (b DriverBranch) InSupport(t time.Time) bool {
	return (b.Type == "LTSB" || b.Type == "PB") && !b.EndOfLife(t)
}

func branchOf(b *branchFact) DriverBranch {
	return DriverBranch{Branch: b.Branch, Type: b.Type, EOL: b.EOL, Released: b.Released, LatestKnown: b.LatestKnown,
		Note: b.Note, Source: b.Source, AsOf: b.AsOf, eol: b.eol}
}

// LookupBranch returns the facts of driver branch n (580 for R580).
func LookupBranch(n int) (DriverBranch, bool) {
	b, ok := cat().branches[n]
	if !ok {
		return DriverBranch{}, false
	}
	return branchOf(b), true
}

// DriverBranches returns every known branch, oldest first.
func DriverBranches() []DriverBranch {
	c := cat()
	out := make([]DriverBranch, 0, len(c.branches))
	for _, b := range c.drivers.Branches {
		out = append(out, branchOf(&b))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Branch < out[j].Branch })
	return out
}

// CUDAToolkit answers `gpuctl matrix cuda X.Y`: what a CUDA toolkit needs.
type CUDAToolkit struct {
	// Version is the version asked for; Release names the matched release
	// ("12.2 Update 2").
	Version string `json:"version,omitempty"`
	Release string `json:"release,omitempty"`
	// MinDriver is the minimum Linux x86_64 driver for full support; empty
	// where the release notes give only a branch.
	MinDriver string `json:"minDriver,omitempty"`
	// Branch is the driver branch the release notes pair it with (0 when
	// only MinDriver is known or nothing is).
	Branch int `json:"branch"`
	// MinorCompatFloor is the minimum driver under minor-version
	// compatibility (same major family), with what does not work there.
	MinorCompatFloor  string   `json:"minorCompatFloor,omitempty"`
	MinorCompatLimits []string `json:"minorCompatLimits,omitempty"`
	// ForwardCompat lists the driver branches on which the matching
	// cuda-compat package runs (data-center GPUs, LTSB/PB branches in
	// support); NativeBranch is the first branch that runs it natively.
	ForwardCompat []int    `json:"forwardCompat,omitempty"`
	NativeBranch  int      `json:"nativeBranch,omitempty"`
	Notes         []string `json:"notes,omitempty"`
	Sources       []string `json:"sources,omitempty"`
	AsOf          string   `json:"asOf"`
}

// CUDAFacts returns what the matrix knows about CUDA toolkit version
// ("12.4", "12.2.2", "11.0.2"). Errors: an unparseable version, a version
// that was never released (12.7), or one the matrix does not know.
func CUDAFacts(version string) (CUDAToolkit, error) {
	c := cat()
	r := c.resolveCUDA(version)
	switch {
	case r.err != nil:
		return CUDAToolkit{}, r.err
	case r.nonexistent:
		if r.tk != nil && r.tk.Note != "" {
			return CUDAToolkit{}, errors.New(lowerFirst(r.tk.Note)) // the note says it was never released
		}
		return CUDAToolkit{}, fmt.Errorf("CUDA %s was never released", version)
	case r.tk == nil:
		return CUDAToolkit{}, fmt.Errorf("CUDA %s is not in the matrix (newest known: %s)", version, c.newestCUDA().Release)
	}
	t := r.tk
	out := CUDAToolkit{Version: version, Release: t.Release, MinDriver: t.MinDriver, Branch: t.Branch,
		Sources: t.sources(), AsOf: t.AsOf}
	if t.Note != "" {
		out.Notes = append(out.Notes, t.Note)
	}
	if r.fallback {
		out.Notes = append(out.Notes, fmt.Sprintf("%s is not in the matrix; facts of %s (the newest known release of %d.%d) are shown, and a later update may need a newer driver.", version, t.Release, r.v[0], minor(r.v)))
	}
	if f := c.family(r.v.Major()); f != nil {
		out.MinorCompatFloor = f.Floor
		out.MinorCompatLimits = append([]string(nil), c.cuda.MinorCompat.Limitations...)
		out.Sources = appendUnique(out.Sources, c.cuda.MinorCompat.Source)
	}
	if p := c.compatPackage(r.v); p != nil {
		out.ForwardCompat = append([]int(nil), p.RunsOn...)
		out.NativeBranch = p.Native
		out.Sources = appendUnique(out.Sources, c.cuda.Forward.Source)
		out.Notes = append(out.Notes, "Forward compatibility (cuda-compat-"+strings.ReplaceAll(p.CUDA, ".", "-")+"): "+c.cuda.Forward.AppliesTo+" "+strings.Join(c.cuda.Forward.Rules, " "))
	}
	return out, nil
}

func minor(v Version) int {
	if len(v) < 2 {
		return 0
	}
	return v[1]
}

func appendUnique(list []string, s ...string) []string {
	for _, x := range s {
		if x != "" && !slices.Contains(list, x) {
			list = append(list, x)
		}
	}
	return list
}

type cudaResolution struct {
	v           Version
	tk          *toolkitFact
	nonexistent bool // a release that never existed (12.7)
	fallback    bool // X.Y.Z unknown; tk is the newest known release of X.Y
	unknown     bool // newer (or older) than anything the matrix knows
	err         error
}

// resolveCUDA maps a spec CUDA version to a toolkit release: "X.Y" is X.Y
// GA; "X.Y.Z" matches the release numbers NVIDIA ships (never arithmetic).
func (c *catalog) resolveCUDA(s string) cudaResolution {
	v, err := ParseVersion(s)
	if err != nil {
		return cudaResolution{err: fmt.Errorf("CUDA version %q: %w", s, err)}
	}
	if len(v) < 2 {
		return cudaResolution{v: v, err: fmt.Errorf("CUDA version %q needs major.minor, e.g. \"12.4\"", s)}
	}
	r := cudaResolution{v: v}
	var sameMinor []*toolkitFact
	for i := range c.cuda.Toolkits {
		t := &c.cuda.Toolkits[i]
		if t.version[0] != v[0] || minor(t.version) != v[1] {
			continue
		}
		if !t.exists() {
			r.tk, r.nonexistent = t, true
			return r
		}
		sameMinor = append(sameMinor, t)
		if len(v) == 2 && t.GA {
			r.tk = t
			return r
		}
		if len(v) > 2 {
			if t.version.Compare(v) == 0 {
				r.tk = t
				return r
			}
			for _, a := range t.aliases {
				if a.Compare(v) == 0 {
					r.tk = t
					return r
				}
			}
		}
	}
	if len(sameMinor) > 0 {
		// An update release the table does not list: judge against the
		// newest known release of that minor, and say so.
		newest := sameMinor[0]
		for _, t := range sameMinor {
			if newest.version.Less(t.version) {
				newest = t
			}
		}
		r.tk, r.fallback = newest, true
		return r
	}
	newest := c.newestCUDA()
	if newest.version.Less(v) && (v[0] > newest.version[0] || v[1] > minor(newest.version)) {
		r.unknown = true
		return r
	}
	if v.Less(c.cuda.Toolkits[0].version) {
		r.unknown = true // older than the matrix goes back
		return r
	}
	r.nonexistent = true
	return r
}

func (c *catalog) newestCUDA() *toolkitFact {
	var n *toolkitFact
	for i := range c.cuda.Toolkits {
		t := &c.cuda.Toolkits[i]
		if t.exists() && (n == nil || n.version.Less(t.version)) {
			n = t
		}
	}
	return n
}

// CompatFloor is the minimum driver on which every toolkit of one CUDA major
// version runs under minor-version compatibility (PTX JIT aside).
type CompatFloor struct {
	// Major is the CUDA major version (12).
	Major int `json:"major"`
	// Floor is the driver ("525.60.13").
	Floor string `json:"floor"`
}

// MinorCompatFloors returns the minor-version compatibility floors of every
// CUDA major version the matrix knows, ascending by major, with the source
// and date of the facts.
func MinorCompatFloors() (floors []CompatFloor, source, asOf string) {
	c := cat()
	for _, f := range c.cuda.MinorCompat.Families {
		floors = append(floors, CompatFloor{Major: f.Major, Floor: f.Floor})
	}
	sort.Slice(floors, func(i, j int) bool { return floors[i].Major < floors[j].Major })
	return floors, c.cuda.MinorCompat.Source, c.cuda.MinorCompat.AsOf
}

func (c *catalog) family(major int) *minorFamily {
	for i := range c.cuda.MinorCompat.Families {
		if c.cuda.MinorCompat.Families[i].Major == major {
			return &c.cuda.MinorCompat.Families[i]
		}
	}
	return nil
}

func (c *catalog) compatPackage(v Version) *compatPackages {
	for i := range c.cuda.Forward.Packages {
		p := &c.cuda.Forward.Packages[i]
		if p.cuda[0] == v[0] && minor(p.cuda) == minor(v) {
			return p
		}
	}
	return nil
}

// NCCLBaselineFact is a healthy all_reduce_perf bus bandwidth for a node
// type, at large message sizes (>= 1-8 GB), and the acceptance minimum of
// that node type.
type NCCLBaselineFact struct {
	// ID names the baseline ("H100-SXM-8"; "H100-SXM-8-RING" for the figure
	// with a non-default algorithm).
	ID string `json:"id"`
	// GPU is the product ID; GPUs the GPUs per node it was measured on.
	GPU  string `json:"gpu,omitempty"`
	GPUs int    `json:"gpus,omitempty"`
	// MinBusBandwidthGBps and MaxBusBandwidthGBps bound the healthy busbw
	// in GB/s with Algo.
	MinBusBandwidthGBps float64 `json:"minBusBandwidthGBps,omitempty"`
	MaxBusBandwidthGBps float64 `json:"maxBusBandwidthGBps,omitempty"`
	// Algo is the NCCL algorithm the range assumes ("NVLS (default)",
	// "RING"; "default" where the figure does not say).
	Algo string `json:"algo,omitempty"`
	// AcceptanceMinBusBandwidthGBps is the minimum `gpuctl accept` judges
	// the node type against, and AcceptanceAlgo the algorithm whose figure
	// it is derived from (90% of RING's ~370 GB/s on 8x H100 SXM: 333).
	AcceptanceMinBusBandwidthGBps float64  `json:"acceptanceMinBusBandwidthGBps,omitempty"`
	AcceptanceAlgo                string   `json:"acceptanceAlgo,omitempty"`
	Confidence                    string   `json:"confidence,omitempty"`
	Note                          string   `json:"note,omitempty"`
	Sources                       []string `json:"sources,omitempty"`
	AsOf                          string   `json:"asOf"`
}

// NCCLBusBandwidth is one published all_reduce_perf bus bandwidth range and
// the NCCL algorithm it assumes.
type NCCLBusBandwidth struct {
	// Algo is the NCCL algorithm (NCCL_ALGO: NVLS, RING, ...), or "default"
	// where the figure does not say which one NCCL chose.
	Algo string `json:"algo"`
	// Default is true when NCCL picks Algo by itself on the SKU.
	Default bool `json:"default,omitempty"`
	// MinBusBandwidthGBps and MaxBusBandwidthGBps bound the figure (GB/s).
	MinBusBandwidthGBps float64 `json:"minBusBandwidthGBps"`
	MaxBusBandwidthGBps float64 `json:"maxBusBandwidthGBps"`
	// Estimate says how an estimated figure was reckoned; empty when measured.
	Estimate string   `json:"estimate,omitempty"`
	Note     string   `json:"note,omitempty"`
	Sources  []string `json:"sources"`
	AsOf     string   `json:"asOf"`
}

// Text is the figure for people: "~450-480 GB/s with NVLS (default)",
// "~370 GB/s with NCCL_ALGO=RING".
func (f NCCLBusBandwidth) Text() string {
	r := fmt.Sprintf("~%g-%g GB/s", f.MinBusBandwidthGBps, f.MaxBusBandwidthGBps)
	if f.MaxBusBandwidthGBps <= f.MinBusBandwidthGBps {
		r = fmt.Sprintf("~%g GB/s", f.MinBusBandwidthGBps)
	}
	switch {
	case f.Algo == "default":
		r += " with NCCL's default algorithm"
	case f.Default:
		r += " with " + f.Algo + " (default)"
	default:
		r += " with NCCL_ALGO=" + f.Algo
	}
	if f.Estimate != "" {
		r += " (estimate: " + f.Estimate + ")"
	}
	return r
}

// NCCLSKUBaseline is the single-node NCCL all_reduce_perf baseline of one GPU
// SKU: the published figures and the acceptance minimum `gpuctl accept`
// judges its nccl stage against.
type NCCLSKUBaseline struct {
	// SKU names it ("h100-sxm-x8").
	SKU         string `json:"sku"`
	Description string `json:"description,omitempty"`
	// GPU is the matrix product ID; GPUMatch are substrings of the product
	// name (see GPUNameContains) that identify the SKU, telling SXM from PCIe
	// where one product covers both.
	GPU      string   `json:"gpu"`
	GPUMatch []string `json:"gpuMatch"`
	// GPUs is the GPU count of the node.
	GPUs int `json:"gpus"`
	// GPULink is the link class topo -m shows on every GPU pair ("NV18").
	GPULink string `json:"gpuLink,omitempty"`
	// MinBusBandwidthGBps is the acceptance minimum at the largest message
	// size: min_fraction of the figure with MinAlgo.
	MinBusBandwidthGBps float64 `json:"minBusBandwidthGBps"`
	MinAlgo             string  `json:"minAlgo"`
	// MinBytes is the smallest largest-message size that is judged.
	MinBytes   int64  `json:"minBytes"`
	Confidence string `json:"confidence,omitempty"`
	Note       string `json:"note,omitempty"`
	// NoFigure, when set, says why no published figure exists: the SKU has
	// no minimum, and accept does not judge its busbw (INCONCLUSIVE).
	NoFigure string             `json:"noFigure,omitempty"`
	Figures  []NCCLBusBandwidth `json:"figures"`
	// Sources are the SKU's and its figures' sources, without repeats.
	Sources []string `json:"sources"`
	AsOf    string   `json:"asOf"`
}

// Expected returns the figure of the algorithm NCCL picks by itself (the
// informative "expected" value: NVLS on 8x H100 SXM).
func (b NCCLSKUBaseline) Expected() NCCLBusBandwidth {
	for _, f := range b.Figures {
		if f.Default {
			return f
		}
	}
	if len(b.Figures) == 0 {
		return NCCLBusBandwidth{}
	}
	return b.Figures[0]
}

// ExpectedText is every figure for people, the default algorithm's first:
// "~450-480 GB/s with NVLS (default), ~370 GB/s with NCCL_ALGO=RING".
func (b NCCLSKUBaseline) ExpectedText() string {
	var parts []string
	for _, f := range b.Figures {
		if f.Default {
			parts = append([]string{f.Text()}, parts...)
		} else {
			parts = append(parts, f.Text())
		}
	}
	return strings.Join(parts, ", ")
}

// NCCLBaselines returns the single-node NCCL baselines per GPU SKU and the
// date of the set.
func NCCLBaselines() (asOf string, out []NCCLSKUBaseline) {
	c := cat()
	for _, b := range c.nccl.Baselines.SKUs {
		out = append(out, skuBaseline(b))
	}
	return c.nccl.Baselines.AsOf, out
}

func figureOf(f busbwFigure) NCCLBusBandwidth {
	return NCCLBusBandwidth{Algo: f.Algo, Default: f.Default, MinBusBandwidthGBps: f.MinGBps, MaxBusBandwidthGBps: f.MaxGBps,
		Estimate: f.Estimate, Note: f.Note, Sources: f.sources(), AsOf: f.AsOf}
}

func skuBaseline(b baselineSKU) NCCLSKUBaseline {
	out := NCCLSKUBaseline{SKU: b.SKU, Description: b.Description, GPU: b.GPU, GPUMatch: append([]string(nil), b.GPUMatch...),
		GPUs: b.GPUs, GPULink: b.GPULink, MinBusBandwidthGBps: b.MinBusBW, MinAlgo: b.MinAlgo, MinBytes: b.MinBytes,
		Confidence: b.Confidence, Note: b.Note, NoFigure: b.NoFigure, Sources: b.sources(), AsOf: b.AsOf}
	for _, f := range b.Figures {
		fig := figureOf(f)
		out.Figures = append(out.Figures, fig)
		for _, s := range fig.Sources {
			out.Sources = appendUnique(out.Sources, s)
		}
	}
	return out
}

// algoLabel is the Algo of an NCCLBaselineFact: "NVLS (default)", "RING".
func algoLabel(f NCCLBusBandwidth) string {
	if f.Default && f.Algo != "default" {
		return f.Algo + " (default)"
	}
	return f.Algo
}

// NCCLBaseline returns the single-node all_reduce bus-bandwidth baseline
// for sku: a baseline ID ("H100-SXM-8", or "H100-SXM-8-RING" for the figure
// with NCCL_ALGO=RING), a GPU name ("H100", "H100 SXM"), or a machine type
// ("p5.48xlarge", "a3-highgpu-8g"). With a GPU or machine it picks the
// figure of that product's default algorithm and the machine's GPU count.
func NCCLBaseline(sku string) (NCCLBaselineFact, bool) {
	c := cat()
	of := func(b baselineSKU, f busbwFigure, id string) NCCLBaselineFact {
		fig := figureOf(f)
		return NCCLBaselineFact{ID: id, GPU: b.GPU, GPUs: b.GPUs, MinBusBandwidthGBps: fig.MinBusBandwidthGBps,
			MaxBusBandwidthGBps: fig.MaxBusBandwidthGBps, Algo: algoLabel(fig),
			AcceptanceMinBusBandwidthGBps: b.MinBusBW, AcceptanceAlgo: b.MinAlgo, Confidence: b.Confidence,
			Note: fig.Note, Sources: fig.Sources, AsOf: fig.AsOf}
	}
	defaultFigure := func(b baselineSKU) busbwFigure {
		for _, f := range b.Figures {
			if f.Default {
				return f
			}
		}
		return b.Figures[0]
	}
	for _, b := range c.nccl.Baselines.SKUs {
		if b.NoFigure != "" {
			continue // no figure to answer with
		}
		id := b.ID
		if id == "" {
			id = b.SKU
		}
		if strings.EqualFold(id, sku) || strings.EqualFold(b.SKU, sku) {
			return of(b, defaultFigure(b), id), true
		}
		for _, f := range b.Figures {
			if !f.Default && strings.EqualFold(id+"-"+f.Algo, sku) {
				return of(b, f, id+"-"+f.Algo), true
			}
		}
	}
	for _, f := range c.nccl.Baselines.PerNIC {
		if strings.EqualFold(f.ID, sku) {
			fig := figureOf(f)
			return NCCLBaselineFact{ID: f.ID, MinBusBandwidthGBps: fig.MinBusBandwidthGBps, MaxBusBandwidthGBps: fig.MaxBusBandwidthGBps,
				Algo: fig.Algo, Note: fig.Note, Sources: fig.Sources, AsOf: fig.AsOf}, true
		}
	}
	gpu, count := "", 0
	if g, n, ok := MachineGPU("", sku); ok {
		gpu, count = g.ID, n
	} else if p, ok := LookupGPU(sku); ok {
		gpu = p.ID
	}
	if gpu == "" {
		return NCCLBaselineFact{}, false
	}
	for _, b := range c.nccl.Baselines.SKUs {
		if b.NoFigure == "" && b.GPU == gpu && (count == 0 || b.GPUs == count) {
			id := b.ID
			if id == "" {
				id = b.SKU
			}
			return of(b, defaultFigure(b), id), true
		}
	}
	return NCCLBaselineFact{}, false
}

// Transport is the NCCL transport of a pool and what it needs in the
// workload pods, from the matrix's fabric data (data/nccl.yaml).
type Transport struct {
	// Fabric is FabricEFA, FabricTCPX, FabricTCPXO or FabricRoCE.
	Fabric string
	// Plugin is the NCCL net plugin that drives it (aws-ofi-nccl, tcpx,
	// tcpxo, gib).
	Plugin string
	// Env are the variables the transport needs, the GPU NIC lists included.
	Env map[string]string
	// Source documents Env: the fabric's source, then the machine type's
	// where it has settings of its own (space-separated).
	Source string
	AsOf   string
}

// PoolGPUNICs is the number of GPU NICs (eth1..ethN after the extra
// gVNICs, PoolNICs) that GKE pool p's GPUDirect NCCL plugin uses.
func PoolGPUNICs(provider string, p *spec.NodePool) int { return PoolNICs(provider, p).GPU }

// PoolNICs are the additional NICs (additional node networks) of GKE pool p
// that its GPUDirect NCCL plugin needs, from its machine type's network
// interfaces:
//   - GPUDirect-TCPX or -TCPXO (nccl.plugin tcpx, tcpxo on a machine of that
//     fabric): every interface but the primary one is a GPU NIC (4 on A3
//     High, 8 on A3 Mega);
//   - GPUDirect RDMA (nccl.plugin gib on a RoCE machine with RDMA NICs: A3
//     Ultra, A4): the RDMA NICs (8), after the gVNICs other than the
//     primary one (1), as Google's GKE blueprints attach them
//     (GoogleCloudPlatform/cluster-toolkit examples/gke-a3-ultragpu and
//     examples/gke-a4 at commit 1047080375afbb44da4b596be314634e7486af4a,
//     2026-06-25: networks net-1 and rdma-net with 8 subnetworks).
//
// None on EKS, for other plugins, and where the machine type's interfaces
// are not known or its GPU network is not the plugin's; none on A4X either,
// whose RDMA NICs the matrix does not count (Google's A4X blueprint attaches
// them through DRANET resource claims, not Network objects). The Terraform
// sizes the pool's networks by it, the manifests their GKE Network objects.
func PoolNICs(provider string, p *spec.NodePool) spec.NICLayout {
	if provider != spec.ProviderGKE {
		return spec.NICLayout{}
	}
	mts := p.MachineTypes()
	if len(mts) == 0 {
		return spec.NICLayout{}
	}
	m, ok := LookupMachine(provider, mts[0])
	if !ok {
		return spec.NICLayout{}
	}
	switch {
	case (p.NCCL.Plugin == FabricTCPX || p.NCCL.Plugin == FabricTCPXO) && m.Fabric == p.NCCL.Plugin && m.NICs >= 2:
		return spec.NICLayout{GPU: m.NICs - 1}
	case p.NCCL.Plugin == gcpPluginFor[FabricRoCE] && m.Fabric == FabricRoCE && m.RDMANICs > 0:
		return spec.NICLayout{GVNICs: max(m.NICs-1, 0), GPU: m.RDMANICs, RDMA: true}
	}
	return spec.NICLayout{}
}

// PoolTransport returns the NCCL transport pool p uses: on EKS, EFA where
// efa.enabled is set on an instance type with EFA; on GKE, the GPU network
// of its machine type where nccl.plugin names that network's plugin. false
// where the pool has none (TCP sockets over the primary NIC).
func PoolTransport(provider string, p *spec.NodePool) (Transport, bool) {
	name := p.MachineType
	if name == "" && len(p.InstanceTypes) > 0 {
		name = p.InstanceTypes[0]
	}
	m, ok := LookupMachine(provider, name)
	if !ok {
		return Transport{}, false
	}
	for _, f := range cat().nccl.Fabrics {
		if f.Name != m.Fabric {
			continue
		}
		switch {
		case provider == spec.ProviderEKS && f.Name == FabricEFA && p.EFA.Enabled:
		case provider == spec.ProviderGKE && f.Name != FabricEFA && p.NCCL.Plugin == f.Plugin:
		default:
			return Transport{}, false
		}
		t := Transport{Fabric: f.Name, Plugin: f.Plugin, Env: map[string]string{}, Source: f.EnvSource, AsOf: f.AsOf}
		for k, v := range f.Env {
			t.Env[k] = v
		}
		for _, me := range cat().nccl.MachineEnv {
			if me.Machine == m.Name && me.Fabric == f.Name {
				for k, v := range me.Env {
					t.Env[k] = v
				}
				t.Source += " " + me.Source
			}
		}
		if len(f.NICEnv) > 0 && m.NICs > 1 {
			nics := make([]string, m.NICs-1)
			for i := range nics {
				nics[i] = fmt.Sprintf("eth%d", i+1)
			}
			for _, k := range f.NICEnv {
				t.Env[k] = strings.Join(nics, ",")
			}
		}
		return t, true
	}
	return Transport{}, false
}

// lowerFirst lowers the first letter of a sentence that follows a prefix
// ("No CUDA 12.7 toolkit" -> "no CUDA 12.7 toolkit"), but not of an acronym.
func lowerFirst(s string) string {
	if len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// NCCLMultiNodeBaseline is a GPU fabric's multi-node all_reduce_perf
// baseline (8 GPUs per node), from data/nccl.yaml's multi_node.
type NCCLMultiNodeBaseline struct {
	// Fabric is FabricTCPX, FabricTCPXO, FabricEFA or FabricRoCE; Machines
	// the machine and instance types it covers.
	Fabric      string   `json:"fabric"`
	Machines    []string `json:"machines"`
	GPUsPerNode int      `json:"gpusPerNode"`
	// MinBusBandwidthGBps is the acceptance minimum at messages of at least
	// MinBytes: min_fraction of the figure with MinAlgo.
	MinBusBandwidthGBps float64            `json:"minBusBandwidthGBps,omitempty"`
	MinAlgo             string             `json:"minAlgo,omitempty"`
	MinBytes            int64              `json:"minBytes,omitempty"`
	Confidence          string             `json:"confidence,omitempty"`
	Note                string             `json:"note,omitempty"`
	NoFigure            string             `json:"noFigure,omitempty"`
	Figures             []NCCLBusBandwidth `json:"figures"`
	Sources             []string           `json:"sources"`
	AsOf                string             `json:"asOf"`
}

// ExpectedText is the figures for people ("~86.99-89.54 GB/s with NCCL's
// default algorithm").
func (b NCCLMultiNodeBaseline) ExpectedText() string {
	var parts []string
	for _, f := range b.Figures {
		parts = append(parts, f.Text())
	}
	return strings.Join(parts, ", ")
}

// MultiNodeBaseline returns the multi-node all_reduce baseline of the
// fabric of machine type (GKE machine or EKS instance type); false when the
// machine has no GPU fabric with an entry.
func MultiNodeBaseline(machine string) (NCCLMultiNodeBaseline, bool) {
	c := cat()
	for _, f := range c.nccl.MultiNode.Fabrics {
		for _, m := range f.Machines {
			if m != machine {
				continue
			}
			out := NCCLMultiNodeBaseline{Fabric: f.Fabric, Machines: append([]string(nil), f.Machines...), GPUsPerNode: f.GPUsPerNode,
				MinBusBandwidthGBps: f.MinBusBW, MinAlgo: f.MinAlgo, MinBytes: f.MinBytes, Confidence: f.Confidence,
				Note: f.Note, NoFigure: f.NoFigure, Figures: []NCCLBusBandwidth{}, Sources: f.sources(), AsOf: f.AsOf}
			for _, fig := range f.Figures {
				nf := figureOf(fig)
				out.Figures = append(out.Figures, nf)
				for _, s := range nf.Sources {
					out.Sources = appendUnique(out.Sources, s)
				}
			}
			return out, true
		}
	}
	return NCCLMultiNodeBaseline{}, false
}
