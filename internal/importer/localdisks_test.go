package importer

import (
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestImportKeepsNoLocalDisks: a Terraform A3 Mega training pool (COMPACT
// placement: multi-node training) that sets up no Local SSDs imports as
// localStorage: none, so that generate keeps its nodes as they are (gpuctl's
// default for such a pool is raid0 on all 16 SSDs, which replaces a GKE
// node pool); the same pool with ephemeral_storage_local_ssd_config
// imports as raid0, and a cluster-toolkit blueprint pool, whose module
// gives A3 machines their SSDs by default, keeps the default.
func TestImportKeepsNoLocalDisks(t *testing.T) {
	pool := func(extra string) string {
		return `resource "google_container_node_pool" "train" {
  name           = "train"
  cluster        = "c"
  location       = "us-central1"
  node_locations = ["us-central1-a"]
  autoscaling {
    total_min_node_count = 0
    total_max_node_count = 4
  }
  placement_policy {
    type = "COMPACT"
  }
  node_config {
    machine_type = "a3-megagpu-8g"
` + extra + `
    guest_accelerator {
      type  = "nvidia-h100-mega-80gb"
      count = 8
    }
  }
}
`
	}
	for _, c := range []struct {
		name, extra, want string
	}{
		{"no local SSDs", "", spec.LocalStorageNone},
		{"ephemeral local SSDs", "    ephemeral_storage_local_ssd_config {\n      local_ssd_count = 16\n    }", spec.LocalStorageRAID0},
	} {
		dir := moduleTree(t, map[string]string{"main.tf": pool(c.extra)})
		res, err := Import([]string{dir}, Options{Root: dir})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Spec.Spec.NodePools[0]
		if p.Role != spec.RoleTraining || p.LocalStorage != c.want {
			t.Errorf("%s: role %q, localStorage %q, want training and %q", c.name, p.Role, p.LocalStorage, c.want)
		}
	}
	dir := moduleTree(t, map[string]string{"bp.yaml": `blueprint_name: b
vars: {project_id: p, deployment_name: d, region: us-central1, zone: us-central1-a}
deployment_groups:
- group: primary
  modules:
  - id: gke
    source: modules/scheduler/gke-cluster
  - id: pool
    source: modules/compute/gke-node-pool
    use: [gke]
    settings:
      name: train
      machine_type: a3-megagpu-8g
      zones: [$(vars.zone)]
      placement_policy: {type: COMPACT}
      autoscaling_total_max_nodes: 4
`})
	res, err := Import([]string{dir}, Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Spec.Spec.NodePools[0]; p.LocalStorage != "" {
		t.Errorf("blueprint pool: localStorage %q, want unset (the module's default Local SSDs, as gpuctl's)", p.LocalStorage)
	}
}
