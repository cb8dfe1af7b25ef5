package matrix

import (
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestDecodeKeepsProvenance: every embedded data file decodes strictly into
// its type, and the typed values keep every source and as_of the file
// writes (the same values as a generic decode of the file): no entry loses
// its provenance to a field the types do not carry.
func TestDecodeKeepsProvenance(t *testing.T) {
	c := &catalog{}
	files, _ := fs.Glob(dataFS, "data/*.yaml")
	if len(files) != len(c.files()) {
		t.Fatalf("data/ holds %d files, the catalogue decodes %d", len(files), len(c.files()))
	}
	for _, f := range c.files() {
		if err := decode(f.name, f.v); err != nil {
			t.Fatal(err)
		}
		b, err := dataFS.ReadFile("data/" + f.name)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		for _, key := range []string{"source", "as_of"} {
			var want, got []string
			genericValues(doc, key, &want)
			typedValues(reflect.ValueOf(f.v).Elem(), key, &got)
			slices.Sort(want)
			slices.Sort(got)
			if len(want) == 0 {
				t.Errorf("%s: no %s at all", f.name, key)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: the decoded values keep %d %s values, the file has %d", f.name, len(got), key, len(want))
			}
		}
	}
}

// genericValues appends the string values of key in every mapping of n.
func genericValues(n any, key string, out *[]string) {
	switch v := n.(type) {
	case map[string]any:
		if s, ok := v[key].(string); ok && s != "" {
			*out = append(*out, s)
		}
		for _, c := range v {
			genericValues(c, key, out)
		}
	case []any:
		for _, c := range v {
			genericValues(c, key, out)
		}
	}
}

// typedValues appends the non-empty string fields tagged yaml:"<key>" in v,
// through structs (inline ones included), pointers, slices and maps.
func typedValues(v reflect.Value, key string, out *[]string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			typedValues(v.Elem(), key, out)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			typedValues(v.Index(i), key, out)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			typedValues(v.MapIndex(k), key, out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == key && f.Type.Kind() == reflect.String {
				if s := v.Field(i).String(); s != "" {
					*out = append(*out, s)
				}
				continue
			}
			typedValues(v.Field(i), key, out)
		}
	}
}

// TestDecodeStrict: a data file with a field its type does not have, a key
// given twice or a value of the wrong type is refused, and the error names
// the file, line and column.
func TestDecodeStrict(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown field", "branches:\n  - branch: 580\n    typo: LTSB\n", "data/drivers.yaml:3:5: "},
		{"duplicate key", "branches:\n  - branch: 580\n    branch: 570\n", "data/drivers.yaml:3:5: "},
		{"wrong type", "branches:\n  - branch: R580\n", "data/drivers.yaml:2:13: "},
		{"syntax", "branches: [\n", "data/drivers.yaml:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f driversFile
			err := decodeData("data/drivers.yaml", []byte(tc.yaml), &f)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q does not start with %q", err, tc.want)
			}
		})
	}
	if err := decode("gpus.yaml", &struct{ Other int }{}); err == nil {
		t.Error("decode accepts unknown fields")
	}
}

// TestIndexErrors: an entry the index refuses is named with its file and
// the entry.
func TestIndexErrors(t *testing.T) {
	base := &catalog{}
	for _, f := range base.files() {
		if err := decode(f.name, f.v); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		spoil func(c *catalog) // on a copy of base: clones what it changes
		want  string
	}{
		{"toolkit version", func(c *catalog) {
			c.cuda.Toolkits = slices.Clone(c.cuda.Toolkits)
			c.cuda.Toolkits[0].Version = "x"
		}, "data/cuda.yaml: toolkit " + base.cuda.Toolkits[0].Release + ": "},
		{"gpu architecture", func(c *catalog) {
			c.gpus.Products = slices.Clone(c.gpus.Products)
			c.gpus.Products[0].Arch = "Nowhere"
		}, fmt.Sprintf("data/gpus.yaml: gpu %s: unknown architecture \"Nowhere\"", base.gpus.Products[0].ID)},
		{"branch type", func(c *catalog) {
			c.drivers.Branches = slices.Clone(c.drivers.Branches)
			c.drivers.Branches[0].Type = "XB"
		}, fmt.Sprintf("data/drivers.yaml: driver branch R%d: unknown type \"XB\"", base.drivers.Branches[0].Branch)},
		{"accelerator gpu", func(c *catalog) {
			c.gcp.AcceleratorTypes = slices.Clone(c.gcp.AcceleratorTypes)
			c.gcp.AcceleratorTypes[0].GPU = "nope"
		}, fmt.Sprintf("data/gcp.yaml: accelerator %s: unknown gpu \"nope\"", base.gcp.AcceleratorTypes[0].Name)},
		{"instance gpu", func(c *catalog) {
			c.aws.InstanceTypes = slices.Clone(c.aws.InstanceTypes)
			c.aws.InstanceTypes[0].GPU = "nope"
		}, fmt.Sprintf("data/aws.yaml: instance %s: unknown gpu \"nope\"", base.aws.InstanceTypes[0].Name)},
		{"operator components", func(c *catalog) {
			rels := slices.Clone(c.operator.GPUOperator.Releases)
			comp := *rels[0].Components
			comp.CDI = nil
			rels[0].Components = &comp
			c.operator.GPUOperator.Releases = rels
		}, "data/operator.yaml: gpu operator " + base.operator.GPUOperator.Releases[0].Version + ": components must give"},
		{"nccl baseline gpu", func(c *catalog) {
			c.nccl.Baselines.SKUs = slices.Clone(c.nccl.Baselines.SKUs)
			c.nccl.Baselines.SKUs[0].GPU = "nope"
		}, fmt.Sprintf("data/nccl.yaml: nccl baseline %s: unknown gpu \"nope\"", base.nccl.Baselines.SKUs[0].SKU)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *base
			tc.spoil(&c)
			if err := c.index(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("index error %v, want one starting %q", err, tc.want)
			}
		})
	}
	if err := base.index(); err != nil {
		t.Errorf("the unspoiled data: %v", err)
	}
}
