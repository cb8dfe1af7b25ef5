package helmgen

import (
	"path/filepath"
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestNamespacesOnlyFromTeams: the team tag makes no namespace, quota or
// NetworkPolicy. eks-inference-as-written.yaml carries tags.team and no
// teams; its corrected form lists the team, which gets them.
func TestNamespacesOnlyFromTeams(t *testing.T) {
	for _, c := range []struct {
		file string
		want int // namespaces
	}{
		{"eks-inference-as-written.yaml", 0},
		{"eks-inference.yaml", 1},
	} {
		doc, err := spec.Load(filepath.Join("..", "..", "examples", c.file), nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := doc.Resolve("")
		if err != nil {
			t.Fatal(err)
		}
		if cs.Spec.Tags["team"] == "" {
			t.Fatalf("%s: no team tag: the case tests nothing", c.file)
		}
		m, err := buildManifests(cs)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if len(m.namespaces) != c.want || len(m.quotas) != c.want || (c.want == 0) != (len(m.policies) == 0) {
			t.Errorf("%s: %d namespaces, %d quotas, %d NetworkPolicies; want %d namespaces and quotas", c.file, len(m.namespaces), len(m.quotas), len(m.policies), c.want)
		}
		for _, ns := range m.namespaces {
			if !teamListed(cs.Spec.Teams, ns.Name) {
				t.Errorf("%s: namespace %s is no team of spec.teams", c.file, ns.Name)
			}
		}
	}
}

func teamListed(teams []spec.Team, name string) bool {
	for _, t := range teams {
		if t.Name == name {
			return true
		}
	}
	return false
}
