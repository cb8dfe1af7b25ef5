package hclgen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestWriteIsFormatted holds every file Generate writes, on every example
// and on hostile strings, to what hclwrite's formatter (File.Bytes,
// `terraform fmt`) makes of it, byte for byte, and to hclsyntax; and
// formatBytes, which formats multi-line expressions, to hclwrite.Format on
// hand-written HCL with every construct the formatter treats specially.
func TestWriteIsFormatted(t *testing.T) {
	var specs []*spec.ClusterSpec
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		specs = append(specs, ex.Spec)
	}
	for _, provider := range []string{spec.ProviderGKE, spec.ProviderEKS} {
		for _, s := range hostileStrings {
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
		files, err := Generate(cs, Options{SpecFile: "x.yaml"})
		if err != nil {
			continue
		}
		for _, f := range files {
			if want := hclwrite.Format(f.Data); !bytes.Equal(f.Data, want) {
				t.Errorf("%s of %q is not formatted as hclwrite formats it:\n got: %q\nwant: %q", f.Name, cs.Metadata.Name, f.Data, want)
			}
			if _, diags := hclsyntax.ParseConfig(f.Data, f.Name, hcl.InitialPos); diags.HasErrors() {
				t.Errorf("%s of %q does not parse: %v", f.Name, cs.Metadata.Name, diags)
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
		got := []byte(mapTokens(m).text)
		if want := hclwrite.TokensForValue(stringMap(m)).Bytes(); !bytes.Equal(got, want) {
			t.Errorf("mapTokens(%v):\n got: %q\nwant: %q", m, got, want)
		}
	}
}

// hostileStrings are spec strings that need escaping or count columns by
// grapheme clusters.
var hostileStrings = []string{"Grüße ünïcödé 🚀", "tab\there", "cr\r\nlf", "${x} %{y}", `"q"`, "e\u0301 combining", "ctl\x00\x7f\u200b\U000e0001", "bad\xffutf8", "$${ %%{ $ % {", `back\slash`}

// TestQuoteString: quoteString writes what hclwrite.TokensForValue writes
// for a cty string.
func TestQuoteString(t *testing.T) {
	for _, s := range append(hostileStrings, "", "plain", "{}", "a$", "a%") {
		if got, want := quoteString(s), string(hclwrite.TokensForValue(cty.StringVal(s)).Bytes()); got != want {
			t.Errorf("quoteString(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestValueRaw: valueRaw writes what hclwrite.TokensForValue writes, once
// formatted, for every kind of value generation uses.
func TestValueRaw(t *testing.T) {
	for _, v := range []cty.Value{
		cty.NullVal(cty.String), cty.True, cty.False, cty.NumberIntVal(-3), cty.MustParseNumberVal("535104005000000"),
		cty.StringVal("x"), cty.ListValEmpty(cty.String), stringList([]string{"a", "${b}"}),
		cty.MapValEmpty(cty.String), stringMap(map[string]string{"a": "1", "long key": "2", "ünï": "3"}),
		cty.ObjectVal(map[string]cty.Value{"source": cty.StringVal("hashicorp/google"), "version": cty.StringVal("~> 7.45")}),
		cty.ListVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"a": cty.StringVal("b")})}),
	} {
		line := append(hclwrite.Tokens{{Type: hclsyntax.TokenIdent, Bytes: []byte("x")}, {Type: hclsyntax.TokenEqual, Bytes: []byte("=")}}, hclwrite.TokensForValue(v)...)
		want := strings.TrimPrefix(string(hclwrite.Format(line.Bytes())), "x = ")
		if got := valueRaw(v); got.text != want || got.multi != strings.Contains(want, "\n") {
			t.Errorf("valueRaw(%#v) = %q (multi %v), want %q", v, got.text, got.multi, want)
		}
	}
}

// TestValidIdentifier: validIdentifier answers as hclsyntax.ValidIdentifier
// on every string of up to two printable ASCII bytes and on longer ones.
func TestValidIdentifier(t *testing.T) {
	cases := []string{"", "gpuctl.dev/pool", "team", "a-b", "_x", "x_1", "9x", "-a", "a b", "ünï", "a\x00", "kubernetes.io/arch"}
	for a := 0x20; a < 0x7f; a++ {
		cases = append(cases, string(rune(a)))
		for b := 0x20; b < 0x7f; b++ {
			cases = append(cases, string([]rune{rune(a), rune(b)}))
		}
	}
	for _, s := range cases {
		if got, want := validIdentifier(s), hclsyntax.ValidIdentifier(s); got != want {
			t.Errorf("validIdentifier(%q) = %v, hclsyntax says %v", s, got, want)
		}
	}
}
