package cli

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xeipuuv/gojsonschema"

	"github.com/gpuctl/gpuctl/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// planAsOf pins the date of the plan goldens (the matrix's date rules and
// the plan's asOf).
const planAsOf = "2026-11-29"

// planCase is one `gpuctl plan` run whose table and JSON are golden.
type planCase struct {
	name string
	args []string
}

// planCases are a plan of every example spec that validates without
// errors (golden.ValidExamples: a new example is covered, and needs its
// goldens, without a change here) and --from plans with rollouts (one
// with rollout.gate sweep).
func planCases(t *testing.T) []planCase {
	var cases []planCase
	for _, ex := range golden.ValidExamples(t, filepath.Join("examples", "*.yaml"), time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)) {
		if len(cases) > 0 && cases[len(cases)-1].name == ex.Name {
			continue // one plan per file: it resolves every environment
		}
		cases = append(cases, planCase{ex.Name, []string{"plan", filepath.Join("examples", ex.Name+".yaml")}})
	}
	cases = append(cases, planCase{"from-rollout", []string{"plan", "examples/plan/new.yaml", "--from", "examples/plan/old.yaml"}},
		planCase{"from-surge", []string{"plan", "internal/plan/testdata/rollout-new.yaml", "--from", "internal/plan/testdata/rollout-old.yaml"}},
		planCase{"from-version", []string{"plan", "internal/plan/testdata/rollout-k8s.yaml", "--from", "internal/plan/testdata/rollout-old.yaml"}},
		planCase{"from-sweep", []string{"plan", "internal/plan/testdata/rollout-sweep.yaml", "--from", "internal/plan/testdata/rollout-old.yaml"}})
	return cases
}

// TestPlanGolden: `gpuctl plan` of each case as a table and as JSON, held
// to golden files in testdata/plan (go test ./internal/cli -run
// TestPlanGolden -update rewrites them); the JSON also to the hand-written
// schema in internal/plan/testdata. It runs from the repository root so
// that the plans name the specs as a user there would.
func TestPlanGolden(t *testing.T) {
	schema, err := os.ReadFile(filepath.Join("..", "plan", "testdata", "plan.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "plan"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join("..", ".."))
	cases := planCases(t)
	if !slices.ContainsFunc(cases, func(c planCase) bool { return strings.HasPrefix(c.name, "eks-") }) ||
		!slices.ContainsFunc(cases, func(c planCase) bool { return strings.HasPrefix(c.name, "gke-") }) {
		t.Fatalf("cases %v: want examples of both providers", cases)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, format := range []string{"table", "json"} {
				streams, _, out, errOut := TestStreams()
				args := append(slices.Clone(c.args), "--as-of", planAsOf, "-o", format)
				code := RunWithFactory(context.Background(), args, streams, fakeFactory(nil))
				// Without --out or a cluster a plan changes something only
				// when it compares two specs.
				want := ExitOK
				if slices.Contains(c.args, "--from") {
					want = ExitCheckFailed
				}
				if code != want {
					t.Errorf("%s -o %s: exit %d, want %d; stderr:\n%s", strings.Join(c.args, " "), format, code, want, errOut)
				}
				ext := map[string]string{"table": ".txt", "json": ".json"}[format]
				golden.Compare(t, filepath.Join(dir, c.name+ext), out.Bytes(), *update)
				if format != "json" {
					continue
				}
				r, err := gojsonschema.Validate(gojsonschema.NewBytesLoader(schema), gojsonschema.NewBytesLoader(out.Bytes()))
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range r.Errors() {
					t.Errorf("plan JSON does not match the schema: %s", e)
				}
			}
		})
	}
}
