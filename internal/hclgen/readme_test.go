package hclgen

import (
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestREADMERootModule parses the example root module of the generate
// manual (docs/generate.md, linked from the README) and holds
// its module call to the generated child module: every argument but source
// is a variable of the generated GKE module, and every output it reads is
// one the module has; the generated module has no provider or backend.
func TestREADMERootModule(t *testing.T) {
	readme, err := os.ReadFile("../../docs/generate.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```hcl\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) == 0 {
		t.Fatal("docs/generate.md has no hcl block")
	}
	root, diags := hclsyntax.ParseConfig(blocks[0][1], "docs/generate.md", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	dir := "testdata/golden/gke-h100-l4/base/"
	declared := map[string]map[string]bool{"variable": {}, "output": {}}
	for _, f := range []string{"versions.tf", "variables.tf", "node_pools.tf", "outputs.tf"} {
		src, err := os.ReadFile(dir + f)
		if err != nil {
			t.Fatal(err)
		}
		file, diags := hclsyntax.ParseConfig(src, f, hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		for _, b := range file.Body.(*hclsyntax.Body).Blocks {
			switch b.Type {
			case "variable", "output":
				declared[b.Type][b.Labels[0]] = true
			case "provider":
				t.Errorf("%s: the child module has a provider block", f)
			case "terraform":
				for _, inner := range b.Body.Blocks {
					if inner.Type == "backend" || inner.Type == "cloud" {
						t.Errorf("%s: the child module has a %s block", f, inner.Type)
					}
				}
			}
		}
	}
	calls := 0
	for _, b := range root.Body.(*hclsyntax.Body).Blocks {
		switch b.Type {
		case "module":
			calls++
			for name := range b.Body.Attributes {
				if name != "source" && !declared["variable"][name] {
					t.Errorf("README module argument %s is not a variable of the generated module", name)
				}
			}
		case "output":
			for _, a := range b.Body.Attributes {
				for _, tr := range a.Expr.Variables() {
					if tr.RootName() == "module" && len(tr) > 2 {
						if out, ok := tr[2].(hcl.TraverseAttr); ok && !declared["output"][out.Name] {
							t.Errorf("README reads module output %s, which the generated module lacks", out.Name)
						}
					}
				}
			}
		}
	}
	if calls != 1 {
		t.Errorf("%d module calls in the README's root module, want 1", calls)
	}
}
