package accept

import (
	"context"
	"encoding/json"
	"slices"
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

// TestBuildRBACForMark: --mark adds nodes patch to the ClusterRole and
// events create only in EventNamespace, where Mark creates the Events: a
// Role there (or a rule of the probe namespace's Role when that is it),
// never the ClusterRole.
func TestBuildRBACForMark(t *testing.T) {
	plainRole, plain := BuildRBAC("gpuctl")
	role, marked := BuildRBACFor("gpuctl", RBACFeatures{Mark: true})
	has := func(rules []rbacv1.PolicyRule, res, verb string) bool {
		for _, r := range rules {
			if slices.Contains(r.Resources, res) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	if has(plain.Rules, "nodes", "patch") || has(plain.Rules, "events", "create") || BuildMarkEventRole("gpuctl", RBACFeatures{}) != nil {
		t.Errorf("plain RBAC asks for marking's verbs: %+v", plain.Rules)
	}
	if !has(marked.Rules, "nodes", "patch") || len(marked.Rules) != len(plain.Rules)+1 {
		t.Errorf("--mark ClusterRole: %+v, want nodes patch added", marked.Rules)
	}
	if has(marked.Rules, "events", "create") || has(role.Rules, "events", "create") || len(role.Rules) != len(plainRole.Rules) {
		t.Errorf("events create granted cluster-wide or in the probe namespace gpuctl: %+v %+v", marked.Rules, role.Rules)
	}
	er := BuildMarkEventRole("gpuctl", RBACFeatures{Mark: true})
	if er == nil || er.Namespace != EventNamespace || len(er.Rules) != 1 || !has(er.Rules, "events", "create") || len(er.Rules[0].Verbs) != 1 {
		t.Fatalf("the Events Role: %+v, want events create in %s only", er, EventNamespace)
	}
	// The Events go where the Role is (markEvent).
	if ev := markEvent(gpuNode("n1", 8), MarkRecordRef{RunID: "r1", Verdict: diag.Pass}, "ok"); ev.Namespace != er.Namespace {
		t.Errorf("Event in %s, its Role in %s", ev.Namespace, er.Namespace)
	}
	// Probing in namespace default: one Role there has the rule.
	role, _ = BuildRBACFor(EventNamespace, RBACFeatures{Mark: true})
	if !has(role.Rules, "events", "create") || BuildMarkEventRole(EventNamespace, RBACFeatures{Mark: true}) != nil {
		t.Errorf("-n default --mark: Role %+v", role.Rules)
	}
}

// TestDryRunMarkRBACGolden is what `accept --dry-run --mark --bind
// user:alice --stages kubernetes,nccl-multi -o yaml` prints before the
// Jobs: the Role and ClusterRole, the Events Role in default, and a binding
// of each.
func TestDryRunMarkRBACGolden(t *testing.T) {
	sub, _ := ParseSubject("user:alice@example.com")
	var out []byte
	for i, d := range DryRunObjectsWith("gpuctl", nil, []Subject{sub}, RBACFeatures{Mark: true, Multi: true}) {
		y, err := MarshalYAML(d)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			out = append(out, "---\n"...)
		}
		out = append(out, y...)
	}
	compareGolden(t, "rbac-mark-bind.yaml", out)
}
