//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/fabric"
)

// TestNCCLMultiAcrossTwoNodes: --stages nccl-multi over two fake a3-highgpu-8g
// nodes creates one headless Service and one Indexed Job (2 completions, 2
// in parallel), whose rank pods the scheduler places one per node, each with
// its rank (completion index), the world and the rendezvous address in its
// environment. kwok runs no process: every rank pod "prints" a real 2-node x
// 8 GPU all_reduce_perf output (namespace e2e-multi, hack/e2e/kwok.yaml),
// which is judged against the GPUDirect-TCPX baseline. Nothing is left.
func TestNCCLMultiAcrossTwoNodes(t *testing.T) {
	const ns = "e2e-multi"
	ctx := context.Background()
	nodes := []string{"e2e-multi-1", "e2e-multi-2"}
	for _, node := range nodes {
		fakeGPUNodeWith(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2", tcpxNets())
		labelNode(t, node, map[string]string{"e2e-pool": "multi", accept.LabelInstanceType: "a3-highgpu-8g"})
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Record the rank pods, the Job and the Service while they exist.
	sel := metav1.ListOptions{LabelSelector: accept.LabelStage + "=" + string(accept.StageNCCLMulti)}
	var mu sync.Mutex
	pods, jobs, svcs := map[string]*corev1.Pod{}, map[string]*batchv1.Job{}, map[string]*corev1.Service{}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	follow := func(w watch.Interface, err error) {
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer w.Stop()
			for {
				select {
				case <-wctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					mu.Lock()
					switch o := ev.Object.(type) {
					case *corev1.Pod:
						if o.Spec.NodeName != "" {
							pods[o.Name] = o.DeepCopy()
						}
					case *batchv1.Job:
						jobs[o.Name] = o.DeepCopy()
					case *corev1.Service:
						svcs[o.Name] = o.DeepCopy()
					}
					mu.Unlock()
				}
			}
		}()
	}
	follow(client.CoreV1().Pods(ns).Watch(wctx, sel))
	follow(client.BatchV1().Jobs(ns).Watch(wctx, sel))
	follow(client.CoreV1().Services(ns).Watch(wctx, sel))

	base := t.TempDir()
	r := gpuctlRun(t, "accept", "-l", "e2e-pool=multi", "--stages", "kubernetes,nccl-multi", "--parallel", "2", "-n", ns,
		"--evidence-dir", base, "-o", "json", "--stage-timeout", "60s", "-q", "--allow-privileged")
	stop()
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (PASS)", r.code)
	}
	mu.Lock()
	defer mu.Unlock()

	if len(jobs) != 1 || len(svcs) != 1 {
		t.Fatalf("%d Jobs and %d Services of nccl-multi, want one each", len(jobs), len(svcs))
	}
	var job *batchv1.Job
	for _, j := range jobs {
		job = j
	}
	var svc *corev1.Service
	for _, s := range svcs {
		svc = s
	}
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion || *job.Spec.Completions != 2 || *job.Spec.Parallelism != 2 {
		t.Errorf("Job %s: completionMode %v completions %d parallelism %d", job.Name, job.Spec.CompletionMode, *job.Spec.Completions, *job.Spec.Parallelism)
	}
	if svc.Name != job.Name || svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector[accept.LabelRunID] != job.Labels[accept.LabelRunID] || job.Spec.Template.Spec.Subdomain != svc.Name {
		t.Errorf("Service %s (clusterIP %q, selector %v) and the Job's subdomain %q", svc.Name, svc.Spec.ClusterIP, svc.Spec.Selector, job.Spec.Template.Spec.Subdomain)
	}
	// One rank per node, indices 0 and 1, each with the rank environment.
	onNode := map[string]string{}
	indices := map[string]bool{}
	for _, p := range pods {
		idx := p.Annotations[accept.AnnotationCompletionIndex]
		if prev, dup := onNode[p.Spec.NodeName]; dup && prev != idx {
			t.Errorf("two ranks (%s, %s) on node %s", prev, idx, p.Spec.NodeName)
		}
		onNode[p.Spec.NodeName] = idx
		indices[idx] = true
		env := map[string]corev1.EnvVar{}
		for _, e := range p.Spec.Containers[0].Env {
			env[e.Name] = e
		}
		if env["GPUCTL_NNODES"].Value != "2" || env["GPUCTL_GPUS_PER_NODE"].Value != "8" || env["MASTER_ADDR"].Value != job.Name+"-0."+svc.Name || env["MASTER_PORT"].Value != "29500" ||
			env["GPUCTL_NODE_RANK"].ValueFrom == nil || env["GPUCTL_NODE_RANK"].ValueFrom.FieldRef.FieldPath != "metadata.annotations['"+accept.AnnotationCompletionIndex+"']" {
			t.Errorf("pod %s (index %s) environment %+v", p.Name, idx, p.Spec.Containers[0].Env)
		}
		if p.Spec.Hostname != job.Name+"-"+idx || p.Spec.Subdomain != svc.Name {
			t.Errorf("pod %s: hostname %q subdomain %q, want %s-%s.%s", p.Name, p.Spec.Hostname, p.Spec.Subdomain, job.Name, idx, svc.Name)
		}
		if q := p.Spec.Containers[0].Resources.Limits[accept.ResourceGPU]; q.Value() != 8 {
			t.Errorf("pod %s asks for %s GPUs", p.Name, q.String())
		}
		// The GPUDirect-TCPX side: the RxDM sidecar and the GPU networks.
		if len(p.Spec.InitContainers) != 1 || p.Spec.InitContainers[0].Name != "tcpx-daemon" || !strings.Contains(p.Annotations["networking.gke.io/interfaces"], `"interfaceName":"eth4","network":"vpc4"`) {
			t.Errorf("pod %s: init containers %v, interfaces %q", p.Name, p.Spec.InitContainers, p.Annotations["networking.gke.io/interfaces"])
		}
	}
	if len(onNode) != 2 || onNode[nodes[0]] == "" || onNode[nodes[1]] == "" || !indices["0"] || !indices["1"] {
		t.Errorf("ranks by node %v, want one on each of %v with indices 0 and 1", onNode, nodes)
	}

	// Each node's record carries the stage, judged from the ranks' outputs.
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d records, want 2", len(lines))
	}
	for _, l := range lines {
		var st struct {
			Predicate accept.Predicate `json:"predicate"`
		}
		if err := json.Unmarshal([]byte(l), &st); err != nil {
			t.Fatal(err)
		}
		p := &st.Predicate
		s := stage(p, accept.StageNCCLMulti)
		if p.Verdict != diag.Pass || s.Verdict != diag.Pass || !strings.Contains(s.Reason, "busbw 222.9 GB/s at 10 GiB across e2e-multi-1, e2e-multi-2 meets the tcpx multi-node minimum 80 GB/s") {
			t.Errorf("%s: verdict %s, nccl-multi %s %q", p.Node.Name, p.Verdict, s.Verdict, s.Reason)
		}
		names := map[string]bool{}
		for _, e := range s.Evidence {
			names[e.Name] = true
		}
		group := job.Labels[accept.LabelRunID]
		for _, want := range []string{"nccl-multi." + group + ".rank-0.log", "nccl-multi." + group + ".rank-1.log", accept.MultiRanksFile} {
			if !names[want] {
				t.Errorf("%s: evidence lacks %s (%v)", p.Node.Name, want, names)
			}
			if _, err := os.Stat(filepath.Join(base, p.Node.Name, p.RunID, want)); err != nil {
				t.Error(err)
			}
		}
	}
	if !strings.Contains(r.stderr, "nccl-multi "+job.Labels[accept.LabelRunID]+" (e2e-multi-1, e2e-multi-2): PASS") {
		t.Errorf("stderr lacks the group's line:\n%s", r.stderr)
	}

	// Nothing left behind: Jobs, pods, Services.
	assertNothingLeft(t, ns)
	if l, err := client.CoreV1().Services(ns).List(ctx, sel); err != nil || len(l.Items) != 0 {
		t.Errorf("nccl-multi Services left: %v %v", l, err)
	}
}

// tcpxNets are the resources of an a3-highgpu-8g node on its 4 GPU NICs'
// GKE networks (GPUDirect-TCPX).
func tcpxNets() corev1.ResourceList {
	nets := corev1.ResourceList{}
	for i := 1; i <= 4; i++ {
		nets[fabric.NetworkResource(fmt.Sprintf("vpc%d", i))] = resource.MustParse("1")
		nets[fabric.NetworkResource(fmt.Sprintf("vpc%d.IP", i))] = resource.MustParse("1")
	}
	return nets
}

// TestNCCLMultiRingWithNodeDeleted: nccl-multi pairs over four
// a3-highgpu-8g nodes; e2e-ring-2's rank pod stays Running
// (hack/e2e/kwok.yaml) and the node is deleted while it does. Its pair
// ends at once, no Job is made for its other pair, and the ring is planned
// again over the three nodes left: the one new pair (e2e-ring-1 and
// e2e-ring-3) runs, and the three nodes PASS; the deleted node is
// INCONCLUSIVE (cluster). Nothing is left.
func TestNCCLMultiRingWithNodeDeleted(t *testing.T) {
	const ns, victim = "e2e-ring", "e2e-ring-2"
	ctx := context.Background()
	nodes := []string{"e2e-ring-1", victim, "e2e-ring-3", "e2e-ring-4"}
	for _, node := range nodes {
		fakeGPUNodeWith(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2", tcpxNets())
		labelNode(t, node, map[string]string{"e2e-pool": "ring", accept.LabelInstanceType: "a3-highgpu-8g"})
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := gpuctlStart(t, "accept", "-l", "e2e-pool=ring", "--stages", "kubernetes,nccl-multi", "--parallel", "4", "-n", ns,
		"--evidence-dir", t.TempDir(), "-o", "json", "--stage-timeout", "60s", "-q", "--allow-privileged")
	eventually(t, 60*time.Second, "a rank pod Running on "+victim, func() bool {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: accept.LabelStage + "=" + string(accept.StageNCCLMulti)})
		if err != nil {
			return false
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == victim && p.Status.Phase == corev1.PodRunning {
				return true
			}
		}
		return false
	})
	if err := client.CoreV1().Nodes().Delete(ctx, victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r := s.wait()
	if r.code != 4 {
		t.Fatalf("exit %d, want 4 (one node INCONCLUSIVE)", r.code)
	}
	passed := 0
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var st struct {
			Predicate accept.Predicate `json:"predicate"`
		}
		if err := json.Unmarshal([]byte(l), &st); err != nil {
			t.Fatal(err)
		}
		p := &st.Predicate
		ms := stage(p, accept.StageNCCLMulti)
		switch {
		case p.Node.Name == victim:
			if ms.Verdict != diag.Inconclusive || ms.Cause != accept.CauseCluster || !strings.Contains(ms.Reason, "node "+victim+" was deleted during the nccl-multi stage") {
				t.Errorf("%s: nccl-multi %s (%s) %q, want INCONCLUSIVE (cluster)", victim, ms.Verdict, ms.Cause, ms.Reason)
			}
		case p.Verdict == diag.Pass && ms.Verdict == diag.Pass:
			passed++
		default:
			t.Errorf("%s: verdict %s, nccl-multi %s (%s) %q, want PASS", p.Node.Name, p.Verdict, ms.Verdict, ms.Cause, ms.Reason)
		}
	}
	if passed != 3 {
		t.Errorf("%d nodes PASS, want 3", passed)
	}
	if !strings.Contains(r.stderr, "(e2e-ring-1, e2e-ring-3): PASS") {
		t.Errorf("stderr lacks the new pair's line:\n%s", r.stderr)
	}
	assertNoLiveLeftovers(t, ns)
	sel := metav1.ListOptions{LabelSelector: accept.LabelStage + "=" + string(accept.StageNCCLMulti)}
	if l, err := client.CoreV1().Services(ns).List(ctx, sel); err != nil || len(l.Items) != 0 {
		t.Errorf("nccl-multi Services left: %v %v", l, err)
	}
}

// TestNCCLMultiWithoutEFA: two p5.48xlarge nodes whose EFA device plugin
// advertises no vpc.amazonaws.com/efa: nccl-multi creates no Job and is
// INCONCLUSIVE (exit 4) naming the resource, instead of judging TCP sockets
// against the EFA baseline. Nothing is left.
func TestNCCLMultiWithoutEFA(t *testing.T) {
	const ns = "e2e-multi-noefa"
	ctx := context.Background()
	nodes := []string{"e2e-noefa-1", "e2e-noefa-2"}
	for _, node := range nodes {
		fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
		labelNode(t, node, map[string]string{"e2e-pool": "noefa", accept.LabelInstanceType: "p5.48xlarge"})
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := gpuctlRun(t, "accept", "-l", "e2e-pool=noefa", "--stages", "kubernetes,nccl-multi", "-n", ns,
		"--evidence-dir", t.TempDir(), "-o", "json", "--stage-timeout", "60s", "-q")
	if r.code != 4 {
		t.Fatalf("exit %d, want 4 (INCONCLUSIVE): %s", r.code, r.stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var st struct {
			Predicate accept.Predicate `json:"predicate"`
		}
		if err := json.Unmarshal([]byte(l), &st); err != nil {
			t.Fatal(err)
		}
		s := stage(&st.Predicate, accept.StageNCCLMulti)
		if s.Verdict != diag.Inconclusive || s.Cause != accept.CauseCluster || !strings.Contains(s.Reason, "advertises no vpc.amazonaws.com/efa") {
			t.Errorf("%s: nccl-multi %s (%s) %q", st.Predicate.Node.Name, s.Verdict, s.Cause, s.Reason)
		}
	}
	if l, err := client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("Jobs created: %v %v", l, err)
	}
	assertNothingLeft(t, ns)
}
