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

// KubernetesVersion is a cluster version as specs write it: "1.33",
// "v1.33.5" or a GKE version "1.33.5-gke.1080000".
type KubernetesVersion struct {
	// Full holds major, minor, patch and the -gke.N build, as far as given
	// ("1.33.5-gke.1080000" is 1.33.5.1080000), compared numerically.
	Full Version
	// Patch is true when a patch version was given; GKE is true when a
	// -gke.N build was.
	Patch, GKE bool
}

// Minor is major.minor.
func (k KubernetesVersion) Minor() Version { return Version{k.Full[0], k.Full[1]} }

// MinorString is "1.33".
func (k KubernetesVersion) MinorString() string { return k.Minor().String() }

// ParseKubernetesVersion reads "1.33", "v1.33.5" or "1.33.5-gke.1080000".
// The major version must be 1.
func ParseKubernetesVersion(s string) (KubernetesVersion, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	base, build, hasBuild := strings.Cut(t, "-")
	v, err := ParseVersion(base)
	if err != nil || len(v) < 2 || len(v) > 3 || v[0] != 1 {
		return KubernetesVersion{}, fmt.Errorf("%q is not a Kubernetes version like \"1.33\", \"1.33.5\" or \"1.33.5-gke.1080000\"", s)
	}
	k := KubernetesVersion{Full: v, Patch: len(v) == 3}
	if hasBuild {
		n, ok := strings.CutPrefix(build, "gke.")
		b, err := strconv.Atoi(n)
		if !ok || err != nil || b < 0 || !k.Patch || strings.HasPrefix(n, "+") {
			return KubernetesVersion{}, fmt.Errorf("%q: the build suffix %q is not a GKE build like \"-gke.1080000\" after a patch version", s, "-"+build)
		}
		k.Full, k.GKE = append(k.Full, b), true
	}
	return k, nil
}

// parseGKEVersion is ParseKubernetesVersion for embedded GKE versions.
func parseGKEVersion(s string) (Version, error) {
	k, err := ParseKubernetesVersion(s)
	if err != nil {
		return nil, err
	}
	return k.Full, nil
}
