package hclgen

import "github.com/gpuctl/gpuctl/internal/matrix"

// Machine is what generation reads from the machine catalogue of package
// matrix for one GKE machine type or EC2 instance type: the accelerator
// type, GPU product and count, CPU architecture, EFA support and network
// cards.
type Machine = matrix.Machine

// LookupMachine finds a machine type in the catalogue (provider is
// spec.ProviderGKE or spec.ProviderEKS).
func LookupMachine(provider, name string) (Machine, bool) {
	return matrix.LookupMachine(provider, name)
}
