package check

import "testing"

// TestInScope: which manifest entries a run of a layer and environment
// writes or would once have written.
func TestInScope(t *testing.T) {
	for _, c := range []struct {
		path, layer, env string
		want             bool
	}{
		{"terraform/prod/node_pools.tf", LayerAll, "", true},
		{"terraform/prod/node_pools.tf", LayerTerraform, "", true},
		{"terraform/prod/node_pools.tf", LayerHelm, "", false},
		{"terraform/prod/node_pools.tf", LayerAll, "prod", true},
		{"terraform/prod/node_pools.tf", LayerAll, "dev", false},
		{"helm/base/gpu-operator.values.yaml", LayerAll, "", true},
		{ManifestName, LayerAll, "", false},
		{"elsewhere/x/y.txt", LayerAll, "", false},
		{"terraform/../../etc/passwd", LayerAll, "", false},
		{"terraform/x.tf", LayerAll, "", false},
	} {
		if got := InScope(c.path, c.layer, c.env); got != c.want {
			t.Errorf("InScope(%q, %q, %q) = %v, want %v", c.path, c.layer, c.env, got, c.want)
		}
	}
}
