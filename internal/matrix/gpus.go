package matrix

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// gpus.yaml: the GPU architectures and products, the names tools print for
// them; their index and lookups (by ID, name, alias, printed name or GKE
// accelerator type).

// gpusFile is data/gpus.yaml as decoded; indexed by (*catalog).indexGPUs.
type gpusFile struct {
	Architectures []archFact    `yaml:"architectures"`
	Products      []productFact `yaml:"products"`
}

type archFact struct {
	Provenance        `yaml:",inline"`
	Name              string `yaml:"name"`
	FirstCUDA         string `yaml:"first_cuda"`
	FirstDriverBranch int    `yaml:"first_driver_branch"`
	OpenModulesOnly   bool   `yaml:"open_modules_only"`
}

type productFact struct {
	Provenance        `yaml:",inline"`
	ID                string   `yaml:"id"`
	Name              string   `yaml:"name"`
	Family            string   `yaml:"family"`
	Aliases           []string `yaml:"aliases"`
	Arch              string   `yaml:"arch"`
	ComputeCapability string   `yaml:"compute_capability"`
	MemoryGiB         int      `yaml:"memory_gib"`
	DataCenter        bool     `yaml:"data_center"`
	HostArch          string   `yaml:"host_arch"`
	OpenModulesOnly   bool     `yaml:"open_modules_only"`
	MinCUDA           string   `yaml:"min_cuda"`
	MinDriverBranch   int      `yaml:"min_driver_branch"`
	MinDriver         string   `yaml:"min_driver"`
	LastDriverBranch  int      `yaml:"last_driver_branch"`
	// MinDriverUndocumented: NVIDIA documents no minimum driver of the
	// product's own; only its architecture's floor is applied.
	MinDriverUndocumented bool     `yaml:"min_driver_undocumented"`
	MIG                   *migFact `yaml:"mig"`
	Notes                 []string `yaml:"notes"`
	// Printed are the names tools print for the product (nvidia-smi, GPU
	// Feature Discovery, EC2), each with where it was seen.
	Printed []printedName `yaml:"printed"`
}

// printedName is one name a tool prints for a GPU product.
type printedName struct {
	Provenance `yaml:",inline"`
	Name       string `yaml:"name"`
	// By is nvidia-smi, gfd, ec2 or config.
	By string `yaml:"by"`
	// FamilyName: the tool prints the name for several products of the
	// product's family, so it identifies the family only.
	FamilyName bool `yaml:"family_name"`
}

type migFact struct {
	MinDriver    string       `yaml:"min_driver"`
	MaxInstances int          `yaml:"max_instances"`
	Profiles     []migProfile `yaml:"profiles"`
	Note         string       `yaml:"note"`
	// Source and AsOf are where the profiles and their instance counts
	// come from.
	Source string `yaml:"source"`
	AsOf   string `yaml:"as_of"`
}

// migProfile is one MIG profile of a GPU and how many instances of it one
// GPU holds when partitioned into that profile alone (0: not captured).
type migProfile struct {
	Name      string `yaml:"name"`
	Instances int    `yaml:"instances"`
}

// indexGPUs indexes gpus.yaml: the architectures by name, the products by
// ID, every name of a product (ID, name, aliases, printed names) by its
// normalized form, and the printed names that stand for a family.
func (c *catalog) indexGPUs() error {
	c.archs = map[string]*archFact{}
	for i := range c.gpus.Architectures {
		a := &c.gpus.Architectures[i]
		if _, err := parseV("architecture "+a.Name+" first_cuda", a.FirstCUDA); err != nil {
			return err
		}
		c.archs[a.Name] = a
	}
	c.products = map[string]*productFact{}
	c.aliases = map[string]*productFact{}
	c.familyNames = map[string]string{}
	for i := range c.gpus.Products {
		if err := c.indexProduct(&c.gpus.Products[i]); err != nil {
			return err
		}
	}
	return nil
}

// indexProduct checks product p (a known architecture, versions that
// parse, printed names by a known tool) and indexes it and its names.
func (c *catalog) indexProduct(p *productFact) error {
	if _, ok := c.archs[p.Arch]; !ok {
		return fmt.Errorf("gpu %s: unknown architecture %q", p.ID, p.Arch)
	}
	if err := p.checkVersions(); err != nil {
		return err
	}
	c.products[p.ID] = p
	names := append([]string{p.ID, p.Name}, p.Aliases...)
	for _, pn := range p.Printed {
		switch pn.By {
		case "nvidia-smi", "gfd", "ec2", "config":
		default:
			return fmt.Errorf("gpu %s: printed name %q: unknown tool %q", p.ID, pn.Name, pn.By)
		}
		if pn.FamilyName {
			c.familyNames[normalizeGPU(pn.Name)] = p.Family
			continue
		}
		names = append(names, pn.Name)
	}
	for _, name := range names {
		k := normalizeGPU(name)
		if q, dup := c.aliases[k]; dup && q != p {
			return fmt.Errorf("gpu alias %q names both %s and %s", name, q.ID, p.ID)
		}
		c.aliases[k] = p
	}
	return nil
}

// checkVersions reports a min_driver, min_cuda or MIG min_driver of the
// product that does not parse.
func (p *productFact) checkVersions() error {
	for _, s := range []string{p.MinDriver, p.MinCUDA} {
		if s != "" {
			if _, err := parseV("gpu "+p.ID, s); err != nil {
				return err
			}
		}
	}
	if p.MIG != nil && p.MIG.MinDriver != "" {
		if _, err := parseV("gpu "+p.ID+" mig min_driver", p.MIG.MinDriver); err != nil {
			return err
		}
	}
	return nil
}

// normalizeGPU folds a GPU name for alias lookup: lower case, without a
// leading "nvidia", spaces, dashes, underscores and dots.
func normalizeGPU(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	var b strings.Builder
	for _, r := range s {
		switch r {
		case ' ', '-', '_', '.', '(', ')':
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	out = strings.TrimPrefix(out, "nvidia")
	out = strings.TrimPrefix(out, "tesla")
	return out
}

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
	if g.MinDriverBranch == 0 {
		// The architecture's floor holds for every product of it, one
		// without a documented minimum of its own included.
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
