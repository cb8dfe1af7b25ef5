package importer

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

func TestFabricSource(t *testing.T) {
	for _, c := range []struct {
		src, sub, ref string
		ok            bool
	}{
		{"git::https://github.com/GoogleCloudPlatform/cloud-foundation-fabric.git//modules/gke-nodepool?ref=v30.0.0&depth=1", "gke-nodepool", "v30.0.0", true},
		{"github.com/GoogleCloudPlatform/cloud-foundation-fabric//modules/gke-cluster-standard?ref=v57.0.0", "gke-cluster-standard", "v57.0.0", true},
		{"git::ssh://git@github.com/GoogleCloudPlatform/cloud-foundation-fabric.git//modules/gke-nodepool", "gke-nodepool", "", true},
		{"git@github.com:GoogleCloudPlatform/cloud-foundation-fabric.git//modules/gke-nodepool/?ref=main", "gke-nodepool", "main", true},
		{"git::https://github.com/example/cloud-foundation-fabric.git//modules/gke-nodepool?ref=v30.0.0", "", "", false},
		{"terraform-google-modules/kubernetes-engine/google", "", "", false},
		{"./modules/gke-nodepool", "", "", false},
	} {
		sub, ref, ok := fabricSource(c.src)
		if sub != c.sub || ref != c.ref || ok != c.ok {
			t.Errorf("fabricSource(%q) = %q, %q, %v; want %q, %q, %v", c.src, sub, ref, ok, c.sub, c.ref, c.ok)
		}
	}
	if !fabricBefore("v30.0.0", "32.0.0") || fabricBefore("v32.0.0", "32.0.0") || fabricBefore("main", "32.0.0") || fabricBefore("", "36.0.0") {
		t.Error("fabricBefore: v30.0.0 is before v32.0.0; v32.0.0, a branch and no ref are not")
	}
}

// fabricPool is the import of one fabric gke-nodepool call of source ref
// (the rest of the call: body) in a root module.
func fabricPool(t *testing.T, ref, body string) *Result {
	t.Helper()
	dir := moduleTree(t, map[string]string{"main.tf": `module "gpu" {
  source       = "git::https://github.com/GoogleCloudPlatform/cloud-foundation-fabric.git//modules/gke-nodepool` + ref + `"
  project_id   = "p"
  cluster_name = "c"
  location     = "us-central1"
  node_locations = ["us-central1-a", "us-central1-b"]
` + body + `
}
`})
	res, err := Import([]string{dir}, Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestFabricNodepoolVersions: labels are Kubernetes labels before v32.0.0
// and resource labels from it (k8s_labels then); autoscaling counts are
// per zone unless use_total_nodes; max_shared_clients_per_gpu is
// time-sharing; a ref that is no tag reads as the newest.
func TestFabricNodepoolVersions(t *testing.T) {
	body := `
  labels     = { a = "1" }
  k8s_labels = { b = "2" }
  node_config = {
    machine_type = "a2-highgpu-1g"
    guest_accelerator = {
      type  = "nvidia-tesla-a100"
      count = 1
      gpu_driver = { version = "DEFAULT", max_shared_clients_per_gpu = 4 }
    }
  }
  nodepool_config = { autoscaling = { min_node_count = 1, max_node_count = 3 } }
`
	old := fabricPool(t, "?ref=v30.0.0", body)
	p := old.Spec.Spec.NodePools[0]
	if p.Labels["a"] != "1" || p.Labels["b"] != "" {
		t.Errorf("v30.0.0 labels = %v, want labels (a) only", p.Labels)
	}
	if p.Autoscaling.Min != 2 || p.Autoscaling.Max != 6 {
		t.Errorf("autoscaling = %+v, want 1 and 3 per zone x 2 zones", p.Autoscaling)
	}
	if p.GPU.Driver != "DEFAULT" || p.GPU.Sharing.Strategy != spec.SharingTimeSlicing || p.GPU.Sharing.Replicas != 4 {
		t.Errorf("gpu = %+v, want DEFAULT with time-slicing x4", p.GPU)
	}
	if p.DiskType != "" {
		t.Errorf("v30.0.0 diskType = %q: a call's own node_config has no disk_type default before v36.0.0", p.DiskType)
	}
	newer := fabricPool(t, "?ref=master", strings.Replace(body, "max_node_count = 3", "max_node_count = 3, use_total_nodes = true", 1))
	p = newer.Spec.Spec.NodePools[0]
	if p.Labels["b"] != "2" || p.Labels["a"] != "" {
		t.Errorf("newest labels = %v, want k8s_labels (b) only", p.Labels)
	}
	if p.Autoscaling.Min != 1 || p.Autoscaling.Max != 3 {
		t.Errorf("use_total_nodes autoscaling = %+v, want totals 1 and 3", p.Autoscaling)
	}
	if p.DiskType != "pd-balanced" {
		t.Errorf("newest diskType = %q, want the module default pd-balanced", p.DiskType)
	}
	if r := skipReason(newer, "module.gpu source"); !strings.Contains(r, fabricNewest) {
		t.Errorf("ref master: skip reason %q, want it read as %s", r, fabricNewest)
	}
}

// TestFabricNodepoolUnknown: an accelerator count the files do not know
// stays unknown, the pool is still imported; the fixed size without
// autoscaling is node_count's default (initial 1 per zone).
func TestFabricNodepoolUnknown(t *testing.T) {
	res := fabricPool(t, "?ref=v30.0.0", `
  node_config = {
    machine_type = "g2-standard-8"
    guest_accelerator = { type = "nvidia-l4", count = data.x.y.count }
  }
  taints = data.x.y.taints
`)
	p := res.Spec.Spec.NodePools[0]
	if p.GPU.Type != "nvidia-l4" || p.GPU.Count != 0 {
		t.Errorf("gpu = %+v, want nvidia-l4 with no count", p.GPU)
	}
	var count, taints bool
	for _, u := range res.Unknowns {
		count = count || strings.HasSuffix(u.Path, ".gpu.count")
		taints = taints || strings.HasSuffix(u.Path, ".taints")
	}
	if !count || !taints {
		t.Errorf("unknowns %+v: want the gpu count and the taints", res.Unknowns)
	}
	if p.Autoscaling.Min != 2 || p.Autoscaling.Max != 2 {
		t.Errorf("autoscaling = %+v, want node_count's default 1 per zone x 2 zones", p.Autoscaling)
	}
}

// TestModuleSkipReason: another module's skip names its source when it
// reads as an address, and not otherwise.
func TestModuleSkipReason(t *testing.T) {
	r := moduleSkipReason("git::https://github.com/GoogleCloudPlatform/cloud-foundation-fabric.git//modules/net-vpc?ref=v30.0.0")
	if !strings.Contains(r, "(git::https://github.com/GoogleCloudPlatform/cloud-foundation-fabric.git//modules/net-vpc?ref=v30.0.0)") {
		t.Errorf("reason %q does not name the source", r)
	}
	if r := moduleSkipReason("a b\n\x1b[31m"); strings.Contains(r, "\x1b") || strings.Contains(r, "(a b") {
		t.Errorf("reason %q quotes an odd source", r)
	}
}

// TestNoPoolsErrorNamesModules: the no-pool error lists the modules gpuctl
// does not import first, each with its source.
func TestNoPoolsErrorNamesModules(t *testing.T) {
	dir := moduleTree(t, map[string]string{"main.tf": `resource "google_compute_network" "n" {
  name = "n"
}

module "pools" {
  source = "git::https://example.com/pools.git//modules/gke?ref=v1"
}
`})
	_, err := Import([]string{dir}, Options{Root: dir})
	if err == nil || !strings.Contains(err.Error(), "(2 skipped: module.pools (git::https://example.com/pools.git//modules/gke?ref=v1), google_compute_network.n)") {
		t.Errorf("error = %v, want the module first, with its source", err)
	}
}

// TestFabricAutopilot: fabric's Autopilot cluster module is said to be one
// (no node pool to import), not a module gpuctl does not read.
func TestFabricAutopilot(t *testing.T) {
	dir := moduleTree(t, map[string]string{"main.tf": `module "ap" {
  source     = "git::https://github.com/GoogleCloudPlatform/cloud-foundation-fabric.git//modules/gke-cluster-autopilot?ref=v30.0.0"
  project_id = "p"
  name       = "c"
  location   = "us-central1"
}
`})
	_, err := Import([]string{dir}, Options{Root: dir})
	if err == nil || !strings.Contains(err.Error(), "module.ap is an Autopilot cluster") {
		t.Errorf("error = %v, want it to lead with the Autopilot cluster", err)
	}
}
