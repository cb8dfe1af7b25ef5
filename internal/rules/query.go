package rules

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
)

// Query is a what-if question for `gpuctl matrix check`: would this GPU,
// driver and CUDA version work together? Every field is optional; rules that
// need a missing one are skipped. Finding paths name the query fields: "gpu",
// "driver", "cuda", "cudaCompat", "kernelModules", "migProfile".
type Query struct {
	// GPU is a product name, alias or GKE accelerator type ("H100",
	// "nvidia-l4").
	GPU string
	// Driver is an exact driver version ("535.129.03").
	Driver string
	// CUDA is the workload's CUDA toolkit version ("12.4", "12.2.2").
	CUDA string
	// CUDACompat is the version of a cuda-compat package in use ("13.0").
	CUDACompat string
	// KernelModules is open or proprietary.
	KernelModules string
	// MIGProfile asks whether a MIG profile works ("1g.10gb").
	MIGProfile string
	// WorkloadPTX says the images embed JIT-able PTX for newer GPUs.
	WorkloadPTX bool
}

// Check answers a Query with the same rules Validate applies to a pool,
// evaluated at opts.AsOf, sorted by path then rule.
func Check(q Query, opts Options) []diag.Finding {
	v := newValidator(opts)
	s := compatSubject{cuda: strings.TrimSpace(q.CUDA), cudaPath: "cuda", compat: strings.TrimSpace(q.CUDACompat), compatPath: "cudaCompat",
		workloadPTX: q.WorkloadPTX, kernelModules: q.KernelModules, kernelModulesPath: "kernelModules"}
	if q.GPU != "" {
		g, ok := matrix.LookupGPU(q.GPU)
		if !ok {
			v.add(RuleGPUUnknown, "", "gpu", fmt.Sprintf("GPU %q is not in the matrix; nearest: %s", q.GPU, strings.Join(matrix.NearestGPUs(q.GPU, 3), ", ")), "")
		} else {
			s.gpu, s.gpuPath = &g, "gpu"
		}
	}
	if q.Driver != "" {
		x, err := matrix.ParseVersion(q.Driver)
		if err != nil {
			v.add(RuleSpecVersion, diag.SeverityError, "driver", fmt.Sprintf("driver %q is not a version: %v", q.Driver, err), "Give the exact driver version, e.g. 580.95.05.")
		} else {
			s.driver = matrix.DriverRef{Raw: q.Driver, Exact: x, Branch: x.Major(), Path: "driver"}
		}
	}
	if q.KernelModules != "" {
		v.enum("kernelModules", "kernel modules", q.KernelModules, enumKernelModules)
	}
	if q.MIGProfile != "" {
		s.mig, s.migProfile, s.migPath = true, q.MIGProfile, "migProfile"
	}
	if s.gpu == nil && s.mig {
		s.mig = false
	}
	v.checkCompat(s)
	v.checkDataAge(false)
	return v.result()
}
