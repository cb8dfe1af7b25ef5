package hclgen

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// testMachines stands in for the catalogue of package matrix in these tests:
// only the machine types the examples use, with their published facts
// (clouds.yaml in the shared reference material).
var testMachines = map[string]Machine{
	"gke/a3-highgpu-8g":  {AcceleratorType: "nvidia-h100-80gb", GPU: "H100", GPUCount: 8, Arch: "amd64"},
	"gke/g2-standard-24": {AcceleratorType: "nvidia-l4", GPU: "L4", GPUCount: 2, Arch: "amd64"},
	"eks/p5.48xlarge":    {GPU: "H100", GPUCount: 8, Arch: "amd64", EFA: true, NetworkCards: 32},
	"eks/g6.xlarge":      {GPU: "L4", GPUCount: 1, Arch: "amd64"},
	"eks/g6.2xlarge":     {GPU: "L4", GPUCount: 1, Arch: "amd64"},
}

func TestMain(m *testing.M) {
	LookupMachine = func(provider, name string) (Machine, bool) {
		mc, ok := testMachines[provider+"/"+name]
		return mc, ok
	}
	os.Exit(m.Run())
}

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
			if hasError(matrix.NameRules(cs)) {
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

func hasError(fs []matrix.Finding) bool {
	for _, f := range fs {
		if f.Severity == matrix.SeverityError {
			return true
		}
	}
	return false
}
