package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// TestValidationFiles: a folder's files are one line each above the
// summary (counts, or skipped with the reason) and "results"/"skipped" in
// JSON ([] when none); one file alone gets no such line.
func TestValidationFiles(t *testing.T) {
	fs := []diag.Finding{{Rule: "MACHINE-ACCELERATOR", Severity: diag.SeverityError, File: "d/a.yaml", Line: 3, Column: 1}}
	r := NewValidationReport("gpuctl.dev/v1alpha1", []string{"d"}, "2026-12-01", []string{""}, fs)
	r.Results = []FileResult{NewFileResult("d/a.yaml", "spec", fs), NewFileResult("d/b.yaml", "spec", nil)}
	r.Skipped = []SkippedFile{{File: "d/values.yaml", Reason: "no apiVersion and kind"}}
	var b bytes.Buffer
	if err := ValidationText(&b, r, Styles{}, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nd/a.yaml       spec     1 error(s), 0 warning(s), 0 info\n", "\nd/b.yaml       spec     0 error(s)", "\nd/values.yaml  skipped  no apiVersion and kind\nFAILED: 1 error(s)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	js, _ := json.Marshal(r)
	if !strings.Contains(string(js), `"results":[{"file":"d/a.yaml","from":"spec","summary":{"errors":1,`) || !strings.Contains(string(js), `"skipped":[{"file":"d/values.yaml","reason":"no apiVersion and kind"}]`) {
		t.Errorf("JSON %s", js)
	}
	one := NewValidationReport("gpuctl.dev/v1alpha1", []string{"a.yaml"}, "2026-12-01", []string{""}, nil)
	one.Results = []FileResult{NewFileResult("a.yaml", "spec", nil)}
	b.Reset()
	_ = ValidationText(&b, one, Styles{}, false)
	if strings.Contains(b.String(), " spec ") {
		t.Errorf("one file: %q", b.String())
	}
	js, _ = json.Marshal(NewValidationReport("gpuctl.dev/v1alpha1", nil, "2026-12-01", nil, nil))
	if !strings.Contains(string(js), `"results":[]`) || !strings.Contains(string(js), `"skipped":[]`) {
		t.Errorf("empty JSON %s", js)
	}
}
