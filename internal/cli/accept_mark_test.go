package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/record"
)

// markNode is a GPU node with a device plugin pod; ready false makes the
// kubernetes stage FAIL.
func markNodeObjects(name string, ready bool) []runtime.Object {
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	q := resource.MustParse("8")
	return []runtime.Object{
		&corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + "1", Labels: map[string]string{"team": "a"}},
			Status: corev1.NodeStatus{Capacity: corev1.ResourceList{accept.ResourceGPU: q}, Allocatable: corev1.ResourceList{accept.ResourceGPU: q},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}},
		},
		&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "nvidia-device-plugin-" + name, Namespace: "kube-system"},
			Spec:       corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "p", Image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		},
	}
}

// markClient allows every access review except those denied ("verb resource").
func markClient(denied map[string]bool, objs ...runtime.Object) *fake.Clientset {
	objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gpuctl"}})
	c := fake.NewClientset(objs...)
	c.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		rev := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
		ra := rev.Spec.ResourceAttributes
		rev.Status.Allowed = !denied[ra.Verb+" "+ra.Resource]
		return true, rev, nil
	})
	return c
}

func TestAcceptMarkTaintsFailedNodeAndPassUndoes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := markClient(nil, markNodeObjects("gpu-node-1", false)...)
	args := []string{"accept", "gpu-node-1", "--stages", "kubernetes", "--evidence-dir", dir, "--mark", "--taint-on-fail", "--cordon-on-fail", "-q"}
	streams, _, _, errOut := TestStreams()
	if code := RunWithFactory(context.Background(), args, streams, fakeFactory(c)); code != ExitCheckFailed {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	ctx := context.Background()
	n, _ := c.CoreV1().Nodes().Get(ctx, "gpu-node-1", metav1.GetOptions{})
	if n.Labels[accept.LabelAccept] != "fail" || !n.Spec.Unschedulable || n.Annotations[accept.AnnotationAcceptAdded] != "cordon,taint" {
		t.Errorf("node after FAIL: %v %v %v", n.Labels, n.Annotations, n.Spec.Unschedulable)
	}
	var ref accept.MarkRecordRef
	if err := json.Unmarshal([]byte(n.Annotations[accept.AnnotationAcceptRecord]), &ref); err != nil {
		t.Fatal(err)
	}
	rec, err := record.HashFile(filepath.Join(dir, "gpu-node-1", ref.RunID, accept.StatementFile))
	if err != nil || ref.Digest != "sha256:"+rec.SHA256 || ref.Verdict != "FAIL" {
		t.Errorf("record annotation %+v, record sha256 %s %v", ref, rec.SHA256, err)
	}
	evs, _ := c.CoreV1().Events(accept.EventNamespace).List(ctx, metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Reason != "AcceptFailed" || !strings.HasPrefix(evs.Items[0].Message, "FAIL: kubernetes: node gpu-node-1 is not Ready") {
		t.Errorf("events %+v", evs.Items)
	}
	if !strings.Contains(errOut.String(), "marked: gpuctl.dev/accept=fail, added taint,cordon") {
		t.Errorf("stderr lacks the marked line:\n%s", errOut)
	}

	// The node recovers; a PASS takes off what gpuctl put on.
	n.Status.Conditions[0].Status = corev1.ConditionTrue
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f := fakeFactory(c)
	f.Random = func() uint16 { return 0xc3d4 }
	streams, _, _, errOut = TestStreams()
	if code := RunWithFactory(ctx, args, streams, f); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	n, _ = c.CoreV1().Nodes().Get(ctx, "gpu-node-1", metav1.GetOptions{})
	if n.Labels[accept.LabelAccept] != "pass" || n.Spec.Unschedulable || len(n.Spec.Taints) != 0 || n.Annotations[accept.AnnotationAcceptAdded] != "" {
		t.Errorf("node after PASS: %v %v %v %v", n.Labels, n.Annotations, n.Spec.Unschedulable, n.Spec.Taints)
	}
	if !strings.Contains(errOut.String(), "removed taint,cordon") {
		t.Errorf("stderr lacks the removal:\n%s", errOut)
	}
}

func TestAcceptMaxUnhealthyStopsMarking(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	objs := append(markNodeObjects("gpu-node-1", false), markNodeObjects("gpu-node-2", false)...)
	objs = append(objs, markNodeObjects("gpu-node-3", true)...)
	c := markClient(nil, objs...)
	fleet := filepath.Join(dir, "fleet.json")
	args := []string{"accept", "-l", "team=a", "--parallel", "3", "--stages", "kubernetes", "--evidence-dir", dir, "--fleet-summary", fleet,
		"--mark", "--taint-on-fail", "--max-unhealthy", "50%", "-q"}
	streams, _, _, errOut := TestStreams()
	if code := RunWithFactory(context.Background(), args, streams, fakeFactory(c)); code != ExitCheckFailed {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut.String(), "warning: marking stopped: 2 of 3 nodes are not PASS, more than --max-unhealthy 50%") {
		t.Errorf("stderr:\n%s", errOut)
	}
	nodes, _ := c.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	for _, n := range nodes.Items {
		if _, ok := n.Labels[accept.LabelAccept]; ok || len(n.Spec.Taints) != 0 {
			t.Errorf("node %s marked although marking stopped: %v %v", n.Name, n.Labels, n.Spec.Taints)
		}
	}
	evs, _ := c.CoreV1().Events(accept.EventNamespace).List(context.Background(), metav1.ListOptions{})
	if len(evs.Items) != 0 {
		t.Errorf("%d events", len(evs.Items))
	}
	raw, err := os.ReadFile(fleet)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Marking *struct {
			Stopped bool   `json:"stopped"`
			Reason  string `json:"reason"`
		} `json:"marking"`
	}
	if err := json.Unmarshal(raw, &got); err != nil || got.Marking == nil || !got.Marking.Stopped || !strings.Contains(got.Marking.Reason, "no node was marked") {
		t.Errorf("fleet marking %s %v", raw, err)
	}
	if !strings.Contains(errOut.String(), "fleet: 3 nodes") || !strings.Contains(errOut.String(), "; marking stopped: ") {
		t.Errorf("fleet line lacks the stop:\n%s", errOut)
	}
}

func TestAcceptMarkNeedsPatchNodes(t *testing.T) {
	t.Parallel()
	c := markClient(map[string]bool{"patch nodes": true}, markNodeObjects("gpu-node-1", true)...)
	streams, _, _, errOut := TestStreams()
	code := RunWithFactory(context.Background(), []string{"accept", "gpu-node-1", "--stages", "kubernetes", "--evidence-dir", t.TempDir(), "--mark"}, streams, fakeFactory(c))
	if code != ExitInconclusive || !strings.Contains(errOut.String(), "RBAC: --mark: the identity running gpuctl may not patch nodes cluster-wide") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	n, _ := c.CoreV1().Nodes().Get(context.Background(), "gpu-node-1", metav1.GetOptions{})
	if len(n.Labels) != 1 {
		t.Errorf("labels %v", n.Labels)
	}
}

func TestAcceptMarkFlagsNeedMark(t *testing.T) {
	t.Parallel()
	streams, _, _, errOut := TestStreams()
	if code := RunWithFactory(context.Background(), []string{"accept", "gpu-node-1", "--taint-on-fail"}, streams, fakeFactory(fake.NewClientset())); code != ExitUsage {
		t.Errorf("exit %d: %s", code, errOut)
	}
	streams, _, _, errOut = TestStreams()
	if code := RunWithFactory(context.Background(), []string{"accept", "gpu-node-1", "--mark", "--max-unhealthy", "ten"}, streams, fakeFactory(fake.NewClientset())); code != ExitUsage {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestAcceptDryRunMarkRBAC(t *testing.T) {
	t.Parallel()
	for _, mark := range []bool{false, true} {
		args := []string{"accept", "--dry-run", "-o", "yaml", "--gpus", "8"}
		if mark {
			args = append(args, "--mark")
		}
		streams, _, out, errOut := TestStreams()
		if code := RunWithFactory(context.Background(), args, streams, fakeFactory(fake.NewClientset())); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		s := out.String()
		if got := strings.Contains(s, "- events") && strings.Contains(s, "- patch"); got != mark {
			t.Errorf("--mark=%v: events create / nodes patch in the RBAC: %v\n%s", mark, got, s)
		}
	}
}
