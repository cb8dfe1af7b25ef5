package matrix

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a dotted numeric version such as a driver version
// ("535.129.03", "455.23", "1000") or a CUDA version ("12.4", "12.2.2").
// Components compare numerically, one by one; a missing component counts as
// 0, so "12.4" == "12.4.0". Leading zeros do not matter ("535.54.03" has
// components 535, 54, 3).
type Version []int

// ParseVersion parses s ("535.129.03", "v26.7.0", "12.4"). A leading "v" is
// allowed. Errors: empty input, a non-numeric component, more than 4
// components.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if t == "" {
		return nil, fmt.Errorf("empty version")
	}
	parts := strings.Split(t, ".")
	if len(parts) > 4 {
		return nil, fmt.Errorf("version %q has more than 4 components", s)
	}
	v := make(Version, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" {
			return nil, fmt.Errorf("version %q: component %q is not a number", s, p)
		}
		v[i] = n
	}
	return v, nil
}

// MustVersion is ParseVersion for embedded facts; it panics on bad input,
// which tests of the embedded data catch.
func MustVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than w.
func (v Version) Compare(w Version) int {
	n := max(len(v), len(w))
	for i := 0; i < n; i++ {
		a, b := 0, 0
		if i < len(v) {
			a = v[i]
		}
		if i < len(w) {
			b = w[i]
		}
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
	}
	return 0
}

// Less reports v < w.
func (v Version) Less(w Version) bool { return v.Compare(w) < 0 }

// Major returns the first component (the driver branch number for a driver
// version), or 0 for an empty version.
func (v Version) Major() int {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// String formats v with dots; components after the first keep no zero
// padding ("535.54.3"), so use the original string for display.
func (v Version) String() string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ".")
}
