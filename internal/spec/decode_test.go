package spec

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// decodeCases are documents in the plain shapes a spec is written in (the
// first plainDecodeCases) and in others (tags, merge keys, keys that are
// not strings, repeated anchors, aliases before their anchor), decoded by
// TestDecodeCorpus.
var decodeCases = []string{
	// anchors and aliases, also into other types and within lists
	"spec:\n  tags: &t {a: b}\n  nodePools:\n    - &p {name: x, zones: [z], labels: *t, gpu: {count: 2}}\n    - *p\n  environments:\n    dev: {tags: *t, nodePools: [*p]}\n",
	"spec:\n  region: &r us-central1\n  clusterName: *r\n  nodePools: [{name: *r, zones: [*r, *r]}]\n",
	"spec:\n  nodePools:\n    - name: a\n      diskSizeGB: &d 100\n      gpu: {count: *d}\n      labels: {x: *d}\n",
	// nulls everywhere
	"spec:\n  provider:\n  tags:\n  nodePools:\n    -\n    - name: b\n      zones: [a, null, ~]\n      labels: {a: null}\n      autoRepair: null\n      rollout: null\n  policy: ~\n",
	"metadata: null\nspec: {environments: {dev: null, prod: {}}}\n",
	// scalars of every kind into strings
	"spec:\n  nodePools: [{name: 8, zones: [true, 1, -2, 1.5, .inf, .nan], labels: {a: false, b: 0, c: 'q', \"d e\": \"f\\ng\"}}]\n",
	"spec:\n  nodePools:\n    - name: |\n        block\n        text\n      machineType: >-\n        folded\n        text\n",
	// numbers, booleans, pointers
	"spec:\n  nodePools: [{name: a, gpu: {count: -3}, autoscaling: {min: 0, max: 9223372036854775807}, autoUpgrade: true, autoRepair: false}]\n  policy: {maxSpotShare: 1, trainingUpgradeHold: false}\n",
	"spec:\n  policy: {maxSpotShare: 0.25, requiredTags: [], requiredTaints: [\"a:NoSchedule\"]}\n",
	"spec:\n  policy: {maxSpotShare: .inf}\n",
	// rollout counts and percentages
	"spec:\n  nodePools:\n    - {name: a, rollout: {maxUnavailable: 2}}\n    - {name: b, rollout: {maxUnavailable: \"25%\"}}\n    - {name: c, rollout: {maxUnavailable: '3'}}\n    - {name: d, rollout: {maxUnavailable: +2}}\n    - {name: e, rollout: {maxUnavailable: 100%}}\n    - name: f\n      rollout:\n        maxUnavailable: \"50%\" # half\n    - {name: g, rollout: {maxUnavailable: ' 10%'}}\n    - {name: h, rollout: {maxUnavailable: null}}\n",
	// quoted keys, JSON
	"\"spec\": {\"provider\": \"gke\", \"nodePools\": [{\"name\": \"a\", \"gpu\": {\"count\": 1}}], 'tags': {'x': 'y'}}\n",
	"{\"apiVersion\": \"gpuctl.dev/v1alpha1\", \"kind\": \"ClusterSpec\", \"metadata\": {\"name\": \"j\"}, \"spec\": {\"nodePools\": []}}\n",
	// tags, merge keys, non-string keys, repeated anchors, aliases
	// before their anchor
	"spec:\n  region: !!str us\n  nodePools: [{name: !!str 8, gpu: {count: !!int 2}}]\n",
	"spec:\n  nodePools:\n    - &p {name: a, gpu: {count: 2}}\n    - {<<: *p, name: b}\n",
	"spec:\n  tags: {<<: {a: b}, a: c}\n",
	"spec:\n  tags: {1: a, true: b}\n",
	"spec:\n  tags: &t {a: b}\n  clusterName: &t x\n  region: *t\n",
	"spec:\n  region: *r\n  clusterName: &r x\n",
	"spec:\n  tags: {a: !custom b}\n",
	"spec:\n  nodePools: [{name: a, rollout: {maxUnavailable: \"2\\u0025\"}}]\n",
	"spec:\n  policy: {maxSpotShare: \"0.5\"}\n",
}

// decodeCorpus is every spec the repository holds: the examples, the bad
// inputs, the testscripts' YAML files, generated pools, and decodeCases.
func decodeCorpus(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for _, glob := range []string{"../../examples/*.yaml", "testdata/bad/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = b
		}
	}
	scripts, _ := filepath.Glob("../../testdata/script/*.txtar")
	if len(scripts) == 0 || len(out) == 0 {
		t.Fatal("no corpus")
	}
	for _, s := range scripts {
		a, err := txtar.ParseFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".yaml") || strings.HasSuffix(f.Name, ".yml") {
				out[s+":"+f.Name] = f.Data
			}
		}
	}
	out["pools-50"] = gkePools(50)
	for i, c := range decodeCases {
		out["case-"+string(rune('a'+i))] = []byte("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\n" + c)
	}
	return out
}

// decodeOnly runs the checks Parse runs before decoding, then decodes
// data. ok is false when data does not get that far.
func decodeOnly(data []byte) (cs ClusterSpec, err error, ok bool) {
	data = []byte(strings.TrimPrefix(string(data), "\xef\xbb\xbf"))
	if _, err := prescan("t.yaml", data); err != nil {
		return cs, nil, false
	}
	f, perr := parser.ParseBytes(data, 0)
	if perr != nil || len(f.Docs) != 1 || f.Docs[0] == nil || f.Docs[0].Body == nil {
		return cs, nil, false
	}
	body := f.Docs[0].Body
	if n, fine := expandedSize(body, map[string]ast.Node{}, 0); !fine || n > maxExpandedNodes {
		return cs, nil, false
	}
	switch unwrap(body).(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
	default:
		return cs, nil, false // Parse refuses any other document
	}
	if checkFields("t.yaml", body, reflect.TypeOf(ClusterSpec{}), "", map[string]ast.Node{}) != nil {
		return cs, nil, false
	}
	return cs, decodeSpec("t.yaml", body, &cs), true
}

// plainDecodeCases is how many of decodeCases are in the plain shapes a
// spec is written in (the rest use tags, merge keys and other constructs).
const plainDecodeCases = 13

// TestDecodeCorpus: every example, testscript spec and decode case that
// passes the checks before decoding decodes without a panic; the examples
// and the plain cases decode without error, and an error the decoder
// returns is at a line and column.
func TestDecodeCorpus(t *testing.T) {
	decoded := 0
	for name, data := range decodeCorpus(t) {
		_, err, ok := decodeOnly(data)
		if !ok {
			continue
		}
		decoded++
		plain := strings.HasPrefix(name, "../../examples/") || name == "pools-50"
		if i := strings.TrimPrefix(name, "case-"); i != name && int(i[0]-'a') < plainDecodeCases {
			plain = true
		}
		if err == nil {
			continue
		}
		var se *Error
		switch {
		case plain:
			t.Errorf("%s: %v", name, err)
		case !errors.As(err, &se) || (se.Line == 0 && !strings.Contains(se.Message, "cannot decode")):
			t.Errorf("%s: an error without a position: %v", name, err)
		}
	}
	if decoded < 25 {
		t.Errorf("decoded %d documents; the corpus lost its cases", decoded)
	}
}

// TestDecodeValues: the plain shapes decode to the values written,
// through anchors, aliases, nulls and scalars of every kind.
func TestDecodeValues(t *testing.T) {
	cs, err, ok := decodeOnly([]byte("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\n" + decodeCases[0]))
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	ps := cs.Spec.NodePools
	if len(ps) != 2 || ps[1].Name != "x" || ps[1].GPU.Count != 2 || ps[0].Labels["a"] != "b" || len(cs.Spec.Environments["dev"].NodePools) != 1 {
		t.Errorf("anchors: %+v", cs.Spec)
	}
	cs, err, _ = decodeOnly([]byte("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\n" + decodeCases[5]))
	if err != nil {
		t.Fatal(err)
	}
	p := cs.Spec.NodePools[0]
	want := []string{"true", "1", "-2", "1.5", "+Inf", "NaN"}
	if p.Name != "8" || cmp.Diff(want, p.Zones) != "" || p.Labels["a"] != "false" || p.Labels["d e"] != "f\ng" {
		t.Errorf("scalars: %+v", p)
	}
	cs, err, _ = decodeOnly([]byte("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\n" + decodeCases[10]))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range cs.Spec.NodePools {
		if p.Rollout != nil && p.Rollout.MaxUnavailable != nil {
			got = append(got, p.Rollout.MaxUnavailable.String())
		}
	}
	if d := cmp.Diff([]string{"2", "25%", "3", "2", "100%", "50%", "10%"}, got); d != "" {
		t.Errorf("rollout values (-want +got):\n%s", d)
	}
	// An escaped quoted value reads unescaped, as checkIntOrPercent reads it.
	cs, err, _ = decodeOnly([]byte("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\n" + decodeCases[20]))
	if err != nil || cs.Spec.NodePools[0].Rollout.MaxUnavailable.String() != "2%" {
		t.Errorf("\"2\\u0025\": %v %+v", err, cs.Spec.NodePools)
	}
}

// TestDecodeMergeKeys: merge keys decode as the library decodes them,
// through Parse.
func TestDecodeMergeKeys(t *testing.T) {
	src := "apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: t}\nspec:\n  nodePools:\n    - {name: a, gpu: &g {count: 2}, zones: &z [z]}\n    - {name: b, gpu: {<<: *g, driver: LATEST}, zones: *z}\n  region: us\n"
	doc, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ps := doc.Spec.Spec.NodePools
	if len(ps) != 2 || ps[1].Name != "b" || ps[1].GPU.Count != 2 || ps[1].GPU.Driver != "LATEST" || len(ps[1].Zones) != 1 || doc.Spec.Spec.Region != "us" {
		t.Errorf("decoded %+v", doc.Spec.Spec)
	}
	_, err = Parse("t.yaml", []byte("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: t}\nspec:\n  nodePools:\n    - &p {name: a, gpu: {count: 2}}\n    - {<<: *p, gpu: {count: 3}}\n"))
	if err == nil || !strings.Contains(err.Error(), "t.yaml:7:") || !strings.Contains(err.Error(), `duplicate key`) {
		t.Errorf("merge key repeating a field: %v", err)
	}
}

// TestTagsRefused: a YAML tag is refused where it is written, naming the
// tag and the field, whatever it tags and wherever it stands (a value, a
// list, a mapping, a key, through an anchor): the library reads !!binary
// as its decoded bytes, !!null as nothing, a local tag as the plain value,
// so a reviewer would read one value and gpuctl use another.
func TestTagsRefused(t *testing.T) {
	for _, c := range []struct{ yaml, tag, at, path string }{
		{"  region: !!binary dXMtY2VudHJhbDE=\n", "!!binary", "t.yaml:5:11:", "spec.region"},
		{"  region: !!str us-central1\n", "!!str", "t.yaml:5:11:", "spec.region"},
		{"  region: !!null us-central1\n", "!!null", "t.yaml:5:11:", "spec.region"},
		{"  region: !local us-central1\n", "!local", "t.yaml:5:11:", "spec.region"},
		{"  region: !<tag:yaml.org,2002:binary> dXMtY2VudHJhbDE=\n", "!<tag:yaml.org,2002:binary>", "t.yaml:5:11:", "spec.region"},
		{"  region: &r !!binary dXMtY2VudHJhbDE=\n  clusterName: *r\n", "!!binary", "t.yaml:5:14:", "spec.region"},
		{"  nodePools:\n    - taints: !x {a: b}\n", "!x", "t.yaml:6:15:", "spec.nodePools[0].taints"},
		{"  nodePools:\n    - {name: a, zones: !!seq [z]}\n", "!!seq", "t.yaml:6:24:", "spec.nodePools[0].zones"},
		{"  nodePools:\n    - {name: a, gpu: {count: !!int 2}}\n", "!!int", "t.yaml:6:30:", "spec.nodePools[0].gpu.count"},
		{"  tags: !!map {a: b}\n", "!!map", "t.yaml:5:9:", "spec.tags"},
		{"  tags:\n    !!str team: a\n", "!!str", "t.yaml:6:5:", "spec.tags"},
		{"  nodePools: [{name: a, rollout: {maxUnavailable: !!str 25%}}]\n", "!!str", "t.yaml:5:51:", "spec.nodePools[0].rollout.maxUnavailable"},
	} {
		_, err := Parse("t.yaml", []byte(header+"spec:\n"+c.yaml))
		var se *Error
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), c.at) || !strings.Contains(se.Message, "YAML tag \""+c.tag+"\" is not allowed") || !strings.HasPrefix(se.Path, c.path) {
			t.Errorf("%q: %v; want %s %s: YAML tag %q is not allowed", c.yaml, err, c.at, c.path, c.tag)
		}
	}
	for name, load := range map[string]func(string) error{
		"waivers": func(p string) error { _, err := LoadWaivers(p); return err },
		"policy":  func(p string) error { _, err := LoadPolicy(p); return err },
	} {
		body := map[string]string{
			"waivers": "waivers:\n  - {rule: GPU-DRIVER-EOL, reason: !!binary b2s=, expires: 2027-01-01}\n",
			"policy":  "policy:\n  requiredTags: [!!str team]\n",
		}[name]
		p := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := load(p); err == nil || !strings.HasPrefix(err.Error(), p+":2:") || !strings.Contains(err.Error(), "YAML tag") {
			t.Errorf("%s: %v, want a tag refused at line 2", name, err)
		}
	}
}

// TestRolloutValueErrors: a rollout value that is neither a count nor a
// percentage is refused where it is written.
func TestRolloutValueErrors(t *testing.T) {
	for val, want := range map[string]string{
		"0":          "t.yaml:5:51: spec.nodePools[0].rollout.maxUnavailable: 0 nodes: must be at least 1",
		`"150%"`:     `t.yaml:5:51: spec.nodePools[0].rollout.maxUnavailable: percentage "150%" must be between 1% and 100%`,
		"2.5":        `t.yaml:5:51: spec.nodePools[0].rollout.maxUnavailable: "2.5" is neither a number of nodes (2) nor a percentage ("25%")`,
		"{x: 1}":     `t.yaml:5:51: spec.nodePools[0].rollout.maxUnavailable: wrong type: want a number of nodes (2) or a percentage ("25%"), got "{"`,
		"[1]":        `t.yaml:5:51: spec.nodePools[0].rollout.maxUnavailable: wrong type: want a number of nodes (2) or a percentage ("25%"), got "["`,
		"{value: 2}": `t.yaml:5:51: spec.nodePools[0].rollout.maxUnavailable: wrong type`,
	} {
		src := "apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: t}\nspec:\n  nodePools: [{name: a, rollout: {maxUnavailable: " + val + "}}]\n"
		_, err := Parse("t.yaml", []byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("maxUnavailable %s: %v, want %s", val, err, want)
		}
	}
}
