package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// corpusDir is the corpus of real tool outputs in the repository's
// testdata, relative to this package.
const corpusDir = "../../testdata/corpus"

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return data
}

// source resolves a case's file name: "testdata/..." is this package's,
// anything else is in the corpus.
func source(name string) string {
	if strings.HasPrefix(name, "testdata/") {
		return name
	}
	return filepath.Join(corpusDir, name)
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func eqp[T comparable](t *testing.T, what string, got *T, want T) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = nil, want %v", what, want)
		return
	}
	if *got != want {
		t.Errorf("%s = %v, want %v", what, *got, want)
	}
}

func isNil[T any](t *testing.T, what string, got *T) {
	t.Helper()
	if got != nil {
		t.Errorf("%s = %v, want nil (unknown)", what, *got)
	}
}

func eqSlice[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s = %v, want %v", what, got, want)
			return
		}
	}
}

func rules(h *Header) []string {
	var out []string
	for _, f := range h.Findings {
		out = append(out, f.Rule)
	}
	return out
}

func hasRule(h *Header, rule string) bool {
	for _, f := range h.Findings {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

func findingFor(h *Header, rule, gpu string) *diag.Finding {
	for i, f := range h.Findings {
		if f.Rule == rule && f.GPU == gpu {
			return &h.Findings[i]
		}
	}
	return nil
}
