//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/plan"
)

// The plan test's identity: hack/e2e.sh writes an audit log of this user's
// requests only (E2E_AUDIT_LOG).
const (
	planNS   = "e2e-plan"
	planSA   = "plan-reader"
	planUser = "system:serviceaccount:" + planNS + ":" + planSA
	planPool = "plan-train" // testdata/plan-pool.yaml
)

// TestPlanDrift: three 8x H100 nodes of a GKE pool, labelled as GPU Feature
// Discovery labels them, each with its device plugin pod. `gpuctl plan
// --kubeconfig`, run as an identity that may only read nodes and pods, finds
// no drift (exit 0); then one node gets another driver, loses the spec's taint
// and gains a second device plugin pod, and plan finds exactly those three
// drifts (exit 3). The API server's audit log shows that plan made read
// requests only.
func TestPlanDrift(t *testing.T) {
	auditLog := os.Getenv("E2E_AUDIT_LOG")
	if auditLog == "" {
		t.Fatal("E2E_AUDIT_LOG not set; run hack/e2e.sh")
	}
	ctx := context.Background()
	kubeconfig := readOnlyIdentity(t)
	spec, err := filepath.Abs("testdata/plan-pool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nodes := []struct{ name, zone string }{{"plan-1", "us-central1-a"}, {"plan-2", "us-central1-b"}, {"plan-3", "us-central1-c"}}
	for _, n := range nodes {
		planNode(t, n.name, n.zone)
		planPlugin(t, "nvidia-gpu-device-plugin-"+n.name, n.name)
	}

	// A clean pool: every field of every node as the spec says.
	r := gpuctlRun(t, "plan", spec, "--env", "prod", "--kubeconfig", kubeconfig, "-o", "json")
	if r.code != 0 {
		t.Fatalf("clean pool: exit %d, want 0\n%s", r.code, r.stdout)
	}
	p := decodePlan(t, r.stdout)
	if got := driftHits(t, p); len(got) != 0 {
		t.Errorf("clean pool: drift %v, want none", got)
	}
	if len(p.Drift) != 3 || p.Summary.NodesChecked != 3 || p.Summary.NodesDrifted != 0 || p.Summary.Changes || len(p.Rollouts) != 0 {
		t.Errorf("clean pool: %d drift entries, summary %+v, %d rollouts", len(p.Drift), p.Summary, len(p.Rollouts))
	}
	for i, d := range p.Drift {
		if d.Node != nodes[i].name || d.Zone != nodes[i].zone || d.Pool != planPool || d.Environment != "prod" {
			t.Errorf("drift[%d] = %s/%s in %s (%s), want %s in %s", i, d.Pool, d.Node, d.Zone, d.Environment, nodes[i].name, nodes[i].zone)
		}
		fields := map[string]bool{}
		for _, f := range d.Fields {
			fields[f.Field] = true
		}
		for _, f := range []string{"machineType", "gpu.type", "gpu.count", "driver", "kubernetesVersion", "osImage", "taints[0]", "devicePlugin"} {
			if !fields[f] {
				t.Errorf("%s: field %s not checked", d.Node, f)
			}
		}
	}

	// plan-2 drifts: the driver of another branch, no taint, two plugin pods.
	n, err := client.CoreV1().Nodes().Get(ctx, "plan-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels["nvidia.com/cuda.driver-version.full"] = "550.90.07"
	n.Labels["nvidia.com/cuda.driver-version.major"] = "550"
	n.Labels["nvidia.com/cuda.driver-version.minor"] = "90"
	n.Labels["nvidia.com/cuda.driver-version.revision"] = "07"
	n.Spec.Taints = nil
	if _, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	planPlugin(t, "nvidia-gpu-device-plugin-plan-2-second", "plan-2")

	r = gpuctlRun(t, "plan", spec, "--env", "prod", "--kubeconfig", kubeconfig, "-o", "json")
	if r.code != 3 {
		t.Fatalf("drifted node: exit %d, want 3\n%s", r.code, r.stdout)
	}
	p = decodePlan(t, r.stdout)
	want := []string{"plan-2 devicePlugin", "plan-2 driver", "plan-2 taints[0]"}
	if got := driftHits(t, p); strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("drift %v, want exactly %v", got, want)
	}
	if p.Summary.NodesChecked != 3 || p.Summary.NodesDrifted != 1 || !p.Summary.Changes {
		t.Errorf("summary %+v, want 3 nodes checked, 1 drifted, changes", p.Summary)
	}
	for _, d := range p.Drift {
		for _, f := range d.Fields {
			switch {
			case d.Node != "plan-2" || f.State != plan.StateDrift:
			case f.Field == "driver" && f.Observed != "550.90.07":
				t.Errorf("driver observed %q, want 550.90.07", f.Observed)
			case f.Field == "taints[0]" && (f.Observed != "absent" || f.Expected != "nvidia.com/gpu=present:NoSchedule"):
				t.Errorf("taint: expected %q, observed %q", f.Expected, f.Observed)
			case f.Field == "devicePlugin" && !strings.HasPrefix(f.Observed, "2 ("):
				t.Errorf("device plugin pods observed %q, want 2", f.Observed)
			}
		}
	}

	// Read-only: every request of plan's identity was a get, list or watch.
	// The audit log backend writes an event when the request completes; wait
	// until both runs' node lists are in it.
	var verbs map[string]int
	eventually(t, 15*time.Second, "both plan runs' requests in the audit log", func() bool {
		verbs = auditVerbs(t, auditLog, planUser)
		return verbs["list nodes"] >= 2
	})
	for k, c := range verbs {
		verb, _, _ := strings.Cut(k, " ")
		if verb != "get" && verb != "list" && verb != "watch" {
			t.Errorf("plan made %d %q request(s); it must only read", c, k)
		}
	}
	t.Logf("requests of %s by verb and resource: %v", planUser, verbs)
}

// readOnlyIdentity makes a ServiceAccount that may only get, list and watch
// nodes and pods, and returns a kubeconfig with its token.
func readOnlyIdentity(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: planNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Namespaces().Delete(context.Background(), planNS, metav1.DeleteOptions{}) })
	if _, err := client.CoreV1().ServiceAccounts(planNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: planSA}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const role = "gpuctl-plan-e2e-read-only"
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"get", "list", "watch"}},
	}}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{}) })
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: planSA, Namespace: planNS}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role}}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoleBindings().Delete(context.Background(), role, metav1.DeleteOptions{})
	})
	return kubeconfigFor(t, planNS, planSA)
}

// planNode creates a kwok node of the spec pool as GKE and GPU Feature
// Discovery label an a3-highgpu-8g node with GKE's R535 driver.
func planNode(t *testing.T, name, zone string) {
	t.Helper()
	ctx := context.Background()
	q := resource.MustParse("8")
	res := corev1.ResourceList{"cpu": resource.MustParse("208"), "memory": resource.MustParse("1872Gi"), "pods": resource.MustParse("110"), accept.ResourceGPU: q}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			Labels: map[string]string{"kubernetes.io/hostname": name, "type": "kwok",
				plan.LabelGKENodePool: planPool, plan.LabelZone: zone, accept.LabelInstanceType: "a3-highgpu-8g",
				accept.LabelGFDProduct: "NVIDIA-H100-80GB-HBM3", accept.LabelGFDCount: "8",
				"nvidia.com/cuda.driver-version.full": "535.261.03", "nvidia.com/cuda.driver-version.major": "535",
				"nvidia.com/cuda.driver-version.minor": "261", "nvidia.com/cuda.driver-version.revision": "03",
				"nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "2"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res,
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.33.5-gke.1080000", OSImage: "Ubuntu 22.04.5 LTS"}},
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	eventually(t, 60*time.Second, "node "+name+" Ready", func() bool {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				// kwok keeps the nodeInfo the node was created with.
				return n.Status.NodeInfo.KubeletVersion == "v1.33.5-gke.1080000" && n.Status.NodeInfo.OSImage == "Ubuntu 22.04.5 LTS"
			}
		}
		return false
	})
}

// planPlugin creates a pod of GKE's device plugin DaemonSet on node and
// waits until kwok runs it.
func planPlugin(t *testing.T, name, node string) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: map[string]string{"k8s-app": "nvidia-gpu-device-plugin"}},
		Spec: corev1.PodSpec{NodeName: node, AutomountServiceAccountToken: ptr(false),
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}},
			Containers:  []corev1.Container{{Name: "nvidia-gpu-device-plugin", Image: "gke.gcr.io/nvidia-gpu-device-plugin:v1.0.25-gke.62"}}},
	}
	if _, err := client.CoreV1().Pods("kube-system").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Pods("kube-system").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
	})
	eventually(t, 60*time.Second, "device plugin pod "+name+" Running", func() bool {
		p, err := client.CoreV1().Pods("kube-system").Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
}

func decodePlan(t *testing.T, stdout string) *plan.Plan {
	t.Helper()
	var p plan.Plan
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatalf("stdout is not a plan: %v\n%s", err, stdout)
	}
	return &p
}

// driftHits lists "node field" of each drifted field, sorted; a field the
// node does not report (unknown) fails the test, and each expectation must
// name its line of the spec.
func driftHits(t *testing.T, p *plan.Plan) []string {
	t.Helper()
	got := []string{}
	for _, d := range p.Drift {
		for _, f := range d.Fields {
			if f.State == plan.StateUnknown {
				t.Errorf("%s %s: unknown (observed %q from %s)", d.Node, f.Field, f.Observed, f.Source)
			}
			if at := filepath.Base(f.At); !strings.HasPrefix(at, "plan-pool.yaml:") || strings.HasPrefix(at, "plan-pool.yaml:0") {
				t.Errorf("%s %s: at %q, want the spec's file:line", d.Node, f.Field, f.At)
			}
			if f.State == plan.StateDrift {
				got = append(got, d.Node+" "+f.Field)
			}
		}
	}
	sort.Strings(got)
	return got
}

// auditVerbs counts user's requests in the API server's audit log by
// "verb resource[/subresource]".
func auditVerbs(t *testing.T, path, user string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			Verb string `json:"verb"`
			User struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
			RequestURI string `json:"requestURI"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit log line: %v", err)
		}
		if ev.User.Username != user {
			continue
		}
		what := ev.RequestURI
		if ev.ObjectRef != nil {
			what = ev.ObjectRef.Resource
			if ev.ObjectRef.Subresource != "" {
				what += "/" + ev.ObjectRef.Subresource
			}
		}
		out[fmt.Sprintf("%s %s", ev.Verb, what)]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
