package spec

import (
	"encoding/json"

	"github.com/invopop/jsonschema"
)

// SchemaID is the $id of the published JSON Schema.
const SchemaID = "https://gpuctl.dev/schemas/v1alpha1/clusterspec.json"

// JSONSchema returns the JSON Schema (draft 2020-12) of a ClusterSpec
// document, reflected from the Go types with their doc comments, indented
// with two spaces. Editors use it for completion and checks; unknown fields
// are rejected (additionalProperties: false), as gpuctl itself does.
func JSONSchema() ([]byte, error) {
	r := &jsonschema.Reflector{
		FieldNameTag:               "json",
		RequiredFromJSONSchemaTags: true,
		ExpandedStruct:             true,
	}
	s := r.Reflect(&ClusterSpec{})
	s.ID = SchemaID
	s.Title = "gpuctl ClusterSpec " + APIVersion
	s.Description = "A GPU cluster spec validated by `gpuctl validate`."
	if p, ok := s.Properties.Get("apiVersion"); ok {
		p.Const = APIVersion
	}
	if p, ok := s.Properties.Get("kind"); ok {
		p.Const = Kind
	}
	s.Required = []string{"apiVersion", "kind", "metadata", "spec"}
	return json.MarshalIndent(s, "", "  ")
}
