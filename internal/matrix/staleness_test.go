package matrix

import (
	"io/fs"
	"slices"
	"sort"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestAsOfScan: the scan that dates the data finds exactly the as_of
// values a generic decode of each embedded file finds.
func TestAsOfScan(t *testing.T) {
	files, _ := fs.Glob(dataFS, "data/*.yaml")
	if len(files) == 0 {
		t.Fatal("no data files")
	}
	total := 0
	for _, name := range files {
		b, err := dataFS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		var want []string
		walkAsOf(doc, func(s string) { want = append(want, s) })
		got := asOfValues(b)
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: scan found %d as_of values, decode %d:\n%v\n%v", name, len(got), len(want), got, want)
		}
		total += len(want)
	}
	if total < 100 {
		t.Errorf("%d as_of values in the data", total)
	}
	got := asOfValues([]byte("a: {note: it's here, as_of: 2026-01-02}\n# as_of: \"2030-01-01\"\nb: \"as_of: 2031-01-01\"\n- as_of: '2026-03' # c\n"))
	if !slices.Equal(got, []string{"2026-01-02", "2026-03"}) {
		t.Errorf("asOfValues = %q", got)
	}
}

// walkAsOf calls f with every as_of value of a generically decoded
// document.
func walkAsOf(n any, f func(string)) {
	switch v := n.(type) {
	case map[string]any:
		for k, c := range v {
			if s, ok := c.(string); ok && k == "as_of" {
				f(s)
				continue
			}
			walkAsOf(c, f)
		}
	case []any:
		for _, c := range v {
			walkAsOf(c, f)
		}
	}
}
