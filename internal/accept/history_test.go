package accept

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
)

// fixturePredicate is the predicate of the healthy 8-GPU fixture record.
func fixturePredicate(t *testing.T) *record.File {
	t.Helper()
	h, err := record.ReadFile(filepath.Join("testdata", "statement-healthy.json"))
	if err != nil {
		t.Fatal(err)
	}
	if h.Predicate.NCCL == nil || h.Predicate.NCCL.BusBandwidthGBps == 0 || h.Predicate.Driver.Version == "" {
		t.Fatalf("fixture lacks busbw or driver: %+v", h.Predicate)
	}
	return h
}

// secondRun is the fixture's node a day later.
func secondRun(t *testing.T) *Predicate {
	p := *fixturePredicate(t).Predicate
	n := *p.NCCL
	p.NCCL = &n
	p.Hardware.UUIDs = slices.Clone(p.Hardware.UUIDs)
	p.Hardware.VBIOS = slices.Clone(p.Hardware.VBIOS)
	p.RunID = "20261130t120000-beef"
	p.Started, p.Finished = p.Started.Add(24*time.Hour), p.Finished.Add(24*time.Hour)
	return &p
}

func kinds(rs []Regression) []string {
	var k []string
	for _, r := range rs {
		k = append(k, r.Kind)
	}
	return k
}

func TestRegressionsSameRunNone(t *testing.T) {
	prev := fixturePredicate(t)
	cur := secondRun(t)
	cur.NCCL.BusBandwidthGBps = prev.Predicate.NCCL.BusBandwidthGBps * 0.91 // within 10 %
	LinkPrevious(cur, prev)
	if len(cur.Regressions) != 0 {
		t.Errorf("regressions %v, want none", cur.Regressions)
	}
	if cur.Previous == nil || cur.Previous.RunID != prev.Predicate.RunID || cur.Previous.Digest != prev.Digest || cur.Previous.Verdict != diag.Pass {
		t.Errorf("previous %+v, want run %s digest %s PASS", cur.Previous, prev.Predicate.RunID, prev.Digest)
	}
	data, _ := os.ReadFile(filepath.Join("testdata", "statement-healthy.json"))
	if prev.Digest != record.Digest(data) || !strings.HasPrefix(prev.Digest, "sha256:") {
		t.Errorf("digest %s is not the file's sha256", prev.Digest)
	}
}

func TestRegressionsLowerBusBW(t *testing.T) {
	prev := fixturePredicate(t)
	cur := secondRun(t)
	cur.NCCL.BusBandwidthGBps = 400 // 470.7 before: 15 % lower
	LinkPrevious(cur, prev)
	if got := kinds(cur.Regressions); !slices.Equal(got, []string{RegressionBusBW}) {
		t.Fatalf("regressions %v, want [%s]", cur.Regressions, RegressionBusBW)
	}
	if m := cur.Regressions[0].Message; !strings.Contains(m, "400.0") || !strings.Contains(m, "470.7") {
		t.Errorf("message %q does not name both bandwidths", m)
	}
}

func TestRegressionsHealthDriverFirmwareIdentity(t *testing.T) {
	prev := fixturePredicate(t)
	cur := secondRun(t)
	// The fixture's VBIOS versions are unknown (""), which is no change.
	for i := range cur.Hardware.VBIOS {
		cur.Hardware.VBIOS[i] = "96.00.74.00.0D"
	}
	if got := Regressions(prev.Predicate, cur); len(got) != 0 {
		t.Fatalf("an unknown VBIOS before is no change: %v", got)
	}
	prevPred := *prev.Predicate
	prevPred.Hardware.VBIOS = slices.Clone(cur.Hardware.VBIOS)
	prev.Predicate = &prevPred
	cur.GPUHealth = append(cur.GPUHealth, diag.Finding{Rule: "row-remap-pending", Severity: diag.SeverityError, Message: "GPU 3: a row remap is pending"})
	cur.Driver.Version = "550.54.15"
	cur.Hardware.VBIOS[0] = "96.00.99.00.01"
	cur.Hardware.UUIDs[2] = "GPU-swapped"
	LinkPrevious(cur, prev)
	got := kinds(cur.Regressions)
	for _, k := range []string{RegressionHealth, RegressionDriver, RegressionFirmware, RegressionGPUIdentity} {
		if !slices.Contains(got, k) {
			t.Errorf("regressions %v lack %s", got, k)
		}
	}
	if n := strings.Count(strings.Join(got, " "), RegressionGPUIdentity); n != 1 {
		t.Errorf("%d %s regressions, want 1", n, RegressionGPUIdentity)
	}
	if cur.Previous == nil {
		t.Error("a swapped GPU must still link the previous record")
	}
}

func TestFindPreviousAndVerifyChain(t *testing.T) {
	dir := t.TempDir()
	s, v := keyPair(t, "ed25519")
	write := func(p *Predicate) string {
		evd := EvidenceDir(dir, p.Node.Name, p.RunID)
		if err := os.MkdirAll(evd, 0o755); err != nil {
			t.Fatal(err)
		}
		rec, err := WriteRecord(context.Background(), &Result{Predicate: p, EvidenceDir: evd}, s, "")
		if err != nil {
			t.Fatal(err)
		}
		return rec.Path
	}
	first := fixturePredicate(t).Predicate
	old := *first
	old.RunID, old.Started, old.Finished = "20261120t120000-0001", first.Started.Add(-240*time.Hour), first.Finished.Add(-240*time.Hour)
	write(&old)
	firstPath := write(first)
	cur := secondRun(t)
	cur.NCCL.BusBandwidthGBps = 300
	if err := os.MkdirAll(EvidenceDir(dir, cur.Node.Name, cur.RunID), 0o755); err != nil {
		t.Fatal(err)
	}
	prev, err := FindPrevious(dir, cur.Node.Name, cur.RunID, cur.Started)
	if err != nil || prev == nil {
		t.Fatalf("FindPrevious: %v, %v", prev, err)
	}
	if prev.Path != firstPath {
		t.Fatalf("found %s, want the newest earlier record %s", prev.Path, firstPath)
	}
	LinkPrevious(cur, prev)
	curPath := write(cur)
	if none, _ := FindPrevious(dir, cur.Node.Name, old.RunID, old.Started); none != nil {
		t.Errorf("nothing finished before the oldest run, found %s", none.Path)
	}
	if other, _ := FindPrevious(dir, "other-node", cur.RunID, cur.Started); other != nil {
		t.Errorf("another node's history found %s", other.Path)
	}

	data, _ := os.ReadFile(curPath)
	ver, err := record.Verify(context.Background(), data, v, "")
	if err != nil || !ver.OK() {
		t.Fatalf("verify: %v %v", err, ver.Problems)
	}
	if kinds(ver.Predicate.Regressions)[0] != RegressionBusBW {
		t.Errorf("signed record's regressions %v", ver.Predicate.Regressions)
	}
	firstData, _ := os.ReadFile(firstPath)
	if p := CheckPrevious(ver.Predicate, record.Digest(firstData)); p != nil {
		t.Errorf("chain to the previous record: %v", p)
	}
	oldData, _ := os.ReadFile(filepath.Join(EvidenceDir(dir, old.Node.Name, old.RunID), RecordFile))
	if p := CheckPrevious(ver.Predicate, record.Digest(oldData)); len(p) != 1 {
		t.Errorf("chain to a record that is not the previous: %v, want one problem", p)
	}
	if p := CheckPrevious(first, record.Digest(oldData)); len(p) != 1 {
		t.Errorf("a record without previous: %v, want one problem", p)
	}
}

// TestReadRecordFileRefusesDuplicateMembers: history reads records with the
// same guard as verify, so the two never see different records in one file.
func TestReadRecordFileRefusesDuplicateMembers(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "record.dsse.json")
	if err := os.WriteFile(path, []byte(`{"payloadType":"a","payload":"e30=","payload":"e30="}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := record.ReadFile(path); !errors.Is(err, record.ErrRecordFormat) {
		t.Errorf("a record with a member twice: %v, want record.ErrRecordFormat", err)
	}
}

// TestNoIdentityRegressionWithoutGPUs: a run that read no GPU identities
// (no inventory stage) is not "hardware was swapped" against a previous
// full run, nor a full run against one that read none.
func TestNoIdentityRegressionWithoutGPUs(t *testing.T) {
	prev := fixturePredicate(t)
	cur := secondRun(t)
	cur.Hardware.UUIDs, cur.Hardware.Serials = nil, nil
	LinkPrevious(cur, prev)
	if slices.Contains(kinds(cur.Regressions), RegressionGPUIdentity) {
		t.Errorf("a run without GPU identities: %v", cur.Regressions)
	}
	cur = secondRun(t)
	prev.Subject = record.HardwareDigest(nil, nil)
	LinkPrevious(cur, prev)
	if slices.Contains(kinds(cur.Regressions), RegressionGPUIdentity) {
		t.Errorf("a previous run without GPU identities: %v", cur.Regressions)
	}
}

// h100Predicate is the predicate of the signed 8x H100 fixture record
// (testdata/records/h100-pass.dsse.json): 8 GPUs with UUIDs, serials and
// bus IDs, and two clock-slowdown warnings on each (16 findings).
func h100Predicate(t *testing.T) *Predicate {
	t.Helper()
	h, err := record.ReadFile(filepath.Join("testdata", "records", "h100-pass.dsse.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Predicate.GPUHealth) != 16 || len(h.Predicate.Hardware.UUIDs) != 8 {
		t.Fatalf("fixture has %d findings, %d UUIDs; want 16 and 8", len(h.Predicate.GPUHealth), len(h.Predicate.Hardware.UUIDs))
	}
	return h.Predicate
}

// TestHealthRegressionsNamePerGPU: the 16 findings of 8 GPUs that the
// previous record did not have are 8 regressions, one per GPU in
// nvidia-smi's order, each naming the GPU by index, UUID, serial and bus ID
// and listing its two findings once (a finding repeated is listed once).
func TestHealthRegressionsNamePerGPU(t *testing.T) {
	cur := h100Predicate(t)
	prev := *cur
	prev.GPUHealth = nil
	cur.GPUHealth = append(cur.GPUHealth, cur.GPUHealth[1]) // GPU 0's second finding twice
	got := healthRegressions(&prev, cur)
	if len(got) != 8 {
		t.Fatalf("%d regressions, want 8 (one per GPU):\n%v", len(got), got)
	}
	hw := cur.Hardware
	for i, r := range got {
		want := "2 new GPU health findings on GPU " + strconv.Itoa(i) + " (UUID " + hw.UUIDs[i] + ", serial " + hw.Serials[i] + ", bus " + hw.BusIDs[i] + "): " +
			"clocks-hw-slowdown: clocks are held down by the hardware (hw_power_brake_slowdown); clocks-hw-slowdown: clocks are held down by the hardware (hw_slowdown)"
		if r.Kind != RegressionHealth || r.Message != want {
			t.Errorf("regression %d:\n%s: %s\nwant\n%s", i, r.Kind, r.Message, want)
		}
	}
	// Deterministic: the findings in another order give the same lines.
	slices.Reverse(cur.GPUHealth)
	if again := healthRegressions(&prev, cur); !slices.Equal(again, got) {
		t.Errorf("findings reversed give other regressions:\n%v\nwant\n%v", again, got)
	}
}

// TestHealthRegressionsPerGPUIdentity: a finding is new for a GPU that did
// not have it, even when another GPU had it (the old comparison by rule
// and message hid it), and for a GPU swapped in at the same bus ID (another
// UUID); a previous finding that named no GPU covers every GPU. Findings of
// a GPU the hardware does not list and of the node come after the listed
// GPUs, named as given.
func TestHealthRegressionsPerGPUIdentity(t *testing.T) {
	cur := h100Predicate(t)
	prev := *cur
	prev.Hardware.UUIDs = slices.Clone(cur.Hardware.UUIDs)
	prev.GPUHealth = slices.Clone(cur.GPUHealth[:2]) // GPU 0's two findings only
	cur.Hardware.UUIDs = slices.Clone(cur.Hardware.UUIDs)
	prev.GPUHealth = append(prev.GPUHealth, cur.GPUHealth[4:6]...) // and GPU 2's
	cur.Hardware.UUIDs[2] = "GPU-swapped-in"
	cur.GPUHealth = append(cur.GPUHealth,
		diag.Finding{Rule: "xid", Severity: diag.SeverityError, Message: "Xid 79: fallen off the bus", GPU: "0000:E1:00.0"},
		diag.Finding{Rule: "driver-error", Severity: diag.SeverityError, Message: "NVRM: API mismatch"})
	got := healthRegressions(&prev, cur)
	var gpus []string
	for _, r := range got {
		_, after, _ := strings.Cut(r.Message, " on ")
		gpus = append(gpus, strings.SplitN(after, " (", 2)[0])
	}
	want := []string{"GPU 1", "GPU 2", "GPU 3", "GPU 4", "GPU 5", "GPU 6", "GPU 7", "GPU 0000:E1:00.0", "the node"}
	if !slices.Equal(gpus, want) {
		t.Fatalf("regressions name %v, want %v:\n%v", gpus, want, got)
	}
	if !strings.Contains(got[1].Message, "UUID GPU-swapped-in, serial 1320000000003") {
		t.Errorf("the swapped GPU: %s", got[1].Message)
	}
	if m := got[7].Message; m != "new GPU health finding on GPU 0000:E1:00.0 (not in the record's hardware): xid: Xid 79: fallen off the bus" {
		t.Errorf("unlisted GPU: %s", m)
	}
	// An older previous record whose findings named no GPU: nothing new.
	prev.GPUHealth = slices.Clone(h100Predicate(t).GPUHealth)
	for i := range prev.GPUHealth {
		prev.GPUHealth[i].GPU = ""
	}
	if got := healthRegressions(&prev, h100Predicate(t)); len(got) != 0 {
		t.Errorf("findings the previous record had without a GPU: %v, want none", got)
	}
}
