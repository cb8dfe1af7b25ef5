package record

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gpuctl/gpuctl/internal/safefs"
)

// MaxRecordBytes is the largest record Verify and Decode read (8 MiB): a
// record is a few tens of KiB; its evidence lives in separate files.
const MaxRecordBytes = 8 << 20

// ErrRecordFormat is a record that is not a well-formed DSSE envelope or
// Statement: too large, not JSON, not a gpuctl acceptance statement, or
// JSON that decoders read differently (CheckJSON: a member twice, names
// that differ only in case, trailing data, too deep), so that a verifier
// and a reader could see two records.
var ErrRecordFormat = errors.New("malformed record")

// FileKind is a record file as safefs reads it: an acceptance record, at
// most MaxRecordBytes.
var FileKind = safefs.Kind{Name: safefs.Record.Name, Max: MaxRecordBytes}

// File is a record file as read, unverified: where it was read from, the
// "sha256:HEX" of its bytes (Digest), its subject's hardware digest and
// name ("node/NAME" as accept writes it), its predicate, and whether it is
// a DSSE envelope (Envelope) holding at least one signature (Signed; not
// checked: Verify does that).
type File struct {
	Path        string
	Digest      string
	Subject     string
	SubjectName string
	Predicate   *Predicate
	Envelope    bool
	Signed      bool
}

// ReadFile reads a record file, a DSSE envelope or an unsigned Statement,
// without checking its signature (Verify does that): a regular file of at
// most MaxRecordBytes (safefs.ReadFile). Errors: a *safefs.Error naming the
// path, or Decode's.
func ReadFile(path string) (*File, error) {
	data, err := safefs.ReadFile(path, FileKind)
	if err != nil {
		return nil, err
	}
	return Decode(path, data)
}

// Decode decodes the bytes of a record file read from path (which only
// names it in errors) as ReadFile does: with Verify's guards (size cap,
// CheckJSON on the file and on the envelope's payload) and without
// checking the signature. Errors wrap ErrRecordFormat (and
// ErrAmbiguousJSON for CheckJSON's) and quote no content.
func Decode(path string, data []byte) (*File, error) {
	if len(data) > MaxRecordBytes {
		return nil, fmt.Errorf("%s: %w: larger than %d MiB", path, ErrRecordFormat, MaxRecordBytes>>20)
	}
	env, err := strictEnvelope(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrRecordFormat, err)
	}
	f := &File{Path: path, Digest: Digest(data), Envelope: env.Payload != "", Signed: env.Payload != "" && len(env.Signatures) > 0}
	payload := data
	if f.Envelope {
		if payload, err = strictPayload(env); err != nil {
			return nil, fmt.Errorf("%s: %w: %w", path, ErrRecordFormat, err)
		}
	}
	st, raw, err := statementOf(payload, protojson.UnmarshalOptions{DiscardUnknown: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", path, ErrRecordFormat, protoProblem(err))
	}
	if st.PredicateType != PredicateType || raw == nil || len(st.Subject) != 1 {
		return nil, fmt.Errorf("%s: %w: not a gpuctl acceptance statement", path, ErrRecordFormat)
	}
	p, err := predicateOf(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: predicate: %v", path, ErrRecordFormat, err)
	}
	f.Subject, f.SubjectName, f.Predicate = st.Subject[0].Digest["sha256"], st.Subject[0].Name, p
	return f, nil
}

// strictEnvelope checks a record file with CheckJSON (as an envelope or a
// Statement) and reads its envelope members; an unsigned Statement has no
// payload.
func strictEnvelope(data []byte) (*dsse.Envelope, error) {
	if err := checkJSON(data, fileSchema, "$"); err != nil {
		return nil, err
	}
	var env dsse.Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("not a DSSE envelope or in-toto Statement: %s", jsonProblem(err))
	}
	if len(env.Signatures) > MaxSignatures {
		return nil, fmt.Errorf("more than %d signatures (MaxSignatures); gpuctl signs a record once", MaxSignatures)
	}
	return &env, nil
}

// MaxSignatures is the most signatures an envelope may carry: gpuctl
// writes one, a re-signed record a few; each costs a verification, so
// thousands of wrong ones would take seconds a record.
const MaxSignatures = 16

// strictPayload is the decoded payload of env (base64, as the DSSE library
// decodes it), checked with CheckJSON as a Statement.
func strictPayload(env *dsse.Envelope) ([]byte, error) {
	payload, err := env.DecodeB64Payload()
	if err != nil {
		return nil, errors.New("payload is not base64")
	}
	if err := checkJSON(payload, statementSchema, "payload"); err != nil {
		return nil, err
	}
	return payload, nil
}

// protoPosition is the "(line L:C)" of a protojson error.
var protoPosition = regexp.MustCompile(`\(line \d+:\d+\)`)

// protoProblem says that the payload is not a Statement, where protojson
// said so, without the value it quoted.
func protoProblem(err error) string {
	msg := "not an in-toto Statement v1"
	if pos := protoPosition.FindString(err.Error()); pos != "" {
		msg += " at " + strings.Trim(pos, "()")
	}
	return msg
}

// jsonProblem is an encoding/json error without any value it quoted: a
// type error names the field and the types.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s is a JSON %s, want %s", cmp.Or(te.Field, "the value"), te.Value, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	return "invalid JSON"
}

// Digest returns "sha256:HEX" of a record file's bytes, the form a
// record's previous.digest takes.
func Digest(data []byte) string {
	return "sha256:" + EvidenceOf("", data).SHA256
}

// EvidenceOf returns the Evidence entry of a file named name with the
// bytes data.
func EvidenceOf(name string, data []byte) Evidence {
	sum := sha256.Sum256(data)
	return Evidence{Name: name, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}
}

// statementOf decodes a Statement payload: its type, subject and predicate
// type with protojson (opts) into the in-toto type, and its predicate left
// as raw JSON for predicateOf, nil when there is none (absent or null).
// The predicate is most of a record; read as the Statement's Struct it
// would be decoded, encoded and decoded again, which was most of the time
// `gpuctl report` took over hundreds of records (BenchmarkReport).
// Errors are protojson's on the whole payload, so that their position is
// the payload's: it is not a JSON object, or its members or predicate do
// not have a Statement's types.
func statementOf(payload []byte, opts protojson.UnmarshalOptions) (*intoto.Statement, json.RawMessage, error) {
	var members map[string]json.RawMessage
	if json.Unmarshal(payload, &members) != nil {
		return nil, nil, wholeStatement(payload, opts)
	}
	raw := bytes.TrimSpace(members["predicate"])
	delete(members, "predicate")
	if string(raw) == "null" || len(raw) == 0 {
		raw = nil
	} else if raw[0] != '{' {
		return nil, nil, wholeStatement(payload, opts)
	}
	head, err := json.Marshal(members)
	if err != nil {
		return nil, nil, wholeStatement(payload, opts)
	}
	var st intoto.Statement
	if opts.Unmarshal(head, &st) != nil {
		return nil, nil, wholeStatement(payload, opts)
	}
	return &st, raw, nil
}

// wholeStatement is protojson's error on the whole payload, one statementOf
// could not split; errors.ErrUnsupported if protojson reads it after all.
func wholeStatement(payload []byte, opts protojson.UnmarshalOptions) error {
	var st intoto.Statement
	if err := opts.Unmarshal(payload, &st); err != nil {
		return err
	}
	return errors.ErrUnsupported
}

// predicateOf decodes a Statement's predicate (raw JSON, statementOf) into
// gpuctl's Predicate. Errors: the predicate does not have the Predicate's
// shape (naming the field, never the value).
func predicateOf(raw json.RawMessage) (*Predicate, error) {
	var p Predicate
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, errors.New(jsonProblem(err))
	}
	return &p, nil
}
