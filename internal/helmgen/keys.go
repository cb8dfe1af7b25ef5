package helmgen

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// Chart names.
const (
	ChartDevicePlugin = "nvidia-device-plugin"
	ChartGPUOperator  = "gpu-operator"
	ChartDCGMExporter = "dcgm-exporter"
	// ChartEFADevicePlugin is AWS's EFA device plugin (EKS pools with EFA).
	ChartEFADevicePlugin = "aws-efa-k8s-device-plugin"
)

// chartSources are the folders of the charts' repositories that the key
// lists are read from (data/README.md, as of 2026-11-29).
var chartSources = map[string]string{
	ChartDevicePlugin: "https://github.com/NVIDIA/k8s-device-plugin/tree/main/deployments/helm/nvidia-device-plugin",
	ChartGPUOperator:  "https://github.com/NVIDIA/gpu-operator/tree/main/deployments/gpu-operator",
	ChartDCGMExporter: "https://github.com/NVIDIA/dcgm-exporter/tree/main/deployment",
	// The repository tags no chart release; the key list is read at a commit.
	ChartEFADevicePlugin: "https://github.com/aws/eks-charts/tree/master/stable/aws-efa-k8s-device-plugin",
}

// ChartSource returns the URL of the chart's source folder, where its
// values keys are read from; "" for a chart gpuctl does not write.
func ChartSource(chart string) string { return chartSources[chart] }

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
	var vs []string
	for _, name := range keyListNames() {
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
	keys, err := readKeyList(path.Join("data", chart+"-"+v+".txt"))
	if err != nil {
		return nil, fmt.Errorf("chart %s version %q is not supported: gpuctl knows the values keys of %s only (pin one of them, or leave the version out for the newest)", chart, version, strings.Join(known, ", "))
	}
	return &KeySet{Chart: chart, Version: v, keys: keys}, nil
}

// keyListNames are the names of the embedded key lists without ".txt"
// (<chart>-<version>), read once.
var keyListNames = sync.OnceValue(func() []string {
	entries, _ := keyFiles.ReadDir("data")
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = strings.TrimSuffix(e.Name(), ".txt")
	}
	return names
})

// parsedKeyLists caches the parsed key list of each embedded file (file
// name -> path -> has listed children); the maps are never written after
// they are stored, so KeySets share them.
var parsedKeyLists sync.Map

// readKeyList returns the parsed key list of an embedded file, reading and
// parsing it on first use only.
func readKeyList(file string) (map[string]bool, error) {
	if keys, ok := parsedKeyLists.Load(file); ok {
		return keys.(map[string]bool), nil
	}
	data, err := keyFiles.ReadFile(file)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if _, seen := keys[line]; !seen {
			keys[line] = false
		}
		for p := line; strings.Contains(p, "."); {
			p = p[:strings.LastIndex(p, ".")]
			keys[p] = true
		}
	}
	stored, _ := parsedKeyLists.LoadOrStore(file, keys)
	return stored.(map[string]bool), nil
}
