// Package fabric is the pod side of a GPU fabric: what a pod that runs NCCL
// across nodes must request, mount, annotate and run beside it to use the
// GPU network of its machine type (AWS EFA, GCP GPUDirect-TCPX, -TCPXO and
// GPUDirect RDMA with gIB). `gpuctl accept` builds its multi-node rank pods
// from it; the NCCL environment comes from the matrix (matrix.PoolTransport),
// the same variables `gpuctl generate` writes into each pool's NCCL
// ConfigMap, and the pod's networking.gke.io/interfaces value is the one
// generate writes there (PodInterfaces).
//
// The package is pure: it builds values, reads no API and prints nothing.
package fabric

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	networkv1 "github.com/GoogleCloudPlatform/gke-networking-api/apis/network/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// ResourceEFA is the extended resource the AWS EFA device plugin advertises,
// one per EFA interface of the node.
// Source: https://docs.aws.amazon.com/eks/latest/userguide/node-efa.html (2026-12-02).
const ResourceEFA corev1.ResourceName = "vpc.amazonaws.com/efa"

// ResourceHugePages2Mi is the node's 2 MiB huge pages resource.
const ResourceHugePages2Mi corev1.ResourceName = "hugepages-2Mi"

// Network is one GPU NIC of a GKE pod: its interface name in the pod and the
// GKE Network object it attaches to.
type Network struct {
	Interface string `json:"interface"`
	Object    string `json:"object"`
}

// Params are the facts a fabric pod is built from.
type Params struct {
	// Provider is spec.ProviderGKE or spec.ProviderEKS; Machine the machine
	// or instance type.
	Provider, Machine string
	// GPUs is the GPUs the pod requests (every GPU of the node).
	GPUs int
	// EFA is the number of EFA interfaces the pod requests (EKS): the
	// instance type's network cards, or what the node advertises.
	EFA int
	// HugePages: the node advertises enough 2 MiB huge pages for EFA
	// (EFAHugePages); without them libfabric is told to use none.
	HugePages bool
	// Networks are the GKE GPU NICs the pod attaches, in interface order
	// (TCPX/TCPXO: eth1..ethN; RDMA: the RDMA NICs only).
	Networks []Network
	// Env is the NCCL environment of the pool (the generated ConfigMap's:
	// the transport's variables, then the pool's nccl.env); nil for the
	// matrix's transport variables alone.
	Env map[string]string
}

// Pod is what a pod needs to use a machine's GPU fabric. The zero Fabric
// ("") means the machine has none the matrix knows: NCCL runs over TCP
// sockets on the pod network.
type Pod struct {
	// Fabric is matrix.FabricEFA, FabricTCPX, FabricTCPXO or FabricRoCE;
	// Name its name for people ("GPUDirect-TCPXO").
	Fabric string `json:"fabric"`
	Name   string `json:"name"`
	// NCCLNets are the names NCCL prints in "NCCL INFO Using network NAME"
	// when it uses this fabric (a prefix match: "GPUDirectTCPX" covers
	// "GPUDirectTCPX_v7").
	NCCLNets []string `json:"ncclNets"`
	// Env are the variables of the workload container.
	Env map[string]string `json:"env"`
	// Resources are requested (and limited) beside the GPUs.
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// Annotations of the pod (GKE multi-networking, device injection).
	Annotations map[string]string `json:"annotations,omitempty"`
	// Volumes of the pod; Mounts those of the workload container.
	Volumes []corev1.Volume      `json:"volumes,omitempty"`
	Mounts  []corev1.VolumeMount `json:"mounts,omitempty"`
	// Sidecars run beside the workload for as long as it runs: init
	// containers with restartPolicy Always (Kubernetes native sidecars, on
	// by default from 1.29), so that a Job's pod completes when the workload
	// does.
	Sidecars []corev1.Container `json:"sidecars,omitempty"`
	// Prelude is shell the workload runs before NCCL starts (gIB's
	// set_nccl_env.sh); "" for none.
	Prelude string `json:"prelude,omitempty"`
	// Privileged names what makes the pod need the privileged Pod Security
	// level (host paths, added capabilities); empty when restricted admits
	// it.
	Privileged []string `json:"privileged,omitempty"`
	// Workload is the workload container's security context where the
	// fabric's references run it otherwise than gpuctl's default (as
	// nobody, no capability): root with IPC_LOCK for the GKE fabrics, whose
	// pods are privileged-level anyway; nil to keep the default.
	Workload *corev1.SecurityContext `json:"workload,omitempty"`
	// ImageNeeds says what the workload image must bring for the fabric
	// (EFA: aws-ofi-nccl and libfabric); "" when any CUDA image with NCCL
	// does (the GKE plugins come from the host).
	ImageNeeds string `json:"imageNeeds,omitempty"`
	// Sources document the pod's shape.
	Sources []string `json:"sources"`
}

// Build returns the fabric pod of p's machine type. A machine without a GPU
// fabric gives the zero Pod and no error. Errors: a fabric whose pod side
// needs facts p lacks (EFA interfaces, GKE networks, the GPU count), or one
// gpuctl cannot build (A4X's RDMA NICs through DRANET).
func Build(p Params) (Pod, error) {
	m, ok := matrix.LookupMachine(p.Provider, p.Machine)
	if !ok || m.Fabric == "" || m.Fabric == matrix.FabricNone {
		return Pod{}, nil
	}
	env := p.Env
	if env == nil {
		env = TransportEnv(p.Provider, m)
	}
	switch m.Fabric {
	case matrix.FabricEFA:
		if p.Provider != spec.ProviderEKS {
			return Pod{}, nil
		}
		return efaPod(p, env)
	case matrix.FabricTCPX, matrix.FabricTCPXO:
		return tcpxPod(p, m, env)
	case matrix.FabricRoCE:
		return rdmaPod(p, m, env)
	}
	return Pod{}, nil
}

// TransportEnv is the matrix's NCCL transport variables of machine m as a
// pool that uses its fabric gets them (matrix.PoolTransport: on EKS with
// EFA enabled, on GKE with the fabric's NCCL plugin); nil for none.
func TransportEnv(provider string, m matrix.Machine) map[string]string {
	pool := PoolOf(provider, m)
	t, ok := matrix.PoolTransport(provider, &pool)
	if !ok {
		return nil
	}
	return maps.Clone(t.Env)
}

// PoolOf is the node pool of machine m that uses its GPU fabric: EFA
// enabled on EKS, the fabric's NCCL plugin on GKE.
func PoolOf(provider string, m matrix.Machine) spec.NodePool {
	p := spec.NodePool{Name: "fabric", MachineType: m.Name}
	if provider == spec.ProviderEKS {
		p.MachineType, p.InstanceTypes = "", []string{m.Name}
		p.EFA.Enabled = m.EFA
	} else {
		p.NCCL.Plugin = matrix.GCPPluginFor(m.Fabric)
	}
	return p
}

// Needs says what nodes must advertise for the fabric of p's machine type:
// the EFA interfaces on EKS, the GPU NICs' networks on GKE (NeedNetworks).
// It is the check accept runs before it creates a rank pod.
type Needs struct {
	// Fabric is the machine's fabric ("" for none).
	Fabric string
	// EFA is the EFA interfaces of the instance type (network cards).
	EFA int
	// Networks is the GKE GPU NICs the pod attaches: TCPX/TCPXO all but the
	// primary interface, RDMA the RDMA NICs.
	Networks int
	// RDMA: the GKE networks are RDMA NICs.
	RDMA bool
	// OptionalEFA: the instance type has EFA but no multi-node baseline
	// (g5, g6): its pools use EFA only where the spec enables it or the
	// nodes advertise it, and a node without it is not at fault.
	OptionalEFA bool
}

// NeedsOf returns what machine's fabric needs of a node, from the facts
// generate lays the pool out by (matrix.PoolNICs, matrix.PoolEFAInterfaces)
// for a pool that uses the fabric (PoolOf); zero Needs for a machine
// without one. A GKE fabric whose NICs the matrix does not count (A4X)
// keeps its Fabric with no Networks: Build says why it builds no pod.
func NeedsOf(provider, machine string) Needs {
	m, ok := matrix.LookupMachine(provider, machine)
	if !ok || m.Fabric == "" || m.Fabric == matrix.FabricNone || (m.Fabric == matrix.FabricEFA) != (provider == spec.ProviderEKS) {
		return Needs{}
	}
	pool := PoolOf(provider, m)
	l := matrix.PoolNICs(provider, &pool)
	n := Needs{Fabric: m.Fabric, Networks: l.GPU, RDMA: l.RDMA}
	if efa, ok := matrix.PoolEFAInterfaces(provider, &pool); ok {
		n.EFA = efa
	}
	_, baseline := matrix.MultiNodeBaseline(m.Name)
	n.OptionalEFA = n.EFA > 0 && !baseline
	return n
}

// PodInterfaces is the networking.gke.io/interfaces value that attaches
// eth0 to the default pod network and each of nets to its Network object.
// Sources: https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx
// (2026-12-02); for RDMA eth0, then eth2..eth9 -> rdma-0..rdma-7 in
// https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/1047080375afbb44da4b596be314634e7486af4a/examples/gke-a3-ultragpu/nccl-jobset-example.yaml
// (2026-06-25).
func PodInterfaces(nets []Network) string {
	a := networkv1.InterfaceAnnotation{{InterfaceName: "eth0", Network: ptr(networkv1.DefaultPodNetworkName)}}
	for _, n := range nets {
		a = append(a, networkv1.InterfaceRef{InterfaceName: n.Interface, Network: ptr(n.Object)})
	}
	v, err := networkv1.MarshalAnnotation(a)
	if err != nil {
		panic(err) // a slice of structs of strings always marshals
	}
	return v
}

// podNetworks adds the GKE multi-networking annotations of nets to pod.
func (pod *Pod) podNetworks(nets []Network) {
	pod.Annotations[networkv1.DefaultInterfaceAnnotationKey] = "eth0"
	pod.Annotations[networkv1.InterfaceAnnotationKey] = PodInterfaces(nets)
}

// NetworksOf returns the GKE networks a node is attached to, from its
// networking.gke.io.networks/NAME capacity (GKE advertises one per Network
// object of the node, with NAME.IP beside it), sorted; the pod network is
// left out.
// Source: networkv1.NetworkResourceKeyPrefix in
// https://github.com/GoogleCloudPlatform/gke-networking-api/blob/v0.2.11/apis/network/v1/network_types.go
func NetworksOf(capacity corev1.ResourceList) []string {
	var out []string
	for r := range capacity {
		name, ok := strings.CutPrefix(string(r), networkv1.NetworkResourceKeyPrefix)
		if !ok || strings.HasSuffix(name, ".IP") || name == networkv1.DefaultPodNetworkName || name == networkv1.DefaultNetworkName {
			continue
		}
		out = append(out, name)
	}
	sort.Slice(out, func(i, j int) bool { return matrix.NaturalLess(out[i], out[j]) })
	return out
}

// NetworkResource is the capacity a GKE node attached to Network object
// has (networking.gke.io.networks/OBJECT).
func NetworkResource(object string) corev1.ResourceName {
	return corev1.ResourceName(networkv1.NetworkResourceKeyPrefix + object)
}

// ChooseNetworks picks, from the networks a node is attached to, the GPU NICs
// a fabric pod attaches (in interface order), given what the fabric needs.
// With want (the spec's Network objects) every one must be attached. Without
// it, the node's networks are used when there are exactly n of them besides
// RDMA's extra gVNIC; for RDMA the names that contain "rdma" are preferred,
// as Google's blueprints name them. first is the first GPU NIC's interface
// number (TCPX/TCPXO eth1, RDMA eth2 after the extra gVNIC). The error says
// what is missing.
func ChooseNetworks(node []string, want []Network, need Needs) ([]Network, error) {
	if len(want) > 0 {
		var missing []string
		for _, w := range want {
			if !slices.Contains(node, w.Object) {
				missing = append(missing, w.Object)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("the node is not attached to the GKE network(s) %s (it has: %s)", strings.Join(missing, ", "), listOrNone(node))
		}
		return want, nil
	}
	cands := node
	if need.RDMA {
		var rdma []string
		for _, n := range node {
			if strings.Contains(strings.ToLower(n), "rdma") {
				rdma = append(rdma, n)
			}
		}
		if len(rdma) == need.Networks || len(node) != need.Networks {
			cands = rdma
		}
	}
	if len(cands) != need.Networks {
		return nil, fmt.Errorf("the node is attached to %d GPU network(s) (%s); %s needs %d: attach the pool's additional node networks, or name them with --spec", len(cands), listOrNone(cands), matrix.FabricName(need.Fabric), need.Networks)
	}
	first := 1
	if need.RDMA {
		first = 2
	}
	out := make([]Network, len(cands))
	for i, n := range cands {
		out[i] = Network{Interface: fmt.Sprintf("eth%d", first+i), Object: n}
	}
	return out, nil
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// SpecNetworks returns the GPU NICs generate attaches pool p to (the
// RDMA machines' extra gVNIC left out), as Networks.
func SpecNetworks(s *spec.Spec, p *spec.NodePool) []Network {
	var out []Network
	for _, n := range SpecNICs(s, p) {
		if n.Kind == spec.NICGVNIC {
			continue
		}
		out = append(out, Network{Interface: n.Interface, Object: n.Object})
	}
	return out
}

// SpecNICs are the additional NICs generate attaches GKE pool p to, the
// names its Terraform and Network objects use (spec.GPUNICs laid out by
// matrix.PoolNICs); none for an auto-provisioned pool, for which gpuctl
// writes no node pool.
func SpecNICs(s *spec.Spec, p *spec.NodePool) []spec.GPUNIC {
	if p.AutoProvisioned {
		return nil
	}
	return s.GPUNICs(p, matrix.PoolNICs(s.Provider, p))
}

// PoolEnv is pool p's NCCL environment, the data of the NCCL ConfigMap
// generate writes for it and the variables accept's rank pods get with
// --spec: its transport's variables (matrix.PoolTransport), then
// nccl.env, which wins; empty for a pool with neither.
func PoolEnv(provider string, p *spec.NodePool) map[string]string {
	env := map[string]string{}
	if t, ok := matrix.PoolTransport(provider, p); ok {
		maps.Copy(env, t.Env)
	}
	maps.Copy(env, p.NCCL.Env)
	return env
}

// SpecParams are the Params of GKE pool p of spec s as generate builds its
// workload pod template: the machine type, its GPUs (gpu.count, else the
// machine's), the GPU NICs the Terraform attaches (SpecNetworks) and the
// pool's NCCL environment (PoolEnv); false where the pool has no GKE
// GPU fabric with such NICs (EKS, no nccl.plugin, an auto-provisioned
// pool, A4X).
func SpecParams(s *spec.Spec, p *spec.NodePool) (Params, bool) {
	t, ok := matrix.PoolTransport(s.Provider, p)
	nets := SpecNetworks(s, p)
	if s.Provider != spec.ProviderGKE || !ok || t.Fabric == matrix.FabricEFA || len(nets) == 0 {
		return Params{}, false
	}
	machine := p.MachineTypes()[0]
	gpus := p.GPU.Count
	if _, n, ok := matrix.MachineGPU(s.Provider, machine); ok && gpus == 0 {
		gpus = n
	}
	return Params{Provider: s.Provider, Machine: machine, GPUs: gpus, Networks: nets, Env: PoolEnv(s.Provider, p)}, true
}

func ptr[T any](v T) *T { return &v }

func quantity(s string) resource.Quantity { return resource.MustParse(s) }
