package accept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
	"github.com/gpuctl/gpuctl/internal/record"
)

const testNS = "gpuctl"

func gpuNode(name string, gpus int) *corev1.Node {
	q := resource.MustParse(fmt.Sprint(gpus))
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-1", Labels: map[string]string{
			LabelGFDProduct: "NVIDIA-H100-80GB-HBM3", LabelGFDCount: fmt.Sprint(gpus),
			"nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "2",
		}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{ResourceGPU: q},
			Allocatable: corev1.ResourceList{ResourceGPU: q},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			NodeInfo:    corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", ContainerRuntimeVersion: "containerd://2.1.0"},
		},
	}
}

func devicePluginPod(node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "nvidia-device-plugin-abcde", Namespace: "kube-system"},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "p", Image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// behaviour decides what the fake kubelet does with a stage's pod: set its
// status (nil: leave it Pending forever).
type behaviour func(st Stage, pod *corev1.Pod) *corev1.PodStatus

func succeed(st Stage, pod *corev1.Pod) *corev1.PodStatus {
	s := &corev1.PodStatus{Phase: corev1.PodSucceeded}
	for _, c := range pod.Spec.InitContainers {
		s.InitContainerStatuses = append(s.InitContainerStatuses, terminated(c, 0))
	}
	for _, c := range pod.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, terminated(c, 0))
	}
	return s
}

func terminated(c corev1.Container, code int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: c.Name, Image: c.Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: metav1.Now()}}}
}

// fakeJobController plays the Job controller and the kubelet: for every Job
// it creates one pod, sets its status with b, and marks the Job done.
func fakeJobController(t *testing.T, ctx context.Context, c *fake.Clientset, b behaviour) *sync.WaitGroup {
	t.Helper()
	w, err := c.BatchV1().Jobs(testNS).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				job, isJob := ev.Object.(*batchv1.Job)
				if !isJob || ev.Type != watch.Added {
					continue
				}
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x1", Namespace: testNS, Labels: job.Spec.Template.Labels, CreationTimestamp: metav1.Now()},
					Spec: job.Spec.Template.Spec}
				pod, err := c.CoreV1().Pods(testNS).Create(ctx, pod, metav1.CreateOptions{})
				if err != nil {
					continue
				}
				// As the garbage collector does for a Job deleted before its
				// pod was made (a lagging controller under load): the orphan
				// goes too.
				if _, err := c.BatchV1().Jobs(testNS).Get(ctx, job.Name, metav1.GetOptions{}); err != nil {
					_ = c.CoreV1().Pods(testNS).Delete(ctx, pod.Name, metav1.DeleteOptions{})
					continue
				}
				st := b(Stage(job.Labels[LabelStage]), pod)
				if st == nil {
					continue
				}
				pod.Status = *st
				if _, err := c.CoreV1().Pods(testNS).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
					continue
				}
				if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
					cond := batchv1.JobComplete
					if st.Phase == corev1.PodFailed {
						cond = batchv1.JobFailed
					}
					job.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue}}
					_, _ = c.BatchV1().Jobs(testNS).UpdateStatus(ctx, job, metav1.UpdateOptions{})
				}
			}
		}
	}()
	return &wg
}

// fakeParser returns healthy facts for an 8-GPU H100 node unless the log
// says otherwise: "FAIL:msg" gives a fail verdict, "BUSBW:n" an NCCL result
// of n GB/s at 8 GiB.
// rejudgedAt is the clock of the offline re-judge in these tests.
var rejudgedAt = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func fakeParser(kind probe.Kind, data []byte) (*Output, error) {
	s := string(data)
	if msg, ok := strings.CutPrefix(s, "FAIL:"); ok {
		return &Output{Kind: kind, Verdict: "fail", Findings: []diag.Finding{{Rule: "x", Severity: "error", Message: msg, GPU: "00000000:07:00.0"}}}, nil
	}
	o := &Output{Kind: kind, Verdict: "ok"}
	switch kind {
	case probe.KindNvidiaSMI:
		eight := 8
		o.SMI = &probe.SMIReport{DriverVersion: "535.161.08", CUDAVersion: "12.2", AttachedGPUs: &eight}
		for i := 0; i < 8; i++ {
			g := probe.SMIGPU{Index: i, Name: "NVIDIA H100 80GB HBM3", UUID: fmt.Sprintf("GPU-%d", i), Serial: fmt.Sprint(1320000000000 + i), InfoROMImage: "G520.0200.00.05"}
			for l := 0; l < 18; l++ {
				g.NVLinks = append(g.NVLinks, probe.NVLink{Link: l, Active: true})
			}
			o.SMI.GPUs = append(o.SMI.GPUs, g)
		}
	case probe.KindTopo:
		o.Topo = &probe.TopoReport{Matrix: map[string]map[string]string{}}
		for i := 0; i < 8; i++ {
			o.Topo.GPUs = append(o.Topo.GPUs, fmt.Sprintf("GPU%d", i))
		}
		for _, a := range o.Topo.GPUs {
			o.Topo.Matrix[a] = map[string]string{}
			for _, b := range o.Topo.GPUs {
				o.Topo.Matrix[a][b] = "NV18"
				if a == b {
					o.Topo.Matrix[a][b] = "X"
				}
			}
		}
	case probe.KindCUDA:
		one := 1
		o.CUDA = &probe.CUDAReport{Result: "PASS", Devices: &one}
	case probe.KindNCCL:
		bw := 470.7
		fmt.Sscanf(s, "BUSBW:%g", &bw)
		largest, zero := int64(8<<30), 0.0
		o.NCCL = &probe.NCCLReport{Ranks: 8, LargestSizeBytes: &largest, BusBandwidthAtLargestSizeGBps: &bw}
		for size := int64(1 << 30); size <= largest; size *= 2 {
			o.NCCL.Rows = append(o.NCCL.Rows, probe.NCCLRow{SizeBytes: size, Count: size / 4, Type: "float",
				OutOfPlace: &probe.NCCLResult{BusBandwidthGBps: bw, Wrong: &zero}})
		}
	}
	return o, nil
}

// containerStage returns the stage whose container a node Job's (or a
// stage Job's) pod runs as container: a stage's Job is named after it, a
// node Job's containers are the stages' own (the first stage's when two
// share a name) or "STAGE-NAME".
func containerStage(pod, container string) Stage {
	for _, d := range stageTable {
		if d.containers != nil && !d.nodeJob && strings.HasPrefix(pod, "gpuctl-"+string(d.name)+"-") {
			return d.name
		}
	}
	for _, d := range stageTable {
		if d.containers == nil || !d.nodeJob {
			continue
		}
		if strings.HasPrefix(container, string(d.name)+"-") {
			return d.name
		}
		cs, _ := d.containers(JobSpec{Stage: d.name, GPUs: 8, Image: Image{Ref: "x"}, ProbeImage: "p", AllowPrivileged: true})
		cs2, _ := d.containers(JobSpec{Stage: d.name, GPUs: 8, Image: Image{Ref: "x"}, AllowPrivileged: true})
		for _, c := range append(cs, cs2...) {
			if c.Name == container {
				return d.name
			}
		}
	}
	return ""
}

type harness struct {
	client *fake.Clientset
	runner *Runner
	plan   Plan
}

func newHarness(t *testing.T, logs map[Stage]string) *harness {
	t.Helper()
	c := fake.NewClientset(gpuNode("gpu-node-1", 8), devicePluginPod("gpu-node-1"))
	clock := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	r := &Runner{Client: c, Parser: ParserFunc(fakeParser), CleanupTimeout: 10 * time.Second, Now: func() time.Time { return clock },
		Logs: func(_ context.Context, _, pod, container string) ([]byte, error) {
			if l, ok := logs[containerStage(pod, container)]; ok {
				return []byte(l), nil
			}
			return []byte("ok output"), nil
		}}
	p := Plan{Node: "gpu-node-1", RunID: "20261129t120000-abcd", Namespace: testNS, Stages: DefaultStages,
		Baselines: DefaultBaselines(), StageTimeout: 5 * time.Second, RunTimeout: 30 * time.Second, TTL: time.Hour,
		EvidenceDir: t.TempDir(), Version: "test"}
	return &harness{client: c, runner: r, plan: p}
}

func (h *harness) assertClean(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	jobs, _ := h.client.BatchV1().Jobs(testNS).List(ctx, metav1.ListOptions{LabelSelector: RunSelector(h.plan.RunID)})
	pods, _ := h.client.CoreV1().Pods(testNS).List(ctx, metav1.ListOptions{LabelSelector: RunSelector(h.plan.RunID)})
	if len(jobs.Items)+len(pods.Items) != 0 {
		t.Errorf("left behind %d jobs, %d pods", len(jobs.Items), len(pods.Items))
	}
}

func verdicts(rs []StageResult) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("%s=%s", r.Name, r.Verdict))
	}
	return strings.Join(s, " ")
}

func run(t *testing.T, h *harness, b behaviour) *Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	wg := fakeJobController(t, ctx, h.client, b)
	res, err := h.runner.Run(ctx, h.plan)
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	h.assertClean(t)
	return res
}

func TestRunHealthyNodePasses(t *testing.T) {
	h := newHarness(t, nil)
	res := run(t, h, succeed)
	if res.Verdict != diag.Pass {
		t.Fatalf("verdict %s: %s", res.Verdict, verdicts(res.Stages))
	}
	want := "kubernetes=PASS inventory=PASS topology=PASS cuda=PASS nccl=PASS dcgm=SKIPPED network=SKIPPED framework=SKIPPED diagnostics=SKIPPED"
	if got := verdicts(res.Stages); got != want {
		t.Errorf("stages %s, want %s", got, want)
	}
	p := res.Predicate
	if p.Hardware.GPUCount != 8 || p.Driver.Version != "535.161.08" || p.NCCL == nil || p.NCCL.Baseline == nil || p.NCCL.Baseline.SKU != "h100-sxm-x8" {
		t.Errorf("predicate: %+v %+v", p.Hardware, p.NCCL)
	}
	for _, name := range []string{"kubernetes.node.json", "inventory.nvidia-smi-query.log", "cuda.vectoradd-7.log", "nccl.all-reduce.log", "nccl.status.json", "run.json"} {
		if _, err := os.Stat(filepath.Join(h.plan.EvidenceDir, name)); err != nil {
			t.Error(err)
		}
	}
	if probs := record.CheckEvidence(h.plan.EvidenceDir, p.Stages); len(probs) > 0 {
		t.Error(probs)
	}
	// The statement, signed once and compared parsed (not as bytes).
	st, err := Statement(p)
	if err != nil {
		t.Fatal(err)
	}
	s, v := keyPair(t, record.KeyEd25519)
	env, err := Sign(context.Background(), st, s)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(env)
	ver, err := record.Verify(context.Background(), rec, v, h.plan.EvidenceDir)
	if err != nil || !ver.OK() {
		t.Fatalf("verify: %v %v", err, ver.Problems)
	}
	payload, _ := env.DecodeB64Payload()
	var parsed map[string]any
	if err := json.Unmarshal(payload, &parsed); err != nil {
		t.Fatal(err)
	}
	pretty, _ := json.MarshalIndent(parsed, "", "  ")
	compareGolden(t, "statement-run.json", append(pretty, '\n'))

	// The images follow the driver's CUDA (12.2 from the GFD labels).
	if got := p.Images["cuda"]; !strings.Contains(got, "cuda11.7") {
		t.Errorf("cuda image %s, want the CUDA 11.7 sample on a CUDA 12.2 driver", got)
	}
}

// TestRunInventoryNVLinkInactive runs inventory with the real parsers: a
// healthy 8x H100 -q and -L, and an nvlink -s that shows inactive links.
// Inventory fails naming the GPU and the links, and the run stops there.
func TestRunInventoryNVLinkInactive(t *testing.T) {
	query := corpus(t, "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt")
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("..", "probe", "testdata", "nvidia-smi", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	list, inactive, healthy := read("list-L-h100-80gb-hbm3-x8.txt"), read("nvlink-s-v100-inactive-links.txt"), read("nvlink-s-h100-80gb-hbm3-x8-550.90.07.txt")
	for _, tc := range []struct {
		name    string
		nvlink  []byte
		verdict diag.Verdict
		reason  []string
	}{
		{"healthy", healthy, diag.Pass, []string{"144 NVLinks active"}},
		{"inactive", inactive, diag.Fail, []string{"GPU 3", "links 3, 5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.plan.Stages = []Stage{StageKubernetes, StageInventory, StageTopology}
			h.runner.Parser = ProbeParser()
			h.runner.Logs = func(_ context.Context, _, pod, container string) ([]byte, error) {
				switch container {
				case ContainerSMIQuery:
					return query, nil
				case ContainerSMIList:
					return list, nil
				case ContainerSMINVLink:
					return tc.nvlink, nil
				}
				return corpus(t, "topo/h100-x8-8nic-sglang-checkenv-570.txt"), nil
			}
			res := run(t, h, succeed)
			inv := res.Stages[1]
			if inv.Verdict != tc.verdict {
				t.Fatalf("inventory %s: %s", inv.Verdict, inv.Reason)
			}
			for _, want := range tc.reason {
				if !strings.Contains(inv.Reason, want) {
					t.Errorf("reason %q lacks %q", inv.Reason, want)
				}
			}
			var names []string
			for _, e := range inv.Evidence {
				names = append(names, e.Name)
			}
			for _, want := range []string{"inventory.nvidia-smi-list.log", "inventory.nvidia-smi-nvlink.log", "inventory.nvidia-smi-query.log"} {
				if !strings.Contains(strings.Join(names, " "), want) {
					t.Errorf("evidence %v lacks %s", names, want)
				}
			}
			if tc.verdict == diag.Fail && res.Stages[2].Verdict != diag.Skipped {
				t.Errorf("topology %s after an inventory FAIL", res.Stages[2].Verdict)
			}
		})
	}
}

func TestRunInventoryFailStops(t *testing.T) {
	h := newHarness(t, map[Stage]string{StageInventory: "FAIL:row remapping pending (GPU reset required)"})
	res := run(t, h, succeed)
	if res.Verdict != diag.Fail {
		t.Fatalf("verdict %s", res.Verdict)
	}
	if got, want := verdicts(res.Stages), "kubernetes=PASS inventory=FAIL topology=SKIPPED cuda=SKIPPED nccl=SKIPPED dcgm=SKIPPED network=SKIPPED framework=SKIPPED diagnostics=PASS"; got != want {
		t.Errorf("stages %s, want %s", got, want)
	}
	if r := res.Stages[1].Reason; !strings.Contains(r, "row remapping pending") || !strings.Contains(r, "00000000:07:00.0") {
		t.Errorf("reason %q", r)
	}
	// --continue runs the rest.
	h2 := newHarness(t, map[Stage]string{StageInventory: "FAIL:row remapping pending"})
	h2.plan.Continue = true
	res = run(t, h2, succeed)
	if got := verdicts(res.Stages); !strings.Contains(got, "topology=PASS") || res.Verdict != diag.Fail {
		t.Errorf("--continue: %s %s", res.Verdict, got)
	}
}

func TestRunNCCLBelowBaselineFails(t *testing.T) {
	h := newHarness(t, map[Stage]string{StageNCCL: "BUSBW:250"})
	res := run(t, h, succeed)
	n := res.Stages[4]
	if n.Verdict != diag.Fail || !strings.Contains(n.Reason, "h100-sxm-x8") || !strings.Contains(n.Reason, "250.0 GB/s") {
		t.Fatalf("nccl %s: %s", n.Verdict, n.Reason)
	}
	if res.Predicate.NCCL.Baseline.SKU != "h100-sxm-x8" || res.Predicate.NCCL.BaselineOrigin != "embedded" {
		t.Errorf("record baseline %+v", res.Predicate.NCCL)
	}
}

func TestRunImagePullIsInconclusive(t *testing.T) {
	h := newHarness(t, nil)
	h.plan.Images = map[Stage]string{StageTopology: "registry.invalid/nope:1"}
	stop := jobWatch(t, h)
	res := run(t, h, stopAt(StageTopology, corev1.PodPending, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}, nil))
	top := res.Stages[2]
	if res.Verdict != diag.Inconclusive || top.Verdict != diag.Inconclusive || !strings.Contains(top.Reason, "image pull failed") {
		t.Fatalf("%s / topology %s: %s", res.Verdict, top.Verdict, top.Reason)
	}
	// INCONCLUSIVE does not stop the run: inventory passed in the node Job,
	// the rest ran in a second node Job from cuda on.
	if got := verdicts(res.Stages); !strings.Contains(got, "inventory=PASS topology=INCONCLUSIVE cuda=PASS nccl=PASS") {
		t.Errorf("stages %s", got)
	}
	if got := fmt.Sprint(stop()); got != "[inventory cuda]" {
		t.Errorf("node Jobs from %s, want [inventory cuda]", got)
	}
}

// stopAt returns a behaviour for the node Job's pod that holds stage st:
// the containers of the stages before st end with exit code 0, st's are in
// state, the later ones wait, and the pod is in phase; then (when set) it
// calls then. A pod without st's containers succeeds.
func stopAt(st Stage, phase corev1.PodPhase, state corev1.ContainerState, then func()) behaviour {
	return func(first Stage, pod *corev1.Pod) *corev1.PodStatus {
		all := append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
		if !slices.ContainsFunc(all, func(c corev1.Container) bool { return containerStage(pod.Name, c.Name) == st }) {
			return succeed(first, pod)
		}
		s := &corev1.PodStatus{Phase: phase}
		reached := false
		for i, c := range all {
			cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
			switch {
			case containerStage(pod.Name, c.Name) == st:
				reached = true
				cs.State = state
			case !reached:
				cs = terminated(c, 0)
			}
			if i < len(pod.Spec.InitContainers) {
				s.InitContainerStatuses = append(s.InitContainerStatuses, cs)
			} else {
				s.ContainerStatuses = append(s.ContainerStatuses, cs)
			}
		}
		if then != nil {
			go then()
		}
		return s
	}
}

func TestRunUnschedulableAndRejected(t *testing.T) {
	for name, status := range map[string]*corev1.PodStatus{
		"unschedulable": {Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available"}}},
		"rejected":      {Phase: corev1.PodFailed, Reason: "OutOfnvidia.com/gpu", Message: "Node didn't have enough resource"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.plan.Stages = []Stage{StageKubernetes, StageInventory}
			res := run(t, h, func(Stage, *corev1.Pod) *corev1.PodStatus { return status.DeepCopy() })
			inv := res.Stages[1]
			if inv.Verdict != diag.Inconclusive || !(strings.Contains(inv.Reason, "unschedulable") || strings.Contains(inv.Reason, "rejected")) {
				t.Fatalf("%s: %s", inv.Verdict, inv.Reason)
			}
		})
	}
}

func TestRunTimeoutAndInterrupt(t *testing.T) {
	h := newHarness(t, nil)
	h.plan.Stages = []Stage{StageInventory}
	h.plan.StageTimeout = time.Second
	h.runner.Now = nil
	pending := func(Stage, *corev1.Pod) *corev1.PodStatus { return &corev1.PodStatus{Phase: corev1.PodRunning} }
	// The stage timeout: runner gives the Job 15 s of grace, so use a run timeout.
	h.plan.RunTimeout = 2 * time.Second
	res := run(t, h, pending)
	if inv := res.Stages[1]; inv.Verdict != diag.Inconclusive {
		t.Fatalf("inventory %s: %s", inv.Verdict, inv.Reason)
	}

	// Ctrl-C in the middle of a stage: everything is deleted all the same.
	h2 := newHarness(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	// Ctrl-C once topology started, its container running.
	h2.runner.Progress = func(e ProgressEvent) {
		if e.Stage == StageTopology && e.Verdict == "" {
			cancel()
		}
	}
	wg := fakeJobController(t, ctx, h2.client, stopAt(StageTopology, corev1.PodPending, corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, nil))
	res, err := h2.runner.Run(ctx, h2.plan)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	h2.assertClean(t)
	if top := res.Stages[2]; top.Verdict != diag.Inconclusive || !strings.Contains(top.Reason, "interrupted") {
		t.Errorf("topology %s: %s", top.Verdict, top.Reason)
	}
	if res.Stages[3].Verdict != diag.Skipped || res.Verdict != diag.Inconclusive {
		t.Errorf("after interrupt: %s", verdicts(res.Stages))
	}
}

func TestRunGPUsInUse(t *testing.T) {
	h := newHarness(t, nil)
	busy := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: "ml"},
		Spec: corev1.PodSpec{NodeName: "gpu-node-1", Containers: []corev1.Container{{Name: "t", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{ResourceGPU: resource.MustParse("2")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if _, err := h.client.CoreV1().Pods("ml").Create(context.Background(), busy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.plan.Stages = []Stage{StageKubernetes}
	res := run(t, h, succeed)
	if k := res.Stages[0]; k.Verdict != diag.Inconclusive || !strings.Contains(k.Reason, "GPUs in use by ml/trainer") {
		t.Errorf("%s: %s", k.Verdict, k.Reason)
	}
	// The other namespace's pod is untouched.
	if _, err := h.client.CoreV1().Pods("ml").Get(context.Background(), "trainer", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}

func TestRunAllParallel(t *testing.T) {
	h := newHarness(t, nil)
	n2 := gpuNode("gpu-node-2", 8)
	_, _ = h.client.CoreV1().Nodes().Create(context.Background(), n2, metav1.CreateOptions{})
	_, _ = h.client.CoreV1().Pods("kube-system").Create(context.Background(), func() *corev1.Pod { p := devicePluginPod("gpu-node-2"); p.Name += "2"; return p }(), metav1.CreateOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wg := fakeJobController(t, ctx, h.client, succeed)
	p2 := h.plan
	p2.Node, p2.RunID, p2.EvidenceDir = "gpu-node-2", "20261129t120000-beef", t.TempDir()
	res, errs := h.runner.RunAll(ctx, []Plan{h.plan, p2}, 2)
	cancel()
	wg.Wait()
	for i := range res {
		if errs[i] != nil || res[i].Verdict != diag.Pass {
			t.Errorf("node %d: %v %v", i, errs[i], res[i])
		}
	}
}

func TestRejudgeOffline(t *testing.T) {
	h := newHarness(t, nil)
	res := run(t, h, succeed)
	again, err := Rejudge(h.plan.EvidenceDir, ParserFunc(fakeParser), DefaultBaselines(), "test", rejudgedAt)
	if err != nil {
		t.Fatal(err)
	}
	if verdicts(again.Stages) != verdicts(res.Stages) || again.Verdict != diag.Pass {
		t.Fatalf("offline %s, live %s", verdicts(again.Stages), verdicts(res.Stages))
	}
	for i := range res.Stages {
		if fmt.Sprint(again.Stages[i].Evidence) != fmt.Sprint(res.Stages[i].Evidence) {
			t.Errorf("%s evidence: offline %v, live %v", res.Stages[i].Name, again.Stages[i].Evidence, res.Stages[i].Evidence)
		}
	}
	if again.Predicate.Hardware.GPUCount != 8 || again.Predicate.NCCL.Baseline == nil {
		t.Errorf("offline predicate %+v", again.Predicate.Hardware)
	}
	if again.Predicate.Rejudged == nil || !again.Predicate.Rejudged.EvidenceUnchanged || !again.Predicate.Rejudged.At.Equal(rejudgedAt) {
		t.Errorf("an offline record must say it was re-judged, and when (%v): %+v", rejudgedAt, again.Predicate.Rejudged)
	}
	if res.Predicate.Rejudged != nil {
		t.Errorf("a live record says it was re-judged")
	}
	// Edited evidence is refused: a re-judged record vouches for the
	// evidence of the run, not for edited copies.
	_ = os.WriteFile(filepath.Join(h.plan.EvidenceDir, "inventory.nvidia-smi-query.log"), []byte("FAIL:row remap pending"), 0o644)
	_, err = Rejudge(h.plan.EvidenceDir, ParserFunc(fakeParser), DefaultBaselines(), "test", rejudgedAt)
	if !errors.Is(err, ErrEvidenceChanged) || !strings.Contains(err.Error(), "inventory.nvidia-smi-query.log") {
		t.Errorf("after edit: err = %v, want ErrEvidenceChanged naming the file", err)
	}
	if _, err := Rejudge(t.TempDir(), ParserFunc(fakeParser), DefaultBaselines(), "test", rejudgedAt); err == nil {
		t.Error("Rejudge of an empty directory")
	}
}

func TestJudgeKubernetesLabels(t *testing.T) {
	n := gpuNode("n", 8)
	plugin := *devicePluginPod("n")
	exp := Expectations{Source: "spec", GPUProduct: "H100", GPUCount: 8, DriverVersion: "550",
		Taints: []record.Taint{{Key: "nvidia.com/gpu", Effect: "NoSchedule"}, {Key: "pool", Value: "train", Effect: "NoSchedule"}}}
	n.Labels["nvidia.com/cuda.driver-version.full"] = "535.161.08"
	r := JudgeKubernetes(n, []corev1.Pod{plugin}, exp, "", false)
	if r.Verdict != diag.Fail || !strings.Contains(r.Reason, "GFD driver label 535.161.08, expected 550") || !strings.Contains(r.Reason, "taint pool=train:NoSchedule missing") {
		t.Errorf("%s: %s", r.Verdict, r.Reason)
	}
	n.Labels[LabelGFDSharing] = "time-slicing"
	if r := JudgeKubernetes(n, []corev1.Pod{plugin}, exp, "", false); r.Verdict != diag.Inconclusive || !strings.Contains(r.Reason, "time-slicing") {
		t.Errorf("%s: %s", r.Verdict, r.Reason)
	}
	n = gpuNode("n", 8)
	n.Status.Conditions[0].Status = corev1.ConditionFalse
	if r := JudgeKubernetes(n, []corev1.Pod{plugin}, Expectations{}, "", false); r.Verdict != diag.Fail {
		t.Errorf("not Ready: %s", r.Verdict)
	}
	if r := JudgeKubernetes(gpuNode("n", 8), nil, Expectations{}, "", false); r.Verdict != diag.Fail || !strings.Contains(r.Reason, "no device plugin") {
		t.Errorf("no plugin: %s %s", r.Verdict, r.Reason)
	}
}

// A Job deleted by someone else ends its stage at once (from the shared
// watch's Deleted event), INCONCLUSIVE with cause cluster; GPUs held by
// another pod stop every Job stage unless --force; denied permissions make
// the Job stages create nothing and name the verbs.
func TestRunFaultCauses(t *testing.T) {
	h := newHarness(t, nil)
	h.plan.Stages = []Stage{StageInventory}
	h.plan.StageTimeout = time.Minute
	h.runner.Now = nil
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wg := fakeJobController(t, ctx, h.client, func(st Stage, pod *corev1.Pod) *corev1.PodStatus {
		go func() {
			time.Sleep(100 * time.Millisecond)
			_ = h.client.BatchV1().Jobs(testNS).Delete(context.Background(), JobName(st, h.plan.RunID), metav1.DeleteOptions{})
		}()
		return &corev1.PodStatus{Phase: corev1.PodRunning}
	})
	start := time.Now()
	res, err := h.runner.Run(ctx, h.plan)
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if inv := res.Stages[1]; inv.Verdict != diag.Inconclusive || inv.Cause != CauseCluster || !strings.Contains(inv.Reason, "deleted by someone else") {
		t.Errorf("inventory %s (%s): %s", inv.Verdict, inv.Cause, inv.Reason)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}

	h2 := newHarness(t, nil)
	busy := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: "ml"},
		Spec: corev1.PodSpec{NodeName: "gpu-node-1", Containers: []corev1.Container{{Name: "t", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{ResourceGPU: resource.MustParse("8")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	if _, err := h2.client.CoreV1().Pods("ml").Create(context.Background(), busy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res = run(t, h2, succeed)
	if k := res.Stages[0]; k.Cause != CauseCluster {
		t.Errorf("kubernetes cause %q", k.Cause)
	}
	for _, s := range res.Stages[1:] {
		if s.Verdict != diag.Skipped {
			t.Errorf("%s ran with the GPUs held: %s", s.Name, s.Verdict)
		}
	}

	h3 := newHarness(t, nil)
	h3.runner.Denied = []Permission{JobPermissions(testNS)[1]}
	h3.plan.Stages = []Stage{StageInventory, StageTopology}
	res, err = h3.runner.Run(context.Background(), h3.plan)
	if err != nil {
		t.Fatal(err)
	}
	if inv := res.Stages[1]; inv.Verdict != diag.Inconclusive || inv.Cause != CauseCluster || !strings.Contains(inv.Reason, "delete jobs.batch in namespace "+testNS) {
		t.Errorf("inventory %s (%s): %s", inv.Verdict, inv.Cause, inv.Reason)
	}
	if top := res.Stages[2]; top.Verdict != diag.Skipped {
		t.Errorf("topology %s", top.Verdict)
	}
	// No list or watch of Jobs or pods was started for a run that may
	// create none (the informers of a denied list would wait for good).
	for _, a := range h3.client.Actions() {
		if (a.GetVerb() == "list" || a.GetVerb() == "watch") && a.GetNamespace() == testNS {
			t.Errorf("%s %s in %s with permissions denied", a.GetVerb(), a.GetResource().Resource, testNS)
		}
	}
	jobs, _ := h3.client.BatchV1().Jobs(testNS).List(context.Background(), metav1.ListOptions{})
	if len(jobs.Items) != 0 {
		t.Errorf("%d Jobs created without the permission to delete them", len(jobs.Items))
	}
}

// TestRunNodeGoneStops: a node deleted while a stage of its node Job runs
// ends that stage (INCONCLUSIVE, cause cluster, from the shared watch of
// the nodes), and no later stage runs or creates a Job.
func TestRunNodeGoneStops(t *testing.T) {
	h := newHarness(t, nil)
	h.runner.WatchNodes, h.runner.Now = true, nil
	h.plan.StageTimeout = time.Minute
	stop := jobWatch(t, h)
	// The node goes once topology's turn came (its container running).
	h.runner.Progress = func(e ProgressEvent) {
		if e.Stage == StageTopology && e.Verdict == "" {
			_ = h.client.CoreV1().Nodes().Delete(context.Background(), "gpu-node-1", metav1.DeleteOptions{})
		}
	}
	res := run(t, h, stopAt(StageTopology, corev1.PodPending, corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, nil))
	if top := res.Stages[2]; top.Verdict != diag.Inconclusive || top.Cause != CauseCluster || !strings.Contains(top.Reason, "node gpu-node-1 was deleted during the stage") {
		t.Errorf("topology %s (%s): %s", top.Verdict, top.Cause, top.Reason)
	}
	for _, s := range res.Stages[3:5] {
		if s.Verdict != diag.Skipped || !strings.Contains(s.Reason, "was deleted") {
			t.Errorf("%s after the node went: %s %q", s.Name, s.Verdict, s.Reason)
		}
	}
	if got := fmt.Sprint(stop()); got != "[inventory]" {
		t.Errorf("Jobs from %s, want the one node Job", got)
	}
}

// TestRunNonZeroExitRerunsTheRest: an init container that exits non-zero
// ends its pod before the later stages' containers ran; the stage is judged
// from what it printed, and the stages after it run in a new node Job from
// the next stage on (the run goes on: the stage did not FAIL).
func TestRunNonZeroExitRerunsTheRest(t *testing.T) {
	h := newHarness(t, nil)
	stop := jobWatch(t, h)
	res := run(t, h, func(first Stage, pod *corev1.Pod) *corev1.PodStatus {
		if first != StageInventory {
			return succeed(first, pod)
		}
		s := stopAt(StageTopology, corev1.PodFailed, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}, nil)(first, pod)
		for i, cs := range s.InitContainerStatuses {
			if cs.Name == ContainerSMINVLink {
				s.InitContainerStatuses[i].State.Terminated.ExitCode = 1
			}
		}
		return s
	})
	if got := verdicts(res.Stages); !strings.HasPrefix(got, "kubernetes=PASS inventory=INCONCLUSIVE topology=PASS cuda=PASS nccl=PASS") {
		t.Errorf("stages %s", got)
	}
	if got := fmt.Sprint(stop()); got != "[inventory topology]" {
		t.Errorf("node Jobs from %s, want [inventory topology]", got)
	}
}

// TestTimeoutCause: a stage that timed out is the node's when its
// container was running, the harness's when it never started, and the
// cluster's when gpuctl's watches failed (the API server away) during it.
func TestTimeoutCause(t *testing.T) {
	running := &corev1.Pod{Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{
		{Name: ContainerSMITopo, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	waiting := &corev1.Pod{Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{
		{Name: ContainerSMITopo, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}}}
	started := time.Now()
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		outage time.Time
		want   string
	}{
		{"running", running, time.Time{}, CauseNode},
		{"never started", waiting, time.Time{}, CauseHarness},
		{"no pod", nil, time.Time{}, CauseHarness},
		{"outage during the stage", running, started.Add(time.Second), CauseCluster},
		{"outage before the stage", running, started.Add(-time.Minute), CauseNode},
	} {
		f := &stageFollow{s: &runState{tr: &tracker{lastOutage: tc.outage}}, names: []string{ContainerSMITopo}, started: started, pod: tc.pod}
		if got := f.timeoutCause(); got != tc.want {
			t.Errorf("%s: cause %s, want %s", tc.name, got, tc.want)
		}
	}
}
