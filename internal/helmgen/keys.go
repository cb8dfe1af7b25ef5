package helmgen

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// Chart names.
const (
	ChartDevicePlugin = "nvidia-device-plugin"
	ChartGPUOperator  = "gpu-operator"
	ChartDCGMExporter = "dcgm-exporter"
)

//go:embed data/*.txt
var keyFiles embed.FS

// KeySet is the values keys of one chart version: dotted paths, each either a
// branch (some listed path continues below it) or a leaf (opaque: any value,
// including maps and lists, may go there).
type KeySet struct {
	Chart   string
	Version string
	keys    map[string]bool // path -> has listed children
}

// Has reports whether path is a listed key of the chart version.
func (k *KeySet) Has(path string) bool {
	_, ok := k.keys[path]
	return ok
}

// Unknown returns the dotted paths in values that the chart version does not
// have, sorted. Maps are followed down to leaf keys; a value under an opaque
// key is not inspected.
func (k *KeySet) Unknown(values map[string]any) []string {
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for key, v := range m {
			p := key
			if prefix != "" {
				p = prefix + "." + key
			}
			branch, ok := k.keys[p]
			if !ok {
				out = append(out, p)
				continue
			}
			if sub, isMap := v.(map[string]any); isMap && branch {
				walk(p, sub)
			}
		}
	}
	walk("", values)
	sort.Strings(out)
	return out
}

// ChartVersions returns the versions gpuctl knows for chart, oldest first.
func ChartVersions(chart string) []string {
	entries, _ := keyFiles.ReadDir("data")
	var vs []string
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".txt")
		if v, ok := strings.CutPrefix(name, chart+"-"); ok {
			if _, err := matrix.ParseVersion(v); err == nil {
				vs = append(vs, v)
			}
		}
	}
	sort.Slice(vs, func(i, j int) bool { return matrix.MustVersion(vs[i]).Less(matrix.MustVersion(vs[j])) })
	return vs
}

// LoadKeys returns the key set of chart at version ("v26.7.0" and "26.7.0"
// are the same version); version "" picks the newest known. Errors: a chart
// or version gpuctl has no key list for (the message lists the known ones).
func LoadKeys(chart, version string) (*KeySet, error) {
	known := ChartVersions(chart)
	if len(known) == 0 {
		return nil, fmt.Errorf("no values keys for chart %q", chart)
	}
	v := strings.TrimPrefix(version, "v")
	if v == "" {
		v = known[len(known)-1]
	}
	data, err := keyFiles.ReadFile(path.Join("data", chart+"-"+v+".txt"))
	if err != nil {
		return nil, fmt.Errorf("chart %s version %q is not supported: gpuctl knows the values keys of %s only (pin one of them, or leave the version out for the newest)", chart, version, strings.Join(known, ", "))
	}
	ks := &KeySet{Chart: chart, Version: v, keys: map[string]bool{}}
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if _, seen := ks.keys[line]; !seen {
			ks.keys[line] = false
		}
		for p := line; strings.Contains(p, "."); {
			p = p[:strings.LastIndex(p, ".")]
			ks.keys[p] = true
		}
	}
	return ks, nil
}
