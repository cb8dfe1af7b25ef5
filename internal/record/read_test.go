package record

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
)

// TestReadFileStatement: an unsigned Statement of accept's testdata reads
// with its subject, digest and predicate.
func TestReadFileStatement(t *testing.T) {
	f, err := ReadFile(filepath.Join("..", "accept", "testdata", "statement-healthy.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Predicate == nil || f.SubjectName != SubjectName(f.Predicate.Node.Name) || !strings.HasPrefix(f.Digest, "sha256:") {
		t.Errorf("file %+v", f)
	}
	if want := HardwareDigest(f.Predicate.Hardware.UUIDs, f.Predicate.Hardware.Serials); f.Subject != want {
		t.Errorf("subject digest %s, want %s", f.Subject, want)
	}
}

// TestDecodeRefusesOtherStatements: a Statement of another predicate type,
// or without one subject, is ErrRecordFormat.
func TestDecodeRefusesOtherStatements(t *testing.T) {
	for name, doc := range map[string]string{
		"other-type":     `{"_type": "https://in-toto.io/Statement/v1", "subject": [{"name": "x", "digest": {"sha256": "00"}}], "predicateType": "https://slsa.dev/provenance/v1", "predicate": {}}`,
		"no-subject":     `{"_type": "https://in-toto.io/Statement/v1", "subject": [], "predicateType": "` + PredicateType + `", "predicate": {}}`,
		"no-predicate":   `{"_type": "https://in-toto.io/Statement/v1", "subject": [{"name": "node/x", "digest": {"sha256": "00"}}], "predicateType": "` + PredicateType + `"}`,
		"null-predicate": `{"_type": "https://in-toto.io/Statement/v1", "subject": [{"name": "node/x", "digest": {"sha256": "00"}}], "predicateType": "` + PredicateType + `", "predicate": null}`,
		"list-predicate": `{"_type": "https://in-toto.io/Statement/v1", "subject": [{"name": "node/x", "digest": {"sha256": "00"}}], "predicateType": "` + PredicateType + `", "predicate": [1]}`,
		"bad-subject":    `{"_type": "https://in-toto.io/Statement/v1", "subject": {"name": "node/x"}, "predicateType": "` + PredicateType + `", "predicate": {}}`,
		"bad-base64":     `{"payloadType": "` + PayloadType + `", "payload": "%%%", "signatures": []}`,
	} {
		if _, err := Decode(name, []byte(doc)); !errors.Is(err, ErrRecordFormat) {
			t.Errorf("%s: %v, want ErrRecordFormat", name, err)
		}
	}
}

// TestStatementOfKeepsPositions: a Statement protojson refuses is refused
// with protojson's position in the payload, not in the header statementOf
// splits off; a predicate that is not an object never reaches predicateOf.
func TestStatementOfKeepsPositions(t *testing.T) {
	doc := "{\n\"_type\": \"https://in-toto.io/Statement/v1\",\n\"predicateType\": \"p\",\n\"predicate\": {},\n\"subject\": 7}"
	_, err := Decode("pos.json", []byte(doc))
	if !errors.Is(err, ErrRecordFormat) || !strings.Contains(err.Error(), "at line 5:") {
		t.Errorf("error %v, want the position line 5 of the payload", err)
	}
	st, raw, err := statementOf([]byte(`{"_type": "https://in-toto.io/Statement/v1", "predicate": {"verdict": "PASS"}}`), protojson.UnmarshalOptions{})
	if err != nil || st.Type != "https://in-toto.io/Statement/v1" || string(raw) != `{"verdict": "PASS"}` {
		t.Errorf("statementOf: %v %v %s", st, err, raw)
	}
}

// TestHardwareDigestOrderFree: the digest does not depend on the GPUs'
// order, and a serial belongs to its UUID.
func TestHardwareDigestOrderFree(t *testing.T) {
	a := HardwareDigest([]string{"GPU-1", "GPU-2"}, []string{"S1", "S2"})
	if b := HardwareDigest([]string{"GPU-2", "GPU-1"}, []string{"S2", "S1"}); a != b {
		t.Errorf("order changes the digest: %s %s", a, b)
	}
	if c := HardwareDigest([]string{"GPU-1", "GPU-2"}, []string{"S2", "S1"}); a == c {
		t.Error("swapped serials give the same digest")
	}
}

// TestTooManySignatures: an envelope with more than MaxSignatures
// signatures is refused before any is verified.
func TestTooManySignatures(t *testing.T) {
	sigs := make([]string, MaxSignatures+1)
	for i := range sigs {
		sigs[i] = `{"keyid":"k","sig":"AAAA"}`
	}
	data := []byte(`{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[` + strings.Join(sigs, ",") + `]}`)
	_, err := Decode("many.json", data)
	if !errors.Is(err, ErrRecordFormat) || !strings.Contains(err.Error(), "MaxSignatures") {
		t.Fatalf("Decode = %v", err)
	}
}
