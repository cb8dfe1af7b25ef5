package matrix

import (
	"strings"

	"github.com/gpuctl/gpuctl/internal/spec"
)

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
	mts := p.MachineTypes()
	for _, l := range cat().operator.DevicePlugin.NodeLabels {
		if (l.SetBy == "eks" && s.Provider != spec.ProviderEKS) || (l.SetBy == "gke" && s.Provider != spec.ProviderGKE) {
			continue
		}
		val := ""
		switch l.Value {
		case "pool-name":
			val = p.Name
		case "machine-type":
			if len(mts) == 1 {
				val = mts[0]
			}
		case "arch":
			if len(mts) > 0 {
				if m, ok := LookupMachine(s.Provider, mts[0]); ok {
					val = m.Arch
				}
			}
		case "capacity":
			switch p.Capacity {
			case spec.CapacitySpot:
				val = "SPOT"
			case spec.CapacityCapacityBlock:
				val = "CAPACITY_BLOCK"
			case spec.CapacityOnDemand, spec.CapacityReservation, "":
				val = "ON_DEMAND"
			}
		case "accelerator":
			val = PoolAcceleratorType(s.Provider, p)
		}
		if val != "" {
			if _, own := out[l.Key]; !own {
				out[l.Key] = val
			}
		}
	}
	return out
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
	for _, k := range sortedKeys(sel) {
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
