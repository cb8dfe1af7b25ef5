package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/safefs"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// eksEFAPools is a valid EKS spec with n p5.48xlarge training pools with
// EFA: gpuctl's largest Terraform a pool (32 network interfaces in each
// launch template), about 9 KiB of node_pools.tf a pool.
func eksEFAPools(n int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: bench}\nspec:\n  provider: eks\n  region: us-west-2\n  clusterName: bench\n  kubernetesVersion: \"1.33\"\n  addons: {gpuOperator: {enabled: true, driver: {enabled: false}, toolkit: {enabled: false}}, devicePlugin: {provider: gpu-operator}}\n  nodePools:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    - {name: p%d, role: training, machineType: p5.48xlarge, osImage: AL2023_x86_64_NVIDIA, gpu: {type: nvidia-h100-80gb, count: 8}, efa: {enabled: true}, localStorage: none, autoscaling: {min: 0, max: 2}, labels: {team: ml}, taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}\n", i)
	}
	return []byte(b.String())
}

// TestBenchEKSImportWithinCaps: the Terraform gpuctl generates for 1,000
// EKS pools with EFA (a node_pools.tf over 4 MiB, about 1.5 million
// tokens) imports under safefs.Terraform and MaxTokens. The pools say
// localStorage none: the nodeadm RAID0 user data a p5 training pool gets
// by default would take the file past MaxTokens.
func TestBenchEKSImportWithinCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 10 MB of Terraform")
	}
	doc, err := spec.ParseInMemory("eks1000.yaml", eksEFAPools(1000))
	if err != nil {
		t.Fatal(err)
	}
	r, err := check.Document(doc, check.Options{AsOf: asOf, Generate: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Envs[0].Terraform) == 0 {
		t.Fatalf("nothing generated: %v", r.Findings)
	}
	dir := t.TempDir()
	largest := 0
	for _, f := range r.Envs[0].Terraform {
		largest = max(largest, len(f.Data))
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if largest <= 4<<20 || int64(largest) > safefs.Terraform.Max {
		t.Errorf("largest file %d bytes: want over the old 4 MiB and under safefs.Terraform (%d)", largest, safefs.Terraform.Max)
	}
	c := readThousandPools(t, dir)
	t.Logf("%d tokens of %d, %d steps of %d", c.budget.tokens, MaxTokens, c.budget.steps, MaxEvalSteps)
}
