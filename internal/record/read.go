package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	intoto "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// MaxRecordBytes is the largest record Verify and Decode read (8 MiB): a
// record is a few tens of KiB; its evidence lives in separate files.
const MaxRecordBytes = 8 << 20

// ErrRecordFormat is a record that is not a well-formed DSSE envelope: too
// large, not JSON, or a JSON object with a member twice (which parsers
// resolve differently, so a verifier and a reader could see two records).
var ErrRecordFormat = errors.New("malformed record")

// File is a record file as read, unverified: where it was read from, the
// "sha256:HEX" of its bytes (Digest), its subject's hardware digest and
// name ("node/NAME" as accept writes it) and its predicate.
type File struct {
	Path        string
	Digest      string
	Subject     string
	SubjectName string
	Predicate   *Predicate
}

// ReadFile reads a record file, a DSSE envelope or an unsigned Statement,
// without checking its signature (Verify does that). Errors: the file
// cannot be read, or Decode's.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(path, data)
}

// Decode decodes the bytes of a record file read from path (which only
// names it in errors) as ReadFile does: with Verify's guards (size cap, no
// JSON member twice) and without checking the signature. Errors wrap
// ErrRecordFormat.
func Decode(path string, data []byte) (*File, error) {
	if len(data) > MaxRecordBytes {
		return nil, fmt.Errorf("%s: %w: larger than %d MiB", path, ErrRecordFormat, MaxRecordBytes>>20)
	}
	// A member twice would let history and verify read two records.
	if err := noDuplicateMembers(data); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrRecordFormat, err)
	}
	payload, err := envelopePayload(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: payload: %v", path, ErrRecordFormat, err)
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
	return &File{Path: path, Digest: Digest(data), Subject: st.Subject[0].Digest["sha256"], SubjectName: st.Subject[0].Name, Predicate: p}, nil
}

// envelopePayload returns the decoded payload of a DSSE envelope, or data
// itself when it is not one (an unsigned Statement). Errors: the payload is
// not base64, or has a JSON member twice.
func envelopePayload(data []byte) ([]byte, error) {
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
	}
	if json.Unmarshal(data, &env) != nil || env.Payload == "" {
		return data, nil
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, err
	}
	if err := noDuplicateMembers(payload); err != nil {
		return nil, err
	}
	return payload, nil
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

// noDuplicateMembers returns an error for the first JSON object in data
// that has a member name twice, or for data that is not JSON.
func noDuplicateMembers(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := walkValue(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// walkValue reads one JSON value from dec, failing on an object with a
// member name twice.
func walkValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return walkObject(dec)
	case json.Delim('['):
		for dec.More() {
			if err := walkValue(dec); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// walkObject reads the members of an object whose '{' dec has read, and
// its '}'.
func walkObject(dec *json.Decoder) error {
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
		if err := walkValue(dec); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}
