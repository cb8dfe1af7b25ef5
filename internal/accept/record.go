package accept

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// The record's types.
const (
	// PredicateType identifies gpuctl's acceptance predicate.
	PredicateType = "https://gpuctl.dev/acceptance/v1"
	// PayloadType is the DSSE payload type of an in-toto Statement.
	PayloadType = "application/vnd.in-toto+json"
	// PredicateFormatVersion is the version of the Predicate layout.
	PredicateFormatVersion = "1"
)

// Predicate is the acceptance record: the fields of a node acceptance
// record. JSON names are a contract.
type Predicate struct {
	FormatVersion string       `json:"formatVersion"`
	RunID         string       `json:"runID"`
	Verdict       diag.Verdict `json:"verdict"`
	Started       time.Time    `json:"started"`
	Finished      time.Time    `json:"finished"`
	Node          NodeFacts    `json:"node"`
	Hardware      Hardware     `json:"hardware"`
	Driver        DriverInfo   `json:"driver"`
	// GPUHealth lists the probe findings (warnings and errors) of inventory.
	GPUHealth    []diag.Finding `json:"gpuHealth"`
	Interconnect Interconnect   `json:"interconnect"`
	// Topology is topo -m's whole GPU/NIC matrix; nil when the topology
	// stage did not read one (and in records written before gpuctl kept it).
	Topology     *Topology         `json:"topology,omitempty"`
	NCCL         *NCCLResult       `json:"nccl"`
	DCGM         *StageSummary     `json:"dcgm"`
	Expectations Expectations      `json:"expectations"`
	Thresholds   Thresholds        `json:"thresholds"`
	Images       map[string]string `json:"images"`
	Stages       []StageResult     `json:"stages"`
	Gpuctl       Tool              `json:"gpuctl"`
	// Rejudged is set on a record made by `gpuctl accept --offline` from
	// saved evidence; nil on the record of a live run.
	Rejudged *Rejudged `json:"rejudged,omitempty"`
	// Previous links the node's previous record (accept --history); nil
	// when there was none.
	Previous *PreviousRecord `json:"previous,omitempty"`
	// Regressions is what got worse since the previous record.
	Regressions []Regression `json:"regressions,omitempty"`
}

// Rejudged says that a record was re-judged offline from saved evidence,
// when, and that every evidence file still had the sha256 the live run
// recorded for it in run.json.
type Rejudged struct {
	At time.Time `json:"at"`
	// EvidenceUnchanged is true when every evidence file matched the live
	// run's hashes (Rejudge refuses evidence that does not).
	EvidenceUnchanged bool `json:"evidenceUnchanged"`
}

// Hardware identifies the GPUs. UUIDs, Serials, VBIOS and InfoROM are per GPU
// in nvidia-smi's order.
type Hardware struct {
	GPUProduct string   `json:"gpuProduct"`
	GPUCount   int      `json:"gpuCount"`
	UUIDs      []string `json:"uuids"`
	Serials    []string `json:"serials"`
	VBIOS      []string `json:"vbios"`
	InfoROM    []string `json:"inforom"`
	BusIDs     []string `json:"busIDs"`
}

// DriverInfo is the node's driver and the highest CUDA it supports.
type DriverInfo struct {
	Version string `json:"version"`
	CUDA    string `json:"cuda"`
}

// Interconnect records PCIe links per GPU, the GPU link classes and NICs.
type Interconnect struct {
	PCIe        []string          `json:"pcie"`
	GPULinks    []string          `json:"gpuLinks"`
	NICs        []string          `json:"nics"`
	NUMA        map[string]string `json:"numa"`
	CPUAffinity map[string]string `json:"cpuAffinity"`
}

// NCCLResult is the nccl stage's measurement and the baseline used (nil when
// no baseline applied).
type NCCLResult struct {
	Verdict          diag.Verdict `json:"verdict"`
	BusBandwidthGBps float64      `json:"busBandwidthGBps"`
	LargestBytes     int64        `json:"largestBytes"`
	Wrong            int          `json:"wrong"`
	Baseline         *Baseline    `json:"baseline"`
	BaselineOrigin   string       `json:"baselineOrigin,omitempty"`
	// Rows are all_reduce_perf's results, one per message size in the
	// output's order; absent when the output had none (and in records
	// written before gpuctl kept them).
	Rows []NCCLRow `json:"rows,omitempty"`
}

// NCCLRow is one message size of the nccl stage: its out-of-place and
// in-place results (nil where the output has no such half).
type NCCLRow struct {
	SizeBytes  int64            `json:"sizeBytes"`
	Count      int64            `json:"count"`
	Type       string           `json:"type"`
	OutOfPlace *NCCLMeasurement `json:"outOfPlace"`
	InPlace    *NCCLMeasurement `json:"inPlace"`
}

// NCCLMeasurement is one half of an NCCLRow: time in µs (omitted where the
// output does not give it), algorithm and bus bandwidth in GB/s (10^9
// bytes per second), and the validation value (wrong elements, or the
// largest error in old layouts; null when validation was off).
type NCCLMeasurement struct {
	TimeUs    float64  `json:"timeUs,omitempty"`
	AlgbwGBps float64  `json:"algbwGBps"`
	BusbwGBps float64  `json:"busbwGBps"`
	Wrong     *float64 `json:"wrong"`
}

// Topology is nvidia-smi topo -m's matrix: Devices are its GPU then NIC
// columns in nvidia-smi's order ("GPU0", ..., "NIC0"), Matrix[i][j] the link
// between Devices[i] and Devices[j] as printed ("X" itself, "NV18", "PIX",
// "PXB", "PHB", "NODE", "SYS"; "" where the output had no such row), and
// NICNames the device of each NIC column the legend names ("NIC0" ->
// "mlx5_0").
type Topology struct {
	Devices  []string          `json:"devices"`
	Matrix   [][]string        `json:"matrix"`
	NICNames map[string]string `json:"nicNames"`
}

// StageSummary is a stage's verdict and reason.
type StageSummary struct {
	Verdict diag.Verdict `json:"verdict"`
	Reason  string       `json:"reason"`
}

// Thresholds are the limits the run used.
type Thresholds struct {
	StageTimeoutSeconds int64  `json:"stageTimeoutSeconds"`
	RunTimeoutSeconds   int64  `json:"runTimeoutSeconds"`
	NCCLMaxBytes        string `json:"ncclMaxBytes"`
	DCGMLevel           int    `json:"dcgmLevel,omitempty"`
	Baselines           string `json:"baselines"`
	BaselinesAsOf       string `json:"baselinesAsOf"`
}

// Tool identifies the gpuctl that made the record.
type Tool struct {
	Version string `json:"version"`
}

// HardwareDigest returns the subject digest that binds a record to the
// hardware: sha256 (lowercase hex) over the lines "UUID SERIAL\n", one per
// GPU, sorted. With no GPUs it is the sha256 of the empty string.
func HardwareDigest(uuids, serials []string) string {
	lines := make([]string, len(uuids))
	for i, u := range uuids {
		s := ""
		if i < len(serials) {
			s = serials[i]
		}
		lines[i] = u + " " + s + "\n"
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	return hex.EncodeToString(sum[:])
}

// Statement wraps the predicate in an in-toto Statement v1 whose subject is
// node/NAME with the hardware digest.
func Statement(p *Predicate) (*intoto.Statement, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	pred, err := structpb.NewStruct(m)
	if err != nil {
		return nil, err
	}
	st := &intoto.Statement{
		Type: intoto.StatementTypeUri,
		Subject: []*intoto.ResourceDescriptor{{
			Name:   "node/" + p.Node.Name,
			Digest: map[string]string{"sha256": HardwareDigest(p.Hardware.UUIDs, p.Hardware.Serials)},
		}},
		PredicateType: PredicateType,
		Predicate:     pred,
	}
	return st, st.Validate()
}

// Sign serializes the statement once and signs those bytes in a DSSE
// envelope.
func Sign(ctx context.Context, st *intoto.Statement, signer dsse.Signer) (*dsse.Envelope, error) {
	payload, err := protojson.Marshal(st)
	if err != nil {
		return nil, err
	}
	es, err := dsse.NewEnvelopeSigner(signer)
	if err != nil {
		return nil, err
	}
	return es.SignPayload(ctx, PayloadType, payload)
}

// WriteEnvelope writes the envelope as indented JSON (mode 0644).
func WriteEnvelope(path string, env *dsse.Envelope) error {
	data, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Verification is what Verify found. Problems is empty when the record is
// good.
type Verification struct {
	Statement *intoto.Statement
	Predicate *Predicate
	KeyID     string
	Problems  []string
}

// OK reports whether nothing failed.
func (v *Verification) OK() bool { return len(v.Problems) == 0 }

// Verify checks a DSSE envelope (JSON) against the public key: the payload
// type, the signature, that the payload is an in-toto Statement v1 with our
// predicate type whose subject digest matches the predicate's hardware and,
// when evidenceDir is not empty, that every evidence file named by the
// stages has the recorded size and sha256. A tampered record is reported in
// Problems; err is for records that cannot be read at all.
func Verify(ctx context.Context, envelopeJSON []byte, verifier dsse.Verifier, evidenceDir string) (*Verification, error) {
	if len(envelopeJSON) > MaxRecordBytes {
		return nil, fmt.Errorf("%w: record is larger than %d MiB", ErrRecordFormat, MaxRecordBytes>>20)
	}
	if err := noDuplicateMembers(envelopeJSON); err != nil {
		return nil, fmt.Errorf("%w: record is not a DSSE envelope: %v", ErrRecordFormat, err)
	}
	var env dsse.Envelope
	if err := json.Unmarshal(envelopeJSON, &env); err != nil {
		return nil, fmt.Errorf("%w: record is not a DSSE envelope: %v", ErrRecordFormat, err)
	}
	v := &Verification{}
	if env.PayloadType != PayloadType {
		v.Problems = append(v.Problems, fmt.Sprintf("payloadType %q, want %q", env.PayloadType, PayloadType))
	}
	ev, err := dsse.NewEnvelopeVerifier(verifier)
	if err != nil {
		return nil, err
	}
	keys, payload, err := ev.VerifyAndDecode(ctx, &env)
	if err != nil {
		v.Problems = append(v.Problems, "signature: "+signatureProblem(err, &env, verifier))
		return v, nil // an unverified payload is not looked at
	}
	if len(keys) > 0 {
		v.KeyID = keys[0].KeyID
	}
	if err := noDuplicateMembers(payload); err != nil {
		v.Problems = append(v.Problems, "payload: "+err.Error())
		return v, nil
	}
	var st intoto.Statement
	if err := protojson.Unmarshal(payload, &st); err != nil {
		v.Problems = append(v.Problems, "payload: "+err.Error())
		return v, nil
	}
	v.Statement = &st
	if err := st.Validate(); err != nil {
		v.Problems = append(v.Problems, "statement: "+err.Error())
	}
	if st.PredicateType != PredicateType {
		v.Problems = append(v.Problems, fmt.Sprintf("predicateType %q, want %q", st.PredicateType, PredicateType))
		return v, nil
	}
	p, err := predicateOf(&st)
	if err != nil {
		v.Problems = append(v.Problems, "predicate: "+err.Error())
		return v, nil
	}
	v.Predicate = p
	want := HardwareDigest(p.Hardware.UUIDs, p.Hardware.Serials)
	if len(st.Subject) != 1 || st.Subject[0].Name != "node/"+p.Node.Name || st.Subject[0].Digest["sha256"] != want {
		v.Problems = append(v.Problems, "subject does not match node/"+p.Node.Name+" with the hardware digest of the predicate")
	}
	if evidenceDir != "" {
		v.Problems = append(v.Problems, CheckEvidence(evidenceDir, p.Stages)...)
	}
	return v, nil
}

// predicateOf decodes a Statement's predicate into gpuctl's Predicate.
// Errors: the predicate does not have the Predicate's shape.
func predicateOf(st *intoto.Statement) (*Predicate, error) {
	raw, err := st.Predicate.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var p Predicate
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// MaxRecordBytes is the largest record Verify reads (8 MiB): a record is a
// few tens of KiB; its evidence lives in separate files.
const MaxRecordBytes = 8 << 20

// ErrRecordFormat is a record that is not a well-formed DSSE envelope: too
// large, not JSON, or a JSON object with a member twice (which parsers
// resolve differently, so a verifier and a reader could see two records).
var ErrRecordFormat = errors.New("malformed record")

// noDuplicateMembers returns an error for the first JSON object in data
// that has a member name twice, or for data that is not JSON.
func noDuplicateMembers(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if seen[k] {
					return fmt.Errorf("member %q appears twice in one object", k)
				}
				seen[k] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// CheckEvidence returns a problem for every evidence file of the stages that
// is missing in dir or whose size or sha256 differs.
func CheckEvidence(dir string, stages []StageResult) []string {
	var problems []string
	walkEvidence(dir, stages, func(want, got Evidence, err error) {
		switch {
		case errors.Is(err, errNotPlainName):
			problems = append(problems, fmt.Sprintf("evidence %q: not a plain file name", want.Name))
		case errors.Is(err, os.ErrNotExist):
			problems = append(problems, fmt.Sprintf("evidence %s: missing", want.Name))
		case err != nil:
			problems = append(problems, fmt.Sprintf("evidence %s: %v", want.Name, err))
		case got != want:
			problems = append(problems, fmt.Sprintf("evidence %s: sha256 %s (%d bytes), record says %s (%d bytes)", want.Name, got.SHA256, got.Bytes, want.SHA256, want.Bytes))
		}
	})
	return problems
}

var errNotPlainName = errors.New("not a plain file name")

// walkEvidence hashes the file in dir of every evidence entry of the stages
// and calls f with the recorded entry, the entry of the file as it is now,
// and the error reading it (errNotPlainName for a name with a directory
// part, which is not read).
func walkEvidence(dir string, stages []StageResult, f func(want, got Evidence, err error)) {
	for _, s := range stages {
		for _, e := range s.Evidence {
			if e.Name != filepath.Base(e.Name) {
				f(e, Evidence{}, errNotPlainName)
				continue
			}
			got, err := HashFile(filepath.Join(dir, e.Name))
			f(e, got, err)
		}
	}
}

// HashFile returns the Evidence entry of a file.
func HashFile(path string) (Evidence, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Evidence{}, err
	}
	return evidenceOf(filepath.Base(path), data), nil
}

func evidenceOf(name string, data []byte) Evidence {
	sum := sha256.Sum256(data)
	return Evidence{Name: name, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}
}

// StatementJSON returns the statement as protojson, indented, for an
// unsigned record.
func StatementJSON(st *intoto.Statement) ([]byte, error) {
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(st)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// signatureProblem says why the signature did not verify in the operator's
// terms: another key signed the record, or the record changed after signing
// (the DSSE library says "accepted signatures do not match threshold").
func signatureProblem(err error, env *dsse.Envelope, verifier dsse.Verifier) string {
	if errors.Is(err, dsse.ErrNoSignature) {
		return "the record has no signature"
	}
	given, _ := verifier.KeyID()
	var signers []string
	for _, sig := range env.Signatures {
		if sig.KeyID == given && given != "" {
			return fmt.Sprintf("the signature of key %s does not match the payload: the record was changed after it was signed", shortID(given))
		}
		if sig.KeyID != "" {
			signers = append(signers, shortID(sig.KeyID))
		}
	}
	if len(signers) > 0 {
		return fmt.Sprintf("the record is signed by key %s, not by the given key %s: verify with the signer's public key (or the record was changed)", strings.Join(signers, ", "), shortID(given))
	}
	return fmt.Sprintf("the signature does not verify with the given key %s: the record was changed after it was signed, or another key signed it (%v)", shortID(given), err)
}

func shortID(id string) string {
	if len(id) > 16 {
		return id[:16] + "…"
	}
	return id
}
