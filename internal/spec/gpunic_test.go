package spec

import (
	"strings"
	"testing"
)

// TestGPUNICs: names in NIC order within GCP's and GKE's limits, distinct
// when long names are cut.
func TestGPUNICs(t *testing.T) {
	s := &Spec{ClusterName: "ml-prod"}
	nics := s.GPUNICs(&NodePool{Name: "Train_H100"}, NICLayout{GPU: 2})
	want := []GPUNIC{
		{Interface: "eth1", Object: "train-h100-gpunic-1", Network: "ml-prod-train-h100-gpunic-1", Subnetwork: "ml-prod-train-h100-gpunic-1", Kind: NICGPU},
		{Interface: "eth2", Object: "train-h100-gpunic-2", Network: "ml-prod-train-h100-gpunic-2", Subnetwork: "ml-prod-train-h100-gpunic-2", Kind: NICGPU},
	}
	if len(nics) != len(want) {
		t.Fatalf("%d NICs, want %d", len(nics), len(want))
	}
	for i := range want {
		if nics[i] != want[i] {
			t.Errorf("NIC %d: %+v, want %+v", i+1, nics[i], want[i])
		}
	}
	long := &Spec{ClusterName: strings.Repeat("c", 40)}
	for _, l := range []NICLayout{{GPU: 8}, {GVNICs: 1, GPU: 8, RDMA: true}} {
		seen := map[string]bool{}
		for _, n := range long.GPUNICs(&NodePool{Name: strings.Repeat("p", 40)}, l) {
			if len(n.Object) > 41 || len(n.Network) > 63 || len(n.Subnetwork) > 63 || seen[n.Object] || seen[n.Subnetwork] {
				t.Errorf("long names %+v: %+v (object %d, network %d, subnetwork %d characters)", l, n, len(n.Object), len(n.Network), len(n.Subnetwork))
			}
			seen[n.Object], seen[n.Subnetwork] = true, true
		}
	}
}

// TestRDMANICs: an RDMA pool's extra gVNIC comes first (eth1), then its RDMA
// NICs (eth2..eth9) numbered from 0 as Google numbers rdma-0..rdma-7, all in
// one VPC network with a subnetwork each.
func TestRDMANICs(t *testing.T) {
	s := &Spec{ClusterName: "ml"}
	nics := s.GPUNICs(&NodePool{Name: "train"}, NICLayout{GVNICs: 1, GPU: 8, RDMA: true})
	if len(nics) != 9 {
		t.Fatalf("%d NICs, want 9", len(nics))
	}
	if want := (GPUNIC{Interface: "eth1", Object: "train-gvnic-1", Network: "ml-train-gvnic-1", Subnetwork: "ml-train-gvnic-1", Kind: NICGVNIC}); nics[0] != want {
		t.Errorf("eth1: %+v, want %+v", nics[0], want)
	}
	if want := (GPUNIC{Interface: "eth2", Object: "train-rdma-0", Network: "ml-train-rdma-net", Subnetwork: "ml-train-rdma-sub-0", Kind: NICRDMA}); nics[1] != want {
		t.Errorf("eth2: %+v, want %+v", nics[1], want)
	}
	if want := (GPUNIC{Interface: "eth9", Object: "train-rdma-7", Network: "ml-train-rdma-net", Subnetwork: "ml-train-rdma-sub-7", Kind: NICRDMA}); nics[8] != want {
		t.Errorf("eth9: %+v, want %+v", nics[8], want)
	}
	long := (&Spec{ClusterName: strings.Repeat("c", 40)}).GPUNICs(&NodePool{Name: strings.Repeat("p", 40)}, NICLayout{GPU: 8, RDMA: true})
	for _, n := range long[1:] {
		if n.Network != long[0].Network {
			t.Errorf("long names: RDMA NICs in networks %q and %q, want one", long[0].Network, n.Network)
		}
	}
}
