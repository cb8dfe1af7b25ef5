package check

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	goyaml "github.com/goccy/go-yaml"

	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// FuzzGenerate decodes arbitrary bytes as a spec and, when it decodes and
// checks without errors, generates every layer: every .tf file must parse
// with hclsyntax, every YAML file must hold one document per object, each a
// mapping. Seeded with the examples.
func FuzzGenerate(f *testing.F) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	asOf := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := spec.Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		res, err := Document(doc, Options{AsOf: asOf, Generate: true})
		if err != nil {
			return
		}
		for _, env := range res.Envs {
			for _, tf := range env.Terraform {
				if _, diags := hclsyntax.ParseConfig(tf.Data, tf.Name, hclInitPos); diags.HasErrors() {
					t.Fatalf("%s does not parse: %v\n%s", tf.Name, diags, tf.Data)
				}
			}
			if env.Layers == nil {
				continue
			}
			opts := helmgen.Options{SpecFile: "fuzz\n.yaml", Environment: env.Name}
			vs, err := env.Layers.Values(opts)
			if err != nil {
				continue
			}
			ms, err := env.Layers.Manifests(opts)
			if err != nil {
				continue
			}
			for _, y := range append(vs, ms...) {
				checkYAML(t, y.Name, y.Data)
			}
		}
	})
}

var hclInitPos = hcl.InitialPos

// checkYAML fails unless every document of data parses and is a mapping.
func checkYAML(t *testing.T, name string, data []byte) {
	t.Helper()
	dec := goyaml.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s does not parse: %v\n%s", name, err, data)
		}
		if _, ok := v.(map[string]any); !ok && v != nil {
			t.Fatalf("%s holds a document that is not a mapping: %T\n%s", name, v, data)
		}
	}
}
