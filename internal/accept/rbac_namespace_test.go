package accept

import (
	"slices"
	"testing"
)

// Creating the probe namespace is --create-namespace's permission alone:
// without it (the generated sweep, accept --dry-run --bind) the ClusterRole
// only reads the namespace.
func TestRBACCreateNamespaceOnlyWhenAsked(t *testing.T) {
	verbs := func(f RBACFeatures) []string {
		_, cr := BuildRBACFor("gpuctl", f)
		for _, r := range cr.Rules {
			if slices.Contains(r.Resources, "namespaces") {
				return r.Verbs
			}
		}
		return nil
	}
	for _, f := range []RBACFeatures{{}, {Sweep: true, RecordsConfigMap: true}, {Mark: true, Multi: true}} {
		if got := verbs(f); !slices.Equal(got, []string{"get"}) {
			t.Errorf("%+v: namespaces %v, want [get]", f, got)
		}
	}
	if got := verbs(RBACFeatures{Sweep: true, CreateNamespace: true}); !slices.Equal(got, []string{"get", "create"}) {
		t.Errorf("CreateNamespace: namespaces %v, want [get create]", got)
	}
}
