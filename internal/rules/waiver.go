package rules

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// ApplyWaivers returns fs with waivers applied at date asOf (zero: today).
// A waiver matches a finding when the rule IDs are equal (case-insensitive)
// and its path equals the finding's path, or ends in "*" and is a prefix of
// it, or is empty; matching findings become info findings carrying the
// waiver's reason in Waiver. A waiver applies through its expires date; an
// expired waiver waives nothing and yields a WAIVER-EXPIRED warning at
// spec.waivers[i]; an unknown rule or bad date yields WAIVER-INVALID. The
// result is sorted by path, then rule; fs is not modified.
func ApplyWaivers(fs []diag.Finding, ws []spec.Waiver, asOf time.Time) []diag.Finding {
	return ApplyWaiversAt(fs, ws, asOf, "spec.waivers")
}

// ApplyWaiversAt is ApplyWaivers for waivers written at list path at
// ("spec.environments.dev.waivers", or "waivers" in a --waivers file): the
// WAIVER-EXPIRED and WAIVER-INVALID findings point at at[i].
func ApplyWaiversAt(fs []diag.Finding, ws []spec.Waiver, asOf time.Time, at string) []diag.Finding {
	if asOf.IsZero() {
		asOf = time.Now().UTC()
	}
	today := asOf.Format("2006-01-02")
	out := make([]diag.Finding, len(fs))
	copy(out, fs)
	v := newValidator(Options{AsOf: asOf})
	for i, w := range ws {
		path := fmt.Sprintf("%s[%d]", at, i)
		rule, ok := LookupRule(w.Rule)
		switch {
		case strings.TrimSpace(w.Rule) == "":
			v.add(RuleWaiverInvalid, "", path+".rule", "waiver has no rule", "Name the rule ID the waiver is for.")
			continue
		case !ok:
			v.add(RuleWaiverInvalid, "", path+".rule", fmt.Sprintf("waiver names unknown rule %q (nearest: %s)", w.Rule, strings.Join(NearestRules(w.Rule, 3), ", ")), "")
			continue
		}
		exp, err := time.Parse("2006-01-02", strings.TrimSpace(w.Expires))
		if err != nil {
			v.add(RuleWaiverInvalid, "", path+".expires", fmt.Sprintf("waiver for %s: expires %q is not a YYYY-MM-DD date", rule.ID, w.Expires), "Set expires: YYYY-MM-DD.")
			continue
		}
		if exp.Format("2006-01-02") < today {
			v.add(RuleWaiverExpired, "", path, fmt.Sprintf("waiver for %s at %s expired on %s (as of %s): %s", rule.ID, cmp.Or(w.Path, "any path"), w.Expires, today, w.Reason), "")
			continue
		}
		for j := range out {
			f := &out[j]
			if f.Rule != rule.ID || f.Rule == RuleWaiverExpired || f.Rule == RuleWaiverInvalid || !waiverPathMatch(w.Path, f.Path) {
				continue
			}
			f.Severity = diag.SeverityInfo
			f.Waiver = w.Reason
			if f.Waiver == "" {
				f.Waiver = "waived"
			}
		}
	}
	out = append(out, v.findings...)
	SortFindings(out)
	return out
}

func waiverPathMatch(pattern, path string) bool {
	switch {
	case pattern == "" || pattern == "*":
		return true
	case strings.HasSuffix(pattern, "*"):
		return strings.HasPrefix(path, strings.TrimSuffix(pattern, "*"))
	}
	return pattern == path
}
