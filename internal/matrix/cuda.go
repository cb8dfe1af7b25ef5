package matrix

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// cuda.yaml: the CUDA toolkit releases and what they need of the driver,
// the minor-version compatibility floors, the cuda-compat packages and the
// architectures each toolkit dropped; their index and lookups.

// cudaFile is data/cuda.yaml as decoded; indexed by (*catalog).indexCUDA.
type cudaFile struct {
	Toolkits     []toolkitFact `yaml:"toolkits"`
	MinorCompat  minorCompat   `yaml:"minor_compat"`
	Forward      forwardCompat `yaml:"forward_compat"`
	ArchRemovals []archRemoval `yaml:"arch_removals"`
}

type toolkitFact struct {
	Provenance `yaml:",inline"`
	Release    string   `yaml:"release"`
	Version    string   `yaml:"version"`
	Aliases    []string `yaml:"aliases"`
	GA         bool     `yaml:"ga"`
	Exists     *bool    `yaml:"exists"`
	MinDriver  string   `yaml:"min_driver"`
	Branch     int      `yaml:"branch"`

	version   Version
	aliases   []Version
	minDriver Version
}

func (t *toolkitFact) exists() bool { return t.Exists == nil || *t.Exists }

type minorCompat struct {
	Provenance  `yaml:",inline"`
	Families    []minorFamily `yaml:"families"`
	Limitations []string      `yaml:"limitations"`
}

type minorFamily struct {
	Major int    `yaml:"major"`
	Floor string `yaml:"floor"`
	Note  string `yaml:"note"`

	floor Version
}

type forwardCompat struct {
	Provenance `yaml:",inline"`
	AppliesTo  string           `yaml:"applies_to"`
	Rules      []string         `yaml:"rules"`
	Columns    []int            `yaml:"columns"`
	Packages   []compatPackages `yaml:"packages"`
}

type compatPackages struct {
	CUDA   string `yaml:"cuda"`
	RunsOn []int  `yaml:"runs_on"`
	Native int    `yaml:"native"`

	cuda Version
}

type archRemoval struct {
	Provenance       `yaml:",inline"`
	Arch             string `yaml:"arch"`
	RemovedIn        string `yaml:"removed_in"`
	LastCUDA         string `yaml:"last_cuda"`
	LastDriverBranch int    `yaml:"last_driver_branch"`

	removedIn Version
}

// indexCUDA parses the versions of cuda.yaml: each toolkit's version,
// aliases and minimum driver, the minor-compatibility floors, the
// cuda-compat packages and the architecture removals.
func (c *catalog) indexCUDA() error {
	for i := range c.cuda.Toolkits {
		if err := c.cuda.Toolkits[i].index(); err != nil {
			return err
		}
	}
	var err error
	for i := range c.cuda.MinorCompat.Families {
		f := &c.cuda.MinorCompat.Families[i]
		if f.floor, err = parseV(fmt.Sprintf("minor_compat family %d floor", f.Major), f.Floor); err != nil {
			return err
		}
	}
	for i := range c.cuda.Forward.Packages {
		p := &c.cuda.Forward.Packages[i]
		if p.cuda, err = parseV("forward_compat package "+p.CUDA, p.CUDA); err != nil {
			return err
		}
	}
	for i := range c.cuda.ArchRemovals {
		a := &c.cuda.ArchRemovals[i]
		if a.removedIn, err = parseV("arch removal "+a.Arch, a.RemovedIn); err != nil {
			return err
		}
	}
	return nil
}

// index parses the toolkit's version, aliases and minimum driver.
func (t *toolkitFact) index() error {
	var err error
	if t.version, err = parseV("toolkit "+t.Release, t.Version); err != nil {
		return err
	}
	for _, a := range t.Aliases {
		v, err := parseV("toolkit "+t.Release+" alias", a)
		if err != nil {
			return err
		}
		t.aliases = append(t.aliases, v)
	}
	if t.MinDriver != "" {
		if t.minDriver, err = parseV("toolkit "+t.Release+" min_driver", t.MinDriver); err != nil {
			return err
		}
	}
	return nil
}

// CUDAToolkit answers `gpuctl matrix cuda X.Y`: what a CUDA toolkit needs.
type CUDAToolkit struct {
	// Version is the version asked for; Release names the matched release
	// ("12.2 Update 2").
	Version string `json:"version,omitempty"`
	Release string `json:"release,omitempty"`
	// MinDriver is the minimum Linux x86_64 driver for full support; empty
	// where the release notes give only a branch.
	MinDriver string `json:"minDriver,omitempty"`
	// Branch is the driver branch the release notes pair it with (0 when
	// only MinDriver is known or nothing is).
	Branch int `json:"branch"`
	// MinorCompatFloor is the minimum driver under minor-version
	// compatibility (same major family), with what does not work there.
	MinorCompatFloor  string   `json:"minorCompatFloor,omitempty"`
	MinorCompatLimits []string `json:"minorCompatLimits,omitempty"`
	// ForwardCompat lists the driver branches on which the matching
	// cuda-compat package runs (data-center GPUs, LTSB/PB branches in
	// support); NativeBranch is the first branch that runs it natively.
	ForwardCompat []int    `json:"forwardCompat,omitempty"`
	NativeBranch  int      `json:"nativeBranch,omitempty"`
	Notes         []string `json:"notes,omitempty"`
	Sources       []string `json:"sources,omitempty"`
	AsOf          string   `json:"asOf"`
}

// CUDAFacts returns what the matrix knows about CUDA toolkit version
// ("12.4", "12.2.2", "11.0.2"). Errors: an unparseable version, a version
// that was never released (12.7), or one the matrix does not know.
func CUDAFacts(version string) (CUDAToolkit, error) {
	c := cat()
	r := c.resolveCUDA(version)
	switch {
	case r.err != nil:
		return CUDAToolkit{}, r.err
	case r.nonexistent:
		if r.tk != nil && r.tk.Note != "" {
			return CUDAToolkit{}, errors.New(lowerFirst(r.tk.Note)) // the note says it was never released
		}
		return CUDAToolkit{}, fmt.Errorf("CUDA %s was never released", version)
	case r.tk == nil:
		return CUDAToolkit{}, fmt.Errorf("CUDA %s is not in the matrix (newest known: %s)", version, c.newestCUDA().Release)
	}
	t := r.tk
	out := CUDAToolkit{Version: version, Release: t.Release, MinDriver: t.MinDriver, Branch: t.Branch,
		Sources: t.sources(), AsOf: t.AsOf}
	if t.Note != "" {
		out.Notes = append(out.Notes, t.Note)
	}
	if r.fallback {
		out.Notes = append(out.Notes, fmt.Sprintf("%s is not in the matrix; facts of %s (the newest known release of %d.%d) are shown, and a later update may need a newer driver.", version, t.Release, r.v[0], minor(r.v)))
	}
	if f := c.family(r.v.Major()); f != nil {
		out.MinorCompatFloor = f.Floor
		out.MinorCompatLimits = append([]string(nil), c.cuda.MinorCompat.Limitations...)
		out.Sources = appendUnique(out.Sources, c.cuda.MinorCompat.Source)
	}
	if p := c.compatPackage(r.v); p != nil {
		out.ForwardCompat = append([]int(nil), p.RunsOn...)
		out.NativeBranch = p.Native
		out.Sources = appendUnique(out.Sources, c.cuda.Forward.Source)
		out.Notes = append(out.Notes, "Forward compatibility (cuda-compat-"+strings.ReplaceAll(p.CUDA, ".", "-")+"): "+c.cuda.Forward.AppliesTo+" "+strings.Join(c.cuda.Forward.Rules, " "))
	}
	return out, nil
}

func minor(v Version) int {
	if len(v) < 2 {
		return 0
	}
	return v[1]
}

type cudaResolution struct {
	v           Version
	tk          *toolkitFact
	nonexistent bool // a release that never existed (12.7)
	fallback    bool // X.Y.Z unknown; tk is the newest known release of X.Y
	unknown     bool // newer (or older) than anything the matrix knows
	err         error
}

// resolveCUDA maps a spec CUDA version to a toolkit release: "X.Y" is X.Y
// GA; "X.Y.Z" matches the release numbers NVIDIA ships (never arithmetic).
func (c *catalog) resolveCUDA(s string) cudaResolution {
	v, err := ParseVersion(s)
	if err != nil {
		return cudaResolution{err: fmt.Errorf("CUDA version %q: %w", s, err)}
	}
	if len(v) < 2 {
		return cudaResolution{v: v, err: fmt.Errorf("CUDA version %q needs major.minor, e.g. \"12.4\"", s)}
	}
	r := cudaResolution{v: v}
	sameMinor := c.toolkitsOfMinor(v)
	for _, t := range sameMinor {
		if !t.exists() {
			r.tk, r.nonexistent = t, true
			return r
		}
		if t.names(v) {
			r.tk = t
			return r
		}
	}
	if len(sameMinor) > 0 {
		// An update release the table does not list: judge against the
		// newest known release of that minor, and say so.
		r.tk, r.fallback = newestToolkit(sameMinor), true
		return r
	}
	// A minor the table does not list: unknown beyond either end of the
	// table, never released between them.
	r.unknown = c.outsideToolkits(v)
	r.nonexistent = !r.unknown
	return r
}

// toolkitsOfMinor are the toolkit releases of v's major.minor, in table
// order.
func (c *catalog) toolkitsOfMinor(v Version) []*toolkitFact {
	var out []*toolkitFact
	for i := range c.cuda.Toolkits {
		t := &c.cuda.Toolkits[i]
		if t.version[0] == v[0] && minor(t.version) == v[1] {
			out = append(out, t)
		}
	}
	return out
}

// names reports whether the spec's version v (of t's minor) names release
// t: "X.Y" its GA, "X.Y.Z" its version or one of its aliases.
func (t *toolkitFact) names(v Version) bool {
	if len(v) == 2 {
		return t.GA
	}
	if t.version.Compare(v) == 0 {
		return true
	}
	for _, a := range t.aliases {
		if a.Compare(v) == 0 {
			return true
		}
	}
	return false
}

// newestToolkit is the release of ts with the highest version (the first
// of equals).
func newestToolkit(ts []*toolkitFact) *toolkitFact {
	newest := ts[0]
	for _, t := range ts {
		if newest.version.Less(t.version) {
			newest = t
		}
	}
	return newest
}

// outsideToolkits reports whether CUDA v is of a minor newer than the
// newest known release's, or older than the table's first release.
func (c *catalog) outsideToolkits(v Version) bool {
	newest := c.newestCUDA().version
	if newest.Less(v) && (v[0] > newest[0] || v[1] > minor(newest)) {
		return true
	}
	return v.Less(c.cuda.Toolkits[0].version) // older than the matrix goes back
}

func (c *catalog) newestCUDA() *toolkitFact {
	var n *toolkitFact
	for i := range c.cuda.Toolkits {
		t := &c.cuda.Toolkits[i]
		if t.exists() && (n == nil || n.version.Less(t.version)) {
			n = t
		}
	}
	return n
}

// CompatFloor is the minimum driver on which every toolkit of one CUDA major
// version runs under minor-version compatibility (PTX JIT aside).
type CompatFloor struct {
	// Major is the CUDA major version (12).
	Major int `json:"major"`
	// Floor is the driver ("525.60.13").
	Floor string `json:"floor"`
}

// MinorCompatFloors returns the minor-version compatibility floors of every
// CUDA major version the matrix knows, ascending by major, with the source
// and date of the facts.
func MinorCompatFloors() (floors []CompatFloor, source, asOf string) {
	c := cat()
	for _, f := range c.cuda.MinorCompat.Families {
		floors = append(floors, CompatFloor{Major: f.Major, Floor: f.Floor})
	}
	sort.Slice(floors, func(i, j int) bool { return floors[i].Major < floors[j].Major })
	return floors, c.cuda.MinorCompat.Source, c.cuda.MinorCompat.AsOf
}

func (c *catalog) family(major int) *minorFamily {
	for i := range c.cuda.MinorCompat.Families {
		if c.cuda.MinorCompat.Families[i].Major == major {
			return &c.cuda.MinorCompat.Families[i]
		}
	}
	return nil
}

func (c *catalog) compatPackage(v Version) *compatPackages {
	for i := range c.cuda.Forward.Packages {
		p := &c.cuda.Forward.Packages[i]
		if p.cuda[0] == v[0] && minor(p.cuda) == minor(v) {
			return p
		}
	}
	return nil
}
