package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/diag"
)

// busyPod is a training pod, not gpuctl's, holding 8 GPUs on node.
func busyPod(node string) *corev1.Pod {
	q := resource.MustParse("8")
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: "train"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "t", Image: "train:1",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{accept.ResourceGPU: q}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// sweepFleet is the fleet summary a sweep prints as the last line of
// stdout with -o json.
func sweepFleet(t *testing.T, stdout string) render.Fleet {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var f render.Fleet
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &f); err != nil || f.Kind != "AcceptFleet" {
		t.Fatalf("last line of stdout is not the fleet summary: %v\n%s", err, stdout)
	}
	return f
}

func fleetNode(f render.Fleet, name string) render.FleetNode {
	for _, n := range f.Nodes {
		if n.Node == name {
			return n
		}
	}
	return render.FleetNode{}
}

func acceptedCondition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == accept.ConditionGPUAccepted {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// TestAcceptSweepSkipsQuarantinesAndReturns: a busy node is skipped and
// untouched; of two FAILed nodes with --max-unhealthy 1 only the first is
// quarantined, the other marked and reported; every probed node gets the
// condition, the annotations and its records ConfigMap. In the next sweep
// the quarantined node PASSes and is returned, which frees the cap for the
// other.
func TestAcceptSweepSkipsQuarantinesAndReturns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var objs []runtime.Object
	objs = append(objs, markNodeObjects("gpu-1", true)...)
	objs = append(objs, markNodeObjects("gpu-2", true)...)
	objs = append(objs, busyPod("gpu-2"))
	objs = append(objs, markNodeObjects("gpu-3", false)...)
	objs = append(objs, markNodeObjects("gpu-4", false)...)
	c := markClient(nil, objs...)
	args := []string{"accept", "--sweep", "-l", "team=a", "-n", "gpuctl", "--stages", "kubernetes", "--parallel", "2", "--max-unhealthy", "1",
		"--evidence-dir", dir, "--records-configmap", "-q", "-o", "json"}
	ctx := context.Background()
	streams, _, out, errOut := TestStreams()
	if code := RunWithFactory(ctx, args, streams, fakeFactory(c)); code != ExitCheckFailed {
		t.Fatalf("exit %d, want 3: %s", code, errOut)
	}
	node := func(name string) *corev1.Node {
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := node("gpu-2"); len(n.Labels) != 1 || len(n.Annotations) != 0 || acceptedCondition(n) != nil || n.Spec.Unschedulable {
		t.Errorf("busy node changed: %v %v %+v", n.Labels, n.Annotations, n.Status.Conditions)
	}
	if n := node("gpu-1"); acceptedCondition(n) == nil || acceptedCondition(n).Status != corev1.ConditionTrue || n.Annotations[accept.AnnotationAcceptVerdict] != "PASS" ||
		!strings.HasSuffix(acceptedCondition(n).Message, n.Annotations[accept.AnnotationRecordDigest]) {
		t.Errorf("gpu-1 after PASS: %v %+v", n.Annotations, n.Status.Conditions)
	}
	if n := node("gpu-3"); !accept.IsQuarantined(n) || !n.Spec.Unschedulable || !strings.HasPrefix(n.Annotations[accept.AnnotationQuarantineReason], "FAIL: kubernetes: node gpu-3 is not Ready") ||
		acceptedCondition(n).Status != corev1.ConditionFalse {
		t.Errorf("gpu-3 not quarantined: %v %v", n.Annotations, n.Spec)
	}
	if n := node("gpu-4"); accept.IsQuarantined(n) || n.Spec.Unschedulable || n.Labels[accept.LabelAccept] != "fail" || acceptedCondition(n).Reason != "Fail" {
		t.Errorf("gpu-4 beyond the cap: %v %v %v", n.Labels, n.Annotations, n.Spec)
	}
	f := sweepFleet(t, out.String())
	if len(f.Skipped) != 1 || f.Skipped[0].Node != "gpu-2" || f.Skipped[0].Reason != "busy: pod train/trainer holds 8 GPUs" || len(f.Nodes) != 3 {
		t.Errorf("fleet skipped %+v, %d nodes", f.Skipped, len(f.Nodes))
	}
	if sw := fleetNode(f, "gpu-4").Sweep; sw == nil || sw.Quarantined || !strings.Contains(sw.NotQuarantined, "1 of 4 nodes are quarantined, --max-unhealthy 1") {
		t.Errorf("gpu-4's sweep %+v", sw)
	}
	if sw := fleetNode(f, "gpu-1").Sweep; sw == nil || sw.RecordConfigMap != "gpuctl/gpuctl-record-gpu-1" || sw.Condition != "True (Pass)" {
		t.Errorf("gpu-1's sweep %+v", sw)
	}
	cm, err := c.CoreV1().ConfigMaps("gpuctl").Get(ctx, "gpuctl-record-gpu-1", metav1.GetOptions{})
	rec, _ := os.ReadFile(fleetNode(f, "gpu-1").Record)
	if err != nil || cm.Data[accept.RecordConfigMapKey] != string(rec) || len(rec) == 0 {
		t.Errorf("records ConfigMap %v: holds the record file: %v", err, cm != nil && cm.Data[accept.RecordConfigMapKey] == string(rec))
	}
	for _, want := range []string{"node gpu-2  SKIPPED  busy: pod train/trainer holds 8 GPUs: not probed, not changed", "quarantined: cordoned, tainted gpuctl.dev/unaccepted=fail:NoSchedule",
		"NOT quarantined: 1 of 4 nodes are quarantined", "condition GPUAccepted=True (Pass)", "1 skipped (busy)"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	// gpu-3 recovers: returned on its PASS; the cap admits gpu-4 now.
	n3 := node("gpu-3")
	n3.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n3, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	fac := fakeFactory(c)
	fac.Random = func() uint16 { return 0xc3d4 }
	streams, _, out, errOut = TestStreams()
	if code := RunWithFactory(ctx, args, streams, fac); code != ExitCheckFailed {
		t.Fatalf("second sweep: exit %d, want 3 (gpu-4 FAILs): %s", code, errOut)
	}
	if n := node("gpu-3"); accept.IsQuarantined(n) || n.Spec.Unschedulable || n.Annotations[accept.AnnotationQuarantineReason] != "" || n.Labels[accept.LabelAccept] != "pass" ||
		acceptedCondition(n).Status != corev1.ConditionTrue {
		t.Errorf("gpu-3 not returned: %v %v %v", n.Labels, n.Annotations, n.Spec)
	}
	if n := node("gpu-4"); !accept.IsQuarantined(n) || !n.Spec.Unschedulable {
		t.Errorf("gpu-4 not quarantined once the cap had room: %v", n.Spec)
	}
	if sw := fleetNode(sweepFleet(t, out.String()), "gpu-3").Sweep; sw == nil || !sw.Returned {
		t.Errorf("gpu-3's sweep %+v", sw)
	}
	if !strings.Contains(errOut.String(), "returned to scheduling") {
		t.Errorf("stderr lacks the return:\n%s", errOut)
	}
}

// TestAcceptSweepAllBusy: a sweep whose every node is busy probes nothing,
// changes nothing and exits 0, the skipped nodes in its summary.
func TestAcceptSweepAllBusy(t *testing.T) {
	t.Parallel()
	objs := append(markNodeObjects("gpu-1", true), busyPod("gpu-1"))
	c := markClient(nil, objs...)
	streams, _, out, errOut := TestStreams()
	args := []string{"accept", "--sweep", "-l", "team=a", "-n", "gpuctl", "--stages", "kubernetes", "--evidence-dir", t.TempDir(), "-q", "-o", "json"}
	if code := RunWithFactory(context.Background(), args, streams, fakeFactory(c)); code != 0 {
		t.Fatalf("exit %d, want 0: %s", code, errOut)
	}
	if f := sweepFleet(t, out.String()); len(f.Skipped) != 1 || len(f.Nodes) != 0 {
		t.Errorf("fleet %+v", f)
	}
	jobs, _ := c.BatchV1().Jobs("gpuctl").List(context.Background(), metav1.ListOptions{})
	if len(jobs.Items) != 0 {
		t.Errorf("%d Jobs for a busy node", len(jobs.Items))
	}
}

// TestAcceptSweepFlags: the sweep's flags against the others.
func TestAcceptSweepFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"accept", "n1", "--records-configmap"}, "--records-configmap needs --sweep"},
		{[]string{"accept", "--sweep", "--offline", "dir"}, "--sweep needs a cluster"},
		{[]string{"accept", "n1", "--sweep", "--cordon-on-fail"}, "drop --taint-on-fail and --cordon-on-fail"},
	} {
		streams, _, _, errOut := TestStreams()
		if code := RunWithFactory(context.Background(), c.args, streams, fakeFactory(fake.NewClientset())); code != ExitUsage || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestSweepArgvOfGeneratedCronJob: the command line of the CronJob that
// `gpuctl generate acceptance` writes is one accept takes (its key swapped
// for a test key), and its dry run with --bind to the sweep's
// ServiceAccount prints exactly the generated file's RBAC.
func TestSweepArgvOfGeneratedCronJob(t *testing.T) {
	t.Parallel()
	streams, _, _, _ := TestStreams()
	argv, rbac := generatedSweep(t, "../../examples/gke-h100-acceptance-sweep.yaml")
	i := slices.Index(argv, "--key")
	if len(argv) == 0 || argv[0] != "accept" || !slices.Contains(argv, "--sweep") || i < 0 {
		t.Fatalf("CronJob args %v", argv)
	}
	keyDir := t.TempDir()
	if code := RunWithFactory(context.Background(), []string{"keygen", "--out", filepath.Join(keyDir, "k")}, streams, NewFactory()); code != 0 {
		t.Fatalf("keygen: %d", code)
	}
	argv = slices.Clone(argv)
	argv[i+1] = filepath.Join(keyDir, "k.key")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gke-train-h100-1", Labels: map[string]string{"cloud.google.com/gke-nodepool": "train-h100",
		"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "4"}},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{accept.ResourceGPU: resource.MustParse("8")}}}
	streams, _, out, errOut := TestStreams()
	args := append(argv, "--dry-run", "-o", "yaml", "--bind", "serviceaccount:gpuctl-acceptance:gpuctl-accept-sweep")
	if code := RunWithFactory(context.Background(), args, streams, fakeFactory(fake.NewClientset(node))); code != 0 {
		t.Fatalf("accept %v: exit %d: %s", args, code, errOut)
	}
	if d := cmp.Diff(rbac, rbacDocs(t, out.Bytes())); d != "" || len(rbac) == 0 {
		t.Errorf("the sweep's dry-run RBAC differs from the generated file's (-generated +dry run):\n%s", d)
	}
}

// generatedSweep runs gpuctl generate acceptance on specFile and returns
// the CronJob's args and the RBAC objects of manifests/base/acceptance.yaml.
func generatedSweep(t *testing.T, specFile string) (argv []string, rbac []map[string]any) {
	t.Helper()
	dir := t.TempDir()
	streams, _, _, errOut := TestStreams()
	if code := RunWithFactory(context.Background(), []string{"generate", "acceptance", specFile, "--as-of", "2026-12-03", "--out", dir}, streams, NewFactory()); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, errOut)
	}
	for _, d := range yamlDocs(t, filepath.Join(dir, "manifests", "base", "acceptance.yaml")) {
		switch {
		case d["kind"] == "CronJob":
			var cj struct {
				Spec struct {
					JobTemplate struct {
						Spec struct {
							Template struct {
								Spec corev1.PodSpec `json:"spec"`
							} `json:"template"`
						} `json:"spec"`
					} `json:"jobTemplate"`
				} `json:"spec"`
			}
			b, _ := json.Marshal(d)
			if err := json.Unmarshal(b, &cj); err != nil {
				t.Fatal(err)
			}
			argv = cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args
		case strings.HasPrefix(d["apiVersion"].(string), "rbac.authorization.k8s.io/"):
			rbac = append(rbac, d)
		}
	}
	return argv, rbac
}

// rbacDocs are the RBAC objects of a YAML stream.
func rbacDocs(t *testing.T, stream []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range splitYAML(t, stream) {
		if v, _ := d["apiVersion"].(string); strings.HasPrefix(v, "rbac.authorization.k8s.io/") {
			out = append(out, d)
		}
	}
	return out
}

func yamlDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return splitYAML(t, b)
}

// splitYAML decodes each document of a YAML stream (comments and empty
// documents left out).
func splitYAML(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range bytes.Split(b, []byte("\n---\n")) {
		var m map[string]any
		if err := yaml.Unmarshal(d, &m); err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// TestAcceptSweepInconclusiveKeepsQuarantine: a quarantined node whose
// sweep ends INCONCLUSIVE (its GPUs now partitioned) stays cordoned,
// tainted and labelled fail; its condition (Unknown) and verdict annotation
// say INCONCLUSIVE.
func TestAcceptSweepInconclusiveKeepsQuarantine(t *testing.T) {
	t.Parallel()
	objs := markNodeObjects("gpu-1", false)
	c := markClient(nil, objs...)
	args := []string{"accept", "--sweep", "-l", "team=a", "-n", "gpuctl", "--stages", "kubernetes", "--evidence-dir", t.TempDir(), "-q"}
	ctx := context.Background()
	streams, _, _, errOut := TestStreams()
	if code := RunWithFactory(ctx, args, streams, fakeFactory(c)); code != ExitCheckFailed {
		t.Fatalf("exit %d, want 3: %s", code, errOut)
	}
	n, _ := c.CoreV1().Nodes().Get(ctx, "gpu-1", metav1.GetOptions{})
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	n.Status.Capacity["nvidia.com/mig-1g.10gb"] = resource.MustParse("7")
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	fac := fakeFactory(c)
	fac.Random = func() uint16 { return 0xc3d4 }
	streams, _, _, errOut = TestStreams()
	if code := RunWithFactory(ctx, args, streams, fac); code != ExitInconclusive {
		t.Fatalf("exit %d, want 4: %s", code, errOut)
	}
	n, _ = c.CoreV1().Nodes().Get(ctx, "gpu-1", metav1.GetOptions{})
	if !accept.IsQuarantined(n) || !n.Spec.Unschedulable || acceptedCondition(n).Status != corev1.ConditionUnknown || n.Annotations[accept.AnnotationQuarantineReason] == "" ||
		n.Labels[accept.LabelAccept] != "fail" || n.Annotations[accept.AnnotationAcceptVerdict] != "INCONCLUSIVE" {
		t.Errorf("after INCONCLUSIVE: %v %v %+v", n.Annotations, n.Spec, acceptedCondition(n))
	}
}

// TestSweepRecordTooLargeIsReported: a record over the ConfigMap cap is an
// error of the node's report and exit 1, not a crash, and nothing is
// stored.
func TestSweepRecordTooLargeIsReported(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "record.dsse.json")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), accept.MaxRecordConfigMapBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	streams, _, _, errOut := TestStreams()
	o := &acceptOptions{streams: streams, kube: newKubeFlags()}
	c := fake.NewClientset()
	n := &render.AcceptNode{Node: "gpu-1", Record: path, Sweep: &render.AcceptSweep{}}
	o.storeRecord(context.Background(), c, n, accept.MarkRecordRef{Digest: "sha256:00"})
	if len(n.Sweep.Errors) != 1 || !strings.Contains(n.Sweep.Errors[0], "record too large for a ConfigMap") || n.Sweep.RecordConfigMap != "" {
		t.Errorf("sweep %+v", n.Sweep)
	}
	if !strings.Contains(errOut.String(), "error: node gpu-1: --sweep: records ConfigMap: ") {
		t.Errorf("stderr %q", errOut)
	}
	if err := o.exitCode([]diag.Verdict{diag.Pass}, nil); exitCodeOf(err) != ExitToolError {
		t.Errorf("exit %v, want 1", err)
	}
	var b bytes.Buffer
	if err := render.AcceptText(&b, false, *n); err != nil || !strings.Contains(b.String(), "error: records ConfigMap: node gpu-1: the record is") {
		t.Errorf("report %v:\n%s", err, b.String())
	}
}
