package accept

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var unmarkTime = time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)

// sweptNode is a node as a sweep left it: labelled, annotated, with the
// GPUAccepted condition; added is its accept-added annotation ("" for
// none), and its taints and cordon are as given.
func sweptNode(name, added string, taints []corev1.Taint, cordoned bool) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-1",
			Labels: map[string]string{LabelAccept: "fail", "team": "a"},
			Annotations: map[string]string{AnnotationAcceptRecord: `{"runID":"r1"}`, AnnotationAcceptVerdict: "FAIL",
				AnnotationAcceptTime: "2026-12-03T13:00:00Z", AnnotationRecordDigest: "sha256:ab", AnnotationQuarantineReason: "FAIL: cuda: ...",
				"operator.example.com/ticket": "T-1"}},
		Spec: corev1.NodeSpec{Taints: taints, Unschedulable: cordoned},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
			{Type: ConditionGPUAccepted, Status: corev1.ConditionFalse, Reason: "Fail"}}},
	}
	if added != "" {
		n.Annotations[AnnotationAcceptAdded] = added
	}
	return n
}

var (
	gpuctlTaint   = corev1.Taint{Key: TaintUnaccepted, Value: "fail", Effect: corev1.TaintEffectNoSchedule}
	operatorTaint = corev1.Taint{Key: "maintenance", Value: "disk", Effect: corev1.TaintEffectNoExecute}
)

// TestUnmarkRemovesOnlyWhatGpuctlAdded: a quarantined node loses gpuctl's
// label, annotations, taint, cordon and condition, keeps the operator's
// taint, label, annotation and the Ready condition, and gets an Event
// saying so; a second Unmark finds nothing and changes nothing.
func TestUnmarkRemovesOnlyWhatGpuctlAdded(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(sweptNode("gpu-1", "cordon,taint", []corev1.Taint{operatorTaint, gpuctlTaint}, true))
	plan := PlanUnmark(sweptNode("gpu-1", "cordon,taint", []corev1.Taint{operatorTaint, gpuctlTaint}, true))
	u, err := Unmark(ctx, c, "gpu-1", "20261203t140000-a1b2", unmarkTime)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"label gpuctl.dev/accept", "annotation gpuctl.dev/accept-record", "annotation gpuctl.dev/accept-added",
		"annotation gpuctl.dev/accept-verdict", "annotation gpuctl.dev/accept-time", "annotation gpuctl.dev/record-digest",
		"annotation gpuctl.dev/quarantine-reason", UnmarkedTaint, UnmarkedCordon, UnmarkedCondition}
	if diff := cmp.Diff(want, u.Removed); diff != "" || len(u.Kept) != 0 {
		t.Errorf("removed (-want +got):\n%s kept %v", diff, u.Kept)
	}
	if diff := cmp.Diff(u.Removed, plan.Removed); diff != "" {
		t.Errorf("PlanUnmark differs from what Unmark removed (-did +plan):\n%s", diff)
	}
	n, _ := c.CoreV1().Nodes().Get(ctx, "gpu-1", metav1.GetOptions{})
	if diff := cmp.Diff(map[string]string{"team": "a"}, n.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"operator.example.com/ticket": "T-1"}, n.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.Taint{operatorTaint}, n.Spec.Taints); diff != "" || n.Spec.Unschedulable {
		t.Errorf("taints (-want +got):\n%s unschedulable %v", diff, n.Spec.Unschedulable)
	}
	if len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Type != corev1.NodeReady {
		t.Errorf("conditions %+v, want Ready only", n.Status.Conditions)
	}
	evs, _ := c.CoreV1().Events(EventNamespace).List(ctx, metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Name != u.Event || evs.Items[0].Reason != "GPUUnmarked" || evs.Items[0].InvolvedObject.Name != "gpu-1" ||
		!strings.Contains(evs.Items[0].Message, "removed what gpuctl had put on the node: label gpuctl.dev/accept, ") ||
		!strings.HasSuffix(evs.Items[0].Message, "taint gpuctl.dev/unaccepted, cordon, condition GPUAccepted") {
		t.Errorf("events %+v", evs.Items)
	}

	c.ClearActions()
	again, err := Unmark(ctx, c, "gpu-1", "20261203t140100-a1b3", unmarkTime)
	if err != nil || len(again.Removed) != 0 || again.Event != "" {
		t.Errorf("second unmark: %+v %v, want nothing removed", again, err)
	}
	for _, a := range c.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("second unmark did %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// TestUnmarkKeepsTheOperatorsIsolation: a cordon and a gpuctl.dev/unaccepted
// taint that accept-added does not list (the operator's) stay, and are
// reported as kept; the marks around them go.
func TestUnmarkKeepsTheOperatorsIsolation(t *testing.T) {
	ctx := context.Background()
	for _, added := range []string{"", "taint"} {
		c := fake.NewClientset(sweptNode("gpu-2", added, []corev1.Taint{gpuctlTaint}, true))
		u, err := Unmark(ctx, c, "gpu-2", "20261203t140000-a1b2", unmarkTime)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := c.CoreV1().Nodes().Get(ctx, "gpu-2", metav1.GetOptions{})
		if !n.Spec.Unschedulable || !slices.Contains(u.Kept, UnmarkedCordon) || slices.Contains(u.Removed, UnmarkedCordon) {
			t.Errorf("accept-added %q: the operator's cordon: unschedulable %v, removed %v, kept %v", added, n.Spec.Unschedulable, u.Removed, u.Kept)
		}
		gpuctlAdded := added == "taint"
		if IsQuarantined(n) == gpuctlAdded || slices.Contains(u.Removed, UnmarkedTaint) != gpuctlAdded || slices.Contains(u.Kept, UnmarkedTaint) == gpuctlAdded {
			t.Errorf("accept-added %q: taints %v, removed %v, kept %v", added, n.Spec.Taints, u.Removed, u.Kept)
		}
		if _, ok := n.Labels[LabelAccept]; ok || n.Annotations[AnnotationAcceptVerdict] != "" || len(n.Status.Conditions) != 1 {
			t.Errorf("accept-added %q: marks left: %v %v %+v", added, n.Labels, n.Annotations, n.Status.Conditions)
		}
	}
}

// TestUnmarkNothingToRemove: a node gpuctl never marked is read and left
// alone: no patch, no Event.
func TestUnmarkNothingToRemove(t *testing.T) {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-3", Labels: map[string]string{"team": "a"}}, Spec: corev1.NodeSpec{Unschedulable: true}}
	c := fake.NewClientset(node)
	u, err := Unmark(ctx, c, "gpu-3", "20261203t140000-a1b2", unmarkTime)
	if err != nil || len(u.Removed) != 0 || u.Removed == nil || u.Event != "" || !slices.Equal(u.Kept, []string{UnmarkedCordon}) {
		t.Errorf("unmark %+v %v", u, err)
	}
	if p := PlanUnmark(node); len(p.Removed) != 0 {
		t.Errorf("plan %+v", p)
	}
	for _, a := range c.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("did %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// TestUnmarkConditionOnly: a node with only the condition left (its marks
// removed by hand) loses it through a patch of nodes/status alone.
func TestUnmarkConditionOnly(t *testing.T) {
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-4"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: ConditionGPUAccepted, Status: corev1.ConditionTrue}}}}
	c := fake.NewClientset(n)
	u, err := Unmark(ctx, c, "gpu-4", "20261203t140000-a1b2", unmarkTime)
	if err != nil || !slices.Equal(u.Removed, []string{UnmarkedCondition}) {
		t.Fatalf("unmark %+v %v", u, err)
	}
	var patches []string
	for _, a := range c.Actions() {
		if p, ok := a.(k8stesting.PatchAction); ok {
			patches = append(patches, p.GetSubresource())
		}
	}
	got, _ := c.CoreV1().Nodes().Get(ctx, "gpu-4", metav1.GetOptions{})
	if !slices.Equal(patches, []string{"status"}) || len(got.Status.Conditions) != 0 {
		t.Errorf("patches of subresources %q, conditions %+v", patches, got.Status.Conditions)
	}
}

// TestBuildRBACForUnmark: --unmark's RBAC is --mark's and nodes/status
// patch; the Events Role in default comes with it.
func TestBuildRBACForUnmark(t *testing.T) {
	_, mark := BuildRBACFor("gpuctl", RBACFeatures{Mark: true})
	_, cr := BuildRBACFor("gpuctl", RBACFeatures{Unmark: true})
	if len(cr.Rules) != len(mark.Rules)+1 || cr.Rules[len(cr.Rules)-1].Resources[0] != "nodes/status" {
		t.Errorf("unmark ClusterRole %+v", cr.Rules)
	}
	if er := BuildMarkEventRole("gpuctl", RBACFeatures{Unmark: true}); er == nil {
		t.Error("unmark without the Events Role")
	}
	if _, both := BuildRBACFor("gpuctl", RBACFeatures{Sweep: true, Unmark: true}); len(both.Rules) != len(cr.Rules) {
		t.Errorf("sweep and unmark: %+v, want nodes/status once", both.Rules)
	}
}

// TestUnmarkConditionRefused: when nodes/status may not be patched, the
// marks on the node still go, the Event says so, and the error names the
// condition.
func TestUnmarkConditionRefused(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(sweptNode("gpu-5", "cordon,taint", []corev1.Taint{gpuctlTaint}, true))
	c.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			return true, nil, apierrors.NewForbidden(corev1.Resource("nodes/status"), "gpu-5", errors.New("no"))
		}
		return false, nil, nil
	})
	u, err := Unmark(ctx, c, "gpu-5", "20261203t140000-a1b2", unmarkTime)
	if err == nil || !strings.Contains(err.Error(), "removing condition GPUAccepted from node gpu-5") {
		t.Fatalf("error %v", err)
	}
	n, _ := c.CoreV1().Nodes().Get(ctx, "gpu-5", metav1.GetOptions{})
	if slices.Contains(u.Removed, UnmarkedCondition) || !slices.Contains(u.Removed, UnmarkedCordon) || n.Spec.Unschedulable || u.Event == "" {
		t.Errorf("unmarked %+v, unschedulable %v", u, n.Spec.Unschedulable)
	}
}
