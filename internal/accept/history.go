package accept

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	intoto "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// PreviousRecord links a record to the node's previous record: its run, the
// sha256 of the previous record's file ("sha256:HEX") and its verdict.
type PreviousRecord struct {
	RunID   string       `json:"runID"`
	Digest  string       `json:"digest"`
	Verdict diag.Verdict `json:"verdict"`
}

// Regression is something that got worse since the previous record.
type Regression struct {
	// Kind is a stable ID: busbw-dropped, gpu-health-new, driver-changed,
	// firmware-changed, gpu-identity-changed.
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// The kinds of Regression.
const (
	RegressionBusBW       = "busbw-dropped"
	RegressionHealth      = "gpu-health-new"
	RegressionDriver      = "driver-changed"
	RegressionFirmware    = "firmware-changed"
	RegressionGPUIdentity = "gpu-identity-changed"
)

// BusBWDropFraction is how far busbw may fall below the previous record's
// before it is a regression (10 %).
const BusBWDropFraction = 0.10

// HistoryRecord is a previous record found in the history directory.
type HistoryRecord struct {
	Path    string
	Digest  string // "sha256:HEX" of the file
	Subject string // the subject's hardware digest
	// SubjectName is the subject's name ("node/NAME" as accept writes it).
	SubjectName string
	Predicate   *Predicate
}

// RecordDigest returns "sha256:HEX" of a record file's bytes, the form a
// record's previous.digest takes.
func RecordDigest(data []byte) string {
	return "sha256:" + evidenceOf("", data).SHA256
}

// ReadRecordFile reads a record file, a DSSE envelope or an unsigned
// Statement, without checking its signature (verify does that), and
// returns its predicate and subject digest.
func ReadRecordFile(path string) (*HistoryRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return DecodeRecord(path, data)
}

// DecodeRecord decodes the bytes of a record file read from path (which
// only names it in errors) as ReadRecordFile does: with verify's guards
// (size cap, no JSON member twice) and without checking the signature.
// Errors wrap ErrRecordFormat.
func DecodeRecord(path string, data []byte) (*HistoryRecord, error) {
	var err error
	if len(data) > MaxRecordBytes {
		return nil, fmt.Errorf("%s: %w: larger than %d MiB", path, ErrRecordFormat, MaxRecordBytes>>20)
	}
	// A member twice would let history and verify read two records.
	if err := noDuplicateMembers(data); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrRecordFormat, err)
	}
	payload := data
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
	}
	if json.Unmarshal(data, &env) == nil && env.Payload != "" {
		if payload, err = base64.StdEncoding.DecodeString(env.Payload); err != nil {
			return nil, fmt.Errorf("%s: %w: payload: %v", path, ErrRecordFormat, err)
		}
		if err := noDuplicateMembers(payload); err != nil {
			return nil, fmt.Errorf("%s: %w: payload: %v", path, ErrRecordFormat, err)
		}
	}
	var st intoto.Statement
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(payload, &st); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrRecordFormat, err)
	}
	if st.PredicateType != PredicateType || st.Predicate == nil || len(st.Subject) != 1 {
		return nil, fmt.Errorf("%s: %w: not a gpuctl acceptance statement", path, ErrRecordFormat)
	}
	p, err := predicateOf(&st)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: predicate: %v", path, ErrRecordFormat, err)
	}
	return &HistoryRecord{Path: path, Digest: RecordDigest(data), Subject: st.Subject[0].Digest["sha256"], SubjectName: st.Subject[0].Name, Predicate: p}, nil
}

// FindPrevious returns the node's newest record under dir
// (dir/NODE/RUN-ID/record.dsse.json, else statement.intoto.json there) that
// finished before before and is not of run runID; nil when there is none.
// Records that cannot be read are skipped.
func FindPrevious(dir, node, runID string, before time.Time) (*HistoryRecord, error) {
	runs, err := os.ReadDir(filepath.Join(dir, node))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var best *HistoryRecord
	for _, r := range runs {
		if !r.IsDir() || r.Name() == runID {
			continue
		}
		for _, name := range []string{RecordFile, StatementFile} {
			h, err := ReadRecordFile(filepath.Join(dir, node, r.Name(), name))
			if err != nil {
				continue
			}
			p := h.Predicate
			if p.Node.Name != node || p.RunID == runID || !p.Finished.Before(before) {
				break
			}
			if best == nil || p.Finished.After(best.Predicate.Finished) {
				best = h
			}
			break
		}
	}
	return best, nil
}

// LinkPrevious sets cur's previous link to prev and its regressions
// against it. A prev of nil leaves cur as it is.
func LinkPrevious(cur *Predicate, prev *HistoryRecord) {
	if prev == nil {
		return
	}
	cur.Previous = &PreviousRecord{RunID: prev.Predicate.RunID, Digest: prev.Digest, Verdict: prev.Predicate.Verdict}
	cur.Regressions = Regressions(prev.Predicate, cur)
	if d := HardwareDigest(cur.Hardware.UUIDs, cur.Hardware.Serials); prev.Subject != "" && prev.Subject != d {
		if !slices.ContainsFunc(cur.Regressions, func(r Regression) bool { return r.Kind == RegressionGPUIdentity }) {
			cur.Regressions = append(cur.Regressions, Regression{Kind: RegressionGPUIdentity,
				Message: "the GPUs' identity (UUIDs and serials) differs from the previous record: hardware was swapped"})
		}
	}
}

// Regressions compares a run with the node's previous one: busbw more than
// BusBWDropFraction below, GPU health findings the previous did not have,
// a driver, VBIOS or InfoROM change, and GPU UUIDs or serials that changed.
func Regressions(prev, cur *Predicate) []Regression {
	var out []Regression
	for _, kind := range []func(prev, cur *Predicate) []Regression{identityRegressions, busBWRegressions, healthRegressions, driverRegressions, firmwareRegressions} {
		out = append(out, kind(prev, cur)...)
	}
	return out
}

// identityRegressions: GPU UUIDs or serials that changed (hardware swapped).
func identityRegressions(prev, cur *Predicate) []Regression {
	uu, ss := diffSet(prev.Hardware.UUIDs, cur.Hardware.UUIDs), diffSet(prev.Hardware.Serials, cur.Hardware.Serials)
	if uu == "" && ss == "" {
		return nil
	}
	msg := "the GPUs differ from the previous record (hardware swapped):"
	if uu != "" {
		msg += " UUIDs " + uu
	}
	if ss != "" {
		msg += " serials " + ss
	}
	return []Regression{{Kind: RegressionGPUIdentity, Message: msg}}
}

// busBWRegressions: an NCCL busbw more than BusBWDropFraction below the
// previous run's (both measured).
func busBWRegressions(prev, cur *Predicate) []Regression {
	if prev.NCCL == nil || cur.NCCL == nil || prev.NCCL.BusBandwidthGBps <= 0 || cur.NCCL.BusBandwidthGBps <= 0 ||
		cur.NCCL.BusBandwidthGBps >= prev.NCCL.BusBandwidthGBps*(1-BusBWDropFraction) {
		return nil
	}
	drop := 100 * (1 - cur.NCCL.BusBandwidthGBps/prev.NCCL.BusBandwidthGBps)
	return []Regression{{Kind: RegressionBusBW, Message: fmt.Sprintf("NCCL busbw %.1f GB/s is %.0f %% below the previous run's %.1f GB/s (more than %.0f %%)",
		cur.NCCL.BusBandwidthGBps, drop, prev.NCCL.BusBandwidthGBps, 100*BusBWDropFraction)}}
}

// healthRegressions: GPU health findings (rule and message) the previous
// record did not have.
func healthRegressions(prev, cur *Predicate) []Regression {
	var out []Regression
	seen := map[string]bool{}
	for _, f := range prev.GPUHealth {
		seen[f.Rule+"\x00"+f.Message] = true
	}
	for _, f := range cur.GPUHealth {
		if !seen[f.Rule+"\x00"+f.Message] {
			out = append(out, Regression{Kind: RegressionHealth, Message: fmt.Sprintf("new GPU health finding %s: %s", f.Rule, f.Message)})
		}
	}
	return out
}

// driverRegressions: a driver version other than the previous run's.
func driverRegressions(prev, cur *Predicate) []Regression {
	if prev.Driver.Version == "" || cur.Driver.Version == "" || prev.Driver.Version == cur.Driver.Version {
		return nil
	}
	return []Regression{{Kind: RegressionDriver, Message: fmt.Sprintf("driver %s, the previous run had %s", cur.Driver.Version, prev.Driver.Version)}}
}

// firmwareRegressions: VBIOS or InfoROM versions that changed.
func firmwareRegressions(prev, cur *Predicate) []Regression {
	var out []Regression
	for _, fw := range []struct {
		name      string
		prev, cur []string
	}{{"VBIOS", prev.Hardware.VBIOS, cur.Hardware.VBIOS}, {"InfoROM", prev.Hardware.InfoROM, cur.Hardware.InfoROM}} {
		if d := diffSet(fw.prev, fw.cur); d != "" {
			out = append(out, Regression{Kind: RegressionFirmware, Message: fmt.Sprintf("%s changed: %s", fw.name, d)})
		}
	}
	return out
}

// diffSet describes how the non-empty values of cur differ from prev
// ("A -> B"), or "" when they are the same set (or either has none).
func diffSet(prev, cur []string) string {
	p, c := nonEmptySorted(prev), nonEmptySorted(cur)
	if len(p) == 0 || len(c) == 0 || slices.Equal(p, c) {
		return ""
	}
	var gone, added []string
	for _, v := range p {
		if !slices.Contains(c, v) {
			gone = append(gone, v)
		}
	}
	for _, v := range c {
		if !slices.Contains(p, v) {
			added = append(added, v)
		}
	}
	if len(gone) == 0 && len(added) == 0 {
		return ""
	}
	return strings.Join(gone, ",") + " -> " + strings.Join(added, ",")
}

func nonEmptySorted(v []string) []string {
	var out []string
	for _, s := range v {
		if s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// CheckPrevious returns a problem when the record p does not link the
// previous record whose file has digest ("sha256:HEX").
func CheckPrevious(p *Predicate, digest string) []string {
	switch {
	case p.Previous == nil:
		return []string{"previous: the record links no previous record"}
	case p.Previous.Digest != digest:
		return []string{fmt.Sprintf("previous: the record links %s (run %s), the given previous record is %s", p.Previous.Digest, p.Previous.RunID, digest)}
	}
	return nil
}
