package rules

import (
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
	"github.com/gpuctl/gpuctl/internal/spec/spectest"
)

func ptr[T any](v T) *T { return &v }

func TestCheck(t *testing.T) {
	at := Options{AsOf: asOf20261129}
	for _, c := range []struct {
		q    Query
		rule string
		sev  diag.Severity
	}{
		{Query{GPU: "H100", Driver: "535.129.03", CUDA: "12.4"}, RuleCUDAMinorCompat, diag.SeverityWarning},
		{Query{GPU: "H100", Driver: "535.129.03", CUDA: "12.4"}, RuleDriverEOL, diag.SeverityWarning},
		{Query{GPU: "GH200", KernelModules: "proprietary"}, RuleGPUOpenModules, diag.SeverityError},
		{Query{GPU: "RTX 4090", Driver: "535.309.01", CUDA: "12.8", CUDACompat: "12.8"}, RuleCUDAForwardCompat, diag.SeverityError},
		{Query{GPU: "L4", MIGProfile: "1g.6gb"}, RuleMIGUnsupported, diag.SeverityError},
		{Query{GPU: "nope"}, RuleGPUUnknown, diag.SeverityError},
		{Query{Driver: "x.y"}, RuleSpecVersion, diag.SeverityError},
		{Query{CUDA: "12.7"}, RuleCUDAUnknown, diag.SeverityError},
	} {
		fs := Check(c.q, at)
		if !hasFinding(fs, c.rule, c.sev) {
			t.Errorf("Check(%+v): want %s %s, got:\n%s", c.q, c.sev, c.rule, dump(fs))
		}
	}
	if fs := Check(Query{GPU: "H100", Driver: "580.173.02", CUDA: "12.4"}, at); len(fs) != 0 {
		t.Errorf("a good combination has findings:\n%s", dump(fs))
	}
	fs := Check(Query{GPU: "H100", Driver: "535.129.03", CUDA: "12.4"}, at)
	for _, f := range fs {
		if f.Path != "driver" && f.Path != "cuda" && f.Path != "gpu" {
			t.Errorf("Check finding path %q", f.Path)
		}
	}
}

func TestValidateNil(t *testing.T) {
	if fs := Validate(nil, Options{}); fs == nil || len(fs) != 0 {
		t.Errorf("Validate(nil) = %v", fs)
	}
}

// Options.Policy is the --policy default; spec.policy overrides it field by
// field.
func TestPolicyOverride(t *testing.T) {
	cs := spectest.EKS()
	cs.Spec.Tags, cs.Spec.NodePools[0].Taints = nil, nil
	org := &spec.Policy{RequiredTags: []string{"team"}, RequiredTaints: []string{"nvidia.com/gpu=present:NoSchedule"}}
	fs := Validate(cs, Options{AsOf: asOf20261129, Policy: org})
	if !hasFinding(fs, RulePolicyCostTags, diag.SeverityWarning) || !hasFinding(fs, RulePolicyTaint, diag.SeverityWarning) {
		t.Fatalf("org policy alone:\n%s", dump(fs))
	}
	cs.Spec.Policy = &spec.Policy{RequiredTags: []string{}}
	fs = Validate(cs, Options{AsOf: asOf20261129, Policy: org})
	if hasFinding(fs, RulePolicyCostTags, "") || !hasFinding(fs, RulePolicyTaint, diag.SeverityWarning) {
		t.Fatalf("spec.policy overriding requiredTags:\n%s", dump(fs))
	}
}

func TestRulesCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.ID] {
			t.Errorf("duplicate rule %s", r.ID)
		}
		seen[r.ID] = true
		if r.Title == "" || r.Summary == "" || r.Long == "" || r.Fix == "" {
			t.Errorf("rule %s lacks title, summary, long or fix", r.ID)
		}
		switch r.Severity {
		case diag.SeverityError, diag.SeverityWarning, diag.SeverityInfo:
		default:
			t.Errorf("rule %s severity %q", r.ID, r.Severity)
		}
	}
	if r, ok := LookupRule("cuda-driver-min"); !ok || r.ID != RuleCUDADriverMin {
		t.Error("LookupRule is not case-insensitive")
	}
	if got := NearestRules("CUDA-DRIVER-MINIMUM", 1); len(got) != 1 || got[0] != RuleCUDADriverMin {
		t.Errorf("NearestRules = %v", got)
	}
}
