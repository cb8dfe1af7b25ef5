package matrix

import (
	"io/fs"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// TestDataStale: the data is dated by its newest as_of; judged more than
// StaleAfterDays later, Validate and Check add one info note (never a
// warning, so --strict does not fail on the calendar), and not before.
func TestDataStale(t *testing.T) {
	d := DataDate()
	if d.Before(asOf20261129) || !d.Before(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("DataDate() = %s, want the 2026-12 refresh", d.Format("2006-01-02"))
	}
	stale := func(fs []diag.Finding) []diag.Finding {
		var out []diag.Finding
		for _, f := range fs {
			if f.Rule == RuleDataStale {
				out = append(out, f)
			}
		}
		return out
	}
	for _, c := range []struct {
		at   time.Time
		want bool
	}{
		{asOf20261129, false},
		{d, false},
		{d.AddDate(0, 0, StaleAfterDays), false},
		{d.AddDate(0, 0, StaleAfterDays+1), true},
		{d.AddDate(1, 0, 0), true},
	} {
		got := stale(Validate(eksBase(), Options{AsOf: c.at}))
		if c.want != (len(got) == 1) || len(got) > 1 {
			t.Errorf("Validate as of %s: %d MATRIX-DATA-STALE findings, want stale=%v", c.at.Format("2006-01-02"), len(got), c.want)
			continue
		}
		if c.want {
			f := got[0]
			days, _ := DataAge(c.at)
			if f.Severity != diag.SeverityInfo || !strings.Contains(f.Message, d.Format("2006-01-02")) || !strings.Contains(f.Message, "days before") || days <= StaleAfterDays {
				t.Errorf("stale finding = %s %q (age %d days)", f.Severity, f.Message, days)
			}
		}
		if got := stale(Check(Query{GPU: "H100", Driver: "580.95.05", CUDA: "12.8"}, Options{AsOf: c.at})); c.want != (len(got) == 1) {
			t.Errorf("Check as of %s: %d MATRIX-DATA-STALE findings, want stale=%v", c.at.Format("2006-01-02"), len(got), c.want)
		}
	}
	if r, ok := LookupRule(RuleDataStale); !ok || r.Severity != diag.SeverityInfo {
		t.Errorf("rule %s = %+v", RuleDataStale, r)
	}
}

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
