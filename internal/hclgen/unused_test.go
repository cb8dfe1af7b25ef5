package hclgen

import (
	"sort"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/gpuctl/gpuctl/internal/golden"
)

// TestNoUnusedVariables generates every valid example environment, parses
// each .tf file with hclsyntax and fails on a `variable "x"` that no
// expression outside its own block references as var.x (what tflint's
// terraform_unused_declarations flags).
func TestNoUnusedVariables(t *testing.T) {
	n := 0
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		files, err := Generate(ex.Spec, Options{SpecFile: ex.Name + ".yaml", Environment: ex.Env})
		if err != nil {
			t.Fatalf("%s: %v", ex.Dir, err)
		}
		declared, used := map[string]bool{}, map[string]bool{}
		for _, f := range files {
			hf, diags := hclsyntax.ParseConfig(f.Data, f.Name, hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatalf("%s/%s: %s", ex.Dir, f.Name, diags.Error())
			}
			for _, b := range hf.Body.(*hclsyntax.Body).Blocks {
				if b.Type == "variable" && len(b.Labels) == 1 {
					declared[b.Labels[0]] = true
					continue // a variable's own validation is no use of it
				}
				varRefs(b.Body, used)
			}
		}
		var unused []string
		for name := range declared {
			if !used[name] {
				unused = append(unused, name)
			}
		}
		sort.Strings(unused)
		for _, name := range unused {
			t.Errorf("%s: variable %q is declared and never referenced as var.%s", ex.Dir, name, name)
		}
		n++
	}
	if n < 10 {
		t.Errorf("%d example environments checked, want at least 10", n)
	}
}

// varRefs adds the names of the input variables that the expressions of
// body and its nested blocks reference (var.NAME) to used.
func varRefs(body *hclsyntax.Body, used map[string]bool) {
	for _, a := range body.Attributes {
		for _, tr := range a.Expr.Variables() {
			if tr.RootName() != "var" || len(tr) < 2 {
				continue
			}
			if step, ok := tr[1].(hcl.TraverseAttr); ok {
				used[step.Name] = true
			}
		}
	}
	for _, b := range body.Blocks {
		varRefs(b.Body, used)
	}
}
