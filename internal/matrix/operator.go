package matrix

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// operator.yaml: the GPU Operator's releases and chart defaults, the device
// plugin's releases, node labels and GFD labels, the DCGM exporter's chart
// defaults; their index and the lookups over a spec's pools.

// operatorFile is data/operator.yaml as decoded; indexed by (*catalog).indexOperator.
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

// indexOperator checks and indexes operator.yaml: the GPU Operator's
// releases (versions, drivers, components and Kubernetes ranges; sorted
// oldest first), the device plugin's releases, the Operator's minimum
// glibc, the node labels' values and the GFD label keys.
func (c *catalog) indexOperator() error {
	op := &c.operator.GPUOperator
	for i := range op.Releases {
		if err := op.Releases[i].index(); err != nil {
			return err
		}
	}
	sort.Slice(op.Releases, func(i, j int) bool { return op.Releases[i].version.Less(op.Releases[j].version) })
	if _, err := parseV("gpu operator min_glibc", op.MinGlibc); err != nil {
		return err
	}
	dp := &c.operator.DevicePlugin
	for i := range dp.Releases {
		r := &dp.Releases[i]
		var err error
		if r.version, err = parseV("device plugin", r.Version); err != nil {
			return err
		}
	}
	for _, l := range dp.NodeLabels {
		switch l.Value {
		case "arch", "machine-type", "pool-name", "capacity", "accelerator":
		default:
			return fmt.Errorf("node label %s: unknown value %q", l.Key, l.Value)
		}
	}
	c.gfdLabels = map[string]bool{}
	for _, k := range dp.GFDLabels.Keys {
		c.gfdLabels[k] = true
	}
	return nil
}

// index parses the release's version, default and supported drivers and
// Kubernetes ranges, and checks its chart components give every switch.
func (r *operatorFact) index() error {
	var err error
	if r.version, err = parseV("gpu operator", r.Version); err != nil {
		return err
	}
	for _, s := range append([]string{r.DefaultDriver}, r.Drivers...) {
		if _, err := parseV("gpu operator "+r.Version+" driver", s); err != nil {
			return err
		}
	}
	if !r.Components.complete() {
		return fmt.Errorf("gpu operator %s: components must give driver, toolkit, device_plugin, dcgm_exporter, mig_manager and cdi", r.Version)
	}
	for _, rg := range []string{r.Kubernetes, r.KubernetesCSP} {
		if rg != "" {
			if _, _, err := parseRange(rg); err != nil {
				return fmt.Errorf("gpu operator %s: %w", r.Version, err)
			}
		}
	}
	return nil
}

// complete reports whether the components give every switch.
func (o *operatorComponents) complete() bool {
	if o == nil {
		return false
	}
	for _, b := range []*bool{o.Driver, o.Toolkit, o.DevicePlugin, o.DCGMExporter, o.MIGManager, o.CDI} {
		if b == nil {
			return false
		}
	}
	return true
}

// OperatorComponents are the GPU Operator's component switches
// (<component>.enabled in the gpu-operator chart's values).
type OperatorComponents struct {
	// Release is the GPU Operator release whose chart defaults fill what
	// the spec leaves unset ("" when the Operator is not enabled).
	Release      string
	Driver       bool
	Toolkit      bool
	DevicePlugin bool
	DCGMExporter bool
	MIGManager   bool
	CDI          bool
	// Source is where the chart defaults were read (values.yaml at the
	// release's tag).
	Source string
}

// OperatorChartDefaults returns the default switches of the gpu-operator
// chart at version ("v26.7.0" or "26.7.0"): the release's own; for a version
// the matrix does not list, those of the newest listed release before it;
// for an empty, unparsable or older version, those of the newest listed
// release (the chart an unpinned install gets).
func OperatorChartDefaults(version string) OperatorComponents {
	rels := cat().operator.GPUOperator.Releases // sorted oldest first
	pick := &rels[len(rels)-1]
	if x, err := ParseVersion(version); err == nil {
		for i := range rels {
			if !x.Less(rels[i].version) {
				pick = &rels[i] // the newest release not newer than x
			}
		}
	}
	c := pick.Components
	src := pick.Source
	if pick.Source2 != "" && !strings.HasSuffix(src, "values.yaml") {
		src = pick.Source2
	}
	return OperatorComponents{Release: pick.Version, Driver: *c.Driver, Toolkit: *c.Toolkit, DevicePlugin: *c.DevicePlugin,
		DCGMExporter: *c.DCGMExporter, MIGManager: *c.MIGManager, CDI: *c.CDI, Source: src}
}

// OperatorSwitches returns the components the spec's GPU Operator runs:
// each as addons.gpuOperator sets it, else the chart default of the pinned
// version (OperatorChartDefaults). The spec has no cdi switch of its own,
// so CDI is the chart default. All false when the Operator is not enabled.
// Per-pool labels can still switch operands off on a pool (see
// OperatorDriverOn).
func OperatorSwitches(s *spec.Spec) OperatorComponents {
	op := s.Addons.GPUOperator
	if !op.Enabled {
		return OperatorComponents{}
	}
	d := OperatorChartDefaults(op.Version)
	d.Driver = spec.EnabledOr(op.Driver.Enabled, d.Driver)
	d.Toolkit = spec.EnabledOr(op.Toolkit.Enabled, d.Toolkit)
	d.DevicePlugin = spec.EnabledOr(op.DevicePlugin.Enabled, d.DevicePlugin)
	d.DCGMExporter = spec.EnabledOr(op.DCGMExporter.Enabled, d.DCGMExporter)
	d.MIGManager = spec.EnabledOr(op.MIGManager.Enabled, d.MIGManager)
	return d
}

// OperatorOperandsOn reports whether the GPU Operator's operands (driver,
// toolkit, validator) run on pool p's nodes: the Operator is enabled and
// gpuctl does not label the pool out of them (spec.NodeLabels sets
// nvidia.com/gpu.deploy.operands=false where the platform owns the GPU
// stack, so that the Operator serves only its own pools). When every pool
// would be labelled out, the Operator has no pool of its own: the spec is
// judged as the Operator running on every pool, as the device plugin check
// judges its plugin, since an Operator enabled for no node is not what the
// spec means.
func OperatorOperandsOn(s *spec.Spec, p *spec.NodePool) bool {
	if !s.Addons.GPUOperator.Enabled {
		return false
	}
	if s.NodeLabels(p)[spec.LabelOperatorDeployOperands] != "false" {
		return true
	}
	for i := range s.NodePools {
		if s.NodeLabels(&s.NodePools[i])[spec.LabelOperatorDeployOperands] != "false" {
			return false
		}
	}
	return true
}

// OperatorDriverOn reports whether the GPU Operator installs the driver on
// pool p's nodes: its driver component is on (set, or the chart default)
// and its operands run there.
func OperatorDriverOn(s *spec.Spec, p *spec.NodePool) bool {
	return OperatorSwitches(s).Driver && OperatorOperandsOn(s, p)
}

// Selection is whether a device plugin's node selector selects a pool's
// nodes.
type Selection int

// Selection values.
const (
	// Selected: the pool's nodes carry every label of the selector (or the
	// selector is empty).
	Selected Selection = iota
	// NotSelected: a label of the selector is one the spec knows for the
	// pool's nodes, with another value or absent.
	NotSelected
	// SelectionUnknown: the selector names a label the spec cannot know for
	// the pool (e.g. one that NFD or GFD writes); the rest match.
	SelectionUnknown
)

// PoolLabels returns the labels the spec knows pool p's nodes carry: the
// pool's own and gpuctl's (spec.NodeLabels), and those the platform sets on
// every node of a pool (kubelet, EKS managed node groups, GKE node pools)
// where the spec determines the value.
func PoolLabels(s *spec.Spec, p *spec.NodePool) map[string]string {
	out := s.NodeLabels(p)
	for _, l := range cat().operator.DevicePlugin.NodeLabels {
		if !l.setOn(s.Provider) {
			continue
		}
		if val := poolLabelValue(s, p, l.Value); val != "" {
			if _, own := out[l.Key]; !own {
				out[l.Key] = val
			}
		}
	}
	return out
}

// setOn reports whether the label is set on the nodes of provider: a
// kubelet label on every provider, an EKS or GKE label on its own.
func (l nodeLabelFact) setOn(provider string) bool {
	switch l.SetBy {
	case spec.ProviderEKS, spec.ProviderGKE:
		return l.SetBy == provider
	}
	return true
}

// poolLabelValue is the value of the pool fact value (a node label's
// value: pool-name, machine-type, arch, capacity, accelerator) for pool p,
// "" where the spec does not determine it (a pool of several machine
// types has no one machine type).
func poolLabelValue(s *spec.Spec, p *spec.NodePool, value string) string {
	mts := p.MachineTypes()
	switch value {
	case "pool-name":
		return p.Name
	case "machine-type":
		if len(mts) == 1 {
			return mts[0]
		}
	case "arch":
		if len(mts) > 0 {
			if m, ok := LookupMachine(s.Provider, mts[0]); ok {
				return m.Arch
			}
		}
	case "capacity":
		return capacityLabel(p.Capacity)
	case "accelerator":
		return PoolAcceleratorType(s.Provider, p)
	}
	return ""
}

// capacityLabel is the capacity type label's value for a pool's capacity
// (SPOT, CAPACITY_BLOCK, ON_DEMAND; "" for a capacity it does not know).
func capacityLabel(c string) string {
	switch c {
	case spec.CapacitySpot:
		return "SPOT"
	case spec.CapacityCapacityBlock:
		return "CAPACITY_BLOCK"
	case spec.CapacityOnDemand, spec.CapacityReservation, "":
		return "ON_DEMAND"
	}
	return ""
}

// knownLabelKey reports whether the spec determines label key for every
// pool: a platform label, a gpuctl label, or a label some pool of the spec
// sets (a pool without it does not carry it).
func knownLabelKey(s *spec.Spec, key string) bool {
	for _, l := range cat().operator.DevicePlugin.NodeLabels {
		if l.Key == key && (l.SetBy == "kubernetes" || l.SetBy == s.Provider) {
			return true
		}
	}
	for i := range s.NodePools {
		if _, ok := s.NodeLabels(&s.NodePools[i])[key]; ok {
			return true
		}
	}
	return false
}

// HelmPluginSelects judges whether addons.devicePlugin.nodeSelector selects
// pool p's nodes, and returns the selector keys it could not judge.
func HelmPluginSelects(s *spec.Spec, p *spec.NodePool) (Selection, []string) {
	return SelectorSelects(s, p, s.Addons.DevicePlugin.NodeSelector)
}

// SelectorSelects judges whether a DaemonSet's nodeSelector sel selects
// pool p's nodes (PoolLabels), and returns the selector keys it could not
// judge.
func SelectorSelects(s *spec.Spec, p *spec.NodePool, sel map[string]string) (Selection, []string) {
	if len(sel) == 0 {
		return Selected, nil
	}
	labels := PoolLabels(s, p)
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		got, ok := labels[k]
		switch {
		case ok && got == sel[k]:
		case ok || knownLabelKey(s, k):
			return NotSelected, nil
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return SelectionUnknown, unknown
	}
	return Selected, nil
}
