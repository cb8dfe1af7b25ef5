package matrix

import (
	"fmt"
	"sort"
	"time"
)

// drivers.yaml: NVIDIA's data-center driver branches and their life
// cycle; their index and lookups.

// driversFile is data/drivers.yaml as decoded; indexed by (*catalog).indexDrivers.
type driversFile struct {
	Lifecycle Provenance   `yaml:"lifecycle"`
	Branches  []branchFact `yaml:"branches"`
}

type branchFact struct {
	Provenance  `yaml:",inline"`
	Branch      int    `yaml:"branch"`
	Type        string `yaml:"type"`
	EOL         string `yaml:"eol"`
	Released    string `yaml:"released"`
	LatestKnown string `yaml:"latest_known"`

	eol time.Time // first instant past EOL; zero when none is known
}

// indexDrivers indexes drivers.yaml's branches by number, with their type
// checked and their end of life parsed.
func (c *catalog) indexDrivers() error {
	c.branches = map[int]*branchFact{}
	for i := range c.drivers.Branches {
		b := &c.drivers.Branches[i]
		switch b.Type {
		case "", "LTSB", "PB", "NFB":
		default:
			return fmt.Errorf("driver branch R%d: unknown type %q", b.Branch, b.Type)
		}
		if b.EOL != "" {
			var err error
			if b.eol, err = parseDate(b.EOL); err != nil {
				return fmt.Errorf("driver branch R%d: %w", b.Branch, err)
			}
		}
		c.branches[b.Branch] = b
	}
	return nil
}

// DriverBranch is one NVIDIA data-center driver branch.
type DriverBranch struct {
	// Branch is the branch number (580 for R580).
	Branch int `json:"branch"`
	// Type is LTSB, PB or NFB; empty when not captured.
	Type string `json:"type,omitempty"`
	// EOL is the end-of-life month or date as published ("2026-06"), empty
	// when none (NFBs have none).
	EOL         string `json:"eol,omitempty"`
	Released    string `json:"released,omitempty"`
	LatestKnown string `json:"latestKnown,omitempty"`
	Note        string `json:"note,omitempty"`
	Source      string `json:"source"`
	AsOf        string `json:"asOf"`

	eol time.Time
}

// EndOfLife reports whether the branch is past its end of life at t.
func (b DriverBranch) EndOfLife(t time.Time) bool { return !b.eol.IsZero() && !t.Before(b.eol) }

// InSupport reports whether the branch is a production branch (LTSB or PB)
// that is not past EOL at t.
func (b DriverBranch) InSupport(t time.Time) bool {
	return (b.Type == "LTSB" || b.Type == "PB") && !b.EndOfLife(t)
}

func branchOf(b *branchFact) DriverBranch {
	return DriverBranch{Branch: b.Branch, Type: b.Type, EOL: b.EOL, Released: b.Released, LatestKnown: b.LatestKnown,
		Note: b.Note, Source: b.Source, AsOf: b.AsOf, eol: b.eol}
}

// LookupBranch returns the facts of driver branch n (580 for R580).
func LookupBranch(n int) (DriverBranch, bool) {
	b, ok := cat().branches[n]
	if !ok {
		return DriverBranch{}, false
	}
	return branchOf(b), true
}

// DriverBranches returns every known branch, oldest first.
func DriverBranches() []DriverBranch {
	c := cat()
	out := make([]DriverBranch, 0, len(c.branches))
	for _, b := range c.drivers.Branches {
		out = append(out, branchOf(&b))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Branch < out[j].Branch })
	return out
}
