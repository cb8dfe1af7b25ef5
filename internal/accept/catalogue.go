package accept

import "github.com/gpuctl/gpuctl/internal/matrix"

// MatrixCatalogue looks machine types up in gpuctl's version matrix: GKE
// machine types, then EKS instance types. The product it returns is the
// matrix's product ID ("H100-SXM"), which ProductMatches resolves.
var MatrixCatalogue Catalogue = matrixCatalogue{}

type matrixCatalogue struct{}

func (matrixCatalogue) LookupMachine(name string) (string, int, bool) {
	for _, provider := range []string{"gke", "eks"} {
		if m, ok := matrix.LookupMachine(provider, name); ok && m.GPU != "" && m.GPUCount > 0 {
			return m.GPU, m.GPUCount, true
		}
	}
	return "", 0, false
}

// ProductMatches reports whether an observed GPU product name (nvidia-smi,
// a GFD label) is the expected one (a spec's GPU type, a matrix product ID,
// a GFD label). When the matrix knows both names it compares its product
// IDs ("nvidia-h100-80gb", "H100-SXM" and "NVIDIA H100 80GB HBM3" are one
// product); otherwise it falls back to SameProduct.
func ProductMatches(expected, observed string) bool {
	e, eok := matrix.LookupGPU(expected)
	o, ook := matrix.LookupGPU(observed)
	if eok && ook {
		return e.ID == o.ID
	}
	return SameProduct(expected, observed)
}
