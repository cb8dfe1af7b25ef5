package importer

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// TestKarpenterChartVersion holds the karpenter-resources defaults row a
// version constraint of eks-data-addons picks: a constraint capped below
// v1.34.0 gets AL2 (v1beta1), anything that allows v1.34.0 or later, or
// none, Bottlerocket.
func TestKarpenterChartVersion(t *testing.T) {
	for _, tc := range []struct {
		constraint, want string
	}{
		{"1.33.0", "AL2"},
		{"= 1.30.1", "AL2"},
		{"~> 1.33.0", "AL2"},
		{"< 1.34", "AL2"},
		{"1.34.0", "bottlerocket@latest"},
		{"~> 1.33", "bottlerocket@latest"}, // allows 1.x
		{"~> 1.37", "bottlerocket@latest"},
		{">= 1.20", "bottlerocket@latest"},
		{"", "bottlerocket@latest"},
	} {
		row := kpChartVersion(tc.constraint)
		got := row.amiFamily + row.amiAlias
		if got != tc.want {
			t.Errorf("kpChartVersion(%q) = %q, want %q", tc.constraint, got, tc.want)
		}
	}
}

// TestTFTextLines holds the origin of each line of YAML written from a
// heredoc: literal lines at their own .tf lines, a multi-line value at the
// line of its interpolation, an unknown interpolation an unknown value.
func TestTFTextLines(t *testing.T) {
	src := "x = <<-EOT\n  a: 1\n  b: ${v}\n  c: ${u}\n  d: 2\nEOT\n"
	f, d := hclsyntax.ParseConfig([]byte(src), "m.tf", hcl.InitialPos)
	if d.HasErrors() {
		t.Fatal(d)
	}
	expr := f.Body.(*hclsyntax.Body).Attributes["x"].Expr.(*hclsyntax.TemplateExpr)
	w := newTFText()
	w.template(expr, func(x hcl.Expression) (cty.Value, []string) {
		if x.Variables()[0].RootName() == "u" {
			return cty.DynamicVal, []string{"module.m.out, a module output"}
		}
		return cty.StringVal("\n    k1: x\n    k2: y"), nil
	})
	docs, err := w.docs("m.tf")
	if err != nil || len(docs) != 1 {
		t.Fatalf("docs: %v (%d)", err, len(docs))
	}
	n := docs[0]
	for key, line := range map[string]int{"a": 2, "b": 3, "c": 4, "d": 5} {
		if got := n.get(key).at; got.File != "m.tf" || got.Line != line {
			t.Errorf("%s at %v, want m.tf:%d", key, got, line)
		}
	}
	if got := n.get("b").get("k2").at.Line; got != 3 {
		t.Errorf("b.k2 at line %d, want 3 (the interpolation's)", got)
	}
	if !isUnknownNode(n.get("c")) || whyUnknown(n.get("c"))[0] != "module.m.out, a module output" {
		t.Errorf("c = %#v, want unknown because of module.m.out", n.get("c").scalar)
	}
	if n.get("c").str() != "" {
		t.Errorf("an unknown value's str() = %q, want empty", n.get("c").str())
	}
}
