package probe

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// FindingRule describes one rule a parse finding carries (diag.Finding's
// rule, e.g. "xid-reset"): its usual severity, the other severities it
// reports and the long form `gpuctl explain RULE` prints. The catalogue is
// findings/<room>.yaml, one file per parser's area (smi, nccl, dmesg, ...).
type FindingRule struct {
	// ID is the rule exactly as findings carry it: lowercase, e.g.
	// "nccl-wrong-results".
	ID    string `yaml:"id"`
	Title string `yaml:"title"`
	// Severity is the usual severity: error (the verdict fails), warning
	// (made by an unusable output, the verdict is then unknown; or a risk)
	// or info. SeverityReason says why in one line; Also lists the other
	// severities the rule reports, each for its case.
	Severity       diag.Severity `yaml:"severity"`
	SeverityReason string        `yaml:"severityReason"`
	Also           []FindingCase `yaml:"also"`
	// Summary is one line; Long states how gpuctl decides (thresholds with
	// their units); Fix says what the operator does.
	Summary string `yaml:"summary"`
	Long    string `yaml:"long"`
	Fix     string `yaml:"fix"`
	// Sources are the URLs of the facts behind the rule, each with the
	// date it was checked.
	Sources []string `yaml:"sources"`
	// Room is the catalogue file the rule is in, without ".yaml".
	Room string `yaml:"-"`
}

// FindingCase is another severity a finding rule reports: in which case,
// and why.
type FindingCase struct {
	Severity diag.Severity `yaml:"severity"`
	When     string        `yaml:"when"`
	Reason   string        `yaml:"reason"`
}

// Severities returns every severity the rule reports, its usual one first
// (with When "").
func (r FindingRule) Severities() []FindingCase {
	return append([]FindingCase{{Severity: r.Severity, Reason: r.SeverityReason}}, r.Also...)
}

// Emits reports whether the rule reports findings of severity sev.
func (r FindingRule) Emits(sev diag.Severity) bool {
	return slices.ContainsFunc(r.Severities(), func(c FindingCase) bool { return c.Severity == sev })
}

//go:embed findings/*.yaml
var findingsFS embed.FS

// findingCatalogue is decoded on first use; the embedded files are checked
// by a test, so a failure here is a build defect.
var findingCatalogue = sync.OnceValue(func() []FindingRule {
	list, err := loadFindingRules(findingsFS, "findings")
	if err != nil {
		panic(fmt.Sprintf("probe: %v", err))
	}
	return list
})

// FindingRules returns every parse finding rule, sorted by ID.
func FindingRules() []FindingRule {
	out := slices.Clone(findingCatalogue())
	for i := range out {
		out[i] = out[i].clone()
	}
	return out
}

// LookupFindingRule returns the rule with ID id (case-insensitive; "_"
// reads as "-").
func LookupFindingRule(id string) (FindingRule, bool) {
	id = strings.ReplaceAll(strings.ToLower(id), "_", "-")
	list := findingCatalogue()
	i, ok := slices.BinarySearchFunc(list, id, func(r FindingRule, id string) int { return strings.Compare(r.ID, id) })
	if !ok {
		return FindingRule{}, false
	}
	return list[i].clone(), true
}

func (r FindingRule) clone() FindingRule {
	r.Also = slices.Clone(r.Also)
	r.Sources = slices.Clone(r.Sources)
	return r
}

// loadFindingRules decodes every dir/*.yaml of fsys and validates it: ids
// unique across files, lowercase and sorted within a file; severities one
// of error, warning, info; title, summary, severityReason, fix and a source
// given. An error names the file and the id.
func loadFindingRules(fsys fs.FS, dir string) ([]FindingRule, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("finding catalogue: no %s/*.yaml (%v)", dir, err)
	}
	var all []FindingRule
	seen := map[string]string{}
	for _, name := range names {
		list, err := loadFindingFile(fsys, name)
		if err != nil {
			return nil, err
		}
		for _, r := range list {
			if prev, dup := seen[r.ID]; dup {
				return nil, fmt.Errorf("%s: %s: also in %s", name, r.ID, prev)
			}
			seen[r.ID] = name
		}
		all = append(all, list...)
	}
	slices.SortFunc(all, func(a, b FindingRule) int { return strings.Compare(a.ID, b.ID) })
	return all, nil
}

// loadFindingFile decodes and checks one catalogue file.
func loadFindingFile(fsys fs.FS, name string) ([]FindingRule, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var list []FindingRule
	if err := yaml.UnmarshalWithOptions(data, &list, yaml.DisallowUnknownField()); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	room := strings.TrimSuffix(path.Base(name), ".yaml")
	for i := range list {
		list[i].Room = room
		list[i].Long = strings.TrimSpace(list[i].Long)
		if err := checkFindingRule(list[i]); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, list[i].ID, err)
		}
		if i > 0 && list[i-1].ID >= list[i].ID {
			return nil, fmt.Errorf("%s: %s: not sorted by id (after %s)", name, list[i].ID, list[i-1].ID)
		}
	}
	return list, nil
}

// checkFindingRule reports the first field of r that is missing or wrong.
func checkFindingRule(r FindingRule) error {
	if r.ID == "" || r.ID != strings.ToLower(r.ID) || strings.ContainsAny(r.ID, " _") {
		return fmt.Errorf("id %q: want a lowercase id with '-'", r.ID)
	}
	for _, f := range []struct{ name, v string }{{"title", r.Title}, {"severityReason", r.SeverityReason}, {"summary", r.Summary}, {"fix", r.Fix}} {
		if strings.TrimSpace(f.v) == "" {
			return fmt.Errorf("%s is empty", f.name)
		}
	}
	for _, c := range r.Severities() {
		if err := checkFindingCase(c); err != nil {
			return err
		}
	}
	for _, c := range r.Also {
		if strings.TrimSpace(c.When) == "" {
			return fmt.Errorf("also %s: no when", c.Severity)
		}
	}
	if len(r.Sources) == 0 {
		return fmt.Errorf("no source")
	}
	for _, s := range r.Sources {
		if !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("source %q: want an https URL", s)
		}
	}
	return nil
}

// checkFindingCase checks one severity case: a known severity, its reason,
// and (for the other cases, which carry a reason) when it applies.
func checkFindingCase(c FindingCase) error {
	switch c.Severity {
	case diag.SeverityError, diag.SeverityWarning, diag.SeverityInfo:
	default:
		return fmt.Errorf("severity %q: want error, warning or info", c.Severity)
	}
	if strings.TrimSpace(c.Reason) == "" {
		return fmt.Errorf("severity %s: no reason", c.Severity)
	}
	return nil
}
