package plan

import _ "embed"

// Schema is the JSON Schema of a plan document, written by hand (not
// reflected from the types) so that a test holding the output to it
// catches a renamed or dropped key. `gpuctl schema plan` prints it. The
// tests validate plans against testdata/plan.schema.json, a copy a test
// keeps byte for byte equal to this file, so that the binary's data does
// not live in a test folder.
//
//go:embed data/plan.schema.json
var Schema []byte
