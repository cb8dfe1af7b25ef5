package plan

import _ "embed"

// Schema is the JSON Schema of a plan document, written by hand (not
// reflected from the types) so that a test holding the output to it
// catches a renamed or dropped key. `gpuctl schema plan` prints it.
//
//go:embed data/plan.schema.json
var Schema []byte
