package hclgen

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestLocalStorageExamples reads back the node_pools.tf of every valid
// example environment: the GPU training pools on machines with local
// NVMe SSDs (GKE A2 Ultra, A3, EKS p4de and p5) get them as one RAID-0
// array whether or not the spec says localStorage (GKE:
// ephemeral_storage_local_ssd_config with the machine's count, EKS:
// nodeadm's RAID0 strategy in the launch template's user data); every
// other pool (inference, G2, g5g, g6) gets neither.
func TestLocalStorageExamples(t *testing.T) {
	// GKE: local_ssd_count by example/pool; EKS: -1 (RAID0 user data).
	want := map[string]int64{
		"gke-a100/gpu-pool":                     0, // a2-ultragpu-1g: all of its Local SSDs
		"gke-a3-mega-tcpxo/train-h100-mega":     16,
		"gke-a3-ultra-rdma/train-h200":          32,
		"gke-flex-start/train-h200":             32,
		"gke-h100-l4/train-h100":                16,
		"gke-h100-acceptance-sweep/train-h100":  16,
		"eks-arm-capacity-block/train-p5-cb":    -1,
		"eks-p5-capacity-block-efa/train-p5-cb": -1,
		"eks-p5-g6/train-h100":                  -1,
		"eks-p5-training-efa/train-p5":          -1,
		"eks-spot-training/train-p4de-spot":     -1,
		"eks-spot-training/train-p5-spot":       -1,
	}
	seen := map[string]bool{}
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		if ex.Spec.Spec.Addons.Autoscaler == spec.AutoscalerKarpenter {
			continue // no node groups (helmgen's TestKarpenterLocalStorage)
		}
		res := eksResources(t, ex)
		for i := range ex.Spec.Spec.NodePools {
			p := &ex.Spec.Spec.NodePools[i]
			key := ex.Name + "/" + p.Name
			count, raid := want[key]
			seen[key] = raid
			var got int64
			var has bool
			if ex.Spec.Spec.Provider == spec.ProviderGKE {
				got, has = gkeLocalSSDCount(t, res["google_container_node_pool."+ident(p.Name)])
			} else {
				got, has = -1, eksRAID0UserData(t, res["aws_launch_template."+ident(p.Name)])
			}
			if has != raid || (has && got != count) {
				t.Errorf("%s: pool %s (%s, role %s): local disks written %v (count %d), want %v (count %d)", ex.Dir, p.Name, p.MachineType, p.Role, has, got, raid, count)
			}
		}
	}
	for key := range want {
		if !seen[key] {
			t.Errorf("example pool %s not found", key)
		}
	}
}

// gkeLocalSSDCount is the local_ssd_count of the node pool's
// ephemeral_storage_local_ssd_config; false when it has none.
func gkeLocalSSDCount(t *testing.T, np *hclsyntax.Body) (int64, bool) {
	t.Helper()
	if np == nil {
		t.Fatal("no node pool")
	}
	ls := findBlock(findBlock(np, "node_config"), "ephemeral_storage_local_ssd_config")
	if ls == nil {
		return 0, false
	}
	v, diags := ls.Attributes["local_ssd_count"].Expr.Value(nil)
	if diags.HasErrors() || v.Type() != cty.Number {
		t.Fatalf("local_ssd_count is not a number: %s", diags.Error())
	}
	n, _ := v.AsBigFloat().Int64()
	return n, true
}

// eksRAID0UserData reports whether launch template lt's user data is
// base64encode of a nodeadm NodeConfig with localStorage strategy RAID0.
func eksRAID0UserData(t *testing.T, lt *hclsyntax.Body) bool {
	t.Helper()
	if lt == nil || lt.Attributes["user_data"] == nil {
		return false
	}
	call, ok := lt.Attributes["user_data"].Expr.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "base64encode" || len(call.Args) != 1 {
		t.Fatal("user_data is not base64encode(...)")
	}
	v, diags := call.Args[0].Value(nil)
	if diags.HasErrors() || v.Type() != cty.String {
		t.Fatalf("user_data's text is not a string: %s", diags.Error())
	}
	ud := v.AsString()
	return strings.Contains(ud, "kind: NodeConfig") && strings.Contains(ud, "localStorage:\n      strategy: RAID0")
}
