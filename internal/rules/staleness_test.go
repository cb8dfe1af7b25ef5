package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec/spectest"
)

// TestDataStale: the data is dated by its newest as_of; judged more than
// StaleAfterDays later, Validate and Check add one info note (never a
// warning, so --strict does not fail on the calendar), and not before.
// Before that, Validate adds one info note that names each table older
// than its refresh period with its date (a table is dated by its newest
// row).
func TestDataStale(t *testing.T) {
	d := matrix.DataDate()
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
		at    time.Time
		want  bool   // the whole data is stale
		table string // else: a table the note must name ("" for no note)
	}{
		// The EKS AMI release tables' sources stop in July (matrix.SourceEnd):
		// users are told.
		{asOf20261129, false, "amis eks_releases (as of 2026-07-23, 129/60 days)"},
		{d, false, "amis bottlerocket_releases (as of 2026-04-14"},
		{d.AddDate(0, 0, 60), false, "aws ami_types (as of 2026-11-29, 64/60 days)"},
		{d.AddDate(0, 0, matrix.StaleAfterDays), false, "operator gpu_operator.lifecycle (as of 2026-08-21"}, // an EKS spec: GKE tables are not named
		{d.AddDate(0, 0, matrix.StaleAfterDays+1), true, ""},
		{d.AddDate(1, 0, 0), true, ""},
		{time.Date(2026, 4, 8, 0, 0, 0, 0, time.UTC), false, ""},
	} {
		got := stale(Validate(spectest.EKS(), Options{AsOf: c.at}))
		if len(got) != 1 && (c.want || c.table != "") || len(got) > 1 || len(got) == 1 && !c.want && c.table == "" {
			t.Errorf("Validate as of %s: %d MATRIX-DATA-STALE findings, want stale=%v table %q", c.at.Format("2006-01-02"), len(got), c.want, c.table)
			continue
		}
		if c.want {
			f := got[0]
			days, _ := matrix.DataAge(c.at)
			if f.Severity != diag.SeverityInfo || !strings.Contains(f.Message, d.Format("2006-01-02")) || !strings.Contains(f.Message, "days before") || days <= matrix.StaleAfterDays {
				t.Errorf("stale finding = %s %q (age %d days)", f.Severity, f.Message, days)
			}
		}
		if c.table != "" && (got[0].Severity != diag.SeverityInfo || !strings.Contains(got[0].Message, c.table)) {
			t.Errorf("Validate as of %s: stale note %s %q does not name %q", c.at.Format("2006-01-02"), got[0].Severity, got[0].Message, c.table)
		}
		if got := stale(Check(Query{GPU: "H100", Driver: "580.95.05", CUDA: "12.8"}, Options{AsOf: c.at})); c.want != (len(got) == 1) {
			t.Errorf("Check as of %s: %d MATRIX-DATA-STALE findings, want stale=%v", c.at.Format("2006-01-02"), len(got), c.want)
		}
	}
	if r, ok := LookupRule(RuleDataStale); !ok || r.Severity != diag.SeverityInfo {
		t.Errorf("rule %s = %+v", RuleDataStale, r)
	}
}
