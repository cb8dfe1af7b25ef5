package record

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/gpuctl/gpuctl/internal/safefs"
)

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

// Verification is what Verify found. Problems is empty when the record is
// good.
// Signed says that the envelope holds at least one signature (whether or
// not it verified).
//
// Statement is the in-toto Statement as read: its type, subject and
// predicate type. Its Predicate is an empty Struct when the payload has a
// predicate, which is read once, into Predicate (statementOf).
type Verification struct {
	Statement *intoto.Statement
	Predicate *Predicate
	KeyID     string
	Problems  []string
	Signed    bool
}

// OK reports whether nothing failed.
func (v *Verification) OK() bool { return len(v.Problems) == 0 }

// Verify checks a DSSE envelope (JSON) against the public key: the payload
// type, the signature, that the payload is an in-toto Statement v1 with our
// predicate type whose subject digest matches the predicate's hardware and,
// when evidenceDir is not empty, that every evidence file named by the
// stages has the recorded size and sha256. A tampered record is reported in
// Problems; err is for records that cannot be read at all (wrapping
// ErrRecordFormat) and for a verifier dsse cannot use.
func Verify(ctx context.Context, envelopeJSON []byte, verifier dsse.Verifier, evidenceDir string) (*Verification, error) {
	env, checked, err := decodeEnvelope(envelopeJSON)
	if err != nil {
		return nil, err
	}
	v := &Verification{Signed: len(env.Signatures) > 0}
	if env.PayloadType != PayloadType {
		v.Problems = append(v.Problems, fmt.Sprintf("payloadType %q, want %q", env.PayloadType, PayloadType))
	}
	ev, err := dsse.NewEnvelopeVerifier(verifier)
	if err != nil {
		return nil, err
	}
	keys, payload, err := ev.VerifyAndDecode(ctx, env)
	if err != nil {
		v.Problems = append(v.Problems, "signature: "+signatureProblem(err, env, verifier))
		return v, nil // an unverified payload is not looked at
	}
	if len(keys) > 0 {
		v.KeyID = keys[0].KeyID
	}
	v.checkPayload(payload, checked)
	if v.Predicate != nil && evidenceDir != "" {
		v.Problems = append(v.Problems, CheckEvidence(evidenceDir, v.Predicate.Stages)...)
		v.Problems = append(v.Problems, CheckBundle(evidenceDir, v.Predicate.EvidenceBundle)...)
	}
	return v, nil
}

// decodeEnvelope reads a DSSE envelope with the guards of Decode. Errors
// wrap ErrRecordFormat.
// The payload is checked before the signature: a payload that decoders
// read differently is refused whoever signed it.
func decodeEnvelope(envelopeJSON []byte) (env *dsse.Envelope, checked bool, err error) {
	if len(envelopeJSON) > MaxRecordBytes {
		return nil, false, fmt.Errorf("%w: record is larger than %d MiB", ErrRecordFormat, MaxRecordBytes>>20)
	}
	env, err = strictEnvelope(envelopeJSON)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrRecordFormat, err)
	}
	if payload, err := env.DecodeB64Payload(); env.Payload != "" && err == nil {
		err := checkJSON(payload, statementSchema, "payload")
		if err != nil && !unreadable(err) {
			return nil, false, fmt.Errorf("%w: %w", ErrRecordFormat, err)
		}
		checked = err == nil
	} // a payload that is not base64, or not JSON at all (a byte changed),
	// fails the signature check; checkPayload refuses a signed one
	return env, checked, nil
}

// unreadable reports whether CheckJSON refused JSON that no decoder reads
// (a syntax error, bytes that are not UTF-8), as against JSON decoders read
// differently.
func unreadable(err error) bool {
	var je *JSONError
	return errors.As(err, &je) && je.Unreadable
}

// checkPayload reads the verified payload into v (checked: decodeEnvelope
// held it to CheckJSON already): the Statement, its predicate type, the
// predicate and the subject, each failure a problem.
// v.Predicate stays nil when the payload has no gpuctl predicate.
func (v *Verification) checkPayload(payload []byte, checked bool) {
	if !checked {
		if err := checkJSON(payload, statementSchema, "payload"); err != nil {
			v.Problems = append(v.Problems, err.Error())
			return
		}
	}
	st, raw, err := statementOf(payload, protojson.UnmarshalOptions{})
	if err != nil {
		v.Problems = append(v.Problems, "payload: "+protoProblem(err))
		return
	}
	if raw != nil {
		// Validate asks for a predicate; its content is v.Predicate.
		st.Predicate = &structpb.Struct{}
	}
	v.Statement = st
	if err := st.Validate(); err != nil {
		v.Problems = append(v.Problems, "statement: "+err.Error())
	}
	if st.PredicateType != PredicateType {
		v.Problems = append(v.Problems, fmt.Sprintf("predicateType %q, want %q", st.PredicateType, PredicateType))
		return
	}
	if raw == nil {
		v.Problems = append(v.Problems, "statement: no predicate")
		return
	}
	p, err := predicateOf(raw)
	if err != nil {
		v.Problems = append(v.Problems, "predicate: "+err.Error())
		return
	}
	v.Predicate = p
	want := HardwareDigest(p.Hardware.UUIDs, p.Hardware.Serials)
	if len(st.Subject) != 1 || st.Subject[0].Name != SubjectName(p.Node.Name) || st.Subject[0].Digest["sha256"] != want {
		v.Problems = append(v.Problems, "subject does not match "+SubjectName(p.Node.Name)+" with the hardware digest of the predicate")
	}
}

// CheckEvidence returns a problem for every evidence file of the stages that
// is missing in dir or whose size or sha256 differs.
func CheckEvidence(dir string, stages []StageResult) []string {
	var problems []string
	WalkEvidence(dir, stages, func(want, got Evidence, err error) {
		switch {
		case errors.Is(err, ErrNotPlainName):
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

// CheckBundle returns a problem when the evidence bundle b names a file in
// dir that is there with another size or sha256 (or cannot be read); none
// when b is nil or its file is not in dir (it may live only at b.URI).
func CheckBundle(dir string, b *EvidenceBundle) []string {
	if b == nil {
		return nil
	}
	if b.Name != filepath.Base(b.Name) || !safefs.Local(b.Name) {
		return []string{fmt.Sprintf("evidence bundle %q: not a plain file name", b.Name)}
	}
	root, err := safefs.OpenRoot(dir)
	if err != nil {
		return []string{fmt.Sprintf("evidence bundle %s: %v", b.Name, err)}
	}
	defer root.Close()
	if !root.Exists(b.Name) {
		return nil
	}
	data, err := root.ReadFile(b.Name, safefs.Bundle)
	if err != nil {
		return []string{fmt.Sprintf("evidence bundle %s: %v", b.Name, err)}
	}
	if got := EvidenceOf(b.Name, data); got.SHA256 != b.SHA256 || got.Bytes != b.Bytes {
		return []string{fmt.Sprintf("evidence bundle %s: sha256 %s (%d bytes), record says %s (%d bytes)", b.Name, got.SHA256, got.Bytes, b.SHA256, b.Bytes)}
	}
	return nil
}

// ErrNotPlainName is an evidence name with a directory part: evidence
// names a file in the evidence directory itself.
var ErrNotPlainName = errors.New("not a plain file name")

// WalkEvidence hashes the file in dir of every evidence entry of the stages
// and calls f with the recorded entry, the entry of the file as it is now,
// and the error reading it (ErrNotPlainName for a name with a directory
// part, which is not read).
//
// The files are read inside dir (safefs.OpenRoot: a link that leaves it is
// refused) as safefs.Evidence: regular files of at most 16 MiB.
func WalkEvidence(dir string, stages []StageResult, f func(want, got Evidence, err error)) {
	root, rootErr := safefs.OpenRoot(dir)
	if rootErr == nil {
		defer root.Close()
	}
	for _, s := range stages {
		for _, e := range s.Evidence {
			switch {
			case e.Name != filepath.Base(e.Name) || !safefs.Local(e.Name):
				f(e, Evidence{}, ErrNotPlainName)
			case rootErr != nil:
				f(e, Evidence{}, rootErr)
			default:
				data, err := root.ReadFile(e.Name, safefs.Evidence)
				if err != nil {
					f(e, Evidence{}, err)
					continue
				}
				f(e, EvidenceOf(e.Name, data), nil)
			}
		}
	}
}

// HashFile returns the Evidence entry of a file, read as safefs.Evidence
// (a regular file of at most 16 MiB). Errors are *safefs.Error.
func HashFile(path string) (Evidence, error) {
	data, err := safefs.ReadFile(path, safefs.Evidence)
	if err != nil {
		return Evidence{}, err
	}
	return EvidenceOf(filepath.Base(path), data), nil
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
			return fmt.Sprintf("the signature of key %s does not match the payload: the record was changed after it was signed", ShortKeyID(given))
		}
		if sig.KeyID != "" {
			signers = append(signers, ShortKeyID(sig.KeyID))
		}
	}
	if len(signers) > 0 {
		return fmt.Sprintf("the record is signed by key %s, not by the given key %s: verify with the signer's public key (or the record was changed)", strings.Join(signers, ", "), ShortKeyID(given))
	}
	return fmt.Sprintf("the signature does not verify with the given key %s: the record was changed after it was signed, or another key signed it (%v)", ShortKeyID(given), err)
}

// ShortKeyID is a key ID cut to its first 16 characters and "…", as
// messages name keys.
func ShortKeyID(id string) string {
	if len(id) > 16 {
		return id[:16] + "…"
	}
	return id
}
