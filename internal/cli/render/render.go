// Package render writes command results as table, JSON or YAML. JSON and
// YAML are contracts: stable keys (the Go types' json tags), [] rather than
// null, map keys sorted. Tables are for people: aligned on a terminal, plain
// tab-separated text otherwise so that they pipe into cut and awk.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// Formats accepted by -o.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatYAML  = "yaml"
)

// Formats lists the -o values in the order --help shows them.
var Formats = []string{FormatTable, FormatJSON, FormatYAML}

// JSON writes v as indented JSON followed by a newline.
func JSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// YAML writes v as YAML with the same keys as its JSON.
func YAML(w io.Writer, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

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
