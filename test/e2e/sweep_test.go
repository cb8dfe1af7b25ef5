//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/cli/render"
)

// The acceptance sweep of examples/gke-h100-acceptance-sweep.yaml: its
// namespace and ServiceAccount, and the node-pool label its selector
// names.
const (
	sweepNS   = "gpuctl-acceptance"
	sweepSA   = "gpuctl-accept-sweep"
	sweepPool = "cloud.google.com/gke-nodepool"
)

// TestSweep: the objects `gpuctl generate acceptance` writes (all but the
// CronJob: kwok runs no process) are accepted by the API server; the
// CronJob's own command line, run with a token of the generated
// ServiceAccount only (TokenRequest) and --max-unhealthy 1, accepts the
// idle node, skips the busy one untouched, quarantines the first of two
// FAILing nodes and marks the other without cordoning it; a later sweep,
// through the pod's in-cluster configuration, returns the node that now
// PASSes and quarantines the other in the room the return made. The
// records ConfigMaps verify with the public key, and nothing of gpuctl's is
// left in the namespace but them. Last, `accept --unmark` of the pool takes
// gpuctl's marks off every node but leaves the cordon the test put on one.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	if r := gpuctlRun(t, "generate", "acceptance", "../../examples/gke-h100-acceptance-sweep.yaml", "--as-of", "2026-12-03", "--out", dir); r.code != 0 {
		t.Fatalf("generate acceptance: exit %d", r.code)
	}
	argv := applySweepObjects(t, filepath.Join(dir, "manifests", "base", "acceptance.yaml"))
	priv, pub, _ := keys(t)
	argv = sweepArgv(t, argv, priv)

	const idle, busy, fail1, fail2 = "e2e-sweep-a-idle", "e2e-sweep-b-busy", "e2e-sweep-c-fail", "e2e-sweep-d-fail"
	for _, n := range []string{idle, busy, fail1, fail2} {
		sweepGPUNode(t, n)
	}
	// No device plugin Running: the kubernetes stage FAILs the node.
	stopDevicePlugin(t, fail1)
	stopDevicePlugin(t, fail2)
	holdGPUs(t, busy)

	work := t.TempDir() // the CronJob's workingDir: the evidence
	r := sweepRun(t, work, []string{"KUBECONFIG=" + kubeconfigFor(t, sweepNS, sweepSA)}, argv)
	if r.code != 3 {
		t.Fatalf("first sweep: exit %d, want 3 (two nodes FAIL)", r.code)
	}
	f := sweepSummary(t, r.stdout)
	if len(f.Skipped) != 1 || f.Skipped[0].Node != busy || !strings.HasPrefix(f.Skipped[0].Reason, "busy: pod e2e-sweep-work/trainer holds 8 GPUs") || len(f.Nodes) != 3 {
		t.Errorf("summary: skipped %+v, %d nodes probed", f.Skipped, len(f.Nodes))
	}
	wantAccepted(t, idle, corev1.ConditionTrue)
	wantQuarantined(t, fail1, true)
	wantQuarantined(t, fail2, false)
	if sw := summaryNode(f, fail2).Sweep; sw == nil || !strings.Contains(sw.NotQuarantined, "1 of 4 nodes are quarantined, --max-unhealthy 1") {
		t.Errorf("%s beyond the cap: %+v", fail2, sw)
	}
	wantUntouched(t, busy)
	wantEvent(t, fail1, "GPUQuarantined")
	for _, n := range []string{idle, fail1, fail2} {
		verifyRecordConfigMap(t, n, pub)
	}
	wantOnlyRecordsLeft(t, []string{idle, fail1, fail2})

	// fail1's device plugin runs again: the next sweep returns it on its
	// PASS, and quarantines fail2 in the room that frees.
	startDevicePlugin(t, fail1)
	r = sweepInCluster(t, work, argv)
	if r.code != 3 {
		t.Fatalf("second sweep: exit %d, want 3 (%s still FAILs)", r.code, fail2)
	}
	n := wantAccepted(t, fail1, corev1.ConditionTrue)
	if n.Spec.Unschedulable || hasTaint(n, accept.TaintUnaccepted) || n.Labels[accept.LabelAccept] != "pass" || n.Annotations[accept.AnnotationQuarantineReason] != "" || n.Annotations[accept.AnnotationAcceptAdded] != "" {
		t.Errorf("%s not returned: labels %v annotations %v unschedulable %v taints %v", fail1, n.Labels, n.Annotations, n.Spec.Unschedulable, n.Spec.Taints)
	}
	wantEvent(t, fail1, "GPUReturned")
	wantQuarantined(t, fail2, true)
	wantUntouched(t, busy)
	verifyRecordConfigMap(t, fail1, pub)
	wantOnlyRecordsLeft(t, []string{idle, fail1, fail2})

	// Turning it off: the operator cordons idle, then `accept --unmark` of
	// the CronJob's selection, with the ServiceAccount's token, takes off
	// everything of gpuctl's; idle stays cordoned, fail2's quarantine goes.
	unmarkPool(t, work, argv, idle, []string{idle, busy, fail1, fail2})
	if n := getNode(t, fail2); n.Spec.Unschedulable {
		t.Errorf("%s: gpuctl's cordon is still there", fail2)
	}
	wantEvent(t, fail2, "GPUUnmarked")
}

// unmarkPool cordons the node cordoned (as an operator would), runs
// `gpuctl accept --unmark` with the selector of the sweep's argv and the
// ServiceAccount's token, and checks that nodes carry nothing of gpuctl's
// (label, annotation, taint, condition) but that cordoned is still
// cordoned; a second run removes nothing.
func unmarkPool(t *testing.T, dir string, argv []string, cordoned string, nodes []string) {
	t.Helper()
	patch := []byte(`{"spec":{"unschedulable":true}}`)
	if _, err := client.CoreV1().Nodes().Patch(context.Background(), cordoned, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	i := slices.Index(argv, "-l")
	if i < 0 || i+1 >= len(argv) {
		t.Fatalf("the CronJob's command line has no -l: %v", argv)
	}
	env := []string{"KUBECONFIG=" + kubeconfigFor(t, sweepNS, sweepSA)}
	unmark := []string{"accept", "--unmark", "-l", argv[i+1], "-o", "json"}
	r := sweepRun(t, dir, env, unmark)
	if r.code != 0 {
		t.Fatalf("unmark: exit %d", r.code)
	}
	var got []render.AcceptUnmarked
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != len(nodes) {
		t.Fatalf("unmark -o json: %v, %d nodes, want %d\n%s", err, len(got), len(nodes), r.stdout)
	}
	for _, u := range got {
		if len(u.Errors) > 0 || (u.Node == cordoned) != slices.Equal(u.Kept, []string{accept.UnmarkedCordon}) {
			t.Errorf("unmark %s: %+v", u.Node, u)
		}
	}
	for _, name := range nodes {
		n := getNode(t, name)
		for k := range n.Labels {
			if strings.HasPrefix(k, "gpuctl.dev/") {
				t.Errorf("%s still has label %s", name, k)
			}
		}
		for k := range n.Annotations {
			if strings.HasPrefix(k, "gpuctl.dev/") {
				t.Errorf("%s still has annotation %s", name, k)
			}
		}
		if gpuAccepted(n) != nil || hasTaint(n, accept.TaintUnaccepted) || (name == cordoned) != n.Spec.Unschedulable {
			t.Errorf("%s after unmark: condition %+v, taints %v, unschedulable %v", name, gpuAccepted(n), n.Spec.Taints, n.Spec.Unschedulable)
		}
	}
	r = sweepRun(t, dir, env, unmark)
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 || slices.ContainsFunc(got, func(u render.AcceptUnmarked) bool { return len(u.Removed) > 0 }) {
		t.Errorf("second unmark: exit %d %v, want nothing removed\n%s", r.code, err, r.stdout)
	}
}

// applySweepObjects creates the objects of the generated acceptance.yaml
// but the CronJob (deleted again when the test ends) and returns the
// CronJob's command line after the binary.
func applySweepObjects(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var argv []string
	for _, d := range bytes.Split(b, []byte("\n---\n")) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(d, &meta); err != nil || meta.Kind == "" {
			continue // the header's comments
		}
		if meta.Kind == "CronJob" {
			var cj batchv1.CronJob
			if err := yaml.UnmarshalStrict(d, &cj); err != nil {
				t.Fatal(err)
			}
			argv = cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args
			continue
		}
		createSweepObject(t, meta.Kind, d)
	}
	if len(argv) == 0 {
		t.Fatal("acceptance.yaml has no CronJob")
	}
	return argv
}

// createSweepObject creates one object of acceptance.yaml, of kind, from
// its YAML.
func createSweepObject(t *testing.T, kind string, doc []byte) {
	t.Helper()
	ctx, bg := context.Background(), context.Background()
	var err error
	var cleanup func()
	switch kind {
	case "Namespace":
		var o corev1.Namespace
		mustUnmarshal(t, doc, &o)
		// TestGeneratedObjects applies the examples' namespaces, this one
		// among them, and deletes them when it ends.
		eventually(t, 90*time.Second, "namespace "+o.Name+" of an earlier test gone", func() bool {
			_, err := client.CoreV1().Namespaces().Get(ctx, o.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
		_, err = client.CoreV1().Namespaces().Create(ctx, &o, metav1.CreateOptions{})
		cleanup = func() { _ = client.CoreV1().Namespaces().Delete(bg, o.Name, metav1.DeleteOptions{}) }
	case "ServiceAccount":
		var o corev1.ServiceAccount
		mustUnmarshal(t, doc, &o)
		_, err = client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
	case "Role":
		var o rbacv1.Role
		mustUnmarshal(t, doc, &o)
		_, err = client.RbacV1().Roles(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		cleanup = func() { _ = client.RbacV1().Roles(o.Namespace).Delete(bg, o.Name, metav1.DeleteOptions{}) }
	case "RoleBinding":
		var o rbacv1.RoleBinding
		mustUnmarshal(t, doc, &o)
		_, err = client.RbacV1().RoleBindings(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		cleanup = func() { _ = client.RbacV1().RoleBindings(o.Namespace).Delete(bg, o.Name, metav1.DeleteOptions{}) }
	case "ClusterRole":
		var o rbacv1.ClusterRole
		mustUnmarshal(t, doc, &o)
		_, err = client.RbacV1().ClusterRoles().Create(ctx, &o, metav1.CreateOptions{})
		cleanup = func() { _ = client.RbacV1().ClusterRoles().Delete(bg, o.Name, metav1.DeleteOptions{}) }
	case "ClusterRoleBinding":
		var o rbacv1.ClusterRoleBinding
		mustUnmarshal(t, doc, &o)
		_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, &o, metav1.CreateOptions{})
		cleanup = func() { _ = client.RbacV1().ClusterRoleBindings().Delete(bg, o.Name, metav1.DeleteOptions{}) }
	default:
		t.Fatalf("acceptance.yaml: unexpected kind %s", kind)
	}
	if err != nil {
		t.Fatalf("creating the generated %s: %v", kind, err)
	}
	if cleanup != nil {
		t.Cleanup(cleanup)
	}
}

func mustUnmarshal(t *testing.T, doc []byte, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		t.Fatal(err)
	}
}

// sweepArgv is the CronJob's command line with the test's key in place of
// the mounted Secret's and a cap of one node.
func sweepArgv(t *testing.T, argv []string, key string) []string {
	t.Helper()
	argv = slices.Clone(argv)
	for _, flag := range []string{"--key", "--max-unhealthy"} {
		i := slices.Index(argv, flag)
		if i < 0 || i+1 >= len(argv) {
			t.Fatalf("the CronJob's command line has no %s: %v", flag, argv)
		}
	}
	argv[slices.Index(argv, "--key")+1] = key
	argv[slices.Index(argv, "--max-unhealthy")+1] = "1"
	return argv
}

// sweepGPUNode is an 8x H100 kwok node of the sweep's pool.
func sweepGPUNode(t *testing.T, name string) {
	t.Helper()
	fakeGPUNode(t, name, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
	patch := []byte(`{"metadata":{"labels":{"` + sweepPool + `":"train-h100"}}}`)
	if _, err := client.CoreV1().Nodes().Patch(context.Background(), name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// stopDevicePlugin deletes node's device plugin pod and waits until it is
// gone.
func stopDevicePlugin(t *testing.T, node string) {
	t.Helper()
	ctx := context.Background()
	name := "nvidia-device-plugin-" + node
	if err := client.CoreV1().Pods("kube-system").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "device plugin pod "+name+" gone", func() bool {
		_, err := client.CoreV1().Pods("kube-system").Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// startDevicePlugin runs node's device plugin pod again.
func startDevicePlugin(t *testing.T, node string) {
	t.Helper()
	ctx := context.Background()
	plugin := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "nvidia-device-plugin-" + node, Namespace: "kube-system", Labels: map[string]string{"app": "nvidia-device-plugin-daemonset"}},
		Spec: corev1.PodSpec{NodeName: node, AutomountServiceAccountToken: ptr(false),
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers:  []corev1.Container{{Name: "plugin", Image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}}},
	}
	if _, err := client.CoreV1().Pods("kube-system").Create(ctx, plugin, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "device plugin pod on "+node+" Running", func() bool {
		p, err := client.CoreV1().Pods("kube-system").Get(ctx, plugin.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	})
}

// holdGPUs binds a training pod (not gpuctl's) holding the node's 8 GPUs.
func holdGPUs(t *testing.T, node string) {
	t.Helper()
	ctx := context.Background()
	const ns = "e2e-sweep-work"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	q := resource.MustParse("8")
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: ns},
		Spec: corev1.PodSpec{NodeName: node, AutomountServiceAccountToken: ptr(false),
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: "train", Image: "registry.example.com/train:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{accept.ResourceGPU: q}}}}},
	}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// sweepRun runs gpuctl with argv in dir (the CronJob's workingDir) with env
// added.
func sweepRun(t *testing.T, dir string, env, argv []string) run {
	t.Helper()
	return sweepExec(t, exec.Command(gpuctl, argv...), dir, append(os.Environ(), env...), argv)
}

func sweepExec(t *testing.T, cmd *exec.Cmd, dir string, env, argv []string) run {
	t.Helper()
	cmd.Dir, cmd.Env = dir, env
	return runCmd(t, cmd, argv)
}

// sweepInCluster runs the sweep as in the CronJob's pod: no kubeconfig,
// KUBERNETES_SERVICE_HOST/PORT set, and the ServiceAccount's token and the
// cluster's CA at /var/run/secrets/kubernetes.io/serviceaccount, where
// client-go's in-cluster configuration reads them. The files are put there
// in a mount namespace of an unprivileged user namespace (unshare -rm, a
// tmpfs over /var/run); without user namespaces it runs with the token's
// kubeconfig instead and says so.
func sweepInCluster(t *testing.T, dir string, argv []string) run {
	t.Helper()
	if err := exec.Command("unshare", "-rm", "true").Run(); err != nil {
		t.Logf("no unprivileged user namespaces (unshare -rm: %v): the in-cluster configuration is not exercised; the token's kubeconfig is used", err)
		return sweepRun(t, dir, []string{"KUBECONFIG=" + kubeconfigFor(t, sweepNS, sweepSA)}, argv)
	}
	cfg, err := clientcmd.LoadFromFile(os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	cluster := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	host, port, ok := strings.Cut(strings.TrimPrefix(cluster.Server, "https://"), ":")
	if !ok {
		t.Fatalf("server %s has no port", cluster.Server)
	}
	tok, err := client.CoreV1().ServiceAccounts(sweepNS).CreateToken(context.Background(), sweepSA, tokenRequest(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files := t.TempDir()
	token, ca := filepath.Join(files, "token"), filepath.Join(files, "ca.crt")
	if err := os.WriteFile(token, []byte(tok.Status.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, cluster.CertificateAuthorityData, 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "KUBECONFIG=") && !strings.HasPrefix(e, "HOME=") {
			env = append(env, e)
		}
	}
	env = append(env, "HOME="+t.TempDir(), "KUBERNETES_SERVICE_HOST="+host, "KUBERNETES_SERVICE_PORT="+port)
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount"
	script := `mount -t tmpfs tmpfs /var/run && mkdir -p ` + sa + ` && cp "$1" ` + sa + `/token && cp "$2" ` + sa + `/ca.crt && shift 2 && exec "$@"`
	cmd := exec.Command("unshare", append([]string{"-rm", "sh", "-c", script, "sh", token, ca, gpuctl}, argv...)...)
	return sweepExec(t, cmd, dir, env, append([]string{"(in-cluster)"}, argv...))
}

// sweepSummary is the fleet summary, the last line of the sweep's stdout.
func sweepSummary(t *testing.T, stdout string) render.Fleet {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var f render.Fleet
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &f); err != nil || f.Kind != "AcceptFleet" {
		t.Fatalf("the last line of stdout is not the fleet summary: %v\n%s", err, stdout)
	}
	return f
}

func summaryNode(f render.Fleet, node string) render.FleetNode {
	for _, n := range f.Nodes {
		if n.Node == node {
			return n
		}
	}
	return render.FleetNode{}
}

func getNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func hasTaint(n *corev1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}

func gpuAccepted(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == accept.ConditionGPUAccepted {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// wantAccepted checks node's GPUAccepted condition (status, the record
// digest in its message) and verdict annotations, and returns the node.
func wantAccepted(t *testing.T, name string, status corev1.ConditionStatus) *corev1.Node {
	t.Helper()
	n := getNode(t, name)
	c := gpuAccepted(n)
	digest := n.Annotations[accept.AnnotationRecordDigest]
	verdict := map[corev1.ConditionStatus]string{corev1.ConditionTrue: "PASS", corev1.ConditionFalse: "FAIL"}[status]
	if _, err := time.Parse(time.RFC3339, n.Annotations[accept.AnnotationAcceptTime]); err != nil || c == nil || c.Status != status ||
		!strings.HasPrefix(digest, "sha256:") || !strings.HasSuffix(c.Message, digest) || n.Annotations[accept.AnnotationAcceptVerdict] != verdict {
		t.Errorf("%s: condition %+v, annotations %v; want %s, %s", name, c, n.Annotations, status, verdict)
	}
	return n
}

// wantQuarantined checks a FAILed node: marked, and cordoned and tainted
// with the reason (quarantined) or neither.
func wantQuarantined(t *testing.T, name string, quarantined bool) {
	t.Helper()
	n := wantAccepted(t, name, corev1.ConditionFalse)
	reason := n.Annotations[accept.AnnotationQuarantineReason]
	got := n.Spec.Unschedulable && hasTaint(n, accept.TaintUnaccepted) && strings.Contains(reason, "no device plugin pod Running")
	if n.Labels[accept.LabelAccept] != "fail" || got != quarantined || (!quarantined && (n.Spec.Unschedulable || hasTaint(n, accept.TaintUnaccepted) || reason != "")) {
		t.Errorf("%s: quarantined %v, want %v: labels %v annotations %v unschedulable %v taints %v", name, got, quarantined, n.Labels, n.Annotations, n.Spec.Unschedulable, n.Spec.Taints)
	}
}

// wantUntouched checks that the busy node carries nothing of gpuctl's.
func wantUntouched(t *testing.T, name string) {
	t.Helper()
	n := getNode(t, name)
	for k := range n.Labels {
		if strings.HasPrefix(k, "gpuctl.dev/") {
			t.Errorf("busy node %s has label %s", name, k)
		}
	}
	for k := range n.Annotations {
		if strings.HasPrefix(k, "gpuctl.dev/") {
			t.Errorf("busy node %s has annotation %s", name, k)
		}
	}
	if gpuAccepted(n) != nil || n.Spec.Unschedulable || hasTaint(n, accept.TaintUnaccepted) {
		t.Errorf("busy node %s changed: %+v unschedulable %v", name, gpuAccepted(n), n.Spec.Unschedulable)
	}
}

func wantEvent(t *testing.T, node, reason string) {
	t.Helper()
	evs, err := client.CoreV1().Events(accept.EventNamespace).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + node, LabelSelector: gpuctlEvents})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(evs.Items, func(e corev1.Event) bool { return e.Reason == reason }) {
		t.Errorf("no %s Event on %s", reason, node)
	}
}

// verifyRecordConfigMap checks node's records ConfigMap: its record is the
// one the node's digest annotation names and verifies with pub.
func verifyRecordConfigMap(t *testing.T, node, pub string) {
	t.Helper()
	cm, err := client.CoreV1().ConfigMaps(sweepNS).Get(context.Background(), accept.RecordConfigMapName(node), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data := cm.Data[accept.RecordConfigMapKey]
	sum := sha256.Sum256([]byte(data))
	if want := getNode(t, node).Annotations[accept.AnnotationRecordDigest]; "sha256:"+hex.EncodeToString(sum[:]) != want {
		t.Errorf("%s: the ConfigMap's record is not the one the node names (%s)", node, want)
	}
	path := filepath.Join(t.TempDir(), "record.dsse.json")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := gpuctlRun(t, "verify", path, "--key", pub); r.code != 0 || !strings.Contains(r.stdout, "verified: node/"+node) {
		t.Errorf("verify %s's ConfigMap record: exit %d %s", node, r.code, r.stdout)
	}
}

// wantOnlyRecordsLeft checks the sweep's namespace: no Job, pod or Service
// left, and ConfigMaps only the nodes' records (and the control plane's
// kube-root-ca.crt).
func wantOnlyRecordsLeft(t *testing.T, nodes []string) {
	t.Helper()
	ctx := context.Background()
	assertNothingLeft(t, sweepNS)
	pods, _ := client.CoreV1().Pods(sweepNS).List(ctx, metav1.ListOptions{})
	svcs, _ := client.CoreV1().Services(sweepNS).List(ctx, metav1.ListOptions{})
	jobs, _ := client.BatchV1().Jobs(sweepNS).List(ctx, metav1.ListOptions{})
	if len(pods.Items)+len(svcs.Items)+len(jobs.Items) > 0 {
		t.Errorf("left in %s: %d pods, %d Services, %d Jobs", sweepNS, len(pods.Items), len(svcs.Items), len(jobs.Items))
	}
	want := []string{"kube-root-ca.crt"}
	for _, n := range nodes {
		want = append(want, accept.RecordConfigMapName(n))
	}
	cms, err := client.CoreV1().ConfigMaps(sweepNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cm := range cms.Items {
		got = append(got, cm.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("ConfigMaps in %s: %v, want %v", sweepNS, got, want)
	}
}

// tokenRequest asks for an hour's token.
func tokenRequest() *authv1.TokenRequest {
	return &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}
}
