package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/charmbracelet/lipgloss"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// Table is a titled grid of cells.
type Table struct {
	Title   string
	Headers []string
	Rows    [][]string
}

// Tables writes tables one after another, separated by a blank line. On a
// terminal (tty) columns are aligned and titles printed; otherwise each row
// is its cells joined by tabs, headers included, titles left out.
func Tables(w io.Writer, tty bool, tables ...Table) error {
	first := true
	for _, t := range tables {
		if len(t.Rows) == 0 && len(t.Headers) == 0 {
			continue
		}
		if !first {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		first = false
		if err := table(w, tty, t); err != nil {
			return err
		}
	}
	return nil
}

func table(w io.Writer, tty bool, t Table) error {
	if !tty {
		if len(t.Headers) > 0 {
			if _, err := fmt.Fprintln(w, strings.Join(t.Headers, "\t")); err != nil {
				return err
			}
		}
		for _, r := range t.Rows {
			if _, err := fmt.Fprintln(w, strings.Join(clean(r), "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	if t.Title != "" {
		if _, err := fmt.Fprintln(w, strings.ToUpper(t.Title)); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(t.Headers) > 0 {
		fmt.Fprintln(tw, strings.Join(t.Headers, "\t"))
	}
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(clean(r), "\t"))
	}
	return tw.Flush()
}

// clean keeps cells on one line and free of tabs.
func clean(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		c = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(c)
		if c == "" {
			c = "-"
		}
		out[i] = c
	}
	return out
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

func (s Styles) severity(sev diag.Severity) string {
	word := string(sev)
	switch sev {
	case diag.SeverityError:
		return s.Error.Render(word)
	case diag.SeverityWarning:
		return s.Warning.Render(word)
	}
	return s.Info.Render(word)
}
