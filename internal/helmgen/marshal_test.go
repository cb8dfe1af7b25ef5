package helmgen

import (
	"bytes"
	"math"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/golden"
)

// TestMarshalYAML holds marshalYAML to sigs.k8s.io/yaml.Marshal, byte for
// byte: on every manifest file of every example and on values whose YAML
// needs quoting or whose numbers need the right type.
func TestMarshalYAML(t *testing.T) {
	hostile := map[string]any{
		"strings": []string{"yes", "no", "on", "off", "y", "n", "true", "null", "~", "", " lead", "trail ", "a: b", "#x", "x #y", "multi\nline",
			"ünï", "1", "0x1F", "0o17", "1e3", "1.5", ".inf", "-.nan", "2026-11-29", "- x", "[a]", "{a: 1}", "'q'", `"q"`, "*a", "&a", "!t", "%x", "@x", "`x", "<html>&"},
		"numbers": []any{0, -1, math.MaxInt64, uint64(math.MaxUint64), 1.5, 1e21, 1e-7, -0.25, float32(0.1)},
		"nested":  map[string]any{"empty": map[string]any{}, "list": []any{}, "nil": nil, "b": true, "10": "ten", "9": "nine", "a10": 1, "a9": 2},
		"keys":    map[string]int{"yes": 1, "null": 2, "1": 3, "a b": 4, "ünï": 5},
	}
	got, err := marshalYAML(hostile)
	if err != nil {
		t.Fatal(err)
	}
	want, err := yaml.Marshal(hostile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("marshalYAML:\n%s\nsigs.k8s.io/yaml:\n%s", got, want)
	}

	files := 0
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		l, err := Build(ex.Spec)
		if err != nil {
			t.Fatal(err)
		}
		fast, err := l.Manifests(Options{SpecFile: "x.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		marshalObject = yaml.Marshal
		slow, err := l.Manifests(Options{SpecFile: "x.yaml"})
		marshalObject = marshalYAML
		if err != nil {
			t.Fatal(err)
		}
		for i := range fast {
			if !bytes.Equal(fast[i].Data, slow[i].Data) {
				t.Errorf("%s %s: marshalYAML differs from sigs.k8s.io/yaml:\n%s\nwant:\n%s", ex.Dir, fast[i].Name, fast[i].Data, slow[i].Data)
			}
			files++
		}
	}
	if files < 10 {
		t.Fatalf("only %d files compared", files)
	}
}
