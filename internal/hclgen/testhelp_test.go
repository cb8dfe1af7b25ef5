package hclgen

import (
	"flag"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// asOf pins date-dependent rules, as the reference material does.
var asOf = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// exampleSpec is one environment of one example spec that validates
// without errors.
type exampleSpec struct {
	name string // example file name without .yaml
	env  string // "" for the base spec
	dir  string // golden folder: name/env-or-base
	cs   *spec.ClusterSpec
}

// validExamples returns every environment of every example under
// ../../examples that has no error finding.
func validExamples(t *testing.T) []exampleSpec {
	t.Helper()
	paths, err := filepath.Glob("../../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	var out []exampleSpec
	for _, p := range paths {
		doc, err := spec.Load(p, nil)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".yaml")
		for _, env := range append([]string{""}, doc.Environments()...) {
			cs, err := doc.Resolve(env)
			if err != nil {
				t.Fatal(err)
			}
			if hasError(matrix.Validate(cs, matrix.Options{AsOf: asOf})) {
				continue
			}
			dir := env
			if dir == "" {
				dir = "base"
			}
			out = append(out, exampleSpec{name: name, env: env, dir: filepath.Join(name, dir), cs: cs})
		}
	}
	if len(out) == 0 {
		t.Fatal("no valid example spec found")
	}
	return out
}

func hasError(fs []diag.Finding) bool {
	for _, f := range fs {
		if f.Severity == diag.SeverityError {
			return true
		}
	}
	return false
}
