package hclgen

import (
	"strconv"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

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

// MinDriverForCUDA returns the minimum driver version for full support of a
// CUDA toolkit version ("12.2.2" -> "535.104.05"); where the release notes
// give only a branch, the branch ("580", compared as 580.0.0). ok is false
// when the matrix does not know the version.
func MinDriverForCUDA(cuda string) (driver string, ok bool) {
	t, err := matrix.CUDAFacts(cuda)
	switch {
	case err != nil:
		return "", false
	case t.MinDriver != "":
		return t.MinDriver, true
	case t.Branch > 0:
		return strconv.Itoa(t.Branch), true
	}
	return "", false
}

// MinDriverForGPU returns the minimum driver a GPU product needs: the exact
// version where NVIDIA documents one, else the first supporting branch.
func MinDriverForGPU(gpu string) (driver string, ok bool) {
	g, found := matrix.LookupGPU(gpu)
	switch {
	case !found:
		return "", false
	case g.MinDriver != "":
		return g.MinDriver, true
	case g.MinDriverBranch > 0:
		return strconv.Itoa(g.MinDriverBranch), true
	}
	return "", false
}
