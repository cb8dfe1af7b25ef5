package record

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/gpuctl/gpuctl/internal/safefs"
)

// TestVerifyMalformedRecord: a record that is not one well-formed JSON
// value, has a member twice (parsers disagree on which one counts), or is
// over the size cap is ErrRecordFormat, before any signature is looked at.
func TestVerifyMalformedRecord(t *testing.T) {
	cases := map[string]string{
		"not-json":       "this is not JSON",
		"dup-payload":    `{"payloadType": "application/vnd.in-toto+json", "payload": "e30=", "payload": "e30=", "signatures": []}`,
		"dup-nested":     `{"payload": "e30=", "signatures": [{"keyid": "a", "keyid": "b", "sig": ""}]}`,
		"trailing-value": `{"payload": "e30="} {}`,
		"too-large":      `{"payload": "` + strings.Repeat("A", MaxRecordBytes) + `"}`,
	}
	for name, rec := range cases {
		_, err := Verify(context.Background(), []byte(rec), nil, "")
		if !errors.Is(err, ErrRecordFormat) {
			t.Errorf("%s: %v, want ErrRecordFormat", name, err)
		}
	}
	if err := CheckJSON([]byte(`{"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]}`), nil); err != nil {
		t.Errorf("same name in different objects: %v", err)
	}
}

// TestCheckJSON: each construct two decoders read differently is refused
// with the JSON path and the member's name; what every decoder reads alike
// passes.
func TestCheckJSON(t *testing.T) {
	deep := strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1)
	refused := []struct {
		name, doc string
		shape     any
		want      string // in the error
	}{
		{"duplicate", `{"a": 1, "a": 2}`, nil, `$: member "a" appears twice`},
		{"case-variant", `{"payload": "x", "PAYLOAD": "y"}`, nil, `$: member "PAYLOAD" and "payload" differ only in case`},
		{"kelvin-sign", `{"k": 1, "\u212a": 2}`, nil, `differ only in case`},
		{"long-s", `{"sig": "a", "ſig": "b"}`, nil, `differ only in case`},
		{"nested-case", `{"signatures": [{"sig": "a", "Sig": "b"}]}`, nil, `$.signatures[0]: member "Sig"`},
		{"spelled-by-case", `{"Payload": "e30="}`, fileShape{}, `member "Payload" is not spelled "payload"`},
		{"proto-name", `{"predicate_type": "x"}`, statementShape{}, `member "predicate_type" is not spelled "predicateType"`},
		{"predicate-field", `{"predicate": {"Verdict": "PASS"}}`, statementShape{}, `$.predicate: member "Verdict" is not spelled "verdict"`},
		{"stage-field", `{"predicate": {"stages": [{"name": "nccl", "VERDICT": "FAIL"}]}}`, statementShape{}, `$.predicate.stages[0]: member "VERDICT"`},
		{"trailing-value", `{"a": 1} {"a": 2}`, nil, `has data after the JSON value`},
		{"trailing-garbage", `{"a": 1}]`, nil, `has data after the JSON value`},
		{"too-deep", deep, nil, `deeper than 64 levels`},
		{"not-utf8", "{\"a\": \"\xff\"}", nil, `not valid UTF-8`},
		{"truncated", `{"a": [1, 2`, nil, `is not JSON`},
	}
	for _, c := range refused {
		err := CheckJSON([]byte(c.doc), c.shape)
		if !errors.Is(err, ErrAmbiguousJSON) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrAmbiguousJSON with %q", c.name, err, c.want)
		}
	}
	accepted := []struct {
		name, doc string
		shape     any
	}{
		{"map-keys-in-case", `{"predicate": {"images": {"nccl": "a", "NCCL": "b"}, "stages": [{"facts": {"k": "1", "K": "2"}}]}}`, statementShape{}},
		{"nested-64", strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth), nil},
		{"unknown-member", `{"predicate": {"somethingNew": {"A": 1}}}`, statementShape{}},
		{"trailing-space", "{\"a\": 1}\n  \n", nil},
	}
	for _, c := range accepted {
		if err := CheckJSON([]byte(c.doc), c.shape); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestCheckJSONDeepIsQuick: a megabyte of '[' is refused at level 65,
// without reading on or recursing further.
func TestCheckJSONDeepIsQuick(t *testing.T) {
	doc := strings.Repeat("[", 1<<20)
	start := time.Now()
	err := CheckJSON([]byte(doc), nil)
	if !errors.Is(err, ErrAmbiguousJSON) || !strings.Contains(err.Error(), "deeper than") {
		t.Fatalf("%v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %s", d)
	}
}

// testStatement is accept's unsigned healthy statement with the verdict
// given.
func testStatement(t *testing.T, verdict string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "accept", "testdata", "statement-healthy.json"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.Replace(string(data), `"verdict": "PASS"`, `"verdict": "`+verdict+`"`, 1))
}

// testSigner is a fresh Ed25519 key's signer-verifier.
func testSigner(t *testing.T) dsse.SignerVerifier {
	t.Helper()
	priv, _, err := GenerateKey(KeyEd25519)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := LoadSignerVerifier(priv)
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

func signEnvelope(t *testing.T, sv dsse.SignerVerifier, payload []byte) *dsse.Envelope {
	t.Helper()
	s, err := dsse.NewEnvelopeSigner(sv)
	if err != nil {
		t.Fatal(err)
	}
	env, err := s.SignPayload(context.Background(), PayloadType, payload)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestCaseVariantEnvelopeRefused: the envelope whose "PAYLOAD" holds the
// signed PASS statement and whose "payload" an unsigned FAIL one (Go's
// decoder keeps the last of the two, jq and Python read "payload") is
// refused by Verify and Decode, naming the member, never its content; so
// is a signed payload whose predicate says "verdict" twice in two cases.
func TestCaseVariantEnvelopeRefused(t *testing.T) {
	sv := testSigner(t)
	pass := testStatement(t, "PASS")
	env := signEnvelope(t, sv, pass)
	if v, err := Verify(context.Background(), mustJSON(t, env), sv, ""); err != nil || !v.OK() || !v.Signed {
		t.Fatalf("the genuine envelope: %v %+v", err, v)
	}
	sigs := string(mustJSON(t, env.Signatures))
	failB64 := base64.StdEncoding.EncodeToString(testStatement(t, "FAIL"))
	forged := map[string]string{
		"case-variant": `{"payloadType": "` + PayloadType + `", "payload": "` + failB64 + `", "PAYLOAD": "` + env.Payload + `", "signatures": ` + sigs + `}`,
		"only-upper":   `{"payloadType": "` + PayloadType + `", "PAYLOAD": "` + env.Payload + `", "signatures": ` + sigs + `}`,
		"duplicate":    `{"payloadType": "` + PayloadType + `", "payload": "` + failB64 + `", "payload": "` + env.Payload + `", "signatures": ` + sigs + `}`,
		"trailing":     string(mustJSON(t, env)) + `{"payload": "` + failB64 + `"}`,
	}
	twice := strings.Replace(string(pass), `"verdict": "PASS"`, `"verdict": "FAIL", "Verdict": "PASS"`, 1)
	forged["signed-predicate-case"] = string(mustJSON(t, signEnvelope(t, sv, []byte(twice))))
	for name, doc := range forged {
		_, err := Verify(context.Background(), []byte(doc), sv, "")
		if !errors.Is(err, ErrRecordFormat) || !errors.Is(err, ErrAmbiguousJSON) {
			t.Errorf("%s: Verify: %v, want ErrRecordFormat and ErrAmbiguousJSON", name, err)
			continue
		}
		if strings.Contains(err.Error(), env.Payload[:40]) || strings.Contains(err.Error(), failB64[:40]) {
			t.Errorf("%s: the error quotes the payload: %v", name, err)
		}
		if _, err := Decode("rec.json", []byte(doc)); !errors.Is(err, ErrAmbiguousJSON) || !strings.HasPrefix(err.Error(), "rec.json: ") {
			t.Errorf("%s: Decode: %v", name, err)
		}
	}
	for name, want := range map[string]string{"case-variant": `"PAYLOAD"`, "only-upper": `"PAYLOAD"`, "signed-predicate-case": `payload.predicate.nccl: member "Verdict" and "verdict" differ only in case`} {
		if _, err := Verify(context.Background(), []byte(forged[name]), sv, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeSignedFlags: Decode tells an envelope with a signature from an
// unsigned Statement.
func TestDecodeSignedFlags(t *testing.T) {
	env := signEnvelope(t, testSigner(t), testStatement(t, "PASS"))
	f, err := Decode("a", mustJSON(t, env))
	if err != nil || !f.Envelope || !f.Signed {
		t.Errorf("signed envelope: %v %+v", err, f)
	}
	f, err = Decode("b", testStatement(t, "PASS"))
	if err != nil || f.Envelope || f.Signed {
		t.Errorf("statement: %v %+v", err, f)
	}
}

// TestDecodeQuotesNoValue: a value of the wrong type is refused by the
// field's name, without the value.
func TestDecodeQuotesNoValue(t *testing.T) {
	st := regexp.MustCompile(`"runID": *"[^"]*"`).ReplaceAllString(string(testStatement(t, "PASS")), `"runID": ["SECRET-VALUE-1"]`)
	_, err := Decode("rec.json", []byte(st))
	if !errors.Is(err, ErrRecordFormat) || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "runID") {
		t.Errorf("%v", err)
	}
	bad := `{"_type": ["SECRET-VALUE-2"], "predicateType": "x"}`
	if _, err := Decode("rec.json", []byte(bad)); !errors.Is(err, ErrRecordFormat) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("%v", err)
	}
}

// TestReadFileRefusesNonRegular: a FIFO and /dev/zero as a record are
// refused by their mode, naming the path, without blocking or reading.
func TestReadFileRefusesNonRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "record.dsse.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, p := range []string{fifo, "/dev/zero"} {
		_, err := ReadFile(p)
		if !errors.Is(err, safefs.ErrNotRegular) || !strings.HasPrefix(err.Error(), p+": ") {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := HashFile("/dev/zero"); !errors.Is(err, safefs.ErrNotRegular) {
		t.Errorf("evidence /dev/zero: %v", err)
	}
}

// TestEvidenceStaysInItsFolder: an evidence file that is a link out of
// the evidence folder, or a name with "..", is not read.
func TestEvidenceStaysInItsFolder(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "nccl.log")); err != nil {
		t.Fatal(err)
	}
	ev := EvidenceOf("nccl.log", []byte("x"))
	problems := CheckEvidence(dir, []StageResult{{Evidence: []Evidence{ev, {Name: ".."}}}})
	if len(problems) != 2 || !strings.Contains(problems[0], "outside") || !strings.Contains(problems[1], "not a plain file name") {
		t.Errorf("problems %q", problems)
	}
}

// TestVerifyTamperedPayload: a signed payload with a byte changed so that
// it is no JSON at all reaches the signature check and fails it (a
// problem, not a refusal of the record's format), while a payload that
// decoders read differently is refused before the signature.
func TestVerifyTamperedPayload(t *testing.T) {
	sv := testSigner(t)
	payload := testStatement(t, "PASS")
	env := signEnvelope(t, sv, payload)
	broken := append([]byte{}, payload...)
	broken[bytes.IndexByte(broken, '"')] = '#'
	env.Payload = base64.StdEncoding.EncodeToString(broken)
	v, err := Verify(context.Background(), mustJSON(t, env), sv, "")
	if err != nil {
		t.Fatalf("Verify = %v, want a signature problem", err)
	}
	if v.OK() || len(v.Problems) == 0 || !strings.HasPrefix(v.Problems[0], "signature: ") {
		t.Errorf("problems = %q, want the signature's", v.Problems)
	}
	dup := bytes.Replace(payload, []byte(`"verdict": "PASS"`), []byte(`"verdict": "PASS", "verdict": "FAIL"`), 1)
	env = signEnvelope(t, sv, dup)
	if _, err := Verify(context.Background(), mustJSON(t, env), sv, ""); !errors.Is(err, ErrAmbiguousJSON) {
		t.Errorf("a duplicate member: Verify = %v, want ErrAmbiguousJSON", err)
	}
}
