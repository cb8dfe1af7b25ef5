//go:build e2e

// Package e2e runs `gpuctl accept` against a real control plane (etcd,
// kube-apiserver, kube-controller-manager) whose GPU nodes and probe pods are
// faked by kwok, which serves outputs from the corpus (testdata/corpus) as the
// probe pods' logs. hack/e2e.sh starts everything and runs these tests; they need
// KUBECONFIG and the kwok configuration in hack/e2e/kwok.yaml.
package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/test/browser"
)

var (
	gpuctl string // the built binary
	client kubernetes.Interface
)

func TestMain(m *testing.M) {
	if os.Getenv("KUBECONFIG") == "" {
		fmt.Fprintln(os.Stderr, "e2e: KUBECONFIG not set; run hack/e2e.sh")
		os.Exit(1)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err == nil {
		client, err = kubernetes.NewForConfig(cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "gpuctl-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	gpuctl = filepath.Join(dir, "gpuctl")
	build := exec.Command("go", "build", "-o", gpuctl, "../../cmd/gpuctl")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building gpuctl:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeGPUNode creates a kwok node with whole GPUs and GPU Feature Discovery
// labels, and a device plugin pod Running on it.
func fakeGPUNode(t *testing.T, name, product string, gpus int, driverCUDA string) {
	t.Helper()
	fakeGPUNodeWith(t, name, product, gpus, driverCUDA, nil)
}

// fakeGPUNodeWith is fakeGPUNode with extra capacity and allocatable (a
// fabric's EFA interfaces, GKE networks).
func fakeGPUNodeWith(t *testing.T, name, product string, gpus int, driverCUDA string, extra corev1.ResourceList) {
	t.Helper()
	ctx := context.Background()
	maj, min, _ := strings.Cut(driverCUDA, ".")
	q := resource.MustParse(fmt.Sprint(gpus))
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			Labels: map[string]string{"kubernetes.io/hostname": name, "type": "kwok",
				"nvidia.com/gpu.product": product, "nvidia.com/gpu.count": fmt.Sprint(gpus),
				"nvidia.com/cuda.runtime-version.major": maj, "nvidia.com/cuda.runtime-version.minor": min}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"), "pods": resource.MustParse("110"), accept.ResourceGPU: q},
			Allocatable: corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"), "pods": resource.MustParse("110"), accept.ResourceGPU: q},
		},
	}
	for r, q := range extra {
		node.Status.Capacity[r], node.Status.Allocatable[r] = q, q
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	plugin := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "nvidia-device-plugin-" + name, Namespace: "kube-system", Labels: map[string]string{"app": "nvidia-device-plugin-daemonset"}},
		Spec: corev1.PodSpec{NodeName: name, AutomountServiceAccountToken: ptr(false),
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}},
			Containers:  []corev1.Container{{Name: "plugin", Image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}}},
	}
	if _, err := client.CoreV1().Pods("kube-system").Create(ctx, plugin, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Pods("kube-system").Delete(context.Background(), plugin.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
	})
	eventually(t, 60*time.Second, "node "+name+" Ready and its device plugin Running", func() bool {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		p, err := client.CoreV1().Pods("kube-system").Get(ctx, plugin.Name, metav1.GetOptions{})
		return ready && err == nil && p.Status.Phase == corev1.PodRunning
	})
}

// eventually waits for a test precondition (the product itself never polls).
func eventually(t *testing.T, d time.Duration, what string, f func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !f() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func ptr[T any](v T) *T { return &v }

type run struct {
	code           int
	stdout, stderr string
	dur            time.Duration
}

func gpuctlRun(t *testing.T, args ...string) run {
	t.Helper()
	return runCmd(t, exec.Command(gpuctl, args...), args)
}

// runCmd runs cmd (gpuctl with argv, its Dir and Env as the caller set
// them) and returns what it printed and its exit code; it logs the run.
func runCmd(t *testing.T, cmd *exec.Cmd, argv []string) run {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errOut.String(), dur: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	t.Logf("gpuctl %s -> exit %d in %s\n%s", strings.Join(argv, " "), r.code, r.dur.Round(time.Millisecond), r.stderr)
	return r
}

// keys writes a signing key pair and another public key.
func keys(t *testing.T) (priv, pub, otherPub string) {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []string{"k", "other"} {
		if r := gpuctlRun(t, "keygen", "--out", filepath.Join(dir, p)); r.code != 0 {
			t.Fatalf("keygen: %d", r.code)
		}
	}
	return filepath.Join(dir, "k.key"), filepath.Join(dir, "k.pub"), filepath.Join(dir, "other.pub")
}

// predicate decodes the record printed with -o json.
func predicate(t *testing.T, stdout string) (*dsse.Envelope, *accept.Predicate) {
	t.Helper()
	var env dsse.Envelope
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &env); err != nil {
		t.Fatalf("stdout is not one DSSE envelope: %v\n%s", err, stdout)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Predicate accept.Predicate `json:"predicate"`
	}
	if err := json.Unmarshal(payload, &st); err != nil {
		t.Fatal(err)
	}
	return &env, &st.Predicate
}

func stage(p *accept.Predicate, name accept.Stage) accept.StageResult {
	for _, s := range p.Stages {
		if s.Name == name {
			return s
		}
	}
	return accept.StageResult{}
}

// assertNothingLeft checks that no Job or pod of gpuctl remains in ns.
func assertNothingLeft(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	sel := accept.LabelManagedBy + "=" + accept.ManagedBy + "," + accept.LabelRunID + "!=" + decoyRunID
	jobs, err := client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items)+len(pods.Items) > 0 {
		t.Errorf("left behind in %s: %d jobs, %d pods", ns, len(jobs.Items), len(pods.Items))
	}
}

func evidenceDir(t *testing.T, base, node, runID string) string {
	t.Helper()
	dir := filepath.Join(base, node, runID)
	if _, err := os.Stat(filepath.Join(dir, "run.json")); err != nil {
		t.Fatal(err)
	}
	return dir
}

const decoyRunID = "someone-elses-run"

// decoyJob creates a Job in ns that looks like gpuctl's but belongs to
// another run; accept must leave it alone.
func decoyJob(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "decoy", Namespace: ns, Labels: accept.Labels(decoyRunID, accept.StageInventory)},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: accept.Labels(decoyRunID, accept.StageInventory)},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, NodeSelector: map[string]string{"no-such-node": "true"},
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}},
	}
	if _, err := client.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestHealthyH100NodePasses: an 8x H100 node whose probes print real outputs
// of 8x H100 machines passes every stage, the signed record verifies, and
// any changed byte of payload, signature or evidence, or another key, fails.
func TestHealthyH100NodePasses(t *testing.T) {
	const node, ns = "e2e-h100", "e2e-healthy"
	fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
	priv, pub, otherPub := keys(t)
	decoyJob(t, ns)
	base := t.TempDir()
	r := gpuctlRun(t, "accept", node, "-n", ns, "--create-namespace", "--key", priv, "--evidence-dir", base, "-o", "json", "--stage-timeout", "60s")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (PASS)", r.code)
	}
	assertNothingLeft(t, ns)
	if _, err := client.BatchV1().Jobs(ns).Get(context.Background(), "decoy", metav1.GetOptions{}); err != nil {
		t.Errorf("accept touched a Job of another run: %v", err)
	}
	env, p := predicate(t, r.stdout)
	if p.Verdict != diag.Pass {
		t.Fatalf("verdict %s", p.Verdict)
	}
	for st, want := range map[accept.Stage]string{
		accept.StageKubernetes: "node Ready, 8 GPUs",
		accept.StageInventory:  "8 x NVIDIA H100 80GB HBM3, driver 535.161.08 (CUDA 12.2); ECC, retired pages and row remapping clean; 144 NVLinks active",
		accept.StageTopology:   "all 28 GPU pairs NV18 as expected for h100-sxm-x8",
		accept.StageCUDA:       "CUDA sample passed on 8 GPU(s)",
		accept.StageNCCL:       "busbw 470.7 GB/s at 2 GiB meets the h100-sxm-x8 baseline",
	} {
		if s := stage(p, st); s.Verdict != diag.Pass || !strings.Contains(s.Reason, want) {
			t.Errorf("%s: %s %q, want PASS with %q", st, s.Verdict, s.Reason, want)
		}
	}
	if len(p.Hardware.InfoROM) != 8 || p.Hardware.InfoROM[0] != "G520.0200.00.05" {
		t.Errorf("hardware.inforom %v", p.Hardware.InfoROM)
	}
	if p.Hardware.GPUCount != 8 || len(p.Hardware.UUIDs) != 8 || p.NCCL == nil || p.NCCL.Baseline == nil || p.NCCL.Baseline.SKU != "h100-sxm-x8" {
		t.Errorf("record hardware %+v nccl %+v", p.Hardware, p.NCCL)
	}
	if !strings.Contains(p.Images["cuda"], "cuda11.7") {
		t.Errorf("cuda image %q: a CUDA 12.2 driver needs the CUDA 11.7 sample", p.Images["cuda"])
	}

	dir := evidenceDir(t, base, node, p.RunID)
	record := filepath.Join(dir, "record.dsse.json")
	if r := gpuctlRun(t, "verify", record, "--key", pub, "--evidence-dir", dir); r.code != 0 || !strings.Contains(r.stdout, "verified: node/"+node) {
		t.Fatalf("verify: exit %d %s", r.code, r.stdout)
	}
	if r := gpuctlRun(t, "verify", record, "--key", otherPub); r.code != 3 {
		t.Errorf("verify with another key: exit %d, want 3", r.code)
	}
	tampered := func(name string, edit func(e *dsse.Envelope)) string {
		e := *env
		e.Signatures = append([]dsse.Signature(nil), env.Signatures...)
		edit(&e)
		b, _ := json.Marshal(e)
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	flip := func(b64 string, i int) string {
		b, _ := base64.StdEncoding.DecodeString(b64)
		b[i%len(b)] ^= 0x01
		return base64.StdEncoding.EncodeToString(b)
	}
	for _, i := range []int{0, 100, 1000} {
		path := tampered("payload.json", func(e *dsse.Envelope) { e.Payload = flip(e.Payload, i) })
		if r := gpuctlRun(t, "verify", path, "--key", pub); r.code != 3 {
			t.Errorf("payload byte %d flipped: exit %d, want 3", i, r.code)
		}
		path = tampered("sig.json", func(e *dsse.Envelope) { e.Signatures[0].Sig = flip(e.Signatures[0].Sig, i) })
		if r := gpuctlRun(t, "verify", path, "--key", pub); r.code != 3 {
			t.Errorf("signature byte %d flipped: exit %d, want 3", i, r.code)
		}
	}
	ev := filepath.Join(dir, "nccl.all-reduce.log")
	data, err := os.ReadFile(ev)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x01
	if err := os.WriteFile(ev, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := gpuctlRun(t, "verify", record, "--key", pub, "--evidence-dir", dir); r.code != 3 || !strings.Contains(r.stdout, "evidence nccl.all-reduce.log") {
		t.Errorf("evidence byte flipped: exit %d %s", r.code, r.stdout)
	}
}

// TestRowRemapPendingFails: a 1-GPU node whose inventory shows a pending row
// remap fails at inventory, naming the reason; the later stages are skipped.
func TestRowRemapPendingFails(t *testing.T) {
	const node, ns = "e2e-a10", "e2e-remap"
	fakeGPUNode(t, node, "NVIDIA-A10", 1, "12.2")
	r := gpuctlRun(t, "accept", node, "-n", ns, "--create-namespace", "--evidence-dir", t.TempDir(), "-o", "json", "--stage-timeout", "60s")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (FAIL)", r.code)
	}
	assertNothingLeft(t, ns)
	var st struct {
		Predicate accept.Predicate `json:"predicate"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	p := &st.Predicate
	inv := stage(p, accept.StageInventory)
	if p.Verdict != diag.Fail || inv.Verdict != diag.Fail || !strings.Contains(inv.Reason, "row remap is pending") || !strings.Contains(inv.Reason, "00000000:07:00.0") {
		t.Errorf("verdict %s, inventory %s: %q", p.Verdict, inv.Verdict, inv.Reason)
	}
	if s := stage(p, accept.StageTopology); s.Verdict != diag.Skipped {
		t.Errorf("topology after a FAIL: %s", s.Verdict)
	}
	if !regexp.MustCompile(`inventory +FAIL`).MatchString(r.stderr) {
		t.Errorf("summary on stderr lacks the failing stage:\n%s", r.stderr)
	}
}

// TestFailRecordNamesTheGPU: an 8x H100 node whose GPU 3 has a row remap
// pending FAILs at inventory, and its signed record still describes the
// hardware it judged: all eight GPUs (UUIDs, serials, bus ids), the
// failing one named by UUID and serial, and a subject digest of them, not of
// nothing.
func TestFailRecordNamesTheGPU(t *testing.T) {
	const node, ns = "e2e-h100-remap", "e2e-remap8"
	fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
	keys := t.TempDir()
	if r := gpuctlRun(t, "keygen", "--out", filepath.Join(keys, "k")); r.code != 0 {
		t.Fatalf("keygen: exit %d: %s", r.code, r.stderr)
	}
	dir := t.TempDir()
	r := gpuctlRun(t, "accept", node, "-n", ns, "--create-namespace", "--key", filepath.Join(keys, "k.key"), "--evidence-dir", dir, "-o", "json", "--stage-timeout", "60s")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (FAIL): %s", r.code, r.stderr)
	}
	assertNothingLeft(t, ns)
	recs, _ := filepath.Glob(filepath.Join(dir, node, "*", accept.RecordFile))
	if len(recs) != 1 {
		t.Fatalf("records %v, want one", recs)
	}
	v := gpuctlRun(t, "verify", recs[0], "--key", filepath.Join(keys, "k.pub"), "--evidence-dir", filepath.Dir(recs[0]), "-o", "json")
	if v.code != 0 {
		t.Fatalf("verify: exit %d: %s %s", v.code, v.stdout, v.stderr)
	}
	var st struct {
		Subject []struct {
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
		Predicate accept.Predicate `json:"predicate"`
	}
	data, err := os.ReadFile(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Payload []byte `json:"payload"`
	}
	if err := json.Unmarshal(data, &env); err != nil || json.Unmarshal(env.Payload, &st) != nil {
		t.Fatalf("reading the record: %v", err)
	}
	hw := st.Predicate.Hardware
	if st.Predicate.Verdict != diag.Fail || hw.GPUCount != 8 || len(hw.UUIDs) != 8 || len(hw.Serials) != 8 || len(hw.BusIDs) != 8 {
		t.Errorf("verdict %s, hardware %+v: want FAIL with all eight GPUs", st.Predicate.Verdict, hw)
	}
	inv := stage(&st.Predicate, accept.StageInventory)
	for _, want := range []string{"row remap is pending", "GPU 00000000:5D:00.0", "GPU-00000000-0000-0000-0000-000000000004", "1320000000004"} {
		if inv.Verdict != diag.Fail || !strings.Contains(inv.Reason, want) {
			t.Errorf("inventory %s %q lacks %q", inv.Verdict, inv.Reason, want)
		}
	}
	const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	if len(st.Subject) == 0 || st.Subject[0].Digest["sha256"] == "" || st.Subject[0].Digest["sha256"] == emptySHA256 {
		t.Errorf("subject %+v: want the digest of the GPUs' identities", st.Subject)
	}
}

// TestNVLinkInactiveFails: an 8-GPU H100 node whose nvidia-smi nvlink -s
// shows inactive links fails at inventory, naming the GPU and the links.
func TestNVLinkInactiveFails(t *testing.T) {
	const node, ns = "e2e-nvlink", "e2e-nvlink"
	fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
	r := gpuctlRun(t, "accept", node, "-n", ns, "--create-namespace", "--stages", "inventory", "--evidence-dir", t.TempDir(), "-o", "json", "--stage-timeout", "60s")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (FAIL): %s", r.code, r.stderr)
	}
	assertNothingLeft(t, ns)
	var st struct {
		Predicate accept.Predicate `json:"predicate"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	inv := stage(&st.Predicate, accept.StageInventory)
	if inv.Verdict != diag.Fail || !strings.Contains(inv.Reason, "nvidia-smi-nvlink: GPU 3: 2 of 6 NVLinks are inactive (links 3, 5)") {
		t.Errorf("inventory %s: %q", inv.Verdict, inv.Reason)
	}
}

// TestHarnessProblemsAreInconclusive: an image that cannot be pulled and a
// pod the node rejects make their stage INCONCLUSIVE with the reason, and
// the run goes on.
func TestHarnessProblemsAreInconclusive(t *testing.T) {
	const ns = "e2e-harness"
	t.Run("unpullable image", func(t *testing.T) {
		const node = "e2e-pull"
		fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
		r := gpuctlRun(t, "accept", node, "-n", ns, "--create-namespace", "--stages", "kubernetes,inventory,topology,cuda",
			"--image", "topology=gpuctl.invalid/unpullable:1", "--evidence-dir", t.TempDir(), "-o", "json", "--stage-timeout", "60s")
		if r.code != 4 {
			t.Fatalf("exit %d, want 4 (INCONCLUSIVE)", r.code)
		}
		assertNothingLeft(t, ns)
		_, p := predicateUnsigned(t, r.stdout)
		top := stage(p, accept.StageTopology)
		if top.Verdict != diag.Inconclusive || !strings.Contains(top.Reason, "image pull failed for gpuctl.invalid/unpullable:1 (ErrImagePull)") {
			t.Errorf("topology %s: %q", top.Verdict, top.Reason)
		}
		if s := stage(p, accept.StageCUDA); s.Verdict != diag.Pass {
			t.Errorf("cuda after an INCONCLUSIVE stage: %s %q", s.Verdict, s.Reason)
		}
	})
	t.Run("rejected by the node", func(t *testing.T) {
		const node = "e2e-full"
		fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
		r := gpuctlRun(t, "accept", node, "-n", ns, "--create-namespace", "--stages", "inventory",
			"--evidence-dir", t.TempDir(), "-o", "json", "--stage-timeout", "60s")
		if r.code != 4 {
			t.Fatalf("exit %d, want 4 (INCONCLUSIVE)", r.code)
		}
		assertNothingLeft(t, ns)
		_, p := predicateUnsigned(t, r.stdout)
		if inv := stage(p, accept.StageInventory); inv.Verdict != diag.Inconclusive || !strings.Contains(inv.Reason, "pod rejected by the node (OutOfnvidia.com/gpu)") {
			t.Errorf("inventory %s: %q", inv.Verdict, inv.Reason)
		}
	})
}

func predicateUnsigned(t *testing.T, stdout string) (map[string]any, *accept.Predicate) {
	t.Helper()
	var st struct {
		Predicate accept.Predicate `json:"predicate"`
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	_ = json.Unmarshal([]byte(stdout), &raw)
	return raw, &st.Predicate
}

// TestInterruptCleansUp: SIGINT in the middle of a stage deletes the run's
// Job and pod before gpuctl exits.
func TestInterruptCleansUp(t *testing.T) {
	const node, ns = "e2e-slow", "e2e-interrupt"
	fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
	cmd := exec.Command(gpuctl, "accept", node, "-n", ns, "--create-namespace", "--evidence-dir", t.TempDir(), "--stage-timeout", "120s")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sel := accept.LabelManagedBy + "=" + accept.ManagedBy
	eventually(t, 60*time.Second, "a probe pod Running", func() bool {
		pods, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
		return err == nil && len(pods.Items) > 0 && pods.Items[0].Status.Phase == corev1.PodRunning
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Errorf("after SIGINT: %v, want exit 4\n%s", err, errOut.String())
	}
	t.Logf("stderr:\n%s", errOut.String())
	assertNothingLeft(t, ns)
	if !strings.Contains(errOut.String(), "interrupted") {
		t.Errorf("the summary does not say the run was interrupted")
	}
}

// TestManyNodesInParallel: --selector picks nodes by label and --parallel
// accepts them at the same time, with one record per node and a summary.
func TestManyNodesInParallel(t *testing.T) {
	const ns = "e2e-healthy"
	ctx := context.Background()
	for _, node := range []string{"e2e-batch-1", "e2e-batch-2"} {
		fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
		n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Labels["e2e-pool"] = "batch"
		if _, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	priv, pub, _ := keys(t)
	base := t.TempDir()
	r := gpuctlRun(t, "accept", "-l", "e2e-pool=batch", "--parallel", "2", "-n", ns, "--create-namespace", "--key", priv,
		"--evidence-dir", base, "-o", "json", "--stage-timeout", "60s", "-q")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0", r.code)
	}
	assertNothingLeft(t, ns)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d records on stdout, want 2", len(lines))
	}
	var records []string
	for _, l := range lines {
		_, p := predicate(t, l)
		if p.Verdict != diag.Pass {
			t.Errorf("%s: %s", p.Node.Name, p.Verdict)
		}
		if p.NCCL == nil || len(p.NCCL.Rows) == 0 || p.Topology == nil {
			t.Errorf("%s: the record lacks nccl.rows or topology: %+v", p.Node.Name, p.NCCL)
		}
		records = append(records, filepath.Join(evidenceDir(t, base, p.Node.Name, p.RunID), accept.RecordFile))
	}
	for _, want := range []string{"NODE", "e2e-batch-1  PASS", "e2e-batch-2  PASS"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("summary lacks %q", want)
		}
	}

	// The fleet's report, verified with the key, opens in headless Chromium
	// without errors and shows one curve point per message size of each
	// record (test/browser checks the page against the records).
	exe := browser.Chromium(t, true)
	page := filepath.Join(t.TempDir(), "fleet.html")
	if r := gpuctlRun(t, append([]string{"report", "--key", pub, "--out", page}, records...)...); r.code != 0 {
		t.Fatalf("gpuctl report: exit %d", r.code)
	}
	p := browser.LoadAndCheck(t, exe, page, "e2e-fleet-report.png", records)
	for _, n := range p.Nodes {
		if len(n.Points) != 4 { // the corpus run: 256 MiB .. 2 GiB
			t.Errorf("%s: %d curve points, want 4", n.Name, len(n.Points))
		}
	}
}
