package accept

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
	"github.com/gpuctl/gpuctl/internal/record"
)

// realRun runs kubernetes, inventory, topology and nccl on the harness's
// 8x H100 node with the real parsers on real outputs (the corpus's 8x H100
// -q, topo -m and all_reduce_perf 256M..2G; probe's -L and nvlink -s).
func realRun(t *testing.T, node string, bl *Baselines) *Result {
	t.Helper()
	return realRunOn(t, node, bl, nil, corpus(t, "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt"), corpus(t, "nccl-tests/h100-x8-allreduce-g8-256M-2G-noindent-rows.txt"))
}

// realRunOn is realRun of a node (other than the harness's) with labels
// added, whose nvidia-smi -q prints smiQuery and nccl pod nccl.
func realRunOn(t *testing.T, node string, bl *Baselines, labels map[string]string, smiQuery, nccl []byte) *Result {
	t.Helper()
	h := newHarness(t, nil)
	h.plan.Stages = []Stage{StageKubernetes, StageInventory, StageTopology, StageNCCL}
	h.plan.Baselines = bl
	if node != h.plan.Node {
		pod := devicePluginPod(node)
		pod.Name += "-" + node
		n := gpuNode(node, 8)
		maps.Copy(n.Labels, labels)
		if _, err := h.client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.client.CoreV1().Pods("kube-system").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h.plan.Node = node
	}
	h.runner.Parser = ProbeParser()
	probeFile := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("..", "probe", "testdata", "nvidia-smi", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	logs := map[string][]byte{
		ContainerSMIQuery:  smiQuery,
		ContainerSMIList:   probeFile("list-L-h100-80gb-hbm3-x8.txt"),
		ContainerSMINVLink: probeFile("nvlink-s-h100-80gb-hbm3-x8-550.90.07.txt"),
	}
	topo := corpus(t, "topo/h100-x8-8nic-sglang-checkenv-570.txt")
	h.runner.Logs = func(_ context.Context, _, pod, container string) ([]byte, error) {
		if l, ok := logs[container]; ok {
			return l, nil
		}
		if container == ContainerNCCL {
			return nccl, nil
		}
		return topo, nil
	}
	return run(t, h, succeed)
}

// fabricRun is an accept run of the kubernetes, network and framework
// stages of gpu-node-3, a g2-standard-24 (2 x L4, no GPU fabric) whose
// sysfs shows no RDMA device, and whose framework pod prints the framework
// checks' real CPU output with its device named cuda (testdata/derived).
func fabricRun(t *testing.T) *Result {
	t.Helper()
	h := newHarness(t, nil)
	n := gpuNode("gpu-node-3", 2)
	n.Labels[LabelGFDProduct], n.Labels[LabelInstanceType] = "NVIDIA-L4", "g2-standard-24"
	pod := devicePluginPod(n.Name)
	pod.Name += "-" + n.Name
	if _, err := h.client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.CoreV1().Pods("kube-system").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.plan.Node, h.plan.Stages = n.Name, []Stage{StageKubernetes, StageNetwork, StageFramework}
	h.runner.Parser = ProbeParser()
	fw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "derived", "framework", "2ranks-torch-1.13-ok-as-cuda.log"))
	if err != nil {
		t.Fatal(err)
	}
	logs := networkLogs(probe.RDMASysfsHeader+"\n"+probe.RDMASysfsEnd+"\n", map[string]string{
		ContainerSMITopo: string(corpus(t, "topo/2gpu-nv2-bridge-matrix-only.txt")), ContainerFramework: string(fw)})
	h.runner.Logs = func(_ context.Context, _, _, container string) ([]byte, error) { return logs[container], nil }
	return run(t, h, succeed)
}

// derived reads a file of the repository's testdata/derived.
func derived(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "derived", path))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// a3Node is gpu-node-4, an a3-highgpu-8g (8 x H100 80GB, GPUDirect-TCPX):
// the node of the history fixtures.
var a3Node = map[string]string{LabelInstanceType: "a3-highgpu-8g"}

// previousRun is gpu-node-4's run a day before regressedRun's: the
// corpus's 8x H100 outputs, its nvidia-smi -q with no clock slowdown active
// (testdata/derived), so its GPUs have no health findings.
func previousRun(t *testing.T) *Result {
	t.Helper()
	res := realRunOn(t, "gpu-node-4", DefaultBaselines(), a3Node, derived(t, "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08-clocks-not-slowed.txt"),
		corpus(t, "nccl-tests/h100-x8-allreduce-g8-256M-2G-noindent-rows.txt"))
	shiftRun(res, "20261128t120000-9f3c", -24*time.Hour)
	return res
}

// regressedRun is gpu-node-4 run again after prev (its record): the
// corpus's 8x H100 -q (two clock-slowdown warnings on every GPU) and an
// all_reduce 20 % slower (testdata/derived, still above the minimum), so
// the run PASSes with regressions (busbw-dropped and gpu-health-new on each
// GPU); then its nccl-multi pair with gpu-node-5, judged from both ranks
// printing the derived 2-node GPUDirect-TCPX all_reduce against the
// a3-highgpu-8g's multi-node baseline, added as accept adds it.
func regressedRun(t *testing.T, prev *record.File) *Result {
	t.Helper()
	res := realRunOn(t, "gpu-node-4", DefaultBaselines(), a3Node, corpus(t, "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt"),
		derived(t, "nccl-tests/h100-x8-allreduce-g8-256M-2G-busbw-x0.8.txt"))
	LinkPrevious(res.Predicate, prev)
	ranks := derived(t, "nccl-tests/a100-40g-2node-16gpu-allreduce-10G-roce-net-gpudirecttcpx.txt")
	group := res.RunID + "-m0"
	g := MultiGroupResult{Group: group, Nodes: []string{"gpu-node-4", "gpu-node-5"}, Ranks: []MultiRank{
		{Index: 0, Node: "gpu-node-4", Pod: MultiName(res.RunID) + "-0-abcde", Log: ranks}, {Index: 1, Node: "gpu-node-5", Pod: MultiName(res.RunID) + "-1-fghij", Log: ranks}}}
	tcpx, ok := MultiBaselineFor("a3-highgpu-8g")
	if !ok {
		t.Fatal("no multi-node baseline for a3-highgpu-8g")
	}
	groups := []MultiGroupResult{JudgeMultiGroup(g, 8, ProbeParser(), &tcpx, "a3-highgpu-8g")}
	sr := BlameMulti(g.Nodes, groups, MultiPairs)["gpu-node-4"]
	sr.Started, sr.Finished = res.Predicate.Finished, res.Predicate.Finished.Add(95*time.Second)
	ev, err := saveMultiEvidence(res.EvidenceDir, StageNCCLMulti, "gpu-node-4", groups)
	if err != nil {
		t.Fatal(err)
	}
	sr.Evidence = ev
	AddStage(res, sr)
	return res
}

// shiftRun moves a run's times by d and names it runID.
func shiftRun(res *Result, runID string, d time.Duration) {
	p := res.Predicate
	res.RunID, p.RunID = runID, runID
	p.Started, p.Finished = p.Started.Add(d), p.Finished.Add(d)
	for _, stages := range [][]StageResult{res.Stages, p.Stages} {
		for i := range stages {
			if !stages[i].Started.IsZero() {
				stages[i].Started, stages[i].Finished = stages[i].Started.Add(d), stages[i].Finished.Add(d)
			}
		}
	}
}

// TestRecordCarriesNCCLRowsAndTopology: the record keeps every message size
// of all_reduce_perf (both halves, time, algbw, busbw) and topo -m's whole
// matrix, and both survive signing and verification.
func TestRecordCarriesNCCLRowsAndTopology(t *testing.T) {
	res := realRun(t, "gpu-node-1", DefaultBaselines())
	if res.Verdict != diag.Pass {
		t.Fatalf("verdict %s: %s", res.Verdict, verdicts(res.Stages))
	}
	s, v := keyPair(t, record.KeyEd25519)
	st, err := Statement(res.Predicate)
	if err != nil {
		t.Fatal(err)
	}
	env, err := Sign(context.Background(), st, s)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(env)
	ver, err := record.Verify(context.Background(), raw, v, "")
	if err != nil || !ver.OK() {
		t.Fatalf("verify: %v %v", err, ver.Problems)
	}
	p := ver.Predicate
	if p.NCCL == nil || len(p.NCCL.Rows) != 4 {
		t.Fatalf("nccl rows: %+v", p.NCCL)
	}
	sizes := []int64{268435456, 536870912, 1073741824, 2147483648}
	for i, r := range p.NCCL.Rows {
		if r.SizeBytes != sizes[i] || r.OutOfPlace == nil || r.InPlace == nil || r.Type != "float" {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	last := p.NCCL.Rows[3]
	if last.OutOfPlace.TimeUs != 7983.5 || last.OutOfPlace.AlgbwGBps != 268.99 || last.OutOfPlace.BusBandwidthGBps != 470.73 ||
		last.InPlace.BusBandwidthGBps != 470.63 || last.InPlace.Wrong == nil || *last.InPlace.Wrong != 0 || last.Count != 536870912 {
		t.Errorf("2 GiB row: %+v %+v %+v", last, *last.OutOfPlace, *last.InPlace)
	}
	tp := p.Topology
	if tp == nil || len(tp.Devices) != 16 || len(tp.Matrix) != 16 {
		t.Fatalf("topology: %+v", tp)
	}
	idx := map[string]int{}
	for i, d := range tp.Devices {
		idx[d] = i
	}
	for _, c := range []struct{ a, b, link string }{{"GPU0", "GPU0", "X"}, {"GPU0", "GPU7", "NV18"}, {"GPU0", "NIC0", "PIX"},
		{"GPU4", "NIC0", "SYS"}, {"NIC2", "GPU2", "PIX"}, {"NIC7", "NIC6", "PIX"}} {
		if got := tp.Matrix[idx[c.a]][idx[c.b]]; got != c.link {
			t.Errorf("%s-%s %q, want %q", c.a, c.b, got, c.link)
		}
	}
	if tp.NICNames["NIC0"] != "mlx5_0" {
		t.Errorf("NIC names %v", tp.NICNames)
	}
}

// TestOldRecordHasNoRowsOrTopology: a record written before the predicate
// had nccl.rows and topology still reads, without them.
func TestOldRecordHasNoRowsOrTopology(t *testing.T) {
	h, err := record.ReadFile(filepath.Join("testdata", "statement-healthy.json"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Predicate.NCCL == nil || h.Predicate.NCCL.Rows != nil || h.Predicate.Topology != nil {
		t.Errorf("old record: nccl %+v, topology %+v", h.Predicate.NCCL, h.Predicate.Topology)
	}
}

// TestRecordFixtures writes the signed records that the report's tests
// read (testdata/records/, key testdata/records/test.key, a test key and
// nothing else): records as accept writes them from real outputs. One node
// passes; a second fails nccl against a baseline raised to 480 GB/s (the
// same outputs: 470.7 GB/s at 2 GiB); a third runs network and framework
// on 2 x L4; a fourth is a GKE A3 Ultra node (testdata/nodes) whose
// network stage finds its 8 ConnectX-7 NICs at the matrix's 400 Gb/s,
// with an evidence bundle (--evidence-uri gs://example-bucket/...).
// -update rewrites them.
func TestRecordFixtures(t *testing.T) {
	keyPEM, err := os.ReadFile(filepath.Join("testdata", "records", "test.key"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := record.LoadSignerVerifier(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	strict := DefaultBaselines()
	strict.Origin = "testdata/baselines-strict.yaml"
	for i := range strict.Baselines {
		if strict.Baselines[i].SKU == "h100-sxm-x8" {
			strict.Baselines[i].MinBusBandwidthGBps = 480
		}
	}
	a3u := func(t *testing.T) *Result {
		res, _ := templateRun(t, []Stage{StageKubernetes, StageNetwork}, readTestFile(t, a3UltraSysfs))
		b, err := WriteBundle(res.EvidenceDir, BundleName(res.Node, res.RunID), "gs://example-bucket/gpuctl-evidence")
		if err != nil {
			t.Fatal(err)
		}
		res.Predicate.EvidenceBundle = b
		return res
	}
	previous := filepath.Join("testdata", "records", "h100-previous.dsse.json")
	for _, c := range []struct {
		node, file string
		run        func(t *testing.T) *Result
		verdict    diag.Verdict
	}{
		{"gpu-node-1", "h100-pass.dsse.json", func(t *testing.T) *Result { return realRun(t, "gpu-node-1", DefaultBaselines()) }, diag.Pass},
		{"gpu-node-2", "h100-nccl-fail.dsse.json", func(t *testing.T) *Result { return realRun(t, "gpu-node-2", strict) }, diag.Fail},
		{"gpu-node-3", "l4-network-framework.dsse.json", fabricRun, diag.Pass},
		{"gke-train-a3u-pool-7c1e0d2a-k4m9", "a3u-network.dsse.json", a3u, diag.Pass},
		// The previous record first: the next links the file (written
		// just before with -update).
		{"gpu-node-4", "h100-previous.dsse.json", previousRun, diag.Pass},
		{"gpu-node-4", "h100-regressed-multi.dsse.json", func(t *testing.T) *Result {
			prev, err := record.ReadFile(previous)
			if err != nil {
				t.Fatal(err)
			}
			return regressedRun(t, prev)
		}, diag.Pass},
	} {
		res := c.run(t)
		if res.Verdict != c.verdict {
			t.Fatalf("%s: verdict %s: %s", c.file, res.Verdict, verdicts(res.Stages))
		}
		rec, err := WriteRecord(context.Background(), res, signer, filepath.Join(t.TempDir(), c.file))
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(rec.Path)
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "records", c.file)
		if *update {
			if err := os.WriteFile(golden, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		// protojson varies its whitespace from build to build on purpose,
		// so the fixture is held to the record by its payload's content:
		// it verifies with the test key and says what accept writes now.
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		ver, err := record.Verify(context.Background(), want, signer, "")
		if err != nil || !ver.OK() {
			t.Fatalf("%s does not verify with test.pub: %v %v", golden, err, ver.Problems)
		}
		if diff := cmp.Diff(predicateJSON(t, want), predicateJSON(t, data)); diff != "" {
			t.Errorf("%s is not what accept writes now (go test ./internal/accept -run TestRecordFixtures -update) (-fixture +now):\n%s", golden, diff)
		}
	}
}

// predicateJSON is a record's predicate as generic JSON.
func predicateJSON(t *testing.T, data []byte) map[string]any {
	t.Helper()
	h, err := record.Decode("record", data)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(h.Predicate)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
