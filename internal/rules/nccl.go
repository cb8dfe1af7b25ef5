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
