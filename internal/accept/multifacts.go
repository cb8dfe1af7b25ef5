package accept

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// The facts of a fleet stage's result (nccl-multi, framework-multi), keys
// of StageResult.Facts: what the report's fleet table shows of the stage
// without the groups file.
const (
	// FactMultiGroups names the node's groups ("RUN-m0,RUN-m3").
	FactMultiGroups = "groups"
	// FactMultiPeers are the other nodes of the node's groups in natural
	// order ("gpu-node-2,gpu-node-4"); absent when there are more than
	// maxPeersFact (FactMultiNodes counts them then).
	FactMultiPeers = "peers"
	// FactMultiNodes counts the nodes of the node's groups, itself
	// included.
	FactMultiNodes = "nodes"
	// FactMultiBusBW is the lowest busbw (GB/s, two decimals) of the
	// node's groups that measured one, FactMultiLargest its message size
	// (bytes), FactMultiBusBWGroup the group that measured it and
	// FactMultiTransport the NCCL network that group's ranks used. Absent
	// when no group measured a busbw (framework-multi never does).
	FactMultiBusBW      = "busBandwidthGBps"
	FactMultiLargest    = "largestBytes"
	FactMultiBusBWGroup = "busBandwidthGroup"
	FactMultiTransport  = "transport"
)

// maxPeersFact is the most peers FactMultiPeers lists (one group of a
// whole selection would put every node's name in every record).
const maxPeersFact = 8

// withMultiFacts adds to r, node n's result of a fleet stage, the facts of
// its groups (groups[i] for i in idx); r unchanged when n is in no group.
func withMultiFacts(r StageResult, n string, groups []MultiGroupResult, idx []int) StageResult {
	if len(idx) == 0 {
		return r
	}
	var names, peers []string
	var low *MultiGroupResult
	for _, i := range idx {
		g := &groups[i]
		names = append(names, g.Group)
		for _, m := range g.Nodes {
			if m != n && !slices.Contains(peers, m) {
				peers = append(peers, m)
			}
		}
		if g.BusBandwidthGBps > 0 && (low == nil || g.BusBandwidthGBps < low.BusBandwidthGBps) {
			low = g
		}
	}
	slices.SortFunc(peers, func(a, b string) int { return naturalCompare(a, b) })
	f := map[string]string{FactMultiGroups: strings.Join(names, ","), FactMultiNodes: strconv.Itoa(len(peers) + 1)}
	if len(peers) <= maxPeersFact {
		f[FactMultiPeers] = strings.Join(peers, ",")
	}
	if low != nil {
		f[FactMultiBusBW] = strconv.FormatFloat(low.BusBandwidthGBps, 'f', 2, 64)
		f[FactMultiLargest] = strconv.FormatInt(low.LargestBytes, 10)
		f[FactMultiBusBWGroup] = low.Group
		if low.Transport != "" {
			f[FactMultiTransport] = low.Transport
		}
	}
	for k, v := range r.Facts {
		f[k] = v
	}
	r.Facts = f
	return r
}

// naturalCompare is matrix.NaturalLess as a comparison.
func naturalCompare(a, b string) int {
	switch {
	case matrix.NaturalLess(a, b):
		return -1
	case matrix.NaturalLess(b, a):
		return 1
	}
	return 0
}
