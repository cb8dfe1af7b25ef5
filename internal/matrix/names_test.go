package matrix

import (
	"strings"
	"testing"
)

// A name the catalogue holds in two spellings (a product alias "NVIDIA-L4"
// and GKE's accelerator type "nvidia-l4") is suggested once.
func TestNearestListsANameOnceWhateverItsCase(t *testing.T) {
	got := nearest("nvidia-l5", []string{"nvidia-l4", "NVIDIA-L4", "nvidia-t4", "L4"}, 3)
	seen := map[string]string{}
	for _, g := range got {
		if prev, ok := seen[strings.ToLower(g)]; ok {
			t.Fatalf("nearest = %q: %q and %q are one name", got, prev, g)
		}
		seen[strings.ToLower(g)] = g
	}
	if len(got) != 3 || !strings.EqualFold(got[0], "nvidia-l4") {
		t.Fatalf("nearest = %q, want nvidia-l4 first and three names", got)
	}
}

func TestNearestGPUsNoCaseDuplicates(t *testing.T) {
	got := NearestGPUs("nvidia-l5", 3)
	seen := map[string]bool{}
	for _, g := range got {
		if seen[strings.ToLower(g)] {
			t.Fatalf("NearestGPUs = %q lists a name twice", got)
		}
		seen[strings.ToLower(g)] = true
	}
}
