package accept

import (
	"context"
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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/fabric"
)

// tcpxNode is an 8-GPU a3-highgpu-8g node on its 4 GPU NICs' GKE
// networks (GPUDirect-TCPX), as the e2e test's.
func tcpxNode(name string) *corev1.Node {
	n := gpuNode(name, 8)
	n.Labels[LabelInstanceType] = "a3-highgpu-8g"
	for i := 1; i <= 4; i++ {
		for _, obj := range []string{fmt.Sprintf("vpc%d", i), fmt.Sprintf("vpc%d.IP", i)} {
			n.Status.Capacity[fabric.NetworkResource(obj)] = resource.MustParse("1")
			n.Status.Allocatable[fabric.NetworkResource(obj)] = resource.MustParse("1")
		}
	}
	return n
}

// fakeIndexedJobs plays the Job controller and the kubelets for the rank
// pods of the fleet stages' Indexed Jobs: one pod per node of the Job's
// gpuctl.dev/node annotation, each Succeeded at once, and the Job Complete
// when all are. The first rank pod on node victim is left Pending and the
// victim node is deleted (once), as when a node goes away mid-stage.
func fakeIndexedJobs(t *testing.T, ctx context.Context, c *fake.Clientset, victim string) (*sync.WaitGroup, func() [][]string) {
	t.Helper()
	w, err := c.BatchV1().Jobs(testNS).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var created [][]string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer w.Stop()
		deleted := false
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
				nodes := strings.Split(job.Annotations[AnnotationNode], ",")
				mu.Lock()
				created = append(created, nodes)
				mu.Unlock()
				done := 0
				for i, n := range nodes {
					pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d-x", job.Name, i), Namespace: testNS, Labels: job.Spec.Template.Labels,
						Annotations: map[string]string{AnnotationCompletionIndex: fmt.Sprint(i)}}, Spec: job.Spec.Template.Spec}
					pod.Spec.NodeName = n
					pod, err := c.CoreV1().Pods(testNS).Create(ctx, pod, metav1.CreateOptions{})
					if err != nil {
						continue
					}
					if n == victim {
						if !deleted {
							deleted = true
							_ = c.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
						}
						continue
					}
					pod.Status = *succeed(StageNCCLMulti, pod)
					if _, err := c.CoreV1().Pods(testNS).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err == nil {
						done++
					}
				}
				if done == len(nodes) {
					job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
					_, _ = c.BatchV1().Jobs(testNS).UpdateStatus(ctx, job, metav1.UpdateOptions{})
				}
			}
		}
	}()
	return &wg, func() [][]string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(created)
	}
}

// ringRun runs nccl-multi in pairs over nodes n1..n4 (a3-highgpu-8g,
// every rank printing a real 2-node x 8 GPU all_reduce output with the
// GPUDirect-TCPX network line), with victim deleted when its first rank
// pod is made, or before the stage when gone is set. It returns the
// result and the node sets of the Jobs made.
func ringRun(t *testing.T, victim string, goneBefore bool) (*MultiResult, [][]string) {
	t.Helper()
	log, err := os.ReadFile(filepath.Join("..", "..", "testdata", "derived", "nccl-tests", "a100-40g-2node-16gpu-allreduce-10G-roce-net-gpudirecttcpx.txt"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"n1", "n2", "n3", "n4"}
	var objs []runtime.Object
	var nodes []*corev1.Node
	dirs := map[string]string{}
	for _, n := range names {
		nodes = append(nodes, tcpxNode(n))
		dirs[n] = t.TempDir()
	}
	for _, n := range nodes {
		objs = append(objs, n)
	}
	c := fake.NewClientset(objs...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if goneBefore {
		if err := c.CoreV1().Nodes().Delete(ctx, victim, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		victim = ""
	}
	wg, created := fakeIndexedJobs(t, ctx, c, victim)
	r := &Runner{Client: c, Parser: ProbeParser(), CleanupTimeout: 10 * time.Second, WatchNodes: true,
		Logs: func(context.Context, string, string, string) ([]byte, error) { return log, nil }}
	m := MultiRun{RunID: "r1", Namespace: testNS, Nodes: nodes, Mode: MultiPairs, StageTimeout: 30 * time.Second, TTL: time.Hour,
		AllowPrivileged: true, EvidenceDirs: dirs}
	res, err := r.RunMulti(ctx, m, 2)
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	left, _ := c.BatchV1().Jobs(testNS).List(context.Background(), metav1.ListOptions{})
	pods, _ := c.CoreV1().Pods(testNS).List(context.Background(), metav1.ListOptions{})
	svcs, _ := c.CoreV1().Services(testNS).List(context.Background(), metav1.ListOptions{})
	if len(left.Items)+len(pods.Items)+len(svcs.Items) != 0 {
		t.Errorf("left behind %d Jobs, %d pods, %d Services", len(left.Items), len(pods.Items), len(svcs.Items))
	}
	return res, created()
}

// A node deleted during nccl-multi: its groups end INCONCLUSIVE, the ring
// is planned anew without it and the one new pair (its two partners) runs,
// so the three nodes left PASS on the pairs of the ring they form; the
// deleted node is INCONCLUSIVE (cluster). No pair with it is made after.
func TestRunMultiRingRebuiltWithoutDeletedNode(t *testing.T) {
	res, created := ringRun(t, "n2", false)
	for _, n := range []string{"n1", "n3", "n4"} {
		if sr := res.Nodes[n]; sr.Verdict != diag.Pass {
			t.Errorf("%s: %s (%s) %q, want PASS", n, sr.Verdict, sr.Cause, sr.Reason)
		}
	}
	if sr := res.Nodes["n2"]; sr.Verdict != diag.Inconclusive || sr.Cause != CauseCluster || !strings.Contains(sr.Reason, "node n2 was deleted during the nccl-multi stage; its partners were paired anew") {
		t.Errorf("n2: %s (%s) %q", sr.Verdict, sr.Cause, sr.Reason)
	}
	// Round 1: n1+n2 (n2 deleted) and n3+n4; round 2: n2+n3 makes no Job,
	// n4+n1; then the new pair n1+n3.
	want := [][]string{{"n1", "n2"}, {"n3", "n4"}, {"n4", "n1"}, {"n1", "n3"}}
	if !sameGroups(created, want) {
		t.Errorf("Jobs made for %v, want %v", created, want)
	}
	var ids []string
	for _, g := range res.Groups {
		ids = append(ids, g.Group+"="+strings.Join(g.Nodes, "+")+":"+string(g.Verdict))
	}
	if got := strings.Join(ids, " "); got != "r1-m0=n1+n2:INCONCLUSIVE r1-m1=n3+n4:PASS r1-m2=n2+n3:INCONCLUSIVE r1-m3=n4+n1:PASS r1-m4=n1+n3:PASS" {
		t.Errorf("groups %s", got)
	}
}

// A node gone before the fleet stage (deleted during its own stages, with
// --force) is in no pair: the ring is planned over the other three.
func TestRunMultiNodeGoneBeforeTakesNoPart(t *testing.T) {
	res, created := ringRun(t, "n3", true)
	for _, g := range created {
		if slices.Contains(g, "n3") {
			t.Errorf("a Job for %v, with the deleted node", g)
		}
	}
	if len(created) != 3 {
		t.Errorf("Jobs made for %v, want the 3 pairs of n1, n2, n4", created)
	}
	for _, n := range []string{"n1", "n2", "n4"} {
		if sr := res.Nodes[n]; sr.Verdict != diag.Pass {
			t.Errorf("%s: %s (%s) %q, want PASS", n, sr.Verdict, sr.Cause, sr.Reason)
		}
	}
	if sr := res.Nodes["n3"]; sr.Verdict != diag.Inconclusive || sr.Cause != CauseCluster || !strings.Contains(sr.Reason, "node n3 was deleted before the nccl-multi stage; it takes no part") {
		t.Errorf("n3: %s (%s) %q", sr.Verdict, sr.Cause, sr.Reason)
	}
}

// sameGroups compares node sets, each group and the list in any order.
func sameGroups(got, want [][]string) bool {
	key := func(gs [][]string) []string {
		var out []string
		for _, g := range gs {
			out = append(out, groupKey(g))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(got), key(want))
}

func TestRingRebuild(t *testing.T) {
	var nodes []*corev1.Node
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		nodes = append(nodes, gpuNode(n, 8))
	}
	m := MultiRun{RunID: "r", Namespace: testNS, Nodes: nodes, Mode: MultiPairs}
	mp, err := PlanMulti(m)
	if err != nil || mp.Problem != "" {
		t.Fatal(err, mp.Problem)
	}
	g := newRing(m, mp)
	first := g.pending()
	if fmt.Sprint(first.Rounds) != fmt.Sprint(mp.Rounds) {
		t.Errorf("the first plan's groups are not PlanMulti's (what --dry-run prints):\n%v\n%v", first.Rounds, mp.Rounds)
	}
	pass := func(nodes ...string) MultiGroupResult {
		return MultiGroupResult{Nodes: nodes, Verdict: diag.Pass, Reason: "ok " + strings.Join(nodes, "+")}
	}
	// a-b, c-d, e-a ran; b-c, d-e ran with c gone.
	g.groups = []MultiGroupResult{pass("a", "b"), pass("c", "d"), pass("e", "a"),
		{Nodes: []string{"b", "c"}, Verdict: diag.Inconclusive, Cause: CauseCluster, Reason: "node c was deleted"}, pass("d", "e")}
	tr := &tracker{goneNodes: map[string]bool{"c": true}}
	dropped, err := g.drop(tr, goneDuring(StageNCCLMulti))
	if err != nil || !dropped {
		t.Fatal(dropped, err)
	}
	// The ring a-b-d-e: only b-d is new.
	next := g.pending()
	if len(next.Rounds) != 1 || len(next.Rounds[0]) != 1 || groupKey(next.Rounds[0][0].Nodes) != "b,d" || next.Rounds[0][0].RunID != "r-m5" {
		t.Fatalf("rebuilt plan %+v, want one group b+d named r-m5", next.Rounds)
	}
	g.groups = append(g.groups, pass("b", "d"))
	out := g.blame()
	for _, n := range []string{"a", "b", "d", "e"} {
		if out[n].Verdict != diag.Pass {
			t.Errorf("%s: %s %q", n, out[n].Verdict, out[n].Reason)
		}
	}
	if out["b"].Reason != "ok a+b; ok b+d" {
		t.Errorf("b is judged on %q, want its pairs of the new ring only", out["b"].Reason)
	}
	if out["c"].Verdict != diag.Inconclusive || out["c"].Cause != CauseCluster {
		t.Errorf("c: %+v", out["c"])
	}
	// Fewer than two left: INCONCLUSIVE (cluster), naming the deleted.
	tr.goneNodes = map[string]bool{"a": true, "b": true, "d": true}
	if _, err := g.drop(tr, goneDuring(StageNCCLMulti)); err != nil {
		t.Fatal(err)
	}
	out = g.blame()
	if e := out["e"]; e.Verdict != diag.Inconclusive || e.Cause != CauseCluster || !strings.Contains(e.Reason, "a, b, c, d deleted") {
		t.Errorf("e alone: %s (%s) %q", e.Verdict, e.Cause, e.Reason)
	}
}

func TestPackRounds(t *testing.T) {
	specs := []MultiSpec{{Nodes: []string{"a", "b"}}, {Nodes: []string{"b", "c"}}, {Nodes: []string{"c", "d"}}, {Nodes: []string{"d", "a"}}}
	var got []string
	for _, r := range packRounds(specs) {
		var gs []string
		for _, s := range r {
			gs = append(gs, strings.Join(s.Nodes, "+"))
		}
		got = append(got, strings.Join(gs, " "))
	}
	if strings.Join(got, " | ") != "a+b c+d | b+c d+a" {
		t.Errorf("rounds %q", got)
	}
}
