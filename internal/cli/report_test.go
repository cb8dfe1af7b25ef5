package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/record"
)

func runReport(t *testing.T, tty bool, args ...string) (int, string, string) {
	t.Helper()
	streams, _, out, errOut := TestStreams()
	streams.OutTTY = tty
	code := Run(context.Background(), append([]string{"report"}, args...), streams)
	return code, out.String(), errOut.String()
}

var reportFixture = filepath.Join("..", "accept", "testdata", "statement-healthy.json")

// On a terminal without --out the page is refused, as a wrong use; piped,
// it goes to stdout.
func TestReportRefusesTerminal(t *testing.T) {
	code, out, errOut := runReport(t, true, reportFixture)
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "--out FILE, or redirect stdout") || !strings.Contains(errOut, "Run 'gpuctl report --help' for usage.") {
		t.Errorf("terminal: exit %d, %d bytes out, stderr %q", code, len(out), errOut)
	}
	if code, out, errOut := runReport(t, false, reportFixture); code != ExitOK || !strings.HasPrefix(out, "<!DOCTYPE html>") {
		t.Errorf("piped: exit %d, stderr %q", code, errOut)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := runReport(t, true, reportFixture, "--out", html); code != ExitOK {
		t.Errorf("terminal with --out: exit %d, stderr %q", code, errOut)
	}
}

// A record that is missing, malformed or too large is bad input (exit 2),
// not a wrong use: no --help hint.
func TestReportDataErrorsHaveNoUsageHint(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(bad, []byte(`{"payload": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, bytes.Repeat([]byte(" "), record.MaxRecordBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.json"), bad, big} {
		code, _, errOut := runReport(t, false, path)
		if code != ExitUsage || !strings.Contains(errOut, path) || strings.Contains(errOut, "--help") {
			t.Errorf("%s: exit %d, stderr %q", filepath.Base(path), code, errOut)
		}
	}
}

// Without --key, a record whose subject names another node than its
// predicate is flagged on the page and on stderr.
func TestReportFlagsSubjectNodeMismatch(t *testing.T) {
	data, err := os.ReadFile(reportFixture)
	if err != nil {
		t.Fatal(err)
	}
	h, err := record.Decode(reportFixture, data)
	if err != nil {
		t.Fatal(err)
	}
	name := `"name": "` + h.SubjectName + `"`
	if h.SubjectName != "node/"+h.Predicate.Node.Name || bytes.Count(data, []byte(name)) != 1 {
		t.Fatalf("fixture's subject %q, node %q", h.SubjectName, h.Predicate.Node.Name)
	}
	path := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(path, bytes.Replace(data, []byte(name), []byte(`"name": "node/someone-else"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runReport(t, false, path)
	want := `subject "node/someone-else" does not name the predicate's node (node/` + h.Predicate.Node.Name + `)`
	if code != ExitOK || !strings.Contains(errOut, "warning: "+path+": "+want) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, `<ul class="problems"><li class="s-error">subject &#34;node/someone-else&#34; does not name`) {
		t.Error("the page does not flag the mismatch")
	}
	if _, _, errOut := runReport(t, false, reportFixture); errOut != "" {
		t.Errorf("a consistent record: stderr %q", errOut)
	}
}
