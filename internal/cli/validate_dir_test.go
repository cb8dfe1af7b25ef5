package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestValidateExamplesFolder: validate examples/ validates every shipped
// spec, each with its result, and exits with the worst of them (3: the
// as-written examples have errors); nothing in it is skipped.
func TestValidateExamplesFolder(t *testing.T) {
	specs, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil || len(specs) == 0 {
		t.Fatalf("examples: %v %v", specs, err)
	}
	streams, _, out, errOut := TestStreams()
	code := Run(context.Background(), []string{"validate", "--as-of", "2026-11-29", "-o", "json", filepath.Join("..", "..", "examples")}, streams)
	var rep struct {
		Results []struct {
			File, From string
			Summary    struct{ Errors int }
		} `json:"results"`
		Skipped []struct{ File string } `json:"skipped"`
		Summary struct{ Errors int }    `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || code != ExitCheckFailed {
		t.Fatalf("exit %d, %v; stderr %s", code, err, errOut)
	}
	if len(rep.Results) != len(specs) || len(rep.Skipped) != 0 {
		t.Fatalf("%d results and %d skipped for %d specs", len(rep.Results), len(rep.Skipped), len(specs))
	}
	errs := 0
	for i, r := range rep.Results {
		if r.File != specs[i] || r.From != "spec" {
			t.Errorf("result %d: %s as %s, want %s as spec", i, r.File, r.From, specs[i])
		}
		errs += r.Summary.Errors
	}
	if errs == 0 || errs != rep.Summary.Errors {
		t.Errorf("results count %d errors, the summary %d", errs, rep.Summary.Errors)
	}
}
