package accept

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// TestJobsMeetPodSecurity evaluates the probe pods with Kubernetes' own Pod
// Security Standards checks (k8s.io/pod-security-admission): without
// --allow-privileged the inventory, topology, cuda and nccl pods pass
// "restricted"; every pod without --allow-privileged passes "baseline"; the
// privileged probes pass only "privileged".
func TestJobsMeetPodSecurity(t *testing.T) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(level api.Level, st Stage, priv bool) (bool, []string) {
		s := testJobSpec(st)
		s.AllowPrivileged = priv
		pod := BuildJob(s).Spec.Template
		var why []string
		for _, r := range eval.EvaluatePod(api.LevelVersion{Level: level, Version: api.LatestVersion()}, &pod.ObjectMeta, &pod.Spec) {
			if !r.Allowed {
				why = append(why, r.ForbiddenReason+": "+r.ForbiddenDetail)
			}
		}
		return len(why) == 0, why
	}
	for _, st := range []Stage{StageInventory, StageTopology, StageCUDA, StageNCCL, StageNetwork} {
		if ok, why := allowed(api.LevelRestricted, st, false); !ok {
			t.Errorf("%s: rejected by restricted: %v", st, why)
		}
	}
	for _, st := range []Stage{StageInventory, StageTopology, StageCUDA, StageNCCL, StageDCGM, StageNetwork} {
		if ok, why := allowed(api.LevelBaseline, st, false); !ok {
			t.Errorf("%s: rejected by baseline: %v", st, why)
		}
	}
	if ok, why := allowed(api.LevelRestricted, StageNetwork, true); !ok {
		t.Errorf("network with --allow-privileged: rejected by restricted: %v", why)
	}
	if ok, _ := allowed(api.LevelBaseline, StageInventory, true); ok {
		t.Error("the privileged dmesg probe passes baseline; PodSecurityProblem assumes it does not")
	}
	if ok, _ := allowed(api.LevelRestricted, StageDCGM, false); ok {
		t.Error("the dcgm probe passes restricted; PodSecurityProblem assumes it does not")
	}
}

// TestPodSecurityProblem: a namespace whose PodSecurity admission would
// reject the probe pods is refused before any Job is created: the Job
// controller cannot create the pods, and each stage used to wait for its
// whole timeout ("no pod was created") without saying why.
func TestPodSecurityProblem(t *testing.T) {
	ns := func(level string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gpuctl", Labels: map[string]string{"pod-security.kubernetes.io/enforce": level}}}
	}
	all := []Stage{StageKubernetes, StageInventory, StageTopology, StageCUDA, StageNCCL}
	for _, c := range []struct {
		level      string
		privileged bool
		stages     []Stage
		refused    bool
	}{
		{"restricted", false, all, false}, // the unprivileged probes run as nobody
		{"restricted", false, append(all, StageDCGM), true},
		{"restricted", true, all, true},
		{"baseline", false, all, false},
		{"baseline", true, all, true},
		{"baseline", true, []Stage{StageCUDA}, false},
		{"privileged", true, all, false},
		{"", true, all, false},
	} {
		if got := PodSecurityProblem(ns(c.level), c.privileged, c.stages) != ""; got != c.refused {
			t.Errorf("%q privileged=%v %v: refused %v, want %v", c.level, c.privileged, c.stages, got, c.refused)
		}
	}
	if PodSecurityProblem(nil, true, all) != "" {
		t.Error("no namespace object, yet a problem")
	}
}

func TestPrepareNamespace(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset()
	if err := PrepareNamespace(ctx, c, "gpuctl", false, false, DefaultStages); err == nil || !strings.Contains(err.Error(), "namespace gpuctl does not exist (create it, or pass --create-namespace)") {
		t.Errorf("missing namespace: %v", err)
	}
	if err := PrepareNamespace(ctx, c, "gpuctl", true, false, DefaultStages); err != nil {
		t.Fatal(err)
	}
	got, err := c.CoreV1().Namespaces().Get(ctx, "gpuctl", metav1.GetOptions{})
	if err != nil || got.Labels[LabelManagedBy] != ManagedBy {
		t.Errorf("created namespace %v: %v", got, err)
	}
	r := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "locked", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}})
	if err := PrepareNamespace(ctx, r, "locked", true, false, append(DefaultStages, StageDCGM)); err == nil || !strings.Contains(err.Error(), `namespace locked enforces PodSecurity "restricted"`) {
		t.Errorf("restricted namespace with dcgm: %v", err)
	}
}
