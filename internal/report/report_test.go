package report

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
)

func input(t *testing.T, path ...string) Input {
	t.Helper()
	p := filepath.Join(append([]string{"..", "accept", "testdata"}, path...)...)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return Input{Path: p, Data: data}
}

func testKey(t *testing.T) dsse.Verifier {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "accept", "testdata", "records", "test.pub"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := record.LoadSignerVerifier(data)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The signed fixtures (accept's runner on real 8x H100 outputs), verified.
func TestBuildVerifiedFleet(t *testing.T) {
	r, err := Build(context.Background(), []Input{input(t, "records", "h100-pass.dsse.json"), input(t, "records", "h100-nccl-fail.dsse.json")}, testKey(t))
	if err != nil {
		t.Fatal(err)
	}
	if !r.KeyChecked || r.Unverified != 0 || r.Fleet[diag.Pass] != 1 || r.Fleet[diag.Fail] != 1 || len(r.Nodes) != 2 {
		t.Fatalf("report: %+v", r)
	}
	pass, fail := r.Nodes[0], r.Nodes[1]
	if !pass.Verified || pass.KeyID == "" || pass.Name != "gpu-node-1" || pass.Verdict != diag.Pass || pass.FirstProblem != "" {
		t.Errorf("node 1: %+v", pass)
	}
	if fail.Name != "gpu-node-2" || fail.Verdict != diag.Fail || fail.FirstProblem == "" || fail.FirstProblem[:6] != "nccl: " {
		t.Errorf("node 2: verdict %s, first problem %q", fail.Verdict, fail.FirstProblem)
	}
	n := pass.NCCL
	if n == nil || !n.RowsRecorded || len(n.Points) != 4 || n.Baseline == nil || n.Baseline.MinGBps != 333 || n.Baseline.ExpectedGBps != 450 {
		t.Fatalf("nccl: %+v", n)
	}
	want := []struct {
		size  int64
		busbw float64
	}{{268435456, 420.42}, {536870912, 436.02}, {1073741824, 466.57}, {2147483648, 470.73}} // the better half of each row
	for i, w := range want {
		if p := n.Points[i]; p.SizeBytes != w.size || p.BusBandwidthGBps != w.busbw || p.OutOfPlace == nil || p.InPlace == nil {
			t.Errorf("point %d: %+v, want %d bytes %g GB/s", i, p, w.size, w.busbw)
		}
	}
	if fail.NCCL.Baseline.MinGBps != 480 {
		t.Errorf("node 2 baseline %+v", fail.NCCL.Baseline)
	}
	tp := pass.Topology
	if tp == nil || len(tp.Devices) != 16 {
		t.Fatalf("topology %+v", tp)
	}
	for _, c := range []struct {
		i, j  int
		class LinkClass
	}{{0, 0, LinkSelf}, {0, 1, LinkNVLink}, {0, 8, LinkPCIe}, {0, 10, LinkNUMA}, {0, 12, LinkSystem}} {
		if got := tp.Cells[c.i][c.j].Class; got != c.class {
			t.Errorf("%s-%s: %s (%s), want %s", tp.Devices[c.i], tp.Devices[c.j], got, tp.Cells[c.i][c.j].Link, c.class)
		}
	}
	if len(pass.GPUs) != 8 || len(pass.NodeFindings) != 0 {
		t.Fatalf("%d GPUs, node findings %v", len(pass.GPUs), pass.NodeFindings)
	}
	for _, g := range pass.GPUs {
		if len(g.Findings) == 0 || g.Worst != diag.SeverityWarning || g.UUID == "" || g.Serial == "" {
			t.Errorf("GPU %d: %+v (the corpus node has clock warnings on every GPU)", g.Index, g)
		}
		for _, f := range g.Findings {
			if normBus(f.GPU) != normBus(g.BusID) {
				t.Errorf("GPU %d (%s) has a finding of %s", g.Index, g.BusID, f.GPU)
			}
		}
	}
	if pass.EvidenceFiles == 0 || len(pass.Stages) != 9 { // the node stages; dcgm, network, framework and diagnostics SKIPPED
		t.Errorf("%d evidence files, %d stages", pass.EvidenceFiles, len(pass.Stages))
	}
}

// A record written before nccl.rows and topology existed reads unverified,
// without points and without a matrix; with a key, an unsigned statement
// is a node that did not verify (and shows nothing of its payload).
func TestBuildOldAndUnverified(t *testing.T) {
	old := input(t, "statement-healthy.json")
	r, err := Build(context.Background(), []Input{old}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := r.Nodes[0]
	if r.KeyChecked || n.Verified || !n.HasPredicate || n.NCCL == nil || n.NCCL.RowsRecorded || len(n.NCCL.Points) != 0 || n.Topology != nil {
		t.Errorf("old record: %+v", n)
	}
	r, err = Build(context.Background(), []Input{old, input(t, "records", "h100-pass.dsse.json")}, testKey(t))
	if err != nil {
		t.Fatal(err)
	}
	if r.Unverified != 1 || r.Nodes[0].HasPredicate || len(r.Nodes[0].Problems) == 0 || r.Fleet[diag.Pass] != 1 {
		t.Errorf("unsigned with a key: %+v", r)
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := Build(context.Background(), nil, nil); !errors.Is(err, ErrNoRecords) {
		t.Errorf("no inputs: %v", err)
	}
}

// A record that decoders would read differently, or that is no acceptance
// record, is a refused node (trust unverified, no predicate, the reason
// naming the member), with or without a key; the other records still show.
func TestBuildRefusesAmbiguousRecords(t *testing.T) {
	good := input(t, "records", "h100-pass.dsse.json")
	for _, verifier := range []dsse.Verifier{nil, testKey(t)} {
		bad := []Input{
			{Path: "dup.json", Data: []byte(`{"a": 1, "a": 2}`)},
			{Path: "case.json", Data: []byte(`{"payload": "e30=", "PAYLOAD": "e30=", "signatures": []}`)},
			{Path: "trailing.json", Data: append(append([]byte{}, good.Data...), []byte(`{}`)...)},
		}
		r, err := Build(context.Background(), append(bad, good), verifier)
		if err != nil {
			t.Fatal(err)
		}
		if r.Refused != 3 || len(r.Nodes) != 4 || r.Fleet[diag.Pass] != 1 {
			t.Fatalf("key %v: refused %d, %d nodes, fleet %v", verifier != nil, r.Refused, len(r.Nodes), r.Fleet)
		}
		for i, n := range r.Nodes[:3] {
			if !n.Refused || n.HasPredicate || n.Trust != TrustUnverified || len(n.Problems) != 1 || strings.HasPrefix(n.Problems[0], bad[i].Path) {
				t.Errorf("key %v: %s: %+v", verifier != nil, bad[i].Path, n)
			}
		}
		if p := r.Nodes[1].Problems[0]; !strings.Contains(p, `member "PAYLOAD" and "payload" differ only in case`) {
			t.Errorf("case variant: %q", p)
		}
		if want := map[bool]int{false: 0, true: 3}[verifier != nil]; r.Unverified != want {
			t.Errorf("key %v: %d unverified, want %d", verifier != nil, r.Unverified, want)
		}
	}
	// JSON that is no record: refused without a key; with one, an
	// envelope without a signature (unsigned, nothing shown).
	other := []Input{{Path: "other.json", Data: []byte(`{"hello": "world"}`)}}
	if r, err := Build(context.Background(), other, nil); err != nil || !r.Nodes[0].Refused {
		t.Errorf("no key: %v %+v", err, r)
	}
	if r, err := Build(context.Background(), other, testKey(t)); err != nil || r.Nodes[0].Trust != TrustUnsigned || r.Nodes[0].HasPredicate {
		t.Errorf("key: %v %+v", err, r)
	}
}

// The trust of each kind of record: a signed record verified with the key
// is verified (with the key's ID); without a key, or with a key that did
// not sign it, signed but unverified; a Statement is unsigned, also when
// it says PASS (a forged record looks no better than it is).
func TestBuildTrust(t *testing.T) {
	signed, unsigned := input(t, "records", "h100-pass.dsse.json"), input(t, "statement-healthy.json")
	other, err := record.LoadSignerVerifier(mustKey(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		verifier dsse.Verifier
		want     []Trust
	}{
		{"no key", nil, []Trust{TrustUnverified, TrustUnsigned}},
		{"the signer's key", testKey(t), []Trust{TrustVerified, TrustUnsigned}},
		{"another key", other, []Trust{TrustUnverified, TrustUnsigned}},
	} {
		r, err := Build(context.Background(), []Input{signed, unsigned}, c.verifier)
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range r.Nodes {
			if n.Trust != c.want[i] || n.Signed != (i == 0) || (n.Trust == TrustVerified) != (n.KeyID != "") {
				t.Errorf("%s: %s: trust %s, signed %v, key %q; want %s", c.name, n.Record, n.Trust, n.Signed, n.KeyID, c.want[i])
			}
		}
	}
}

func mustKey(t *testing.T) []byte {
	t.Helper()
	_, pub, err := record.GenerateKey(record.KeyEd25519)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// A record whose verdict is not what its stages give says so; one whose
// stages agree says nothing.
func TestBuildVerdictDisagreement(t *testing.T) {
	in := input(t, "statement-healthy.json")
	// The nccl stage FAILs under the record's PASS (its verdict follows
	// its name in the fixture).
	forged := string(in.Data)
	i := strings.Index(forged, `"name": "nccl"`)
	k := strings.Index(forged[max(i, 0):], `"verdict": "PASS"`)
	if i < 0 || k < 0 {
		t.Fatal("fixture layout changed")
	}
	forged = forged[:i+k] + `"verdict": "FAIL"` + forged[i+k+len(`"verdict": "PASS"`):]
	r, err := Build(context.Background(), []Input{in, {Path: "forged.json", Data: []byte(forged)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok, bad := r.Nodes[0], r.Nodes[1]
	if ok.Disagreement != "" || ok.StagesVerdict != diag.Pass {
		t.Errorf("healthy record: %q", ok.Disagreement)
	}
	if bad.Verdict != diag.Pass || bad.StagesVerdict != diag.Fail || r.Disagreeing != 1 ||
		bad.Disagreement != "the record says PASS, but its stages give FAIL (nccl FAIL)" {
		t.Errorf("forged record: verdict %s, stages %s: %q", bad.Verdict, bad.StagesVerdict, bad.Disagreement)
	}
}

// Build stops at a cancelled context with its error, without reading the
// rest: 600 records, cancelled after the first.
func TestBuildCancelled(t *testing.T) {
	in := input(t, "records", "h100-pass.dsse.json")
	inputs := make([]Input, 600)
	for i := range inputs {
		inputs[i] = in
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := Build(ctx, inputs, testKey(t)); !errors.Is(err, context.Canceled) {
		t.Errorf("%v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %s", d)
	}
}

func TestClassOf(t *testing.T) {
	for link, want := range map[string]LinkClass{"X": LinkSelf, "NV18": LinkNVLink, "NV2": LinkNVLink, "PIX": LinkPCIe, "PXB": LinkPCIe,
		"PHB": LinkHost, "NODE": LinkNUMA, "SYS": LinkSystem, "": LinkOther, "N/A": LinkOther, "SOC": LinkOther} {
		if got := ClassOf(link); got != want {
			t.Errorf("ClassOf(%q) = %s, want %s", link, got, want)
		}
	}
}

// A size printed twice is one point (its last row); points ascend by size.
func TestNCCLPointsOnePerSize(t *testing.T) {
	m := func(bw float64) *record.NCCLMeasurement { return &record.NCCLMeasurement{BusBandwidthGBps: bw} }
	n := ncclOf(&record.NCCLSummary{Rows: []record.NCCLRow{
		{SizeBytes: 1 << 30, OutOfPlace: m(100), InPlace: m(90)},
		{SizeBytes: 1 << 20, OutOfPlace: m(10)},
		{SizeBytes: 1 << 30, OutOfPlace: m(120), InPlace: m(130)},
	}})
	if len(n.Points) != 2 || n.Points[0].SizeBytes != 1<<20 || n.Points[1].BusBandwidthGBps != 130 || n.Points[0].InPlace != nil {
		t.Errorf("points %+v", n.Points)
	}
}

func TestNormBus(t *testing.T) {
	for in, want := range map[string]string{"0000:19:00.0": "00000000:19:00.0", "00000000:3B:00.0": "00000000:3b:00.0", "": ""} {
		if got := normBus(in); got != want {
			t.Errorf("normBus(%q) = %q, want %q", in, got, want)
		}
	}
}

// Devices without a matrix (or with only empty cells) are no topology:
// the page says so instead of drawing an empty grid.
func TestTopologyWithoutMatrix(t *testing.T) {
	devs := []string{"GPU0", "GPU1"}
	for _, tp := range []*record.Topology{{Devices: devs}, {Devices: devs, Matrix: [][]string{{}, {"", " "}}}} {
		if got := topologyOf(tp); got != nil {
			t.Errorf("topologyOf(%+v) = %+v, want nil", tp, got)
		}
	}
	if got := topologyOf(&record.Topology{Devices: devs, Matrix: [][]string{{"X", "NV18"}}}); got == nil || got.Cells[0][1].Class != LinkNVLink || got.Cells[1][1].Link != "" {
		t.Errorf("a partial matrix: %+v", got)
	}
}

// A record that PASSes with regressions since the node's previous record
// (accept's h100-regressed-multi fixture: busbw 20 % lower, new clock
// warnings on each of 8 GPUs) carries all of them in the record's order,
// one per GPU, and its nccl-multi stage with the busbw and group its facts
// give; a record without nccl-multi has none, and one whose stage has no
// facts (written before gpuctl kept them) shows the verdict and reason only.
func TestBuildRegressionsAndNCCLMulti(t *testing.T) {
	r, err := Build(context.Background(), []Input{input(t, "records", "h100-pass.dsse.json"), input(t, "records", "h100-regressed-multi.dsse.json")}, testKey(t))
	if err != nil {
		t.Fatal(err)
	}
	pass, reg := r.Nodes[0], r.Nodes[1]
	if len(pass.Regressions) != 0 || pass.NCCLMulti != nil || pass.Previous != "" {
		t.Errorf("h100-pass: regressions %v, nccl-multi %+v, previous %q", pass.Regressions, pass.NCCLMulti, pass.Previous)
	}
	if !reg.Verified || reg.Verdict != diag.Pass || reg.FirstProblem != "" || reg.Previous != "20261128t120000-9f3c (PASS)" {
		t.Fatalf("regressed node: verified %v, %s, first problem %q, previous %q", reg.Verified, reg.Verdict, reg.FirstProblem, reg.Previous)
	}
	if len(reg.Regressions) != 9 || !strings.HasPrefix(reg.Regressions[0], "busbw-dropped: NCCL busbw 376.6 GB/s is 20 % below the previous run's 470.7 GB/s") {
		t.Fatalf("regressions (%d): %v", len(reg.Regressions), reg.Regressions)
	}
	for i, g := range reg.GPUs {
		want := "gpu-health-new: 2 new GPU health findings on GPU " + strconv.Itoa(i) + " (UUID " + g.UUID + ", serial " + g.Serial + ", bus " + g.BusID + "): "
		if !strings.HasPrefix(reg.Regressions[i+1], want) {
			t.Errorf("regression %d: %q, want it to start %q", i+1, reg.Regressions[i+1], want)
		}
	}
	m := reg.NCCLMulti
	if m == nil {
		t.Fatal("no nccl-multi")
	}
	want := Multi{Verdict: diag.Pass, Cause: "node", Reason: m.Reason, BusBandwidthGBps: 222.88, LargestBytes: 10 << 30, Group: "20261129t120000-abcd-m0",
		Transport: "GPUDirectTCPX_v7", Groups: []string{"20261129t120000-abcd-m0"}, Peers: []string{"gpu-node-5"}, Nodes: 2}
	if !reflect.DeepEqual(*m, want) || !strings.Contains(m.Reason, "across gpu-node-4, gpu-node-5 meets the tcpx multi-node minimum") {
		t.Errorf("nccl-multi %+v\nwant %+v", *m, want)
	}
	old := multiOf(record.StageResult{Name: stageNCCLMulti, Verdict: diag.Fail, Cause: "node", Reason: "busbw 40.0 GB/s at 8 GiB across a, b is below the tcpx multi-node minimum 80 GB/s"})
	if old.Verdict != diag.Fail || old.Reason == "" || old.BusBandwidthGBps != 0 || old.Groups != nil || old.Peers != nil || old.Nodes != 0 {
		t.Errorf("a stage without facts: %+v", old)
	}
}
