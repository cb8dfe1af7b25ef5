package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
	"github.com/gpuctl/gpuctl/internal/spec/spectest"
)

func TestEKS136Support(t *testing.T) {
	cs := spectest.EKS()
	cs.Spec.KubernetesVersion = "1.36"
	for _, tc := range []struct {
		asOf string
		want diag.Severity // "" for none
		msg  string
	}{
		{"2026-12-01", "", ""},
		{"2027-09-01", diag.SeverityWarning, "extended support until 2028-08-02"},
		{"2028-09-01", diag.SeverityWarning, "ended extended support on 2028-08-02"},
	} {
		at, _ := time.Parse("2006-01-02", tc.asOf)
		fs := findRule(Validate(cs, Options{AsOf: at}), RuleEKSK8sSupport)
		switch {
		case tc.want == "" && len(fs) > 0:
			t.Errorf("%s: %v", tc.asOf, fs)
		case tc.want != "" && (len(fs) != 1 || fs[0].Severity != tc.want || !strings.Contains(fs[0].Message, tc.msg)):
			t.Errorf("%s: %v, want one %s with %q", tc.asOf, fs, tc.want, tc.msg)
		}
	}
}

func findRule(fs []diag.Finding, rule string) []diag.Finding {
	var out []diag.Finding
	for _, f := range fs {
		if f.Rule == rule && f.Severity != diag.SeverityInfo {
			out = append(out, f)
		}
	}
	return out
}

// TestDevicePluginNodeSelector: NVIDIA's chart runs only on the pools its
// nodeSelector selects, so a pool it leaves out gets no second plugin, and
// a pool that relies on it alone gets none.
func TestDevicePluginNodeSelector(t *testing.T) {
	twoPools := func(sel map[string]string) *spec.ClusterSpec {
		cs := spectest.EKS()
		cs.Spec.Addons.DevicePlugin.NodeSelector = sel
		cs.Spec.NodePools[0].Name = "al2023"
		cs.Spec.NodePools[0].Labels = map[string]string{"accelerator": "nvidia"}
		br := cs.Spec.NodePools[0]
		br.Name, br.OSImage, br.Labels = "bottlerocket", "BOTTLEROCKET_x86_64_NVIDIA", nil
		cs.Spec.NodePools = append(cs.Spec.NodePools, br)
		return cs
	}
	at := asOf20261129
	// No selector: the chart runs on the Bottlerocket pool too.
	if fs := findRule(Validate(twoPools(nil), Options{AsOf: at}), RulePluginConflict); len(fs) != 1 || !strings.Contains(fs[0].Message, "pool bottlerocket") {
		t.Errorf("no selector: %v, want one conflict on pool bottlerocket", fs)
	}
	// A selector on the AL2023 pool's label: no conflict, and the AL2023
	// pool keeps its plugin.
	fs := Validate(twoPools(map[string]string{"accelerator": "nvidia"}), Options{AsOf: at})
	if got := append(findRule(fs, RulePluginConflict), findRule(fs, RulePluginMissing)...); len(got) != 0 {
		t.Errorf("selector accelerator=nvidia: %v", got)
	}
	// A platform label (the managed node group's name) selects too; the pool
	// it leaves out, which has no plugin of its own, has none.
	cs := twoPools(map[string]string{"eks.amazonaws.com/nodegroup": "bottlerocket"})
	fs = Validate(cs, Options{AsOf: at})
	missing := findRule(fs, RulePluginMissing)
	if len(missing) != 1 || missing[0].Path != "spec.addons.devicePlugin.nodeSelector" || !strings.Contains(missing[0].Message, "pool al2023") {
		t.Errorf("selector on the bottlerocket node group: missing = %v, want one for pool al2023", missing)
	}
	if c := findRule(fs, RulePluginConflict); len(c) != 1 || !strings.Contains(c[0].Message, "pool bottlerocket") {
		t.Errorf("selector on the bottlerocket node group: conflict = %v, want one on pool bottlerocket", c)
	}
	// A label the spec cannot know (NFD's): counted as running, with a note.
	fs = Validate(twoPools(map[string]string{"feature.node.kubernetes.io/pci-10de.present": "true"}), Options{AsOf: at})
	if c := findRule(fs, RulePluginConflict); len(c) != 1 {
		t.Errorf("NFD selector: conflicts %v, want the Bottlerocket one (the chart is counted as running)", c)
	}
	notes := 0
	for _, f := range fs {
		if f.Rule == RuleUnknownFact && f.Path == "spec.addons.devicePlugin.nodeSelector" && strings.Contains(f.Message, "feature.node.kubernetes.io/pci-10de.present") {
			notes++
		}
	}
	if notes != 2 {
		t.Errorf("NFD selector: %d notes, want one per pool", notes)
	}
	// GKE: the accelerator label GKE sets on the pool's nodes.
	g := spectest.GKE()
	g.Spec.Addons.DevicePlugin = spec.DevicePlugin{Provider: "helm", Version: "0.20.0", NodeSelector: map[string]string{"cloud.google.com/gke-accelerator": "nvidia-l4"}}
	g.Spec.NodePools[0].GPU.Driver = "INSTALLATION_DISABLED"
	g.Spec.NodePools[0].Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
	if sel, _ := matrix.HelmPluginSelects(&g.Spec, &g.Spec.NodePools[0]); sel != matrix.Selected {
		t.Errorf("GKE accelerator selector: %v, want selected", sel)
	}
	g.Spec.Addons.DevicePlugin.NodeSelector["cloud.google.com/gke-accelerator"] = "nvidia-h100-80gb"
	if fs := findRule(Validate(g, Options{AsOf: at}), RulePluginMissing); len(fs) != 1 {
		t.Errorf("GKE selector on another accelerator: %v, want DEVICE-PLUGIN-MISSING", fs)
	}
}
