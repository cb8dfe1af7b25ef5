// Package golden is the test harness the generators share: the example specs
// they generate from, and golden files compared with cmp.Diff and rewritten
// with -update. Only tests import it.
package golden

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Example is one environment of one example spec.
type Example struct {
	// Name is the example's file name without ".yaml".
	Name string
	// Env is the environment, "" for the base spec.
	Env string
	// Dir is the example's golden folder: Name/Env, or Name/base.
	Dir string
	// Spec is the resolved spec of Env.
	Spec *spec.ClusterSpec
}

// ValidExamples returns every environment of every spec matching pattern
// (a filepath.Glob pattern, e.g. "../../examples/*.yaml") that has no error
// finding from the matrix rules at asOf, sorted by file. It fails the test
// when the pattern is malformed, a spec does not load or resolve, or nothing
// is left: a golden test over no example proves nothing.
func ValidExamples(t testing.TB, pattern string, asOf time.Time) []Example {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatalf("%s: %v", pattern, err)
	}
	sort.Strings(paths)
	var out []Example
	for _, p := range paths {
		doc, err := spec.Load(p, nil)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".yaml")
		for _, env := range append([]string{""}, doc.Environments()...) {
			cs, err := doc.Resolve(env)
			if err != nil {
				t.Fatalf("%s: environment %q: %v", p, env, err)
			}
			if diag.Summarize(rules.Validate(cs, rules.Options{AsOf: asOf})).Errors > 0 {
				continue
			}
			dir := env
			if dir == "" {
				dir = "base"
			}
			out = append(out, Example{Name: name, Env: env, Dir: filepath.Join(name, dir), Spec: cs})
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no example spec without errors", pattern)
	}
	return out
}

// Compare holds got to the golden file at path: with update it rewrites the
// file (creating its folder) instead; otherwise a missing file or any
// difference fails the test with a -want +got diff.
func Compare(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
