package hclgen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// nodeGroupTags are the tags of every aws_eks_node_group of node_pools.tf
// (a literal map, as gpuctl writes it), by node group name.
func nodeGroupTags(t *testing.T, tf []byte) map[string]map[string]string {
	t.Helper()
	f, diags := hclsyntax.ParseConfig(tf, "node_pools.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	out := map[string]map[string]string{}
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type != "resource" || b.Labels[0] != "aws_eks_node_group" {
			continue
		}
		name, _ := b.Body.Attributes["node_group_name"].Expr.Value(nil)
		tags := map[string]string{}
		if a, ok := b.Body.Attributes["tags"]; ok {
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() {
				t.Fatalf("%s tags: %v", name.AsString(), diags)
			}
			for k, x := range v.AsValueMap() {
				tags[k] = x.AsString()
			}
		}
		out[name.AsString()] = tags
	}
	return out
}

// TestClusterAutoscalerTags: every node group of a shipped EKS example
// with addons.autoscaler cluster-autoscaler carries the autoscaler's
// auto-discovery tags, the node-template tags of its labels and taints
// and, for a pool whose GPUs are not shared, nvidia.com/gpu = GPUs per
// node (for scaling from zero); node groups of other specs carry none.
func TestClusterAutoscalerTags(t *testing.T) {
	seen, efaPools := 0, 0
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		s := &ex.Spec.Spec
		if s.Provider != spec.ProviderEKS || s.Addons.Autoscaler == spec.AutoscalerKarpenter {
			continue
		}
		tf := []byte(nodePoolsTF(t, ex.Spec))
		groups := nodeGroupTags(t, tf)
		for i := range s.NodePools {
			p := &s.NodePools[i]
			tags := groups[p.Name]
			if s.Addons.Autoscaler != spec.AutoscalerClusterAutoscaler {
				for k := range tags {
					if strings.HasPrefix(k, "k8s.io/cluster-autoscaler/") {
						t.Errorf("%s %s: tag %s without addons.autoscaler cluster-autoscaler", ex.Dir, p.Name, k)
					}
				}
				continue
			}
			seen++
			want := map[string]string{caTagEnabled: "true", "k8s.io/cluster-autoscaler/" + s.ClusterName: "owned"}
			for k, v := range s.NodeLabels(p) {
				want[caTagLabelPrefix+k] = v
			}
			for _, tn := range p.Taints {
				want[caTagTaintPrefix+tn.Key] = tn.Value + ":" + tn.Effect
			}
			if gpus, ok := matrix.PoolGPUsPerNode(s.Provider, p); ok && p.SharingStrategy() == spec.SharingNone {
				want[caTagResourcePref+"nvidia.com/gpu"] = strconv.Itoa(gpus)
			} else if _, ok := tags[caTagResourcePref+"nvidia.com/gpu"]; ok {
				t.Errorf("%s %s: a nvidia.com/gpu node-template tag on a pool with shared GPUs", ex.Dir, p.Name)
			}
			if efa, ok := matrix.PoolEFAInterfaces(s.Provider, p); ok && efa > 0 {
				want[caTagResourcePref+"vpc.amazonaws.com/efa"] = strconv.Itoa(efa) // EFA pods scale the pool from 0 too
				efaPools++
			}
			for k, v := range want {
				if tags[k] != v {
					t.Errorf("%s %s: tag %s = %q, want %q", ex.Dir, p.Name, k, tags[k], v)
				}
			}
		}
	}
	if seen < 5 || efaPools < 2 {
		t.Errorf("%d node groups (%d with EFA) of examples with cluster-autoscaler, want at least 5 (2)", seen, efaPools)
	}
}

// TestKarpenterTerraform: for a spec whose pools Karpenter launches
// (examples/eks-karpenter-gpu.yaml) the Terraform writes no managed node
// group or launch template, names each pool's NodePool, outputs the
// discovery tag, and creates the placement group a pool with
// placementGroup cluster selects.
func TestKarpenterTerraform(t *testing.T) {
	n := 0
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		if ex.Spec.Spec.Addons.Autoscaler != spec.AutoscalerKarpenter {
			continue
		}
		n++
		files, err := Generate(ex.Spec, Options{SpecFile: "s.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		var all string
		for _, f := range files {
			all += string(f.Data)
		}
		for _, bad := range []string{`"aws_eks_node_group"`, `"aws_launch_template"`} {
			if strings.Contains(all, bad) {
				t.Errorf("%s: Terraform writes %s beside Karpenter", ex.Dir, bad)
			}
		}
		for _, p := range ex.Spec.Spec.NodePools {
			if !strings.Contains(all, "# Pool "+p.Name+": Karpenter NodePool "+p.Name) {
				t.Errorf("%s: node_pools.tf does not say where pool %s went", ex.Dir, p.Name)
			}
		}
		if !strings.Contains(all, `output "karpenter_discovery_tags"`) {
			t.Errorf("%s: no karpenter_discovery_tags output", ex.Dir)
		}
	}
	if n == 0 {
		t.Fatal("no example with addons.autoscaler karpenter")
	}
	cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "k"}, Spec: spec.Spec{
		Provider: spec.ProviderEKS, ClusterName: "c", Region: "us-east-1", Addons: spec.Addons{Autoscaler: spec.AutoscalerKarpenter},
		NodePools: []spec.NodePool{{Name: "p5", MachineType: "p5.48xlarge", PlacementGroup: "cluster", Zones: []string{"us-east-1a"}, Autoscaling: spec.Autoscaling{Max: 2}}},
	}}
	tf := nodePoolsTF(t, cs)
	if !strings.Contains(tf, `resource "aws_placement_group" "p5"`) || !strings.Contains(tf, `name     = "c-p5"`) {
		t.Errorf("placementGroup cluster under Karpenter: want aws_placement_group c-p5:\n%s", tf)
	}
}
