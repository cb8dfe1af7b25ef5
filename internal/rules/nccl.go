package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/agnivade/levenshtein"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// ncclPool is a pool with the GPU network its NCCL settings run on.
type ncclPool struct {
	*matrix.PoolFacts
	fabric  string // matrix.FabricNone when the machine type is unknown
	mname   string // the machine type, for messages ("this machine type")
	envPath string // nodePools[i].nccl.env
}

// checkNCCL: NCCL and libfabric settings against the machine's fabric,
// variable by variable, then the net plugin.
func (v *validator) checkNCCL(pc *matrix.PoolFacts) {
	n := ncclPool{PoolFacts: pc, fabric: matrix.FabricNone, mname: "this machine type", envPath: pc.Field(".nccl.env")}
	if pc.Machine != nil {
		n.fabric, n.mname = pc.Machine.Fabric, pc.Machine.Name
	}
	env := pc.Pool.NCCL.Env
	for _, k := range slices.Sorted(maps.Keys(env)) {
		val := strings.TrimSpace(env[k])
		path := n.envPath + spec.Key(k)
		switch k {
		case "NCCL_IB_DISABLE":
			v.checkIBDisable(n, val, path)
		case "NCCL_NET":
			v.checkNCCLNet(n, val, path)
		case "NCCL_SOCKET_IFNAME", "NCCL_IB_HCA":
			v.checkInterfaceFilter(n, k, val, path)
		case "NCCL_P2P_DISABLE":
			if val == "1" {
				v.add(RuleNCCLP2PDisable, "", path, fmt.Sprintf("pool %s: NCCL_P2P_DISABLE=1 turns off NVLink/PCIe P2P between the node's GPUs", pc.Pool.Name), "", srcNCCLEnv+"#nccl-p2p-disable")
			}
		case "NCCL_DEBUG":
			if strings.EqualFold(val, "INFO") || strings.EqualFold(val, "TRACE") {
				v.add(RuleNCCLDebug, "", path, fmt.Sprintf("pool %s: NCCL_DEBUG=%s is a debugging setting", pc.Pool.Name, val), "", srcNCCLEnv)
			}
		}
		v.checkNCCLVarName(n, k, path)
	}
	switch {
	case v.eks():
		v.checkEFA(pc, env, n.envPath)
		v.checkEKSNCCLPlugin(n)
	case v.gke():
		v.checkGCPNCCLPlugin(n)
	}
}

// checkIBDisable: NCCL_IB_DISABLE=1 switches off the IB verbs transport
// RoCE runs on (NCCL-IB-DISABLE-RDMA).
func (v *validator) checkIBDisable(n ncclPool, val, path string) {
	if val != "1" {
		return
	}
	p := n.Pool
	switch n.fabric {
	case matrix.FabricRoCE:
		v.add(RuleNCCLIBDisable, diag.SeverityWarning, path,
			fmt.Sprintf("pool %s: NCCL_IB_DISABLE=1 on %s disables NCCL's IB verbs transport, which carries RoCE: GPUDirect RDMA is lost and NCCL falls back to TCP sockets", p.Name, n.mname), "", srcNCCLEnv+"#nccl-ib-disable", srcGIB)
	case matrix.FabricEFA, matrix.FabricTCPX, matrix.FabricTCPXO:
		v.add(RuleNCCLIBDisable, diag.SeverityInfo, path,
			fmt.Sprintf("pool %s: NCCL_IB_DISABLE=1 is irrelevant on %s: %s does not use IB verbs", p.Name, n.mname, matrix.FabricName(n.fabric)), "Remove it, or keep it as a harmless guard.", srcNCCLEnv+"#nccl-ib-disable")
	default:
		today := ""
		if n.Machine != nil {
			today = fmt.Sprintf("; %s has no IB/RoCE NIC, so today it does nothing", n.mname)
		}
		v.add(RuleNCCLIBDisable, diag.SeverityInfo, path,
			fmt.Sprintf("pool %s: NCCL_IB_DISABLE=1 does not select RoCE, it disables it: RoCE runs over the IB verbs transport this switches off%s", p.Name, today), "", srcNCCLEnv+"#nccl-ib-disable")
	}
}

// checkNCCLNet: NCCL_NET against the platform and the machine's network
// (NCCL-NET-SOCKET, NCCL-GCP-TRANSPORT, NCCL-EFA-PLUGIN).
func (v *validator) checkNCCLNet(n ncclPool, val, path string) {
	p := n.Pool
	switch {
	case strings.EqualFold(val, "Socket"):
		v.checkNetSocket(n, path)
	case strings.EqualFold(val, "AWS Libfabric") && v.gke():
		v.add(RuleNCCLGCPTransport, diag.SeverityError, path, fmt.Sprintf("pool %s: NCCL_NET=%q selects the AWS EFA plugin on GKE", p.Name, val), "", srcNCCLEnv+"#nccl-net")
	case strings.EqualFold(val, "gIB") && v.eks():
		v.add(RuleNCCLEFAPlugin, diag.SeverityError, path, fmt.Sprintf("pool %s: NCCL_NET=gIB selects GCP's RDMA plugin on EKS", p.Name), "", srcNCCLEnv+"#nccl-net")
	case strings.EqualFold(val, "gIB") && v.gke() && n.Machine != nil && n.fabric != matrix.FabricRoCE:
		// NCCL fails to initialise when NCCL_NET names a network it
		// cannot load or use.
		on := "no GPU network"
		if n.fabric != matrix.FabricNone {
			on = matrix.FabricName(n.fabric) + ", not RDMA"
		}
		v.add(RuleNCCLGCPTransport, diag.SeverityError, path,
			fmt.Sprintf("pool %s: NCCL_NET=gIB selects GCP's RDMA plugin, which runs only on the RDMA machine types (%s); %s has %s, so NCCL fails to initialise its network", p.Name, strings.Join(v.machinesWithFabric(matrix.FabricRoCE), ", "), n.mname, on),
			v.gcpNetFix(n.fabric, n.mname), srcNCCLEnv+"#nccl-net", srcGIB, srcTCPXO)
	}
}

// checkNetSocket: NCCL_NET=Socket forces TCP sockets (NCCL-NET-SOCKET).
func (v *validator) checkNetSocket(n ncclPool, path string) {
	p := n.Pool
	if n.fabric != matrix.FabricNone {
		v.add(RuleNCCLNetSocket, diag.SeverityWarning, path,
			fmt.Sprintf("pool %s: NCCL_NET=Socket forces TCP sockets on %s and bypasses its %s network", p.Name, n.mname, matrix.FabricName(n.fabric)), "", srcNCCLEnv+"#nccl-net")
		return
	}
	today := ";"
	if n.Machine != nil {
		today = fmt.Sprintf("; %s has no GPU network, so NCCL would use sockets anyway, and", n.mname)
	}
	v.add(RuleNCCLNetSocket, diag.SeverityInfo, path,
		fmt.Sprintf("pool %s: NCCL_NET=Socket forces TCP sockets%s the setting silently disables RDMA wherever the pool runs on an RDMA-capable type", p.Name, today), "", srcNCCLEnv+"#nccl-net")
}

// checkInterfaceFilter: an NCCL_SOCKET_IFNAME / NCCL_IB_HCA entry that
// matches by prefix (NCCL-PREFIX-MATCH); on GKE against the machine's
// interfaces.
func (v *validator) checkInterfaceFilter(n ncclPool, key, val, path string) {
	if v.gke() && n.Machine != nil {
		v.checkGCPInterfaceFilter(n.PoolFacts, key, val, path)
		return
	}
	if bad := prefixAmbiguous(val); len(bad) > 0 {
		v.add(RuleNCCLPrefix, "", path,
			fmt.Sprintf("pool %s: %s=%s matches by prefix: %s", n.Pool.Name, key, val, strings.Join(bad, "; ")),
			fmt.Sprintf("Write %s: %q for exact names.", key, exactForm(val)), srcNCCLEnv)
	}
}

// checkNCCLVarName: an NCCL_* variable NCCL does not read
// (NCCL-UNKNOWN-ENV): a known misspelling, a near miss, or unknown.
func (v *validator) checkNCCLVarName(n ncclPool, k, path string) {
	if !strings.HasPrefix(k, "NCCL_") || v.c.NCCLKnown(k) || v.ncclPluginVar(k) {
		return
	}
	p := n.Pool
	if want, ok := v.c.NCCL().Env.Misspellings[k]; ok {
		v.add(RuleNCCLUnknownEnv, diag.SeverityWarning, path, fmt.Sprintf("pool %s: NCCL does not read %s; the variable is %s", p.Name, k, want), fmt.Sprintf("Rename it to %s.", want), srcNCCLEnv)
		return
	}
	hint := ""
	if near := matrix.Nearest(k, v.c.NCCL().Env.Known, 1); len(near) == 1 && levenshtein.ComputeDistance(k, near[0]) <= 3 {
		hint = fmt.Sprintf(" (did you mean %s?)", near[0])
	}
	sev := diag.SeverityInfo
	if hint != "" {
		sev = diag.SeverityWarning
	}
	v.add(RuleNCCLUnknownEnv, sev, path, fmt.Sprintf("pool %s: %s is not an NCCL variable gpuctl knows%s", p.Name, k, hint), "", srcNCCLEnv)
}

// ncclPlugin is the NCCL net plugin the pool configures: nccl.plugin, or
// on GKE the one its plugin-specific variables (NCCL_GPUDIRECTTCPX_*,
// NCCL_FASTRAK_*, NCCL_NET=gIB) imply; path is the field that says so and
// what names it for messages.
func (v *validator) ncclPlugin(n ncclPool) (plugin, path, what string) {
	p := n.Pool
	plugin, path, what = p.NCCL.Plugin, n.Field(".nccl.plugin"), "nccl.plugin "+p.NCCL.Plugin
	if plugin == "" && v.gke() {
		if implied, key := matrix.ImpliedGCPPlugin(p.NCCL.Env); implied != "" && (key != "NCCL_NET" || n.fabric == matrix.FabricRoCE) {
			return implied, n.envPath + spec.Key(key), "nccl.env " + key
		}
	}
	return plugin, path, what
}

// checkEKSNCCLPlugin: a GCP GPU-network plugin on EKS
// (NCCL-GCP-TRANSPORT).
func (v *validator) checkEKSNCCLPlugin(n ncclPool) {
	plugin, path, _ := v.ncclPlugin(n)
	if plugin == "tcpx" || plugin == "tcpxo" || plugin == "gib" {
		v.add(RuleNCCLGCPTransport, diag.SeverityWarning, path, fmt.Sprintf("pool %s: nccl.plugin %s is a GCP GPU-network plugin; EKS uses aws-ofi-nccl for EFA", n.Pool.Name, plugin), "Use aws-ofi-nccl with EFA, or no plugin.", srcAWSOFINCCL)
	}
}

// checkGCPNCCLPlugin: the net plugin against the GKE machine's GPU network
// (NCCL-GCP-TRANSPORT).
func (v *validator) checkGCPNCCLPlugin(n ncclPool) {
	p := n.Pool
	plugin, path, what := v.ncclPlugin(n)
	fabric, mname := n.fabric, n.mname
	want := matrix.GCPPluginFor(fabric)
	forcedNet := strings.HasPrefix(what, "nccl.env NCCL_NET")
	if !forcedNet && v.checkGCPPluginEnvOnly(n, plugin, what, want) {
		return
	}
	switch {
	case plugin == "aws-ofi-nccl":
		v.add(RuleNCCLGCPTransport, diag.SeverityWarning, path, fmt.Sprintf("pool %s: aws-ofi-nccl drives AWS EFA, which GCP does not have", p.Name), v.gcpPluginFix(fabric, mname), srcTCPX)
	case want != "" && plugin != "" && plugin != want:
		// A forced NCCL_NET of a network the machine lacks stops NCCL
		// (an unavailable net is an error, not a fallback); a wrong
		// nccl.plugin leaves it on the primary NIC.
		sev := diag.SeverityWarning
		if forcedNet {
			sev = diag.SeverityError
		}
		v.add(RuleNCCLGCPTransport, sev, path, fmt.Sprintf("pool %s: %s uses %s, which needs the %s plugin, not %s (%s)", p.Name, mname, matrix.FabricName(fabric), want, plugin, what), v.gcpPluginFix(fabric, mname), srcTCPX, srcTCPXO, srcGIB)
	case want != "" && plugin == "" && n.Training():
		v.add(RuleNCCLGCPTransport, diag.SeverityWarning, path, fmt.Sprintf("pool %s: training on %s without the %s plugin: NCCL runs over the primary NIC only, not its %s network", p.Name, mname, want, matrix.FabricName(fabric)), v.gcpPluginFix(fabric, mname), srcTCPX, srcTCPXO, srcGIB)
	case want == "" && plugin != "" && n.Machine != nil && !forcedNet:
		v.add(RuleNCCLGCPTransport, diag.SeverityWarning, path, fmt.Sprintf("pool %s: %s has no GPUDirect network; the %s plugin (%s) has nothing to drive", p.Name, mname, plugin, what), "Remove it, or use a3-highgpu-8g (tcpx), a3-megagpu-8g (tcpxo) or a3-ultragpu-8g/a4 (gib).", srcTCPX)
	}
}

// checkGCPPluginEnvOnly: a training pool whose nccl.env holds the
// variables of its machine's plugin (NCCL_GPUDIRECTTCPX_*,
// NCCL_FASTRAK_*) but whose nccl.plugin names none. The variables
// configure the transport; they do not install the plugin, and without it
// NCCL does not read them and runs over the primary NIC (NCCL-GCP-TRANSPORT).
// It reports whether it judged the pool.
func (v *validator) checkGCPPluginEnvOnly(n ncclPool, plugin, what, want string) bool {
	if n.Pool.NCCL.Plugin != "" || plugin == "" || plugin != want {
		return false
	}
	if n.Training() {
		v.add(RuleNCCLGCPTransport, diag.SeverityWarning, n.Field(".nccl.plugin"), fmt.Sprintf("pool %s: training on %s: %s configures the %s plugin, but nccl.plugin names none: without the plugin in the images NCCL does not read it and runs over the primary NIC only, not its %s network", n.Pool.Name, n.mname, what, want, matrix.FabricName(n.fabric)), v.gcpPluginFix(n.fabric, n.mname), srcTCPX, srcTCPXO)
	}
	return true
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
