package matrix

import (
	"strings"
	"testing"
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
	floors, src, asOf := MinorCompatFloors()
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
