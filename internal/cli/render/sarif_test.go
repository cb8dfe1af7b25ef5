package render

import (
	"bytes"
	"testing"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// TestValidationSARIFSchema: the log validates against SARIF 2.1.0's
// schema (go-sarif's copy), for a finding at a line, one without a line
// (an unreadable file) and one without a file (a usage error: located at
// the first PATH, as code scanning needs a location on every result).
func TestValidationSARIFSchema(t *testing.T) {
	r := NewValidationReport("gpuctl.dev/v1alpha1", []string{"a.yaml", "b.yaml"}, "2026-12-01", []string{""}, []diag.Finding{
		{Rule: "SPEC-DECODE", Severity: diag.SeverityError, Message: "tab character", File: "a.yaml", Line: 6, Column: 1},
		{Rule: "SPEC-DECODE", Severity: diag.SeverityError, Message: "cannot read spec", File: "missing.yaml"},
		{Rule: "CLI-USAGE", Severity: diag.SeverityError, Message: "unknown flag: --bogus"},
	})
	var b bytes.Buffer
	if err := ValidationSARIF(&b, r, "test", func(string) (RuleInfo, bool) { return RuleInfo{}, false }); err != nil {
		t.Fatal(err)
	}
	log, err := sarif.FromBytes(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Validate(); err != nil {
		t.Fatalf("not SARIF 2.1.0: %v\n%s", err, b.String())
	}
	res := log.Runs[0].Results
	if len(res) != 3 {
		t.Fatalf("%d results, want 3", len(res))
	}
	for i, want := range []struct {
		uri  string
		line int
	}{{"a.yaml", 0}, {"a.yaml", 6}, {"missing.yaml", 0}} { // sorted: the usage error (no file) first
		if len(res[i].Locations) != 1 {
			t.Errorf("result %d has %d locations, want 1", i, len(res[i].Locations))
			continue
		}
		pl := res[i].Locations[0].PhysicalLocation
		if got := *pl.ArtifactLocation.URI; got != want.uri {
			t.Errorf("result %d at %q, want %q", i, got, want.uri)
		}
		line := 0
		if pl.Region.StartLine != nil {
			line = *pl.Region.StartLine
		}
		if line != want.line {
			t.Errorf("result %d at line %d, want %d", i, line, want.line)
		}
	}
}
