package rules_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/rules/rulecases"
)

// validate judges a case's input as the rules package alone does: Validate
// and the spec's waivers, or Check for a query.
func validate(in rulecases.Input) []diag.Finding {
	opts := rules.Options{AsOf: in.Date(), Policy: in.Policy, Unknown: in.Unknown}
	if in.Query != nil {
		return rules.Check(*in.Query, opts)
	}
	cs := in.Spec()
	return rules.ApplyWaivers(rules.Validate(cs, opts), cs.Spec.Waivers, in.Date())
}

func TestCaseBasesAreClean(t *testing.T) {
	for name, b := range rulecases.Bases {
		for _, f := range validate(rulecases.Input{Base: b}) {
			if f.Severity != diag.SeverityInfo {
				t.Errorf("%s base: %s %s %s", name, f.Rule, f.Path, f.Message)
			}
		}
	}
}

// TestCaseTable runs the rule case table through the validator; package
// check runs it through the document pipeline.
func TestCaseTable(t *testing.T) {
	for _, c := range rulecases.Cases {
		if c.PipelineOnly() {
			continue // check's TestSeverityCases
		}
		t.Run(c.Rule+"/"+string(c.Sev)+"/"+c.Name, func(t *testing.T) {
			if _, ok := rules.LookupRule(c.Rule); !ok {
				t.Fatalf("unknown rule %s", c.Rule)
			}
			fs := validate(c.In)
			for _, f := range fs {
				if f.Path == "" && f.Rule != rules.RuleDataStale || f.Message == "" || f.Fix == "" || f.Sources == nil {
					t.Errorf("incomplete finding %+v", f)
				}
				if r, _ := rules.LookupRule(f.Rule); f.Waiver == "" && !r.Emits(f.Severity) {
					t.Errorf("%s reported %s, which the rule does not declare (Severity, Also): %s", f.Rule, f.Severity, f.Message)
				}
			}
			if msg := rulecases.Judge(c, fs); msg != "" {
				t.Errorf("%s, got:\n%s", msg, dump(fs))
			}
		})
	}
}

// TestCaseTableCoversRules: every rule and every severity it declares has
// a case.
func TestCaseTableCoversRules(t *testing.T) {
	for _, miss := range rulecases.Uncovered() {
		t.Error(miss)
	}
}

func dump(fs []diag.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %s %s: %s\n", f.Severity, f.Rule, f.Path, f.Message)
	}
	return b.String()
}
