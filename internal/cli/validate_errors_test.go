package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// validateDoc runs validate on args (in dir) and returns its exit code,
// stdout and stderr.
func validateDoc(t *testing.T, dir string, args ...string) (int, []byte, string) {
	t.Helper()
	t.Chdir(dir)
	streams, _, out, errOut := TestStreams()
	code := Run(context.Background(), append([]string{"validate"}, args...), streams)
	return code, out.Bytes(), errOut.String()
}

// TestValidateErrorDocuments: an input validate cannot read, or a wrong
// use of it, is a finding of the -o json and -o sarif documents (rule,
// error, file:line:column where known), with exit 2 and stderr's one
// error line as for -o table, which still writes nothing on stdout.
func TestValidateErrorDocuments(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("tab.yaml", "apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: t}\nspec:\n  nodePools:\n\t- name: a\n")
	write("bad.tf", "resource \"google_container_cluster\" \"x\" {\n  name = \n}\n")
	cases := []struct {
		name       string
		args       []string
		rule, file string
		line, col  int
		stderr     string
	}{
		{"tab", []string{"tab.yaml"}, ruleSpecDecode, "tab.yaml", 6, 1, "error: tab.yaml:6:1: tab character"},
		{"missing file", []string{"missing.yaml"}, ruleSpecDecode, "missing.yaml", 0, 0, "error: missing.yaml: cannot read spec"},
		{"HCL syntax", []string{"bad.tf"}, ruleImportDecode, "bad.tf", 2, 10, "error: bad.tf:2:10: Invalid expression"},
		{"unknown flag after -o", []string{"--no-such-flag", "tab.yaml"}, ruleUsage, "", 0, 0, "error: unknown flag: --no-such-flag"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := validateDoc(t, dir, c.args...)
			if code != ExitUsage || len(out) != 0 || !strings.HasPrefix(errOut, c.stderr) {
				t.Errorf("table: exit %d, stdout %q, stderr %q; want 2, nothing, %q", code, out, errOut, c.stderr)
			}
			code, out, errOut2 := validateDoc(t, dir, append([]string{"-o", "json"}, c.args...)...)
			var rep struct {
				Kind     string `json:"kind"`
				Findings []struct {
					Rule, Severity, File string
					Line, Column         int
				} `json:"findings"`
				Summary struct{ Errors int } `json:"summary"`
			}
			if err := json.Unmarshal(out, &rep); err != nil || code != ExitUsage || errOut2 != errOut {
				t.Fatalf("json: exit %d, %v, stderr %q (table's %q):\n%s", code, err, errOut2, errOut, out)
			}
			if len(rep.Findings) != 1 || rep.Summary.Errors != 1 || rep.Kind != "ValidationReport" {
				t.Fatalf("json: %s", out)
			}
			f := rep.Findings[0]
			if f.Rule != c.rule || f.Severity != "error" || f.File != c.file || f.Line != c.line || f.Column != c.col {
				t.Errorf("finding %+v, want %s at %s:%d:%d", f, c.rule, c.file, c.line, c.col)
			}
			code, out, _ = validateDoc(t, dir, append([]string{"-o", "sarif"}, c.args...)...)
			log, err := sarif.FromBytes(out)
			if err != nil || code != ExitUsage {
				t.Fatalf("sarif: exit %d, %v", code, err)
			}
			if err := log.Validate(); err != nil {
				t.Errorf("sarif: not SARIF 2.1.0: %v", err)
			}
			if r := log.Runs[0].Results; len(r) != 1 || *r[0].RuleID != c.rule || len(r[0].Locations) != 1 {
				t.Errorf("sarif results: %s", out)
			}
		})
	}
}

// TestUsageDocumentReadsOutputAnywhere: -o after the flag that stopped
// parsing, and GPUCTL_OUTPUT, still ask for the document; -o table and an
// unknown format get none.
func TestUsageDocumentReadsOutputAnywhere(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		env  string
		doc  bool
	}{
		{[]string{"--no-such-flag", "-o", "json", "x.yaml"}, "", true},
		{[]string{"--no-such-flag", "--output=sarif", "x.yaml"}, "", true},
		{[]string{"--no-such-flag", "x.yaml"}, "json", true},
		{[]string{}, "yaml", true},
		{[]string{"--no-such-flag", "-o", "table", "x.yaml"}, "json", false},
		{[]string{"-o", "xml", "x.yaml"}, "", false},
	} {
		t.Setenv("GPUCTL_OUTPUT", c.env)
		code, out, errOut := validateDoc(t, dir, c.args...)
		if code != ExitUsage || (len(out) > 0) != c.doc || !strings.HasPrefix(errOut, "error: ") {
			t.Errorf("%v (GPUCTL_OUTPUT=%q): exit %d, stdout %q, stderr %q; want a document: %v", c.args, c.env, code, out, errOut, c.doc)
		}
	}
}
