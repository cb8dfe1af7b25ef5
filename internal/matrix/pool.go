package matrix

import (
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Driver owners: who installs the NVIDIA driver on a pool's nodes.
const (
	DriverOwnerGKE         = "gke"          // GKE's driver installation (DEFAULT, LATEST)
	DriverOwnerGPUOperator = "gpu-operator" // the GPU Operator's driver container
	DriverOwnerAMI         = "ami"          // the EKS AMI type ships it
	DriverOwnerNone        = "none"         // nothing in the spec installs one
	DriverOwnerUnknown     = "unknown"      // it depends on a version the spec does not give
)

// PoolDriverFacts are what the matrix resolves about the driver of one
// node pool: the same resolution the driver rules judge (resolvePool), so
// that plan and validate say the same thing.
type PoolDriverFacts struct {
	// Owner is DriverOwnerGKE, DriverOwnerGPUOperator, DriverOwnerAMI,
	// DriverOwnerNone or DriverOwnerUnknown.
	Owner string
	// Version is the exact driver when it is known ("580.95.05"); Branch
	// its major (580), also when only the branch is known; 0 unknown.
	Version string
	Branch  int
	// Origin says where the driver comes from ("GKE 1.33 DEFAULT on COS",
	// "installed by the GPU Operator", "AL2023_x86_64_NVIDIA AMI ...").
	Origin string
	// Path is the spec field that decides it.
	Path string
	// Note says why the driver cannot be told, when it cannot.
	Note string
}

// PoolDriver resolves the driver of pool i of cs (a resolved spec).
func PoolDriver(cs *spec.ClusterSpec, i int) PoolDriverFacts {
	v := newValidator(Options{})
	v.cs, v.s = cs, &cs.Spec
	if k, err := ParseKubernetesVersion(cs.Spec.KubernetesVersion); err == nil && cs.Spec.KubernetesVersion != "" {
		v.k8s, v.k8sVer = k.Minor(), k
	}
	pc := v.resolvePool(i)
	out := PoolDriverFacts{Version: pc.driver.raw, Branch: pc.driver.branch, Origin: pc.driver.origin, Path: pc.driver.path, Note: pc.gkeDriverNote}
	if pc.driver.exact == nil {
		out.Version = ""
	}
	switch {
	case pc.operatorDriver:
		out.Owner = DriverOwnerGPUOperator
	case v.gke():
		switch pc.gkeInstall {
		case gkeDefault, gkeLatest:
			out.Owner = DriverOwnerGKE
		case gkeUnknownInstall:
			out.Owner, out.Note = DriverOwnerUnknown, pc.gkeUnsetWhy
		default:
			out.Owner = DriverOwnerNone
		}
	case pc.ami != nil && pc.ami.ShipsDriver:
		out.Owner = DriverOwnerAMI
	default:
		out.Owner = DriverOwnerNone
	}
	if out.Path == "" {
		out.Path = pc.f(".gpu.driver")
	}
	return out
}

// NCCLTransport is the network NCCL uses between a pool's nodes.
type NCCLTransport struct {
	// Fabric is the machine type's GPU network (FabricNone, FabricEFA,
	// FabricTCPX, FabricTCPXO, FabricRoCE); "" when the machine type is
	// not in the matrix.
	Fabric string
	// Network names it for people ("GPUDirect-TCPXO", "TCP sockets").
	Network string
	// Plugin is the NCCL net plugin the spec configures (nccl.plugin, or
	// the one its NCCL variables imply on GKE); "" for none.
	Plugin string
	// Want is the plugin the fabric needs ("tcpxo", "aws-ofi-nccl"); "" when none.
	Want string
}

// PoolNCCLTransport returns the NCCL transport of pool p of s, from the
// machine catalogue's fabric and the spec's NCCL settings.
func PoolNCCLTransport(s *spec.Spec, p *spec.NodePool) NCCLTransport {
	v := newValidator(Options{})
	out := NCCLTransport{Plugin: p.NCCL.Plugin}
	for _, mt := range p.MachineTypes() {
		if m, ok := LookupMachine(s.Provider, mt); ok {
			out.Fabric = m.Fabric
			break
		}
	}
	if out.Plugin == "" && s.Provider == spec.ProviderGKE {
		if implied, key := v.impliedGCPPlugin(p.NCCL.Env); implied != "" && (key != "NCCL_NET" || out.Fabric == FabricRoCE) {
			out.Plugin = implied
		}
	}
	switch out.Fabric {
	case "":
	case FabricNone:
		out.Network = "TCP sockets (no GPU network)"
	default:
		out.Network = ncclFabricName[out.Fabric]
	}
	out.Want = gcpPluginFor[out.Fabric]
	if out.Fabric == FabricEFA {
		out.Want = "aws-ofi-nccl"
	}
	return out
}
