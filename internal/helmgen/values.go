package helmgen

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Chart repositories, for the install hints in the headers.
var chartRepos = map[string]string{
	ChartDevicePlugin: "https://nvidia.github.io/k8s-device-plugin",
	ChartGPUOperator:  "https://helm.ngc.nvidia.com/nvidia",
	ChartDCGMExporter: "https://nvidia.github.io/dcgm-exporter/helm-charts",
	// Source: https://github.com/aws/eks-charts#usage
	ChartEFADevicePlugin: "https://aws.github.io/eks-charts",
}

// chartVersionPrefix is how a chart's repository spells its versions (the
// GPU Operator's are "v26.7.0").
var chartVersionPrefix = map[string]string{ChartGPUOperator: "v", ChartEFADevicePlugin: "v"}

// Namespaces the charts are installed into (the device plugin chart refuses
// the default namespace).
var chartNamespaces = map[string]string{
	ChartDevicePlugin: "nvidia-device-plugin",
	ChartGPUOperator:  "gpu-operator",
	ChartDCGMExporter: "gpu-monitoring",
	// kube-system, as the EKS user guide installs it.
	ChartEFADevicePlugin: "kube-system",
}

// GKEDriverDir is where GKE's driver installer puts the NVIDIA driver on COS
// nodes. Source: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/google-gke.html
const GKEDriverDir = "/home/kubernetes/bin/nvidia"

// ---- nvidia-device-plugin ----

// DevicePluginValues are the values gpuctl sets on the nvidia-device-plugin chart.
type DevicePluginValues struct {
	Config   *DevicePluginConfigValues `json:"config,omitempty"`
	Affinity *corev1.Affinity          `json:"affinity,omitempty"`
	// NodeSelector is addons.devicePlugin.nodeSelector: the DaemonSet runs
	// only on nodes with these labels (and of the pools the affinity names).
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations"`
}

// DevicePluginConfigValues is the chart's config: named plugin configs (one
// per pool, selected by the node label nvidia.com/device-plugin.config) as
// YAML strings, and the config of unlabelled nodes.
type DevicePluginConfigValues struct {
	Map     map[string]string `json:"map"`
	Default string            `json:"default"`
}

// ---- gpu-operator ----

// OperatorValues are the values gpuctl sets on the gpu-operator chart.
type OperatorValues struct {
	CDI          *OperatorCDI         `json:"cdi,omitempty"`
	HostPaths    *OperatorHostPaths   `json:"hostPaths,omitempty"`
	Daemonsets   OperatorDaemonsets   `json:"daemonsets"`
	Driver       OperatorDriver       `json:"driver"`
	Toolkit      OperatorToolkit      `json:"toolkit"`
	DevicePlugin OperatorDevicePlugin `json:"devicePlugin"`
	MIG          *OperatorMIG         `json:"mig,omitempty"`
	MIGManager   OperatorEnabled      `json:"migManager"`
	DCGMExporter OperatorDCGMExporter `json:"dcgmExporter"`
}

// OperatorCDI is the operator's cdi section.
type OperatorCDI struct {
	Enabled bool `json:"enabled"`
	// Default is a no-op from v25.10.0; set only for older charts.
	Default *bool `json:"default,omitempty"`
}

// OperatorHostPaths is the operator's hostPaths section.
type OperatorHostPaths struct {
	DriverInstallDir string `json:"driverInstallDir,omitempty"`
}

// OperatorDaemonsets holds what every operand DaemonSet gets.
type OperatorDaemonsets struct {
	Tolerations []corev1.Toleration `json:"tolerations"`
}

// OperatorDriver is the operator's driver section.
type OperatorDriver struct {
	Enabled          bool   `json:"enabled"`
	Version          string `json:"version,omitempty"`
	KernelModuleType string `json:"kernelModuleType,omitempty"`
}

// OperatorToolkit is the operator's container toolkit section.
type OperatorToolkit struct {
	Enabled    bool            `json:"enabled"`
	InstallDir string          `json:"installDir,omitempty"`
	Env        []corev1.EnvVar `json:"env,omitempty"`
}

// OperatorDevicePlugin is the operator's device plugin section.
type OperatorDevicePlugin struct {
	Enabled bool                        `json:"enabled"`
	Config  *OperatorDevicePluginConfig `json:"config,omitempty"`
}

// OperatorDevicePluginConfig makes the operator create a ConfigMap of named
// plugin configs.
type OperatorDevicePluginConfig struct {
	Create  bool              `json:"create"`
	Name    string            `json:"name"`
	Default string            `json:"default"`
	Data    map[string]string `json:"data"`
}

// OperatorMIG is the operator's cluster-wide MIG strategy.
type OperatorMIG struct {
	Strategy string `json:"strategy"`
}

// OperatorEnabled is an operand that is only switched on or off.
type OperatorEnabled struct {
	Enabled bool `json:"enabled"`
}

// OperatorDCGMExporter is the operator's DCGM exporter.
type OperatorDCGMExporter struct {
	Enabled        bool            `json:"enabled"`
	ServiceMonitor OperatorEnabled `json:"serviceMonitor"`
}

// ---- dcgm-exporter ----

// DCGMExporterValues are the values gpuctl sets on the dcgm-exporter chart.
// Its defaults tolerate only control-plane taints and select no node, so on
// tainted GPU pools it would schedule no pod.
// Source: https://github.com/NVIDIA/dcgm-exporter/issues/731
type DCGMExporterValues struct {
	NodeSelector   map[string]string   `json:"nodeSelector"`
	Tolerations    []corev1.Toleration `json:"tolerations"`
	ServiceMonitor OperatorEnabled     `json:"serviceMonitor"`
	// ExtraHostVolumes and ExtraVolumeMounts give the exporter the driver
	// libraries where the driver lives outside the standard paths (GKE).
	ExtraHostVolumes  []HostVolume         `json:"extraHostVolumes,omitempty"`
	ExtraVolumeMounts []corev1.VolumeMount `json:"extraVolumeMounts,omitempty"`
}

// HostVolume is a hostPath volume of the dcgm-exporter chart.
type HostVolume struct {
	Name     string `json:"name"`
	HostPath string `json:"hostPath"`
}

// chartValues is one chart's values for one environment.
type chartValues struct {
	chart  string
	keys   *KeySet
	values any
}

// ChartPin is one chart the Helm layer of a spec installs and the version
// the spec pins for it.
type ChartPin struct {
	// Chart is ChartDevicePlugin, ChartGPUOperator, ChartDCGMExporter or
	// ChartEFADevicePlugin.
	Chart string
	// Version is the version as the spec writes it ("v26.7.0" or "26.7.0");
	// "" means the newest gpuctl has a key list for.
	Version string
	// Path is the spec field that pins the version, e.g.
	// "spec.addons.gpuOperator.version" (a path into the resolved spec); ""
	// where no spec field pins it.
	Path string
}

// Charts returns the charts Values writes a file for, in file order. Each
// needs a key list for its version (LoadKeys; ChartVersions lists them).
func Charts(cs *spec.ClusterSpec) []ChartPin {
	s := &cs.Spec
	var out []ChartPin
	if len(helmPluginPools(s)) > 0 {
		out = append(out, ChartPin{ChartDevicePlugin, s.Addons.DevicePlugin.Version, "spec.addons.devicePlugin.version"})
	}
	if s.Addons.GPUOperator.Enabled {
		out = append(out, ChartPin{ChartGPUOperator, s.Addons.GPUOperator.Version, "spec.addons.gpuOperator.version"})
	}
	if len(standaloneDCGMPools(s)) > 0 {
		out = append(out, ChartPin{ChartDCGMExporter, s.Addons.DCGMExporter.Version, "spec.addons.dcgmExporter.version"})
	}
	if len(efaPools(s)) > 0 {
		// No spec field pins it: the newest key list gpuctl has.
		out = append(out, ChartPin{ChartEFADevicePlugin, "", ""})
	}
	return out
}

// helmPluginPools are the pools whose device plugin is NVIDIA's Helm chart.
func helmPluginPools(s *spec.Spec) []*spec.NodePool {
	return poolsWhere(s, func(p *spec.NodePool) bool { return s.DevicePluginFor(p) == spec.DevicePluginHelm })
}

// standaloneDCGMPools are the pools the dcgm-exporter chart exports.
func standaloneDCGMPools(s *spec.Spec) []*spec.NodePool {
	return poolsWhere(s, func(p *spec.NodePool) bool { return standaloneDCGM(s, p) })
}

// buildValues builds the values of every chart the spec needs (Charts).
func buildValues(cs *spec.ClusterSpec) ([]chartValues, error) {
	s := &cs.Spec
	var out []chartValues
	for _, pin := range Charts(cs) {
		ks, err := LoadKeys(pin.Chart, pin.Version)
		if err != nil {
			return nil, err
		}
		var v any
		switch pin.Chart {
		case ChartDevicePlugin:
			v, err = devicePluginValues(s, helmPluginPools(s))
		case ChartGPUOperator:
			v, err = operatorValues(s, ks)
		case ChartDCGMExporter:
			v = dcgmExporterValues(s, standaloneDCGMPools(s))
		case ChartEFADevicePlugin:
			v = efaDevicePluginValues(efaPools(s))
		}
		if err != nil {
			return nil, err
		}
		out = append(out, chartValues{pin.Chart, ks, v})
	}
	return out, nil
}

// dcgmExporterValues are the dcgm-exporter chart's values for the pools it
// exports (standalone).
func dcgmExporterValues(s *spec.Spec, standalone []*spec.NodePool) DCGMExporterValues {
	v := DCGMExporterValues{
		NodeSelector:   map[string]string{spec.LabelGPU: "true"},
		Tolerations:    tolerationsFor(s.NodePools, true),
		ServiceMonitor: OperatorEnabled{Enabled: s.Addons.DCGMExporter.ServiceMonitor},
	}
	if operatorRunsDCGM(s) {
		// The Operator's exporter covers its own pools; this one covers
		// the pools labelled out of the Operator's operands (GKE-managed,
		// Bottlerocket), and only those, so no GPU is exported twice.
		v.NodeSelector[spec.LabelOperatorDeployOperands] = "false"
		pools := make([]spec.NodePool, len(standalone))
		for i, p := range standalone {
			pools[i] = *p
		}
		v.Tolerations = tolerationsFor(pools, true)
	}
	if s.Provider == spec.ProviderGKE {
		// GKE installs the driver under /home/kubernetes/bin/nvidia and
		// mounts it at /usr/local/nvidia into GPU containers; the
		// exporter requests no GPU, so it mounts the folder itself.
		// Source: https://cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics
		v.ExtraHostVolumes = []HostVolume{{Name: "nvidia-install-dir-host", HostPath: GKEDriverDir}}
		v.ExtraVolumeMounts = []corev1.VolumeMount{{Name: "nvidia-install-dir-host", MountPath: "/usr/local/nvidia", ReadOnly: true}}
	}
	return v
}

// standaloneDCGM reports whether the dcgm-exporter chart (not the GPU
// Operator's exporter) exports the metrics of pool p: DCGM metrics are asked
// for, and the Operator's exporter does not run there (no Operator, its
// exporter off, or the pool's nodes labelled out of its operands).
func standaloneDCGM(s *spec.Spec, p *spec.NodePool) bool {
	if !s.Addons.DCGMExporter.Enabled || s.DevicePluginFor(p) == spec.DevicePluginNone {
		return false
	}
	return !operatorRunsDCGM(s) || s.NodeLabels(p)[spec.LabelOperatorDeployOperands] == "false"
}

func operatorRunsDCGM(s *spec.Spec) bool {
	return matrix.OperatorSwitches(s).DCGMExporter
}

func poolsWhere(s *spec.Spec, f func(*spec.NodePool) bool) []*spec.NodePool {
	var out []*spec.NodePool
	for i := range s.NodePools {
		if f(&s.NodePools[i]) {
			out = append(out, &s.NodePools[i])
		}
	}
	return out
}

// pluginConfigs returns the named device plugin configs of pools: one per
// pool plus the default, as YAML strings.
func pluginConfigs(pools []*spec.NodePool) (map[string]string, error) {
	m := map[string]string{}
	def, err := yaml.Marshal(PluginConfig{Version: "v1", Flags: PluginFlags{MIGStrategy: "none"}})
	if err != nil {
		return nil, err
	}
	m[DefaultConfigName] = string(def)
	for _, p := range pools {
		if p.Name == DefaultConfigName {
			return nil, fmt.Errorf("pool name %q is reserved for the device plugin's default config; rename the pool", p.Name)
		}
		b, err := yaml.Marshal(pluginConfig(p))
		if err != nil {
			return nil, err
		}
		m[p.Name] = string(b)
	}
	return m, nil
}

func devicePluginValues(s *spec.Spec, pools []*spec.NodePool) (DevicePluginValues, error) {
	configs, err := pluginConfigs(pools)
	if err != nil {
		return DevicePluginValues{}, err
	}
	names := make([]string, len(pools))
	ps := make([]spec.NodePool, len(pools))
	for i, p := range pools {
		names[i] = p.Name
		ps[i] = *p
	}
	return DevicePluginValues{
		Config:       &DevicePluginConfigValues{Map: configs, Default: DefaultConfigName},
		Affinity:     poolAffinity(names),
		NodeSelector: s.Addons.DevicePlugin.NodeSelector,
		Tolerations:  tolerationsFor(ps, true),
	}, nil
}

// poolAffinity requires nodes of the named pools.
func poolAffinity(pools []string) *corev1.Affinity {
	sorted := append([]string(nil), pools...)
	sort.Strings(sorted)
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: spec.LabelPool, Operator: corev1.NodeSelectorOpIn, Values: sorted,
			}}}},
		},
	}}
}

// tolerationsFor returns tolerations of every taint of pools, deduplicated
// and sorted. anyValue tolerates the key and effect whatever the value
// (Exists), which DaemonSets want; otherwise the exact taint (Equal).
func tolerationsFor(pools []spec.NodePool, anyValue bool) []corev1.Toleration {
	seen := map[string]corev1.Toleration{}
	for _, p := range pools {
		for _, t := range p.NodeTaints() {
			tol := corev1.Toleration{Key: t.Key, Effect: corev1.TaintEffect(t.Effect)}
			switch {
			case anyValue || t.Value == "":
				tol.Operator = corev1.TolerationOpExists
			default:
				tol.Operator = corev1.TolerationOpEqual
				tol.Value = t.Value
			}
			seen[string(tol.Operator)+"\x00"+tol.Key+"\x00"+tol.Value+"\x00"+string(tol.Effect)] = tol
		}
	}
	out := make([]corev1.Toleration, 0, len(seen))
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, seen[k])
	}
	return out
}

// OperatorDevicePluginConfigMap is the ConfigMap the operator creates for
// the device plugin configs.
const OperatorDevicePluginConfigMap = "gpuctl-device-plugin-configs"

func operatorValues(s *spec.Spec, ks *KeySet) (OperatorValues, error) {
	op := s.Addons.GPUOperator
	// What the spec leaves unset is the chart's default for the pinned
	// version (matrix.OperatorSwitches), written out so that the values
	// say what validate judged.
	sw := matrix.OperatorSwitches(s)
	v := OperatorValues{
		Daemonsets: OperatorDaemonsets{Tolerations: tolerationsFor(s.NodePools, true)},
		Driver:     OperatorDriver{Enabled: sw.Driver},
		MIGManager: OperatorEnabled{Enabled: sw.MIGManager},
		DCGMExporter: OperatorDCGMExporter{
			Enabled:        s.Addons.DCGMExporter.Enabled && sw.DCGMExporter,
			ServiceMonitor: OperatorEnabled{Enabled: s.Addons.DCGMExporter.ServiceMonitor},
		},
	}
	if sw.Driver {
		v.Driver.Version = op.Driver.Version
		v.Driver.KernelModuleType = op.Driver.KernelModuleType
	}
	// The toolkit: the chart default unless the spec says otherwise (on
	// images that ship the toolkit validate warns: OPERATOR-TOOLKIT-PREINSTALLED).
	v.Toolkit.Enabled = sw.Toolkit
	for _, k := range slices.Sorted(maps.Keys(op.Toolkit.Env)) {
		v.Toolkit.Env = append(v.Toolkit.Env, corev1.EnvVar{Name: k, Value: op.Toolkit.Env[k]})
	}
	if s.Provider == spec.ProviderGKE && !sw.Driver {
		gkeInstalledDriver(&v, s, ks)
	}
	opPools := poolsWhere(s, func(p *spec.NodePool) bool { return s.DevicePluginFor(p) == spec.DevicePluginGPUOperator })
	v.DevicePlugin.Enabled = len(opPools) > 0 && sw.DevicePlugin
	if v.DevicePlugin.Enabled {
		configs, err := pluginConfigs(opPools)
		if err != nil {
			return v, err
		}
		v.DevicePlugin.Config = &OperatorDevicePluginConfig{Create: true, Name: OperatorDevicePluginConfigMap, Default: DefaultConfigName, Data: configs}
	}
	strategy, err := operatorMIGStrategy(opPools)
	if err != nil {
		return v, err
	}
	if strategy != "" {
		v.MIG = &OperatorMIG{Strategy: strategy}
	}
	return v, nil
}

// gkeInstalledDriver points the operator at the driver Google's installer
// owns (COS): its host paths, the toolkit's install directory and CDI (the
// CDI default where the chart version ks still has the key), and on GKE
// 1.33+ the toolkit's runtime config source.
func gkeInstalledDriver(v *OperatorValues, s *spec.Spec, ks *KeySet) {
	op := s.Addons.GPUOperator
	v.HostPaths = &OperatorHostPaths{DriverInstallDir: GKEDriverDir}
	v.Toolkit.InstallDir = GKEDriverDir
	v.CDI = &OperatorCDI{Enabled: true}
	if matrix.MustVersion(ks.Version).Less(matrix.MustVersion("25.10.0")) && ks.Has("cdi.default") {
		t := true
		v.CDI.Default = &t
	}
	if kv, err := matrix.ParseVersion(s.KubernetesVersion); err == nil && !kv.Less(matrix.MustVersion("1.33")) && op.Toolkit.Env["RUNTIME_CONFIG_SOURCE"] == "" {
		// Known issue on GKE 1.33+: the toolkit misconfigures containerd
		// unless it reads the config from the file.
		v.Toolkit.Env = append(v.Toolkit.Env, corev1.EnvVar{Name: "RUNTIME_CONFIG_SOURCE", Value: "file"})
		sort.Slice(v.Toolkit.Env, func(i, j int) bool { return v.Toolkit.Env[i].Name < v.Toolkit.Env[j].Name })
	}
}

// operatorMIGStrategy is the one MIG strategy of the operator's MIG pools
// ("" for none); pools that use two are an error.
func operatorMIGStrategy(opPools []*spec.NodePool) (string, error) {
	strategy := ""
	for _, p := range opPools {
		if p.SharingStrategy() != spec.SharingMIG {
			continue
		}
		if strategy != "" && strategy != p.MIGStrategy() {
			return "", fmt.Errorf("the GPU Operator has one MIG strategy for the cluster, but pools use both %s and %s; use one", strategy, p.MIGStrategy())
		}
		strategy = p.MIGStrategy()
	}
	return strategy, nil
}
