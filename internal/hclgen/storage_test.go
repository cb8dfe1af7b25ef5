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
// is ephemeral_storage_local_ssd_config (count 0: all the local SSDs of a
// machine that has a fixed number), else a comment, since gpuctl does not
// know the count.
func TestGKEStorage(t *testing.T) {
	cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "g"}, Spec: spec.Spec{
		Provider: spec.ProviderGKE, ClusterName: "c", Region: "us-central1", KubernetesVersion: "1.33",
		NodePools: []spec.NodePool{
			{Name: "h100", MachineType: "a3-highgpu-8g", DiskType: "pd-ssd", LocalStorage: spec.LocalStorageRAID0, Autoscaling: spec.Autoscaling{Max: 1}},
			{Name: "l4", MachineType: "g2-standard-8", LocalStorage: spec.LocalStorageRAID0, Autoscaling: spec.Autoscaling{Max: 1}},
		},
	}}
	tf := nodePoolsTF(t, cs)
	h100, l4, _ := strings.Cut(tf, `resource "google_container_node_pool" "l4"`)
	for _, want := range []string{`disk_type    = "pd-ssd"`, "ephemeral_storage_local_ssd_config {\n      local_ssd_count = 0"} {
		if !strings.Contains(h100, want) {
			t.Errorf("h100 pool lacks %q:\n%s", want, h100)
		}
	}
	if strings.Contains(l4, "ephemeral_storage_local_ssd_config {\n") || !strings.Contains(l4, "# localStorage raid0: the local SSD count of g2-standard-8 is not in gpuctl's matrix") {
		t.Errorf("l4 pool: want a comment, not a guessed local SSD count:\n%s", l4)
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
