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
// stack).
func OperatorOperandsOn(s *spec.Spec, p *spec.NodePool) bool {
	return s.Addons.GPUOperator.Enabled && s.NodeLabels(p)[spec.LabelOperatorDeployOperands] != "false"
}

// OperatorDriverOn reports whether the GPU Operator installs the driver on
// pool p's nodes: its driver component is on (set, or the chart default)
// and its operands run there.
func OperatorDriverOn(s *spec.Spec, p *spec.NodePool) bool {
	return OperatorSwitches(s).Driver && OperatorOperandsOn(s, p)
}
