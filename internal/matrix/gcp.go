package matrix

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// gcp.yaml: the GCE accelerator and machine types, and GKE's driver
// versions, driver installation, release schedule, image types, device
// plugin and release channels; their index (the GKE machines).

// gcpFile is data/gcp.yaml as decoded; indexed by (*catalog).indexGCP.
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
	// RDMANICGbps is each RDMA NIC's speed in Gb/s (0 where not captured).
	RDMANICGbps int `yaml:"rdma_nic_gbps"`
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
	COSLimits       []GKECOSLimit      `yaml:"cos_limits"`
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

// GKECOSLimit is a set of GKE machine types that work only up to a
// Container-Optimized OS milestone (COSMax, e.g. 121), with the milestones
// a source reports failing on them (Failing); Note quotes the sources.
type GKECOSLimit struct {
	Provenance   `yaml:",inline"`
	MachineTypes []string `yaml:"machine_types"`
	COSMax       int      `yaml:"cos_max"`
	Failing      []int    `yaml:"failing"`
}

// Sources returns the limit's source URLs.
func (l *GKECOSLimit) Sources() []string { return l.sources() }

// GKECOSLimitFor returns the COS limit of GKE machine type name, or nil
// when it has none.
func GKECOSLimitFor(name string) *GKECOSLimit {
	ls := cat().gcp.GKE.COSLimits
	for i := range ls {
		if slices.Contains(ls[i].MachineTypes, name) {
			return &ls[i]
		}
	}
	return nil
}

// GKECOSMilestone returns the Container-Optimized OS milestone GKE's nodes
// of the cluster's Kubernetes version run (125 for "1.35" or
// "1.35.1-gke.1396004"), from GKE's driver table, and the table's date; 0
// where the version is not given or the table does not say.
func GKECOSMilestone(kubernetesVersion string) (milestone int, asOf string) {
	g := clusterGKEVersion(kubernetesVersion)
	di := &cat().gcp.GKE.DriverInstall
	if g.minor == nil {
		return 0, di.tableDate()
	}
	for _, m := range di.Minors {
		if m.minor.Compare(g.minor) == 0 {
			return m.COS, di.tableDate()
		}
	}
	return 0, di.tableDate()
}

// GKENewestMinorOnCOS returns the newest GKE minor whose nodes run COS
// milestone cos or older ("1.33" for 121), from GKE's driver table; ""
// when the table maps no minor to such a milestone.
func GKENewestMinorOnCOS(cos int) string {
	for _, m := range cat().gcp.GKE.DriverInstall.Minors { // newest first
		if m.COS != 0 && m.COS <= cos {
			return m.Minor
		}
	}
	return ""
}

// gkeDriverMinor is one GKE minor's row of GKE's driver tables. A row
// with a source of its own (1.34 on) comes from the release notes of the
// COS milestone its nodes run (COS) rather than GKE's page.
type gkeDriverMinor struct {
	Provenance     `yaml:",inline"`
	Minor          string `yaml:"minor"`
	COS            int    `yaml:"cos"`
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

// indexGCP indexes gcp.yaml: the accelerator types by name (each of a
// known GPU), the machine types as GKE machines, and the GKE driver and
// release tables (indexGKE).
func (c *catalog) indexGCP() error {
	c.accelerators = map[string]*acceleratorFact{}
	for i := range c.gcp.AcceleratorTypes {
		a := &c.gcp.AcceleratorTypes[i]
		if _, ok := c.products[a.GPU]; !ok {
			return fmt.Errorf("accelerator %s: unknown gpu %q", a.Name, a.GPU)
		}
		c.accelerators[a.Name] = a
	}
	attach := map[string][]int{}
	for _, a := range c.gcp.N1Attachable.Accelerators {
		if _, ok := c.accelerators[a.Accelerator]; !ok {
			return fmt.Errorf("n1 attachable: unknown accelerator %q", a.Accelerator)
		}
		attach[a.Accelerator] = a.Counts
	}
	machines := map[string]Machine{}
	for _, m := range c.gcp.MachineTypes {
		mc, err := c.gkeMachine(m, attach)
		if err != nil {
			return err
		}
		machines[m.Name] = mc
	}
	c.setMachines(spec.ProviderGKE, machines)
	return c.indexGKE()
}

// gkeMachine is the Machine of machine type m: N1 (attachable) takes the
// attachable accelerators, any other its accelerator's GPU and count.
// Arch defaults to amd64, Fabric to none, Series to the name's prefix.
func (c *catalog) gkeMachine(m gcpMachineFact, attach map[string][]int) (Machine, error) {
	mc := Machine{Provider: spec.ProviderGKE, Name: m.Name, Series: m.Series, Arch: m.Arch, Fabric: m.Fabric,
		NICs: m.NICs, RDMANICs: m.RDMANICs, RDMANICGbps: m.RDMANICGbps, Note: m.Note, Source: m.Source, AsOf: m.AsOf, Spot: true}
	if mc.Arch == "" {
		mc.Arch = "amd64"
	}
	if mc.Fabric == "" {
		mc.Fabric = FabricNone
	}
	if m.Attachable {
		mc.Attachable = attach
		return mc, nil
	}
	a, ok := c.accelerators[m.Accelerator]
	if !ok {
		return Machine{}, fmt.Errorf("machine %s: unknown accelerator %q", m.Name, m.Accelerator)
	}
	mc.AcceleratorType, mc.GPU, mc.GPUCount, mc.GPUFraction = a.Name, a.GPU, m.Count, m.Fraction
	if mc.Series == "" {
		mc.Series = strings.ToUpper(strings.SplitN(m.Name, "-", 2)[0])
	}
	return mc, nil
}

// indexGKE parses gcp.yaml's GKE driver installation table and release
// schedule.
func (c *catalog) indexGKE() error {
	if err := c.gcp.GKE.DriverInstall.index(); err != nil {
		return err
	}
	return c.gcp.GKE.ReleaseSchedule.index()
}

// index parses the GKE versions of the driver installation table and
// checks each minor's row: its COS default among its COS branches, and an
// Ubuntu default or Ubuntu branches, not both.
func (di *gkeDriverInstall) index() error {
	var err error
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
		if m.COSDefault != 0 && !slices.Contains(m.COSBranches, m.COSDefault) {
			return fmt.Errorf("gke driver minor %s: cos_default R%d is not among cos_branches", m.Minor, m.COSDefault)
		}
		if m.UbuntuDefault != 0 && len(m.UbuntuBranches) > 0 {
			return fmt.Errorf("gke driver minor %s: ubuntu_default and ubuntu_branches exclude each other", m.Minor)
		}
	}
	return nil
}

// index parses the release schedule's minors and dates, newest minor
// first, and checks it has minors and extended_months.
func (rs *gkeReleaseSchedule) index() error {
	for i := range rs.Minors {
		m := &rs.Minors[i]
		if err := m.index(); err != nil {
			return err
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

// index parses the minor and its regular and end-of-standard dates.
func (m *gkeReleaseMinor) index() error {
	var err error
	if m.minor, err = parseV("gke release minor", m.Minor); err != nil {
		return err
	}
	if m.regular, err = parseDate(m.Regular); err != nil {
		return fmt.Errorf("gke release %s: %w", m.Minor, err)
	}
	if m.endStandard, err = parseDate(m.EndStandard); err != nil {
		return fmt.Errorf("gke release %s: %w", m.Minor, err)
	}
	return nil
}
