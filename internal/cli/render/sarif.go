package render

import (
	"io"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// RuleInfo describes a rule for SARIF's rule table.
type RuleInfo struct {
	ID, Title, Summary, Help string
	Sources                  []string
}

// resultFile is the file a SARIF result of f is located in: f's, else
// (a usage error names none) the first of files, as code scanning needs a
// location on every result; "" when there is none.
func resultFile(f diag.Finding, files []string) string {
	if f.File == "" && len(files) > 0 {
		return files[0]
	}
	return f.File
}

// ValidationSARIF writes r as a SARIF 2.1.0 log for code-scanning upload.
// rule looks up a rule's description; unknown rules get a bare entry.
func ValidationSARIF(w io.Writer, r *ValidationReport, version string, rule func(id string) (RuleInfo, bool)) error {
	rep := sarif.NewReport()
	run := sarif.NewRunWithInformationURI("gpuctl", "https://gpuctl.dev")
	run.Tool.Driver.WithVersion(version)
	seen := map[string]bool{}
	for _, f := range r.Findings {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			d := run.AddRule(f.Rule)
			if info, ok := rule(f.Rule); ok {
				d.WithName(info.Title).WithDescription(info.Summary).WithMarkdownHelp(info.Help)
				if len(info.Sources) > 0 {
					d.WithHelpURI(info.Sources[0])
				}
			}
		}
		level := "note"
		switch f.Severity {
		case diag.SeverityError:
			level = "error"
		case diag.SeverityWarning:
			level = "warning"
		}
		msg := f.Message
		if f.Fix != "" {
			msg += " Fix: " + f.Fix
		}
		if f.Environment != "" {
			msg = "[env " + f.Environment + "] " + msg
		}
		res := run.CreateResultForRule(f.Rule).WithLevel(level).WithMessage(sarif.NewTextMessage(msg))
		if file := resultFile(f, r.Files); file != "" {
			uri := file
			if uri == "-" {
				uri = "stdin" // code scanning needs a location on every result
			}
			run.AddDistinctArtifact(uri)
			region := sarif.NewRegion()
			if f.Line > 0 {
				region.WithStartLine(f.Line).WithStartColumn(f.Column)
			}
			pl := sarif.NewPhysicalLocation().
				WithArtifactLocation(sarif.NewSimpleArtifactLocation(uri)).
				WithRegion(region)
			loc := sarif.NewLocationWithPhysicalLocation(pl)
			if f.Path != "" {
				loc.WithLogicalLocations([]*sarif.LogicalLocation{sarif.NewLogicalLocation().WithFullyQualifiedName(f.Path)})
			}
			res.AddLocation(loc)
		}
	}
	if len(r.NotJudged) > 0 {
		// the checks an unknown value kept from being judged (their
		// SPEC-UNKNOWN results say so per fact)
		run.WithProperties(sarif.NewPropertyBag().Add("gpuctl/notJudged", r.NotJudged))
	}
	rep.AddRun(run)
	return rep.PrettyWrite(w)
}
