package hclgen

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/gpuctl/gpuctl/internal/golden"
)

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
	var res map[string]*hclsyntax.Body
	for _, ex := range golden.ValidExamples(t, "../../examples/gke-flex-start.yaml", asOf) {
		if ex.Env == "" {
			res = eksResources(t, ex) // every resource of node_pools.tf, GKE's too
		}
	}
	pools := map[string]*hclsyntax.Body{"tune_l4": res["google_container_node_pool.tune_l4"], "train_h200": res["google_container_node_pool.train_h200"]}
	for _, name := range []string{"tune_l4", "train_h200"} {
		r := pools[name]
		if r == nil {
			t.Fatalf("no google_container_node_pool %s in %v", name, pools)
		}
		nc := findBlock(r, "node_config")
		for attr, want := range map[string]string{
			"flex_start": "cty.True",
			"spot":       "",
			"reservation_affinity.consume_reservation_type": `cty.StringVal("NO_RESERVATION")`,
			"autoscaling.location_policy":                   `cty.StringVal("ANY")`,
			"autoscaling.total_min_node_count":              "cty.NumberIntVal(0)",
			"management.auto_repair":                        "cty.False",
		} {
			body, a := nc, attr
			switch blk, rest, ok := strings.Cut(attr, "."); {
			case ok && blk == "reservation_affinity":
				body, a = findBlock(nc, blk), rest
			case ok:
				body, a = findBlock(r, blk), rest
			}
			if got := literal(t, body, a); got != want {
				t.Errorf("%s: %s = %s, want %s", name, attr, got, want)
			}
		}
		if findBlock(r, "placement_policy") != nil {
			t.Errorf("%s: a placement_policy", name)
		}
	}
	if qp := findBlock(pools["train_h200"], "queued_provisioning"); literal(t, qp, "enabled") != "cty.True" {
		t.Error("train_h200: no queued_provisioning { enabled = true }")
	}
	if findBlock(pools["tune_l4"], "queued_provisioning") != nil {
		t.Error("tune_l4 (flex-start VMs): queued_provisioning")
	}
}
