package matrix

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
)

// closeEnough is the candidate nearest to s (as nearest ranks them) when it
// is within a did-you-mean distance of s (case folded: at most 2 edits, or a
// third of s), else "".
func closeEnough(s string, candidates []string) string {
	n := nearest(s, candidates, 1)
	if len(n) == 1 && levenshtein.ComputeDistance(strings.ToLower(s), strings.ToLower(n[0])) <= max(2, len(s)/3) {
		return n[0]
	}
	return ""
}

// nearest returns up to n candidates closest to s by edit distance (ties by
// name), each name once however it is spelt: of candidates that differ only
// in case ("NVIDIA-L4", "nvidia-l4") the first in that order stands for all.
func nearest(s string, candidates []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	ls := strings.ToLower(s)
	var sc []scored
	for _, c := range candidates {
		d := levenshtein.ComputeDistance(ls, strings.ToLower(c))
		if strings.HasPrefix(ls, strings.ToLower(c)) || strings.HasPrefix(strings.ToLower(c), ls) {
			d -= 2 // a shared prefix is a strong hint
		}
		sc = append(sc, scored{c, d})
	}
	sort.Slice(sc, func(i, j int) bool {
		if sc[i].d != sc[j].d {
			return sc[i].d < sc[j].d
		}
		return sc[i].name < sc[j].name
	})
	var out []string
	for _, x := range sc {
		if len(out) >= n {
			break
		}
		if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, x.name) }) {
			out = append(out, x.name)
		}
	}
	return out
}

// lowerFirst lowers the first letter of a sentence that follows a prefix
// ("No CUDA 12.7 toolkit" -> "no CUDA 12.7 toolkit"), but not of an acronym.
func lowerFirst(s string) string {
	if len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

func appendUnique(list []string, s ...string) []string {
	for _, x := range s {
		if x != "" && !slices.Contains(list, x) {
			list = append(list, x)
		}
	}
	return list
}

// NaturalLess orders strings with embedded numbers naturally ("GPU2" <
// "GPU10", "rdma-2" < "rdma-10"): the order accept lists GPUs, containers
// and evidence in, and fabric a node's networks.
func NaturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		if da != "" && db != "" {
			x, _ := strconv.Atoi(da)
			y, _ := strconv.Atoi(db)
			if x != y {
				return x < y
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitsPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
