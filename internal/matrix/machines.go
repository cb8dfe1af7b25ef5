package matrix

import (
	"sort"
	"strings"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// The GPU machines of both clouds (GKE machine types from gcp.yaml, EKS
// instance types from aws.yaml) and their lookups.

// Fabric names: the GPU network of a machine type that NCCL should use.
const (
	FabricNone  = "none"  // no GPU network: TCP sockets over the primary NIC
	FabricEFA   = "efa"   // AWS Elastic Fabric Adapter (aws-ofi-nccl)
	FabricTCPX  = "tcpx"  // GCP GPUDirect-TCPX (A3 High/Edge)
	FabricTCPXO = "tcpxo" // GCP GPUDirect-TCPXO (A3 Mega)
	FabricRoCE  = "roce"  // GPUDirect RDMA over RoCE (GCP A3 Ultra, A4, A4X; gIB)
)

// Machine is one GKE machine type or EKS instance type with GPUs.
type Machine struct {
	// Provider is gke or eks.
	Provider string `json:"provider"`
	Name     string `json:"name"`
	// Series is the machine series or instance family ("A3", "N1", "p5").
	Series string `json:"series,omitempty"`
	// AcceleratorType is the GKE accelerator name ("nvidia-h100-80gb");
	// empty on EKS and for N1, where GPUs are attached.
	AcceleratorType string `json:"acceleratorType,omitempty"`
	// GPU is the product ID (see LookupGPU); empty for N1.
	GPU string `json:"gpu,omitempty"`
	// GPUCount is GPUs per machine; 0 for N1 (attached), fractional types
	// and families whose sizes are unknown.
	GPUCount int `json:"gpuCount,omitempty"`
	// GPUFraction is the share of one GPU for fractional types (0.125 ...).
	GPUFraction float64 `json:"gpuFraction,omitempty"`
	// GPUMemoryGiB is total GPU memory as the cloud reports it (EKS).
	GPUMemoryGiB float64 `json:"gpuMemoryGiB,omitempty"`
	// Arch is the host CPU architecture: amd64 or arm64.
	Arch string `json:"arch,omitempty"`
	// EFA is true when the instance type supports EFA.
	EFA bool `json:"efa,omitempty"`
	// NetworkCards is the number of network cards (one EFA interface each).
	NetworkCards int `json:"networkCards,omitempty"`
	// Fabric is the GPU network NCCL should use (FabricNone, FabricEFA, ...).
	Fabric string `json:"fabric,omitempty"`
	// NICs is the network interfaces of a GKE node (eth0 ...) where the type
	// has more than one; RDMANICs its RDMA NICs (mlx5_0 ...). 0 where not
	// captured.
	NICs     int `json:"nics,omitempty"`
	RDMANICs int `json:"rdmaNICs,omitempty"`
	// RDMANICGbps is the speed of each RDMA NIC in Gb/s (400 on A3 Ultra
	// and A4); 0 where not captured.
	RDMANICGbps int `json:"rdmaNICGbps,omitempty"`
	// Attachable maps GKE accelerator types to the counts an N1 machine
	// accepts.
	Attachable map[string][]int `json:"attachable,omitempty"`
	// Spot is false when the type is not offered as Spot.
	Spot bool `json:"spot"`
	// MinDriverBranch / MaxDriverBranch bound the driver branch the
	// instance type supports, beyond its GPU's own limits (0 = none).
	MinDriverBranch int `json:"minDriverBranch,omitempty"`
	MaxDriverBranch int `json:"maxDriverBranch,omitempty"`
	// Family is true when the entry matched a family pattern ("g7.*")
	// whose sizes the matrix does not list.
	Family bool   `json:"family,omitempty"`
	Note   string `json:"note,omitempty"`
	Source string `json:"source"`
	AsOf   string `json:"asOf"`
}

// LookupMachine finds a GKE machine type (provider "gke") or EKS instance
// type (provider "eks") with GPUs. EKS families whose sizes the matrix
// does not list (g7) match any size, with Family set.
func LookupMachine(provider, name string) (Machine, bool) {
	c := cat()
	m, ok := c.machines[provider][name]
	if ok {
		return m, true
	}
	if provider == spec.ProviderEKS {
		return c.eksFamilyMachine(name)
	}
	return Machine{}, false
}

// Machines returns the provider's machine types, sorted by name.
func Machines(provider string) []Machine {
	c := cat()
	out := make([]Machine, 0, len(c.machines[provider]))
	for _, m := range c.machines[provider] {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NearestMachines returns up to n known machine names of the provider
// closest to name: the closest by edit distance first, then machines with a
// GPU the name mentions, fewest GPUs first ("n1-standard-8-a100" suggests
// n1-standard-8, a2-highgpu-1g, a2-ultragpu-1g), then by edit distance.
func NearestMachines(provider, name string, n int) []string {
	c := cat()
	var names []string
	for k := range c.machines[provider] {
		names = append(names, k)
	}
	byDistance := nearest(name, names, n)
	var out []string
	if len(byDistance) > 0 && n > 0 {
		out = append(out, byDistance[0])
	}
	for _, m := range c.machinesOfGPUIn(provider, name) {
		if len(out) >= min(n, 3) {
			break
		}
		out = appendUnique(out, m.Name)
	}
	for _, s := range byDistance {
		if len(out) >= n {
			break
		}
		out = appendUnique(out, s)
	}
	return out
}

// machinesOfGPUIn are the provider's machines with a GPU of the family of
// a GPU that a word of name names ("a100" of "n1-standard-8-a100"), fewest
// GPUs first, then by name; a machine appears once per such word.
func (c *catalog) machinesOfGPUIn(provider, name string) []Machine {
	var out []Machine
	for _, tok := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '.' || r == '_' }) {
		p, ok := c.aliases[normalizeGPU(tok)]
		if !ok || len(tok) < 2 {
			continue
		}
		for _, m := range c.machines[provider] {
			if m.GPU != "" && c.products[m.GPU].Family == p.Family {
				out = append(out, m)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GPUCount != out[j].GPUCount {
			return out[i].GPUCount < out[j].GPUCount
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// setMachines sets the machines of provider (indexGCP, indexAWS).
func (c *catalog) setMachines(provider string, ms map[string]Machine) {
	if c.machines == nil {
		c.machines = map[string]map[string]Machine{}
	}
	c.machines[provider] = ms
}
