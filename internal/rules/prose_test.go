package rules

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// TestRuleProseFacts: rule texts take their numbers from the data (every
// placeholder is filled), so the minor-compat floors are stated once.
func TestRuleProseFacts(t *testing.T) {
	for _, r := range Rules() {
		if strings.Contains(r.Long, "{") {
			t.Errorf("%s: unfilled placeholder in %q", r.ID, r.Long)
		}
	}
	r, _ := LookupRule(RuleCUDADriverMin)
	floors, src, asOf := matrix.MinorCompatFloors()
	if len(floors) < 3 || src == "" || asOf == "" {
		t.Fatalf("MinorCompatFloors() = %v, %q, %q", floors, src, asOf)
	}
	for _, f := range floors {
		if !strings.Contains(r.Long, f.Floor) {
			t.Errorf("CUDA-DRIVER-MIN does not name the %d.x floor %s: %s", f.Major, f.Floor, r.Long)
		}
	}
	if floors[1].Major != 12 || floors[1].Floor != "525.60.13" {
		t.Errorf("12.x floor = %+v", floors[1])
	}
}

// TestRuleProseFromGPUData: the GPU and driver facts in rule prose come from
// the data: each MIG minimum driver, each product's MIG profile range and
// each supported branch's end of life is named where its rule explains it,
// and no rule text restates a MIG minimum of its own.
func TestRuleProseFromGPUData(t *testing.T) {
	t.Parallel()
	long := func(id string) string {
		r, ok := LookupRule(id)
		if !ok {
			t.Fatalf("no rule %s", id)
		}
		return r.Long
	}
	migMin, profiles, unsupported, branch := long(RuleMIGDriverMin), long(RuleMIGProfile), long(RuleMIGUnsupported), long(RuleGPUDriverBranch)
	for _, g := range matrix.GPUs() {
		if g.MIG && g.MIGMinDriver != "" && !strings.Contains(migMin, g.ID+" "+g.MIGMinDriver) {
			t.Errorf("MIG-DRIVER-MIN does not name %s's %s", g.ID, g.MIGMinDriver)
		}
		if g.MIG && len(g.MIGProfiles) > 0 && !strings.Contains(profiles, g.ID+" "+g.MIGProfiles[0]) {
			t.Errorf("MIG-PROFILE does not name %s's profiles", g.ID)
		}
		if !g.MIG && !strings.Contains(unsupported, g.ID) {
			t.Errorf("MIG-UNSUPPORTED does not name %s among the GPUs without MIG", g.ID)
		}
		if g.MinDriverBranch > 0 && !strings.Contains(branch, g.ID+" ") {
			t.Errorf("GPU-DRIVER-BRANCH does not name %s's driver range", g.ID)
		}
	}
	eol := long(RuleDriverEOL)
	for _, b := range matrix.DriverBranches() {
		if b.EOL != "" && b.Type == "LTSB" && !strings.Contains(eol, b.EOL) {
			t.Errorf("DRIVER-EOL does not name R%d's end of life %s", b.Branch, b.EOL)
		}
	}
}
