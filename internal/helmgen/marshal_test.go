package helmgen

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"sigs.k8s.io/yaml"
	yamlv2 "sigs.k8s.io/yaml/goyaml.v2"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
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

// TestEmitPlain holds emitPlain to go.yaml.in/yaml/v2 on random values of
// the shapes it writes (and some it leaves to yaml/v2), and checks that it
// writes every Kueue object of a generated 200-pool spec itself.
func TestEmitPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keyRunes := "abyzABYZ./-"
	word := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	scalars := []func() any{
		func() any { return word("aqzAQZ", 1) + word("aqzAQZ09._/-", r.IntN(12)) },
		func() any { return word("123456789", 1) + word("0123456789", r.IntN(6)) },
		func() any { return word("0123456789", 1+r.IntN(3)) + word("eEiIkKmMgGpPxXn", r.IntN(4)) },
		func() any {
			return []string{"yes", "No", "on", "OFF", "y", "true", "null", "0", "01", "_a", "a b", "1a", "a:b", "ünï", ""}[r.IntN(15)]
		},
		func() any { return r.IntN(2) == 0 },
		func() any { return r.IntN(1000) - 500 },
		func() any { return int64(r.Uint64() >> 1) },
		func() any { return r.Uint64() },
		func() any { return nil },
		func() any { return 0.5 },
	}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := r.IntN(10); {
		case k < 3 && depth < 4:
			m := map[string]any{}
			for range r.IntN(5) {
				key := word("abyzABYZ", 1) + word(keyRunes, r.IntN(8))
				if r.IntN(30) == 0 {
					key = word("0a_", 3)
				}
				m[key] = value(depth + 1)
			}
			return m
		case k < 5 && depth < 4:
			l := []any{}
			for range r.IntN(4) {
				l = append(l, value(depth+1))
			}
			return l
		}
		return scalars[r.IntN(len(scalars))]()
	}
	emitted := 0
	for range 3000 {
		v := map[string]any{}
		for range 1 + r.IntN(4) {
			v[word("abAB", 1)+word(keyRunes, r.IntN(6))] = value(0)
		}
		got, ok := emitPlain(v)
		if !ok {
			continue
		}
		emitted++
		want, err := yamlv2.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("emitPlain(%#v):\n%s\nyaml/v2:\n%s", v, got, want)
		}
	}
	if emitted < 300 {
		t.Errorf("emitPlain wrote %d of 3000 values", emitted)
	}

	doc, err := spec.Parse("p.yaml", golden.GKEPools(200))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := doc.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Build(cs)
	if err != nil {
		t.Fatal(err)
	}
	objects, left := 0, 0
	defer func() { marshalObject = marshalYAML }()
	marshalObject = func(o any) ([]byte, error) {
		j, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(j, &v); err != nil {
			return nil, err
		}
		objects++
		if _, ok := emitPlain(yamlNumbers(v)); !ok {
			left++
		}
		return marshalYAML(o)
	}
	if _, err := l.Manifests(Options{SpecFile: "p.yaml"}); err != nil {
		t.Fatal(err)
	}
	if objects < 200 || left > 0 {
		t.Errorf("%d of %d objects left to yaml/v2", left, objects)
	}
}
