package render

import (
	"fmt"
	"io"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// ProbeView is the table form of a report of `gpuctl parse` or
// `gpuctl probe`: a summary row (the kind with the shape read, the verdict,
// one line about the output), detail tables, and the findings.
type ProbeView struct {
	Label    string
	Verdict  diag.ReportVerdict
	Summary  string
	Details  []Table
	Findings []diag.Finding
	// Curve is an NCCL report's busbw by size, drawn as a sparkline under
	// the tables on a terminal (nil for other kinds).
	Curve *BusbwCurve
}

// ProbeReport writes a probe report in format: doc, the report itself whose
// keys are the contract, for json and yaml; view for the table.
func ProbeReport(w io.Writer, format string, tty bool, doc any, view ProbeView) error {
	switch format {
	case FormatJSON:
		return JSON(w, doc)
	case FormatYAML:
		return YAML(w, doc)
	case FormatTable:
		if err := Tables(w, tty, probeTables(view)...); err != nil {
			return err
		}
		if line := Sparkline(view.Curve); tty && line != "" {
			_, err := fmt.Fprintf(w, "\n%s\n", line)
			return err
		}
		return nil
	}
	return fmt.Errorf("unknown output format %q", format)
}

func probeTables(v ProbeView) []Table {
	summary := Table{Title: "report", Headers: []string{"KIND", "VERDICT", "SUMMARY"}, Rows: [][]string{{v.Label, string(v.Verdict), v.Summary}}}
	findings := Table{Title: "findings", Headers: []string{"SEVERITY", "RULE", "GPU", "MESSAGE"}}
	for _, f := range v.Findings {
		findings.Rows = append(findings.Rows, []string{string(f.Severity), f.Rule, f.GPU, f.Message})
	}
	if len(findings.Rows) == 0 {
		findings.Rows = [][]string{{"-", "-", "-", "no findings"}}
	}
	out := []Table{summary}
	for _, t := range v.Details {
		if len(t.Rows) > 0 {
			out = append(out, t)
		}
	}
	return append(out, findings)
}
