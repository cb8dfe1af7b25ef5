package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/gpuctl/gpuctl/internal/diag"
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
	Environments []string       `json:"environments"`
	Findings     []diag.Finding `json:"findings"`
	Summary      diag.Summary   `json:"summary"`
	// NotJudged are the facts that were unknown (an imported value that
	// depends on a data source, a variable without a value, a module gpuctl
	// does not read) with the checks they kept from being judged; [] when
	// none.
	NotJudged []NotJudged `json:"notJudged"`
	// Imports are, for each PATH that was imported rather than read as a
	// spec, what the import left unknown and skipped; [] when none.
	Imports []Import `json:"imports"`
	// Results are each PATH's findings counted (each file's of a folder
	// of YAML, its Karpenter files under the folder's name); [] when none
	// was judged.
	Results []FileResult `json:"results"`
	// Skipped are the files of a folder of YAML not validated, with the
	// reason; [] when none.
	Skipped []SkippedFile `json:"skipped"`
	// Checked are the node pools judged, for the table output's "checked"
	// block (what the matrix was asked about); not part of the JSON.
	Checked []CheckedPool `json:"-"`
}

// CheckedPool is one node pool of one environment as validate judged it:
// each field as the resolved spec gives it or the matrix derives it ("" when
// neither says).
type CheckedPool struct {
	File, Environment, Pool string
	// Machine is the machine or instance type(s); GPUs reads "8 x NVIDIA
	// H100 80GB HBM3".
	Machine, GPUs string
	// Driver is gpu.driver, or what the platform installs when unset.
	Driver, OSImage string
	// Platform reads "GKE 1.33"; CUDA is the workload images' version.
	Platform, CUDA string
}

// NotJudged is one unknown fact of one file and the checks not judged
// without it.
type NotJudged struct {
	File string `json:"file"`
	// Path is the fact's spec field; What names it ("the Kubernetes
	// version"), Reason says why it is unknown and Hint how to give it.
	Path   string `json:"path"`
	What   string `json:"what"`
	Reason string `json:"reason"`
	Hint   string `json:"hint"`
	// Checks are the checks not judged, e.g. "EKS-AMI-K8S (pool gpu)".
	Checks []string `json:"checks"`
	// Deciding: the fact decides whether the pools come up (reported as a
	// warning).
	Deciding bool `json:"deciding"`
}

// Import is what the import of one PATH could not know or did not read.
type Import struct {
	File string `json:"file"`
	// From is what was read: terraform, blueprint or karpenter.
	From    string          `json:"from"`
	Unknown []ImportUnknown `json:"unknown"`
	Skipped []ImportSkipped `json:"skipped"`
	// Error is why the import gave no spec to validate (no GPU node pool
	// found); "" when it gave one.
	Error string `json:"error,omitempty"`
}

// FileResult is one PATH (or file of a folder) as validated.
type FileResult struct {
	File string `json:"file"`
	// From is what it was read as: spec, terraform, blueprint or
	// karpenter.
	From    string       `json:"from"`
	Summary diag.Summary `json:"summary"`
}

// NewFileResult is file's result with its findings fs counted.
func NewFileResult(file, from string, fs []diag.Finding) FileResult {
	return FileResult{File: file, From: from, Summary: diag.Summarize(fs)}
}

// SkippedFile is a file of a folder validate did not read, and why.
type SkippedFile struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// Position is where an imported value was read.
type Position struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// ImportUnknown is a value the import left out because it is unknown before
// apply.
type ImportUnknown struct {
	Path    string   `json:"path"`
	What    string   `json:"what"`
	Because []string `json:"because"`
	Reason  string   `json:"reason"`
	Hint    string   `json:"hint,omitempty"`
	Origin  Position `json:"origin"`
}

// ImportSkipped is something the import read and did not turn into spec
// fields.
type ImportSkipped struct {
	What   string   `json:"what"`
	Reason string   `json:"reason"`
	Origin Position `json:"origin"`
}

// NewValidationReport builds a report of the given apiVersion with findings sorted by file, line,
// column, environment and rule, and the summary counted.
func NewValidationReport(apiVersion string, files []string, asOf string, envs []string, fs []diag.Finding) *ValidationReport {
	out := append([]diag.Finding{}, fs...)
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
		APIVersion: apiVersion, Kind: "ValidationReport",
		Files: append([]string{}, files...), AsOf: asOf,
		Environments: append([]string{}, envs...), Findings: out,
		NotJudged: []NotJudged{}, Imports: []Import{}, Results: []FileResult{}, Skipped: []SkippedFile{},
	}
	r.Summary = diag.Summarize(out)
	return r
}

// ValidationText writes the human form: one block per finding, compiler
// style (file:line:column: severity RULE: message, then fix and sources),
// and a summary line. hideInfo leaves info findings out of the list (they
// are still counted).
func ValidationText(w io.Writer, r *ValidationReport, st Styles, hideInfo bool) error {
	var b strings.Builder
	for _, f := range r.Findings {
		if hideInfo && f.Severity == diag.SeverityInfo {
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
	writeChecked(&b, r, st)
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
	writeFiles(&b, r, st)
	notJudged := writeNotJudged(&b, r, st)
	fmt.Fprintf(&b, "%s: %d error(s), %d warning(s), %d info%s (as of %s; environments: %s)\n",
		verdict, r.Summary.Errors, r.Summary.Warnings, r.Summary.Infos, notJudged, r.AsOf, strings.Join(envs, ", "))
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNotJudged writes one line per unknown fact that kept checks from
// being judged, above the summary line, and returns the summary line's
// count of them (", N check(s) not judged"; "" for none).
func writeNotJudged(b *strings.Builder, r *ValidationReport, st Styles) string {
	n := 0
	for _, nj := range r.NotJudged {
		n += len(nj.Checks)
		line := fmt.Sprintf("%d check(s) not judged: %s is unknown (%s); %s", len(nj.Checks), nj.What, nj.Reason, nj.Hint)
		if len(r.Files) > 1 {
			line = nj.File + ": " + line
		}
		if nj.Deciding {
			line = st.Warning.Render(line)
		}
		fmt.Fprintln(b, line)
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d check(s) not judged", n)
}

// writeFiles writes, when more than one file was judged or some skipped,
// one line per file with its counts and one per skipped file.
func writeFiles(b *strings.Builder, r *ValidationReport, st Styles) {
	if len(r.Results) < 2 && len(r.Skipped) == 0 {
		return
	}
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	for _, f := range r.Results {
		s := f.Summary
		fmt.Fprintf(tw, "%s\t%s\t%d error(s), %d warning(s), %d info\n", oneCell(f.File), f.From, s.Errors, s.Warnings, s.Infos)
	}
	for _, f := range r.Skipped {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", oneCell(f.File), st.Dim.Render("skipped"), f.Reason)
	}
	_ = tw.Flush()
}

// oneCell is s as one table cell.
func oneCell(s string) string { return clean([]string{s})[0] }

// maxCheckedLines is the most pools the "checked" block lists one per line.
const maxCheckedLines = 24

// writeChecked writes the "checked" block: one aligned line per node pool
// and environment, so that a clean result still says what was judged.
func writeChecked(b *strings.Builder, r *ValidationReport, st Styles) {
	if len(r.Checked) == 0 {
		return
	}
	files := map[string]bool{}
	for _, c := range r.Checked {
		files[c.File] = true
	}
	fmt.Fprintf(b, "%s\n", st.Dim.Render(fmt.Sprintf("checked %d node pool(s): machine type, GPU, driver, CUDA, OS image, Kubernetes, device plugin and NCCL against the matrix", len(r.Checked))))
	if len(r.Checked) > maxCheckedLines {
		return // a large spec: the count alone
	}
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	for _, c := range r.Checked {
		env := c.Environment
		if env == "" {
			env = "base"
		}
		cells := []string{"  " + env, c.Pool, c.Machine, c.GPUs, "driver " + orDash(c.Driver), orDash(c.OSImage), orDash(c.Platform), "CUDA " + orDash(c.CUDA)}
		if len(files) > 1 {
			cells = append([]string{"  " + c.File}, cells...)
			cells[1] = strings.TrimSpace(cells[1])
		}
		fmt.Fprintln(tw, strings.Join(clean(cells), "\t"))
	}
	_ = tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
