package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// GPUNIC is one GPU NIC of a GKE GPUDirect-TCPX/TCPXO pool: the node's
// interface, the VPC network and subnetwork it sits in, and the GKE Network
// (and GKENetworkParamSet) object of that name through which pods attach it
// (annotation networking.gke.io/interfaces). The Terraform (the pool's
// additional node networks, the default of var.<pool>_gpu_nic_networks) and
// the manifests (nccl.yaml) both take the names from here, so they agree.
type GPUNIC struct {
	// Interface is the interface name in the node and the pod: eth1..ethN.
	Interface string
	// Object names the GKE Network and GKENetworkParamSet objects: at most
	// 41 characters, Google's limit for Device networks.
	Object string
	// Network and Subnetwork are the VPC network and subnetwork names (at
	// most 63 characters, GCP's limit).
	Network, Subnetwork string
}

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

// GPUNICs returns the n GPU NICs of pool p, in NIC order (eth1..ethN): the
// objects are named <pool>-gpunic-<i>, the networks and subnetworks
// <cluster>-<pool>-gpunic-<i>; a name over its limit is cut and ends in a
// hash of the whole name, so names stay distinct.
func (s *Spec) GPUNICs(p *NodePool, n int) []GPUNIC {
	pool := dnsName(p.Name)
	prefix := pool
	if c := dnsName(s.ClusterName); c != "" {
		prefix = c + "-" + pool
	}
	out := make([]GPUNIC, n)
	for i := range out {
		suffix := fmt.Sprintf("-gpunic-%d", i+1)
		vpc := limitName(prefix+suffix, maxGCPNetworkLen)
		out[i] = GPUNIC{
			Interface:  fmt.Sprintf("eth%d", i+1),
			Object:     limitName(pool+suffix, maxGPUNICObject),
			Network:    vpc,
			Subnetwork: vpc,
		}
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
