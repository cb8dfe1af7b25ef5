package matrix

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// The one place that turns GPU names and machine types into GPU products and
// GPU counts. Generation (hclgen, helmgen) and acceptance (accept) call these
// functions instead of reading names or counting GPUs themselves.

// GPUsPerNode returns how many GPUs one node has: count when the spec sets
// one (> 0), else the catalogue's count for machineType. provider is "gke" or
// "eks"; "" tries GKE machine types, then EKS instance types. false when
// neither says: an unknown type, an N1 machine (GPUs are attached and counted
// in the spec), a fractional type or an instance family without sizes.
func GPUsPerNode(provider, machineType string, count int) (int, bool) {
	if count > 0 {
		return count, true
	}
	if m, ok := lookupMachineAny(provider, machineType); ok && m.GPUCount > 0 {
		return m.GPUCount, true
	}
	return 0, false
}

// PoolGPUsPerNode is GPUsPerNode for a node pool of a spec: its gpu.count,
// else the GPUs of its machine type. A pool of several instance types whose
// GPU counts differ (g6.xlarge and g6.12xlarge) gets the largest, the most
// GPUs one of its nodes can have (what quotas over the pool are sized by);
// false when the catalogue counts none of its types.
func PoolGPUsPerNode(provider string, p *spec.NodePool) (int, bool) {
	if p.GPU.Count > 0 {
		return p.GPU.Count, true
	}
	most, ok := 0, false
	for _, mt := range p.MachineTypes() {
		if n, known := GPUsPerNode(provider, mt, 0); known && n > most {
			most, ok = n, true
		}
	}
	return most, ok
}

// MachineGPU returns the GPU product and count of a machine type (provider
// as in GPUsPerNode); false when the catalogue does not know the type or it
// has no fixed GPU (N1).
func MachineGPU(provider, machineType string) (GPUProduct, int, bool) {
	m, ok := lookupMachineAny(provider, machineType)
	if !ok || m.GPU == "" {
		return GPUProduct{}, 0, false
	}
	c := cat()
	return productOf(c.products[m.GPU], c), m.GPUCount, true
}

func lookupMachineAny(provider, machineType string) (Machine, bool) {
	if machineType == "" {
		return Machine{}, false
	}
	if provider != "" {
		return LookupMachine(provider, machineType)
	}
	for _, prov := range []string{"gke", "eks"} {
		if m, ok := LookupMachine(prov, machineType); ok {
			return m, true
		}
	}
	return Machine{}, false
}

// PoolGPU returns the GPU product of a node pool: the one gpu.type names
// (a product name, alias or GKE accelerator type; see LookupGPU), else the
// GPU of the pool's first machine type the catalogue knows.
func PoolGPU(provider string, p *spec.NodePool) (GPUProduct, bool) {
	if p.GPU.Type != "" {
		if g, ok := LookupGPU(p.GPU.Type); ok {
			return g, true
		}
	}
	for _, mt := range p.MachineTypes() {
		if g, _, ok := MachineGPU(provider, mt); ok {
			return g, true
		}
	}
	return GPUProduct{}, false
}

// PoolAcceleratorType returns the GKE accelerator type of a node pool:
// gpu.type when it is one ("nvidia-h100-80gb"), else the accelerator of its
// first machine type when the catalogue knows one, else gpu.type as written
// (validation reports a name GKE does not know).
func PoolAcceleratorType(provider string, p *spec.NodePool) string {
	if _, ok := cat().accelerators[strings.TrimSpace(p.GPU.Type)]; ok {
		return p.GPU.Type
	}
	if mts := p.MachineTypes(); len(mts) > 0 {
		if m, ok := lookupMachineAny(provider, mts[0]); ok && m.AcceleratorType != "" {
			return m.AcceleratorType
		}
	}
	return p.GPU.Type
}

// SameGPU reports whether an observed GPU name (what nvidia-smi or NVML
// prints, a GFD nvidia.com/gpu.product label, EC2's GpuInfo name) is the
// expected one (a spec's
// gpu.type, a product ID, a GKE accelerator type, a GFD label). When the
// matrix knows both names it compares products ("nvidia-h100-80gb",
// "H100-SXM" and "NVIDIA H100 80GB HBM3" are one product). Otherwise every
// word of the expected name, less "NVIDIA" and "Tesla", must be a word of
// the observed one, with GFD's dashes read as spaces: "L4" does not match
// "NVIDIA L40".
func SameGPU(expected, observed string) bool {
	c := cat()
	e, eok := c.lookupGPU(expected)
	o, ook := c.lookupGPU(observed)
	if eok && ook {
		// A name that stands for a family of several products ("A100",
		// EC2's "a100" on p4d and p4de) matches any product of it.
		if f, ok := c.gpuFamilyName(expected); ok {
			return f == o.Family
		}
		if f, ok := c.gpuFamilyName(observed); ok {
			return f == e.Family
		}
		return e.ID == o.ID
	}
	if f, ok := c.gpuFamilyName(observed); ok && eok {
		return f == e.Family
	}
	if f, ok := c.gpuFamilyName(expected); ok && ook {
		return f == o.Family
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(foldGPUName(observed)) {
		words[w] = true
	}
	n := 0
	for _, w := range strings.Fields(foldGPUName(expected)) {
		if w == "nvidia" || w == "tesla" {
			continue
		}
		if !words[w] {
			return false
		}
		n++
	}
	return n > 0
}

// GPUNameContains reports whether a GPU product name contains part, ignoring
// case and reading '-', '_' and ' ' alike: GFD writes
// "NVIDIA-H100-80GB-HBM3" where nvidia-smi prints "NVIDIA H100 80GB HBM3".
// It tells form factors apart that one product ID covers ("A100-SXM4-40GB"
// and "A100-PCIE-40GB" are both A100-40GB).
func GPUNameContains(name, part string) bool {
	return part != "" && strings.Contains(foldGPUName(name), foldGPUName(part))
}

// foldGPUName lowers a GPU name and joins its words, split at '-', '_' and
// ' ', with single spaces.
func foldGPUName(s string) string {
	return strings.ToLower(strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == ' ' || r == '_' }), " "))
}

// MIGInstances returns how many instances of a MIG profile one GPU of
// product g holds when every GPU is partitioned into that profile alone
// ("all-<profile>"), from the GPU data. Errors: the GPU has no MIG, the
// profile is not one of its profiles, or its count is not in the matrix.
func MIGInstances(g GPUProduct, profile string) (int, error) {
	if !g.MIG {
		return 0, fmt.Errorf("%s has no MIG", g.ID)
	}
	if n := g.MIGInstances[profile]; n > 0 {
		return n, nil
	}
	for _, p := range g.MIGProfiles {
		if p == profile {
			return 0, fmt.Errorf("MIG profile %s of %s: instances per GPU not in the matrix", profile, g.ID)
		}
	}
	if len(g.MIGProfiles) == 0 {
		return 0, fmt.Errorf("MIG profile %s: the profiles of %s are not in the matrix", profile, g.ID)
	}
	return 0, fmt.Errorf("MIG profile %q does not exist on %s (it offers %s)", profile, g.ID, strings.Join(g.MIGProfiles, ", "))
}

// PoolEFAInterfaces is the number of EFA interfaces each node of EKS pool p
// gets, and so advertises as vpc.amazonaws.com/efa: efa.interfaces when
// set (as gpuctl generate writes the launch template), else one per
// network card of its instance type. 0 without EFA; false when EFA is on
// and the count is unknown.
func PoolEFAInterfaces(provider string, p *spec.NodePool) (int, bool) {
	if !p.EFA.Enabled || provider != spec.ProviderEKS {
		return 0, true
	}
	name := p.MachineType
	if name == "" && len(p.InstanceTypes) > 0 {
		name = p.InstanceTypes[0]
	}
	if p.EFA.Interfaces > 0 {
		return p.EFA.Interfaces, true
	}
	if m, ok := LookupMachine(provider, name); ok && m.NetworkCards > 0 {
		return m.NetworkCards, true
	}
	return 0, false
}
