package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// A view's formats are -o's values (the first the default, in --help's
// order), and writeOutput calls the writer of the one chosen.
func TestViewFormatsMakeTheOutputFlag(t *testing.T) {
	var got []string
	formats := viewFormats[string]{
		tableFormat(func(_ *IOStreams, v string) error { got = append(got, "table "+v); return nil }),
		{"csv", func(_ *IOStreams, v string) error { got = append(got, "csv "+v); return nil }},
	}
	cmd := &cobra.Command{Use: "x"}
	out := addViewFlag(cmd, formats)
	f := cmd.Flags().Lookup("output")
	if f.DefValue != "table" || !strings.HasSuffix(f.Usage, "table|csv") {
		t.Fatalf("-o: default %q, usage %q", f.DefValue, f.Usage)
	}
	streams, _, _, _ := TestStreams()
	for _, v := range []string{"table", "csv"} {
		if err := cmd.Flags().Set("output", v); err != nil {
			t.Fatal(err)
		}
		if err := out.validate(); err != nil {
			t.Fatal(err)
		}
		if err := writeOutput(streams, out, formats, "view"); err != nil {
			t.Fatal(err)
		}
	}
	if want := "table view,csv view"; strings.Join(got, ",") != want {
		t.Errorf("writers called: %q, want %q", got, want)
	}
	_ = cmd.Flags().Set("output", "json")
	if err := out.validate(); err == nil || !strings.Contains(err.Error(), "want one of table, csv") {
		t.Errorf("-o json: %v", err)
	}
	// A view without a writer for a format -o accepted says so.
	_ = cmd.Flags().Set("output", "csv")
	if err := writeOutput(streams, out, formats[:1], "view"); err == nil {
		t.Error("writeOutput without a csv writer: no error")
	}
}
