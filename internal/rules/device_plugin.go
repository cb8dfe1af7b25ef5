package rules

import (
	"fmt"
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

// checkDevicePlugin: exactly one device plugin advertises nvidia.com/gpu on
// the pool's nodes.
func (v *validator) checkDevicePlugin(pc *matrix.PoolFacts) {
	p := pc.Pool
	if !v.gke() && !v.eks() {
		return
	}
	op := v.s.Addons.GPUOperator
	opPlugin := op.Enabled && (op.DevicePlugin.Enabled == nil || *op.DevicePlugin.Enabled)
	if opPlugin && v.s.DevicePluginFor(p) != spec.DevicePluginGPUOperator && v.anyPoolPlugin(spec.DevicePluginGPUOperator) {
		// The Operator's plugin owns other pools of this spec; the nodes of
		// this one are labelled out of it (nvidia.com/gpu.deploy.operands or
		// nvidia.com/gpu.deploy.device-plugin=false, see spec.NodeLabels).
		// With no pool of its own it would run everywhere.
		opPlugin = false
	}
	provider := pc.DevicePlugin.Provider
	disableLabel := v.c.GCP().GKE.DevicePlugin.DisableLabel
	var adv []string
	switch {
	case v.gke():
		if provider == spec.DevicePluginBottlerocket {
			v.add(RulePluginProvider, "", pc.DevicePluginPath, fmt.Sprintf("pool %s: devicePlugin.provider bottlerocket exists only on EKS Bottlerocket NVIDIA AMIs", p.Name), "Use gke-managed, helm or gpu-operator.")
			return
		}
		if p.Labels[disableLabel] != "true" {
			adv = append(adv, "GKE's device plugin")
		} else if provider == spec.DevicePluginGKEManaged || (provider == "" && !pc.DevicePluginSet) {
			v.add(RulePluginMissing, "", pc.Field(".labels")+spec.Key(disableLabel),
				fmt.Sprintf("pool %s: label %s=true turns GKE's device plugin off, but devicePlugin.provider is %s", p.Name, disableLabel, orDefault(provider, "gke-managed (default)")),
				"Remove the label, or set devicePlugin.provider to helm or gpu-operator.", v.c.GCP().GKE.DevicePlugin.Source)
			return
		}
	case v.eks():
		if provider == spec.DevicePluginGKEManaged {
			v.add(RulePluginProvider, "", pc.DevicePluginPath, fmt.Sprintf("pool %s: devicePlugin.provider gke-managed exists only on GKE", p.Name), "Use helm, gpu-operator, or bottlerocket on Bottlerocket NVIDIA AMIs.")
			return
		}
		if a := pc.AMI; a != nil && a.ShipsDevicePlugin {
			adv = append(adv, "the device plugin built into "+a.Name)
		} else if provider == spec.DevicePluginBottlerocket {
			v.add(RulePluginProvider, "", pc.DevicePluginPath, fmt.Sprintf("pool %s: devicePlugin.provider bottlerocket needs a Bottlerocket NVIDIA AMI; %s has no built-in device plugin", p.Name, orDefault(p.OSImage, "the default AMI")),
				"Use helm or gpu-operator, or a BOTTLEROCKET_*_NVIDIA AMI type.", srcEKSPlugin)
			return
		}
	}
	helmSkipped := false   // NVIDIA's chart is the provider, but its nodeSelector leaves the pool out
	helmUncertain := false // its nodeSelector names labels the spec cannot know for the pool
	if provider == spec.DevicePluginHelm {
		switch sel, unknown := matrix.HelmPluginSelects(v.s, p); sel {
		case matrix.NotSelected:
			helmSkipped = true
		case matrix.SelectionUnknown:
			helmUncertain = true
			v.unknown("spec.addons.devicePlugin.nodeSelector",
				fmt.Sprintf("pool %s: the device plugin's nodeSelector names %s, which the spec does not say the pool's nodes carry (labels of the pool, gpuctl's or the platform's); NVIDIA's chart is counted as running there", p.Name, strings.Join(unknown, ", ")),
				v.c.Operator().DevicePlugin.ChartDefaults.Source)
			adv = append(adv, "NVIDIA's device plugin (Helm)")
		default:
			adv = append(adv, "NVIDIA's device plugin (Helm)")
		}
	}
	if provider == spec.DevicePluginGPUOperator && !op.Enabled {
		v.add(RulePluginProvider, "", "spec.addons.gpuOperator.enabled", fmt.Sprintf("pool %s: devicePlugin.provider is gpu-operator but the GPU Operator is not enabled", p.Name), "Set addons.gpuOperator.enabled: true, or use another provider.")
		return
	}
	if opPlugin {
		adv = append(adv, "the GPU Operator's device plugin")
	}
	if v.eks() && pc.AMI == nil && len(adv) == 0 && p.OSImage == "" {
		return // osImage missing: reported already
	}
	switch {
	case len(adv) == 0 && helmSkipped:
		v.add(RulePluginMissing, "", "spec.addons.devicePlugin.nodeSelector",
			fmt.Sprintf("pool %s: its device plugin is NVIDIA's chart, but addons.devicePlugin.nodeSelector (%s) does not select the pool's nodes, so the chart does not run there and nothing advertises nvidia.com/gpu", p.Name, labelList(v.s.Addons.DevicePlugin.NodeSelector)),
			"Give the pool the selector's labels (nodePools[].labels), widen the selector, or set another devicePlugin.provider for the pool.", v.c.Operator().DevicePlugin.ChartDefaults.Source)
	case len(adv) == 0:
		fix := "Set devicePlugin.provider: helm (NVIDIA's chart) or gpu-operator."
		msg := fmt.Sprintf("pool %s: nothing advertises nvidia.com/gpu", p.Name)
		if a := pc.AMI; a != nil && a.ShipsDriver {
			msg = fmt.Sprintf("pool %s: %s ships the NVIDIA driver but not the device plugin, and devicePlugin.provider is %s: nothing advertises nvidia.com/gpu", p.Name, a.Name, orDefault(provider, "unset"))
		}
		v.add(RulePluginMissing, "", pc.DevicePluginPath, msg, fix, srcEKSPlugin)
	case len(adv) > 1:
		path := pc.DevicePluginPath
		fix := "Keep exactly one device plugin."
		switch {
		case v.gke() && adv[0] == "GKE's device plugin":
			fix = fmt.Sprintf("Use devicePlugin.provider: gke-managed and configure sharing through GKE (gpu.sharing), or label the pool %s=true and set gpu.driver: INSTALLATION_DISABLED to run NVIDIA's plugin instead.", disableLabel)
		case pc.AMI != nil && pc.AMI.ShipsDevicePlugin:
			fix = "Use devicePlugin.provider: bottlerocket and do not install NVIDIA's chart (GPU Operator devicePlugin.enabled: false)."
		case opPlugin && provider == spec.DevicePluginHelm:
			fix = "Set addons.gpuOperator.devicePlugin.enabled: false, or drop the Helm chart and use provider gpu-operator."
		}
		all := "all"
		if len(adv) == 2 {
			all = "both"
		}
		if helmUncertain && len(adv) == 2 {
			// Whether NVIDIA's chart runs there depends on labels the spec
			// cannot know: a risk, not a certainty.
			v.add(RulePluginConflict, diag.SeverityWarning, "spec.addons.devicePlugin.nodeSelector", fmt.Sprintf("pool %s: %s may both advertise nvidia.com/gpu on the same nodes: the device plugin's nodeSelector names labels the spec does not say the pool's nodes carry, so whether NVIDIA's chart runs there cannot be told", p.Name, joinAnd(adv)),
				"Give the selector a label the spec sets (nodePools[].labels) on the pools NVIDIA's chart serves, so that the others are visibly left out.", srcEKSPlugin)
			return
		}
		v.add(RulePluginConflict, "", path, fmt.Sprintf("pool %s: %s %s advertise nvidia.com/gpu on the same nodes; they race to register the resource and each ignores the other's sharing config", p.Name, joinAnd(adv), all), fix,
			srcOperatorGKE, srcEKSPlugin)
	default:
		// One advertiser. On GKE NVIDIA's plugin also needs the driver
		// taken away from GKE.
		if v.gke() && adv[0] != "GKE's device plugin" && (pc.GKEInstall == matrix.GKEDriverDefault || pc.GKEInstall == matrix.GKEDriverLatest) {
			v.add(RulePluginConflict, "", pc.Field(".gpu.driver"),
				fmt.Sprintf("pool %s: %s runs NVIDIA's device plugin, but GKE still manages the driver (%s); NVIDIA documents the %s=true label together with INSTALLATION_DISABLED", p.Name, adv[0], orDefault(p.GPU.Driver, "DEFAULT, as gpu.driver is unset"), disableLabel),
				"Set gpu.driver: INSTALLATION_DISABLED and install the driver with the GPU Operator (Ubuntu) or Google's installer DaemonSet.", v.c.GCP().GKE.DevicePlugin.Source)
		}
	}
	// Feature support of the Helm chart version.
	if provider == spec.DevicePluginHelm && p.GPU.Sharing.Strategy == spec.SharingMPS && pc.DevicePlugin.Version != "" {
		if x, err := matrix.ParseVersion(pc.DevicePlugin.Version); err == nil && x.Less(matrix.MustVersion("0.15.0")) {
			verPath := "spec.addons.devicePlugin.version"
			if p.DevicePlugin != nil && p.DevicePlugin.Version != "" {
				verPath = pc.Field(".devicePlugin.version")
			}
			v.add(RulePluginVersion, "", verPath, fmt.Sprintf("pool %s: MPS sharing needs k8s-device-plugin v0.15.0 or later; %s ignores it", p.Name, pc.DevicePlugin.Version), "", srcDevicePluginCL)
		}
	}
	if provider == spec.DevicePluginHelm && pc.DevicePlugin.Version != "" && !v.knownPlugin(pc.DevicePlugin.Version) {
		verPath := "spec.addons.devicePlugin.version"
		if p.DevicePlugin != nil && p.DevicePlugin.Version != "" {
			verPath = pc.Field(".devicePlugin.version")
		}
		rels := v.c.Operator().DevicePlugin.Releases
		v.unknown(verPath, fmt.Sprintf("k8s-device-plugin %s is not in the matrix (it knows %s to %s)", pc.DevicePlugin.Version, rels[0].Version, rels[len(rels)-1].Version), srcDevicePluginCL)
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
	for _, k := range sortedKeys(pc.Pool.Labels) {
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
