package accept

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// The GPU fabric of an nccl-multi run: its rank pods use the GPU network of
// the nodes' machine type (fabric.Build), or, where the nodes do not
// advertise what that network needs, the stage is INCONCLUSIVE saying what
// is missing: an all_reduce over TCP sockets on the pod network is never
// judged against a fabric baseline.

// ProviderOf returns the node's cloud from its providerID ("aws://" is EKS,
// "gce://" GKE), else from which catalogue knows its instance type; "" when
// neither tells.
func ProviderOf(n *corev1.Node) string {
	switch {
	case strings.HasPrefix(n.Spec.ProviderID, "aws://"):
		return spec.ProviderEKS
	case strings.HasPrefix(n.Spec.ProviderID, "gce://"):
		return spec.ProviderGKE
	}
	it := InstanceType(n)
	if _, ok := matrix.LookupMachine(spec.ProviderGKE, it); ok {
		return spec.ProviderGKE
	}
	if _, ok := matrix.LookupMachine(spec.ProviderEKS, it); ok {
		return spec.ProviderEKS
	}
	return ""
}

// fabricInput is what planFabric reads: the nodes, the spec's view of the
// pool (nil without --spec) and the pool's NCCL variables.
type fabricInput struct {
	nodes   []*corev1.Node
	machine string
	gpus    int
	expect  *Expectations
	env     map[string]string
}

// planFabric returns the fabric pod of the nodes' machine type, or the
// problem that keeps the rank pods off their fabric (the missing resource
// or network, named). A machine without a GPU fabric gives the zero Pod.
func planFabric(in fabricInput) (fabric.Pod, string) {
	provider := ""
	if in.expect != nil {
		provider = in.expect.Provider
	}
	if provider == "" {
		provider = ProviderOf(in.nodes[0])
	}
	need := fabric.NeedsOf(provider, in.machine)
	if need.Fabric == "" || optionalEFA(in, need) {
		return fabric.Pod{}, ""
	}
	p := fabric.Params{Provider: provider, Machine: in.machine, GPUs: in.gpus, Env: in.env}
	var problem string
	if need.EFA > 0 {
		p.EFA, p.HugePages, problem = efaOf(in.nodes, need, in.expect)
	} else {
		p.Networks, problem = networksOf(in.nodes, need, in.expect)
	}
	if problem != "" {
		return fabric.Pod{}, problem
	}
	pod, err := fabric.Build(p)
	if err != nil {
		return fabric.Pod{}, err.Error()
	}
	return pod, ""
}

// optionalEFA: EFA where it is optional (fabric.Needs.OptionalEFA) is used
// only where the spec enables it or a node advertises it; elsewhere the rank
// pods run over the pod network, and the result is reported, not judged.
func optionalEFA(in fabricInput, need fabric.Needs) bool {
	if !need.OptionalEFA || (in.expect != nil && in.expect.EFAInterfaces > 0) {
		return false
	}
	for _, n := range in.nodes {
		if q := n.Status.Allocatable[fabric.ResourceEFA]; q.Value() > 0 {
			return false
		}
	}
	return true
}

// efaOf returns the EFA interfaces the rank pods request (the spec's
// efa.interfaces, else the instance type's network cards) and whether every
// node has the huge pages EFA pods request; problem names a node that
// advertises fewer vpc.amazonaws.com/efa.
func efaOf(nodes []*corev1.Node, need fabric.Needs, exp *Expectations) (int, bool, string) {
	want := need.EFA
	if exp != nil && exp.EFAInterfaces > 0 {
		want = exp.EFAInterfaces
	}
	huge := resource.MustParse(fabric.EFAHugePages)
	hugeAll := true
	for _, n := range nodes {
		q := n.Status.Allocatable[fabric.ResourceEFA]
		switch have := int(q.Value()); {
		case have == 0:
			return 0, false, fmt.Sprintf("node %s advertises no %s: the EFA device plugin (%s) is not running there, or its launch template attaches no EFA interface; over TCP sockets the all_reduce cannot be judged against the EFA baseline",
				n.Name, fabric.ResourceEFA, "aws-efa-k8s-device-plugin")
		case have < want:
			return 0, false, fmt.Sprintf("node %s advertises %d of the %d %s of %s: a missing EFA interface (run --stages network to find it) or a launch template that attaches fewer",
				n.Name, have, want, fabric.ResourceEFA, InstanceType(n))
		}
		if h, ok := n.Status.Allocatable[fabric.ResourceHugePages2Mi]; !ok || h.Cmp(huge) < 0 {
			hugeAll = false
		}
	}
	return want, hugeAll, ""
}

// networksOf returns the GKE GPU NICs the rank pods attach: the spec's
// Network objects, else the networks every node is attached to
// (fabric.ChooseNetworks); problem names a node that lacks them.
func networksOf(nodes []*corev1.Node, need fabric.Needs, exp *Expectations) ([]fabric.Network, string) {
	if need.Networks == 0 {
		return nil, "" // NICs the matrix does not count: fabric.Build says why
	}
	var want []fabric.Network
	if exp != nil {
		for _, n := range exp.GPUNetworks {
			want = append(want, fabric.Network{Interface: n.Interface, Object: n.Object})
		}
	}
	var first []fabric.Network
	for i, n := range nodes {
		attached := fabric.NetworksOf(n.Status.Capacity)
		got, err := fabric.ChooseNetworks(attached, want, need)
		if err != nil && len(want) > 0 {
			// The spec names the Network objects gpuctl generate writes; a
			// cluster built otherwise (cluster-toolkit: rdma-0.., Google's
			// guides: vpc1..) has its own: the node's, when they fit.
			got, err = fabric.ChooseNetworks(attached, nil, need)
		}
		if err != nil {
			return nil, fmt.Sprintf("node %s: %v; without them NCCL uses TCP sockets on the pod network, which cannot be judged against the %s baseline", n.Name, err, matrix.FabricName(need.Fabric))
		}
		if i == 0 {
			first = got
			continue
		}
		if !slices.Equal(got, first) {
			return nil, fmt.Sprintf("nodes %s and %s are attached to different GPU networks: one all_reduce needs alike nodes", nodes[0].Name, n.Name)
		}
	}
	return first, ""
}

// transportProblem checks the network NCCL printed against the fabric's:
// "" when it is one of pod.NCCLNets (and, on EFA, aws-ofi-nccl chose the
// efa provider). nets are the "Using network" names of a rank's output.
func transportProblem(pod fabric.Pod, nets, providers []string) string {
	if pod.Fabric == "" {
		return ""
	}
	if len(nets) == 0 {
		return fmt.Sprintf("the output names no NCCL network (NCCL_DEBUG=INFO prints \"Using network NAME\"): %s not verified, bandwidth not judged", pod.Name)
	}
	for _, n := range nets {
		if !netMatches(pod.NCCLNets, n) {
			return fmt.Sprintf("NCCL used network %s, not %s's %s: %s; bandwidth not judged against the %s baseline",
				n, pod.Name, strings.Join(pod.NCCLNets, " or "), missingComponent(pod.Fabric), pod.Name)
		}
	}
	if pod.Fabric == matrix.FabricEFA {
		for _, p := range providers {
			if p != "efa" {
				return fmt.Sprintf("aws-ofi-nccl selected the libfabric provider %s, not efa: the EFA devices are not visible in the pod; bandwidth not judged against the EFA baseline", p)
			}
		}
	}
	return ""
}

func netMatches(want []string, n string) bool {
	for _, w := range want {
		if n == w || strings.HasPrefix(n, w+"_") {
			return true
		}
	}
	return false
}

// missingComponent says what makes NCCL miss each fabric's plugin.
func missingComponent(f string) string {
	switch f {
	case matrix.FabricEFA:
		return "the image lacks aws-ofi-nccl and libfabric with EFA (use --image nccl-multi=REF with an image built on the EFA installer)"
	case matrix.FabricTCPX, matrix.FabricTCPXO:
		return "the NCCL plugin installer DaemonSet (nccl-" + f + "-installer) or the NRI device injector is not running on the nodes, or the receive-path sidecar failed"
	case matrix.FabricRoCE:
		return "the gIB installer DaemonSet (nccl-rdma-installer) is not running on the nodes"
	}
	return "the fabric's NCCL plugin did not load"
}
