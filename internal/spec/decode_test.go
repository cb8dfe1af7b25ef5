package spec

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// decodeCases are documents in the shapes the walk takes and in those it
// leaves to the library, each decoded both ways by TestDecodeAgreesWithLibrary.
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
	// left to the library: tags, merge keys, non-string keys, repeated
	// anchors, aliases before their anchor or inside it
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

// decodeBoth decodes data with the walk and with yaml.NodeToValue, after
// the checks Parse runs first. ok is false when data does not get that far.
func decodeBoth(data []byte) (walk, lib ClusterSpec, walkErr, libErr error, ok bool) {
	data = []byte(strings.TrimPrefix(string(data), "\xef\xbb\xbf"))
	if _, err := prescan("t.yaml", data); err != nil {
		return
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil || len(f.Docs) != 1 || f.Docs[0] == nil || f.Docs[0].Body == nil {
		return
	}
	body := f.Docs[0].Body
	if n, fine := expandedSize(body, map[string]ast.Node{}, 0); !fine || n > maxExpandedNodes {
		return
	}
	switch unwrap(body).(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
	default:
		return // Parse refuses any other document
	}
	if checkFields("t.yaml", body, reflect.TypeOf(ClusterSpec{}), "", map[string]ast.Node{}) != nil {
		return
	}
	d := &decoder{file: "t.yaml"}
	walkErr = d.value(reflect.ValueOf(&walk).Elem(), body, 0)
	libErr = yaml.NodeToValue(body, &lib, yaml.DisallowUnknownField())
	return walk, lib, walkErr, libErr, true
}

// TestDecodeAgreesWithLibrary: wherever the walk decodes a document, the
// library decodes it without error to the same values; the walk leaves
// only the constructs it does not take to the library, and takes every
// example and testscript spec itself.
func TestDecodeAgreesWithLibrary(t *testing.T) {
	walked, left := 0, 0
	for name, data := range decodeCorpus(t) {
		walk, lib, walkErr, libErr, ok := decodeBoth(data)
		if !ok {
			continue
		}
		if errors.Is(walkErr, errLibrary) {
			left++
			if strings.HasPrefix(name, "../../examples/") {
				t.Errorf("%s: left to the library", name)
			}
			continue
		}
		walked++
		if walkErr != nil || libErr != nil {
			t.Errorf("%s: walk error %v, library error %v", name, walkErr, libErr)
			continue
		}
		if diff := cmp.Diff(lib, walk); diff != "" {
			t.Errorf("%s: the walk decodes differently (-library +walk):\n%s", name, diff)
		}
	}
	if walked < 20 || left < 5 {
		t.Errorf("walked %d documents, left %d to the library; the corpus lost its cases", walked, left)
	}
}

// TestDecodeLeavesToLibrary: a file the walk does not take decodes as
// the library decodes it, through Parse.
func TestDecodeLeavesToLibrary(t *testing.T) {
	src := "apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: t}\nspec:\n  nodePools:\n    - {name: a, gpu: &g {count: 2}, zones: &z [z]}\n    - {name: b, gpu: {<<: *g, driver: LATEST}, zones: *z}\n  region: !!str us\n"
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

// TestTaggedValueForList: a tagged value other than a list where a list
// belongs is refused where it is written (the YAML library's decoder
// dereferenced nil on it).
func TestTaggedValueForList(t *testing.T) {
	for _, val := range []string{"!x 00", "!!str a", "!x ~", "!x {a: b}"} {
		src := "apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: t}\nspec:\n  nodePools:\n    - taints: " + val + "\n"
		_, err := Parse("t.yaml", []byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), "t.yaml:6:") || !strings.Contains(err.Error(), "spec.nodePools[0].taints: wrong type: want a list") {
			t.Errorf("taints: %s: %v", val, err)
		}
	}
	doc, err := Parse("t.yaml", []byte("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: t}\nspec:\n  nodePools:\n    - {name: a, zones: !!seq [z]}\n"))
	if err != nil || len(doc.Spec.Spec.NodePools[0].Zones) != 1 {
		t.Errorf("a tagged list: %v", err)
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

// FuzzDecodeAgrees holds the walk to the library on arbitrary documents
// that pass the checks before decoding.
func FuzzDecodeAgrees(f *testing.F) {
	for _, data := range decodeCorpus(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		walk, lib, walkErr, libErr, ok := decodeBoth(data)
		if !ok || errors.Is(walkErr, errLibrary) {
			return
		}
		if walkErr != nil || libErr != nil {
			t.Fatalf("walk error %v, library error %v", walkErr, libErr)
		}
		if diff := cmp.Diff(lib, walk); diff != "" {
			t.Fatalf("the walk decodes differently (-library +walk):\n%s", diff)
		}
	})
}
