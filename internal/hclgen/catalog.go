package hclgen

// Machine is what generation reads from the machine catalogue of package
// matrix for one GKE machine type or EC2 instance type.
type Machine struct {
	// AcceleratorType is the GKE accelerator type (nvidia-h100-80gb); empty on EKS.
	AcceleratorType string
	// GPU is the GPU product (H100, L4, A10G).
	GPU string
	// GPUCount is GPUs per machine (fractions of a GPU count as 0).
	GPUCount int
	// Arch is amd64 or arm64.
	Arch string
	// EFA says the instance type supports Elastic Fabric Adapter.
	EFA bool
	// NetworkCards is the number of network cards of the instance type; EFA
	// gets one interface per card.
	NetworkCards int
}

// LookupMachine finds a machine type in the catalogue of package matrix
// (provider is spec.ProviderGKE or spec.ProviderEKS). It is a variable so
// that the catalogue is wired in one place and tests can use a fixed one;
// the default knows no machine, and generation then needs every fact it
// uses written in the spec.
var LookupMachine = func(provider, name string) (Machine, bool) { return Machine{}, false }

// MinDriverForCUDA returns the minimum driver version for full support of a
// CUDA toolkit version (matrix's CUDA table); ok is false when unknown. The
// default knows none, and the guardrails then use only the per-major
// minor-version-compatibility floors.
var MinDriverForCUDA = func(cuda string) (driver string, ok bool) { return "", false }

// MinDriverForGPU returns the minimum driver version a GPU product needs
// (matrix's GPU table); ok is false when unknown.
var MinDriverForGPU = func(gpu string) (driver string, ok bool) { return "", false }
