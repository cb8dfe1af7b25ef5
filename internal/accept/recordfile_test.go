package accept

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuctl/gpuctl/internal/record"
)

// TestWriteRecord: with a key the record is a DSSE envelope in
// record.dsse.json of the evidence directory, without one the unsigned
// Statement in statement.intoto.json; an explicit path wins; the JSON line
// is the file's content.
func TestWriteRecord(t *testing.T) {
	h := newHarness(t, nil)
	res := run(t, h, succeed)
	ctx := context.Background()
	s, v := keyPair(t, record.KeyEd25519)

	rec, err := WriteRecord(ctx, res, s, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(h.plan.EvidenceDir, RecordFile); rec.Path != want || !rec.Signed {
		t.Errorf("signed record %s (signed %v), want %s", rec.Path, rec.Signed, want)
	}
	data, err := os.ReadFile(rec.Path)
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(compact.Bytes(), rec.JSON) || bytes.Contains(rec.JSON, []byte("\n")) {
		t.Errorf("JSON line is not the file's content:\n%s\n%s", rec.JSON, data)
	}
	if ver, err := record.Verify(ctx, data, v, h.plan.EvidenceDir); err != nil || !ver.OK() {
		t.Errorf("verify: %v %v", err, ver)
	}

	rec, err = WriteRecord(ctx, res, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(h.plan.EvidenceDir, StatementFile); rec.Path != want || rec.Signed {
		t.Errorf("unsigned record %s (signed %v), want %s", rec.Path, rec.Signed, want)
	}
	var st struct {
		PredicateType string `json:"predicateType"`
	}
	if err := json.Unmarshal(rec.JSON, &st); err != nil || st.PredicateType != record.PredicateType {
		t.Errorf("statement %s: %v", rec.JSON, err)
	}

	path := filepath.Join(t.TempDir(), "mine.json")
	if rec, err = WriteRecord(ctx, res, s, path); err != nil || rec.Path != path {
		t.Fatalf("record at %v: %v", rec, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
	if _, err := WriteRecord(ctx, res, nil, filepath.Join(t.TempDir(), "missing", "x.json")); err == nil {
		t.Error("no error for an unwritable path")
	}
}
