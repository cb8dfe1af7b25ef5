package matrix

import (
	"io/fs"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

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

// TestTableDates: each table is dated by its own newest as_of, so an old
// table beside newer ones keeps its date; sub-blocks of a top-level key
// are tables of their own.
func TestTableDates(t *testing.T) {
	got := map[string]string{}
	for _, td := range TableDates() {
		got[td.Table] = td.Date.Format("2006-01-02")
	}
	for table, want := range map[string]string{
		"gcp gke.driver_install":   "2026-08-20", // rows 1.34-1.36 (COS release notes)
		"gcp gke.release_schedule": "2026-08-21",
		"cuda minor_compat":        "2026-09-01",
		"aws instance_types":       "2026-12-02", // the legacy p2/g3 rows
	} {
		if got[table] != want {
			t.Errorf("table %s dated %q, want %s", table, got[table], want)
		}
	}
	b := []byte("a:\n  source: x\n  as_of: \"2026-01-02\"\n  rows:\n    - {as_of: \"2026-03-04\"}\n  n: 1\n  as_of_too: 2\nb:\n  - {as_of: '2026-05'}\n")
	tds := fileTableDates("f", b)
	want := []TableDate{{"f a", mustDay("2026-01-02")}, {"f a.rows", mustDay("2026-03-04")}, {"f b", mustDay("2026-05-01")}}
	if !slices.Equal(tds, want) {
		t.Errorf("fileTableDates = %v, want %v", tds, want)
	}
	at := mustDay("2027-01-01")
	tables, days := StaleTables(at)
	note := TableStaleNote(at)
	if len(tables) == 0 || len(tables) != len(days) || !strings.Contains(note, "gcp gke.driver_install (as of 2026-08-20, 134/120 days)") || strings.Contains(note, "cuda minor_compat") {
		t.Errorf("StaleTables(%s) = %v %v, note %q", at.Format("2006-01-02"), tables, days, note)
	}
	if n := TableStaleNote(mustDay("2026-08-20")); strings.Contains(n, "gcp gke.driver_install") || !strings.Contains(n, "amis bottlerocket_releases (as of 2026-04-14, 128/60 days)") {
		t.Errorf("TableStaleNote on the GKE driver table's date = %q", n)
	}
}

func mustDay(s string) time.Time {
	t, ok := parseAsOf(s)
	if !ok {
		panic(s)
	}
	return t
}

// TestTablesWithinRefreshPeriod: no embedded table is older than its
// refresh period relative to the data's own date (the newest as_of), so a
// build never ships one table left behind while the others were brought
// up to date; and every refresh period names a table that exists.
func TestTablesWithinRefreshPeriod(t *testing.T) {
	d := DataDate()
	names := map[string]bool{}
	for _, td := range TableDates() {
		names[td.Table] = true
		if days, stale := td.Age(d); stale {
			if e, ok := td.SourceEnd(); ok && e.Why != "" {
				checked, ok := parseAsOf(e.Checked)
				if _, late := (TableDate{Table: td.Table, Date: checked}).Age(d); ok && !late {
					continue // checked against a source that stops earlier
				}
			}
			t.Errorf("table %s is dated %s, %d days before the data's date %s: past its refresh period of %d days; bring it up to date (and its as_of) or state a longer period in refreshDays with the reason",
				td.Table, td.Date.Format("2006-01-02"), days, d.Format("2006-01-02"), td.RefreshDays())
		}
	}
	for table := range refreshDays {
		if !names[table] {
			t.Errorf("refreshDays names %q, which is not an embedded table", table)
		}
	}
	for table := range sourceEnds {
		if !names[table] {
			t.Errorf("sourceEnds names %q, which is not an embedded table", table)
		}
	}
}
