package helmgen

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// asOf pins date-dependent rules, as the reference material does.
var asOf = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func generateAll(t *testing.T, ex golden.Example) []File {
	t.Helper()
	opts := Options{SpecFile: ex.Name + ".yaml", Environment: ex.Env}
	vs, err := Values(ex.Spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Manifests(ex.Spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := Karpenter(ex.Spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(vs, ms...), ks...)
}

func TestGolden(t *testing.T) {
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		t.Run(ex.Dir, func(t *testing.T) {
			files := generateAll(t, ex)
			again := generateAll(t, ex)
			for i, f := range files {
				if !bytes.Equal(f.Data, again[i].Data) {
					t.Errorf("%s: two runs differ", f.Name)
				}
				golden.Compare(t, filepath.Join("testdata", "golden", ex.Dir, f.Name), f.Data, *update)
			}
			findings, err := Check(ex.Spec)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				t.Errorf("cross-layer finding on a valid example: %+v", f)
			}
		})
	}
}

// TestKeyListsHaveSources holds the embedded key lists (the one copy gpuctl
// has) to their provenance: each file is <chart>-<version>.txt for a chart
// gpuctl writes values for, its header names that chart and version and the
// source it was read from, and data/README.md lists exactly the embedded
// versions of each chart.
func TestKeyListsHaveSources(t *testing.T) {
	readme, err := os.ReadFile("data/README.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string][]string{} // chart -> versions in the README's table
	for _, line := range strings.Split(string(readme), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		chart := strings.TrimSpace(cells[1])
		for _, v := range strings.Split(cells[2], ",") {
			if v = strings.TrimSpace(v); v != "" {
				documented[chart] = append(documented[chart], v)
			}
		}
	}
	names := keyListNames()
	if len(names) == 0 {
		t.Fatal("no embedded key lists")
	}
	embedded := map[string][]string{}
	for _, chart := range []string{ChartDevicePlugin, ChartGPUOperator, ChartDCGMExporter, ChartEFADevicePlugin} {
		embedded[chart] = ChartVersions(chart)
		if len(embedded[chart]) == 0 {
			t.Errorf("no key list for chart %s", chart)
		}
		if diff := cmp.Diff(documented[chart], embedded[chart]); diff != "" {
			t.Errorf("data/README.md versions of %s differ from the embedded files (-README +embedded):\n%s", chart, diff)
		}
	}
	n := 0
	for _, name := range names {
		var chart, version string
		for c, vs := range embedded {
			for _, v := range vs {
				if name == c+"-"+v {
					chart, version = c, v
				}
			}
		}
		if chart == "" {
			t.Errorf("data/%s.txt is not <chart>-<version>.txt of a known chart", name)
			continue
		}
		n++
		data, err := keyFiles.ReadFile("data/" + name + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(data), "\n", 3)
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "# "+chart+" chart ") || !strings.Contains(lines[0], version) {
			t.Errorf("data/%s.txt: first line %q does not name chart %s version %s", name, lines[0], chart, version)
		}
		// A chart whose repository tags no release (the EFA device plugin)
		// is read at a commit: its source names the commit instead.
		if len(lines) < 3 || !strings.HasPrefix(lines[1], "# Source: ") || !(strings.Contains(lines[1], version) || commitRef.MatchString(lines[1])) {
			t.Errorf("data/%s.txt: second line %q is not a source at version %s", name, lines[1], version)
		}
		if len(listedKeys(t, chart, version)) == 0 {
			t.Errorf("data/%s.txt lists no keys", name)
		}
	}
	if n != len(names) {
		t.Errorf("%d of %d embedded key lists checked", n, len(names))
	}
}

// commitRef is a full git commit id in a key list's source line.
var commitRef = regexp.MustCompile(`\bat [0-9a-f]{40}\.`)

// listedKeys reads a chart version's embedded key list with its own parsing
// (not readKeyList's), for an independent check.
func listedKeys(t *testing.T, chart, version string) map[string]bool {
	t.Helper()
	data, err := keyFiles.ReadFile("data/" + chart + "-" + version + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(strings.SplitN(l, "#", 2)[0])
		if l != "" {
			keys[l] = true
		}
	}
	return keys
}

// leafPaths returns the dotted paths of v down to the first key that the
// list holds with nothing listed below it.
func leafPaths(prefix string, v any, keys map[string]bool, out *[]string) {
	m, ok := v.(map[string]any)
	if !ok {
		*out = append(*out, prefix)
		return
	}
	for k, sub := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		opaque := keys[p]
		for key := range keys {
			if strings.HasPrefix(key, p+".") {
				opaque = false
				break
			}
		}
		if opaque {
			*out = append(*out, p)
			continue
		}
		leafPaths(p, sub, keys, out)
	}
}

// TestValuesKeysExist checks every key of every generated values file, for
// every supported chart version, against that version's key list; and the
// device plugin configs by strict decoding.
func TestValuesKeysExist(t *testing.T) {
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		charts := map[string][]string{ChartDevicePlugin: ChartVersions(ChartDevicePlugin), ChartGPUOperator: ChartVersions(ChartGPUOperator), ChartDCGMExporter: ChartVersions(ChartDCGMExporter)}
		for chart, versions := range charts {
			for _, version := range versions {
				for _, cs := range pinned(ex.Spec, chart, version) {
					files, err := Values(cs, Options{})
					if err != nil {
						t.Fatalf("%s with %s %s: %v", ex.Dir, chart, version, err)
					}
					for _, f := range files {
						fchart := strings.TrimSuffix(f.Name, ".values.yaml")
						fversion := versionOf(t, f.Data)
						keys := listedKeys(t, fchart, fversion)
						var values map[string]any
						if err := yaml.Unmarshal(f.Data, &values); err != nil {
							t.Fatal(err)
						}
						var paths []string
						leafPaths("", values, keys, &paths)
						for _, p := range paths {
							if !keys[p] {
								t.Errorf("%s: %s %s has no values key %s", ex.Dir, fchart, fversion, p)
							}
						}
						checkPluginConfigs(t, ex.Dir, fchart, values)
					}
				}
			}
		}
	}
}

// pinned returns copies of cs with the chart pinned to version and in use:
// the GPU Operator both beside the spec's device plugin and owning it (with
// the driver), so that every operator section is generated.
func pinned(cs *spec.ClusterSpec, chart, version string) []*spec.ClusterSpec {
	c := *cs
	switch chart {
	case ChartDevicePlugin:
		c.Spec.Addons.DevicePlugin.Version = version
		// Every version takes nodeSelector (checked against its key list).
		c.Spec.Addons.DevicePlugin.NodeSelector = map[string]string{spec.LabelGPU: "true"}
	case ChartDCGMExporter:
		c.Spec.Addons.DCGMExporter.Version = version
		c.Spec.Addons.DCGMExporter.Enabled = true
	case ChartGPUOperator:
		c.Spec.Addons.GPUOperator.Version = version
		c.Spec.Addons.GPUOperator.Enabled = true
		c.Spec.Addons.DCGMExporter.Enabled = true
		owner := c
		owner.Spec.Addons.DevicePlugin.Provider = spec.DevicePluginGPUOperator
		owner.Spec.Addons.GPUOperator.Driver = spec.OperatorDriver{Enabled: ptr(true), Version: "580.95.05", KernelModuleType: "open"}
		owner.Spec.Addons.GPUOperator.Toolkit.Env = map[string]string{"CONTAINERD_SOCKET": "/run/containerd/containerd.sock"}
		return []*spec.ClusterSpec{&c, &owner}
	}
	return []*spec.ClusterSpec{&c}
}

func versionOf(t *testing.T, data []byte) string {
	t.Helper()
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "# Values for chart "); ok {
			return strings.Fields(rest)[1]
		}
	}
	t.Fatal("no chart version in header")
	return ""
}

// pluginConfigV1 mirrors the device plugin's config file (api/config/v1) with
// every field it knows, for strict decoding: an unknown or misplaced key
// fails (the plugin itself would silently ignore it).
type pluginConfigV1 struct {
	Version string `json:"version"`
	Flags   struct {
		MigStrategy             *string         `json:"migStrategy"`
		FailOnInitError         *bool           `json:"failOnInitError"`
		MpsRoot                 *string         `json:"mpsRoot"`
		NvidiaDriverRoot        *string         `json:"nvidiaDriverRoot"`
		NvidiaDevRoot           *string         `json:"nvidiaDevRoot"`
		GDRCopyEnabled          *bool           `json:"gdrcopyEnabled"`
		GDSEnabled              *bool           `json:"gdsEnabled"`
		MOFEDEnabled            *bool           `json:"mofedEnabled"`
		UseNodeFeatureAPI       *bool           `json:"useNodeFeatureAPI"`
		DeviceDiscoveryStrategy *string         `json:"deviceDiscoveryStrategy"`
		Plugin                  json.RawMessage `json:"plugin"`
		GFD                     json.RawMessage `json:"gfd"`
	} `json:"flags"`
	Resources json.RawMessage `json:"resources"`
	Sharing   struct {
		TimeSlicing *sharingV1 `json:"timeSlicing"`
		MPS         *sharingV1 `json:"mps"`
	} `json:"sharing"`
	Imex json.RawMessage `json:"imex"`
}

type sharingV1 struct {
	RenameByDefault            bool `json:"renameByDefault"`
	FailRequestsGreaterThanOne bool `json:"failRequestsGreaterThanOne"`
	Resources                  []struct {
		Name     string          `json:"name"`
		Rename   string          `json:"rename"`
		Devices  json.RawMessage `json:"devices"`
		Replicas int             `json:"replicas"`
	} `json:"resources"`
}

func checkPluginConfigs(t *testing.T, where, chart string, values map[string]any) {
	t.Helper()
	var configs map[string]any
	switch chart {
	case ChartDevicePlugin:
		configs, _ = dig(values, "config", "map").(map[string]any)
	case ChartGPUOperator:
		configs, _ = dig(values, "devicePlugin", "config", "data").(map[string]any)
	default:
		return
	}
	for name, raw := range configs {
		js, err := yaml.YAMLToJSON([]byte(raw.(string)))
		if err != nil {
			t.Fatalf("%s: config %s: %v", where, name, err)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		var c pluginConfigV1
		if err := dec.Decode(&c); err != nil {
			t.Errorf("%s: %s config %s does not decode strictly: %v", where, chart, name, err)
			continue
		}
		if c.Version != "v1" {
			t.Errorf("%s: config %s: version %q", where, name, c.Version)
		}
		if c.Flags.MigStrategy == nil || !map[string]bool{"none": true, "single": true, "mixed": true}[*c.Flags.MigStrategy] {
			t.Errorf("%s: config %s: bad migStrategy", where, name)
		}
		if c.Sharing.TimeSlicing != nil && c.Sharing.MPS != nil {
			t.Errorf("%s: config %s: time-slicing and MPS together", where, name)
		}
		for _, sh := range []*sharingV1{c.Sharing.TimeSlicing, c.Sharing.MPS} {
			if sh == nil {
				continue
			}
			if len(sh.Resources) == 0 {
				t.Errorf("%s: config %s: sharing without resources", where, name)
			}
			for _, r := range sh.Resources {
				if r.Name == "" || r.Replicas < 2 {
					t.Errorf("%s: config %s: resource %q with %d replicas (need a name and >= 2)", where, name, r.Name, r.Replicas)
				}
			}
		}
		if c.Sharing.MPS != nil && *c.Flags.MigStrategy == "mixed" {
			t.Errorf("%s: config %s: MPS with mixed MIG", where, name)
		}
	}
}

func dig(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

func TestUnknownChartVersion(t *testing.T) {
	cs := &spec.ClusterSpec{Spec: spec.Spec{Provider: spec.ProviderEKS,
		Addons:    spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: spec.DevicePluginHelm, Version: "0.14.5"}},
		NodePools: []spec.NodePool{{Name: "p", GPU: spec.GPU{Count: 1}}}}}
	_, err := Values(cs, Options{})
	if err == nil || !strings.Contains(err.Error(), "knows the values keys of 0.15.0, 0.15.1, 0.16.0, 0.16.1, 0.16.2, 0.17.0, 0.17.1, 0.17.2, 0.17.3, 0.17.4, 0.18.0, 0.18.1, 0.18.2, 0.19.0, 0.19.1, 0.19.2, 0.19.3, 0.20.0 only (") {
		t.Fatalf("want an error listing the known versions, got %v", err)
	}
	// The newest is the default, by version order (0.20.0 after 0.19.3,
	// 4.8.2 after 4.8.1), not by file name.
	for chart, newest := range map[string]string{ChartDevicePlugin: "0.20.0", ChartDCGMExporter: "4.8.2"} {
		if ks, err := LoadKeys(chart, ""); err != nil || ks.Version != newest {
			t.Errorf("default %s version: %v %v, want the newest %s", chart, ks, err, newest)
		}
	}
	ks, err := LoadKeys(ChartGPUOperator, "v26.7.0")
	if err != nil || ks.Version != "26.7.0" {
		t.Fatalf("v26.7.0: %v", err)
	}
	if ks, _ := LoadKeys(ChartGPUOperator, ""); ks.Version != "26.7.0" {
		t.Errorf("default operator version %s, want the newest 26.7.0", ks.Version)
	}
	if !ks.Has("cdi.enabled") || ks.Has("cdi.default") {
		t.Error("key lookup wrong: 26.7.0 has cdi.enabled and no cdi.default")
	}
	if got := ks.Unknown(map[string]any{"driver": map[string]any{"versoin": "1"}, "daemonsets": map[string]any{"tolerations": []any{map[string]any{"anything": 1}}}}); len(got) != 1 || got[0] != "driver.versoin" {
		t.Errorf("Unknown = %v, want [driver.versoin]", got)
	}
}

func TestAdvertisedResources(t *testing.T) {
	pool := func(plugin, strategy string, mutate func(*spec.NodePool)) (*spec.Spec, *spec.NodePool) {
		s := &spec.Spec{Provider: spec.ProviderEKS, Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: plugin}}}
		p := spec.NodePool{Name: "p", GPU: spec.GPU{Type: "H100", Count: 8, Sharing: spec.Sharing{Strategy: strategy, Replicas: 4, MIGProfile: "1g.10gb"}}}
		if mutate != nil {
			mutate(&p)
		}
		s.NodePools = []spec.NodePool{p}
		return s, &s.NodePools[0]
	}
	for _, c := range []struct {
		name     string
		plugin   string
		strategy string
		mutate   func(*spec.NodePool)
		want     Advertised
	}{
		{"whole", spec.DevicePluginHelm, spec.SharingNone, nil, Advertised{ResourceGPU, 8}},
		{"time-slicing", spec.DevicePluginHelm, spec.SharingTimeSlicing, nil, Advertised{ResourceGPU, 32}},
		{"renamed", spec.DevicePluginHelm, spec.SharingTimeSlicing, func(p *spec.NodePool) { p.GPU.Sharing.RenameByDefault = true }, Advertised{ResourceGPUShared, 32}},
		{"mps renamed", spec.DevicePluginGPUOperator, spec.SharingMPS, func(p *spec.NodePool) { p.GPU.Sharing.RenameByDefault = true }, Advertised{ResourceGPUShared, 32}},
		{"mig single", spec.DevicePluginHelm, spec.SharingMIG, nil, Advertised{ResourceGPU, 56}},
		{"mig mixed", spec.DevicePluginHelm, spec.SharingMIG, func(p *spec.NodePool) { p.GPU.Sharing.MIGStrategy = spec.MIGStrategyMixed }, Advertised{"nvidia.com/mig-1g.10gb", 56}},
		{"gke partition", spec.DevicePluginGKEManaged, spec.SharingMIG, func(p *spec.NodePool) { p.GPU.Sharing.MIGStrategy = spec.MIGStrategyMixed }, Advertised{ResourceGPU, 56}},
		{"gke time-sharing ignores rename", spec.DevicePluginGKEManaged, spec.SharingTimeSlicing, func(p *spec.NodePool) { p.GPU.Sharing.RenameByDefault = true }, Advertised{ResourceGPU, 32}},
		// GPUs per node and the GPU from the machine catalogue: p4d has 8 x A100 40GB, whose 1g.10gb is the doubled 1g (4 per GPU).
		{"count and gpu from the instance type", spec.DevicePluginHelm, spec.SharingMIG, func(p *spec.NodePool) { p.GPU.Count, p.GPU.Type, p.InstanceTypes = 0, "", []string{"p4d.24xlarge"} }, Advertised{ResourceGPU, 32}},
	} {
		s, p := pool(c.plugin, c.strategy, c.mutate)
		got, err := AdvertisedBy(s, p)
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	// Refused instead of guessed: GPUs per node unknown, a profile of another GPU.
	s, p := pool(spec.DevicePluginHelm, spec.SharingMIG, func(p *spec.NodePool) { p.GPU.Count = 0 })
	if _, err := AdvertisedBy(s, p); err == nil || !strings.Contains(err.Error(), "GPUs per node unknown") {
		t.Errorf("no count, no machine type: %v", err)
	}
	s, p = pool(spec.DevicePluginHelm, spec.SharingMIG, func(p *spec.NodePool) { p.GPU.Sharing.MIGProfile = "1g.5gb" })
	if _, err := AdvertisedBy(s, p); err == nil || !strings.Contains(err.Error(), "does not exist on H100-SXM") {
		t.Errorf("A100 profile on H100: %v", err)
	}
}

// TestCheckFindsConflicts builds specs whose layers disagree and expects the
// cross-layer rules to fire.
func TestCheckFindsConflicts(t *testing.T) {
	base := func() *spec.ClusterSpec {
		return &spec.ClusterSpec{Metadata: spec.Metadata{Name: "c"}, Spec: spec.Spec{
			Provider: spec.ProviderEKS, ClusterName: "c",
			Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: spec.DevicePluginHelm}, DCGMExporter: spec.DCGMExporter{Enabled: true}},
			NodePools: []spec.NodePool{{Name: "p", OSImage: "AL2023_x86_64_NVIDIA", GPU: spec.GPU{Count: 8},
				Autoscaling: spec.Autoscaling{Max: 2},
				Taints:      []spec.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}}},
		}}
	}
	rules := func(cs *spec.ClusterSpec) []string {
		fs, err := Check(cs)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, f.Rule)
		}
		return out
	}
	if got := rules(base()); len(got) != 0 {
		t.Fatalf("consistent spec has findings %v", got)
	}
	// NVIDIA's chart on a Bottlerocket NVIDIA AMI: two plugins.
	cs := base()
	cs.Spec.NodePools[0].OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
	if got := rules(cs); !contains(got, RuleDevicePluginOwner) {
		t.Errorf("helm plugin on Bottlerocket NVIDIA: %v, want %s", got, RuleDevicePluginOwner)
	}
	// Bottlerocket's plugin named on an AL2023 image: none.
	cs = base()
	cs.Spec.Addons.DevicePlugin.Provider = spec.DevicePluginBottlerocket
	if got := rules(cs); !contains(got, RuleDevicePluginOwner) {
		t.Errorf("bottlerocket plugin on AL2023: %v, want %s", got, RuleDevicePluginOwner)
	}
	// GKE's plugin and the GPU Operator's on the same pool.
	cs = base()
	cs.Spec.Provider = spec.ProviderGKE
	cs.Spec.Addons.DevicePlugin.Provider = spec.DevicePluginGKEManaged
	cs.Spec.Addons.GPUOperator.Enabled = true
	if got := rules(cs); len(got) != 0 {
		t.Errorf("GKE plugin + operator (operands off on the pool): %v, want none", got)
	}
	// The tolerations and selectors follow the generated values: tamper with
	// them through a taint effect the generator does not tolerate.
	dp := devicePluginValuesFor(t, base())
	if tolerates(dp.Tolerations, spec.Taint{Key: "dedicated", Value: "x", Effect: "NoExecute"}) {
		t.Error("device plugin tolerates a taint its pools do not have")
	}
	if !affinitySelects(dp.Affinity)(map[string]string{spec.LabelPool: "p"}) || affinitySelects(dp.Affinity)(map[string]string{spec.LabelPool: "q"}) {
		t.Error("device plugin affinity does not select exactly its pools")
	}
}

func devicePluginValuesFor(t *testing.T, cs *spec.ClusterSpec) DevicePluginValues {
	t.Helper()
	charts, err := buildValues(cs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		if v, ok := c.values.(DevicePluginValues); ok {
			return v
		}
	}
	t.Fatal("no device plugin values")
	return DevicePluginValues{}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCheckRules fires every cross-layer rule on values and manifests that
// were tampered with after generation, the way a hand edit would.
func TestCheckRules(t *testing.T) {
	spec0 := func() *spec.ClusterSpec {
		return &spec.ClusterSpec{Metadata: spec.Metadata{Name: "c"}, Spec: spec.Spec{
			Provider: spec.ProviderEKS, ClusterName: "c",
			Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: spec.DevicePluginHelm}, DCGMExporter: spec.DCGMExporter{Enabled: true}},
			NodePools: []spec.NodePool{{Name: "Train_P5", OSImage: "AL2023_x86_64_NVIDIA", GPU: spec.GPU{Count: 8},
				Autoscaling: spec.Autoscaling{Max: 2},
				Taints:      []spec.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}}},
		}}
	}
	for _, c := range []struct {
		rule   string
		tamper func(charts []chartValues, m *manifests)
	}{
		{RuleDaemonSetToleration, func(charts []chartValues, _ *manifests) {
			for i := range charts {
				if v, ok := charts[i].values.(DCGMExporterValues); ok {
					v.Tolerations = nil // the chart's default: control-plane only
					charts[i].values = v
				}
			}
		}},
		{RuleDaemonSetSelector, func(charts []chartValues, _ *manifests) {
			for i := range charts {
				if v, ok := charts[i].values.(DCGMExporterValues); ok {
					v.NodeSelector = map[string]string{"node-type": "gpu"}
					charts[i].values = v
				}
			}
		}},
		{RuleDevicePluginOwner, func(charts []chartValues, _ *manifests) {
			for i := range charts {
				if v, ok := charts[i].values.(DevicePluginValues); ok {
					v.Affinity = poolAffinity([]string{"other"})
					charts[i].values = v
				}
			}
		}},
		{RuleKueueResource, func(_ []chartValues, m *manifests) {
			m.queues[0].Spec.ResourceGroups[0].Flavors[0].Resources[0].Name = ResourceGPUShared
		}},
	} {
		cs := spec0()
		charts, err := buildValues(cs)
		if err != nil {
			t.Fatal(err)
		}
		m, err := buildManifests(cs)
		if err != nil {
			t.Fatal(err)
		}
		if fs, _ := checkLayers(cs, charts, m); len(fs) != 0 {
			t.Fatalf("untampered layers have findings: %+v", fs)
		}
		c.tamper(charts, m)
		fs, err := checkLayers(cs, charts, m)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range fs {
			got = append(got, f.Rule)
			if f.Path == "" || f.Severity != diag.SeverityError || len(f.Sources) == 0 {
				t.Errorf("%s: finding lacks path, error severity or sources: %+v", c.rule, f)
			}
		}
		if !contains(got, c.rule) {
			t.Errorf("tampering for %s gave %v", c.rule, got)
		}
	}
	// EKS allows Train_P5; Kubernetes object names do not: the flavor is train-p5.
	m, err := buildManifests(spec0())
	if err != nil {
		t.Fatal(err)
	}
	if m.flavors[0].Name != "train-p5" || m.flavors[0].Spec.NodeLabels[spec.LabelPool] != "Train_P5" {
		t.Errorf("flavor %q selects %v", m.flavors[0].Name, m.flavors[0].Spec.NodeLabels)
	}
}

// Charts lists exactly the charts Values writes, with the spec's versions
// and the fields that pin them.
func TestCharts(t *testing.T) {
	t.Parallel()
	cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "c"}, Spec: spec.Spec{
		Provider: spec.ProviderEKS, ClusterName: "c",
		Addons: spec.Addons{
			DevicePlugin: spec.DevicePlugin{Provider: spec.DevicePluginHelm, Version: "0.19.3"},
			DCGMExporter: spec.DCGMExporter{Enabled: true},
		},
		NodePools: []spec.NodePool{{Name: "infer", OSImage: "AL2023_x86_64_NVIDIA", GPU: spec.GPU{Count: 1},
			Autoscaling: spec.Autoscaling{Max: 2},
			Taints:      []spec.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}}},
	}}
	want := []ChartPin{
		{ChartDevicePlugin, "0.19.3", "spec.addons.devicePlugin.version"},
		{ChartDCGMExporter, "", "spec.addons.dcgmExporter.version"},
	}
	if diff := cmp.Diff(want, Charts(cs)); diff != "" {
		t.Errorf("Charts (-want +got):\n%s", diff)
	}
	files, err := Values(cs, Options{SpecFile: "c.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) || files[0].Name != ChartDevicePlugin+".values.yaml" || files[1].Name != ChartDCGMExporter+".values.yaml" {
		t.Errorf("Values files %v do not follow Charts", files)
	}
	for _, p := range want {
		if !strings.HasPrefix(ChartSource(p.Chart), "https://github.com/NVIDIA/") {
			t.Errorf("ChartSource(%s) = %q", p.Chart, ChartSource(p.Chart))
		}
	}
	cs.Spec.Addons.DevicePlugin.Provider = spec.DevicePluginNone
	if got := Charts(cs); len(got) != 0 {
		t.Errorf("no device plugin, no DCGM: Charts = %v", got)
	}
}

// An older device plugin chart pinned by the spec gets the same values as the
// newest (every key gpuctl writes exists from 0.15.0 on), under a header and
// install hint of the pinned version.
func TestOldDevicePluginPinned(t *testing.T) {
	exs := golden.ValidExamples(t, "../../examples/eks-inference.yaml", asOf)
	if len(exs) == 0 {
		t.Fatal("no eks-inference example")
	}
	pluginFile := func(cs *spec.ClusterSpec) string {
		t.Helper()
		files, err := Values(cs, Options{SpecFile: "eks-inference.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Name == ChartDevicePlugin+".values.yaml" {
				return string(f.Data)
			}
		}
		t.Fatalf("no %s values in %d files", ChartDevicePlugin, len(files))
		return ""
	}
	for _, ex := range exs {
		newest := pluginFile(pinned(ex.Spec, ChartDevicePlugin, "")[0])
		old := pluginFile(pinned(ex.Spec, ChartDevicePlugin, "0.16.1")[0])
		if !strings.Contains(old, "# Values for chart nvidia-device-plugin 0.16.1 (") || !strings.Contains(old, " --version 0.16.1 ") {
			t.Errorf("%s: header does not name 0.16.1:\n%s", ex.Dir, old)
		}
		if !strings.Contains(newest, "# Values for chart nvidia-device-plugin 0.20.0 (") {
			t.Errorf("%s: default version is not the newest:\n%s", ex.Dir, newest)
		}
		body := func(s string) string { return s[strings.Index(s, "\naffinity:"):] }
		if diff := cmp.Diff(body(newest), body(old)); diff != "" {
			t.Errorf("%s: 0.16.1 values differ from 0.20.0 (-0.20.0 +0.16.1):\n%s", ex.Dir, diff)
		}
	}
}

// A key the pinned chart version does not have stops Values with an error
// naming the chart, version and key (never a values file the chart would
// silently ignore in part).
func TestValuesRefuseMissingKey(t *testing.T) {
	ks := &KeySet{Chart: ChartDevicePlugin, Version: "0.0.1", keys: map[string]bool{"tolerations": false}}
	cs := &spec.ClusterSpec{}
	v := DevicePluginValues{Affinity: poolAffinity([]string{"p"})}
	_, err := valuesFiles(cs, []chartValues{{ChartDevicePlugin, ks, v}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "chart nvidia-device-plugin 0.0.1 has no values key [affinity]") {
		t.Errorf("err = %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestNewOperatorKeyLists holds the key lists added for 2026-12-01 to what
// their charts have: 26.3.2 reads dcgmExporter.annotations (added in that
// release), the 25.3 line does not; both still read cdi.default.
func TestNewOperatorKeyLists(t *testing.T) {
	for _, tc := range []struct {
		version     string
		annotations bool
	}{{"v25.3.1", false}, {"25.3.2", false}, {"v26.3.2", true}} {
		ks, err := LoadKeys(ChartGPUOperator, tc.version)
		if err != nil {
			t.Fatalf("%s: %v", tc.version, err)
		}
		if got := ks.Has("dcgmExporter.annotations"); got != tc.annotations {
			t.Errorf("%s: dcgmExporter.annotations listed = %v, want %v", tc.version, got, tc.annotations)
		}
		for _, k := range []string{"driver.enabled", "toolkit.enabled", "devicePlugin.enabled", "dcgmExporter.enabled", "migManager.enabled", "cdi.default", "driver.kernelModuleType"} {
			if !ks.Has(k) {
				t.Errorf("%s: %s not listed", tc.version, k)
			}
		}
	}
	if got := ChartVersions(ChartGPUOperator); !slices.Equal(got, []string{"25.3.1", "25.3.2", "25.3.4", "25.10.1", "26.3.2", "26.3.3", "26.7.0"}) {
		t.Errorf("gpu-operator versions = %v", got)
	}
}

// TestDevicePluginNodeSelector: addons.devicePlugin.nodeSelector is written
// into the chart's values beside the pool affinity, and the cross-layer
// check counts the chart only on the pools it selects.
func TestDevicePluginNodeSelector(t *testing.T) {
	doc, err := spec.Load(filepath.Join("..", "..", "examples", "eks-inference.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := doc.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	if len(helmPluginPools(&cs.Spec)) == 0 {
		t.Fatal("example has no pool with NVIDIA's Helm device plugin")
	}
	cs.Spec.Addons.DevicePlugin.NodeSelector = map[string]string{spec.LabelGPU: "true"}
	m := chartValuesOf(t, cs, ChartDevicePlugin)
	if got := dig(m, "nodeSelector", spec.LabelGPU); got != "true" {
		t.Errorf("nodeSelector.%s = %v, want \"true\"", spec.LabelGPU, got)
	}
	if dig(m, "affinity") == nil {
		t.Error("affinity dropped")
	}
	fs, err := Check(cs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Errorf("selector on every GPU node: %s %s", f.Rule, f.Message)
	}
	// A selector no pool matches leaves the Helm pools without a plugin.
	cs.Spec.Addons.DevicePlugin.NodeSelector = map[string]string{spec.LabelPool: "nowhere"}
	fs, err = Check(cs)
	if err != nil {
		t.Fatal(err)
	}
	owner := 0
	for _, f := range fs {
		if f.Rule == RuleDevicePluginOwner || f.Rule == RuleDaemonSetSelector {
			owner++
		}
	}
	if owner == 0 {
		t.Errorf("selector on no pool: %v, want device plugin findings", fs)
	}
}

// TestQuotaOverflow: quotas are multiplied with overflow checks, so a spec
// with absurd numbers (which validate refuses first) is refused here too,
// never written as a negative quota.
func TestQuotaOverflow(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(p *spec.NodePool)
	}{
		{"max int64", func(p *spec.NodePool) { p.Autoscaling.Max = 9223372036854775807 }},
		{"replicas int64", func(p *spec.NodePool) {
			p.GPU.Sharing = spec.Sharing{Strategy: spec.SharingTimeSlicing, Replicas: 9223372036854775807}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "q"}, Spec: spec.Spec{
				Provider: spec.ProviderGKE, Region: "us-central1", ClusterName: "c",
				Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: spec.DevicePluginHelm}},
				NodePools: []spec.NodePool{{Name: "p", MachineType: "g2-standard-24", OSImage: "COS_CONTAINERD",
					GPU: spec.GPU{Count: 2, Driver: "INSTALLATION_DISABLED"}, Autoscaling: spec.Autoscaling{Max: 4}}},
			}}
			c.mod(&cs.Spec.NodePools[0])
			l, err := Build(cs)
			if err == nil {
				ms, _ := l.Manifests(Options{SpecFile: "q.yaml"})
				for _, m := range ms {
					if strings.Contains(string(m.Data), `"-`) {
						t.Fatalf("%s holds a negative quota:\n%s", m.Name, m.Data)
					}
				}
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), "overflows") {
				t.Errorf("error = %v", err)
			}
		})
	}
}
