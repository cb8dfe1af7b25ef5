package accept

import "github.com/gpuctl/gpuctl/internal/matrix"

// MatrixCatalogue looks machine types up in gpuctl's version matrix: GKE
// machine types, then EKS instance types. The product it returns is the
// matrix's product ID ("H100-SXM"), which ProductMatches resolves.
var MatrixCatalogue Catalogue = matrixCatalogue{}

type matrixCatalogue struct{}

func (matrixCatalogue) LookupMachine(name string) (string, int, bool) {
	g, _, ok := matrix.MachineGPU("", name)
	n, nok := matrix.GPUsPerNode("", name, 0)
	if !ok || !nok {
		return "", 0, false
	}
	return g.ID, n, true
}

// ProductMatches reports whether an observed GPU product name (nvidia-smi,
// a GFD label) is the expected one (a spec's GPU type, a matrix product ID,
// a GFD label): matrix.SameGPU, the one GPU-name resolver.
func ProductMatches(expected, observed string) bool {
	return matrix.SameGPU(expected, observed)
}
