package rules

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// anyPoolPlugin reports whether some pool's device plugin is provider.
func (v *validator) anyPoolPlugin(provider string) bool {
	for i := range v.s.NodePools {
		if v.s.DevicePluginFor(&v.s.NodePools[i]) == provider {
			return true
		}
	}
	return false
}

// helmPlugin names NVIDIA's chart among a pool's advertisers.
const helmPlugin = "NVIDIA's device plugin (Helm)"

// advertisers is what advertises nvidia.com/gpu on a pool's nodes.
type advertisers struct {
	names []string // "GKE's device plugin", "NVIDIA's device plugin (Helm)", ...
	// opPlugin: the GPU Operator's device plugin runs there.
	opPlugin bool
	// helmSkipped: NVIDIA's chart is the provider, but its nodeSelector
	// leaves the pool out; helmUncertain: its nodeSelector names labels the
	// spec cannot know for the pool.
	helmSkipped, helmUncertain bool
}

// uncertain are the unknown values that may leave a chart's plugin out of
// the pool: the paths of those adv counts.
func (adv advertisers) uncertain() []string {
	var paths []string
	if slices.Contains(adv.names, helmPlugin) {
		paths = append(paths, "spec.addons.devicePlugin.nodeSelector")
	}
	if adv.opPlugin {
		paths = append(paths, "spec.addons.gpuOperator.devicePlugin.enabled")
	}
	return paths
}

// checkDevicePlugin: exactly one device plugin advertises nvidia.com/gpu on
// the pool's nodes (DEVICE-PLUGIN-PROVIDER, -MISSING, -CONFLICT, -VERSION).
func (v *validator) checkDevicePlugin(pc *matrix.PoolFacts) {
	if !v.gke() && !v.eks() {
		return
	}
	var adv advertisers
	if !v.platformPlugin(pc, &adv) || !v.chartPlugins(pc, &adv) {
		return
	}
	if v.judgePlugins(pc, adv) {
		v.checkPluginVersion(pc)
	}
}

// judgePlugins judges the plugins adv that advertise nvidia.com/gpu on the
// pool: none, more than one, or the one (on GKE, with the driver); false
// when the pool's OS image is missing (reported already).
func (v *validator) judgePlugins(pc *matrix.PoolFacts, adv advertisers) bool {
	switch {
	case v.eks() && pc.AMI == nil && len(adv.names) == 0 && pc.Pool.OSImage == "":
		return false // osImage missing: reported already
	case len(adv.names) == 0 && !adv.helmSkipped && v.notJudged(RulePluginMissing, pc.Pool.Name, devicePluginPaths(pc.Field)...):
		// something gpuctl does not read may install it
	case len(adv.names) == 0:
		v.checkPluginMissing(pc, adv)
	case len(adv.names) > 1 && v.notJudged(RulePluginConflict, pc.Pool.Name, adv.uncertain()...):
		// NVIDIA's chart or the Operator's plugin runs there unless an
		// unknown value (the chart's nodeSelector, the Operator's
		// devicePlugin.enabled) leaves the pool out
	case len(adv.names) > 1:
		v.checkPluginConflict(pc, adv)
	default:
		v.checkPluginDriver(pc, adv)
	}
	return true
}

// platformPlugin adds the platform's own device plugin (GKE's, a
// Bottlerocket AMI's) to adv; false when the pool's provider cannot run on
// the platform at all (DEVICE-PLUGIN-PROVIDER) or GKE's plugin is labelled
// off with nothing else named (DEVICE-PLUGIN-MISSING).
func (v *validator) platformPlugin(pc *matrix.PoolFacts, adv *advertisers) bool {
	p := pc.Pool
	provider := pc.DevicePlugin.Provider
	if v.gke() {
		disableLabel := v.c.GCP().GKE.DevicePlugin.DisableLabel
		switch {
		case provider == spec.DevicePluginBottlerocket:
			v.add(RulePluginProvider, "", pc.DevicePluginPath, fmt.Sprintf("pool %s: devicePlugin.provider bottlerocket is EKS's: the device plugin built into Bottlerocket NVIDIA nodes, which GKE does not run", p.Name), "Use gke-managed, helm or gpu-operator.")
			return false
		case p.Labels[disableLabel] != "true":
			adv.names = append(adv.names, "GKE's device plugin")
		case provider == spec.DevicePluginGKEManaged || (provider == "" && !pc.DevicePluginSet):
			v.add(RulePluginMissing, "", pc.Field(".labels")+spec.Key(disableLabel),
				fmt.Sprintf("pool %s: label %s=true turns GKE's device plugin off, but devicePlugin.provider is %s", p.Name, disableLabel, cmp.Or(provider, "gke-managed (default)")),
				"Remove the label, or set devicePlugin.provider to helm or gpu-operator.", v.c.GCP().GKE.DevicePlugin.Source)
			return false
		}
		return true
	}
	switch a := pc.AMI; {
	case provider == spec.DevicePluginGKEManaged:
		v.add(RulePluginProvider, "", pc.DevicePluginPath, fmt.Sprintf("pool %s: devicePlugin.provider gke-managed exists only on GKE", p.Name), "Use helm, gpu-operator, or bottlerocket on Bottlerocket NVIDIA AMIs.")
		return false
	case a != nil && a.ShipsDevicePlugin:
		adv.names = append(adv.names, "the device plugin built into "+a.Name)
	case provider == spec.DevicePluginBottlerocket:
		v.add(RulePluginProvider, "", pc.DevicePluginPath, fmt.Sprintf("pool %s: devicePlugin.provider bottlerocket needs a Bottlerocket NVIDIA AMI; %s has no built-in device plugin", p.Name, cmp.Or(p.OSImage, "the default AMI")),
			"Use helm or gpu-operator, or a BOTTLEROCKET_*_NVIDIA AMI type.", srcEKSPlugin)
		return false
	}
	return true
}

// chartPlugins adds NVIDIA's chart and the GPU Operator's plugin to adv
// where they run on the pool; false when the provider is gpu-operator
// without the Operator (DEVICE-PLUGIN-PROVIDER).
func (v *validator) chartPlugins(pc *matrix.PoolFacts, adv *advertisers) bool {
	p := pc.Pool
	provider := pc.DevicePlugin.Provider
	if provider == spec.DevicePluginHelm {
		switch sel, unknown := matrix.HelmPluginSelects(v.s, p); sel {
		case matrix.NotSelected:
			adv.helmSkipped = true
		case matrix.SelectionUnknown:
			adv.helmUncertain = true
			v.unknown("spec.addons.devicePlugin.nodeSelector",
				fmt.Sprintf("pool %s: the device plugin's nodeSelector names %s, which the spec does not say the pool's nodes carry (labels of the pool, gpuctl's or the platform's); NVIDIA's chart is counted as running there", p.Name, strings.Join(unknown, ", ")),
				v.c.Operator().DevicePlugin.ChartDefaults.Source)
			adv.names = append(adv.names, helmPlugin)
		default:
			adv.names = append(adv.names, helmPlugin)
		}
	}
	op := v.s.Addons.GPUOperator
	if provider == spec.DevicePluginGPUOperator && !op.Enabled {
		v.add(RulePluginProvider, "", "spec.addons.gpuOperator.enabled", fmt.Sprintf("pool %s: devicePlugin.provider is gpu-operator but the GPU Operator is not enabled", p.Name), "Set addons.gpuOperator.enabled: true, or use another provider.")
		return false
	}
	adv.opPlugin = op.Enabled && (op.DevicePlugin.Enabled == nil || *op.DevicePlugin.Enabled)
	if adv.opPlugin && v.s.DevicePluginFor(p) != spec.DevicePluginGPUOperator && v.anyPoolPlugin(spec.DevicePluginGPUOperator) {
		// The Operator's plugin owns other pools of this spec; the nodes of
		// this one are labelled out of it (nvidia.com/gpu.deploy.operands or
		// nvidia.com/gpu.deploy.device-plugin=false, see spec.NodeLabels).
		// With no pool of its own it would run everywhere.
		adv.opPlugin = false
	}
	if adv.opPlugin {
		adv.names = append(adv.names, "the GPU Operator's device plugin")
	}
	return true
}

// checkPluginMissing: nothing advertises nvidia.com/gpu
// (DEVICE-PLUGIN-MISSING).
func (v *validator) checkPluginMissing(pc *matrix.PoolFacts, adv advertisers) {
	p := pc.Pool
	if adv.helmSkipped {
		v.add(RulePluginMissing, "", "spec.addons.devicePlugin.nodeSelector",
			fmt.Sprintf("pool %s: its device plugin is NVIDIA's chart, but addons.devicePlugin.nodeSelector (%s) does not select the pool's nodes, so the chart does not run there and nothing advertises nvidia.com/gpu", p.Name, labelList(v.s.Addons.DevicePlugin.NodeSelector)),
			"Give the pool the selector's labels (nodePools[].labels), widen the selector, or set another devicePlugin.provider for the pool.", v.c.Operator().DevicePlugin.ChartDefaults.Source)
		return
	}
	fix := "Set devicePlugin.provider: helm (NVIDIA's chart) or gpu-operator."
	msg := fmt.Sprintf("pool %s: nothing advertises nvidia.com/gpu", p.Name)
	if a := pc.AMI; a != nil && a.ShipsDriver {
		msg = fmt.Sprintf("pool %s: %s ships the NVIDIA driver but not the device plugin, and devicePlugin.provider is %s: nothing advertises nvidia.com/gpu", p.Name, a.Name, cmp.Or(pc.DevicePlugin.Provider, "unset"))
	}
	v.add(RulePluginMissing, "", pc.DevicePluginPath, msg, fix, srcEKSPlugin)
}

// checkPluginConflict: more than one plugin advertises nvidia.com/gpu
// (DEVICE-PLUGIN-CONFLICT).
func (v *validator) checkPluginConflict(pc *matrix.PoolFacts, adv advertisers) {
	p := pc.Pool
	if adv.helmUncertain && len(adv.names) == 2 {
		// Whether NVIDIA's chart runs there depends on labels the spec
		// cannot know: a risk, not a certainty.
		v.add(RulePluginConflict, diag.SeverityWarning, "spec.addons.devicePlugin.nodeSelector", fmt.Sprintf("pool %s: %s may both advertise nvidia.com/gpu on the same nodes: the device plugin's nodeSelector names labels the spec does not say the pool's nodes carry, so whether NVIDIA's chart runs there cannot be told", p.Name, joinAnd(adv.names)),
			"Give the selector a label the spec sets (nodePools[].labels) on the pools NVIDIA's chart serves, so that the others are visibly left out.", srcEKSPlugin)
		return
	}
	fix := "Keep exactly one device plugin."
	switch {
	case v.gke() && adv.names[0] == "GKE's device plugin":
		fix = fmt.Sprintf("Use devicePlugin.provider: gke-managed and configure sharing through GKE (gpu.sharing), or label the pool %s=true and set gpu.driver: INSTALLATION_DISABLED to run NVIDIA's plugin instead.", v.c.GCP().GKE.DevicePlugin.DisableLabel)
	case pc.AMI != nil && pc.AMI.ShipsDevicePlugin:
		fix = "Use devicePlugin.provider: bottlerocket and do not install NVIDIA's chart (GPU Operator devicePlugin.enabled: false)."
	case adv.opPlugin && pc.DevicePlugin.Provider == spec.DevicePluginHelm:
		fix = "Set addons.gpuOperator.devicePlugin.enabled: false, or drop the Helm chart and use provider gpu-operator."
	}
	all := "all"
	if len(adv.names) == 2 {
		all = "both"
	}
	v.add(RulePluginConflict, "", pc.DevicePluginPath, fmt.Sprintf("pool %s: %s %s advertise nvidia.com/gpu on the same nodes; they race to register the resource and each ignores the other's sharing config", p.Name, joinAnd(adv.names), all), fix,
		srcOperatorGKE, srcEKSPlugin)
}

// checkPluginDriver: on GKE, NVIDIA's plugin as the one advertiser also
// needs the driver taken away from GKE (DEVICE-PLUGIN-CONFLICT).
func (v *validator) checkPluginDriver(pc *matrix.PoolFacts, adv advertisers) {
	if !v.gke() || adv.names[0] == "GKE's device plugin" || (pc.GKEInstall != matrix.GKEDriverDefault && pc.GKEInstall != matrix.GKEDriverLatest) {
		return
	}
	p := pc.Pool
	v.add(RulePluginConflict, "", pc.Field(".gpu.driver"),
		fmt.Sprintf("pool %s: %s runs NVIDIA's device plugin, but GKE still manages the driver (%s); NVIDIA documents the %s=true label together with INSTALLATION_DISABLED", p.Name, adv.names[0], cmp.Or(p.GPU.Driver, "DEFAULT, as gpu.driver is unset"), v.c.GCP().GKE.DevicePlugin.DisableLabel),
		"Set gpu.driver: INSTALLATION_DISABLED and install the driver with the GPU Operator (Ubuntu) or Google's installer DaemonSet.", v.c.GCP().GKE.DevicePlugin.Source)
}

// checkPluginVersion: what the Helm chart's version supports
// (DEVICE-PLUGIN-VERSION), and whether the matrix knows it.
func (v *validator) checkPluginVersion(pc *matrix.PoolFacts) {
	p := pc.Pool
	ver := pc.DevicePlugin.Version
	if pc.DevicePlugin.Provider != spec.DevicePluginHelm || ver == "" {
		return
	}
	verPath := "spec.addons.devicePlugin.version"
	if p.DevicePlugin != nil && p.DevicePlugin.Version != "" {
		verPath = pc.Field(".devicePlugin.version")
	}
	if x, err := matrix.ParseVersion(ver); err == nil && p.GPU.Sharing.Strategy == spec.SharingMPS && x.Less(matrix.MustVersion("0.15.0")) {
		v.add(RulePluginVersion, "", verPath, fmt.Sprintf("pool %s: MPS sharing needs k8s-device-plugin v0.15.0 or later; %s ignores it", p.Name, ver), "", srcDevicePluginCL)
	}
	if !v.knownPlugin(ver) {
		rels := v.c.Operator().DevicePlugin.Releases
		v.unknown(verPath, fmt.Sprintf("k8s-device-plugin %s is not in the matrix (it knows %s to %s)", ver, rels[0].Version, rels[len(rels)-1].Version), srcDevicePluginCL)
	}
}

func (v *validator) knownPlugin(ver string) bool {
	x, err := matrix.ParseVersion(ver)
	if err != nil {
		return true // reported as SPEC-VERSION
	}
	for i := range v.c.Operator().DevicePlugin.Releases {
		r := &v.c.Operator().DevicePlugin.Releases[i]
		if r.ParsedVersion().Compare(x) == 0 {
			return true
		}
	}
	return false
}

// checkLabels: labels GPU Feature Discovery owns.
func (v *validator) checkLabels(pc *matrix.PoolFacts) {
	for _, k := range slices.Sorted(maps.Keys(pc.Pool.Labels)) {
		if !v.c.GFDLabel(k) {
			continue
		}
		extra := ""
		if len(pc.Pool.InstanceTypes) > 1 {
			extra = fmt.Sprintf(" (this pool has %d instance types)", len(pc.Pool.InstanceTypes))
		}
		v.add(RuleLabelGFDManaged, "", pc.Field(".labels")+spec.Key(k),
			fmt.Sprintf("pool %s: %s=%s is set by hand, but GPU Feature Discovery writes it from the hardware: overwritten where GFD runs, wrong wherever the nodes differ from what was typed%s", pc.Pool.Name, k, pc.Pool.Labels[k], extra),
			"Remove it and select on GFD's value; use a key outside nvidia.com/ (e.g. gpu-type) for a static label.", v.c.Operator().DevicePlugin.GFDLabels.Source)
	}
}
