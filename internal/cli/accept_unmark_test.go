package cli

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/cli/render"
)

// gpuctlKeys lists the labels, annotations, taints and conditions of n
// that are gpuctl's.
func gpuctlKeys(n *corev1.Node) []string {
	var keys []string
	for k := range n.Labels {
		if strings.HasPrefix(k, "gpuctl.dev/") {
			keys = append(keys, "label "+k)
		}
	}
	for k := range n.Annotations {
		if strings.HasPrefix(k, "gpuctl.dev/") {
			keys = append(keys, "annotation "+k)
		}
	}
	if accept.IsQuarantined(n) {
		keys = append(keys, "taint")
	}
	if acceptedCondition(n) != nil {
		keys = append(keys, "condition")
	}
	return keys
}

func unmarkedJSON(t *testing.T, stdout string) map[string]render.AcceptUnmarked {
	t.Helper()
	var list []render.AcceptUnmarked
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("-o json is not a list of nodes: %v\n%s", err, stdout)
	}
	out := map[string]render.AcceptUnmarked{}
	for _, u := range list {
		out[u.Node] = u
	}
	return out
}

// TestAcceptUnmarkAfterSweep: after a sweep quarantined gpu-3 and passed
// gpu-1, which the operator then cordoned, --unmark -l takes everything of
// gpuctl's off both, uncordons gpu-3 (gpuctl's cordon) and leaves gpu-1
// cordoned (the operator's); each gets a GPUUnmarked Event. A second
// --unmark is a no-op, reported as such.
func TestAcceptUnmarkAfterSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	objs := append(markNodeObjects("gpu-1", true), markNodeObjects("gpu-3", false)...)
	c := markClient(nil, objs...)
	sweep := []string{"accept", "--sweep", "-l", "team=a", "-n", "gpuctl", "--stages", "kubernetes", "--max-unhealthy", "1", "--evidence-dir", t.TempDir(), "-q", "-o", "json"}
	streams, _, _, errOut := TestStreams()
	if code := RunWithFactory(ctx, sweep, streams, fakeFactory(c)); code != ExitCheckFailed {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	if _, err := c.CoreV1().Nodes().Patch(ctx, "gpu-1", types.StrategicMergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	node := func(name string) *corev1.Node {
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if !accept.IsQuarantined(node("gpu-3")) || len(gpuctlKeys(node("gpu-1"))) == 0 {
		t.Fatalf("the sweep did not mark: %v %v", gpuctlKeys(node("gpu-1")), gpuctlKeys(node("gpu-3")))
	}

	streams, _, out, errOut := TestStreams()
	if code := RunWithFactory(ctx, []string{"accept", "--unmark", "-l", "team=a", "-o", "json"}, streams, fakeFactory(c)); code != 0 {
		t.Fatalf("unmark: exit %d: %s", code, errOut)
	}
	got := unmarkedJSON(t, out.String())
	for _, name := range []string{"gpu-1", "gpu-3"} {
		if keys := gpuctlKeys(node(name)); len(keys) > 0 {
			t.Errorf("%s still carries %v", name, keys)
		}
		if u := got[name]; len(u.Errors) != 0 || !slices.Contains(u.Removed, accept.UnmarkedCondition) || u.Event == "" {
			t.Errorf("%s: %+v", name, u)
		}
	}
	if n, u := node("gpu-1"), got["gpu-1"]; !n.Spec.Unschedulable || slices.Contains(u.Removed, accept.UnmarkedCordon) || !slices.Equal(u.Kept, []string{accept.UnmarkedCordon}) {
		t.Errorf("gpu-1, cordoned by the operator: unschedulable %v, %+v", n.Spec.Unschedulable, u)
	}
	if n, u := node("gpu-3"), got["gpu-3"]; n.Spec.Unschedulable || !slices.Contains(u.Removed, accept.UnmarkedCordon) || !slices.Contains(u.Removed, accept.UnmarkedTaint) {
		t.Errorf("gpu-3, cordoned by gpuctl: unschedulable %v, %+v", n.Spec.Unschedulable, u)
	}
	evs, _ := c.CoreV1().Events(accept.EventNamespace).List(ctx, metav1.ListOptions{})
	unmarks := 0
	for _, e := range evs.Items {
		if e.Reason == "GPUUnmarked" {
			unmarks++
		}
	}
	if unmarks != 2 {
		t.Errorf("%d GPUUnmarked Events, want 2", unmarks)
	}

	streams, _, out, errOut = TestStreams()
	if code := RunWithFactory(ctx, []string{"accept", "--unmark", "gpu-1", "gpu-3"}, streams, fakeFactory(c)); code != 0 {
		t.Fatalf("second unmark: exit %d: %s", code, errOut)
	}
	want := "node gpu-1: nothing of gpuctl's to remove; kept (gpuctl did not add it): cordon\nnode gpu-3: nothing of gpuctl's to remove\n"
	if out.String() != want {
		t.Errorf("second unmark:\n%s\nwant\n%s", out, want)
	}
	if evs2, _ := c.CoreV1().Events(accept.EventNamespace).List(ctx, metav1.ListOptions{}); len(evs2.Items) != len(evs.Items) {
		t.Errorf("the no-op unmark created Events")
	}
}

// quarantinedNode is a node as a sweep quarantines it.
func quarantinedNode(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{accept.LabelAccept: "fail"},
			Annotations: map[string]string{accept.AnnotationAcceptAdded: "cordon,taint", accept.AnnotationAcceptVerdict: "FAIL"}},
		Spec:   corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{{Key: accept.TaintUnaccepted, Value: "fail", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: accept.ConditionGPUAccepted, Status: corev1.ConditionFalse}}},
	}
}

// TestAcceptUnmarkDryRun says what would be removed and changes nothing.
func TestAcceptUnmarkDryRun(t *testing.T) {
	t.Parallel()
	c := fake.NewClientset(quarantinedNode("gpu-1"))
	streams, _, out, errOut := TestStreams()
	if code := RunWithFactory(context.Background(), []string{"accept", "--unmark", "gpu-1", "--dry-run"}, streams, fakeFactory(c)); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "node gpu-1: would remove label gpuctl.dev/accept, annotation gpuctl.dev/accept-added, annotation gpuctl.dev/accept-verdict, taint gpuctl.dev/unaccepted, cordon, condition GPUAccepted\n"
	if out.String() != want {
		t.Errorf("dry run:\n%s\nwant\n%s", out, want)
	}
	for _, a := range c.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("the dry run did %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// TestAcceptUnmarkAPIError: a patch the API server refuses is the node's
// error (exit 1), the other nodes are still unmarked.
func TestAcceptUnmarkAPIError(t *testing.T) {
	t.Parallel()
	c := fake.NewClientset(quarantinedNode("gpu-1"), quarantinedNode("gpu-2"))
	c.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.(k8stesting.PatchAction).GetName() == "gpu-1" {
			return true, nil, errors.New("the API server is on fire")
		}
		return false, nil, nil
	})
	streams, _, out, errOut := TestStreams()
	if code := RunWithFactory(context.Background(), []string{"accept", "--unmark", "gpu-1", "gpu-2", "-o", "json"}, streams, fakeFactory(c)); code != ExitToolError {
		t.Fatalf("exit %d, want 1: %s", code, errOut)
	}
	got := unmarkedJSON(t, out.String())
	if u := got["gpu-1"]; len(u.Errors) != 1 || !strings.Contains(u.Errors[0], "on fire") || len(u.Removed) != 0 {
		t.Errorf("gpu-1: %+v", u)
	}
	if u := got["gpu-2"]; len(u.Errors) != 0 || len(u.Removed) != 6 {
		t.Errorf("gpu-2: %+v", u)
	}
	if !strings.Contains(errOut.String(), "error: node gpu-1: --unmark: patching node gpu-1") {
		t.Errorf("stderr: %s", errOut)
	}
}

// TestAcceptUnmarkUsage: --unmark goes with no stage, marking or sweep
// flag, needs nodes, and prints its RBAC only in a dry run.
func TestAcceptUnmarkUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--unmark", "gpu-1", "--mark"},
		{"--unmark", "gpu-1", "--sweep"},
		{"--unmark", "gpu-1", "--stages", "kubernetes"},
		{"--unmark", "gpu-1", "--taint-on-fail"},
		{"--unmark"},
		{"--unmark", "gpu-1", "-o", "yaml"},
		{"--unmark", "gpu-1", "--bind", "user:alice"},
		{"--unmark", "--dry-run", "--bind", "nobody"},
	} {
		streams, _, _, errOut := TestStreams()
		if code := RunWithFactory(context.Background(), append([]string{"accept"}, args...), streams, fakeFactory(fake.NewClientset())); code != ExitUsage {
			t.Errorf("accept %v: exit %d, want 2: %s", args, code, errOut)
		}
	}
	streams, _, _, errOut := TestStreams()
	RunWithFactory(context.Background(), []string{"accept", "--unmark", "gpu-1", "--sweep", "--stages", "cuda"}, streams, fakeFactory(fake.NewClientset()))
	if !strings.Contains(errOut.String(), "--unmark removes gpuctl's marks and runs no stage: --stages, --sweep does not go with it") {
		t.Errorf("stderr: %s", errOut)
	}
	streams, _, _, errOut = TestStreams()
	if code := RunWithFactory(context.Background(), []string{"accept", "--unmark", "gpu-9"}, streams, fakeFactory(fake.NewClientset())); code != ExitUsage {
		t.Errorf("unknown node: exit %d, want 2: %s", code, errOut)
	}
}

// TestAcceptUnmarkRBAC: --unmark --dry-run --bind prints the RBAC with what
// unmark needs (nodes patch, nodes/status patch, events create in default)
// and its bindings; accept's own dry run prints what it did before.
func TestAcceptUnmarkRBAC(t *testing.T) {
	t.Parallel()
	run := func(args ...string) string {
		t.Helper()
		streams, _, out, errOut := TestStreams()
		if code := RunWithFactory(context.Background(), append([]string{"accept"}, args...), streams, fakeFactory(fake.NewClientset())); code != 0 {
			t.Fatalf("accept %v: exit %d: %s", args, code, errOut)
		}
		return out.String()
	}
	s := run("--unmark", "--dry-run", "--bind", "user:alice")
	for _, want := range []string{"- nodes/status", "- events", "- patch", "kind: ClusterRoleBinding", "name: " + accept.MarkEventRoleName, "name: alice"} {
		if !strings.Contains(s, want) {
			t.Errorf("unmark RBAC lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "kind: Job") {
		t.Errorf("unmark RBAC has a Job")
	}
	if y := run("--unmark", "--dry-run", "-o", "yaml"); strings.Contains(y, "RoleBinding") || !strings.Contains(y, "- nodes/status") {
		t.Errorf("--unmark --dry-run -o yaml:\n%s", y)
	}
	if plain := run("--dry-run", "-o", "yaml", "--gpus", "8", "--bind", "user:alice"); strings.Contains(plain, "nodes/status") || strings.Contains(plain, "- events") {
		t.Errorf("accept --dry-run --bind changed:\n%s", plain)
	}
}
