// Package matrix holds gpuctl's version and compatibility facts (embedded,
// each with its source URL and as_of date) and the rules that turn a
// resolved cluster spec into findings. It is pure: no I/O beyond its
// embedded data.
package matrix

// Severity of a finding.
type Severity string

// Severities, from worst to mildest.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Finding is one problem (or note) about a spec. The JSON keys are a
// contract read by other tools: rule, severity, message, fix, sources, path,
// file, line, column, environment.
type Finding struct {
	// Rule is the stable rule ID, e.g. "CUDA-MINOR-COMPAT".
	Rule     string   `json:"rule" yaml:"rule"`
	Severity Severity `json:"severity" yaml:"severity"`
	Message  string   `json:"message" yaml:"message"`
	// Fix says what to change.
	Fix string `json:"fix" yaml:"fix"`
	// Sources are the URLs of the facts behind the finding.
	Sources []string `json:"sources" yaml:"sources"`
	// Path points at the field to change: "spec.nodePools[0].gpu.driver".
	Path string `json:"path" yaml:"path"`
	// File, Line and Column locate Path in the spec file (1-based; 0 when
	// unknown). Rules leave them empty; the caller fills them in.
	File   string `json:"file" yaml:"file"`
	Line   int    `json:"line" yaml:"line"`
	Column int    `json:"column" yaml:"column"`
	// Environment is the environment whose resolved spec produced the
	// finding; empty for the base spec.
	Environment string `json:"environment" yaml:"environment"`
	// Waiver is the reason of the waiver that turned this finding into info.
	Waiver string `json:"waiver,omitempty" yaml:"waiver,omitempty"`
}
