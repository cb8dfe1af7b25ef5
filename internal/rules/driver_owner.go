package rules

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
)

// operatorDriverPath is the switch of the GPU Operator's driver.
const operatorDriverPath = "spec.addons.gpuOperator.driver.enabled"

// checkDriverOwner: exactly one component installs the driver, and on GKE
// one GKE can.
func (v *validator) checkDriverOwner(pc *matrix.PoolFacts) {
	switch {
	case v.gke():
		v.checkGKEDriverOwner(pc)
		v.checkGKEDriverOption(pc)
	case v.eks():
		v.checkEKSDriverOwner(pc)
	}
}

// checkGKEDriverOwner: the GPU Operator's driver beside GKE's, or on COS
// (OPERATOR-DRIVER-COS, DRIVER-OWNER).
func (v *validator) checkGKEDriverOwner(pc *matrix.PoolFacts) {
	p := pc.Pool
	if !pc.OperatorDriver || v.driverUnknown(pc, RuleDriverOwner) {
		return
	}
	switch d := p.GPU.Driver; {
	case pc.COS:
		v.add(RuleOperatorCOS, "", operatorDriverPath, fmt.Sprintf("pool %s runs COS (%s), where the GPU Operator cannot install the driver%s", p.Name, matrix.GKEImageName(p.OSImage), v.operatorDriverDefault()), "", srcOperatorGKE)
	case pc.GKEInstall == matrix.GKEDriverDefault || pc.GKEInstall == matrix.GKEDriverLatest:
		what := "the " + d + " driver"
		if d == "" || d == matrix.GKEDriverUnspecified {
			what = "the DEFAULT driver (" + pc.GKEUnsetWhy + ")"
		}
		v.add(RuleDriverOwner, diag.SeverityError, pc.Field(".gpu.driver"), fmt.Sprintf("pool %s: GKE installs %s and the GPU Operator installs its own%s: two drivers", p.Name, what, v.operatorDriverDefault()),
			"Set gpu.driver: INSTALLATION_DISABLED to let the Operator own the driver (Ubuntu), or addons.gpuOperator.driver.enabled: false.", srcOperatorGKE, srcGKEGPUs)
	}
}

// checkGKEDriverOption: what the pool's gpu.driver means on GKE
// (GKE-DRIVER-OPTION; a pinned driver the Operator disagrees with is
// DRIVER-OWNER).
func (v *validator) checkGKEDriverOption(pc *matrix.PoolFacts) {
	p := pc.Pool
	op := pc.OperatorDriver
	switch d := p.GPU.Driver; {
	case d == "" || d == matrix.GKEDriverUnspecified:
		v.checkGKEUnsetDriver(pc, op)
	case d == matrix.GKEDriverLatest && pc.Ubuntu:
		v.add(RuleGKEDriverOption, diag.SeverityError, pc.Field(".gpu.driver"), fmt.Sprintf("pool %s: LATEST is offered only on COS; %s takes DEFAULT", p.Name, p.OSImage), "Use DEFAULT on Ubuntu, or COS_CONTAINERD.", srcGKEDriverEnum)
	case d == matrix.GKEDriverDisabled && !op:
		v.checkGKEDisabledDriver(pc)
	case pc.Exact != nil:
		v.checkGKEPinnedDriver(pc)
	}
}

// checkGKEDisabledDriver: INSTALLATION_DISABLED and no GPU Operator driver.
// On a node-auto-provisioned pool nothing installs the driver (an error:
// the nodes GKE creates for pending pods come up with unusable GPUs); on a
// pool of its own Google's installer DaemonSet may, which the spec does not
// describe (a note).
func (v *validator) checkGKEDisabledDriver(pc *matrix.PoolFacts) {
	p := pc.Pool
	if p.AutoProvisioned && !v.operatorDriverUnknown(pc, RuleGKEDriverOption) {
		v.add(RuleGKEDriverOption, diag.SeverityError, pc.Field(".gpu.driver"),
			fmt.Sprintf("pool %s: node auto-provisioning creates nodes with INSTALLATION_DISABLED and the GPU Operator's driver is off: nothing installs the driver, so the GPUs are not usable", p.Name),
			"Set gpu.driver: DEFAULT or LATEST in the auto-provisioning defaults, or enable addons.gpuOperator.driver (Ubuntu).", srcGKEGPUs, srcGKEDriverEnum)
		return
	}
	v.unknown(pc.Field(".gpu.driver"), fmt.Sprintf("pool %s: GKE installs no driver (INSTALLATION_DISABLED) and the GPU Operator's driver is off: Google's installer DaemonSet must install it, which the spec does not describe", p.Name), srcGKEGPUs)
}

// checkGKEPinnedDriver: an exact gpu.driver on GKE needs the GPU Operator
// on Ubuntu to install it (GKE-DRIVER-OPTION, DRIVER-OWNER).
func (v *validator) checkGKEPinnedDriver(pc *matrix.PoolFacts) {
	p := pc.Pool
	opVersion := v.s.Addons.GPUOperator.Driver.Version
	switch {
	case pc.COS:
		v.add(RuleGKEDriverOption, diag.SeverityError, pc.Field(".gpu.driver"),
			fmt.Sprintf("pool %s: GKE on COS cannot pin driver %s: it installs only the DEFAULT or LATEST driver of the GKE version, and the GPU Operator cannot install drivers on COS", p.Name, p.GPU.Driver),
			"Set gpu.driver: LATEST or DEFAULT and check which driver that is for the GKE version; pin exact drivers only on UBUNTU_CONTAINERD with the GPU Operator.", srcGKEDriverEnum, srcOperatorGKE)
	case !pc.OperatorDriver:
		v.add(RuleGKEDriverOption, diag.SeverityError, pc.Field(".gpu.driver"),
			fmt.Sprintf("pool %s: nothing installs driver %s: GKE installs only DEFAULT or LATEST, and the GPU Operator's driver is off", p.Name, p.GPU.Driver),
			"Enable the GPU Operator's driver (addons.gpuOperator.driver.enabled: true, version "+p.GPU.Driver+"), or use gpu.driver: DEFAULT.", srcGKEDriverEnum, srcOperatorGKE)
	case opVersion != "" && opVersion != p.GPU.Driver:
		v.add(RuleDriverOwner, diag.SeverityWarning, pc.Field(".gpu.driver"), fmt.Sprintf("pool %s says driver %s, but the GPU Operator installs %s", p.Name, p.GPU.Driver, opVersion), "Make them agree.")
	}
}

// checkEKSDriverOwner: the AMI's driver and the GPU Operator's, none or
// both (DRIVER-OWNER).
func (v *validator) checkEKSDriverOwner(pc *matrix.PoolFacts) {
	p := pc.Pool
	op := pc.OperatorDriver
	a := pc.AMI
	if a == nil || a.Windows || strings.Contains(a.Name, "NEURON") {
		return
	}
	switch {
	case a.ShipsDriver && op && !v.notJudged(RuleDriverOwner, p.Name, operatorDriverPath):
		// Two installers, one of them unsupported: NVIDIA publishes no
		// Amazon Linux driver container and does not support the Operator
		// on AL2023 or Bottlerocket (gpu-operator #686, #946, #1492).
		v.add(RuleDriverOwner, diag.SeverityError, operatorDriverPath, fmt.Sprintf("pool %s: %s ships the NVIDIA driver and the GPU Operator's driver is on%s: two installers of one driver, and NVIDIA publishes no driver container for this OS", p.Name, a.Name, v.operatorDriverDefault()),
			"Set addons.gpuOperator.driver.enabled: false (and toolkit.enabled: false) on NVIDIA AMIs.", srcEKSAMIs, srcOperatorNoAmazonLinux, srcOperatorNoAL2023, srcOperatorAL2023Fail)
	case !a.ShipsDriver && !a.Custom && !op && !v.operatorUnknown(p.Name):
		v.add(RuleDriverOwner, diag.SeverityError, pc.Field(".osImage"), fmt.Sprintf("pool %s: %s has no NVIDIA driver and the GPU Operator's driver is off: nothing installs it", p.Name, a.Name),
			"Use an NVIDIA AMI type (AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64_NVIDIA), or enable addons.gpuOperator.driver.", srcEKSAMIs)
	case a.Custom && op && pc.Exact != nil:
		v.add(RuleDriverOwner, diag.SeverityWarning, operatorDriverPath, fmt.Sprintf("pool %s: the custom AMI has driver %s preinstalled and the GPU Operator's driver is on: its driver pod detects the preinstalled driver and exits, but two components now own it", p.Name, p.GPU.Driver), "Turn one of them off.", srcOperatorPlat, srcOperatorPreinstalled, srcOperatorPreinstalledLog)
	}
}

// driverUnknown reports whether the pool's gpu.driver is unset because it
// is unknown, recording check as not judged for it.
func (v *validator) driverUnknown(pc *matrix.PoolFacts, check string) bool {
	return pc.Pool.GPU.Driver == "" && v.notJudged(check, pc.Pool.Name, pc.Field(".gpu.driver"))
}

// operatorUnknown reports whether the GPU Operator is unknown (a module
// gpuctl does not read may install it), recording the driver owner check of
// pool as not judged.
func (v *validator) operatorUnknown(pool string) bool {
	return v.notJudged(RuleDriverOwner, pool, "spec.addons.gpuOperator.enabled")
}

// operatorDriverUnknown reports whether the GPU Operator or its driver
// switch is unknown (a module or value gpuctl does not read may install the
// driver), recording check as not judged for the pool: "nothing installs the
// driver" is never an error from an unknown.
func (v *validator) operatorDriverUnknown(pc *matrix.PoolFacts, check string) bool {
	return v.notJudged(check, pc.Pool.Name, "spec.addons.gpuOperator.enabled", operatorDriverPath)
}

// checkGKEUnsetDriver: what an unset gpu.driver means on this pool.
func (v *validator) checkGKEUnsetDriver(pc *matrix.PoolFacts, op bool) {
	path := pc.Field(".gpu.driver")
	if v.driverUnknown(pc, RuleGKEDriverOption) {
		return // unknown, not unset
	}
	switch pc.GKEInstall {
	case matrix.GKEInstallNone:
		if !op && !v.operatorDriverUnknown(pc, RuleGKEDriverOption) {
			v.add(RuleGKEDriverOption, diag.SeverityError, path, fmt.Sprintf("pool %s: gpu.driver is not set, and %s: nothing installs the driver, so the GPUs are not usable", pc.Pool.Name, pc.GKEUnsetWhy),
				"Set gpu.driver: DEFAULT or LATEST (COS), DEFAULT (Ubuntu), or INSTALLATION_DISABLED with another installer.", srcGKEGPUs, srcGKEDriverEnum)
		}
	case matrix.GKEInstallUnknown:
		if v.s.KubernetesVersion == "" && v.notJudged(RuleGKEDriverOption+" (whether GKE installs a driver)", pc.Pool.Name, "spec.kubernetesVersion") {
			return
		}
		if pc.Pool.AutoProvisioned && !op {
			// Node auto-provisioning installed no driver by default until
			// recently (GKE's data: GKEUnsetDriver): without the version,
			// the nodes may well come up without one.
			v.add(RuleGKEDriverOption, diag.SeverityWarning, path, fmt.Sprintf("pool %s: %s, so the nodes may come up without a driver", pc.Pool.Name, pc.GKEUnsetWhy),
				"Set gpu.driver (the accelerator's gpu-driver-version in the auto-provisioning defaults: DEFAULT or LATEST), and set kubernetesVersion so gpuctl can judge it.", srcGKEGPUs, srcGKEDriverEnum)
			return
		}
		v.unknown(path, fmt.Sprintf("pool %s: %s: whether GKE installs a driver cannot be told", pc.Pool.Name, pc.GKEUnsetWhy), srcGKEGPUs)
	}
}

// operatorDriverDefault says, for messages, that the Operator's driver is on
// by the chart's default when the spec leaves driver.enabled unset.
func (v *validator) operatorDriverDefault() string {
	if v.s.Addons.GPUOperator.Driver.Enabled != nil {
		return ""
	}
	return fmt.Sprintf(" (driver.enabled is unset, and the chart default of %s is true)", matrix.OperatorChartDefaults(v.s.Addons.GPUOperator.Version).Release)
}
