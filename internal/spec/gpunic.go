package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// GPUNIC is one additional NIC of a GKE GPUDirect pool (GPUDirect-TCPX,
// -TCPXO or RDMA): the node's interface, the VPC network and subnetwork it
// sits in, and the GKE Network (and GKENetworkParamSet) object of that name
// through which pods attach it (annotation networking.gke.io/interfaces).
// The Terraform (the pool's additional node networks, the defaults of
// var.<pool>_gpu_nic_networks and var.<pool>_gvnic_networks) and the
// manifests (nccl.yaml) both take the names from here, so they agree.
type GPUNIC struct {
	// Interface is the interface name in the node and the pod: eth1..ethN.
	Interface string
	// Object names the GKE Network and GKENetworkParamSet objects: at most
	// 41 characters, Google's limit for Device networks.
	Object string
	// Network and Subnetwork are the VPC network and subnetwork names (at
	// most 63 characters, GCP's limit).
	Network, Subnetwork string
	// Kind is what the NIC carries: NICGPU, NICRDMA or NICGVNIC.
	Kind NICKind
}

// NICKind tells the additional NICs of a GPUDirect pool apart.
type NICKind string

const (
	// NICGPU is a GPU NIC of GPUDirect-TCPX/TCPXO: a gVNIC in its own VPC
	// network, handed to the pod as a network device (deviceMode NetDevice).
	NICGPU NICKind = "gpu"
	// NICRDMA is an RDMA NIC (MRDMA, CX-7) of GPUDirect RDMA: all of a
	// pool's sit in one VPC network with the RDMA (RoCE) network profile,
	// one subnetwork each, handed to the pod as an RDMA device (deviceMode
	// RDMA).
	NICRDMA NICKind = "rdma"
	// NICGVNIC is the second gVNIC of an RDMA machine (A3 Ultra, A4): a
	// regular VPC network of its own (deviceMode NetDevice); NCCL does not
	// use it.
	NICGVNIC NICKind = "gvnic"
)

// NICLayout is how many additional NICs of each kind a GKE pool has, in the
// order GKE numbers them: the extra gVNICs first, then the GPU NICs.
type NICLayout struct {
	// GVNICs is the number of extra gVNICs (NICGVNIC) before the GPU NICs.
	GVNICs int
	// GPU is the number of GPU NICs; RDMA says they are RDMA NICs
	// (NICRDMA), not GPUDirect-TCPX/TCPXO ones (NICGPU).
	GPU  int
	RDMA bool
}

// Len is the number of additional NICs.
func (l NICLayout) Len() int { return l.GVNICs + l.GPU }

// Name limits of the GPU NIC objects.
// Sources: https://cloud.google.com/kubernetes-engine/docs/how-to/setup-multinetwork-support-for-pods
// (requirements and limitations: a Device-type Network object's name has 41
// characters at most, read 2026-12-01),
// https://cloud.google.com/compute/docs/naming-resources (VPC networks and
// subnetworks: 63).
const (
	maxGPUNICObject  = 41
	maxGCPNetworkLen = 63
)

// GPUNICs returns the additional NICs of pool p laid out as l, in NIC order
// (eth1..ethN; GKE numbers the additional node networks in the order the
// node pool lists them):
//   - a GPUDirect-TCPX/TCPXO GPU NIC: objects <pool>-gpunic-<i>, network
//     and subnetwork <cluster>-<pool>-gpunic-<i> (i from 1);
//   - an extra gVNIC: objects <pool>-gvnic-<i>, network and subnetwork
//     <cluster>-<pool>-gvnic-<i> (i from 1);
//   - an RDMA NIC: objects <pool>-rdma-<i>, one network
//     <cluster>-<pool>-rdma-net and subnetworks <cluster>-<pool>-rdma-sub-<i>
//     (i from 0), in the shape of Google's gvnic-1 and rdma-0..rdma-7 of
//     GoogleCloudPlatform/cluster-toolkit (modules/scheduler/gke-cluster
//     main.tf, variable k8s_network_names, and
//     examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml at commit
//     1047080375afbb44da4b596be314634e7486af4a, 2026-06-25), with the pool in
//     front so that two pools' objects stay apart.
//
// A name over its limit is cut and ends in a hash of the whole name, so
// names stay distinct.
func (s *Spec) GPUNICs(p *NodePool, l NICLayout) []GPUNIC {
	pool := dnsName(p.Name)
	prefix := pool
	if c := dnsName(s.ClusterName); c != "" {
		prefix = c + "-" + pool
	}
	out := make([]GPUNIC, 0, l.Len())
	add := func(kind NICKind, object, network, subnetwork string) {
		out = append(out, GPUNIC{
			Interface:  fmt.Sprintf("eth%d", len(out)+1),
			Object:     limitName(object, maxGPUNICObject),
			Network:    limitName(network, maxGCPNetworkLen),
			Subnetwork: limitName(subnetwork, maxGCPNetworkLen),
			Kind:       kind,
		})
	}
	for i := 1; i <= l.GVNICs; i++ {
		suffix := fmt.Sprintf("-gvnic-%d", i)
		add(NICGVNIC, pool+suffix, prefix+suffix, prefix+suffix)
	}
	for i := 0; i < l.GPU; i++ {
		if l.RDMA {
			add(NICRDMA, fmt.Sprintf("%s-rdma-%d", pool, i), prefix+"-rdma-net", fmt.Sprintf("%s-rdma-sub-%d", prefix, i))
			continue
		}
		suffix := fmt.Sprintf("-gpunic-%d", i+1)
		add(NICGPU, pool+suffix, prefix+suffix, prefix+suffix)
	}
	return out
}

// dnsName lower-cases s and turns '_' into '-'.
func dnsName(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }

// limitName is s when it fits in max characters, else its first characters
// and 8 hex digits of its SHA-256.
func limitName(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return strings.TrimRight(s[:max-9], "-") + "-" + hex.EncodeToString(sum[:])[:8]
}
