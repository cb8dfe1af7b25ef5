package importer

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// ruleSpecRequired is the rule ID of a missing required field
// (rules.RuleSpecRequired; the package's tests hold the two equal).
const ruleSpecRequired = "SPEC-REQUIRED"

// Document is the imported spec as a spec document named name, decoded
// from YAML() as a spec file is, so that it is judged exactly as a written
// spec; pass Locate as the check's Origins to point findings at the
// imported files. Errors: the imported values do not make a valid spec
// document (a *spec.Error).
func (r *Result) Document(name string) (*spec.Document, error) {
	return spec.ParseInMemory(name, r.YAML())
}

// Annotate says in each finding that depends on an unknown value which
// value that is and why it is unknown: the finding was judged without it.
// The reasons are written on one line (diag.OneLine).
func (r *Result) Annotate(fs []diag.Finding) []diag.Finding {
	out := make([]diag.Finding, len(fs))
	for i, f := range fs {
		if f.Rule == ruleSpecUnknown {
			out[i] = f // says itself which value is unknown and why
			continue
		}
		if u, ok := r.unknownAt(f.Path); ok && f.Rule == ruleSpecRequired && isClusterField(f.Path) {
			// the source cannot hold the value or the files read do not
			// set it: it is unknown, not missing
			f.Severity = diag.SeverityInfo
			f.Message = fmt.Sprintf("%s: unknown, not missing: %s", f.Message, diag.OneLine(r.reason(u)))
			if u.Hint != "" {
				f.Fix = strings.ToUpper(u.Hint[:1]) + u.Hint[1:] + "."
			}
			out[i] = f
			continue
		}
		var notes []string
		for _, u := range r.dependsOn(f.Path) {
			notes = append(notes, diag.OneLine(r.reason(u)))
		}
		if len(notes) > 0 {
			f.Message += " [judged without an imported value: " + strings.Join(notes, "; ") + "]"
		}
		out[i] = f
	}
	return out
}

func isClusterField(path string) bool {
	for _, f := range clusterFields {
		if f.path == path {
			return true
		}
	}
	return false
}

// unknownAt is the unknown value of the field at path.
func (r *Result) unknownAt(path string) (Unknown, bool) {
	for _, u := range r.Unknowns {
		if u.Path == path {
			return u, true
		}
	}
	return Unknown{}, false
}

// dependsOn are the unknown values a finding at path depends on: at the
// path, above it, or inside the node pool (or deeper field) it names.
func (r *Result) dependsOn(path string) []Unknown {
	var out []Unknown
	for _, u := range r.Unknowns {
		switch {
		case u.Path == path, isUnder(path, u.Path):
			out = append(out, u)
		case strings.Contains(path, "nodePools[") && isUnder(u.Path, path):
			out = append(out, u)
		}
	}
	return out
}

// isUnder reports whether path is a field inside parent.
func isUnder(path, parent string) bool {
	return parent != "" && (strings.HasPrefix(path, parent+".") || strings.HasPrefix(path, parent+"["))
}
