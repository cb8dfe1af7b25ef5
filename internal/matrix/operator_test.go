package matrix

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

func TestOperatorChartDefaults(t *testing.T) {
	for _, tc := range []struct {
		version, release string
		cdi              bool
	}{
		{"v25.3.1", "v25.3.1", false},
		{"25.3.2", "v25.3.2", false},
		{"v25.10.0", "v25.10.0", true},
		{"v26.3.2", "v26.3.2", true},
		{"v26.3.1", "v26.3.0", true}, // not listed: the newest release before it
		{"", "v26.7.0", true},        // unpinned: the newest chart
		{"v22.9.0", "v26.7.0", true}, // older than the data: the newest chart
		{"banana", "v26.7.0", true},
	} {
		d := OperatorChartDefaults(tc.version)
		if d.Release != tc.release || d.CDI != tc.cdi || !d.Driver || !d.Toolkit || !d.DevicePlugin || !d.DCGMExporter || !d.MIGManager {
			t.Errorf("OperatorChartDefaults(%q) = %+v, want release %s, cdi %v, the rest true", tc.version, d, tc.release, tc.cdi)
		}
		if !strings.HasSuffix(d.Source, "/blob/"+d.Release+"/deployments/gpu-operator/values.yaml") {
			t.Errorf("OperatorChartDefaults(%q).Source = %s, want the chart's values.yaml at %s", tc.version, d.Source, d.Release)
		}
	}
	// spec.NodeLabels assumes migManager.enabled defaults to true; so does
	// the message of every DRIVER-OWNER about the driver default.
	for _, r := range cat().operator.GPUOperator.Releases {
		if !*r.Components.MIGManager || !*r.Components.Driver {
			t.Errorf("%s: migManager/driver default false; spec.NodeLabels and the rules assume true", r.Version)
		}
	}
}

func TestOperatorSwitches(t *testing.T) {
	s := &spec.Spec{}
	if got := OperatorSwitches(s); got != (OperatorComponents{}) {
		t.Errorf("Operator not enabled: %+v, want all off", got)
	}
	s.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.3.2",
		Driver: spec.OperatorDriver{Enabled: ptr(false)}, DCGMExporter: spec.OperatorComponent{Enabled: ptr(false)}}
	got := OperatorSwitches(s)
	if got.Driver || got.DCGMExporter || !got.Toolkit || !got.DevicePlugin || !got.MIGManager || got.CDI || got.Release != "v25.3.2" {
		t.Errorf("OperatorSwitches = %+v: want driver and dcgmExporter off as set, the rest the v25.3.2 defaults", got)
	}
}

func TestOperatorReleases20261201(t *testing.T) {
	for _, tc := range []struct{ version, lo, hi, from string }{
		{"v25.3.1", "1.29", "1.33", "v25.3.1"},
		{"v25.3.2", "1.29", "1.33", "v25.3.2"},
		{"v25.3.3", "1.29", "1.33", "v25.3.2"}, // unlisted patch: the newest earlier one of its line
		{"v26.3.2", "1.32", "1.36", "v26.3.2"},
	} {
		lo, hi, from, ok := cat().operatorRange(tc.version, true)
		if !ok || lo.String() != tc.lo || hi.String() != tc.hi || from != tc.from {
			t.Errorf("operatorRange(%s) = %v-%v from %s (%v), want %s-%s from %s", tc.version, lo, hi, from, ok, tc.lo, tc.hi, tc.from)
		}
	}
	if r := cat().operatorRelease("v26.3.2"); r == nil || r.DefaultDriver != "580.126.20" || r.DevicePlugin != "v0.19.2" {
		t.Errorf("v26.3.2 = %+v", r)
	}
	if r := cat().operatorRelease("v25.3.1"); r == nil || r.DefaultDriver != "570.148.08" {
		t.Errorf("v25.3.1 = %+v", r)
	}
}
