package accept

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// The evidence directory's layout: each node's run writes its raw outputs,
// run.json and its record into BASE/NODE/RUN-ID/.
const (
	// RecordFile is the signed record (a DSSE envelope) of a live run.
	RecordFile = "record.dsse.json"
	// StatementFile is the unsigned in-toto Statement of a run without a key.
	StatementFile = "statement.intoto.json"
	// OfflineRecordFile is the record of `accept --offline`, signed or not,
	// beside the evidence it re-judged.
	OfflineRecordFile = "record.offline.dsse.json"
)

// EvidenceDir returns the evidence directory of one node's run under base.
func EvidenceDir(base, node, runID string) string { return filepath.Join(base, node, runID) }

// Record is a written record.
type Record struct {
	// Path is the file the record was written to.
	Path string
	// Signed says whether it is a DSSE envelope (else an unsigned Statement).
	Signed bool
	// JSON is the record as one line of JSON, as `accept -o json` prints it.
	JSON []byte
}

// WriteRecord turns a run's result into its record and writes it: signed by
// signer as a DSSE envelope to path (default RecordFile in the run's
// evidence directory), or, without a signer, the unsigned Statement to path
// (default StatementFile there).
func WriteRecord(ctx context.Context, res *Result, signer dsse.Signer, path string) (*Record, error) {
	st, err := Statement(res.Predicate)
	if err != nil {
		return nil, err
	}
	var doc any
	rec := &Record{Path: path}
	if signer != nil {
		env, err := Sign(ctx, st, signer)
		if err != nil {
			return nil, fmt.Errorf("signing: %w", err)
		}
		if rec.Path == "" {
			rec.Path = filepath.Join(res.EvidenceDir, RecordFile)
		}
		if err := WriteEnvelope(rec.Path, env); err != nil {
			return nil, err
		}
		doc, rec.Signed = env, true
	} else {
		if rec.Path == "" {
			rec.Path = filepath.Join(res.EvidenceDir, StatementFile)
		}
		raw, err := StatementJSON(st)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(rec.Path, raw, 0o644); err != nil {
			return nil, err
		}
		doc = json.RawMessage(raw)
	}
	if rec.JSON, err = json.Marshal(doc); err != nil {
		return nil, err
	}
	return rec, nil
}
