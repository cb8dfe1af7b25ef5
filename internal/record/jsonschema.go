package record

import (
	"encoding/json"

	"github.com/invopop/jsonschema"
)

// SchemaID is the $id of the record predicate's JSON Schema.
const SchemaID = "https://gpuctl.dev/schemas/acceptance/v1/predicate.json"

// JSONSchema returns the JSON Schema (draft 2020-12) of the acceptance
// record's predicate (the Predicate of an in-toto Statement v1 of
// PredicateType, in a DSSE envelope), reflected from the Go types,
// indented with two spaces; `gpuctl schema record` prints it. Keys a
// record may omit are not required; members the schema does not name are
// allowed, because the record's keys are added to and never renamed, so
// a newer record still validates against an older schema.
func JSONSchema() ([]byte, error) {
	r := &jsonschema.Reflector{FieldNameTag: "json", ExpandedStruct: true, AllowAdditionalProperties: true, DoNotReference: false}
	s := r.Reflect(&Predicate{})
	s.ID = SchemaID
	s.Title = "gpuctl acceptance record predicate (" + PredicateType + ", format " + PredicateFormatVersion + ")"
	s.Description = "The predicate of the in-toto Statement v1 that `gpuctl accept` signs (DSSE, payload type " + PayloadType + ") and `gpuctl verify` checks."
	return json.MarshalIndent(s, "", "  ")
}
