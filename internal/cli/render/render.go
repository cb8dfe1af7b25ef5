// Package render writes gpuctl's results as tables (lipgloss on a terminal,
// plain text otherwise), JSON, YAML and SARIF. JSON and YAML are contracts:
// stable keys (the Go types' json tags), [] rather than null, map keys
// sorted. Tables are for people: aligned on a terminal, plain tab-separated
// text otherwise so that they pipe into cut and awk.
//
// render is the only package that styles output and it never decides
// anything: it knows the pure models of internal/diag, internal/record and
// internal/report, and its own plain view structs (ValidationReport,
// ProbeView, AcceptNode, Verification), which internal/cli fills from the
// domain packages' results. One file per format: table.go, json.go, yaml.go,
// sarif.go; the files named after a command hold its view and its human
// form; the report page is report.go with report.html.tmpl.
package render

// Formats accepted by -o.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatYAML  = "yaml"
)

// Formats lists the -o values in the order --help shows them.
var Formats = []string{FormatTable, FormatJSON, FormatYAML}
