package rules

import (
	"maps"
	"slices"
	"strings"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// appendUnique appends the non-empty strings of s that list lacks.
func appendUnique(list []string, s ...string) []string {
	for _, x := range s {
		if x != "" && !slices.Contains(list, x) {
			list = append(list, x)
		}
	}
	return list
}

// lowerFirst lowers the first letter of a sentence ("The" -> "the"), not
// of an acronym or a name ("GKE").
func lowerFirst(s string) string {
	if len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// minorOf is the minor of a version (12 of 12.4), 0 when it has none.
func minorOf(v matrix.Version) int {
	if len(v) < 2 {
		return 0
	}
	return v[1]
}

// labelList writes labels as k=v, sorted, for messages.
func labelList(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

func joinAnd(list []string) string {
	switch len(list) {
	case 0:
		return ""
	case 1:
		return list[0]
	case 2:
		return list[0] + " and " + list[1]
	}
	return strings.Join(list[:len(list)-1], ", ") + " and " + list[len(list)-1]
}
