package rules

import (
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
)

func TestApplyWaivers(t *testing.T) {
	fs := []diag.Finding{
		{Rule: RuleDriverEOL, Severity: diag.SeverityWarning, Path: "spec.nodePools[0].gpu.driver", Sources: []string{}},
		{Rule: RuleDriverEOL, Severity: diag.SeverityWarning, Path: "spec.nodePools[1].gpu.driver", Sources: []string{}},
		{Rule: RuleCUDAMinorCompat, Severity: diag.SeverityWarning, Path: "spec.nodePools[0].gpu.driver", Sources: []string{}},
	}
	ws := []spec.Waiver{
		{Rule: "driver-eol", Path: "spec.nodePools[0].*", Reason: "upgrade planned in Q1", Expires: "2026-12-31"},
		{Rule: RuleCUDAMinorCompat, Path: "", Reason: "old", Expires: "2026-11-28"},
		{Rule: "NO-SUCH-RULE", Reason: "x", Expires: "2027-01-01"},
		{Rule: RuleDriverEOL, Reason: "x", Expires: "soon"},
		{Rule: RuleCUDAMinorCompat, Path: "spec.nodePools[0].gpu.driver", Reason: "until the day", Expires: "2026-11-29"},
	}
	out := ApplyWaivers(fs, ws, asOf20261129)
	if fs[0].Severity != diag.SeverityWarning {
		t.Error("ApplyWaivers modified its input")
	}
	get := func(rule, path string) *diag.Finding {
		for i := range out {
			if out[i].Rule == rule && out[i].Path == path {
				return &out[i]
			}
		}
		return nil
	}
	if f := get(RuleDriverEOL, "spec.nodePools[0].gpu.driver"); f == nil || f.Severity != diag.SeverityInfo || f.Waiver != "upgrade planned in Q1" {
		t.Errorf("prefix waiver not applied: %+v", f)
	}
	if f := get(RuleDriverEOL, "spec.nodePools[1].gpu.driver"); f == nil || f.Severity != diag.SeverityWarning {
		t.Errorf("waiver applied beyond its prefix: %+v", f)
	}
	if f := get(RuleCUDAMinorCompat, "spec.nodePools[0].gpu.driver"); f == nil || f.Severity != diag.SeverityInfo || f.Waiver != "until the day" {
		t.Errorf("waiver on its expiry day not applied: %+v", f)
	}
	if f := get(RuleWaiverExpired, "spec.waivers[1]"); f == nil || f.Severity != diag.SeverityWarning {
		t.Errorf("expired waiver not reported: %v", out)
	}
	if f := get(RuleWaiverInvalid, "spec.waivers[2].rule"); f == nil {
		t.Errorf("unknown rule not reported: %v", out)
	}
	if f := get(RuleWaiverInvalid, "spec.waivers[3].expires"); f == nil {
		t.Errorf("bad date not reported: %v", out)
	}
	for i := 1; i < len(out); i++ {
		if out[i-1].Path > out[i].Path {
			t.Errorf("not sorted by path: %s before %s", out[i-1].Path, out[i].Path)
		}
	}
}
