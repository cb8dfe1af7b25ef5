package hclgen

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// nodePoolsTF is the node_pools.tf generate writes for cs.
func nodePoolsTF(t *testing.T, cs *spec.ClusterSpec) string {
	t.Helper()
	files, err := Generate(cs, Options{SpecFile: "s.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name == "node_pools.tf" {
			return string(f.Data)
		}
	}
	t.Fatal("no node_pools.tf")
	return ""
}

// TestGKEStorage: diskType is node_config's disk_type; localStorage raid0
// is ephemeral_storage_local_ssd_config with the machine's Local SSD
// count from the matrix (16 on a3-highgpu-8g), 0 on a machine that comes
// with Local SSDs whose count the matrix lacks (GKE: all of them), and on
// a machine that takes Local SSDs only when asked a comment, since gpuctl
// does not know the count; none writes nothing on a training pool.
func TestGKEStorage(t *testing.T) {
	cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "g"}, Spec: spec.Spec{
		Provider: spec.ProviderGKE, ClusterName: "c", Region: "us-central1", KubernetesVersion: "1.33",
		NodePools: []spec.NodePool{
			{Name: "h100", MachineType: "a3-highgpu-8g", DiskType: "pd-ssd", LocalStorage: spec.LocalStorageRAID0, Autoscaling: spec.Autoscaling{Max: 1}},
			{Name: "l4", MachineType: "g2-standard-8", LocalStorage: spec.LocalStorageRAID0, Autoscaling: spec.Autoscaling{Max: 1}},
			{Name: "a100", Role: spec.RoleTraining, MachineType: "a2-ultragpu-8g", Autoscaling: spec.Autoscaling{Max: 1}},
			{Name: "off", Role: spec.RoleTraining, MachineType: "a3-megagpu-8g", LocalStorage: spec.LocalStorageNone, Autoscaling: spec.Autoscaling{Max: 1}},
		},
	}}
	tf := nodePoolsTF(t, cs)
	pools := map[string]string{}
	for _, part := range strings.Split(tf, `resource "google_container_node_pool" "`)[1:] {
		name, _, _ := strings.Cut(part, `"`)
		pools[name] = part
	}
	for _, want := range []string{`disk_type    = "pd-ssd"`, "ephemeral_storage_local_ssd_config {\n      local_ssd_count = 16\n"} {
		if !strings.Contains(pools["h100"], want) {
			t.Errorf("h100 pool lacks %q:\n%s", want, pools["h100"])
		}
	}
	if !strings.Contains(pools["a100"], "ephemeral_storage_local_ssd_config {\n      local_ssd_count = 0\n") {
		t.Errorf("a100 training pool (A2 Ultra, count not captured): want local_ssd_count 0:\n%s", pools["a100"])
	}
	if strings.Contains(pools["off"], "ephemeral_storage_local_ssd_config") {
		t.Errorf("localStorage none still writes local SSDs:\n%s", pools["off"])
	}
	if strings.Contains(pools["l4"], "ephemeral_storage_local_ssd_config {\n") || !strings.Contains(pools["l4"], "# localStorage raid0: g2-standard-8 has no Local SSDs unless the pool attaches them") {
		t.Errorf("l4 pool: want a comment, not a guessed local SSD count:\n%s", pools["l4"])
	}
}

// TestEKSStorageAndEFA: diskType is the EBS volume type, localStorage
// raid0 on AL2023 is nodeadm user data, and the EFA cards after the first
// are efa-only unless efaOnly is false.
func TestEKSStorageAndEFA(t *testing.T) {
	no := false
	for _, c := range []struct {
		efaOnly *bool
		card1   string
	}{{nil, `"efa-only"`}, {&no, `"efa"`}} {
		cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "e"}, Spec: spec.Spec{
			Provider: spec.ProviderEKS, ClusterName: "c", Region: "us-east-1", KubernetesVersion: "1.33",
			NodePools: []spec.NodePool{{Name: "p5", MachineType: "p5.48xlarge", OSImage: "AL2023_x86_64_NVIDIA", DiskSizeGB: 200, DiskType: "io2",
				LocalStorage: spec.LocalStorageRAID0, EFA: spec.EFA{Enabled: true, EFAOnly: c.efaOnly}, Autoscaling: spec.Autoscaling{Max: 2}}},
		}}
		tf := nodePoolsTF(t, cs)
		_, card1, _ := strings.Cut(tf, "network_card_index    = 1\n")
		if !strings.HasPrefix(strings.TrimSpace(card1), "interface_type        = "+c.card1) {
			t.Errorf("efaOnly %v: card 1 is not %s:\n%.200s", c.efaOnly, c.card1, card1)
		}
		for _, want := range []string{`volume_type           = "io2"`, `user_data              = base64encode(`, `strategy: RAID0`} {
			if !strings.Contains(tf, want) {
				t.Errorf("efaOnly %v: node_pools.tf lacks %q", c.efaOnly, want)
			}
		}
	}
}
