package accept

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpuctl/gpuctl/internal/diag"
)

func markRef(v diag.Verdict, runID string) MarkRecordRef {
	return MarkRecordRef{RunID: runID, Verdict: v, Digest: "sha256:" + strings.Repeat("ab", 32), Time: time.Date(2026, 11, 29, 15, 44, 0, 0, time.UTC)}
}

func TestMarkFailThenPassUndoesOnlyWhatGpuctlAdded(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(gpuNode("gpu-node-1", 8))
	opt := MarkOptions{TaintOnFail: true, CordonOnFail: true}
	stages := []StageResult{{Name: StageKubernetes, Verdict: diag.Pass, Reason: "ok"}, {Name: StageInventory, Verdict: diag.Fail, Reason: "row remapping\n pending on GPU 3"}}
	m, err := Mark(ctx, c, "gpu-node-1", markRef(diag.Fail, "r1"), MarkReason(diag.Fail, stages), opt)
	if err != nil {
		t.Fatal(err)
	}
	if m.Label != "fail" || strings.Join(m.Added, ",") != "taint,cordon" || len(m.Removed) != 0 {
		t.Errorf("marked %+v", m)
	}
	n, _ := c.CoreV1().Nodes().Get(ctx, "gpu-node-1", metav1.GetOptions{})
	if n.Labels[LabelAccept] != "fail" || n.Annotations[AnnotationAcceptAdded] != "cordon,taint" || !n.Spec.Unschedulable {
		t.Errorf("node after FAIL: labels %v annotations %v unschedulable %v", n.Labels, n.Annotations, n.Spec.Unschedulable)
	}
	if !containsTaint(n.Spec.Taints, TaintUnaccepted) || !containsTaint(n.Spec.Taints, "nvidia.com/gpu") {
		t.Errorf("taints after FAIL %v", n.Spec.Taints)
	}
	var ref MarkRecordRef
	if err := json.Unmarshal([]byte(n.Annotations[AnnotationAcceptRecord]), &ref); err != nil || ref != markRef(diag.Fail, "r1") {
		t.Errorf("record annotation %q: %v", n.Annotations[AnnotationAcceptRecord], err)
	}
	ev, err := c.CoreV1().Events(EventNamespace).Get(ctx, m.Event, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Reason != "AcceptFailed" || ev.Type != corev1.EventTypeWarning || ev.InvolvedObject.Kind != "Node" || ev.InvolvedObject.Name != "gpu-node-1" ||
		ev.Message != "FAIL: inventory: row remapping pending on GPU 3" {
		t.Errorf("event %s %s %+v %q", ev.Reason, ev.Type, ev.InvolvedObject, ev.Message)
	}

	// A second FAIL adds nothing new and keeps what gpuctl added.
	m, err = Mark(ctx, c, "gpu-node-1", markRef(diag.Fail, "r2"), "FAIL", opt)
	if err != nil || len(m.Added) != 0 {
		t.Fatalf("second FAIL %+v %v", m, err)
	}
	n, _ = c.CoreV1().Nodes().Get(ctx, "gpu-node-1", metav1.GetOptions{})
	if n.Annotations[AnnotationAcceptAdded] != "cordon,taint" {
		t.Errorf("added after second FAIL %q", n.Annotations[AnnotationAcceptAdded])
	}

	// PASS removes the taint and cordon gpuctl added, keeps the node's own taint.
	m, err = Mark(ctx, c, "gpu-node-1", markRef(diag.Pass, "r3"), "PASS", opt)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.Removed, ",") != "taint,cordon" {
		t.Errorf("removed %v", m.Removed)
	}
	n, _ = c.CoreV1().Nodes().Get(ctx, "gpu-node-1", metav1.GetOptions{})
	if n.Labels[LabelAccept] != "pass" || n.Spec.Unschedulable || containsTaint(n.Spec.Taints, TaintUnaccepted) || !containsTaint(n.Spec.Taints, "nvidia.com/gpu") {
		t.Errorf("node after PASS: labels %v unschedulable %v taints %v", n.Labels, n.Spec.Unschedulable, n.Spec.Taints)
	}
	if _, ok := n.Annotations[AnnotationAcceptAdded]; ok {
		t.Errorf("accept-added left after PASS: %v", n.Annotations)
	}
	ev, err = c.CoreV1().Events(EventNamespace).Get(ctx, m.Event, metav1.GetOptions{})
	if err != nil || ev.Reason != "AcceptPassed" || ev.Type != corev1.EventTypeNormal {
		t.Errorf("PASS event %+v %v", ev, err)
	}
}

func TestMarkPassKeepsIsolationGpuctlDidNotAdd(t *testing.T) {
	ctx := context.Background()
	node := gpuNode("gpu-node-1", 8)
	node.Spec.Unschedulable = true // cordoned by an operator
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: TaintUnaccepted, Effect: corev1.TaintEffectNoSchedule})
	c := fake.NewClientset(node)
	m, err := Mark(ctx, c, "gpu-node-1", markRef(diag.Pass, "r1"), "PASS", MarkOptions{TaintOnFail: true, CordonOnFail: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Removed) != 0 {
		t.Errorf("removed %v", m.Removed)
	}
	n, _ := c.CoreV1().Nodes().Get(ctx, "gpu-node-1", metav1.GetOptions{})
	if !n.Spec.Unschedulable || !containsTaint(n.Spec.Taints, TaintUnaccepted) || n.Labels[LabelAccept] != "pass" {
		t.Errorf("node %v %v %v", n.Spec.Unschedulable, n.Spec.Taints, n.Labels)
	}
	// A FAIL on a node already cordoned by someone else records no cordon.
	m, err = Mark(ctx, c, "gpu-node-1", markRef(diag.Fail, "r2"), "FAIL", MarkOptions{CordonOnFail: true})
	if err != nil || len(m.Added) != 0 {
		t.Errorf("FAIL on cordoned node %+v %v", m, err)
	}
	n, _ = c.CoreV1().Nodes().Get(ctx, "gpu-node-1", metav1.GetOptions{})
	if n.Annotations[AnnotationAcceptAdded] != "" {
		t.Errorf("accept-added %q", n.Annotations[AnnotationAcceptAdded])
	}
}

func TestMarkInconclusiveOnlyLabels(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(gpuNode("gpu-node-1", 8))
	m, err := Mark(ctx, c, "gpu-node-1", markRef(diag.Inconclusive, "r1"), "INCONCLUSIVE: cuda: image pull", MarkOptions{TaintOnFail: true, CordonOnFail: true})
	if err != nil || m.Label != "inconclusive" || len(m.Added) != 0 {
		t.Fatalf("%+v %v", m, err)
	}
	n, _ := c.CoreV1().Nodes().Get(ctx, "gpu-node-1", metav1.GetOptions{})
	if n.Spec.Unschedulable || containsTaint(n.Spec.Taints, TaintUnaccepted) {
		t.Errorf("INCONCLUSIVE isolated the node: %v %v", n.Spec.Unschedulable, n.Spec.Taints)
	}
	ev, _ := c.CoreV1().Events(EventNamespace).Get(ctx, m.Event, metav1.GetOptions{})
	if ev == nil || ev.Reason != "AcceptInconclusive" {
		t.Errorf("event %+v", ev)
	}
}

func TestMaxUnhealthy(t *testing.T) {
	for _, tc := range []struct {
		s                string
		unhealthy, total int
		want             bool
	}{
		{"", 100, 100, false},
		{"2", 2, 10, false},
		{"2", 3, 10, true},
		{"0", 1, 10, true},
		{"25%", 2, 8, false},
		{"25%", 3, 8, true},
		{"10%", 1, 10, false},
		{"10%", 2, 10, true},
	} {
		m, err := ParseMaxUnhealthy(tc.s)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Exceeded(tc.unhealthy, tc.total); got != tc.want {
			t.Errorf("%q %d/%d: %v", tc.s, tc.unhealthy, tc.total, got)
		}
	}
	for _, bad := range []string{"x", "-1", "101%", "%"} {
		if _, err := ParseMaxUnhealthy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBuildRBACForMark(t *testing.T) {
	_, plain := BuildRBAC("gpuctl")
	_, marked := BuildRBACFor("gpuctl", RBACFeatures{Mark: true})
	has := func(rules []rbacv1.PolicyRule, res, verb string) bool {
		for _, r := range rules {
			for _, rs := range r.Resources {
				for _, v := range r.Verbs {
					if rs == res && v == verb {
						return true
					}
				}
			}
		}
		return false
	}
	if has(plain.Rules, "nodes", "patch") || has(plain.Rules, "events", "create") {
		t.Errorf("plain RBAC asks for marking's verbs: %+v", plain.Rules)
	}
	if !has(marked.Rules, "nodes", "patch") || !has(marked.Rules, "events", "create") {
		t.Errorf("--mark RBAC lacks nodes patch / events create: %+v", marked.Rules)
	}
	if len(marked.Rules) != len(plain.Rules)+2 {
		t.Errorf("--mark adds %d rules, want 2", len(marked.Rules)-len(plain.Rules))
	}
}
