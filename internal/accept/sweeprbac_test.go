package accept

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestBuildRBACForSweepBeyondMark: the sweep gets marking's permissions
// and, beyond them, exactly nodes/status patch cluster-wide and, with
// --records-configmap only, ConfigMaps get, create and update in the probe
// namespace.
func TestBuildRBACForSweepBeyondMark(t *testing.T) {
	markRole, mark := BuildRBACFor("gpuctl-acceptance", RBACFeatures{Mark: true})
	role, cr := BuildRBACFor("gpuctl-acceptance", RBACFeatures{Sweep: true, RecordsConfigMap: true})
	extra := func(got, base []rbacv1.PolicyRule) []rbacv1.PolicyRule {
		var out []rbacv1.PolicyRule
		for _, r := range got {
			if !slices.ContainsFunc(base, func(b rbacv1.PolicyRule) bool {
				return slices.Equal(b.Resources, r.Resources) && slices.Equal(b.Verbs, r.Verbs)
			}) {
				out = append(out, r)
			}
		}
		return out
	}
	if x := extra(cr.Rules, mark.Rules); len(x) != 1 || x[0].Resources[0] != "nodes/status" || !slices.Equal(x[0].Verbs, []string{"patch"}) || len(cr.Rules) != len(mark.Rules)+1 {
		t.Errorf("sweep ClusterRole adds %+v to --mark's, want nodes/status patch only", x)
	}
	if x := extra(role.Rules, markRole.Rules); len(x) != 1 || x[0].Resources[0] != "configmaps" || !slices.Equal(x[0].Verbs, []string{"get", "create", "update"}) {
		t.Errorf("sweep Role adds %+v, want configmaps get, create, update", x)
	}
	if pvcRole, _ := BuildRBACFor("gpuctl-acceptance", RBACFeatures{Sweep: true}); len(pvcRole.Rules) != len(markRole.Rules) {
		t.Errorf("sweep without --records-configmap: Role %+v, want --mark's %+v", pvcRole.Rules, markRole.Rules)
	}
	if er := BuildMarkEventRole("gpuctl-acceptance", RBACFeatures{Sweep: true}); er == nil || er.Namespace != EventNamespace {
		t.Errorf("sweep without its Events Role in %s: %+v", EventNamespace, er)
	}
}

// TestSpecKnowsEveryStage holds spec.AcceptStages, what spec.acceptance
// may name, to the stage table (every stage ParseStage reads, in order), and the sweep's default stages to
// node-local stages of it.
func TestSpecKnowsEveryStage(t *testing.T) {
	var names []string
	for _, d := range stageTable {
		names = append(names, string(d.name))
	}
	if !slices.Equal(names, spec.AcceptStages) {
		t.Errorf("spec.AcceptStages = %v, the stage table has %v", spec.AcceptStages, names)
	}
	for _, n := range spec.DefaultAcceptanceStages {
		st, err := ParseStage(n)
		if err != nil || IsFleetStage(st) {
			t.Errorf("default sweep stage %q: %v (fleet %v)", n, err, IsFleetStage(st))
		}
	}
}

// TestPodSecurityLevel: the quick node-local stages pass restricted; dcgm
// (nv-hostengine as root) needs baseline, --allow-privileged privileged.
func TestPodSecurityLevel(t *testing.T) {
	for _, c := range []struct {
		priv   bool
		stages []Stage
		want   string
	}{
		{false, []Stage{StageKubernetes, StageInventory, StageTopology, StageCUDA}, "restricted"},
		{false, []Stage{StageKubernetes}, "restricted"},
		{false, []Stage{StageInventory, StageDCGM}, "baseline"},
		{true, []Stage{StageInventory}, "privileged"},
	} {
		if got := PodSecurityLevel(c.priv, c.stages); got != c.want {
			t.Errorf("PodSecurityLevel(%v, %v) = %s, want %s", c.priv, c.stages, got, c.want)
		}
	}
}
