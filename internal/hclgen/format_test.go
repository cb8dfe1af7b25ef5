package hclgen

import (
	"bytes"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestFormatMatchesHCLWrite holds Generate's output, formatted pool by pool
// with formatBytes, to hclwrite's formatter on the whole file (what
// File.Bytes and `terraform fmt` write): on every example and on hostile
// strings; and formatBytes to hclwrite.Format on hand-written HCL with every
// construct the formatter treats specially.
func TestFormatMatchesHCLWrite(t *testing.T) {
	var specs []*spec.ClusterSpec
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		specs = append(specs, ex.Spec)
	}
	for _, provider := range []string{spec.ProviderGKE, spec.ProviderEKS} {
		for _, s := range []string{"Grüße ünïcödé 🚀", "tab\there", "cr\r\nlf", "${x} %{y}", `"q"`} {
			specs = append(specs, &spec.ClusterSpec{Metadata: spec.Metadata{Name: s}, Spec: spec.Spec{
				Provider: provider, Region: s, ClusterName: s, CUDA: "12.4", Tags: map[string]string{"team": s, s: s},
				NodePools: []spec.NodePool{{
					Name: "p", Role: spec.RoleTraining, MachineType: "a3-highgpu-8g", InstanceTypes: []string{"p5.48xlarge"}, Zones: []string{s},
					GPU: spec.GPU{Type: "nvidia-h100-80gb", Count: 8, Driver: "550.90.07"}, Labels: map[string]string{s: s, "ünï": "x"},
					MaintenanceWindow: s, Autoscaling: spec.Autoscaling{Max: 2},
				}},
			}})
		}
	}
	checked := 0
	for _, cs := range specs {
		g, err := build(cs, Options{SpecFile: "x.yaml"}, true)
		if err != nil {
			continue
		}
		files, err := Generate(cs, Options{SpecFile: "x.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range g.files {
			// Generate formats pool by pool; hclwrite formats the whole file.
			if got, want := files[i].Data, f.Bytes(); !bytes.Equal(got, want) {
				t.Errorf("%s of %q: formatted pool by pool differs from hclwrite on the whole file:\n got: %q\nwant: %q", fileNames[i], cs.Metadata.Name, got, want)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d files compared", checked)
	}
	for _, src := range []string{
		"a=1\nlonger_name=2 # c\nb   =   [1,2 , 3]\n\n x = {a=1,bb=2}\n",
		"resource \"x\" \"y\" {\ncount=-1\nv = a - -b\nw = !c && (d || e)\nl = [for x in [foo]: x if x != \"\"]\nm = {for k, v in var.m : k => v...}\n}\n",
		"f = func(a, b...)\ng = ns::fn(1)\nh = var.x[0].y\ni = \"${a}${b} %{if c}d%{endif}\"\nj = <<EOT\n  keep   this\nEOT\nk = x ? -1 : 2*3\n",
		"# comment\n// other\n/* block */\nblock {\n  nested {\n    deep = \"ünïcödé\"\n    é = 1\n  }\n}\nempty {}\n",
		"a = { \"k\" = \"v\", \"long key\" = 2 }\nlist = [\n1,\n2,\n]\n",
	} {
		f, diags := hclwrite.ParseConfig([]byte(src), "t.tf", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%q: %v", src, diags)
		}
		got := formatBytes(f.BuildTokens(nil))
		if want := hclwrite.Format([]byte(src)); !bytes.Equal(got, want) {
			t.Errorf("formatBytes(%q):\n got: %q\nwant: %q", src, got, want)
		}
	}
}

// TestMapTokens: mapTokens writes what hclwrite.TokensForValue writes for
// the same map, once formatted.
func TestMapTokens(t *testing.T) {
	for _, m := range []map[string]string{
		{},
		{"a": "1"},
		{"gpuctl.dev/pool": "p0", "b": "${x}", "long_identifier": "ünï\n", "9x": "%{y}", "é": `"`},
	} {
		got := formatBytes(mapTokens(m))
		if want := hclwrite.TokensForValue(stringMap(m)).Bytes(); !bytes.Equal(got, want) {
			t.Errorf("mapTokens(%v):\n got: %q\nwant: %q", m, got, want)
		}
	}
}
