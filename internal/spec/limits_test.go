package spec

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

const header = "apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: t}\n"

// TestLimitsBeforeTree: hostile shapes are refused by the scan of the
// bytes, each with its own message and the line:column where the limit
// trips, before the YAML library builds a tree (which took minutes and
// gigabytes for these inputs).
func TestLimitsBeforeTree(t *testing.T) {
	block := func(depth int) string {
		var b strings.Builder
		b.WriteString(header + "spec:\n")
		for i := 0; i < depth; i++ {
			b.WriteString(strings.Repeat(" ", 2*i+2) + "a:\n")
		}
		return b.String()
	}
	seqs := func(depth int) string {
		var b strings.Builder
		b.WriteString(header + "spec:\n  zones:\n")
		for i := 0; i < depth; i++ {
			b.WriteString(strings.Repeat(" ", 2*i+4) + "-\n")
		}
		return b.String()
	}
	labels := func(n int, quoted bool) string {
		var b strings.Builder
		b.WriteString(header + "spec:\n  tags:\n")
		for i := 0; i < n; i++ {
			if quoted {
				fmt.Fprintf(&b, "    \"k%d\": v\n", i)
			} else {
				fmt.Fprintf(&b, "    k%d: v\n", i)
			}
		}
		return b.String()
	}
	envs := func(n int) string {
		var b strings.Builder
		b.WriteString(header + "spec:\n  environments: {")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "e%d: {region: x}, ", i)
		}
		b.WriteString("}\n")
		return b.String()
	}
	cases := []struct {
		name, data string
		line, col  int
		want       string
	}{
		{"flow-seq-100000", header + "spec: {zones: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "}\n", 4, 15 + 62, "nest deeper than 64 levels"},
		{"flow-map-50000", header + "spec: " + strings.Repeat("{a: ", 50_000) + "1" + strings.Repeat("}", 50_000) + "\n", 4, 7 + 4*63, "nest deeper than 64 levels"},
		{"block-maps-1000", block(1000), 4 + 64, 2*64 + 1, "nest deeper than 64 levels"},
		{"block-seqs-1000", seqs(1000), 5 + 63, 2*64 + 1, "nest deeper than 64 levels"},
		{"inline-seqs", header + "spec:\n  zones:\n" + "    " + strings.Repeat("- ", 100) + "x\n", 6, 5 + 2*62, "nest deeper than 64 levels"},
		{"labels-10000", labels(10_000, false), 6 + MaxKeys, 5, "mapping with more than 1000 keys"},
		{"quoted-labels-10000", labels(10_000, true), 6 + MaxKeys, 5, "mapping with more than 1000 keys"},
		{"environments-5000", envs(5000), 5, 0, "mapping with more than 1000 keys"},
		{"string-1MiB", header + "spec:\n  region: " + strings.Repeat("x", 1<<20) + "\n", 5, 11, "string longer than 16 KiB"},
		{"quoted-string-1MiB", header + "spec:\n  region: \"" + strings.Repeat("x", 1<<20) + "\"\n", 5, 11, "string longer than 16 KiB"},
		{"multiline-quoted", header + "spec:\n  region: '" + strings.Repeat("xxxxxxxxxx\n", 2000) + "'\n", 5, 11, "string longer than 16 KiB"},
		{"block-scalar", header + "spec:\n  region: |\n" + strings.Repeat("    xxxxxxxxxx\n", 2000) + "  zones: []\n", 5, 11, "string longer than 16 KiB"},
		{"key-1MiB", header + "spec:\n  " + strings.Repeat("k", 1<<20) + ": v\n", 5, 3, "string longer than 16 KiB"},
		{"nodes-2M", header + "spec: {zones: [" + strings.Repeat("a,", 2_000_000) + "]}\n", 4, 0, "more than 500000 YAML nodes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("hostile.yaml", []byte(c.data))
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse = %v, want *spec.Error", err)
			}
			msg := se.Error()
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q lacks %q", msg, c.want)
			}
			if se.Line != c.line || (c.col > 0 && se.Column != c.col) {
				t.Errorf("at %d:%d, want %d:%d (%s)", se.Line, se.Column, c.line, c.col, msg)
			}
			if se.Hint == "" {
				t.Errorf("no hint: %s", msg)
			}
			if len(msg) > 400 {
				t.Errorf("message of %d bytes echoes the input", len(msg))
			}
			if strings.Contains(msg, "aliases") {
				t.Errorf("message speaks of aliases in a file without any: %s", msg)
			}
		})
	}
}

// TestLimitsAllowRealSpecs: the limits leave room for large real specs: a
// 10,000-pool spec (under the byte limit), 1,000 labels, long-ish strings,
// quoted keys, comments with brackets, block scalars and multi-line flow.
func TestLimitsAllowRealSpecs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10,000-pool spec")
	}
	data := gkePools(10_000)
	if len(data) > MaxFileBytes {
		t.Fatalf("a 10,000-pool spec is %d bytes, over the file limit", len(data))
	}
	if _, err := prescan("big.yaml", data); err != nil {
		t.Fatalf("10,000 pools: %v", err)
	}
	ok := []string{
		labels1000(),
		header + "spec:\n  region: \"" + strings.Repeat("x", MaxStringBytes-10) + "\"\n",
		header + "spec: # a [comment {with brackets\n  zones: [a, # [\n    b]\n  region: |\n    text: [ { \"\n  cuda: '12.4'\n",
		header + "\"spec\":\n  \"region\": \"us-central1\"\n  'zones': ['a']\n",
	}
	for i, d := range ok {
		if _, err := prescan("ok.yaml", []byte(d)); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
}

func labels1000() string {
	var b strings.Builder
	b.WriteString(header + "spec:\n  tags:\n")
	for i := 0; i < MaxKeys; i++ {
		fmt.Fprintf(&b, "    k%d: v\n", i)
	}
	return b.String()
}

// gkePools is a spec with n pools the way internal/golden.GKEPools writes
// them (spec's tests cannot import golden).
func gkePools(n int) []byte {
	var b strings.Builder
	b.WriteString(header + "spec:\n  provider: gke\n  region: us-central1\n  nodePools:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    - {name: p%d, role: inference, machineType: g2-standard-24, zones: [us-central1-a], osImage: COS_CONTAINERD, gpu: {type: nvidia-l4, count: 2, driver: LATEST}, autoscaling: {min: 0, max: 2}, taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}\n", i)
	}
	return []byte(b.String())
}

// TestStrictScalars: an integer field takes only an integer: no float cut
// to an integer, no string (a tag is refused before: TestTagsRefused).
func TestStrictScalars(t *testing.T) {
	for _, v := range []string{"8.5", `"8"`, "true", "eight"} {
		data := header + "spec:\n  nodePools:\n    - name: a\n      gpu:\n        count: " + v + "\n"
		_, err := Parse("s.yaml", []byte(data))
		var se *Error
		if !errors.As(err, &se) || !strings.Contains(se.Message, "want an integer") || se.Line != 8 || se.Path != "spec.nodePools[0].gpu.count" {
			t.Errorf("count: %s: got %v, want a wrong-type error at 8:16 on spec.nodePools[0].gpu.count", v, err)
		}
	}
	doc, err := Parse("s.yaml", []byte(header+"spec:\n  nodePools:\n    - {name: a, gpu: {count: 8}}\n"))
	if err != nil || doc.Spec.Spec.NodePools[0].GPU.Count != 8 {
		t.Fatalf("count: 8: %v", err)
	}
}

// TestJSONQuotedKeysBOM: YAML that is valid is read: a spec written as JSON,
// quoted keys, a UTF-8 byte order mark; positions still point into the file.
func TestJSONQuotedKeysBOM(t *testing.T) {
	cases := map[string]string{
		"json":   `{"apiVersion": "gpuctl.dev/v1alpha1", "kind": "ClusterSpec", "metadata": {"name": "j"}, "spec": {"region": "us-central1", "nodePools": [{"name": "a", "gpu": {"count": 2}}]}}`,
		"jsonc":  `{"apiVersion":"gpuctl.dev/v1alpha1","kind":"ClusterSpec","metadata":{"name":"j"},"spec":{"region":"us-central1","nodePools":[{"name":"a","gpu":{"count":2}}]}}`,
		"quoted": header + "\"spec\":\n  'region': us-central1\n  \"nodePools\": [{\"name\": a, gpu: {\"count\": 2}}]\n",
		"bom":    "\xef\xbb\xbf" + header + "spec:\n  region: us-central1\n  nodePools: [{name: a, gpu: {count: 2}}]\n",
	}
	for name, data := range cases {
		doc, err := Parse(name+".yaml", []byte(data))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if doc.Spec.Spec.Region != "us-central1" || doc.Spec.Spec.NodePools[0].GPU.Count != 2 {
			t.Errorf("%s: decoded %+v", name, doc.Spec.Spec)
		}
		if l, _, ok := doc.Position("spec.nodePools[0].gpu.count"); !ok || l == 0 {
			t.Errorf("%s: no position for spec.nodePools[0].gpu.count", name)
		}
	}
	_, err := Parse("typo.json", []byte(`{"apiVersion": "gpuctl.dev/v1alpha1", "kind": "ClusterSpec", "metadata": {"name": "j"}, "spec": {"regoin": "x"}}`))
	if err == nil || !strings.Contains(err.Error(), `unknown field "regoin"`) || !strings.Contains(err.Error(), `did you mean "region"?`) {
		t.Errorf("typo in JSON: %v", err)
	}
}
