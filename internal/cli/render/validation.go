// Package render writes gpuctl's results as tables (lipgloss on a terminal,
// plain text otherwise), JSON, YAML and SARIF. It is the only package that
// styles output; it never decides anything.
package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// ValidationReport is the result of `gpuctl validate`. Its JSON form is a
// contract: {"apiVersion","kind":"ValidationReport","findings":[...],
// "summary":{"errors","warnings",...}}.
type ValidationReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Files are the spec files validated.
	Files []string `json:"files"`
	// AsOf is the date lifecycle rules were evaluated at (YYYY-MM-DD).
	AsOf string `json:"asOf"`
	// Environments are the environments validated ("" is the base spec).
	Environments []string         `json:"environments"`
	Findings     []matrix.Finding `json:"findings"`
	Summary      Summary          `json:"summary"`
}

// Summary counts findings by severity.
type Summary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
}

// NewValidationReport builds a report with findings sorted by file, line,
// column, environment and rule, and the summary counted.
func NewValidationReport(files []string, asOf string, envs []string, fs []matrix.Finding) *ValidationReport {
	out := append([]matrix.Finding{}, fs...)
	for i := range out {
		if out[i].Sources == nil {
			out[i].Sources = []string{}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		if a.Environment != b.Environment {
			return a.Environment < b.Environment
		}
		return a.Rule < b.Rule
	})
	r := &ValidationReport{
		APIVersion: spec.APIVersion, Kind: "ValidationReport",
		Files: append([]string{}, files...), AsOf: asOf,
		Environments: append([]string{}, envs...), Findings: out,
	}
	r.Summary = Summarize(out)
	return r
}

// Summarize counts fs by severity (anything not an error or a warning is an
// info).
func Summarize(fs []matrix.Finding) Summary {
	var s Summary
	for _, f := range fs {
		switch f.Severity {
		case matrix.SeverityError:
			s.Errors++
		case matrix.SeverityWarning:
			s.Warnings++
		default:
			s.Infos++
		}
	}
	return s
}

// Styles are the terminal styles; the zero value prints plain text.
type Styles struct {
	Error, Warning, Info, Rule, Dim, Bold lipgloss.Style
}

// NewStyles returns coloured styles bound to w when tty is true, and plain
// ones otherwise (pipes, files, NO_COLOR).
func NewStyles(w io.Writer, tty bool) Styles {
	if !tty {
		return Styles{}
	}
	r := lipgloss.NewRenderer(w)
	return Styles{
		Error:   r.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		Warning: r.NewStyle().Foreground(lipgloss.Color("11")).Bold(true),
		Info:    r.NewStyle().Foreground(lipgloss.Color("12")),
		Rule:    r.NewStyle().Bold(true),
		Dim:     r.NewStyle().Faint(true),
		Bold:    r.NewStyle().Bold(true),
	}
}

func (s Styles) severity(sev matrix.Severity) string {
	word := string(sev)
	switch sev {
	case matrix.SeverityError:
		return s.Error.Render(word)
	case matrix.SeverityWarning:
		return s.Warning.Render(word)
	}
	return s.Info.Render(word)
}

// ValidationText writes the human form: one block per finding, compiler
// style (file:line:column: severity RULE: message, then fix and sources),
// and a summary line. hideInfo leaves info findings out of the list (they
// are still counted).
func ValidationText(w io.Writer, r *ValidationReport, st Styles, hideInfo bool) error {
	var b strings.Builder
	for _, f := range r.Findings {
		if hideInfo && f.Severity == matrix.SeverityInfo {
			continue
		}
		loc := f.File
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column)
		}
		env := ""
		if f.Environment != "" {
			env = " [env " + f.Environment + "]"
		}
		fmt.Fprintf(&b, "%s: %s %s%s: %s\n", loc, st.severity(f.Severity), st.Rule.Render(f.Rule), env, f.Message)
		if f.Path != "" {
			fmt.Fprintf(&b, "    %s %s\n", st.Dim.Render("field:"), f.Path)
		}
		if f.Waiver != "" {
			fmt.Fprintf(&b, "    %s %s\n", st.Dim.Render("waived:"), f.Waiver)
		}
		if f.Fix != "" {
			fmt.Fprintf(&b, "    %s %s\n", st.Dim.Render("fix:"), f.Fix)
		}
		for _, s := range f.Sources {
			fmt.Fprintf(&b, "    %s %s\n", st.Dim.Render("source:"), s)
		}
	}
	envs := make([]string, 0, len(r.Environments))
	for _, e := range r.Environments {
		if e == "" {
			e = "base"
		}
		envs = append(envs, e)
	}
	verdict := "ok"
	if r.Summary.Errors > 0 {
		verdict = st.Error.Render("FAILED")
	}
	fmt.Fprintf(&b, "%s: %d error(s), %d warning(s), %d info (as of %s; environments: %s)\n",
		verdict, r.Summary.Errors, r.Summary.Warnings, r.Summary.Infos, r.AsOf, strings.Join(envs, ", "))
	_, err := io.WriteString(w, b.String())
	return err
}

// RuleInfo describes a rule for SARIF's rule table.
type RuleInfo struct {
	ID, Title, Summary, Help string
	Sources                  []string
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
		case matrix.SeverityError:
			level = "error"
		case matrix.SeverityWarning:
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
		if f.File != "" {
			uri := f.File
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
	rep.AddRun(run)
	return rep.PrettyWrite(w)
}
