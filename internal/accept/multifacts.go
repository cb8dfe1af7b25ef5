package accept

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/record"
)

// maxPeersFact is the most peers record.FactMultiPeers lists (one group of a
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
	f := map[string]string{record.FactMultiGroups: strings.Join(names, ","), record.FactMultiNodes: strconv.Itoa(len(peers) + 1)}
	if len(peers) <= maxPeersFact {
		f[record.FactMultiPeers] = strings.Join(peers, ",")
	}
	if low != nil {
		f[record.FactMultiBusBW] = strconv.FormatFloat(low.BusBandwidthGBps, 'f', 2, 64)
		f[record.FactMultiLargest] = strconv.FormatInt(low.LargestBytes, 10)
		f[record.FactMultiBusBWGroup] = low.Group
		if low.Transport != "" {
			f[record.FactMultiTransport] = low.Transport
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
