package rules

import (
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Allowed values of the spec's enumerated fields.
var (
	enumProvider      = []string{spec.ProviderGKE, spec.ProviderEKS}
	enumRole          = []string{"training", "inference", "interactive"}
	enumCapacity      = []string{"on-demand", "spot", "reservation", "capacity-block", "flex-start", "queued"}
	enumSharing       = []string{spec.SharingNone, spec.SharingTimeSlicing, spec.SharingMPS, spec.SharingMIG}
	enumKernelModules = []string{"open", "proprietary"}
	enumKMT           = []string{"auto", "open", "proprietary"}
	enumDevicePlugin  = []string{spec.DevicePluginGKEManaged, spec.DevicePluginHelm, spec.DevicePluginGPUOperator, spec.DevicePluginBottlerocket, spec.DevicePluginNone}
	enumNCCLPlugin    = []string{"aws-ofi-nccl", "tcpx", "tcpxo", "gib"}
	enumTaintEffect   = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	enumGKEImage      = []string{"COS_CONTAINERD", "UBUNTU_CONTAINERD"}
	enumMIGStrategy   = []string{spec.MIGStrategySingle, spec.MIGStrategyMixed}
	enumLocalStorage  = []string{spec.LocalStorageRAID0, spec.LocalStorageNone}
	enumRolloutGate   = []string{spec.GateAccept, spec.GateSweep}
)

// The providers' own naming rules (cloud constraints, not Kubernetes ones).
var (
	eksNodegroupName = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]*$`)
	gcpLabelKey      = regexp.MustCompile(`^\p{Ll}[\p{Ll}0-9_-]*$`)
	gcpLabelValue    = regexp.MustCompile(`^[\p{Ll}0-9_-]*$`)
	awsTagChars      = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`)
)

// enum reports a SPEC-ENUM finding when val is set and not allowed.
func (v *validator) enum(path, what, val string, allowed []string) bool {
	if val == "" || slices.Contains(allowed, val) {
		return true
	}
	hint := ""
	if n := matrix.CloseEnough(val, allowed); n != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", n)
	}
	v.add(RuleSpecEnum, diag.SeverityError, path, fmt.Sprintf("%s %q is not one of %s%s", what, val, strings.Join(allowed, ", "), hint),
		fmt.Sprintf("Use one of %s.", strings.Join(allowed, ", ")))
	return false
}

// checkSpec: the cluster-wide fields, then each pool's.
func (v *validator) checkSpec() {
	s := v.s
	switch {
	case s.Provider == "":
		v.add(RuleSpecRequired, diag.SeverityError, "spec.provider", "spec.provider is required (gke or eks)", "Set spec.provider: gke or eks.")
	default:
		v.enum("spec.provider", "provider", s.Provider, enumProvider)
	}
	if s.Region == "" {
		v.add(RuleSpecRequired, diag.SeverityError, "spec.region", "spec.region is required", "Set the region the cluster runs in, e.g. us-central1 or us-east-1.")
	}
	v.checkRegion()
	if s.ClusterName == "" {
		v.add(RuleSpecRequired, diag.SeverityError, "spec.clusterName", "spec.clusterName is required: the existing cluster the node pools join", "Set spec.clusterName.")
	} else {
		v.checkClusterName(s.ClusterName)
	}
	for _, e := range validation.IsDNS1123Subdomain(v.cs.Metadata.Name) {
		v.add(RuleSpecName, diag.SeverityError, "metadata.name", fmt.Sprintf("metadata.name %q: %s", v.cs.Metadata.Name, e), "Use lower-case letters, digits, '-' and '.'.", srcK8sLabels)
	}
	v.checkLabelMap("metadata.labels", v.cs.Metadata.Labels)

	v.checkKubernetesVersion()
	if s.ReleaseChannel != "" {
		if v.eks() {
			v.add(RuleSpecProviderField, diag.SeverityWarning, "spec.releaseChannel", fmt.Sprintf("releaseChannel %q is a GKE setting; EKS has none", s.ReleaseChannel), "Remove spec.releaseChannel.")
		} else {
			v.enum("spec.releaseChannel", "releaseChannel", s.ReleaseChannel, v.c.GCP().GKE.ReleaseChannels.Values)
		}
	}
	v.checkTags()
	v.checkTeams()
	v.checkNetwork()

	a := s.Addons
	v.enum("spec.addons.devicePlugin.provider", "devicePlugin.provider", a.DevicePlugin.Provider, enumDevicePlugin)
	v.checkVersionField("spec.addons.devicePlugin.version", "devicePlugin.version", a.DevicePlugin.Version)
	op := a.GPUOperator
	if op.Enabled {
		v.checkVersionField("spec.addons.gpuOperator.version", "gpuOperator.version", op.Version)
		v.checkVersionField("spec.addons.gpuOperator.driver.version", "gpuOperator.driver.version", op.Driver.Version)
		v.enum("spec.addons.gpuOperator.driver.kernelModuleType", "driver.kernelModuleType", op.Driver.KernelModuleType, enumKMT)
	}
	v.checkEnvNames("spec.addons.gpuOperator.toolkit.env", op.Toolkit.Env)
	// The dcgm-exporter chart's version picks its values-key list, as the
	// device plugin's and the Operator's do: one that is not a version
	// could not be generated.
	v.checkVersionField("spec.addons.dcgmExporter.version", "dcgmExporter.version", a.DCGMExporter.Version)
	if len(s.NodePools) == 0 {
		v.add(RuleSpecRequired, diag.SeverityError, "spec.nodePools", "the spec has no node pools", "Add at least one GPU node pool.")
	}
	for i := range s.NodePools {
		v.checkPoolSpec(i)
	}
}

// nodeImageWord is what the provider calls a node's boot image in
// messages: "AMI" on EKS, "node image" on GKE.
func (v *validator) nodeImageWord() string {
	if v.gke() {
		return "node image"
	}
	return "AMI"
}

// checkKubernetesVersion: spec.kubernetesVersion is set and a version of
// the provider (SPEC-REQUIRED, SPEC-VERSION); a good one is the validator's
// k8s and is held to the provider's support window.
func (v *validator) checkKubernetesVersion() {
	s := v.s
	switch {
	case s.KubernetesVersion == "" && v.notJudged(v.supportRule(), "", "spec.kubernetesVersion"):
		// unknown, not missing: SPEC-UNKNOWN says what it kept from being judged
	case s.KubernetesVersion == "":
		v.add(RuleSpecRequired, diag.SeverityInfo, "spec.kubernetesVersion", fmt.Sprintf("spec.kubernetesVersion is not set, so %s, GPU Operator and support-window checks are skipped", v.nodeImageWord()), "Set the control plane's minor version, e.g. \"1.33\".")
	default:
		k, err := matrix.ParseKubernetesVersion(s.KubernetesVersion)
		switch {
		case err != nil:
			v.add(RuleSpecVersion, diag.SeverityError, "spec.kubernetesVersion", fmt.Sprintf("kubernetesVersion %q is not a Kubernetes version like \"1.33\" (GKE also \"1.33.5-gke.1080000\")", s.KubernetesVersion), "Write the minor version, e.g. \"1.33\".")
		case k.GKE && v.eks():
			v.add(RuleSpecVersion, diag.SeverityError, "spec.kubernetesVersion", fmt.Sprintf("kubernetesVersion %q is a GKE version (-gke.N); EKS versions are minor versions like \"1.33\"", s.KubernetesVersion), "Write the EKS minor version, e.g. \""+k.MinorString()+"\".", srcEKSVersions)
		default:
			v.k8s, v.k8sVer = k.Minor(), k
			switch {
			case v.eks():
				v.checkEKSVersion()
			case v.gke():
				v.checkGKEVersion()
			}
		}
	}
}

func (v *validator) checkVersionField(path, what, val string) {
	if val == "" {
		return
	}
	if _, err := matrix.ParseVersion(val); err != nil {
		v.add(RuleSpecVersion, diag.SeverityError, path, fmt.Sprintf("%s %q is not a version: %v", what, val, err), "Write an exact version, e.g. \"v26.7.0\" or \"580.95.05\".")
	}
}

func (v *validator) checkClusterName(name string) {
	switch {
	case v.gke():
		errs := validation.IsDNS1035Label(name)
		if len(name) > 40 {
			errs = append(errs, "must be no more than 40 characters")
		}
		for _, e := range errs {
			v.add(RuleSpecName, diag.SeverityError, "spec.clusterName", fmt.Sprintf("GKE cluster name %q: %s", name, e), "Use at most 40 lower-case letters, digits and '-', starting with a letter.", srcGKEPoolName)
		}
	case v.eks():
		if !eksNodegroupName.MatchString(name) || len(name) > 100 {
			v.add(RuleSpecName, diag.SeverityError, "spec.clusterName", fmt.Sprintf("EKS cluster name %q must be 1-100 letters, digits, '-' and '_', starting with a letter or digit", name), "Rename the cluster reference.", srcEKSNodegroup)
		}
	}
}

func (v *validator) checkLabelMap(path string, labels map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		p := path + spec.Key(k)
		for _, e := range validation.IsQualifiedName(k) {
			v.add(RuleSpecLabel, diag.SeverityError, p, fmt.Sprintf("label key %q: %s", k, e), "", srcK8sLabels)
		}
		for _, e := range validation.IsValidLabelValue(labels[k]) {
			v.add(RuleSpecLabel, diag.SeverityError, p, fmt.Sprintf("label %q value %q: %s", k, labels[k], e), "", srcK8sLabels)
		}
	}
}

// checkTags holds spec.tags to GCP label (GKE) or AWS tag (EKS) rules
// (SPEC-CLOUD-TAGS).
func (v *validator) checkTags() {
	switch {
	case v.gke():
		v.checkGCPLabels(v.s.Tags)
	case v.eks():
		v.checkAWSTags(v.s.Tags)
	}
}

// checkGCPLabels: at most 64 labels, keys and values in GCP's label form.
func (v *validator) checkGCPLabels(tags map[string]string) {
	if len(tags) > 64 {
		v.add(RuleSpecCloudTags, diag.SeverityError, "spec.tags", fmt.Sprintf("%d tags; GCP allows at most 64 labels per resource", len(tags)), "", srcGCPLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		p := "spec.tags" + spec.Key(k)
		if utf8.RuneCountInString(k) > 63 || !gcpLabelKey.MatchString(k) {
			v.add(RuleSpecCloudTags, diag.SeverityError, p, fmt.Sprintf("GCP label key %q must be 1-63 lower-case letters, digits, '_' or '-', starting with a lower-case letter", k),
				fmt.Sprintf("Rename it, e.g. %q.", gcpLabelize(k)), srcGCPLabels)
		}
		if val := tags[k]; utf8.RuneCountInString(val) > 63 || !gcpLabelValue.MatchString(val) {
			v.add(RuleSpecCloudTags, diag.SeverityError, p, fmt.Sprintf("GCP label %q value %q must be at most 63 lower-case letters, digits, '_' or '-'", k, val),
				fmt.Sprintf("Use e.g. %q.", gcpLabelize(val)), srcGCPLabels)
		}
	}
}

// checkAWSTags: at most 50 user tags, keys and values in AWS's tag form,
// no reserved aws: prefix.
func (v *validator) checkAWSTags(tags map[string]string) {
	if len(tags) > 50 {
		v.add(RuleSpecCloudTags, diag.SeverityError, "spec.tags", fmt.Sprintf("%d tags; AWS allows at most 50 user tags per resource", len(tags)), "", srcAWSTags)
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		p := "spec.tags" + spec.Key(k)
		val := tags[k]
		switch {
		case k == "" || utf8.RuneCountInString(k) > 128 || !awsTagChars.MatchString(k):
			v.add(RuleSpecCloudTags, diag.SeverityError, p, fmt.Sprintf("AWS tag key %q must be 1-128 letters, digits, spaces or + - = . _ : / @", k), "", srcAWSTags)
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			v.add(RuleSpecCloudTags, diag.SeverityError, p, fmt.Sprintf("AWS tag key %q uses the reserved aws: prefix", k), "", srcAWSTags)
		}
		if utf8.RuneCountInString(val) > 256 || !awsTagChars.MatchString(val) {
			v.add(RuleSpecCloudTags, diag.SeverityError, p, fmt.Sprintf("AWS tag %q value %q must be at most 256 letters, digits, spaces or + - = . _ : / @", k, val), "", srcAWSTags)
		}
	}
}

func gcpLabelize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	out := b.String()
	if len(out) > 63 {
		out = out[:63]
	}
	return out
}

// checkPoolSpec: the fields of pool i, each concern on its own.
func (v *validator) checkPoolSpec(i int) {
	p := &v.s.NodePools[i]
	base := spec.PoolPath(i)
	v.checkPoolName(p, base)
	v.checkPoolMachineFields(p, base)
	v.checkPoolProviderFields(p, base)
	v.checkPoolDriverField(p, base)
	v.checkPoolEnums(p, base)
	v.checkPoolAutoscaling(p, base)
	v.checkPoolBounds(i)
	v.checkPoolFormats(i)
	v.checkLabelMap(base+".labels", p.Labels)
	v.checkTaints(p, base)
	v.checkRolloutGate(p, base)
}

// checkPoolName: the platform's node pool / node group name rules
// (SPEC-NAME).
func (v *validator) checkPoolName(p *spec.NodePool, base string) {
	if _, ok := v.unknowns[base+".name"]; ok && v.notJudged(RuleSpecName+" (the pool's name)", p.Name, base+".name") {
		return // a name import stood in for one it could not know
	}
	switch {
	case v.gke():
		for _, e := range validation.IsDNS1035Label(p.Name) {
			v.add(RuleSpecName, diag.SeverityError, base+".name", fmt.Sprintf("GKE node pool name %q: %s", p.Name, e), "Use lower-case letters, digits and '-', starting with a letter.", srcGKEPoolName)
		}
	case v.eks():
		if !eksNodegroupName.MatchString(p.Name) || len(p.Name) > 63 {
			v.add(RuleSpecName, diag.SeverityError, base+".name", fmt.Sprintf("EKS node group name %q must be 1-63 letters, digits, '-' and '_', starting with a letter or digit", p.Name), "Rename the pool.", srcEKSNodegroup)
		}
	}
}

// checkPoolMachineFields: one of machineType and instanceTypes, and the
// reservation capacity needs (SPEC-REQUIRED).
func (v *validator) checkPoolMachineFields(p *spec.NodePool, base string) {
	switch {
	case p.MachineType == "" && len(p.InstanceTypes) == 0 && v.notJudged("MACHINE-*, GPU-*, CUDA-* and DRIVER-* (the pool's GPU)", p.Name, base+".machineType", base+".instanceTypes"):
		// unknown, not missing: SPEC-UNKNOWN says what it kept from being judged
	case p.MachineType == "" && len(p.InstanceTypes) == 0:
		v.add(RuleSpecRequired, diag.SeverityError, base+".machineType", fmt.Sprintf("pool %s has no machineType", p.Name), "Set machineType (GKE machine type or EKS instance type), or instanceTypes on EKS.")
	case p.MachineType != "" && len(p.InstanceTypes) > 0:
		v.add(RuleSpecRequired, diag.SeverityError, base+".instanceTypes", fmt.Sprintf("pool %s sets both machineType and instanceTypes", p.Name), "Keep one: machineType, or instanceTypes (EKS).")
	}
	if p.Capacity == "reservation" && p.Reservation == "" && !v.notJudged(RuleSpecRequired+" (the reservation a reservation pool needs)", p.Name, base+".reservation") {
		v.add(RuleSpecRequired, diag.SeverityError, base+".reservation", fmt.Sprintf("pool %s uses capacity: reservation without naming the reservation", p.Name), "Set reservation to the GCE reservation or EC2 capacity reservation.")
	}
}

// checkPoolProviderFields: settings of the other platform
// (SPEC-PROVIDER-FIELD).
func (v *validator) checkPoolProviderFields(p *spec.NodePool, base string) {
	switch {
	case v.gke():
		for _, fld := range []struct {
			set  bool
			path string
			what string
		}{
			{len(p.InstanceTypes) > 0, ".instanceTypes", "instanceTypes (several instance types per pool)"},
			{p.EFA.Enabled || p.EFA.Interfaces != 0, ".efa", "efa"},
			{p.PlacementGroup != "", ".placementGroup", "placementGroup"},
			{p.ReleaseVersion != "", ".releaseVersion", "releaseVersion (EKS AMI release)"},
			{p.Capacity == "capacity-block", ".capacity", "capacity: capacity-block"},
		} {
			if fld.set {
				v.add(RuleSpecProviderField, diag.SeverityError, base+fld.path, fmt.Sprintf("pool %s: %s is an EKS setting; GKE has none", p.Name, fld.what), "Remove it, or use the GKE equivalent.")
			}
		}
	case v.eks():
		v.checkEKSPoolProviderFields(p, base)
	}
}

// checkEKSPoolProviderFields: GKE settings on an EKS node group
// (SPEC-PROVIDER-FIELD).
func (v *validator) checkEKSPoolProviderFields(p *spec.NodePool, base string) {
	if p.FlexStart() {
		v.add(RuleSpecProviderField, diag.SeverityError, base+".capacity", fmt.Sprintf("pool %s: capacity %s is GKE's (Dynamic Workload Scheduler); EKS has none", p.Name, p.Capacity), "Use capacity-block (EC2 Capacity Blocks for ML) or on-demand on EKS.")
	}
	if p.AutoUpgrade != nil && *p.AutoUpgrade {
		v.add(RuleSpecProviderField, diag.SeverityWarning, base+".autoUpgrade", fmt.Sprintf("pool %s: EKS managed node groups never auto-upgrade; autoUpgrade: true does nothing", p.Name), "Remove autoUpgrade; upgrade node groups explicitly.", srcEKSManagedUpg)
	}
	if p.AutoProvisioned {
		v.add(RuleSpecProviderField, diag.SeverityWarning, base+".autoProvisioned", fmt.Sprintf("pool %s: autoProvisioned marks a GKE node auto-provisioning pool; EKS managed node groups have none, and gpuctl still generates this node group", p.Name), "Remove autoProvisioned.")
	}
	if p.MaintenanceWindow != "" {
		v.add(RuleSpecProviderField, diag.SeverityInfo, base+".maintenanceWindow", fmt.Sprintf("pool %s: EKS managed node groups have no maintenance window (they upgrade only when told to)", p.Name), "Remove maintenanceWindow.", srcEKSManagedUpg)
	}
	if matrix.IsGKEDriverKeyword(p.GPU.Driver) {
		v.add(RuleSpecProviderField, diag.SeverityError, base+".gpu.driver", fmt.Sprintf("pool %s: gpu.driver %s is a GKE driver option; on EKS the AMI ships the driver, or set an exact version", p.Name, p.GPU.Driver), "Remove gpu.driver (NVIDIA AMIs ship it) or write the exact version the AMI or the GPU Operator installs.")
	}
}

// checkPoolDriverField: gpu.driver is an exact version or a GKE option
// (SPEC-VERSION).
func (v *validator) checkPoolDriverField(p *spec.NodePool, base string) {
	d := p.GPU.Driver
	if d == "" || matrix.IsGKEDriverKeyword(d) {
		return
	}
	if _, err := matrix.ParseVersion(d); err != nil {
		fix := "Write the exact driver version, e.g. \"580.95.05\"."
		if v.gke() {
			fix += " On GKE use DEFAULT, LATEST or INSTALLATION_DISABLED."
		}
		v.add(RuleSpecVersion, diag.SeverityError, base+".gpu.driver", fmt.Sprintf("pool %s: gpu.driver %q is neither an exact driver version nor a GKE driver option", p.Name, d), fix)
	}
}

// checkPoolEnums: the pool's enumerated fields (SPEC-ENUM; an EKS pool
// without osImage is SPEC-REQUIRED).
func (v *validator) checkPoolEnums(p *spec.NodePool, base string) {
	f := func(s string) string { return base + s }
	v.enum(f(".role"), "role", p.Role, enumRole)
	v.enum(f(".capacity"), "capacity", p.Capacity, enumCapacity)
	v.enum(f(".localStorage"), "localStorage", p.LocalStorage, enumLocalStorage)
	switch {
	case v.gke():
		v.enum(f(".osImage"), "GKE image type", p.OSImage, enumGKEImage)
	case v.eks() && p.OSImage == "" && v.notJudged("EKS-AMI-*, DRIVER-OWNER and DEVICE-PLUGIN-* (the AMI's driver and device plugin)", p.Name, f(".osImage")):
		// unknown, not missing
	case v.eks() && p.OSImage == "":
		v.add(RuleSpecRequired, diag.SeverityInfo, f(".osImage"), fmt.Sprintf("pool %s has no osImage (EKS AMI type), so the driver and device plugin owner cannot be checked", p.Name), "Set osImage, e.g. AL2023_x86_64_NVIDIA or BOTTLEROCKET_x86_64_NVIDIA.")
	case v.eks():
		v.enum(f(".osImage"), "EKS AMI type", p.OSImage, matrix.AMITypes())
	}
	if p.GPU.Count < 0 {
		v.add(RuleSpecEnum, diag.SeverityError, f(".gpu.count"), fmt.Sprintf("pool %s: gpu.count %d is negative", p.Name, p.GPU.Count), "Set gpu.count to the GPUs per node, or 0 to derive it.")
	}
	v.enum(f(".gpu.kernelModules"), "gpu.kernelModules", p.GPU.KernelModules, enumKernelModules)
	v.enum(f(".gpu.sharing.strategy"), "gpu.sharing.strategy", p.GPU.Sharing.Strategy, enumSharing)
	v.enum(f(".gpu.sharing.migStrategy"), "gpu.sharing.migStrategy", p.GPU.Sharing.MIGStrategy, enumMIGStrategy)
	if p.DevicePlugin != nil {
		v.enum(f(".devicePlugin.provider"), "devicePlugin.provider", p.DevicePlugin.Provider, enumDevicePlugin)
		v.checkVersionField(f(".devicePlugin.version"), "devicePlugin.version", p.DevicePlugin.Version)
	}
	v.enum(f(".nccl.plugin"), "nccl.plugin", p.NCCL.Plugin, enumNCCLPlugin)
	if p.EFA.Interfaces < 0 {
		v.add(RuleSpecEnum, diag.SeverityError, f(".efa.interfaces"), fmt.Sprintf("pool %s: efa.interfaces %d is negative", p.Name, p.EFA.Interfaces), "Set 0 (one per network card) or the number of interfaces.")
	}
}

// checkPoolAutoscaling: the autoscaling bounds are ordered and not
// negative (SPEC-AUTOSCALING).
func (v *validator) checkPoolAutoscaling(p *spec.NodePool, base string) {
	as := p.Autoscaling
	switch {
	case as.Min < 0 || as.Max < 0:
		v.add(RuleSpecAutoscaling, diag.SeverityError, base+".autoscaling", fmt.Sprintf("pool %s: autoscaling bounds must not be negative (min %d, max %d)", p.Name, as.Min, as.Max), "")
	case as.Min > as.Max:
		v.add(RuleSpecAutoscaling, diag.SeverityError, base+".autoscaling.min", fmt.Sprintf("pool %s: autoscaling.min %d is larger than max %d", p.Name, as.Min, as.Max), "")
	}
}

// checkTaints: taint keys, values and effects, and no repeats
// (SPEC-TAINT).
func (v *validator) checkTaints(p *spec.NodePool, base string) {
	seen := map[string]int{}
	for j, t := range p.Taints {
		tp := fmt.Sprintf("%s.taints[%d]", base, j)
		for _, e := range validation.IsQualifiedName(t.Key) {
			v.add(RuleSpecTaint, diag.SeverityError, tp+".key", fmt.Sprintf("taint key %q: %s", t.Key, e), "", srcK8sTaints)
		}
		for _, e := range validation.IsValidLabelValue(t.Value) {
			v.add(RuleSpecTaint, diag.SeverityError, tp+".value", fmt.Sprintf("taint %q value %q: %s", t.Key, t.Value, e), "", srcK8sTaints)
		}
		if !slices.Contains(enumTaintEffect, t.Effect) {
			v.add(RuleSpecTaint, diag.SeverityError, tp+".effect", fmt.Sprintf("taint %q effect %q is not one of NoSchedule, PreferNoSchedule, NoExecute%s", t.Key, t.Effect, effectHint(t.Effect)), "", srcK8sTaints)
		}
		k := t.Key + "\x00" + t.Effect
		if first, dup := seen[k]; dup {
			v.add(RuleSpecTaint, diag.SeverityError, tp, fmt.Sprintf("taint %s:%s repeats taints[%d]", t.Key, t.Effect, first), "Remove the duplicate.", srcK8sTaints)
		} else {
			seen[k] = j
		}
	}
}

// effectHint names the Kubernetes spelling of a taint effect written
// another way ("NO_SCHEDULE"), for messages; "" when there is none.
func effectHint(effect string) string {
	switch strings.ToUpper(strings.ReplaceAll(effect, "_", "")) {
	case "NOSCHEDULE":
		return " (write NoSchedule: the spec uses the Kubernetes spelling)"
	case "PREFERNOSCHEDULE":
		return " (write PreferNoSchedule)"
	case "NOEXECUTE":
		return " (write NoExecute)"
	}
	return ""
}

// checkTeams holds team names to what they name: a namespace (DNS label).
func (v *validator) checkTeams() {
	seen := map[string]int{}
	for i, t := range v.s.Teams {
		path := fmt.Sprintf("spec.teams[%d].name", i)
		for _, e := range validation.IsDNS1123Label(t.Name) {
			v.add(RuleSpecName, diag.SeverityError, path, fmt.Sprintf("team name %q names its namespace: %s", t.Name, e), "Use lower-case letters, digits and '-', at most 63 characters.", srcK8sLabels)
		}
		if j, dup := seen[t.Name]; dup {
			v.add(RuleSpecName, diag.SeverityError, path, fmt.Sprintf("team %q repeats spec.teams[%d]", t.Name, j), "Remove the duplicate.", srcK8sLabels)
		}
		seen[t.Name] = i
		if t.GPUQuota < 0 {
			v.add(RuleSpecEnum, diag.SeverityError, fmt.Sprintf("spec.teams[%d].gpuQuota", i), fmt.Sprintf("team %s: gpuQuota %d is negative", t.Name, t.GPUQuota), "Set 0 (no cap below the pools' total) or a positive number of GPU devices.")
		}
		v.checkTeamPools(i, t)
	}
}

// checkTeamPools: every entry of spec.teams[i].pools names a node pool of
// the spec (as resolved for the environment), once.
func (v *validator) checkTeamPools(i int, t spec.Team) {
	var names []string
	for _, p := range v.s.NodePools {
		names = append(names, p.Name)
	}
	seen := map[string]int{}
	for j, name := range t.Pools {
		path := fmt.Sprintf("spec.teams[%d].pools[%d]", i, j)
		if k, dup := seen[name]; dup {
			v.add(RuleSpecReference, diag.SeverityWarning, path, fmt.Sprintf("team %s: pool %q repeats spec.teams[%d].pools[%d]", t.Name, name, i, k), "Remove the duplicate.")
			continue
		}
		seen[name] = j
		if slices.Contains(names, name) {
			continue
		}
		msg := fmt.Sprintf("team %s: pools names %q, which is not a node pool of the spec", t.Name, name)
		if n := matrix.CloseEnough(name, names); n != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", n)
		} else if len(names) > 0 {
			msg += " (pools: " + strings.Join(names, ", ") + ")"
		}
		v.add(RuleSpecReference, diag.SeverityError, path, msg, "Name a pool of spec.nodePools, or remove the entry.")
	}
}

// checkNetwork holds spec.network.egressCIDRs to CIDR notation.
func (v *validator) checkNetwork() {
	for i, c := range v.s.Network.EgressCIDRs {
		if _, err := netip.ParsePrefix(c); err != nil {
			v.add(RuleSpecNetwork, diag.SeverityError, fmt.Sprintf("spec.network.egressCIDRs[%d]", i), fmt.Sprintf("egress CIDR %q is not ADDRESS/PREFIX", c), "")
		}
	}
}
