package accept

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
)

func testPredicate(t *testing.T, dir string) *Predicate {
	t.Helper()
	data := []byte("==============NVSMI LOG==============\n")
	if err := os.WriteFile(filepath.Join(dir, "inventory.nvidia-smi-query.log"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return &Predicate{
		FormatVersion: PredicateFormatVersion, RunID: "20261129t120000-abcd", Verdict: diag.Pass, Started: ts, Finished: ts.Add(time.Minute),
		Node:     NodeFacts{Name: "gpu-node-1"},
		Hardware: Hardware{GPUProduct: "NVIDIA H100 80GB HBM3", GPUCount: 2, UUIDs: []string{"GPU-2", "GPU-1"}, Serials: []string{"S2", "S1"}},
		Stages: []StageResult{{Name: StageInventory, Verdict: diag.Pass, Reason: "ok", Started: ts, Finished: ts,
			Evidence: []Evidence{evidenceOf("inventory.nvidia-smi-query.log", data)}}},
		Images: map[string]string{}, GPUHealth: []diag.Finding{},
	}
}

func keyPair(t *testing.T, alg string) (dsse.SignerVerifier, dsse.SignerVerifier) {
	t.Helper()
	priv, pub, err := record.GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := record.LoadSignerVerifier(priv)
	if err != nil {
		t.Fatal(err)
	}
	v, err := record.LoadSignerVerifier(pub)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

func signed(t *testing.T, p *Predicate, s dsse.Signer) []byte {
	t.Helper()
	st, err := Statement(p)
	if err != nil {
		t.Fatal(err)
	}
	env, err := Sign(context.Background(), st, s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(env)
	return b
}

func TestRecordSignVerify(t *testing.T) {
	for _, alg := range []string{record.KeyEd25519, record.KeyECDSAP256} {
		t.Run(alg, func(t *testing.T) {
			dir := t.TempDir()
			s, v := keyPair(t, alg)
			rec := signed(t, testPredicate(t, dir), s)
			res, err := record.Verify(context.Background(), rec, v, dir)
			if err != nil || !res.OK() {
				t.Fatalf("Verify: %v %v", err, res.Problems)
			}
			if res.Predicate.Verdict != diag.Pass || res.Statement.Subject[0].Name != "node/gpu-node-1" {
				t.Errorf("predicate %+v", res.Predicate)
			}
			// The subject digest is order-independent over (UUID, serial).
			if got, want := res.Statement.Subject[0].Digest["sha256"], record.HardwareDigest([]string{"GPU-1", "GPU-2"}, []string{"S1", "S2"}); got != want {
				t.Errorf("digest %s, want %s", got, want)
			}

			// Another key fails.
			_, other := keyPair(t, alg)
			if res, _ := record.Verify(context.Background(), rec, other, ""); res.OK() {
				t.Error("a record verified with another key")
			}

			// Flipping any byte of the payload or signature fails.
			var env dsse.Envelope
			_ = json.Unmarshal(rec, &env)
			payload, _ := base64.StdEncoding.DecodeString(env.Payload)
			sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
			for i := range payload {
				e := env
				p := append([]byte(nil), payload...)
				p[i] ^= 0x01
				e.Payload = base64.StdEncoding.EncodeToString(p)
				b, _ := json.Marshal(e)
				if res, err := record.Verify(context.Background(), b, v, ""); err == nil && res.OK() {
					t.Fatalf("payload byte %d flipped still verifies", i)
				}
			}
			for i := range sig {
				e := env
				sg := append([]byte(nil), sig...)
				sg[i] ^= 0x01
				e.Signatures = []dsse.Signature{{KeyID: env.Signatures[0].KeyID, Sig: base64.StdEncoding.EncodeToString(sg)}}
				b, _ := json.Marshal(e)
				if res, err := record.Verify(context.Background(), b, v, ""); err == nil && res.OK() {
					t.Fatalf("signature byte %d flipped still verifies", i)
				}
			}

			// Flipping any byte of an evidence file fails, naming the file.
			path := filepath.Join(dir, "inventory.nvidia-smi-query.log")
			orig, _ := os.ReadFile(path)
			for i := range orig {
				b := append([]byte(nil), orig...)
				b[i] ^= 0x01
				_ = os.WriteFile(path, b, 0o644)
				res, _ := record.Verify(context.Background(), rec, v, dir)
				if res.OK() || !strings.Contains(strings.Join(res.Problems, ";"), "inventory.nvidia-smi-query.log") {
					t.Fatalf("evidence byte %d flipped: %v", i, res.Problems)
				}
			}
			_ = os.Remove(path)
			if res, _ := record.Verify(context.Background(), rec, v, dir); res.OK() {
				t.Error("missing evidence verifies")
			}
		})
	}
}

// verify says in the operator's terms why a signature failed: another key
// signed the record, or the record changed after signing (not the DSSE
// library's "accepted signatures do not match threshold").
func TestVerifySignatureProblemSaysWhy(t *testing.T) {
	dir := t.TempDir()
	s, v := keyPair(t, record.KeyEd25519)
	rec := signed(t, testPredicate(t, dir), s)
	signer, _ := s.KeyID()

	_, other := keyPair(t, record.KeyEd25519)
	otherID, _ := other.KeyID()
	res, err := record.Verify(context.Background(), rec, other, "")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(res.Problems, ";")
	if !strings.Contains(got, "signed by key "+signer[:16]) || !strings.Contains(got, "not by the given key "+otherID[:16]) || strings.Contains(got, "threshold") {
		t.Errorf("another key: %q", got)
	}

	var env dsse.Envelope
	_ = json.Unmarshal(rec, &env)
	payload, _ := base64.StdEncoding.DecodeString(env.Payload)
	env.Payload = base64.StdEncoding.EncodeToString(bytes.Replace(payload, []byte(`"PASS"`), []byte(`"FAIL"`), 1))
	b, _ := json.Marshal(env)
	res, _ = record.Verify(context.Background(), b, v, "")
	if got := strings.Join(res.Problems, ";"); !strings.Contains(got, "changed after it was signed") {
		t.Errorf("changed payload: %q", got)
	}

	env.Signatures = nil
	b, _ = json.Marshal(env)
	res, _ = record.Verify(context.Background(), b, v, "")
	if got := strings.Join(res.Problems, ";"); !strings.Contains(got, "no signature") {
		t.Errorf("no signature: %q", got)
	}
}
