package hclgen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/gpuctl/gpuctl/internal/golden"
)

// TestHeaderEscapesFileName: a spec file name with line breaks and other
// control characters cannot end the "# Source:" comment of a Terraform file
// and write HCL of its own: the name is written as diag.OneLine escapes it,
// every comment stays one line without a control character, and every file
// parses with no block or attribute the name tried to add.
func TestHeaderEscapesFileName(t *testing.T) {
	const name = "x\nresource \"null_resource\" \"evil\" {}\nevil = true\r\u2028\x1b[2J\u202e.yaml"
	const escaped = `# Source: x\nresource "null_resource" "evil" {}\nevil = true\r\u2028\x1b[2J\u202e.yaml, spec`
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		cs := *ex.Spec
		cs.Spec.NodePools = append(cs.Spec.NodePools[:0:0], cs.Spec.NodePools...)
		cs.Spec.NodePools[0].MaintenanceWindow = "Sat 02:00\nevil = true"
		files, err := Generate(&cs, Options{SpecFile: name, Environment: ex.Env})
		if err != nil {
			t.Fatalf("%s: %v", ex.Dir, err)
		}
		for _, f := range files {
			if !bytes.Contains(f.Data, []byte(escaped)) {
				t.Errorf("%s/%s: header does not escape the file name:\n%.300s", ex.Dir, f.Name, f.Data)
			}
			for _, l := range strings.Split(string(f.Data), "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "#") && strings.ContainsAny(l, "\r\x1b\u2028\u202e") {
					t.Errorf("%s/%s: comment holds a control character: %q", ex.Dir, f.Name, l)
				}
			}
			hf, diags := hclsyntax.ParseConfig(f.Data, f.Name, hcl.InitialPos)
			if diags.HasErrors() {
				t.Errorf("%s/%s: %v", ex.Dir, f.Name, diags)
				continue
			}
			body := hf.Body.(*hclsyntax.Body)
			if _, ok := body.Attributes["evil"]; ok {
				t.Errorf("%s/%s: the file name wrote an attribute", ex.Dir, f.Name)
			}
			for _, b := range body.Blocks {
				if len(b.Labels) == 2 && b.Labels[1] == "evil" {
					t.Errorf("%s/%s: the file name wrote a block", ex.Dir, f.Name)
				}
			}
		}
	}
}
