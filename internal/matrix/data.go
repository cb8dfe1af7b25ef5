package matrix

import (
	"embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"
)

// The facts live in data/*.yaml, embedded in the binary. Each entry carries
// the URL it comes from (source) and the date it was true (as_of); TestData
// holds every entry to that and checks that versions and dates parse.

//go:embed data/*.yaml
var dataFS embed.FS

// Provenance is where an embedded fact comes from: every entry of the data
// files carries it (the YAML decoder needs the embedded type exported).
type Provenance struct {
	Source  string `yaml:"source"`
	Source2 string `yaml:"source_2"`
	AsOf    string `yaml:"as_of"`
	Note    string `yaml:"note"`
}

func (f Provenance) sources() []string {
	var out []string
	for _, s := range []string{f.Source, f.Source2} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ---- cuda.yaml ----

type cudaFile struct {
	Toolkits     []toolkitFact `yaml:"toolkits"`
	MinorCompat  minorCompat   `yaml:"minor_compat"`
	Forward      forwardCompat `yaml:"forward_compat"`
	ArchRemovals []archRemoval `yaml:"arch_removals"`
}

type toolkitFact struct {
	Provenance `yaml:",inline"`
	Release    string   `yaml:"release"`
	Version    string   `yaml:"version"`
	Aliases    []string `yaml:"aliases"`
	GA         bool     `yaml:"ga"`
	Exists     *bool    `yaml:"exists"`
	MinDriver  string   `yaml:"min_driver"`
	Branch     int      `yaml:"branch"`

	version   Version
	aliases   []Version
	minDriver Version
}

func (t *toolkitFact) exists() bool { return t.Exists == nil || *t.Exists }

type minorCompat struct {
	Provenance  `yaml:",inline"`
	Families    []minorFamily `yaml:"families"`
	Limitations []string      `yaml:"limitations"`
}

type minorFamily struct {
	Major int    `yaml:"major"`
	Floor string `yaml:"floor"`
	Note  string `yaml:"note"`

	floor Version
}

type forwardCompat struct {
	Provenance `yaml:",inline"`
	AppliesTo  string           `yaml:"applies_to"`
	Rules      []string         `yaml:"rules"`
	Columns    []int            `yaml:"columns"`
	Packages   []compatPackages `yaml:"packages"`
}

type compatPackages struct {
	CUDA   string `yaml:"cuda"`
	RunsOn []int  `yaml:"runs_on"`
	Native int    `yaml:"native"`

	cuda Version
}

type archRemoval struct {
	Provenance       `yaml:",inline"`
	Arch             string `yaml:"arch"`
	RemovedIn        string `yaml:"removed_in"`
	LastCUDA         string `yaml:"last_cuda"`
	LastDriverBranch int    `yaml:"last_driver_branch"`

	removedIn Version
}

// ---- gpus.yaml ----

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
	// MinDriverUndocumented: NVIDIA documents no minimum driver for the
	// product; the architecture's is not assumed either.
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

// ---- drivers.yaml ----

type driversFile struct {
	Lifecycle Provenance   `yaml:"lifecycle"`
	Branches  []branchFact `yaml:"branches"`
}

type branchFact struct {
	Provenance  `yaml:",inline"`
	Branch      int    `yaml:"branch"`
	Type        string `yaml:"type"`
	EOL         string `yaml:"eol"`
	Released    string `yaml:"released"`
	LatestKnown string `yaml:"latest_known"`

	eol time.Time // first instant past EOL; zero when none is known
}

// ---- aws.yaml ----

type awsFile struct {
	InstanceTypes    []instanceFact `yaml:"instance_types"`
	InstanceFamilies []familyFact   `yaml:"instance_families"`
	AMITypes         []amiFact      `yaml:"ami_types"`
	EKSVersions      eksVersions    `yaml:"eks_versions"`
}

type instanceFact struct {
	Provenance      `yaml:",inline"`
	Name            string  `yaml:"name"`
	GPU             string  `yaml:"gpu"`
	Count           int     `yaml:"count"`
	Fraction        float64 `yaml:"fraction"`
	GPUMemoryGiB    float64 `yaml:"gpu_memory_gib"`
	Arch            string  `yaml:"arch"`
	EFA             bool    `yaml:"efa"`
	NetworkCards    int     `yaml:"network_cards"`
	Network         string  `yaml:"network"`
	Spot            *bool   `yaml:"spot"`
	MaxDriverBranch int     `yaml:"max_driver_branch"`
}

type familyFact struct {
	Provenance      `yaml:",inline"`
	Family          string `yaml:"family"`
	GPU             string `yaml:"gpu"`
	Arch            string `yaml:"arch"`
	MinDriverBranch int    `yaml:"min_driver_branch"`
}

type amiFact struct {
	Provenance   `yaml:",inline"`
	Name         string `yaml:"name"`
	Arch         string `yaml:"arch"`
	NVIDIA       bool   `yaml:"nvidia"`
	ShipsDriver  bool   `yaml:"ships_driver"`
	Driver       string `yaml:"driver"`
	DriverBranch int    `yaml:"driver_branch"`
	// DriverCurrent is the driver of the newest AMI release as of AsOf;
	// pools that do not pin a releaseVersion get it (or a later one).
	DriverCurrent     string `yaml:"driver_current"`
	ShipsDevicePlugin bool   `yaml:"ships_device_plugin"`
	KubernetesMin     string `yaml:"kubernetes_min"`
	KubernetesMax     string `yaml:"kubernetes_max"`
	EndOfSupport      string `yaml:"end_of_support"`
	Windows           bool   `yaml:"windows"`
	Custom            bool   `yaml:"custom"`
	// ShipsToolkit: the NVIDIA Container Toolkit is installed and the
	// container runtime configured for it.
	ShipsToolkit bool `yaml:"ships_toolkit"`
	// Glibc is the host's glibc version, where a rule needs it.
	Glibc       string `yaml:"glibc"`
	GlibcSource string `yaml:"glibc_source"`

	endOfSupport time.Time
}

type eksVersions struct {
	Provenance `yaml:",inline"`
	Versions   []eksVersion `yaml:"versions"`
}

type eksVersion struct {
	Kubernetes  string `yaml:"kubernetes"`
	Released    string `yaml:"released"`
	EndStandard string `yaml:"end_standard"`
	EndExtended string `yaml:"end_extended"`
	Note        string `yaml:"note"`
	Source      string `yaml:"source"`

	endStandard, endExtended time.Time
}

// ---- gcp.yaml ----

type gcpFile struct {
	AcceleratorTypes []acceleratorFact `yaml:"accelerator_types"`
	N1Attachable     n1Attachable      `yaml:"n1_attachable"`
	MachineTypes     []gcpMachineFact  `yaml:"machine_types"`
	MaxNICs          struct {
		Provenance `yaml:",inline"`
		Count      int `yaml:"count"`
	} `yaml:"max_nics"`
	GKE gkeFacts `yaml:"gke"`
}

type acceleratorFact struct {
	Provenance `yaml:",inline"`
	Name       string `yaml:"name"`
	GPU        string `yaml:"gpu"`
	EOL        bool   `yaml:"eol"`
}

type n1Attachable struct {
	Provenance   `yaml:",inline"`
	Accelerators []struct {
		Accelerator string `yaml:"accelerator"`
		Counts      []int  `yaml:"counts"`
		Note        string `yaml:"note"`
	} `yaml:"accelerators"`
}

type gcpMachineFact struct {
	Provenance  `yaml:",inline"`
	Name        string  `yaml:"name"`
	Series      string  `yaml:"series"`
	Attachable  bool    `yaml:"attachable"`
	Accelerator string  `yaml:"accelerator"`
	Count       int     `yaml:"count"`
	Fraction    float64 `yaml:"fraction"`
	Arch        string  `yaml:"arch"`
	Fabric      string  `yaml:"fabric"`
	NICs        int     `yaml:"nics"`
	RDMANICs    int     `yaml:"rdma_nics"`
}

type gkeFacts struct {
	DriverVersions struct {
		Provenance `yaml:",inline"`
		Values     []struct {
			Name     string `yaml:"name"`
			Installs bool   `yaml:"installs"`
			COSOnly  bool   `yaml:"cos_only"`
			Note     string `yaml:"note"`
		} `yaml:"values"`
	} `yaml:"driver_versions"`
	DriverInstall   gkeDriverInstall   `yaml:"driver_install"`
	ReleaseSchedule gkeReleaseSchedule `yaml:"release_schedule"`
	ImageTypes      []struct {
		Provenance `yaml:",inline"`
		Name       string `yaml:"name"`
		COS        bool   `yaml:"cos"`
	} `yaml:"image_types"`
	DevicePlugin struct {
		Provenance   `yaml:",inline"`
		Fact         string `yaml:"fact"`
		DisableLabel string `yaml:"disable_label"`
	} `yaml:"device_plugin"`
	ReleaseChannels struct {
		Provenance `yaml:",inline"`
		Values     []string `yaml:"values"`
		Fact       string   `yaml:"fact"`
	} `yaml:"release_channels"`
}

// gkeDriverInstall is what GKE installs for each gpu_driver_version, by
// GKE version and node image.
type gkeDriverInstall struct {
	Provenance               `yaml:",inline"`
	UnsetInstallsDefaultFrom string           `yaml:"unset_installs_default_from"`
	NAPInstallsDefaultFrom   string           `yaml:"nap_installs_default_from"`
	NAPNodeSelectorFrom      string           `yaml:"nap_node_selector_from"`
	Minors                   []gkeDriverMinor `yaml:"minors"`
	NoFallbackEvidence       string           `yaml:"no_fallback_evidence"`
	COSPerGPUEvidence        string           `yaml:"cos_per_gpu_evidence"`

	unsetFrom, napFrom Version
}

// gkeDriverMinor is one GKE minor's row of GKE's driver tables.
type gkeDriverMinor struct {
	Minor          string `yaml:"minor"`
	COSDefault     int    `yaml:"cos_default"`
	COSBranches    []int  `yaml:"cos_branches"`
	UbuntuDefault  int    `yaml:"ubuntu_default"`
	UbuntuBranches []int  `yaml:"ubuntu_branches"`
	// COSNoFallback: GKE is known not to pick a newer branch on COS for a
	// GPU the DEFAULT branch does not support.
	COSNoFallback bool `yaml:"cos_no_fallback"`

	minor Version
}

// gkeReleaseSchedule is GKE's minor-version support calendar.
type gkeReleaseSchedule struct {
	Provenance     `yaml:",inline"`
	ExtendedFrom   string            `yaml:"extended_from"`
	ExtendedMonths int               `yaml:"extended_months"`
	ExtendedSource string            `yaml:"extended_source"`
	Minors         []gkeReleaseMinor `yaml:"minors"`
}

type gkeReleaseMinor struct {
	Minor       string `yaml:"minor"`
	Regular     string `yaml:"regular"`
	EndStandard string `yaml:"end_standard"`

	minor                Version
	regular, endStandard time.Time // first instant after the date
}

// ---- operator.yaml ----

type operatorFile struct {
	GPUOperator struct {
		Lifecycle struct {
			Provenance          `yaml:",inline"`
			Supported           []string `yaml:"supported"`
			Deprecated          []string `yaml:"deprecated"`
			EndOfSupportThrough string   `yaml:"end_of_support_through"`
		} `yaml:"lifecycle"`
		GKEMinVersion       string         `yaml:"gke_min_version"`
		GKEMinVersionSource string         `yaml:"gke_min_version_source"`
		Releases            []operatorFact `yaml:"releases"`
		// MinGlibc is the oldest host glibc the Operator's operands run on.
		MinGlibc        string       `yaml:"min_glibc"`
		MinGlibcNote    string       `yaml:"min_glibc_note"`
		MinGlibcSource  string       `yaml:"min_glibc_source"`
		MinGlibcSource2 string       `yaml:"min_glibc_source_2"`
		MinGlibcAsOf    string       `yaml:"min_glibc_as_of"`
		KnownIssues     []knownIssue `yaml:"known_issues"`
	} `yaml:"gpu_operator"`
	DevicePlugin struct {
		ChartDefaults struct {
			Provenance        `yaml:",inline"`
			DevicePlugin      bool     `yaml:"device_plugin"`
			GFD               bool     `yaml:"gfd"`
			NodeSelectorEmpty bool     `yaml:"node_selector_empty"`
			AffinityLabels    []string `yaml:"affinity_labels"`
		} `yaml:"chart_defaults"`
		Releases   []pluginFact    `yaml:"releases"`
		NodeLabels []nodeLabelFact `yaml:"node_labels"`
		Sharing    []struct {
			Provenance `yaml:",inline"`
			Fact       string `yaml:"fact"`
		} `yaml:"sharing"`
		GFDLabels struct {
			Provenance `yaml:",inline"`
			Keys       []string `yaml:"keys"`
		} `yaml:"gfd_labels"`
	} `yaml:"device_plugin"`
	DCGMExporter struct {
		ChartDefaults struct {
			Provenance        `yaml:",inline"`
			ServiceMonitor    bool     `yaml:"service_monitor"`
			NodeSelectorEmpty bool     `yaml:"node_selector_empty"`
			Tolerations       []string `yaml:"tolerations"`
		} `yaml:"chart_defaults"`
	} `yaml:"dcgm_exporter"`
}

// nodeLabelFact is a node label some party puts on every node of a pool;
// Value names the pool fact it carries (arch, machine-type, pool-name,
// capacity, accelerator).
type nodeLabelFact struct {
	Provenance `yaml:",inline"`
	Key        string `yaml:"key"`
	SetBy      string `yaml:"set_by"`
	Value      string `yaml:"value"`
}

// operatorComponents are the GPU Operator chart's default switches of one
// release (values.yaml <component>.enabled at its tag).
type operatorComponents struct {
	Driver       *bool `yaml:"driver"`
	Toolkit      *bool `yaml:"toolkit"`
	DevicePlugin *bool `yaml:"device_plugin"`
	DCGMExporter *bool `yaml:"dcgm_exporter"`
	MIGManager   *bool `yaml:"mig_manager"`
	CDI          *bool `yaml:"cdi"`
}

type operatorFact struct {
	Provenance    `yaml:",inline"`
	Version       string   `yaml:"version"`
	Date          string   `yaml:"date"`
	Kubernetes    string   `yaml:"kubernetes"`
	KubernetesCSP string   `yaml:"kubernetes_csp"`
	DefaultDriver string   `yaml:"default_driver"`
	DevicePlugin  string   `yaml:"device_plugin"`
	Drivers       []string `yaml:"drivers"`
	KnownIssues   []string `yaml:"known_issues"`
	// Components are the chart's default switches at this release.
	Components *operatorComponents `yaml:"components"`

	version Version
}

type knownIssue struct {
	Provenance    `yaml:",inline"`
	ID            string `yaml:"id"`
	Platform      string `yaml:"platform"`
	KubernetesMin string `yaml:"kubernetes_min"`
	Fact          string `yaml:"fact"`
}

type pluginFact struct {
	Provenance `yaml:",inline"`
	Version    string `yaml:"version"`
	Date       string `yaml:"date"`
	MPS        bool   `yaml:"mps"`

	version Version
}

// ---- nccl.yaml ----

type ncclFile struct {
	Env struct {
		Provenance     `yaml:",inline"`
		Known          []string          `yaml:"known"`
		PluginPrefixes []string          `yaml:"plugin_prefixes"`
		Misspellings   map[string]string `yaml:"misspellings"`
		Facts          []struct {
			Provenance `yaml:",inline"`
			Name       string `yaml:"name"`
			Fact       string `yaml:"fact"`
		} `yaml:"facts"`
	} `yaml:"env"`
	Fabrics    []fabricFact  `yaml:"fabrics"`
	MachineEnv []machineEnv  `yaml:"machine_env"`
	Baselines  baselinesFile `yaml:"baselines"`
	MultiNode  multiNodeFile `yaml:"multi_node"`
}

// machineEnv is the NCCL environment Google documents for the workloads of
// one GPUDirect machine type (its fabric's env comes first).
type machineEnv struct {
	Provenance `yaml:",inline"`
	Machine    string            `yaml:"machine"`
	Fabric     string            `yaml:"fabric"`
	Env        map[string]string `yaml:"env"`
}

// multiNodeFile holds the multi-node all_reduce baselines per GPU fabric.
type multiNodeFile struct {
	AsOf    string            `yaml:"as_of"`
	Fabrics []multiNodeFabric `yaml:"fabrics"`
}

// multiNodeFabric is one fabric's multi-node all_reduce_perf baseline, or
// NoFigure: why there is none.
type multiNodeFabric struct {
	Provenance  `yaml:",inline"`
	Fabric      string        `yaml:"fabric"`
	Machines    []string      `yaml:"machines"`
	GPUsPerNode int           `yaml:"gpus_per_node"`
	MinBusBW    float64       `yaml:"min_busbw_gbps"`
	MinAlgo     string        `yaml:"min_algo"`
	MinBytes    int64         `yaml:"min_bytes"`
	Confidence  string        `yaml:"confidence"`
	NoFigure    string        `yaml:"no_figure"`
	Figures     []busbwFigure `yaml:"figures"`
}

type fabricFact struct {
	Provenance  `yaml:",inline"`
	Name        string   `yaml:"name"`
	Plugin      string   `yaml:"plugin"`
	NetName     string   `yaml:"net_name"`
	EnvPrefixes []string `yaml:"env_prefixes"`
	Fact        string   `yaml:"fact"`
	// Env are the variables the transport needs in the workload pods, and
	// NICEnv the variables that take the list of GPU NICs (eth1,...,ethN);
	// EnvSource is where both are documented.
	Env       map[string]string `yaml:"env"`
	NICEnv    []string          `yaml:"nic_env"`
	EnvSource string            `yaml:"env_source"`
}

type baselinesFile struct {
	AsOf        string        `yaml:"as_of"`
	MinFraction float64       `yaml:"min_fraction"`
	SKUs        []baselineSKU `yaml:"skus"`
	PerNIC      []busbwFigure `yaml:"per_nic"`
}

// baselineSKU is one GPU SKU's single-node all_reduce_perf baseline.
type baselineSKU struct {
	Provenance  `yaml:",inline"`
	SKU         string   `yaml:"sku"`
	ID          string   `yaml:"id"`
	Description string   `yaml:"description"`
	GPU         string   `yaml:"gpu"`
	GPUMatch    []string `yaml:"gpu_match"`
	GPUs        int      `yaml:"gpus"`
	GPULink     string   `yaml:"gpu_link"`
	MinBusBW    float64  `yaml:"min_busbw_gbps"`
	MinAlgo     string   `yaml:"min_algo"`
	MinBytes    int64    `yaml:"min_bytes"`
	Confidence  string   `yaml:"confidence"`
	// NoFigure, when set, says why the SKU has no published figure (then
	// it has no minimum and no figures; gpus 0 matches any GPU count).
	NoFigure string        `yaml:"no_figure"`
	Figures  []busbwFigure `yaml:"figures"`
}

// busbwFigure is a published bus bandwidth range and the NCCL algorithm it
// assumes.
type busbwFigure struct {
	Provenance `yaml:",inline"`
	ID         string  `yaml:"id"`
	Algo       string  `yaml:"algo"`
	Default    bool    `yaml:"default"`
	MinGBps    float64 `yaml:"min_gbps"`
	MaxGBps    float64 `yaml:"max_gbps"`
	Estimate   string  `yaml:"estimate"`
}

// catalog is every embedded fact, decoded and indexed.
type catalog struct {
	cuda     cudaFile
	gpus     gpusFile
	drivers  driversFile
	aws      awsFile
	gcp      gcpFile
	operator operatorFile
	nccl     ncclFile

	products     map[string]*productFact // by ID
	aliases      map[string]*productFact // by normalized name
	familyNames  map[string]string       // normalized family-level name -> family
	archs        map[string]*archFact
	branches     map[int]*branchFact
	accelerators map[string]*acceleratorFact
	machines     map[string]map[string]Machine // provider -> name
	amis         map[string]*amiFact
	ncclKnown    map[string]bool
	gfdLabels    map[string]bool
}

var loadCatalog = sync.OnceValues(load)

// cat returns the embedded catalogue. The data is checked by tests, so a
// decoding failure here is a build defect and panics.
func cat() *catalog {
	c, err := loadCatalog()
	if err != nil {
		panic(fmt.Sprintf("matrix: embedded data: %v", err))
	}
	return c
}

// decode reads data/<name> into v with goccy/go-yaml, the spec's YAML
// library: unknown fields and duplicate keys are refused, and an error names
// the file, line and column (decodeData).
func decode(name string, v any) error {
	b, err := dataFS.ReadFile("data/" + name)
	if err != nil {
		return err
	}
	return decodeData("data/"+name, b, v)
}

// decodeData decodes the YAML text b of file into v, strictly: a field the
// type does not have or a key given twice is an error. Errors read
// "file:line:col: message".
func decodeData(file string, b []byte, v any) error {
	err := yaml.UnmarshalWithOptions(b, v, yaml.DisallowUnknownField())
	if err == nil {
		return nil
	}
	var ye yaml.Error
	if errors.As(err, &ye) {
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			return fmt.Errorf("%s:%d:%d: %s", file, tk.Position.Line, tk.Position.Column, ye.GetMessage())
		}
	}
	return fmt.Errorf("%s: %w", file, err)
}

func load() (*catalog, error) {
	c := &catalog{}
	for _, f := range []struct {
		name string
		v    any
	}{
		{"cuda.yaml", &c.cuda}, {"gpus.yaml", &c.gpus}, {"drivers.yaml", &c.drivers},
		{"aws.yaml", &c.aws}, {"gcp.yaml", &c.gcp}, {"operator.yaml", &c.operator}, {"nccl.yaml", &c.nccl},
	} {
		if err := decode(f.name, f.v); err != nil {
			return nil, err
		}
	}
	if err := c.index(); err != nil {
		return nil, err
	}
	return c, nil
}

func parseV(where, s string) (Version, error) {
	v, err := ParseVersion(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return v, nil
}

// parseDate reads YYYY-MM-DD, or YYYY-MM meaning the end of that month. It
// returns the first instant after the date.
func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.AddDate(0, 0, 1), nil
	}
	if t, err := time.Parse("2006-01", s); err == nil {
		return t.AddDate(0, 1, 0), nil
	}
	return time.Time{}, fmt.Errorf("date %q is neither YYYY-MM-DD nor YYYY-MM", s)
}

func (c *catalog) index() error {
	var err error
	for i := range c.cuda.Toolkits {
		t := &c.cuda.Toolkits[i]
		if t.version, err = parseV("cuda toolkit "+t.Release, t.Version); err != nil {
			return err
		}
		for _, a := range t.Aliases {
			v, err := parseV("cuda toolkit alias", a)
			if err != nil {
				return err
			}
			t.aliases = append(t.aliases, v)
		}
		if t.MinDriver != "" {
			if t.minDriver, err = parseV("cuda toolkit "+t.Release+" min_driver", t.MinDriver); err != nil {
				return err
			}
		}
	}
	for i := range c.cuda.MinorCompat.Families {
		f := &c.cuda.MinorCompat.Families[i]
		if f.floor, err = parseV("minor compat floor", f.Floor); err != nil {
			return err
		}
	}
	for i := range c.cuda.Forward.Packages {
		p := &c.cuda.Forward.Packages[i]
		if p.cuda, err = parseV("cuda-compat package", p.CUDA); err != nil {
			return err
		}
	}
	for i := range c.cuda.ArchRemovals {
		a := &c.cuda.ArchRemovals[i]
		if a.removedIn, err = parseV("arch removal "+a.Arch, a.RemovedIn); err != nil {
			return err
		}
	}

	c.archs = map[string]*archFact{}
	for i := range c.gpus.Architectures {
		a := &c.gpus.Architectures[i]
		c.archs[a.Name] = a
	}
	c.products = map[string]*productFact{}
	c.aliases = map[string]*productFact{}
	c.familyNames = map[string]string{}
	for i := range c.gpus.Products {
		p := &c.gpus.Products[i]
		if _, ok := c.archs[p.Arch]; !ok {
			return fmt.Errorf("gpu %s: unknown architecture %q", p.ID, p.Arch)
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
	}
	for _, a := range c.gpus.Architectures {
		if _, err := parseV("arch "+a.Name, a.FirstCUDA); err != nil {
			return err
		}
	}

	c.branches = map[int]*branchFact{}
	for i := range c.drivers.Branches {
		b := &c.drivers.Branches[i]
		switch b.Type {
		case "", "LTSB", "PB", "NFB":
		default:
			return fmt.Errorf("driver branch R%d: unknown type %q", b.Branch, b.Type)
		}
		if b.EOL != "" {
			if b.eol, err = parseDate(b.EOL); err != nil {
				return fmt.Errorf("driver branch R%d: %w", b.Branch, err)
			}
		}
		c.branches[b.Branch] = b
	}

	c.accelerators = map[string]*acceleratorFact{}
	for i := range c.gcp.AcceleratorTypes {
		a := &c.gcp.AcceleratorTypes[i]
		if _, ok := c.products[a.GPU]; !ok {
			return fmt.Errorf("accelerator %s: unknown gpu %q", a.Name, a.GPU)
		}
		c.accelerators[a.Name] = a
	}

	c.machines = map[string]map[string]Machine{"gke": {}, "eks": {}}
	attach := map[string][]int{}
	for _, a := range c.gcp.N1Attachable.Accelerators {
		if _, ok := c.accelerators[a.Accelerator]; !ok {
			return fmt.Errorf("n1 attachable: unknown accelerator %q", a.Accelerator)
		}
		attach[a.Accelerator] = a.Counts
	}
	for _, m := range c.gcp.MachineTypes {
		mc := Machine{Provider: "gke", Name: m.Name, Series: m.Series, Arch: m.Arch, Fabric: m.Fabric,
			NICs: m.NICs, RDMANICs: m.RDMANICs, Note: m.Note, Source: m.Source, AsOf: m.AsOf, Spot: true}
		if mc.Arch == "" {
			mc.Arch = "amd64"
		}
		if mc.Fabric == "" {
			mc.Fabric = FabricNone
		}
		if m.Attachable {
			mc.Attachable = attach
		} else {
			a, ok := c.accelerators[m.Accelerator]
			if !ok {
				return fmt.Errorf("machine %s: unknown accelerator %q", m.Name, m.Accelerator)
			}
			mc.AcceleratorType, mc.GPU, mc.GPUCount, mc.GPUFraction = a.Name, a.GPU, m.Count, m.Fraction
			if mc.Series == "" {
				mc.Series = strings.ToUpper(strings.SplitN(m.Name, "-", 2)[0])
			}
		}
		c.machines["gke"][m.Name] = mc
	}
	for _, m := range c.aws.InstanceTypes {
		if _, ok := c.products[m.GPU]; !ok {
			return fmt.Errorf("instance %s: unknown gpu %q", m.Name, m.GPU)
		}
		mc := Machine{Provider: "eks", Name: m.Name, Series: strings.SplitN(m.Name, ".", 2)[0], GPU: m.GPU,
			GPUCount: m.Count, GPUFraction: m.Fraction, GPUMemoryGiB: m.GPUMemoryGiB, Arch: m.Arch, EFA: m.EFA,
			NetworkCards: m.NetworkCards, Spot: m.Spot == nil || *m.Spot, MaxDriverBranch: m.MaxDriverBranch,
			Fabric: FabricNone, Note: m.Note, Source: m.Source, AsOf: m.AsOf}
		if m.EFA {
			mc.Fabric = FabricEFA
		}
		c.machines["eks"][m.Name] = mc
	}
	for _, f := range c.aws.InstanceFamilies {
		if _, ok := c.products[f.GPU]; !ok {
			return fmt.Errorf("instance family %s: unknown gpu %q", f.Family, f.GPU)
		}
		// Listed sizes of the family take its minimum driver branch.
		for name, mc := range c.machines["eks"] {
			if mc.Series == f.Family {
				if mc.GPU != f.GPU {
					return fmt.Errorf("instance %s: gpu %s, but family %s has %s", name, mc.GPU, f.Family, f.GPU)
				}
				mc.MinDriverBranch = f.MinDriverBranch
				c.machines["eks"][name] = mc
			}
		}
	}
	c.amis = map[string]*amiFact{}
	for i := range c.aws.AMITypes {
		a := &c.aws.AMITypes[i]
		if a.EndOfSupport != "" {
			if a.endOfSupport, err = parseDate(a.EndOfSupport); err != nil {
				return fmt.Errorf("ami %s: %w", a.Name, err)
			}
		}
		for _, s := range []string{a.Driver, a.DriverCurrent, a.KubernetesMin, a.KubernetesMax, a.Glibc} {
			if s != "" {
				if _, err := parseV("ami "+a.Name, s); err != nil {
					return err
				}
			}
		}
		c.amis[a.Name] = a
	}
	for i := range c.aws.EKSVersions.Versions {
		v := &c.aws.EKSVersions.Versions[i]
		if v.EndStandard != "" {
			if v.endStandard, err = parseDate(v.EndStandard); err != nil {
				return err
			}
		}
		if v.EndExtended != "" {
			if v.endExtended, err = parseDate(v.EndExtended); err != nil {
				return err
			}
		}
	}
	if err := c.indexGKE(); err != nil {
		return err
	}
	for i := range c.operator.GPUOperator.Releases {
		r := &c.operator.GPUOperator.Releases[i]
		if r.version, err = parseV("gpu operator", r.Version); err != nil {
			return err
		}
		for _, s := range append([]string{r.DefaultDriver}, r.Drivers...) {
			if _, err := parseV("gpu operator "+r.Version+" driver", s); err != nil {
				return err
			}
		}
		if c := r.Components; c == nil || c.Driver == nil || c.Toolkit == nil || c.DevicePlugin == nil || c.DCGMExporter == nil || c.MIGManager == nil || c.CDI == nil {
			return fmt.Errorf("gpu operator %s: components must give driver, toolkit, device_plugin, dcgm_exporter, mig_manager and cdi", r.Version)
		}
		for _, rg := range []string{r.Kubernetes, r.KubernetesCSP} {
			if rg != "" {
				if _, _, err := parseRange(rg); err != nil {
					return fmt.Errorf("gpu operator %s: %w", r.Version, err)
				}
			}
		}
	}
	sort.Slice(c.operator.GPUOperator.Releases, func(i, j int) bool {
		return c.operator.GPUOperator.Releases[i].version.Less(c.operator.GPUOperator.Releases[j].version)
	})
	for i := range c.operator.DevicePlugin.Releases {
		r := &c.operator.DevicePlugin.Releases[i]
		if r.version, err = parseV("device plugin", r.Version); err != nil {
			return err
		}
	}
	if _, err := parseV("gpu operator min_glibc", c.operator.GPUOperator.MinGlibc); err != nil {
		return err
	}
	for _, l := range c.operator.DevicePlugin.NodeLabels {
		switch l.Value {
		case "arch", "machine-type", "pool-name", "capacity", "accelerator":
		default:
			return fmt.Errorf("node label %s: unknown value %q", l.Key, l.Value)
		}
	}
	c.ncclKnown = map[string]bool{}
	for _, k := range c.nccl.Env.Known {
		c.ncclKnown[k] = true
	}
	c.gfdLabels = map[string]bool{}
	for _, k := range c.operator.DevicePlugin.GFDLabels.Keys {
		c.gfdLabels[k] = true
	}
	for _, b := range c.nccl.Baselines.SKUs {
		if _, ok := c.products[b.GPU]; !ok {
			return fmt.Errorf("nccl baseline %s: unknown gpu %q", b.SKU, b.GPU)
		}
		if b.NoFigure != "" {
			if b.MinBusBW != 0 || len(b.Figures) > 0 || len(b.GPUMatch) == 0 || b.Source == "" || b.AsOf == "" {
				return fmt.Errorf("nccl baseline %s: no_figure takes gpu_match, source and as_of, and no minimum or figures", b.SKU)
			}
			continue
		}
		if b.GPUs <= 0 || b.MinBusBW <= 0 || b.MinAlgo == "" || len(b.GPUMatch) == 0 || len(b.Figures) == 0 {
			return fmt.Errorf("nccl baseline %s: needs gpus, gpu_match, min_busbw_gbps, min_algo and figures", b.SKU)
		}
	}
	fabrics := map[string]bool{}
	for _, f := range c.nccl.Fabrics {
		fabrics[f.Name] = true
	}
	for _, f := range c.nccl.MultiNode.Fabrics {
		if !fabrics[f.Fabric] {
			return fmt.Errorf("multi-node baseline: unknown fabric %q", f.Fabric)
		}
		for _, m := range f.Machines {
			mc, ok := c.machines["gke"][m]
			if !ok {
				mc, ok = c.machines["eks"][m]
			}
			if !ok || mc.Fabric != f.Fabric {
				return fmt.Errorf("multi-node baseline %s: machine %s is not a machine of that fabric", f.Fabric, m)
			}
		}
		switch {
		case f.Source == "" || f.AsOf == "" || len(f.Machines) == 0 || f.GPUsPerNode <= 0:
			return fmt.Errorf("multi-node baseline %s: needs machines, gpus_per_node, source and as_of", f.Fabric)
		case f.NoFigure != "" && (f.MinBusBW != 0 || len(f.Figures) > 0):
			return fmt.Errorf("multi-node baseline %s: no_figure takes no minimum or figures", f.Fabric)
		case f.NoFigure == "" && (f.MinBusBW <= 0 || f.MinAlgo == "" || f.MinBytes <= 0 || len(f.Figures) == 0):
			return fmt.Errorf("multi-node baseline %s: needs min_busbw_gbps, min_algo, min_bytes and figures (or no_figure)", f.Fabric)
		}
	}
	return nil
}

// parseRange reads a Kubernetes range "1.30-1.34".
func parseRange(s string) (lo, hi Version, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return nil, nil, fmt.Errorf("range %q is not LOW-HIGH", s)
	}
	if lo, err = ParseVersion(a); err != nil {
		return nil, nil, err
	}
	if hi, err = ParseVersion(b); err != nil {
		return nil, nil, err
	}
	return lo, hi, nil
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

func (c *catalog) indexGKE() error {
	var err error
	di := &c.gcp.GKE.DriverInstall
	if di.unsetFrom, err = parseGKEVersion(di.UnsetInstallsDefaultFrom); err != nil {
		return fmt.Errorf("gke driver_install: %w", err)
	}
	if di.napFrom, err = parseGKEVersion(di.NAPInstallsDefaultFrom); err != nil {
		return fmt.Errorf("gke driver_install: %w", err)
	}
	for i := range di.Minors {
		m := &di.Minors[i]
		if m.minor, err = parseV("gke driver minor", m.Minor); err != nil {
			return err
		}
		if m.COSDefault != 0 && !slicesContains(m.COSBranches, m.COSDefault) {
			return fmt.Errorf("gke driver minor %s: cos_default R%d is not among cos_branches", m.Minor, m.COSDefault)
		}
		if m.UbuntuDefault != 0 && len(m.UbuntuBranches) > 0 {
			return fmt.Errorf("gke driver minor %s: ubuntu_default and ubuntu_branches exclude each other", m.Minor)
		}
	}
	rs := &c.gcp.GKE.ReleaseSchedule
	for i := range rs.Minors {
		m := &rs.Minors[i]
		if m.minor, err = parseV("gke release minor", m.Minor); err != nil {
			return err
		}
		if m.regular, err = parseDate(m.Regular); err != nil {
			return fmt.Errorf("gke release %s: %w", m.Minor, err)
		}
		if m.endStandard, err = parseDate(m.EndStandard); err != nil {
			return fmt.Errorf("gke release %s: %w", m.Minor, err)
		}
		if i > 0 && !m.minor.Less(rs.Minors[i-1].minor) {
			return fmt.Errorf("gke release schedule: %s out of order (newest first)", m.Minor)
		}
	}
	if len(rs.Minors) == 0 || rs.ExtendedMonths <= 0 {
		return fmt.Errorf("gke release schedule: needs minors and extended_months")
	}
	if _, err := parseV("gke extended_from", rs.ExtendedFrom); err != nil {
		return err
	}
	return nil
}

func slicesContains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
