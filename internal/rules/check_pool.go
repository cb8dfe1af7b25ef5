package rules

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/agnivade/levenshtein"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// checkSharing: replicas, MPS on MIG, fields the strategy ignores.
func (v *validator) checkSharing(pc *matrix.PoolFacts) {
	p := pc.Pool
	sh := p.GPU.Sharing
	switch sh.Strategy {
	case spec.SharingTimeSlicing, spec.SharingMPS:
		if sh.Replicas < 2 {
			v.add(RuleSharingReplicas, "", pc.Field(".gpu.sharing.replicas"), fmt.Sprintf("pool %s: %s with replicas %d; the device plugin needs at least 2", p.Name, sh.Strategy, sh.Replicas),
				"Set gpu.sharing.replicas to 2 or more.", srcDevicePlugin)
		}
		if sh.Strategy == spec.SharingMPS && sh.MIGProfile != "" {
			v.add(RuleSharingMPSMIG, "", pc.Field(".gpu.sharing.migProfile"), fmt.Sprintf("pool %s: MPS cannot share MIG devices (migProfile %s); MPS shares only full GPUs", p.Name, sh.MIGProfile), "", srcDevicePlugin)
		}
	case spec.SharingMIG:
		if sh.Replicas > 0 {
			v.add(RuleSharingFields, "", pc.Field(".gpu.sharing.replicas"), fmt.Sprintf("pool %s: replicas %d has no effect with strategy mig (time-slice the MIG devices with strategy time-slicing and a migProfile)", p.Name, sh.Replicas), "")
		}
	case "", spec.SharingNone:
		if sh.Replicas > 0 {
			v.add(RuleSharingFields, "", pc.Field(".gpu.sharing.replicas"), fmt.Sprintf("pool %s: replicas %d has no effect without a sharing strategy", p.Name, sh.Replicas), "Set strategy: time-slicing or mps, or remove replicas.")
		}
		if sh.MIGProfile != "" {
			v.add(RuleSharingFields, "", pc.Field(".gpu.sharing.migProfile"), fmt.Sprintf("pool %s: migProfile %s has no effect without strategy mig", p.Name, sh.MIGProfile), "Set strategy: mig, or remove migProfile.")
		}
	}
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

// checkNCCL: NCCL and libfabric settings against the machine's fabric.
func (v *validator) checkNCCL(pc *matrix.PoolFacts) {
	p := pc.Pool
	env := p.NCCL.Env
	fabric, mname := matrix.FabricNone, "this machine type"
	if pc.Machine != nil {
		fabric, mname = pc.Machine.Fabric, pc.Machine.Name
	}
	envPath := pc.Field(".nccl.env")
	for _, k := range sortedKeys(env) {
		val := strings.TrimSpace(env[k])
		path := envPath + spec.Key(k)
		switch k {
		case "NCCL_IB_DISABLE":
			if val != "1" {
				break
			}
			switch fabric {
			case matrix.FabricRoCE:
				v.add(RuleNCCLIBDisable, diag.SeverityWarning, path,
					fmt.Sprintf("pool %s: NCCL_IB_DISABLE=1 on %s disables NCCL's IB verbs transport, which carries RoCE: GPUDirect RDMA is lost and NCCL falls back to TCP sockets", p.Name, mname), "", srcNCCLEnv+"#nccl-ib-disable", srcGIB)
			case matrix.FabricEFA, matrix.FabricTCPX, matrix.FabricTCPXO:
				v.add(RuleNCCLIBDisable, diag.SeverityInfo, path,
					fmt.Sprintf("pool %s: NCCL_IB_DISABLE=1 is irrelevant on %s: %s does not use IB verbs", p.Name, mname, matrix.FabricName(fabric)), "Remove it, or keep it as a harmless guard.", srcNCCLEnv+"#nccl-ib-disable")
			default:
				today := ""
				if pc.Machine != nil {
					today = fmt.Sprintf("; %s has no IB/RoCE NIC, so today it does nothing", mname)
				}
				v.add(RuleNCCLIBDisable, diag.SeverityInfo, path,
					fmt.Sprintf("pool %s: NCCL_IB_DISABLE=1 does not select RoCE, it disables it: RoCE runs over the IB verbs transport this switches off%s", p.Name, today), "", srcNCCLEnv+"#nccl-ib-disable")
			}
		case "NCCL_NET":
			switch {
			case strings.EqualFold(val, "Socket"):
				if fabric != matrix.FabricNone {
					v.add(RuleNCCLNetSocket, diag.SeverityWarning, path,
						fmt.Sprintf("pool %s: NCCL_NET=Socket forces TCP sockets on %s and bypasses its %s network", p.Name, mname, matrix.FabricName(fabric)), "", srcNCCLEnv+"#nccl-net")
				} else {
					today := ""
					if pc.Machine != nil {
						today = fmt.Sprintf("; %s has no GPU network, so NCCL would use sockets anyway, and", mname)
					} else {
						today = ";"
					}
					v.add(RuleNCCLNetSocket, diag.SeverityInfo, path,
						fmt.Sprintf("pool %s: NCCL_NET=Socket forces TCP sockets%s the setting silently disables RDMA wherever the pool runs on an RDMA-capable type", p.Name, today), "", srcNCCLEnv+"#nccl-net")
				}
			case strings.EqualFold(val, "AWS Libfabric") && v.gke():
				v.add(RuleNCCLGCPTransport, diag.SeverityError, path, fmt.Sprintf("pool %s: NCCL_NET=%q selects the AWS EFA plugin on GKE", p.Name, val), "", srcNCCLEnv+"#nccl-net")
			case strings.EqualFold(val, "gIB") && v.eks():
				v.add(RuleNCCLEFAPlugin, diag.SeverityError, path, fmt.Sprintf("pool %s: NCCL_NET=gIB selects GCP's RDMA plugin on EKS", p.Name), "", srcNCCLEnv+"#nccl-net")
			case strings.EqualFold(val, "gIB") && v.gke() && pc.Machine != nil && fabric != matrix.FabricRoCE:
				// NCCL fails to initialise when NCCL_NET names a network it
				// cannot load or use.
				on := "no GPU network"
				if fabric != matrix.FabricNone {
					on = matrix.FabricName(fabric) + ", not RDMA"
				}
				v.add(RuleNCCLGCPTransport, diag.SeverityError, path,
					fmt.Sprintf("pool %s: NCCL_NET=gIB selects GCP's RDMA plugin, which runs only on the RDMA machine types (%s); %s has %s, so NCCL fails to initialise its network", p.Name, strings.Join(v.machinesWithFabric(matrix.FabricRoCE), ", "), mname, on),
					v.gcpNetFix(fabric, mname), srcNCCLEnv+"#nccl-net", srcGIB, srcTCPXO)
			}
		case "NCCL_SOCKET_IFNAME", "NCCL_IB_HCA":
			if v.gke() && pc.Machine != nil {
				v.checkGCPInterfaceFilter(pc, k, val, path)
				break
			}
			if bad := prefixAmbiguous(val); len(bad) > 0 {
				v.add(RuleNCCLPrefix, "", path,
					fmt.Sprintf("pool %s: %s=%s matches by prefix: %s", p.Name, k, val, strings.Join(bad, "; ")),
					fmt.Sprintf("Write %s: %q for exact names.", k, exactForm(val)), srcNCCLEnv)
			}
		case "NCCL_P2P_DISABLE":
			if val == "1" {
				v.add(RuleNCCLP2PDisable, "", path, fmt.Sprintf("pool %s: NCCL_P2P_DISABLE=1 turns off NVLink/PCIe P2P between the node's GPUs", p.Name), "", srcNCCLEnv+"#nccl-p2p-disable")
			}
		case "NCCL_DEBUG":
			if strings.EqualFold(val, "INFO") || strings.EqualFold(val, "TRACE") {
				v.add(RuleNCCLDebug, "", path, fmt.Sprintf("pool %s: NCCL_DEBUG=%s is a debugging setting", p.Name, val), "", srcNCCLEnv)
			}
		}
		if strings.HasPrefix(k, "NCCL_") && !v.c.NCCLKnown(k) && !v.ncclPluginVar(k) {
			if want, ok := v.c.NCCL().Env.Misspellings[k]; ok {
				v.add(RuleNCCLUnknownEnv, diag.SeverityWarning, path, fmt.Sprintf("pool %s: NCCL does not read %s; the variable is %s", p.Name, k, want), fmt.Sprintf("Rename it to %s.", want), srcNCCLEnv)
			} else {
				hint := ""
				if n := matrix.Nearest(k, v.c.NCCL().Env.Known, 1); len(n) == 1 && levenshtein.ComputeDistance(k, n[0]) <= 3 {
					hint = fmt.Sprintf(" (did you mean %s?)", n[0])
				}
				sev := diag.SeverityInfo
				if hint != "" {
					sev = diag.SeverityWarning
				}
				v.add(RuleNCCLUnknownEnv, sev, path, fmt.Sprintf("pool %s: %s is not an NCCL variable gpuctl knows%s", p.Name, k, hint), "", srcNCCLEnv)
			}
		}
	}

	plugin := p.NCCL.Plugin
	pluginPath := pc.Field(".nccl.plugin")
	pluginWhat := "nccl.plugin " + plugin
	if plugin == "" && v.gke() {
		// Plugin-specific variables (NCCL_GPUDIRECTTCPX_*, NCCL_FASTRAK_*,
		// NCCL_NET=gIB) configure the plugin as much as nccl.plugin does.
		if implied, key := matrix.ImpliedGCPPlugin(env); implied != "" && (key != "NCCL_NET" || fabric == matrix.FabricRoCE) {
			plugin, pluginPath, pluginWhat = implied, envPath+spec.Key(key), "nccl.env "+key
		}
	}
	switch {
	case v.eks():
		v.checkEFA(pc, env, envPath)
		if plugin == "tcpx" || plugin == "tcpxo" || plugin == "gib" {
			v.add(RuleNCCLGCPTransport, diag.SeverityWarning, pluginPath, fmt.Sprintf("pool %s: nccl.plugin %s is a GCP GPU-network plugin; EKS uses aws-ofi-nccl for EFA", p.Name, plugin), "Use aws-ofi-nccl with EFA, or no plugin.", srcAWSOFINCCL)
		}
	case v.gke():
		want := matrix.GCPPluginFor(fabric)
		switch {
		case plugin == "aws-ofi-nccl":
			v.add(RuleNCCLGCPTransport, diag.SeverityWarning, pluginPath, fmt.Sprintf("pool %s: aws-ofi-nccl drives AWS EFA, which GCP does not have", p.Name), v.gcpPluginFix(fabric, mname), srcTCPX)
		case want != "" && plugin != "" && plugin != want:
			// A forced NCCL_NET of a network the machine lacks stops NCCL
			// (an unavailable net is an error, not a fallback); a wrong
			// nccl.plugin leaves it on the primary NIC.
			sev := diag.SeverityWarning
			if strings.HasPrefix(pluginWhat, "nccl.env NCCL_NET") {
				sev = diag.SeverityError
			}
			v.add(RuleNCCLGCPTransport, sev, pluginPath, fmt.Sprintf("pool %s: %s uses %s, which needs the %s plugin, not %s (%s)", p.Name, mname, matrix.FabricName(fabric), want, plugin, pluginWhat), v.gcpPluginFix(fabric, mname), srcTCPX, srcTCPXO, srcGIB)
		case want != "" && plugin == "" && pc.Training():
			v.add(RuleNCCLGCPTransport, diag.SeverityWarning, pluginPath, fmt.Sprintf("pool %s: training on %s without the %s plugin: NCCL runs over the primary NIC only, not its %s network", p.Name, mname, want, matrix.FabricName(fabric)), v.gcpPluginFix(fabric, mname), srcTCPX, srcTCPXO, srcGIB)
		case want == "" && plugin != "" && pc.Machine != nil && !strings.HasPrefix(pluginWhat, "nccl.env NCCL_NET"):
			v.add(RuleNCCLGCPTransport, diag.SeverityWarning, pluginPath, fmt.Sprintf("pool %s: %s has no GPUDirect network; the %s plugin (%s) has nothing to drive", p.Name, mname, plugin, pluginWhat), "Remove it, or use a3-highgpu-8g (tcpx), a3-megagpu-8g (tcpxo) or a3-ultragpu-8g/a4 (gib).", srcTCPX)
		}
	}
}

// machinesWithFabric lists the GKE machine types of a GPU network.
func (v *validator) machinesWithFabric(fabric string) []string {
	var out []string
	for _, m := range matrix.Machines("gke") {
		if m.Fabric == fabric {
			out = append(out, m.Name)
		}
	}
	return out
}

func (v *validator) gcpNetFix(fabric, mname string) string {
	if want := matrix.GCPPluginFor(fabric); want != "" {
		return fmt.Sprintf("Remove NCCL_NET=gIB and set nccl.plugin: %s for %s.", want, mname)
	}
	return "Remove NCCL_NET=gIB: NCCL picks its socket transport itself on " + mname + "."
}

// checkGCPInterfaceFilter: an NCCL_SOCKET_IFNAME / NCCL_IB_HCA entry is a
// prefix, which matters only where the GKE machine type has another
// interface starting with it (eth1 and eth10).
func (v *validator) checkGCPInterfaceFilter(pc *matrix.PoolFacts, key, val, path string) {
	m := pc.Machine
	var names []string
	stem, n := "eth", m.NICs
	if n == 0 {
		n = v.c.GCP().MaxNICs.Count
	}
	if key == "NCCL_IB_HCA" {
		stem, n = "mlx5_", m.RDMANICs
	}
	for i := 0; i < n; i++ {
		names = append(names, fmt.Sprintf("%s%d", stem, i))
	}
	if strings.HasPrefix(val, "=") || strings.HasPrefix(val, "^=") {
		return
	}
	var bad []string
	for _, item := range strings.Split(strings.TrimPrefix(val, "^"), ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(item), ":")
		if name == "" {
			continue
		}
		var also []string
		for _, nm := range names {
			if nm != name && strings.HasPrefix(nm, name) {
				also = append(also, nm)
			}
		}
		if len(also) > 0 && unicode.IsDigit([]rune(name)[len([]rune(name))-1]) {
			bad = append(bad, fmt.Sprintf("%q also selects %s", name, strings.Join(also, ", ")))
		}
	}
	if len(bad) > 0 {
		v.add(RuleNCCLPrefix, "", path,
			fmt.Sprintf("pool %s: %s=%s matches by prefix, and %s has %s%d-%s%d: %s", pc.Pool.Name, key, val, m.Name, stem, 0, stem, n-1, strings.Join(bad, "; ")),
			fmt.Sprintf("Write %s: %q for exact names.", key, exactForm(val)), srcNCCLEnv, m.Source, v.c.GCP().MaxNICs.Source)
	}
}

func (v *validator) gcpPluginFix(fabric, mname string) string {
	if want := matrix.GCPPluginFor(fabric); want != "" {
		return fmt.Sprintf("Set nccl.plugin: %s for %s.", want, mname)
	}
	return "Remove nccl.plugin."
}

func (v *validator) ncclPluginVar(k string) bool {
	for _, pre := range v.c.NCCL().Env.PluginPrefixes {
		if strings.HasPrefix(k, pre) {
			return true
		}
	}
	return false
}

// prefixAmbiguous returns the entries of an NCCL interface filter that
// match by prefix although they look like exact names (end in a digit).
func prefixAmbiguous(val string) []string {
	if strings.HasPrefix(val, "=") || strings.HasPrefix(val, "^=") {
		return nil
	}
	list := strings.TrimPrefix(val, "^")
	var bad []string
	for _, item := range strings.Split(list, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(item), ":")
		if name == "" {
			continue
		}
		r := []rune(name)
		if unicode.IsDigit(r[len(r)-1]) {
			bad = append(bad, fmt.Sprintf("%q is read as a prefix and also selects every interface whose name starts with it (%s0, %s1, ...)", name, name, name))
		}
	}
	return bad
}

func exactForm(val string) string {
	if strings.HasPrefix(val, "^") {
		return "^=" + strings.TrimPrefix(val, "^")
	}
	return "=" + val
}

// checkEFA: EFA interfaces, plugin and provider on EKS.
func (v *validator) checkEFA(pc *matrix.PoolFacts, env map[string]string, envPath string) {
	p := pc.Pool
	m := pc.Machine
	plugin := p.NCCL.Plugin
	if !p.EFA.Enabled {
		if plugin == "aws-ofi-nccl" {
			v.add(RuleNCCLEFAPlugin, diag.SeverityWarning, pc.Field(".efa.enabled"), fmt.Sprintf("pool %s: nccl.plugin is aws-ofi-nccl but the pool requests no EFA interfaces, so the plugin has nothing to drive", p.Name), "Set efa.enabled: true.", srcEFANCCL)
		}
		if m != nil && m.EFA && m.GPUCount >= 8 && pc.Training() && p.Autoscaling.Max != 1 {
			v.add(RuleEFADisabled, "", pc.Field(".efa.enabled"), fmt.Sprintf("pool %s: training on %s (EFA on %d network cards) without EFA: NCCL between nodes runs over TCP on ENA", p.Name, m.Name, m.NetworkCards), "", srcEFANCCL)
		}
		return
	}
	if m != nil && !m.EFA && !m.Family {
		v.add(RuleEFAUnsupported, "", pc.Field(".efa.enabled"), fmt.Sprintf("pool %s: %s does not support EFA", p.Name, m.Name), "", m.Source)
		return
	}
	if m != nil && m.NetworkCards > 0 && p.EFA.Interfaces != 0 {
		switch {
		case p.EFA.Interfaces > m.NetworkCards:
			v.add(RuleEFAInterfaces, diag.SeverityError, pc.Field(".efa.interfaces"), fmt.Sprintf("pool %s: %d EFA interfaces requested, but %s has %d network cards (one EFA interface each)", p.Name, p.EFA.Interfaces, m.Name, m.NetworkCards),
				fmt.Sprintf("Set efa.interfaces: %d (or 0).", m.NetworkCards), m.Source)
		case p.EFA.Interfaces < m.NetworkCards:
			v.add(RuleEFAInterfaces, diag.SeverityWarning, pc.Field(".efa.interfaces"),
				fmt.Sprintf("pool %s: %d EFA interfaces requested, but %s has %d network cards: %.0f%% of its %s EFA bandwidth stays unused", p.Name, p.EFA.Interfaces, m.Name, m.NetworkCards, 100*float64(m.NetworkCards-p.EFA.Interfaces)/float64(m.NetworkCards), strings.TrimSuffix(networkText(m), " Gbps")+" Gbps"),
				fmt.Sprintf("Set efa.interfaces: %d (or 0 for one per card).", m.NetworkCards), m.Source)
		}
	}
	switch plugin {
	case "aws-ofi-nccl":
	case "":
		// The spec does not say which images run; the usual EFA training
		// images ship aws-ofi-nccl.
		v.add(RuleNCCLEFAPlugin, diag.SeverityInfo, pc.Field(".nccl.plugin"), fmt.Sprintf("pool %s: EFA is enabled and nccl.plugin is unset: NCCL uses EFA only through aws-ofi-nccl, which the usual EFA training images carry; without it NCCL falls back to TCP over ENA", p.Name),
			"Set nccl.plugin: aws-ofi-nccl to say the images carry it (and nccl.env.FI_PROVIDER: efa).", srcEFANCCL, srcAWSOFINCCL)
	default:
		v.add(RuleNCCLEFAPlugin, diag.SeverityWarning, pc.Field(".nccl.plugin"), fmt.Sprintf("pool %s: EFA is enabled but nccl.plugin is %s: NCCL uses EFA only through aws-ofi-nccl, so it falls back to TCP over ENA", p.Name, plugin),
			"Set nccl.plugin: aws-ofi-nccl (images with the plugin) and nccl.env.FI_PROVIDER: efa.", srcEFANCCL, srcAWSOFINCCL)
	}
	switch fp, ok := env["FI_PROVIDER"]; {
	case !ok:
		v.add(RuleNCCLEFAPlugin, diag.SeverityInfo, envPath, fmt.Sprintf("pool %s: FI_PROVIDER is not set, so the plugin picks the libfabric provider; FI_PROVIDER=efa makes the EFA provider explicit", p.Name), "Add nccl.env.FI_PROVIDER: efa.", srcEFANCCL)
	case strings.TrimSpace(fp) != "efa":
		v.add(RuleNCCLEFAPlugin, diag.SeverityWarning, envPath+spec.Key("FI_PROVIDER"), fmt.Sprintf("pool %s: FI_PROVIDER=%s selects another libfabric provider than EFA", p.Name, fp), "Set FI_PROVIDER: efa.", srcEFANCCL)
	}
}

func networkText(m *matrix.Machine) string {
	for _, it := range matrix.Facts().AWS().InstanceTypes {
		if it.Name == m.Name && it.Network != "" {
			return it.Network
		}
	}
	return "EFA"
}

// checkUpgrades: what GKE does with autoUpgrade: false (any pool).
func (v *validator) checkUpgrades(pc *matrix.PoolFacts) {
	p := pc.Pool
	if !v.gke() || p.AutoUpgrade == nil || *p.AutoUpgrade {
		return
	}
	switch ch := v.s.ReleaseChannel; {
	case ch != "" && ch != "UNSPECIFIED":
		v.add(RuleSpecProviderField, diag.SeverityError, pc.Field(".autoUpgrade"),
			fmt.Sprintf("pool %s: autoUpgrade: false on a cluster in the %s release channel: GKE keeps node auto-upgrade on for release-channel clusters and rejects the setting", p.Name, ch),
			"Remove autoUpgrade and hold upgrades with a maintenance window (maintenanceWindow) and exclusions, or leave the release channel.", v.c.GCP().GKE.ReleaseChannels.Source)
	case ch == "":
		v.add(RuleSpecProviderField, diag.SeverityWarning, pc.Field(".autoUpgrade"),
			fmt.Sprintf("pool %s: autoUpgrade: false, but spec.releaseChannel is not set: GKE enrolls Standard clusters in a release channel (REGULAR) by default, and then rejects turning node auto-upgrade off", p.Name),
			"Set spec.releaseChannel to the cluster's channel: UNSPECIFIED if it really has none (no-channel clusters are deprecated), otherwise remove autoUpgrade and hold upgrades with a maintenanceWindow.", v.c.GCP().GKE.ReleaseChannels.Source)
	}
}

// gkeGPUTaint is the taint GKE puts on the GPU nodes of a pool added to a
// cluster that already runs a non-GPU pool, as every cluster the spec's
// pools join does (spec.clusterName names an existing cluster).
var gkeGPUTaint = spec.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}

// checkPoolPolicy: the policy's required taints, upgrade hold for
// training pools, and the pool's share of GPU capacity for maxSpotShare.
// Each part runs only when its policy field is set.
func (v *validator) checkPoolPolicy(pc *matrix.PoolFacts) {
	pol := v.policy
	if pol == nil {
		return
	}
	p := pc.Pool
	if len(pol.RequiredTaints) > 0 {
		have := append([]spec.Taint(nil), p.Taints...)
		if v.gke() {
			have = append(have, gkeGPUTaint) // GKE adds it itself
		}
		for _, req := range pol.RequiredTaints {
			want, err := spec.ParseTaint(req)
			if err != nil {
				continue // spec.Load and LoadPolicy reject it
			}
			if hasTaint(have, want) {
				continue
			}
			path, msg := pc.Field(".taints"), fmt.Sprintf("pool %s lacks the taint %s that the policy requires (policy.requiredTaints)", p.Name, req)
			for j, t := range p.Taints {
				if t.Key == want.Key {
					path = fmt.Sprintf("%s.taints[%d]", pc.Path, j)
					msg = fmt.Sprintf("pool %s has the taint %s, but the policy requires %s (policy.requiredTaints)", p.Name, taintString(t), req)
					break
				}
			}
			v.add(RulePolicyTaint, "", path, msg, fmt.Sprintf("Add taints: [{key: %s, value: %q, effect: %s}] (any value matches when the policy names none).", want.Key, want.Value, want.Effect), srcK8sTaints)
		}
	}
	if pol.MaxSpotShare != nil {
		gpus := 1.0
		switch {
		case pc.Machine != nil && pc.Machine.GPUFraction > 0:
			gpus = pc.Machine.GPUFraction
		case pc.Machine != nil && pc.Machine.GPUCount > 0:
			gpus = float64(pc.Machine.GPUCount)
		case p.GPU.Count > 0:
			gpus = float64(p.GPU.Count)
		}
		c := float64(p.Autoscaling.Max) * gpus
		v.gpuCapacity += c
		if p.Capacity == "spot" {
			v.spotCapacity += c
			if p.Autoscaling.Max == 0 {
				v.unboundedSpot = append(v.unboundedSpot, pc.Index)
			}
		}
	}
	if pol.TrainingUpgradeHold != nil && *pol.TrainingUpgradeHold && pc.Training() && v.gke() {
		off := p.AutoUpgrade != nil && !*p.AutoUpgrade
		if !off && !v.gkeHasWindow() {
			why := "autoUpgrade is not false"
			if ch := v.s.ReleaseChannel; ch != "" && ch != "UNSPECIFIED" {
				why = fmt.Sprintf("the cluster is in the %s release channel, so nodes auto-upgrade", ch)
			}
			v.add(RulePolicyUpgrade, "", pc.Field(".autoUpgrade"),
				fmt.Sprintf("pool %s is a training pool whose upgrades are not held (policy.trainingUpgradeHold): %s and no maintenance window is set, so a node upgrade can drain a running job", p.Name, why),
				"Set autoUpgrade: false (clusters without a release channel) or a maintenanceWindow (cluster-wide on GKE).", srcGKEChannels, srcGKEMaint)
		}
	}
}

// hasTaint reports whether have holds want: the same key and effect, and
// the same value unless want names none.
func hasTaint(have []spec.Taint, want spec.Taint) bool {
	for _, t := range have {
		if t.Key == want.Key && t.Effect == want.Effect && (want.Value == "" || t.Value == want.Value) {
			return true
		}
	}
	return false
}

func taintString(t spec.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

func (v *validator) gkeHasWindow() bool {
	for _, p := range v.s.NodePools {
		if p.MaintenanceWindow != "" {
			return true
		}
	}
	return false
}

// checkMaintenanceWindows: a GKE cluster has one maintenance window.
func (v *validator) checkMaintenanceWindows() {
	if !v.gke() {
		return
	}
	first, firstPool := "", ""
	for i, p := range v.s.NodePools {
		if p.MaintenanceWindow == "" {
			continue
		}
		if first == "" {
			first, firstPool = p.MaintenanceWindow, p.Name
			continue
		}
		if p.MaintenanceWindow != first {
			v.add(RuleSpecProviderField, diag.SeverityWarning, spec.PoolPath(i)+".maintenanceWindow",
				fmt.Sprintf("pool %s sets maintenance window %q, pool %s %q: a GKE cluster has one maintenance window", p.Name, p.MaintenanceWindow, firstPool, first),
				"Use one window for all pools.", srcGKEMaint)
		}
	}
}

// checkClusterPolicy: required tags and the spot share of GPU capacity,
// each only when its policy field is set.
func (v *validator) checkClusterPolicy() {
	pol := v.policy
	if pol == nil {
		return
	}
	var missing []string
	for _, k := range pol.RequiredTags {
		if strings.TrimSpace(v.s.Tags[k]) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		v.add(RulePolicyCostTags, "", "spec.tags", fmt.Sprintf("spec.tags lack %s, which the policy requires (policy.requiredTags)", strings.Join(missing, ", ")), fmt.Sprintf("Add %s to spec.tags.", strings.Join(missing, ", ")))
	}
	if pol.MaxSpotShare == nil {
		return
	}
	limit := *pol.MaxSpotShare
	switch {
	case limit >= 1:
	case len(v.unboundedSpot) > 0:
		for _, i := range v.unboundedSpot {
			p := v.s.NodePools[i]
			v.add(RulePolicySpotMax, "", spec.PoolPath(i)+".autoscaling.max",
				fmt.Sprintf("pool %s is a spot pool without autoscaling.max, so its share of the GPU capacity is unbounded (policy.maxSpotShare %g)", p.Name, limit),
				"Set autoscaling.max to the most nodes the policy's spot share allows.")
		}
	case v.spotCapacity > 0 && v.spotCapacity > limit*v.gpuCapacity:
		var spot []string
		first := -1
		for i, p := range v.s.NodePools {
			if p.Capacity == "spot" {
				spot = append(spot, p.Name)
				if first < 0 {
					first = i
				}
			}
		}
		v.add(RulePolicySpotMax, "", spec.PoolPath(first)+".autoscaling.max",
			fmt.Sprintf("spot pools (%s) hold %.0f%% of the GPU capacity (%g of %g GPUs at autoscaling.max); the policy allows %.0f%% (policy.maxSpotShare %g)",
				strings.Join(spot, ", "), 100*v.spotCapacity/v.gpuCapacity, v.spotCapacity, v.gpuCapacity, 100*limit, limit),
			"Lower the spot pools' autoscaling.max, or raise on-demand or reserved capacity.")
	}
}
