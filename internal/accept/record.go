package accept

import (
	"context"
	"encoding/json"
	"os"

	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/gpuctl/gpuctl/internal/record"
)

// The record's schema lives in internal/record; accept builds and signs
// records of it. These aliases keep the runner's, the stage table's and the
// judges' spelling while callers move over: they are the same types, and
// new code outside accept writes record.X.
type (
	Predicate       = record.Predicate
	Rejudged        = record.Rejudged
	NodeFacts       = record.NodeFacts
	Hardware        = record.Hardware
	DriverInfo      = record.DriverInfo
	Interconnect    = record.Interconnect
	NCCLSummary     = record.NCCLSummary
	NetworkSummary  = record.NetworkSummary
	NetworkDevice   = record.NetworkDevice
	NetworkPort     = record.NetworkPort
	NCCLRow         = record.NCCLRow
	NCCLMeasurement = record.NCCLMeasurement
	Topology        = record.Topology
	StageSummary    = record.StageSummary
	// FrameworkSummary and FrameworkCheck: the framework stage's summary.
	FrameworkSummary = record.FrameworkSummary
	FrameworkCheck   = record.FrameworkCheck
	Thresholds       = record.Thresholds
	Tool             = record.Tool
	PreviousRecord   = record.PreviousRecord
	Regression       = record.Regression
	Stage            = record.Stage
	Evidence         = record.Evidence
	StageResult      = record.StageResult
	Expectations     = record.Expectations
	Baseline         = record.Baseline
	// DCGMSummary is the dcgm stage's summary; BaselineMet one figure
	// held to a baseline.
	DCGMSummary = record.DCGMSummary
	BaselineMet = record.BaselineMet
)

// PredicateFormatVersion is the version of the Predicate layout accept
// writes.
const PredicateFormatVersion = record.PredicateFormatVersion

// evidenceOf is the Evidence entry of saved output name with the bytes data.
func evidenceOf(name string, data []byte) Evidence { return record.EvidenceOf(name, data) }

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
			Name:   record.SubjectName(p.Node.Name),
			Digest: map[string]string{"sha256": record.HardwareDigest(p.Hardware.UUIDs, p.Hardware.Serials)},
		}},
		PredicateType: record.PredicateType,
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
	return es.SignPayload(ctx, record.PayloadType, payload)
}

// WriteEnvelope writes the envelope as indented JSON (mode 0644).
func WriteEnvelope(path string, env *dsse.Envelope) error {
	data, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
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
