package matrix

import (
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// StaleAfterDays is how old the embedded data may be, relative to the date
// a check is made at, before gpuctl says its facts may be out of date.
const StaleAfterDays = 120

// dataDate is the newest as_of of the embedded data files: the day the
// facts were last brought up to date. A month ("2026-09") counts as its
// first day.
var dataDate = sync.OnceValue(func() time.Time {
	var newest time.Time
	files, _ := fs.Glob(dataFS, "data/*.yaml")
	for _, name := range files {
		b, err := dataFS.ReadFile(name)
		if err != nil {
			continue
		}
		var doc any
		if yaml.Unmarshal(b, &doc) != nil {
			continue
		}
		walkAsOf(doc, func(s string) {
			for _, layout := range []string{"2006-01-02", "2006-01"} {
				if t, err := time.Parse(layout, s); err == nil {
					if t.After(newest) {
						newest = t
					}
					return
				}
			}
		})
	}
	return newest
})

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

// DataDate returns the date of the embedded data: the newest as_of of its
// files.
func DataDate() time.Time { return dataDate() }

// DataAge returns how many whole days the embedded data is older than at,
// and whether that is more than StaleAfterDays.
func DataAge(at time.Time) (days int, stale bool) {
	d := dataDate()
	if d.IsZero() || !at.After(d) {
		return 0, false
	}
	days = int(at.Sub(d).Hours() / 24)
	return days, days > StaleAfterDays
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

// checkDataAge adds the MATRIX-DATA-STALE note when the data is stale at
// the validator's date.
func (v *validator) checkDataAge() {
	if note := DataStaleNote(v.asOf); note != "" {
		v.add(RuleDataStale, diag.SeverityInfo, "", note, "Upgrade gpuctl to a release with newer data, or pass --as-of to judge as of an earlier date.")
	}
}
