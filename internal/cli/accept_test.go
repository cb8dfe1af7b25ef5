package cli

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/accept"
)

func TestAcceptDryRunPrintsJobsAndRBAC(t *testing.T) {
	t.Parallel()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-1", Labels: map[string]string{"nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "8"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
		Status:     corev1.NodeStatus{Capacity: corev1.ResourceList{accept.ResourceGPU: resource.MustParse("4")}},
	}
	c := fake.NewClientset(node)
	f := fakeFactory(c)

	streams, _, out, errOut := TestStreams()
	code := RunWithFactory(context.Background(), []string{"accept", "gpu-node-1", "--dry-run", "-o", "yaml", "--dcgm", "-n", "probes"}, streams, f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	docs := strings.Split(out.String(), "\n---\n")
	if len(docs) != 3 { // Role, ClusterRole, the node Job of its 5 stages
		t.Fatalf("%d documents:\n%s", len(docs), out)
	}
	var kinds []string
	for _, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, m["kind"].(string))
		if md := m["metadata"].(map[string]any); m["kind"] != "ClusterRole" && md["namespace"] != "probes" {
			t.Errorf("%s in namespace %v", m["kind"], md["namespace"])
		}
	}
	if got := strings.Join(kinds, ","); got != "Role,ClusterRole,Job" {
		t.Errorf("kinds %s", got)
	}
	s := out.String()
	for _, want := range []string{"nodeName: gpu-node-1", "nvidia.com/gpu: \"4\"", "vectoradd-cuda12.5.0", "dcgmi diag -r 2 -j", "backoffLimit: 0", "gpuctl.dev/stages: inventory,topology,cuda,nccl,dcgm", "initContainers:"} {
		if !strings.Contains(s, want) {
			t.Errorf("dry run lacks %q", want)
		}
	}
	// Nothing was created.
	jobs, _ := c.BatchV1().Jobs("").List(context.Background(), metav1.ListOptions{})
	if len(jobs.Items) != 0 {
		t.Errorf("dry run created %d jobs", len(jobs.Items))
	}
}

// TestAcceptDryRunProbeImage: --probe-image makes inventory one container
// running gpuctl probe nvml -o json in that image, instead of nvidia-smi.
func TestAcceptDryRunProbeImage(t *testing.T) {
	t.Parallel()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-1"},
		Status:     corev1.NodeStatus{Capacity: corev1.ResourceList{accept.ResourceGPU: resource.MustParse("8")}},
	}
	c := fake.NewClientset(node)
	f := fakeFactory(c)

	streams, _, out, errOut := TestStreams()
	code := RunWithFactory(context.Background(), []string{"accept", "gpu-node-1", "--dry-run", "-o", "yaml", "--stages", "inventory",
		"--probe-image", "registry.example.com/gpuctl:v1-nvml"}, streams, f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	docs := strings.Split(out.String(), "\n---\n")
	var job batchv1.Job
	if err := yaml.Unmarshal([]byte(docs[len(docs)-1]), &job); err != nil {
		t.Fatal(err)
	}
	cs := job.Spec.Template.Spec.Containers
	if job.Name != "gpuctl-inventory-20261129t154400-a1b2" { // the factory's clock and random run id
		t.Errorf("Job name %s", job.Name)
	}
	if job.Labels[accept.LabelStage] != "inventory" || len(cs) != 1 {
		t.Fatalf("%s with %d containers:\n%s", job.Name, len(cs), out)
	}
	q := cs[0].Resources.Limits[accept.ResourceGPU]
	if cs[0].Name != accept.ContainerNVML || cs[0].Image != "registry.example.com/gpuctl:v1-nvml" ||
		strings.Join(cs[0].Command, " ") != "gpuctl probe nvml -o json" || q.Value() != 8 || !*cs[0].SecurityContext.RunAsNonRoot {
		t.Errorf("container %+v", cs[0])
	}
	if strings.Contains(out.String(), "nvidia-smi") {
		t.Errorf("nvidia-smi still in the Job:\n%s", out)
	}
}

func TestAcceptNeedsNamespace(t *testing.T) {
	t.Parallel()
	c := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	f := fakeFactory(c)
	streams, _, _, errOut := TestStreams()
	if code := RunWithFactory(context.Background(), []string{"accept", "n"}, streams, f); code != ExitInconclusive || !strings.Contains(errOut.String(), "namespace gpuctl does not exist") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if code := RunWithFactory(context.Background(), []string{"accept", "-l", "pool=none"}, streams, f); code != ExitInconclusive {
		t.Errorf("empty selector: exit %d", code)
	}
}

// A node name that does not exist is a usage error: no run, no evidence
// directory, no record (it was an INCONCLUSIVE record whose later stages
// said "the node advertises no whole GPUs to probe").
func TestAcceptUnknownNodeIsUsageError(t *testing.T) {
	t.Parallel()
	c := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gpuctl"}})
	f := fakeFactory(c)
	dir := t.TempDir()
	streams, _, out, errOut := TestStreams()
	code := RunWithFactory(context.Background(), []string{"accept", "n", "nope", "--evidence-dir", dir}, streams, f)
	if code != ExitUsage || !strings.Contains(errOut.String(), "node nope not found") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if out.Len() != 0 {
		t.Errorf("stdout: %s", out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("evidence written for a run that did not start: %v", entries)
	}
}

func TestKeygenPermissions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	streams, _, _, errOut := TestStreams()
	if code := Run(context.Background(), []string{"keygen", "--out", dir + "/k", "--type", "ecdsa-p256"}, streams); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for name, want := range map[string]os.FileMode{"k.key": 0o600, "k.pub": 0o644} {
		st, err := os.Stat(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", name, st.Mode().Perm(), want)
		}
	}
	if code := Run(context.Background(), []string{"keygen", "--type", "rsa"}, streams); code != ExitUsage {
		t.Errorf("rsa: exit %d", code)
	}
}

// A namespace whose PodSecurity admission would reject the probe pods is
// refused before any Job is created: the Job controller cannot create the
// pods, and each stage used to wait for its whole timeout ("no pod was
// created") without saying why.
func TestAcceptRefusesNamespaceThatRejectsProbePods(t *testing.T) {
	t.Parallel()
	ns := func(level string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gpuctl", Labels: map[string]string{"pod-security.kubernetes.io/enforce": level}}}
	}
	c := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, ns("restricted"))
	f := fakeFactory(c)
	streams, _, _, errOut := TestStreams()
	code := RunWithFactory(context.Background(), []string{"accept", "n", "--dcgm", "--evidence-dir", t.TempDir()}, streams, f)
	if code != ExitInconclusive || !strings.Contains(errOut.String(), `namespace gpuctl enforces PodSecurity "restricted"`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if jobs, _ := c.BatchV1().Jobs("").List(context.Background(), metav1.ListOptions{}); len(jobs.Items) != 0 {
		t.Errorf("%d jobs created", len(jobs.Items))
	}
}

// fakeFactory is the real factory with c as the cluster, a fixed clock and
// fixed run ids.
func fakeFactory(c kubernetes.Interface) *Factory {
	f := NewFactory()
	f.KubeClient = func(*genericclioptions.ConfigFlags) (kubernetes.Interface, error) { return c, nil }
	f.Now = func() time.Time { return time.Date(2026, 11, 29, 15, 44, 0, 0, time.UTC) }
	f.Random = func() uint16 { return 0xa1b2 }
	return f
}

// A stage whose image needs a newer CUDA than the node's driver creates no
// Job in a real run (INCONCLUSIVE); the dry run prints none either and says
// why on stderr.
func TestAcceptDryRunOmitsStageThatCannotRun(t *testing.T) {
	t.Parallel()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-1", Labels: map[string]string{"nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "2"}},
		Status:     corev1.NodeStatus{Capacity: corev1.ResourceList{accept.ResourceGPU: resource.MustParse("8")}},
	}
	f := fakeFactory(fake.NewClientset(node))
	streams, _, out, errOut := TestStreams()
	code := RunWithFactory(context.Background(), []string{"accept", "gpu-node-1", "--dry-run", "-o", "yaml", "--stages", "topology,cuda",
		"--image", "cuda=registry.example.com/vectoradd:cuda12.9"}, streams, f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if s := out.String(); strings.Contains(s, "gpuctl-cuda-") || !strings.Contains(s, "name: gpuctl-topology-20261129t154400-a1b2") {
		t.Errorf("dry run:\n%s", s)
	}
	if !strings.Contains(errOut.String(), "stage cuda would create no Job and be INCONCLUSIVE: harness: image registry.example.com/vectoradd:cuda12.9 needs CUDA 12.9") {
		t.Errorf("stderr: %s", errOut)
	}
}

// --dry-run with --gpus/--product (or --spec/--pool) plans without any
// cluster: the factory's client is never asked for, and --bind adds the
// bindings of the Role and ClusterRole.
func TestAcceptDryRunWithoutCluster(t *testing.T) {
	t.Parallel()
	f := NewFactory()
	f.KubeClient = func(*genericclioptions.ConfigFlags) (kubernetes.Interface, error) {
		t.Error("the dry run asked for a Kubernetes client")
		return nil, os.ErrNotExist
	}
	f.Now = func() time.Time { return time.Date(2026, 11, 29, 15, 44, 0, 0, time.UTC) }
	f.Random = func() uint16 { return 0xa1b2 }
	streams, _, out, errOut := TestStreams()
	code := RunWithFactory(context.Background(), []string{"accept", "--dry-run", "-o", "yaml", "--gpus", "8", "--product", "NVIDIA-H100-80GB-HBM3",
		"--bind", "serviceaccount:ops:acceptor", "--bind", "user:alice", "-n", "probes"}, streams, f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var kinds []string
	for _, d := range strings.Split(out.String(), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, m["kind"].(string))
	}
	if got := strings.Join(kinds, ","); got != "Role,ClusterRole,RoleBinding,ClusterRoleBinding,RoleBinding,ClusterRoleBinding,Job" {
		t.Errorf("kinds %s", got)
	}
	for _, want := range []string{"nodeName: NODE", "nvidia.com/gpu: \"8\"", "kind: ServiceAccount\n  name: acceptor\n  namespace: ops", "kind: User\n  name: alice", "- watch"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run lacks %q", want)
		}
	}
	// Without --gpus or a spec there is nothing to plan for.
	streams, _, _, errOut = TestStreams()
	if code := RunWithFactory(context.Background(), []string{"accept", "--dry-run", "--product", "x"}, streams, f); code != 2 {
		t.Errorf("--dry-run --product alone: exit %d, want 2: %s", code, errOut)
	}
	// The same flags outside --dry-run are a usage error.
	streams, _, _, errOut = TestStreams()
	if code := RunWithFactory(context.Background(), []string{"accept", "n1", "--gpus", "8"}, streams, f); code != 2 {
		t.Errorf("--gpus without --dry-run: exit %d, want 2: %s", code, errOut)
	}
}

// --stages nccl-multi in a dry run without a cluster prints the services
// RBAC, and for a pair of nodes the headless Service and the Indexed Job;
// without it the Role has no services rule.
func TestAcceptDryRunNCCLMulti(t *testing.T) {
	t.Parallel()
	f := NewFactory()
	f.Now = func() time.Time { return time.Date(2026, 11, 29, 15, 44, 0, 0, time.UTC) }
	f.Random = func() uint16 { return 0xa1b2 }
	run := func(args ...string) (int, string, string) {
		streams, _, out, errOut := TestStreams()
		code := RunWithFactory(context.Background(), append([]string{"accept", "--dry-run", "-o", "yaml", "--gpus", "8", "--product", "NVIDIA-H100-80GB-HBM3", "-n", "probes"}, args...), streams, f)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("--stages", "kubernetes,nccl,nccl-multi", "--nccl-multi", "all")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var kinds []string
	for _, d := range strings.Split(out, "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, m["kind"].(string))
	}
	if got := strings.Join(kinds, ","); got != "Role,ClusterRole,Job,Job,Service,Job" {
		t.Errorf("kinds %s", got)
	}
	for _, want := range []string{"  resources:\n  - services\n  verbs:\n  - create\n  - delete", "completionMode: Indexed", "clusterIP: None",
		"values:\n                - NODE-1", "values:\n                - NODE-2", "value: gpuctl-nccl-multi-20261129t154400-a1b2-m0-0.gpuctl-nccl-multi-20261129t154400-a1b2-m0"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q", want)
		}
	}
	if _, out, _ := run(); strings.Contains(out, "services") {
		t.Error("the RBAC names services without nccl-multi")
	}
	if code, _, errOut := run("--stages", "nccl-multi", "--nccl-multi", "ring"); code != 2 || !strings.Contains(errOut, "--nccl-multi must be pairs or all") {
		t.Errorf("--nccl-multi ring: exit %d %s", code, errOut)
	}
}

// nccl-multi over one node is the operator's mistake: said before anything runs.
func TestAcceptNCCLMultiNeedsTwoNodes(t *testing.T) {
	t.Parallel()
	c := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gpuctl"}})
	dir := t.TempDir()
	streams, _, _, errOut := TestStreams()
	code := RunWithFactory(context.Background(), []string{"accept", "n", "--stages", "nccl-multi", "--evidence-dir", dir}, streams, fakeFactory(c))
	if code != ExitUsage || !strings.Contains(errOut.String(), "--stages nccl-multi runs across nodes: select at least two") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("evidence written for a run that did not start: %v", entries)
	}
}

// TestPoolDryRunNotesAndFlags: a dry run without a cluster says on stderr
// which stage gets no Job (a driver too old for the stage's image), refuses
// a --driver-cuda that is not MAJOR.MINOR (exit 2), and names each
// identity's bindings the same whatever the order of --bind.
func TestPoolDryRunNotesAndFlags(t *testing.T) {
	t.Parallel()
	run := func(args ...string) (int, string, string) {
		streams, _, out, errOut := TestStreams()
		base := []string{"accept", "--dry-run", "-o", "yaml", "--gpus", "8", "--product", "NVIDIA-H100-80GB-HBM3"}
		code := RunWithFactory(context.Background(), append(base, args...), streams, fakeFactory(fake.NewClientset()))
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("--driver-cuda", "11.0")
	if code != 0 || !strings.Contains(errOut, "note: node NODE: stage cuda would create no Job") || !strings.Contains(errOut, "stage nccl would create no Job") {
		t.Errorf("--driver-cuda 11.0: exit %d, stderr %q", code, errOut)
	}
	if strings.Contains(out, "gpuctl.dev/stages: inventory,topology,cuda") {
		t.Error("the cuda stage is in the Job although its image needs a newer driver")
	}
	if code, _, errOut := run("--driver-cuda", "banana"); code != ExitUsage || !strings.Contains(errOut, "MAJOR.MINOR") {
		t.Errorf("--driver-cuda banana: exit %d, stderr %q", code, errOut)
	}
	names := func(out string) []string {
		var ns []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "  name: gpuctl-accept-user-alice") {
				ns = append(ns, l)
			}
		}
		return ns
	}
	_, alone, _ := run("--bind", "user:alice")
	_, second, _ := run("--bind", "group:sre", "--bind", "user:alice", "--bind", "user:alice")
	if a, b := names(alone), names(second); len(a) != 2 || strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("alice's bindings alone %v, after another subject and twice %v", a, b)
	}
}
