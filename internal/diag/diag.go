// Package diag holds the diagnostics every gpuctl package returns: one
// Severity, one Finding, one Summary, and the two verdict sets (the report
// verdict of `gpuctl parse` and the acceptance verdict of records). It plays
// the role terraform's tfdiags plays and imports no other gpuctl package.
package diag

import "encoding/json"

// Severity of a finding. Spec findings follow the severity contract of
// package rules (error: will not come up, GPUs not usable, or
// vendor-unsupported; warning: works but deprecated, past support or risky;
// info: a note); node findings of package probe mean: error, the output
// shows a node problem; warning, it cannot judge the node or shows
// something to look at; info, a note.
type Severity string

// Severities, from worst to mildest.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Finding is one problem (or note) about a spec, a node or a tool's output.
// Its JSON keys are a contract read by other tools: every key is always
// emitted except waiver, which appears only when set; sources is [] rather
// than null. YAML output (sigs.k8s.io/yaml) uses the same keys.
type Finding struct {
	// Rule is the stable rule ID, e.g. "CUDA-MINOR-COMPAT" or
	// "row-remap-pending".
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
	// GPU names the GPU a node finding is about (a bus ID, index or UUID as
	// the tool's output gives it); empty for the node or a spec finding.
	GPU string `json:"gpu" yaml:"gpu"`
	// Waiver is the reason of the waiver that turned this finding into info.
	Waiver string `json:"waiver,omitempty" yaml:"waiver,omitempty"`
}

// MarshalJSON writes f with sources as [] when it has none.
func (f Finding) MarshalJSON() ([]byte, error) {
	type plain Finding
	p := plain(f)
	if p.Sources == nil {
		p.Sources = []string{}
	}
	return json.Marshal(p)
}

// Summary counts findings by severity.
type Summary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
}

// Summarize counts fs by severity (anything not an error or a warning is an
// info).
func Summarize(fs []Finding) Summary {
	var s Summary
	for _, f := range fs {
		switch f.Severity {
		case SeverityError:
			s.Errors++
		case SeverityWarning:
			s.Warnings++
		default:
			s.Infos++
		}
	}
	return s
}

// Count returns how many of fs have severity sev.
func Count(fs []Finding, sev Severity) int {
	n := 0
	for _, f := range fs {
		if f.Severity == sev {
			n++
		}
	}
	return n
}
