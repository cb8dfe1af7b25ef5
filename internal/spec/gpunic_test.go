package spec

import (
	"strings"
	"testing"
)

// TestGPUNICs: names in NIC order within GCP's and GKE's limits, distinct
// when long names are cut.
func TestGPUNICs(t *testing.T) {
	s := &Spec{ClusterName: "ml-prod"}
	nics := s.GPUNICs(&NodePool{Name: "Train_H100"}, 2)
	want := []GPUNIC{
		{Interface: "eth1", Object: "train-h100-gpunic-1", Network: "ml-prod-train-h100-gpunic-1", Subnetwork: "ml-prod-train-h100-gpunic-1"},
		{Interface: "eth2", Object: "train-h100-gpunic-2", Network: "ml-prod-train-h100-gpunic-2", Subnetwork: "ml-prod-train-h100-gpunic-2"},
	}
	for i := range want {
		if nics[i] != want[i] {
			t.Errorf("NIC %d: %+v, want %+v", i+1, nics[i], want[i])
		}
	}
	long := &Spec{ClusterName: strings.Repeat("c", 40)}
	seen := map[string]bool{}
	for _, n := range long.GPUNICs(&NodePool{Name: strings.Repeat("p", 40)}, 8) {
		if len(n.Object) > 41 || len(n.Network) > 63 || seen[n.Object] || seen[n.Network] {
			t.Errorf("long names: %+v (object %d, network %d characters)", n, len(n.Object), len(n.Network))
		}
		seen[n.Object], seen[n.Network] = true, true
	}
}
