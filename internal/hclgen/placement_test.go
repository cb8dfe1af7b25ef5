package hclgen

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestEKSCapacityBlockAndPlacement reads back the node_pools.tf of every
// valid EKS example environment: a Capacity Block pool's launch template
// holds its instance type and no placement, its node group no
// instance_types, and no aws_placement_group is written for it; every
// other pool's node group lists its instance types, and an EFA training
// pool in one zone (placementGroup unset or cluster) gets gpuctl's
// placement group in its launch template.
func TestEKSCapacityBlockAndPlacement(t *testing.T) {
	var blocks, grouped int
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		if ex.Spec.Spec.Provider != spec.ProviderEKS || ex.Spec.Spec.Addons.Autoscaler == spec.AutoscalerKarpenter {
			continue // Karpenter's pools have no node group (TestKarpenterTerraform)
		}
		res := eksResources(t, ex)
		for i := range ex.Spec.Spec.NodePools {
			p := &ex.Spec.Spec.NodePools[i]
			id := ident(p.Name)
			ng, lt, pg := res["aws_eks_node_group."+id], res["aws_launch_template."+id], res["aws_placement_group."+id]
			if ng == nil {
				t.Fatalf("%s: pool %s has no node group", ex.Dir, p.Name)
			}
			_, hasTypes := ng.Attributes["instance_types"]
			if p.Capacity == spec.CapacityCapacityBlock {
				blocks++
				if hasTypes || lt == nil || pg != nil || findBlock(lt, "placement") != nil {
					t.Errorf("%s: Capacity Block pool %s: instance_types on the node group %v, launch template %v, placement group %v", ex.Dir, p.Name, hasTypes, lt != nil, pg != nil)
					continue
				}
				if got := attrString(t, lt, "instance_type"); got != p.MachineTypes()[0] {
					t.Errorf("%s: pool %s: launch template instance_type %q, want %q", ex.Dir, p.Name, got, p.MachineTypes()[0])
				}
				continue
			}
			if !hasTypes || (lt != nil && lt.Attributes["instance_type"] != nil) {
				t.Errorf("%s: pool %s: instance_types on the node group %v, instance_type in the launch template %v", ex.Dir, p.Name, hasTypes, lt != nil && lt.Attributes["instance_type"] != nil)
			}
			if spec.EFATraining(p) && len(p.Zones) <= 1 && (p.PlacementGroup == "" || p.PlacementGroup == spec.PlacementGroupCluster) {
				grouped++
				if pg == nil || lt == nil || findBlock(lt, "placement") == nil {
					t.Errorf("%s: EFA training pool %s: placement group %v, launch template placement %v", ex.Dir, p.Name, pg != nil, lt != nil && findBlock(lt, "placement") != nil)
				}
			}
		}
	}
	if blocks < 3 || grouped < 3 {
		t.Errorf("%d Capacity Block pools and %d grouped EFA training pools in the examples, want at least 3 of each", blocks, grouped)
	}
}

// eksResources parses the node_pools.tf generate writes for ex and
// returns its resources by TYPE.NAME.
func eksResources(t *testing.T, ex golden.Example) map[string]*hclsyntax.Body {
	t.Helper()
	files, err := Generate(ex.Spec, Options{SpecFile: ex.Name + ".yaml", Environment: ex.Env})
	if err != nil {
		t.Fatalf("%s: %v", ex.Dir, err)
	}
	out := map[string]*hclsyntax.Body{}
	for _, f := range files {
		if f.Name != "node_pools.tf" {
			continue
		}
		hf, diags := hclsyntax.ParseConfig(f.Data, f.Name, hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", ex.Dir, diags.Error())
		}
		for _, b := range hf.Body.(*hclsyntax.Body).Blocks {
			if b.Type == "resource" && len(b.Labels) == 2 {
				out[b.Labels[0]+"."+b.Labels[1]] = b.Body
			}
		}
	}
	return out
}

// attrString is the string value of a literal attribute of body, "" when
// it has none.
func attrString(t *testing.T, body *hclsyntax.Body, name string) string {
	t.Helper()
	a := body.Attributes[name]
	if a == nil {
		return ""
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.Type() != cty.String {
		t.Fatalf("%s is not a string literal: %s", name, diags.Error())
	}
	return v.AsString()
}
