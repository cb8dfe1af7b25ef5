package accept

import (
	"context"
	"errors"
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

// TestBusyReasons: only unfinished pods not managed by gpuctl that hold GPUs
// make a selected node busy.
func TestBusyReasons(t *testing.T) {
	gpuPod := func(ns, name, node string, gpus string, phase corev1.PodPhase, labels map[string]string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: corev1.PodSpec{NodeName: node,
			Containers: []corev1.Container{{Name: "c"}}}, Status: corev1.PodStatus{Phase: phase}}
		if gpus != "" {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{ResourceGPU: *resourceQuantity(int64(len(gpus)))}
		}
		return p
	}
	pods := []corev1.Pod{
		gpuPod("train", "b", "n1", "xx", corev1.PodRunning, nil),
		gpuPod("train", "a", "n1", "xxxxxxxx", corev1.PodPending, nil),
		gpuPod("gpuctl", "probe", "n2", "xxxxxxxx", corev1.PodRunning, map[string]string{LabelManagedBy: ManagedBy}),
		gpuPod("train", "done", "n3", "xxxxxxxx", corev1.PodSucceeded, nil),
		gpuPod("web", "cpu", "n3", "", corev1.PodRunning, nil),
		gpuPod("train", "other", "n9", "x", corev1.PodRunning, nil),
	}
	got := busyReasons(pods, map[string]bool{"n1": true, "n2": true, "n3": true})
	want := map[string]string{"n1": "busy: pod train/a holds 8 GPUs (and 1 more pods)"}
	if len(got) != 1 || got["n1"] != want["n1"] {
		t.Errorf("busy %v, want %v", got, want)
	}
}

// TestQuarantineCap: within N or P% of the selection (rounded up),
// counting the nodes already quarantined.
func TestQuarantineCap(t *testing.T) {
	one, _ := ParseMaxUnhealthy("1")
	q := NewQuarantineCap(one, 4, 0)
	if !q.Admit() || q.Admit() {
		t.Errorf("cap 1: want one admitted, then none")
	}
	pct, _ := ParseMaxUnhealthy("50%")
	if q = NewQuarantineCap(pct, 4, 1); !q.Admit() || q.Admit() {
		t.Errorf("50%% of 4 with 1 held: want one more admitted")
	}
	if !strings.Contains(q.Full(), "2 of 4 nodes are quarantined, --max-unhealthy 50% (2 of 4 nodes, rounded up)") {
		t.Errorf("full: %s", q.Full())
	}
}

// TestQuarantineCapPercentRoundsUp: a percentage of the selection rounds
// up, as a PodDisruptionBudget's maxUnavailable does: 10% of a pool of 4
// (or of 1) quarantines one node, 10% of 11 two, 0% none; no limit admits
// every node. --mark's Exceeded is unchanged: 1 of 4 is more than 10%.
func TestQuarantineCapPercentRoundsUp(t *testing.T) {
	for _, c := range []struct {
		limit       string
		total, held int
		max, admits int
	}{
		{"10%", 4, 0, 1, 1},
		{"10%", 1, 0, 1, 1},
		{"10%", 10, 0, 1, 1},
		{"10%", 11, 0, 2, 2},
		{"10%", 4, 1, 1, 0},
		{"25%", 4, 0, 1, 1},
		{"26%", 4, 0, 2, 2},
		{"100%", 3, 0, 3, 3},
		{"0%", 4, 0, 0, 0},
		{"0", 4, 0, 0, 0},
		{"2", 4, 0, 2, 2},
		{"10%", 0, 0, 0, 0},
		{"", 4, 0, -1, 4},
	} {
		m, err := ParseMaxUnhealthy(c.limit)
		if err != nil {
			t.Fatal(err)
		}
		q := NewQuarantineCap(m, c.total, c.held)
		admitted := 0
		for range c.total {
			if q.Admit() {
				admitted++
			}
		}
		if q.Max() != c.max || admitted != c.admits {
			t.Errorf("%q of %d with %d held: max %d, admitted %d; want %d, %d", c.limit, c.total, c.held, q.Max(), admitted, c.max, c.admits)
		}
	}
	ten, _ := ParseMaxUnhealthy("10%")
	if !ten.Exceeded(1, 4) {
		t.Errorf("--mark's rule changed: 1 of 4 not PASS must exceed 10%%")
	}
}

// TestSweepMarkQuarantinesAndReturns: a sweep FAIL quarantines (taint,
// cordon, reason) with an Event per change; a PASS returns only what gpuctl
// added and removes the reason.
func TestSweepMarkQuarantinesAndReturns(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(gpuNode("n1", 8))
	opt := MarkOptions{TaintOnFail: true, CordonOnFail: true, Sweep: true, QuarantineReason: "FAIL: inventory: row remap pending"}
	m, err := Mark(ctx, c, "n1", markRef(diag.Fail, "r1"), "FAIL: inventory: row remap pending", opt)
	if err != nil || len(m.Events) != 1 {
		t.Fatalf("FAIL: %+v %v", m, err)
	}
	n, _ := c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if !IsQuarantined(n) || !n.Spec.Unschedulable || n.Annotations[AnnotationQuarantineReason] != opt.QuarantineReason ||
		n.Annotations[AnnotationAcceptVerdict] != "FAIL" || n.Annotations[AnnotationAcceptTime] != "2026-11-29T15:44:00Z" ||
		n.Annotations[AnnotationRecordDigest] != markRef(diag.Fail, "r1").Digest {
		t.Errorf("after FAIL: %v %v", n.Annotations, n.Spec)
	}
	ev, err := c.CoreV1().Events(EventNamespace).Get(ctx, m.Events[0], metav1.GetOptions{})
	if err != nil || ev.Reason != "GPUQuarantined" || !strings.Contains(ev.Message, "added taint,cordon") {
		t.Errorf("quarantine event %+v %v", ev, err)
	}
	m, err = Mark(ctx, c, "n1", markRef(diag.Pass, "r2"), "PASS", MarkOptions{TaintOnFail: true, CordonOnFail: true, Sweep: true})
	if err != nil || len(m.Events) != 1 || strings.Join(m.Removed, ",") != "taint,cordon" {
		t.Fatalf("PASS: %+v %v", m, err)
	}
	n, _ = c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if _, ok := n.Annotations[AnnotationQuarantineReason]; ok || IsQuarantined(n) || n.Spec.Unschedulable || n.Annotations[AnnotationAcceptVerdict] != "PASS" {
		t.Errorf("after PASS: %v %v", n.Annotations, n.Spec)
	}
	if ev, _ := c.CoreV1().Events(EventNamespace).Get(ctx, m.Events[0], metav1.GetOptions{}); ev == nil || ev.Reason != "GPUReturned" {
		t.Errorf("return event %+v", ev)
	}
}

// TestAcceptedConditionTransitions: lastTransitionTime moves only when the
// status changes; the node's other conditions stay.
func TestAcceptedConditionTransitions(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(gpuNode("n1", 8))
	t1 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	ref := func(v diag.Verdict, at time.Time) MarkRecordRef {
		return MarkRecordRef{RunID: "r", Verdict: v, Digest: "sha256:" + strings.Repeat("cd", 32), Time: at}
	}
	steps := []struct {
		v          diag.Verdict
		at         time.Time
		status     corev1.ConditionStatus
		reason     string
		transition time.Time
	}{
		{diag.Fail, t1, corev1.ConditionFalse, "Fail", t1},
		{diag.Fail, t1.Add(24 * time.Hour), corev1.ConditionFalse, "Fail", t1},
		{diag.Pass, t1.Add(48 * time.Hour), corev1.ConditionTrue, "Pass", t1.Add(48 * time.Hour)},
		{diag.Inconclusive, t1.Add(72 * time.Hour), corev1.ConditionUnknown, "Inconclusive", t1.Add(72 * time.Hour)},
	}
	for _, s := range steps {
		if _, err := SetAcceptedCondition(ctx, c, "n1", ref(s.v, s.at), string(s.v)+": first problem"); err != nil {
			t.Fatal(err)
		}
		n, _ := c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		var got *corev1.NodeCondition
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == ConditionGPUAccepted {
				got = &n.Status.Conditions[i]
			}
		}
		if got == nil || got.Status != s.status || got.Reason != s.reason || !got.LastTransitionTime.Time.Equal(s.transition) ||
			!got.LastHeartbeatTime.Time.Equal(s.at) || !strings.HasSuffix(got.Message, "; record sha256:"+strings.Repeat("cd", 32)) {
			t.Errorf("%s at %s: condition %+v", s.v, s.at, got)
		}
		if !nodeReady(n) {
			t.Errorf("the Ready condition was lost: %+v", n.Status.Conditions)
		}
	}
	long := AcceptedCondition(nil, ref(diag.Fail, t1), strings.Repeat("x", 5000))
	if len(long.Message) > conditionMessageMax || !strings.HasSuffix(long.Message, strings.Repeat("cd", 32)) {
		t.Errorf("long message %d bytes, digest kept: %v", len(long.Message), strings.HasSuffix(long.Message, strings.Repeat("cd", 32)))
	}
}

// TestStoreRecordConfigMap: created, then updated; a record over 900 KiB
// and a ConfigMap gpuctl did not make are refused.
func TestStoreRecordConfigMap(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gpuctl-record-theirs", Namespace: "gpuctl"}})
	ref := markRef(diag.Pass, "r1")
	for _, body := range []string{`{"payload":"one"}`, `{"payload":"two"}`} {
		name, err := StoreRecordConfigMap(ctx, c, "gpuctl", "n1", []byte(body), ref)
		if err != nil || name != "gpuctl-record-n1" {
			t.Fatalf("store: %s %v", name, err)
		}
		cm, _ := c.CoreV1().ConfigMaps("gpuctl").Get(ctx, name, metav1.GetOptions{})
		if cm.Data[RecordConfigMapKey] != body || cm.Labels[LabelManagedBy] != ManagedBy || cm.Annotations[AnnotationRecordNode] != "n1" {
			t.Errorf("configmap %+v", cm)
		}
	}
	_, err := StoreRecordConfigMap(ctx, c, "gpuctl", "n2", make([]byte, MaxRecordConfigMapBytes+1), ref)
	if !errors.Is(err, ErrRecordTooLarge) || !strings.Contains(err.Error(), "evidence directory") {
		t.Errorf("too large: %v", err)
	}
	if _, err := c.CoreV1().ConfigMaps("gpuctl").Get(ctx, "gpuctl-record-n2", metav1.GetOptions{}); err == nil {
		t.Errorf("a too large record was stored")
	}
	if _, err := StoreRecordConfigMap(ctx, c, "gpuctl", "theirs", []byte("{}"), ref); err == nil || !strings.Contains(err.Error(), "not gpuctl's") {
		t.Errorf("foreign ConfigMap: %v", err)
	}
	if long := RecordConfigMapName(strings.Repeat("a", 253)); len(long) > 253 {
		t.Errorf("name of %d characters", len(long))
	}
}

// TestBuildRBACForSweep: every permission the sweep checks is granted by
// the RBAC its access plan prints, and no more than the sweep adds.
func TestBuildRBACForSweep(t *testing.T) {
	f := RBACFeatures{Sweep: true, RecordsConfigMap: true}
	role, cr := BuildRBACFor("gpuctl", f)
	er := BuildMarkEventRole("gpuctl", f)
	if er == nil {
		t.Fatal("no Events Role for --sweep")
	}
	grants := func(rules []rbacv1.PolicyRule, p Permission) bool {
		res := p.Resource
		if p.Subresource != "" {
			res += "/" + p.Subresource
		}
		for _, r := range rules {
			if slices.Contains(r.Resources, res) && slices.Contains(r.Verbs, p.Verb) && slices.Contains(r.APIGroups, p.Group) {
				return true
			}
		}
		return false
	}
	for _, p := range SweepPermissions("gpuctl", true) {
		var ok bool
		switch p.Namespace {
		case "":
			ok = grants(cr.Rules, p)
		case EventNamespace:
			ok = grants(er.Rules, p)
		default:
			ok = grants(role.Rules, p)
		}
		if !ok {
			t.Errorf("%s (%s) not granted", p, p.Why)
		}
	}
	plainRole, plain := BuildRBAC("gpuctl")
	if len(cr.Rules) != len(plain.Rules)+2 || len(role.Rules) != len(plainRole.Rules)+1 {
		t.Errorf("sweep RBAC adds more than nodes patch, nodes/status patch, configmaps: %+v %+v", cr.Rules, role.Rules)
	}
}
