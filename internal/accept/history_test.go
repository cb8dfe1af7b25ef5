package accept

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
