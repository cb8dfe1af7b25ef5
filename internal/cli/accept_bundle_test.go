package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/record"
)

// TestAcceptEvidenceURI: --evidence-uri writes the node's bundle, names it
// in the record with its sha256 and the URI, and says so in the summary; a
// URI without a scheme is a usage error.
func TestAcceptEvidenceURI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := markClient(nil, markNodeObjects("gpu-node-1", true)...)
	args := []string{"accept", "gpu-node-1", "--stages", "kubernetes", "--evidence-dir", dir, "--evidence-uri", "s3://acme-gpu-evidence/accept/", "-q"}
	streams, _, _, errOut := TestStreams()
	if code := RunWithFactory(context.Background(), args, streams, fakeFactory(c)); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "gpu-node-1", "*", accept.StatementFile))
	if len(runs) != 1 {
		t.Fatalf("records %v", runs)
	}
	rec, err := record.ReadFile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	b := rec.Predicate.EvidenceBundle
	if b == nil || b.URI != "s3://acme-gpu-evidence/accept/" || !strings.HasPrefix(b.Name, "evidence-gpu-node-1-") {
		t.Fatalf("bundle %+v", b)
	}
	if p := record.CheckBundle(filepath.Dir(runs[0]), b); len(p) != 0 {
		t.Error(p)
	}
	if want := "(sha256 " + b.SHA256 + ") -> s3://acme-gpu-evidence/accept/"; !strings.Contains(errOut.String(), "evidence bundle: ") || !strings.Contains(errOut.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, errOut)
	}

	streams, _, _, errOut = TestStreams()
	bad := []string{"accept", "gpu-node-1", "--evidence-dir", dir, "--evidence-uri", "acme-gpu-evidence/accept"}
	if code := RunWithFactory(context.Background(), bad, streams, fakeFactory(c)); code != ExitUsage || !strings.Contains(errOut.String(), "SCHEME://LOCATION") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
