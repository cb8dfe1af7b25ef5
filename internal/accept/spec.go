package accept

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/spec"
)

var driverVersionRE = regexp.MustCompile(`^\d+(\.\d+)*$`)

// SpecExpectations returns the expectations of a node of pool in
// environment env of the spec: GPU type and count (from the machine type
// through cat when the pool leaves them out), the driver when the spec pins a
// version, and the pool's taints. pool may be empty when the spec has one
// pool. Errors: unknown environment or pool.
func SpecExpectations(doc *spec.Document, env, pool string, cat Catalogue) (Expectations, error) {
	cs, err := doc.Resolve(env)
	if err != nil {
		return Expectations{}, err
	}
	np, err := choosePool(doc, cs.Spec.NodePools, pool)
	if err != nil {
		return Expectations{}, err
	}
	src := fmt.Sprintf("spec %s", doc.File)
	if env != "" {
		src += fmt.Sprintf(" (env %s, pool %s)", env, np.Name)
	} else {
		src += fmt.Sprintf(" (pool %s)", np.Name)
	}
	e := PoolExpectations(np, cat)
	e.Source = src
	for _, t := range np.NodeTaints() { // with the one GKE puts on queued nodes
		e.Taints = append(e.Taints, record.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
	}
	// The workloads' NCCL variables, as the generated NCCL ConfigMap has
	// them (helmgen): the transport's, then the pool's own.
	if nccl := fabric.PoolEnv(cs.Spec.Provider, np); len(nccl) > 0 {
		e.NCCLEnv = nccl
	}
	fabricExpectations(&e, &cs.Spec, np)
	return e, nil
}

// PoolExpectations are the GPU expectations of a node of pool np (no
// Source): GPU type and count (from the machine type through cat when the
// pool leaves them out), the driver when the spec pins a version. What
// `gpuctl accept --spec` and the preflight init container gpuctl generate
// writes (its flags) both hold a node to.
func PoolExpectations(np *spec.NodePool, cat Catalogue) Expectations {
	e := Expectations{GPUProduct: np.GPU.Type, GPUCount: np.GPU.Count, InstanceType: np.MachineType}
	gpuFromCatalogue(&e, np, cat)
	if driverVersionRE.MatchString(np.GPU.Driver) {
		e.DriverVersion = np.GPU.Driver
	}
	return e
}

// choosePool returns the node pool named pool, or the only one when pool
// is ""; an error names the pools there are.
func choosePool(doc *spec.Document, pools []spec.NodePool, pool string) (*spec.NodePool, error) {
	switch {
	case pool != "":
		// The last of that name, should a spec repeat one.
		for i := len(pools) - 1; i >= 0; i-- {
			if pools[i].Name == pool {
				return &pools[i], nil
			}
		}
		return nil, fmt.Errorf("spec %s has no node pool %q (have: %s)", doc.File, pool, poolNames(pools))
	case len(pools) == 1:
		return &pools[0], nil
	}
	return nil, fmt.Errorf("spec %s has %d node pools (%s): choose one with --pool", doc.File, len(pools), poolNames(pools))
}

// gpuFromCatalogue fills in what the pool leaves out of e: the GPU product
// from the pool's first machine type, the GPU count from it only when the
// pool has one machine type. A pool of several (instanceTypes: [g6.xlarge,
// g6.12xlarge]) leaves the count to the node's own instance type
// (planExpectations).
func gpuFromCatalogue(e *Expectations, np *spec.NodePool, cat Catalogue) {
	mts := np.MachineTypes()
	if cat == nil || len(mts) == 0 || (e.GPUProduct != "" && e.GPUCount != 0) {
		return
	}
	product, n, ok := cat.LookupMachine(mts[0])
	if !ok {
		return
	}
	if e.GPUProduct == "" {
		e.GPUProduct = product
	}
	if e.GPUCount == 0 && len(mts) == 1 {
		e.GPUCount = n
	}
}

func poolNames(pools []spec.NodePool) string {
	var names []string
	for _, p := range pools {
		names = append(names, p.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// fabricExpectations fills in the fabric facts of pool np that the
// nccl-multi rank pods use: the cloud, the EFA interfaces of an EKS pool
// with EFA, the GKE Network objects of its GPU NICs (the ones generate
// writes).
func fabricExpectations(e *Expectations, s *spec.Spec, np *spec.NodePool) {
	e.Provider = s.Provider
	if n, ok := matrix.PoolEFAInterfaces(s.Provider, np); ok && n > 0 {
		e.EFAInterfaces = n
	}
	for _, n := range fabric.SpecNetworks(s, np) {
		e.GPUNetworks = append(e.GPUNetworks, record.GPUNetwork{Interface: n.Interface, Object: n.Object})
	}
}
