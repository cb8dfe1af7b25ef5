package accept

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/record"
)

func TestBuildMultiNode(t *testing.T) {
	spec := MultiSpec{RunID: "r1-m0", Namespace: "gpuctl", Nodes: []string{"n1", "n2"}, GPUsPerNode: 8,
		Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}},
		Image:  Image{Ref: "nvcr.io/nvidia/pytorch:25.01-py3"}, Env: map[string]string{"NCCL_NET": "gIB", "LD_LIBRARY_PATH": "/usr/local/nvidia/lib64"},
		Deadline: 10 * time.Minute, TTL: time.Hour}
	job, svc := BuildMultiNode(spec)
	name := "gpuctl-nccl-multi-r1-m0"
	if job.Name != name || svc.Name != name || job.Namespace != "gpuctl" || svc.Namespace != "gpuctl" {
		t.Fatalf("names %s %s", job.Name, svc.Name)
	}
	js := job.Spec
	if js.CompletionMode == nil || *js.CompletionMode != batchv1.IndexedCompletion || *js.Completions != 2 || *js.Parallelism != 2 || *js.BackoffLimit != 0 ||
		*js.ActiveDeadlineSeconds != 600 || *js.TTLSecondsAfterFinished != 3600 {
		t.Errorf("job spec %+v", js)
	}
	ps := js.Template.Spec
	if ps.Subdomain != name || ps.NodeName != "" || *ps.AutomountServiceAccountToken || len(ps.Tolerations) != 1 {
		t.Errorf("pod spec subdomain %q nodeName %q", ps.Subdomain, ps.NodeName)
	}
	// The API server takes one value per metadata.name field selector: one term per node.
	terms := ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 2 {
		t.Fatalf("node affinity terms %+v", terms)
	}
	for i, want := range []string{"n1", "n2"} {
		if f := terms[i].MatchFields; len(f) != 1 || f[0].Key != "metadata.name" || f[0].Operator != corev1.NodeSelectorOpIn || len(f[0].Values) != 1 || f[0].Values[0] != want {
			t.Errorf("node affinity term %d %+v", i, terms[i])
		}
	}
	aa := ps.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if aa.TopologyKey != "kubernetes.io/hostname" || aa.LabelSelector.MatchLabels[LabelRunID] != "r1-m0" || aa.LabelSelector.MatchLabels[LabelStage] != string(StageNCCLMulti) {
		t.Errorf("anti-affinity %+v", aa)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses || svc.Spec.Selector[LabelRunID] != "r1-m0" || svc.Spec.Selector[LabelStage] != string(StageNCCLMulti) ||
		svc.Labels[LabelManagedBy] != ManagedBy {
		t.Errorf("service %+v", svc.Spec)
	}
	c := ps.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for k, want := range map[string]string{"GPUCTL_NNODES": "2", "GPUCTL_GPUS_PER_NODE": "8", "MASTER_ADDR": name + "-0." + name, "MASTER_PORT": "29500", "NCCL_NET": "gIB"} {
		if env[k].Value != want {
			t.Errorf("env %s = %q, want %q", k, env[k].Value, want)
		}
	}
	if f := env["GPUCTL_NODE_RANK"].ValueFrom; f == nil || f.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("node rank from %+v", f)
	}
	if q := c.Resources.Limits[ResourceGPU]; q.Value() != 8 || *c.SecurityContext.Privileged || !*c.SecurityContext.RunAsNonRoot {
		t.Errorf("container resources/security %+v %+v", c.Resources, c.SecurityContext)
	}
	script := c.Command[2]
	for _, want := range []string{"torchrun --nnodes=\"$GPUCTL_NNODES\" --nproc-per-node=\"$GPUCTL_GPUS_PER_NODE\" --node-rank=\"${JOB_COMPLETION_INDEX:-$GPUCTL_NODE_RANK}\"",
		"--master-addr=\"$MASTER_ADDR\"", "/tmp/gpuctl-allreduce.py 1G 8G 20", "dist.init_process_group(\"nccl\")", "getent hosts \"$MASTER_ADDR\""} {
		if !strings.Contains(script, want) {
			t.Errorf("command lacks %q", want)
		}
	}
	if strings.Contains(script, "ssh") || strings.Contains(script, "mpirun") {
		t.Error("the launcher uses ssh or mpirun")
	}
}

func TestMultiGroups(t *testing.T) {
	got := MultiGroups([]string{"a", "b", "c", "d"}, MultiPairs)
	if len(got) != 2 || len(got[0]) != 2 || len(got[1]) != 2 ||
		strings.Join(got[0][0], "") != "ab" || strings.Join(got[0][1], "") != "cd" || strings.Join(got[1][0], "") != "bc" || strings.Join(got[1][1], "") != "da" {
		t.Errorf("4 nodes: %v", got)
	}
	odd := MultiGroups([]string{"a", "b", "c"}, MultiPairs)
	n := 0
	for _, round := range odd {
		busy := map[string]bool{}
		for _, p := range round {
			n++
			for _, x := range p {
				if busy[x] {
					t.Errorf("node %s twice in a round: %v", x, odd)
				}
				busy[x] = true
			}
		}
	}
	if n != 3 || len(odd) != 3 {
		t.Errorf("3 nodes: %v", odd)
	}
	if g := MultiGroups([]string{"a", "b"}, MultiPairs); len(g) != 1 || len(g[0]) != 1 {
		t.Errorf("2 nodes: %v", g)
	}
	if g := MultiGroups([]string{"a", "b", "c"}, MultiAll); len(g) != 1 || len(g[0]) != 1 || len(g[0][0]) != 3 {
		t.Errorf("all: %v", g)
	}
	if MultiGroups([]string{"a"}, MultiPairs) != nil {
		t.Error("one node makes a group")
	}
}

// With 4 nodes in a ring of pairs, the node common to the two failing
// pairs is the slow one; its partners pass.
func TestBlameMultiNamesTheSlowNode(t *testing.T) {
	g := func(a, b string, v diag.Verdict) MultiGroupResult {
		return MultiGroupResult{Group: a + b, Nodes: []string{a, b}, Verdict: v, Reason: "pair " + a + b + " " + string(v)}
	}
	nodes := []string{"a", "b", "c", "d"}
	res := BlameMulti(nodes, []MultiGroupResult{g("a", "b", diag.Pass), g("c", "d", diag.Fail), g("b", "c", diag.Fail), g("d", "a", diag.Pass)}, MultiPairs)
	if r := res["c"]; r.Verdict != diag.Fail || r.Cause != CauseNode || !strings.Contains(r.Reason, "the slow node") || !strings.Contains(r.Reason, "with d, b") {
		t.Errorf("c: %+v", r)
	}
	for _, n := range []string{"a", "b", "d"} {
		if r := res[n]; r.Verdict != diag.Pass {
			t.Errorf("%s: %+v", n, r)
		}
	}
	if !strings.Contains(res["b"].Reason, "failed because of the slow node c") {
		t.Errorf("b: %q", res["b"].Reason)
	}
	// Every pair failing names no node.
	res = BlameMulti(nodes, []MultiGroupResult{g("a", "b", diag.Fail), g("c", "d", diag.Fail), g("b", "c", diag.Fail), g("d", "a", diag.Fail)}, MultiPairs)
	for _, n := range nodes {
		if r := res[n]; r.Verdict != diag.Fail || !strings.Contains(r.Reason, "every pair failed") {
			t.Errorf("all failed, %s: %+v", n, r)
		}
	}
	// Two nodes: either may be slow.
	res = BlameMulti([]string{"a", "b"}, []MultiGroupResult{g("a", "b", diag.Fail)}, MultiPairs)
	if r := res["a"]; r.Verdict != diag.Fail || !strings.Contains(r.Reason, "either may be the slow one") {
		t.Errorf("2 nodes: %+v", r)
	}
	// An INCONCLUSIVE pair not explained by a slow node stays INCONCLUSIVE.
	inc := g("c", "d", diag.Inconclusive)
	inc.Cause = CauseHarness
	res = BlameMulti(nodes, []MultiGroupResult{g("a", "b", diag.Pass), inc, g("b", "c", diag.Pass), g("d", "a", diag.Pass)}, MultiPairs)
	if res["c"].Verdict != diag.Inconclusive || res["d"].Verdict != diag.Inconclusive || res["a"].Verdict != diag.Pass {
		t.Errorf("inconclusive pair: %+v", res)
	}
}

// Each node's nccl-multi result carries its groups' facts: the groups, the
// other nodes, and the lowest busbw its groups measured with its size, group
// and transport (what the report's fleet table shows); a group that
// measured nothing (INCONCLUSIVE before a table) adds no busbw, and a
// group of more than 8 peers counts them instead of naming them.
func TestBlameMultiFacts(t *testing.T) {
	g := func(name string, busbw float64, v diag.Verdict, nodes ...string) MultiGroupResult {
		return MultiGroupResult{Group: name, Nodes: nodes, Verdict: v, Reason: name, BusBandwidthGBps: busbw, LargestBytes: 8 << 30, Transport: "FasTrak"}
	}
	nodes := []string{"n10", "n2", "n3", "n1"}
	groups := []MultiGroupResult{g("r-m0", 231.5, diag.Pass, "n1", "n2"), g("r-m1", 0, diag.Inconclusive, "n3", "n10"), g("r-m2", 198.25, diag.Pass, "n2", "n3"), g("r-m3", 240, diag.Pass, "n10", "n1")}
	res := BlameMulti(nodes, groups, MultiPairs)
	want := map[string]string{record.FactMultiGroups: "r-m0,r-m2", record.FactMultiPeers: "n1,n3", record.FactMultiNodes: "3", record.FactMultiBusBW: "198.25",
		record.FactMultiLargest: "8589934592", record.FactMultiBusBWGroup: "r-m2", record.FactMultiTransport: "FasTrak"}
	if got := res["n2"].Facts; !maps.Equal(got, want) {
		t.Errorf("n2 facts %v, want %v", got, want)
	}
	if got := res["n10"].Facts; got[record.FactMultiBusBW] != "240.00" || got[record.FactMultiBusBWGroup] != "r-m3" || got[record.FactMultiPeers] != "n1,n3" {
		t.Errorf("n10 facts %v: the INCONCLUSIVE group measured nothing", got)
	}
	var many []string
	for i := range 10 {
		many = append(many, fmt.Sprintf("n%d", i))
	}
	all := BlameMulti(many, []MultiGroupResult{g("r-m0", 150, diag.Pass, many...)}, MultiAll)
	if got := all["n0"].Facts; got[record.FactMultiNodes] != "10" || got[record.FactMultiPeers] != "" || got[record.FactMultiBusBW] != "150.00" {
		t.Errorf("one group of 10 nodes: %v", got)
	}
	if lone := BlameMulti([]string{"a"}, nil, MultiPairs)["a"]; lone.Facts != nil {
		t.Errorf("a node in no group has facts %v", lone.Facts)
	}
}

func TestJudgeMultiGroup(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "nccl-tests", "a100-40g-2node-16gpu-allreduce-10G-roce.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ranks := []MultiRank{{Index: 0, Node: "n1", Log: data}, {Index: 1, Node: "n2", Log: data}}
	g := MultiGroupResult{Group: "r-m0", Nodes: []string{"n1", "n2"}, Ranks: ranks}
	tcpx, _ := matrix.MultiNodeBaseline("a3-highgpu-8g")
	if r := JudgeMultiGroup(g, 8, ProbeParser(), &tcpx, "a3-highgpu-8g"); r.Verdict != diag.Pass || r.BusBandwidthGBps != 222.88 || !strings.Contains(r.Reason, "meets the tcpx multi-node minimum 80 GB/s") {
		t.Errorf("tcpx: %s %q", r.Verdict, r.Reason)
	}
	roce, _ := matrix.MultiNodeBaseline("a3-ultragpu-8g")
	if r := JudgeMultiGroup(g, 8, ProbeParser(), &roce, "a3-ultragpu-8g"); r.Verdict != diag.Fail || !strings.Contains(r.Reason, "222.9 GB/s at 10 GiB across n1, n2 is below the roce multi-node minimum 331 GB/s") {
		t.Errorf("roce: %s %q", r.Verdict, r.Reason)
	}
	efa, _ := matrix.MultiNodeBaseline("p5.48xlarge")
	if r := JudgeMultiGroup(g, 8, ProbeParser(), &efa, "p5.48xlarge"); r.Verdict != diag.Fail || !strings.Contains(r.Reason, "222.9 GB/s at 10 GiB across n1, n2 is below the efa multi-node minimum 332 GB/s") {
		t.Errorf("efa: %s %q", r.Verdict, r.Reason)
	}
	// A fabric without a published figure is not judged.
	none := matrix.NCCLMultiNodeBaseline{Fabric: "efa", NoFigure: "no published figure"}
	if r := JudgeMultiGroup(g, 8, ProbeParser(), &none, "p5.48xlarge"); r.Verdict != diag.Inconclusive || !strings.Contains(r.Reason, "no baseline for fabric efa: no published figure") {
		t.Errorf("no figure: %s %q", r.Verdict, r.Reason)
	}
	if r := JudgeMultiGroup(g, 4, ProbeParser(), &tcpx, "a3-highgpu-8g"); r.Verdict != diag.Inconclusive || !strings.Contains(r.Reason, "ran on 16 ranks, the group has 8") {
		t.Errorf("rank count: %s %q", r.Verdict, r.Reason)
	}
	bad := MultiGroupResult{Group: "r-m0", Nodes: []string{"n1", "n2"}, Ranks: []MultiRank{ranks[0], {Index: 1, Node: "n2", Log: []byte("rendezvous: gpuctl-nccl-multi-r-m0-0.gpuctl-nccl-multi-r-m0 does not resolve\n")}}}
	if r := JudgeMultiGroup(bad, 8, ProbeParser(), &tcpx, "a3-highgpu-8g"); r.Verdict != diag.Inconclusive || r.Cause != CauseHarness || !strings.Contains(r.Reason, "rank 1 on node n2 printed no all_reduce results") {
		t.Errorf("rendezvous failure: %s %q", r.Verdict, r.Reason)
	}
}

// The benchmark's table is what the nccl-tests parser reads: the script's
// own format strings (Python %-formats, the same in Go for these verbs),
// filled for 2 nodes x 8 GPUs, parse to 16 ranks on 2 hosts, every size,
// no wrong values and the busbw at the largest size.
func TestAllReduceScriptPrintsAllReducePerfTable(t *testing.T) {
	formats := map[string]string{
		"rank":   `"#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] %s"`,
		"params": `"# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 2(factor) warmup iters: %d iters: %d agg iters: 1 validation: 1 graph: 0"`,
		"header": `"#       size         count      type   redop    root     time   algbw   busbw #wrong"`,
		"row":    `"%12d  %12d     float     sum      -1  %7.1f  %6.2f  %6.2f  %5d"`,
		"oob":    `"# Out of bounds values : %d %s"`,
	}
	for name, f := range formats {
		if !strings.Contains(allReduceScript, f) {
			t.Fatalf("data/allreduce.py no longer prints the %s line as %s", name, f)
		}
		formats[name] = strings.Trim(f, `"`)
	}
	var b strings.Builder
	line := func(format string, args ...any) { b.WriteString(fmt.Sprintf(format, args...) + "\n") }
	line(formats["params"], 1<<30, 8<<30, 5, 20)
	b.WriteString("#\n# Using devices\n")
	for r := 0; r < 16; r++ {
		line(formats["rank"], r, 100+r, fmt.Sprintf("gpuctl-nccl-multi-r-m0-%d", r/8), r%8, 0x10+r%8, "NVIDIA H100 80GB HBM3")
	}
	b.WriteString("#\n#                                                               in-place\n")
	b.WriteString(formats["header"] + "\n")
	b.WriteString("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n")
	for size := int64(1 << 30); size <= 8<<30; size *= 2 {
		algbw := 50.0
		sec := float64(size) / algbw / 1e9
		line(formats["row"], size, size/4, sec*1e6, algbw, algbw*2*15/16, 0)
	}
	line(formats["oob"], 0, "OK")
	o, err := ProbeParser().Parse(kindOf(StageNCCLMulti, ContainerNCCLMulti), []byte(b.String()))
	if err != nil || o.NCCL == nil {
		t.Fatalf("parse: %v\n%s", err, b.String())
	}
	f := ncclSummary(o.NCCL)
	if o.NCCL.Ranks != 16 || ncclHosts(o.NCCL) != 2 || len(f.Rows) != 4 || f.Wrong != 0 || f.LargestBytes != 8<<30 || f.BusBandwidthGBps != 93.75 {
		t.Errorf("parsed %+v from\n%s", f, b.String())
	}
}
