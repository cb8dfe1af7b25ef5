package hclgen

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// nodePoolBlocks parses tf and returns each google_container_node_pool
// resource's body by resource name.
func nodePoolBlocks(t *testing.T, tf string) map[string]*hclsyntax.Body {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(tf), "node_pools.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	out := map[string]*hclsyntax.Body{}
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type == "resource" && len(b.Labels) == 2 && b.Labels[0] == "google_container_node_pool" {
			out[b.Labels[1]] = b.Body
		}
	}
	return out
}

// nested is body's first nested block of type typ, nil without one.
func nested(body *hclsyntax.Body, typ string) *hclsyntax.Body {
	for _, b := range body.Blocks {
		if b.Type == typ {
			return b.Body
		}
	}
	return nil
}

// literal is the value of body's attribute name when it is a literal
// (cty's Go string of it), "" when absent.
func literal(t *testing.T, body *hclsyntax.Body, name string) string {
	t.Helper()
	if body == nil || body.Attributes[name] == nil {
		return ""
	}
	v, diags := body.Attributes[name].Expr.Value(nil)
	if diags.HasErrors() {
		t.Fatalf("%s: %v", name, diags)
	}
	return v.GoString()
}

// TestGKEFlexStartPools: examples/gke-flex-start.yaml's pools are what
// GKE's guides and cluster-toolkit's gke-node-pool module create (commit
// 1047080): flex_start with NO_RESERVATION, location policy ANY and
// auto-repair off on both, queued_provisioning on the queued one, no
// COMPACT placement for queued provisioning (GKE rejects it for GPUs) and
// none for the flex-start L4 pool (not an A3 Ultra, A4 or H4D machine).
func TestGKEFlexStartPools(t *testing.T) {
	var cs *spec.ClusterSpec
	for _, ex := range golden.ValidExamples(t, "../../examples/gke-flex-start.yaml", asOf) {
		if ex.Env == "" {
			cs = ex.Spec
		}
	}
	pools := nodePoolBlocks(t, nodePoolsTF(t, cs))
	for _, name := range []string{"tune_l4", "train_h200"} {
		r := pools[name]
		if r == nil {
			t.Fatalf("no google_container_node_pool %s in %v", name, pools)
		}
		nc := nested(r, "node_config")
		for attr, want := range map[string]string{
			"flex_start": "cty.True",
			"spot":       "",
			"reservation_affinity.consume_reservation_type": `cty.StringVal("NO_RESERVATION")`,
			"autoscaling.location_policy":                   `cty.StringVal("ANY")`,
			"autoscaling.total_min_node_count":              "cty.NumberIntVal(0)",
			"management.auto_repair":                        "cty.False",
		} {
			body, a := nc, attr
			switch blk, rest, ok := cut(attr); {
			case ok && blk == "reservation_affinity":
				body, a = nested(nc, blk), rest
			case ok:
				body, a = nested(r, blk), rest
			}
			if got := literal(t, body, a); got != want {
				t.Errorf("%s: %s = %s, want %s", name, attr, got, want)
			}
		}
		if nested(r, "placement_policy") != nil {
			t.Errorf("%s: a placement_policy", name)
		}
	}
	if qp := nested(pools["train_h200"], "queued_provisioning"); literal(t, qp, "enabled") != "cty.True" {
		t.Error("train_h200: no queued_provisioning { enabled = true }")
	}
	if nested(pools["tune_l4"], "queued_provisioning") != nil {
		t.Error("tune_l4 (flex-start VMs): queued_provisioning")
	}
}

// cut splits "block.attr".
func cut(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return "", s, false
}
