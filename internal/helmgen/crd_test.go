package helmgen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xeipuuv/gojsonschema"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/golden"
)

// crdSchemas reads the CustomResourceDefinitions stored in
// testdata/reference/crds (their source: testdata/README.md) and returns
// the OpenAPI v3 schema of each served version, by "apiVersion kind",
// made strict as the API server's pruning is: an object schema that lists
// its properties and neither allows additional ones nor preserves unknown
// fields rejects any other field (the server would drop it silently, so a
// field gpuctl writes there would never take effect).
func crdSchemas(t *testing.T) map[string]*gojsonschema.Schema {
	t.Helper()
	files, err := filepath.Glob("../../testdata/reference/crds/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under testdata/reference/crds: %v", err)
	}
	out := map[string]*gojsonschema.Schema{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Spec struct {
				Group string
				Names struct{ Kind string }
				// Versions[].Schema.OpenAPIV3Schema is the schema.
				Versions []struct {
					Name   string
					Served bool
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					}
				}
			}
		}
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			strict(v.Schema.OpenAPIV3Schema)
			s, err := gojsonschema.NewSchema(gojsonschema.NewGoLoader(v.Schema.OpenAPIV3Schema))
			if err != nil {
				t.Fatalf("%s %s: %v", f, v.Name, err)
			}
			out[crd.Spec.Group+"/"+v.Name+" "+crd.Spec.Names.Kind] = s
		}
	}
	return out
}

// strict sets additionalProperties: false on every object schema with
// properties that says nothing about other fields.
func strict(s map[string]any) {
	if props, ok := s["properties"].(map[string]any); ok {
		_, ap := s["additionalProperties"]
		_, keep := s["x-kubernetes-preserve-unknown-fields"]
		if !ap && !keep {
			s["additionalProperties"] = false
		}
		for _, p := range props {
			if m, ok := p.(map[string]any); ok {
				strict(m)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		strict(items)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		strict(ap)
	}
}

// validateCR checks one object against its CRD's schema; "" when valid.
func validateCR(t *testing.T, schemas map[string]*gojsonschema.Schema, doc []byte) (kind, problems string) {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		t.Fatal(err)
	}
	key, _ := obj["apiVersion"].(string)
	kind, _ = obj["kind"].(string)
	s := schemas[key+" "+kind]
	if s == nil {
		return kind, "no stored CRD for " + key + " " + kind
	}
	b, _ := json.Marshal(obj)
	r, err := s.Validate(gojsonschema.NewBytesLoader(b))
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, e := range r.Errors() {
		errs = append(errs, e.String())
	}
	return kind, strings.Join(errs, "; ")
}

// TestGKENetworkObjectsMatchCRDs: every GKE multi-networking object the
// examples generate (networking.gke.io/v1 Network and GKENetworkParamSet)
// passes the published CRD schema, strict about unknown fields; the
// Networks are Device networks whose names fit Google's 41 characters and
// refer to a generated GKENetworkParamSet; and the schema check does fail
// on an unknown field and on a value outside an enum.
func TestGKENetworkObjectsMatchCRDs(t *testing.T) {
	schemas := crdSchemas(t)
	dns := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	kinds := map[string]int{}
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		ms, err := Manifests(ex.Spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ms {
			params := map[string]bool{}
			var refs []string
			for _, doc := range splitDocs(f.Data) {
				if !strings.Contains(string(doc), "apiVersion: networking.gke.io/") {
					continue
				}
				kind, problems := validateCR(t, schemas, doc)
				if problems != "" {
					t.Errorf("%s %s: %s: %s", ex.Dir, f.Name, kind, problems)
				}
				kinds[kind]++
				var o struct {
					Metadata struct{ Name string }
					Spec     struct {
						Type          string
						ParametersRef struct{ Kind, Name string }
					}
				}
				if err := yaml.Unmarshal(doc, &o); err != nil {
					t.Fatal(err)
				}
				if !dns.MatchString(o.Metadata.Name) || len(o.Metadata.Name) > 41 {
					t.Errorf("%s: %s name %q: not a DNS label of at most 41 characters", ex.Dir, kind, o.Metadata.Name)
				}
				switch kind {
				case "GKENetworkParamSet":
					params[o.Metadata.Name] = true
				case "Network":
					if o.Spec.Type != "Device" || o.Spec.ParametersRef.Kind != "GKENetworkParamSet" {
						t.Errorf("%s: Network %s: type %q, parameters %q", ex.Dir, o.Metadata.Name, o.Spec.Type, o.Spec.ParametersRef.Kind)
					}
					refs = append(refs, o.Spec.ParametersRef.Name)
				}
			}
			for _, r := range refs {
				if !params[r] {
					t.Errorf("%s %s: a Network refers to GKENetworkParamSet %s, which is not generated", ex.Dir, f.Name, r)
				}
			}
		}
	}
	for _, k := range []string{"Network", "GKENetworkParamSet"} {
		if kinds[k] == 0 {
			t.Errorf("no %s generated: the examples do not exercise it", k)
		}
	}
	// The check can fail.
	for doc, want := range map[string]string{
		"apiVersion: networking.gke.io/v1\nkind: GKENetworkParamSet\nmetadata: {name: x}\nspec: {vpc: a, vpcSubnet: b, deviceMode: NetDevice, mtu: 8244}\n": "mtu",
		"apiVersion: networking.gke.io/v1\nkind: GKENetworkParamSet\nmetadata: {name: x}\nspec: {vpc: a, vpcSubnet: b, deviceMode: Netdevice}\n":            "deviceMode",
		"apiVersion: networking.gke.io/v1\nkind: Network\nmetadata: {name: x}\nspec: {parametersRef: {group: networking.gke.io, name: x}}\n":                "type",
	} {
		if _, problems := validateCR(t, schemas, []byte(doc)); !strings.Contains(problems, want) {
			t.Errorf("schema check of %q: %q, want a problem with %s", doc, problems, want)
		}
	}
}
