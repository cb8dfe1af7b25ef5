package matrix

import (
	"bytes"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"
)

// StaleAfterDays is how old the embedded data may be, relative to the date
// a check is made at, before gpuctl says its facts may be out of date.
const StaleAfterDays = 120

// dataDate is the newest as_of of the embedded data files: the day the
// facts were last brought up to date, the newest of the tables' dates
// (tableDates). A month ("2026-09") counts as its first day. The as_of
// values are found by a scan of the files' bytes (asOfValues); decoding
// all of them generically with the YAML library only for that cost 12 MB
// of allocations and more CPU than the rules themselves in every command.
// TestAsOfScan holds the scan to a generic decode of every file.
var dataDate = sync.OnceValue(func() time.Time {
	var newest time.Time
	for _, t := range tableDates() {
		if t.Date.After(newest) {
			newest = t.Date
		}
	}
	return newest
})

// asOfValues are the values of the as_of keys in the YAML text b, in block
// (`as_of: "2026-11-29"`) and flow (`{..., as_of: "2026-11-29"}`) mappings,
// quoted or plain; comments are skipped.
func asOfValues(b []byte) []string {
	var out []string
	for line := range bytes.Lines(b) {
		out = appendAsOf(out, bytes.TrimSuffix(line, []byte("\n")))
	}
	return out
}

// asOfKey is the key asOfValues looks for.
const asOfKey = "as_of:"

// appendAsOf appends the values of the as_of keys of one line of YAML to
// out, outside quoted scalars and before a comment.
func appendAsOf(out []string, line []byte) []string {
	inQuote := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inQuote != 0:
			if c == '\\' && inQuote == '"' {
				i++
			} else if c == inQuote {
				inQuote = 0
			}
		case opensQuote(line, i):
			inQuote = c // a quoted scalar (an apostrophe inside a word is not)
		case c == '#' && (i == 0 || line[i-1] == ' '):
			return out // a comment
		case isAsOfKey(line, i):
			if v, ok := asOfValue(line[i+len(asOfKey):]); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// opensQuote reports whether line[i] opens a quoted scalar: a quote at the
// start of the line or after a space, tab, '{', '[', ',' or ':'.
func opensQuote(line []byte, i int) bool {
	c := line[i]
	return (c == '"' || c == '\'') && (i == 0 || strings.IndexByte(" \t{[,:", line[i-1]) >= 0)
}

// isAsOfKey reports whether an as_of key starts at line[i]: at the start
// of the line or after a space, tab, '{' or ','.
func isAsOfKey(line []byte, i int) bool {
	return bytes.HasPrefix(line[i:], []byte(asOfKey)) && (i == 0 || strings.IndexByte(" \t{,", line[i-1]) >= 0)
}

// asOfValue is the scalar v starts with (after the key): a quoted one up to
// its closing quote (false where it has none), or a plain one up to a ',',
// '}' or '#', trimmed (false where empty).
func asOfValue(v []byte) (string, bool) {
	v = bytes.TrimLeft(v, " ")
	if len(v) > 0 && (v[0] == '"' || v[0] == '\'') {
		j := bytes.IndexByte(v[1:], v[0])
		if j < 0 {
			return "", false
		}
		return string(v[1 : 1+j]), true
	}
	if j := bytes.IndexAny(v, ",}#"); j >= 0 {
		v = v[:j]
	}
	s := strings.TrimSpace(string(v))
	return s, s != ""
}

// DataDate returns the date of the embedded data: the newest as_of of its
// files.
func DataDate() time.Time { return dataDate() }

// DataAge returns how many whole days the embedded data is older than at,
// and whether that is more than StaleAfterDays.
func DataAge(at time.Time) (days int, stale bool) {
	d := dataDate()
	if d.IsZero() {
		return 0, false
	}
	return TableDate{Date: d}.Age(at)
}

// DataStaleNote is the sentence gpuctl says when the embedded data is older
// than StaleAfterDays at at, or "" when it is not.
func DataStaleNote(at time.Time) string {
	days, stale := DataAge(at)
	if !stale {
		return ""
	}
	return fmt.Sprintf("the embedded version matrix is dated %s, %d days before %s: releases, end-of-life dates and defaults since then are unknown to this gpuctl, so its verdicts may be out of date",
		dataDate().Format("2006-01-02"), days, at.Format("2006-01-02"))
}

// TableDate is one table of the embedded data and its date: the newest
// as_of of its rows. A table is a top-level key of a data file, or a key
// one level below it that holds a block of its own ("gcp gke.driver_install"),
// so that one old table is not hidden by newer ones beside it.
type TableDate struct {
	Table string
	Date  time.Time
}

// refreshDays is each table's refresh period in days: how long its facts
// may go unchecked before they are likely out of date, by how often its
// source changes. Tables not listed are refreshed every StaleAfterDays.
// GKE offers a new minor in the Regular channel about every four months
// (1.33 to 1.36: 119 to 134 days apart), and its driver table with it; EKS
// AMIs ship every few weeks, NVIDIA's GPU Operator,
// device plugin, driver branches and CUDA toolkits release every one to
// three months; API enums, interface limits and the architecture removals
// of CUDA change about once a year.
var refreshDays = map[string]int{
	"aws ami_types":                     60,
	"amis eks_releases":                 60,
	"amis eks_tags":                     60,
	"amis bottlerocket_releases":        60,
	"aws eks_versions":                  90,
	"cuda toolkits":                     90,
	"cuda forward_compat":               180,
	"cuda minor_compat":                 180,
	"cuda arch_removals":                365,
	"drivers branches":                  90,
	"drivers lifecycle":                 180,
	"gcp gke.driver_install":            120,
	"gcp gke.release_schedule":          120,
	"gcp gke.driver_versions":           365,
	"gcp gke.image_types":               365,
	"gcp gke.release_channels":          365,
	"gcp gke.device_plugin":             365,
	"gcp max_nics":                      365,
	"gcp n1_attachable":                 365,
	"nccl env.facts":                    365,
	"operator gpu_operator.releases":    90,
	"operator device_plugin.releases":   90,
	"operator device_plugin.sharing":    365,
	"operator device_plugin.gfd_labels": 365,
}

// SourceEnd records that a table was checked, on a date later than its
// newest row, against the newest source available, which itself stops at
// that row: the table is as new as its source makes it. Users still see
// its age (MATRIX-DATA-STALE); the build's refresh test accepts it while
// Checked is within the table's refresh period of the data's date.
type SourceEnd struct {
	Checked string // "2006-01-02"
	Why     string // the source and where it stops
}

// sourceEnds are the tables whose sources stop before the data's date.
var sourceEnds = map[string]SourceEnd{
	"amis eks_releases":          {"2026-12-02", "awslabs/amazon-eks-ami CHANGELOG.md at 81fec2e, the newest snapshot available, ends at release v20260714"},
	"amis eks_tags":              {"2026-12-02", "awslabs/amazon-eks-ami at 81fec2e, the newest snapshot available, has no tag after v20260724"},
	"amis bottlerocket_releases": {"2026-12-02", "bottlerocket-os/bottlerocket-project-website data/variants and data/nvidia at 6102096, the newest snapshot available, end at Bottlerocket 1.57.0"},
}

// SourceEnd returns where the table's source stops, when it was checked
// against it later than its newest row (ok false otherwise).
func (t TableDate) SourceEnd() (SourceEnd, bool) {
	e, ok := sourceEnds[t.Table]
	return e, ok
}

// RefreshDays returns the table's refresh period in days (StaleAfterDays
// for a table without one of its own).
func (t TableDate) RefreshDays() int {
	if d, ok := refreshDays[t.Table]; ok {
		return d
	}
	return StaleAfterDays
}

// Age returns how many whole days t is older than at (0 when it is not
// older), and whether that is more than its refresh period (RefreshDays).
func (t TableDate) Age(at time.Time) (days int, stale bool) {
	if !at.After(t.Date) {
		return 0, false
	}
	days = int(at.Sub(t.Date).Hours() / 24)
	return days, days > t.RefreshDays()
}

// tableDates are the embedded tables with their dates, by name.
var tableDates = sync.OnceValue(func() []TableDate {
	var out []TableDate
	files, _ := fs.Glob(dataFS, "data/*.yaml")
	for _, name := range files {
		b, err := dataFS.ReadFile(name)
		if err != nil {
			continue
		}
		stem := strings.TrimSuffix(strings.TrimPrefix(name, "data/"), ".yaml")
		out = append(out, fileTableDates(stem, b)...)
	}
	slices.SortFunc(out, func(a, b TableDate) int { return strings.Compare(a.Table, b.Table) })
	return out
})

// fileTableDates dates the tables of one data file (named stem).
func fileTableDates(stem string, b []byte) []TableDate {
	newest := map[string]time.Time{}
	var order []string
	top, sub := "", ""
	for line := range bytes.Lines(b) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		if k, _, ok := blockKey(line, 0); ok {
			top, sub = k, ""
		} else if k, block, ok := blockKey(line, 2); ok {
			sub = ""
			if block {
				sub = k
			}
		}
		table := stem + " " + top
		if sub != "" {
			table += "." + sub
		}
		for _, s := range asOfValues(line) {
			t, ok := parseAsOf(s)
			if !ok {
				continue
			}
			if _, seen := newest[table]; !seen {
				order = append(order, table)
			}
			if t.After(newest[table]) {
				newest[table] = t
			}
		}
	}
	out := make([]TableDate, 0, len(order))
	for _, t := range order {
		out = append(out, TableDate{Table: t, Date: newest[t]})
	}
	return out
}

// blockKey reports whether line is a mapping key at exactly indent spaces
// ("key:" or "key: value"), with the key and whether it opens a block (no
// value after the colon, or only a comment).
func blockKey(line []byte, indent int) (key string, block, ok bool) {
	if len(line) <= indent || strings.TrimLeft(string(line[:indent]), " ") != "" {
		return "", false, false
	}
	rest := string(line[indent:])
	i := strings.IndexByte(rest, ':')
	if i <= 0 || strings.Trim(rest[:i], "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return "", false, false
	}
	after := strings.TrimSpace(rest[i+1:])
	return rest[:i], after == "" || strings.HasPrefix(after, "#"), true
}

// parseAsOf parses an as_of value; a month counts as its first day.
func parseAsOf(s string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02", "2006-01"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// TableDates returns the embedded tables with their dates, by name.
func TableDates() []TableDate { return slices.Clone(tableDates()) }

// StaleTables returns the tables older than their refresh period at at,
// with their age in whole days, by name.
func StaleTables(at time.Time) (tables []TableDate, days []int) {
	for _, t := range tableDates() {
		if d, stale := t.Age(at); stale {
			tables, days = append(tables, t), append(days, d)
		}
	}
	return tables, days
}

// otherProviderFiles are, per provider, the data files whose tables
// judge only the other provider's pools.
var otherProviderFiles = map[string][]string{
	"gke": {"aws", "amis"},
	"eks": {"gcp"},
}

// TableStaleNoteFor is TableStaleNote without the tables that judge only
// the other provider's pools (a GKE spec is not told about EKS AMI
// tables); provider "" keeps all.
func TableStaleNoteFor(at time.Time, provider string) string {
	skip := otherProviderFiles[provider]
	return tableStaleNote(at, func(t TableDate) bool {
		return !slices.Contains(skip, strings.SplitN(t.Table, " ", 2)[0])
	})
}

// TableStaleNote is the sentence gpuctl says when some tables are older
// than their refresh period at at, naming each with its date, age and
// period, or "" when none is.
func TableStaleNote(at time.Time) string {
	return tableStaleNote(at, func(TableDate) bool { return true })
}

// tableStaleNote is TableStaleNote over the tables keep keeps.
func tableStaleNote(at time.Time, keep func(TableDate) bool) string {
	var tables []TableDate
	var days []int
	all, ages := StaleTables(at)
	for i, t := range all {
		if keep(t) {
			tables, days = append(tables, t), append(days, ages[i])
		}
	}
	if len(tables) == 0 {
		return ""
	}
	parts := make([]string, len(tables))
	for i, t := range tables {
		parts[i] = fmt.Sprintf("%s (as of %s, %d/%d days)", t.Table, t.Date.Format("2006-01-02"), days[i], t.RefreshDays())
	}
	return fmt.Sprintf("embedded tables past their refresh period at %s (age/period): %s; what changed in them since is unknown to this gpuctl, so verdicts that use them may be out of date",
		at.Format("2006-01-02"), strings.Join(parts, ", "))
}

// TableAsOf returns the date of the embedded table named table ("cuda
// toolkits", "gcp gke.driver_install") as "2006-01-02", or "" when there is
// no such table.
func TableAsOf(table string) string {
	if d := tableDate(table); !d.IsZero() {
		return d.Format("2006-01-02")
	}
	return ""
}

// tableDate is the date of the named table, zero when there is none.
func tableDate(name string) time.Time {
	for _, t := range tableDates() {
		if t.Table == name {
			return t.Date
		}
	}
	return time.Time{}
}
