package plan

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// A downgrade is a change to an older driver (580.159.03 -> 580.95.05, or
// a lower branch) or an older AMI release (a releaseVersion of an earlier
// date, or an older Bottlerocket version): plan names it, since it takes
// back fixes the nodes run today.

// driverFields are the fields whose values are driver versions.
var driverFields = map[string]bool{"gpu.driver": true, "driver (resolved)": true, "spec.addons.gpuOperator.driver.version": true}

var (
	releaseDate = regexp.MustCompile(`^1\.\d+\.\d+-(\d{8})$`)
	releaseOS   = regexp.MustCompile(`^(\d+\.\d+\.\d+)-[0-9a-f]{8}$`)
)

// downgrade reports whether the change of field from old to new (JSON
// texts) is a downgrade; false where either side is not a version.
func downgrade(field, old, new string) bool {
	o, n := unquote(old), unquote(new)
	switch {
	case driverFields[field]:
		return olderVersion(driverVersion(n), driverVersion(o))
	case field == "releaseVersion":
		return olderRelease(n, o)
	}
	return false
}

// driverVersion is the version in a driver value: "580.95.05", or the
// resolved text's last word ("ami 580.95.05", "gke R535").
func driverVersion(s string) string {
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimPrefix(s, "R")
}

// olderVersion reports whether version a is older than b: a lower branch,
// or, where both are exact, a lower version.
func olderVersion(a, b string) bool {
	x, err1 := matrix.ParseVersion(a)
	y, err2 := matrix.ParseVersion(b)
	if err1 != nil || err2 != nil {
		return false
	}
	if x.Major() != y.Major() || len(x) == 1 || len(y) == 1 {
		return x.Major() < y.Major()
	}
	return x.Less(y)
}

// olderRelease reports whether EKS release version a is older than b: an
// earlier date (AL2023/AL2), or an older Bottlerocket version.
func olderRelease(a, b string) bool {
	if x, y := releaseDate.FindStringSubmatch(a), releaseDate.FindStringSubmatch(b); x != nil && y != nil {
		return x[1] < y[1]
	}
	if x, y := releaseOS.FindStringSubmatch(a), releaseOS.FindStringSubmatch(b); x != nil && y != nil {
		return olderVersion(x[1], y[1])
	}
	return false
}

func unquote(s string) string {
	var v string
	if json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return s
}

// markDowngrades sets Downgrade on the field changes that are downgrades.
func markDowngrades(fs []FieldChange) []FieldChange {
	for i := range fs {
		fs[i].Downgrade = downgrade(fs[i].Field, fs[i].Old, fs[i].New)
	}
	return fs
}
