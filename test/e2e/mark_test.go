//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/accept"
)

// TestMarkNodes: --mark labels a FAILed node, taints and cordons it and
// records an Event; --max-unhealthy stops the marking; a later PASS removes
// only what gpuctl added.
func TestMarkNodes(t *testing.T) {
	const node = "e2e-mark"
	ctx := context.Background()
	fakeGPUNode(t, node, "NVIDIA-A10", 1, "12.2")
	evidence := t.TempDir()
	// e2e-remap serves the A10's row remap pending: inventory FAILs.
	r := gpuctlRun(t, "accept", node, "-n", "e2e-remap", "--create-namespace", "--evidence-dir", evidence, "--stages", "kubernetes,inventory",
		"--stage-timeout", "60s", "--mark", "--taint-on-fail", "--cordon-on-fail")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3", r.code)
	}
	n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hasTaint := func() bool {
		for _, tn := range n.Spec.Taints {
			if tn.Key == accept.TaintUnaccepted {
				return true
			}
		}
		return false
	}
	if n.Labels[accept.LabelAccept] != "fail" || !n.Spec.Unschedulable || !hasTaint() || n.Annotations[accept.AnnotationAcceptAdded] != "cordon,taint" ||
		!strings.Contains(n.Annotations[accept.AnnotationAcceptRecord], `"digest":"sha256:`) {
		t.Errorf("after FAIL: labels %v annotations %v unschedulable %v taints %v", n.Labels, n.Annotations, n.Spec.Unschedulable, n.Spec.Taints)
	}
	evs, err := client.CoreV1().Events(accept.EventNamespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + node, LabelSelector: gpuctlEvents})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs.Items {
		found = found || (e.Reason == "AcceptFailed" && strings.HasPrefix(e.Message, "FAIL: inventory: ") && strings.Contains(e.Message, "row remap is pending"))
	}
	if !found {
		t.Errorf("no AcceptFailed event on the node: %+v", evs.Items)
	}
	assertNothingLeft(t, "e2e-remap")

	// Over --max-unhealthy: nothing is marked (the label stays fail, no second event).
	r = gpuctlRun(t, "accept", node, "-n", "e2e-remap", "--evidence-dir", evidence, "--stages", "kubernetes,inventory",
		"--stage-timeout", "60s", "--mark", "--max-unhealthy", "0")
	if r.code != 3 || !strings.Contains(r.stderr, "marking stopped: 1 of 1 nodes are not PASS, more than --max-unhealthy 0") {
		t.Errorf("exit %d, stderr lacks the stop", r.code)
	}
	evs2, _ := client.CoreV1().Events(accept.EventNamespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + node, LabelSelector: gpuctlEvents})
	if len(evs2.Items) != len(evs.Items) {
		t.Errorf("events %d -> %d although marking stopped", len(evs.Items), len(evs2.Items))
	}

	// The kubernetes stage alone PASSes: gpuctl's taint and cordon go, the device plugin's taint stays.
	r = gpuctlRun(t, "accept", node, "-n", "e2e-healthy", "--create-namespace", "--evidence-dir", evidence, "--stages", "kubernetes", "--mark")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0", r.code)
	}
	if n, err = client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	// Taints of others stay: the GPU taint, and any the node lifecycle
	// controller sets (not-ready after another test restarts the API server).
	gpuTaint := false
	for _, tn := range n.Spec.Taints {
		gpuTaint = gpuTaint || tn.Key == "nvidia.com/gpu"
	}
	if n.Labels[accept.LabelAccept] != "pass" || n.Spec.Unschedulable || hasTaint() || !gpuTaint || n.Annotations[accept.AnnotationAcceptAdded] != "" {
		t.Errorf("after PASS: labels %v annotations %v unschedulable %v taints %v", n.Labels, n.Annotations, n.Spec.Unschedulable, n.Spec.Taints)
	}
	if !strings.Contains(r.stderr, "removed taint,cordon") {
		t.Errorf("stderr lacks the removal")
	}
}

// gpuctlEvents selects the Events gpuctl creates; the control plane records
// its own on a node (a cordon, for one) at a time of its choosing.
var gpuctlEvents = accept.LabelManagedBy + "=" + accept.ManagedBy

// TestMarkWithDryRunRBAC: an identity bound with exactly what `accept
// --dry-run --mark --bind` prints (events create only in a Role of namespace
// default, none cluster-wide) marks a node, its Event included.
func TestMarkWithDryRunRBAC(t *testing.T) {
	const node, ns = "e2e-markrbac", "e2e-markrbac"
	ctx := context.Background()
	fakeGPUNode(t, node, "NVIDIA-A10", 1, "12.2")
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "marker", Namespace: ns}}
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sub := accept.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}
	for _, d := range accept.DryRunObjectsWith(ns, nil, []accept.Subject{sub}, accept.RBACFeatures{Mark: true}) {
		applyRBAC(t, d, "-"+ns)
	}
	r := gpuctlRunEnv(t, []string{"KUBECONFIG=" + kubeconfigFor(t, ns, sa.Name)}, "accept", node, "-n", ns, "--evidence-dir", t.TempDir(), "--stages", "kubernetes", "--mark")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (PASS, marked)", r.code)
	}
	evs, err := client.CoreV1().Events(accept.EventNamespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + node, LabelSelector: gpuctlEvents})
	if err != nil || len(evs.Items) != 1 || evs.Items[0].Reason != "AcceptPassed" {
		t.Errorf("events on the node: %v %+v", err, evs)
	}
}

// applyRBAC creates one RBAC object of a dry run; the cluster-scoped ones
// (and the references to them) get suffix, so that tests do not share them.
func applyRBAC(t *testing.T, obj any, suffix string) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch o := obj.(type) {
	case *rbacv1.Role:
		_, err = client.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		t.Cleanup(func() {
			_ = client.RbacV1().Roles(o.Namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{})
		})
	case *rbacv1.RoleBinding:
		_, err = client.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		t.Cleanup(func() {
			_ = client.RbacV1().RoleBindings(o.Namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{})
		})
	case *rbacv1.ClusterRole:
		o.Name += suffix
		_, err = client.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		t.Cleanup(func() {
			_ = client.RbacV1().ClusterRoles().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
		})
	case *rbacv1.ClusterRoleBinding:
		o.Name += suffix
		o.RoleRef.Name += suffix
		_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		t.Cleanup(func() {
			_ = client.RbacV1().ClusterRoleBindings().Delete(context.Background(), o.Name, metav1.DeleteOptions{})
		})
	default:
		t.Fatalf("not an RBAC object: %T", obj)
	}
	if err != nil {
		t.Fatal(err)
	}
}
