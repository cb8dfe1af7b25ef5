package check

import (
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/rules/rulecases"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// The rule case table (package rulecases) through the document pipeline:
// every case, so that what rules.Validate reports (rules' TestCaseTable)
// is what validate, generate and plan report, and the pipeline's own
// findings (generation, hand edits of the generated files) are held to
// the same severity contract.

// findings judges a case's input through Document, as of its date; a query
// through rules.Check.
func findings(t *testing.T, in rulecases.Input) []diag.Finding {
	t.Helper()
	switch {
	case in.Query != nil:
		return rules.Check(*in.Query, rules.Options{AsOf: in.Date()})
	case in.Edited:
		return editedFindings(t, in)
	case in.Unwritable:
		t.Skip("the spec has no YAML file form; rules' TestCaseTable judges it")
	}
	res, err := Document(docOf(t, in.Spec()), Options{AsOf: in.Date(), Policy: in.Policy, Generate: in.Generate, Unknown: in.Unknown})
	if err != nil {
		t.Fatal(err)
	}
	return res.Findings
}

// editedFindings builds the layers of the case's clean spec, then changes
// the spec the layers are checked against, as a hand edit of the generated
// Terraform would.
func editedFindings(t *testing.T, in rulecases.Input) []diag.Finding {
	t.Helper()
	cs := in.Base()
	cs.Spec.Addons.DCGMExporter.Enabled = true
	l, err := helmgen.Build(cs)
	if err != nil {
		t.Fatal(err)
	}
	if fs, err := l.Check(); err != nil || len(fs) != 0 {
		t.Fatalf("layers of the clean spec: %v\n%s", err, dump(fs))
	}
	in.Mod(cs, &cs.Spec.NodePools[0])
	fs, err := l.Check()
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// docOf writes cs as YAML and reads it back as a document, as a spec file.
func docOf(t *testing.T, cs *spec.ClusterSpec) *spec.Document {
	t.Helper()
	b, err := yaml.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := spec.Parse("spec.yaml", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return doc
}

func TestSeverityBasesAreClean(t *testing.T) {
	for name, b := range rulecases.Bases {
		for _, f := range findings(t, rulecases.Input{Base: b}) {
			if f.Severity != diag.SeverityInfo {
				t.Errorf("%s base: %s %s %s: %s", name, f.Severity, f.Rule, f.Path, f.Message)
			}
		}
	}
}

func TestSeverityCases(t *testing.T) {
	for _, c := range rulecases.Cases {
		t.Run(c.Rule+"/"+string(c.Sev)+"/"+c.Name, func(t *testing.T) {
			r, ok := rules.LookupRule(c.Rule)
			if !ok {
				t.Fatalf("unknown rule %s", c.Rule)
			}
			if !c.Quiet && !r.Emits(c.Sev) {
				t.Fatalf("%s does not declare severity %s (declare it in the rule's Also)", c.Rule, c.Sev)
			}
			fs := findings(t, c.In)
			assertDeclared(t, fs)
			if msg := rulecases.Judge(c, fs); msg != "" {
				t.Errorf("%s, got:\n%s", msg, dump(fs))
			}
		})
	}
	for _, miss := range rulecases.Uncovered() {
		t.Error(miss)
	}
}

// assertDeclared fails for a finding whose rule does not declare its
// severity (waived findings are info by the waiver, not the rule).
func assertDeclared(t *testing.T, fs []diag.Finding) {
	t.Helper()
	for _, f := range fs {
		if f.Waiver != "" {
			continue
		}
		r, ok := rules.LookupRule(f.Rule)
		if !ok {
			t.Errorf("finding of unknown rule %s", f.Rule)
			continue
		}
		if !r.Emits(f.Severity) {
			t.Errorf("%s reported %s, which it does not declare: %s", f.Rule, f.Severity, f.Message)
		}
	}
}
