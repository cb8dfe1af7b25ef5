package rules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestValidateOddSpecs: Validate never panics and always returns a non-nil
// list, whatever the (decoded) spec holds.
func TestValidateOddSpecs(t *testing.T) {
	odd := []*spec.ClusterSpec{
		{},
		{Spec: spec.Spec{Provider: "azure", NodePools: []spec.NodePool{{}}}},
		{Spec: spec.Spec{Provider: "gke", KubernetesVersion: "1", CUDA: "x", NodePools: []spec.NodePool{{Name: "a", InstanceTypes: []string{"", "?"}, GPU: spec.GPU{Type: "?", Count: -1, Driver: "1.2.3.4.5", Sharing: spec.Sharing{Strategy: "mig"}}}}}},
		{Spec: spec.Spec{Provider: "eks", KubernetesVersion: "9.99", CUDA: "99.0", Addons: spec.Addons{GPUOperator: spec.GPUOperator{Enabled: true, Version: "banana", Driver: spec.OperatorDriver{Enabled: ptr(true), Version: "0"}}},
			NodePools: []spec.NodePool{{Name: "b", MachineType: "g7.", OSImage: "CUSTOM", CUDACompat: "1", GPU: spec.GPU{Driver: "0.0"}, NCCL: spec.NCCL{Env: map[string]string{"NCCL_IB_HCA": ",,:", "NCCL_SOCKET_IFNAME": "^", "": ""}}, EFA: spec.EFA{Enabled: true, Interfaces: 99}}}}},
		{Spec: spec.Spec{Provider: "eks", KubernetesVersion: "1.34", NodePools: []spec.NodePool{{Name: "c", MachineType: "g7.2xlarge", OSImage: "AL2023_x86_64_NVIDIA", CUDA: "12.3.9", CUDACompat: "13.4", GPU: spec.GPU{Sharing: spec.Sharing{Strategy: "mig", MIGProfile: "1g.1gb"}}}}}},
	}
	for i, cs := range odd {
		fs := Validate(cs, Options{AsOf: asOf20261129})
		if fs == nil {
			t.Errorf("spec %d: nil findings", i)
		}
		_ = ApplyWaivers(fs, []spec.Waiver{{}, {Rule: "x", Path: "*"}}, asOf20261129)
	}
}

// TestValidateMutatedCases runs every case and example spec through
// environment-free mutations that clear one field at a time.
func TestValidateMutatedCases(t *testing.T) {
	var files []string
	for _, dir := range []string{"testdata/cases", "../../examples"} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no specs")
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		doc, err := spec.Load(f, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, mut := range []func(*spec.ClusterSpec){
			func(cs *spec.ClusterSpec) { cs.Spec.Provider = "" },
			func(cs *spec.ClusterSpec) { cs.Spec.KubernetesVersion = "" },
			func(cs *spec.ClusterSpec) { cs.Spec.Addons = spec.Addons{} },
			func(cs *spec.ClusterSpec) {
				for i := range cs.Spec.NodePools {
					cs.Spec.NodePools[i].MachineType, cs.Spec.NodePools[i].InstanceTypes = "", nil
				}
			},
			func(cs *spec.ClusterSpec) {
				for i := range cs.Spec.NodePools {
					cs.Spec.NodePools[i].GPU = spec.GPU{}
					cs.Spec.NodePools[i].OSImage = ""
				}
			},
		} {
			cs, err := doc.Resolve("")
			if err != nil {
				t.Fatal(err)
			}
			cp := *cs
			cp.Spec.NodePools = append([]spec.NodePool(nil), cs.Spec.NodePools...)
			mut(&cp)
			_ = Validate(&cp, Options{AsOf: asOf20261129})
		}
	}
}
