package cli

import (
	"testing"
	"time"
)

// The runs of a fleet get different run ids, also from a random source
// that repeats itself.
func TestRunIDsAreDistinct(t *testing.T) {
	now := time.Date(2026, 11, 29, 15, 44, 0, 0, time.UTC)
	for name, random := range map[string]func() uint16{
		"fixed":   func() uint16 { return 0xa1b2 },
		"cycling": cycle(0xffff, 0, 0xffff, 1),
	} {
		f := &Factory{Now: func() time.Time { return now }, Random: random}
		ids := f.runIDs(500)
		if len(ids) != 500 {
			t.Fatalf("%s: %d ids, want 500", name, len(ids))
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("%s: run id %s given twice", name, id)
			}
			seen[id] = true
		}
		if name == "fixed" && (ids[0] != "20261129t154400-a1b2" || ids[1] != "20261129t154400-a1b3") {
			t.Errorf("fixed: first ids %s, %s; want the source's value, then the next", ids[0], ids[1])
		}
	}
}

func cycle(vals ...uint16) func() uint16 {
	i := 0
	return func() uint16 {
		v := vals[i%len(vals)]
		i++
		return v
	}
}
