package matrix

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// The one CUDA <-> driver judgement. checkCUDA (validate) and CUDAGuard (the
// facts the generated Terraform guards evaluate) both read a release's needs
// through cudaNeeds and a cuda-compat package's reach through
// forwardReach, so the guard in the Terraform accepts exactly the driver and
// CUDA pairs that validate accepts without an error.

// cudaNeeds is what toolkit release t needs of an exact driver: native is the
// minimum for full support (the release notes' minimum driver, else the
// branch as branch.0.0; nil when the matrix knows neither); floor is the
// minor-version compatibility floor of t's major (nil when the matrix has no
// family for it). A driver >= native runs t fully; else a driver >= floor
// runs it under minor-version compatibility (CUDA-MINOR-COMPAT, a
// warning); else it cannot run it (CUDA-DRIVER-MIN, an error).
func (c *catalog) cudaNeeds(t *toolkitFact) (native, floor Version) {
	switch {
	case t.minDriver != nil:
		native = t.minDriver
	case t.Branch != 0:
		native = Version{t.Branch}
	}
	if fam := c.family(t.version.Major()); fam != nil {
		floor = fam.floor
	}
	return native, floor
}

// exactDriverRuns reports how an exact driver runs release t: ok is false
// when validate reports an error (below the native minimum and below the
// floor, or below a native minimum with no floor); minorOnly is true when it
// runs only under minor-version compatibility.
func (c *catalog) exactDriverRuns(t *toolkitFact, d Version) (ok, minorOnly bool) {
	native, floor := c.cudaNeeds(t)
	switch {
	case native != nil && !d.Less(native):
		return true, false
	case floor != nil && !d.Less(floor):
		return true, native != nil
	}
	return false, false
}

// forwardReach is where the cuda-compat package p serves a driver branch:
// the branches of the columns it runs on (half-open [from, to) ranges,
// adjacent ranges merged), the branch from which the driver runs p's CUDA
// natively (0: none), and the branch above which no package is published
// (0: none; a newer driver needs none).
func (c *catalog) forwardReach(p *compatPackages) (ranges [][2]int, native, above int) {
	cols := c.cuda.Forward.Columns
	for i, col := range cols {
		if !slices.Contains(p.RunsOn, col) {
			continue
		}
		to := 1 << 30
		if i+1 < len(cols) {
			to = cols[i+1]
		}
		if n := len(ranges); n > 0 && ranges[n-1][1] == col {
			ranges[n-1][1] = to
			continue
		}
		ranges = append(ranges, [2]int{col, to})
	}
	if len(p.RunsOn) > 0 {
		above = p.RunsOn[len(p.RunsOn)-1]
	}
	return ranges, p.Native, above
}

// CUDAGuard is the CUDA -> driver table of the matrix in the form the
// generated Terraform evaluates: every key is a CUDA version as a spec
// writes it, with numeric components ("12.4" for 12.4 GA, "12.4.1"), and
// every driver a version string ("550.54.15"; "610" where NVIDIA gives only
// the branch).
type CUDAGuard struct {
	// Native maps a release ("X.Y" for its GA, "X.Y.Z" for the version and
	// its aliases) to its minimum driver for full support; "" where the
	// matrix knows none.
	Native map[string]string
	// MinorNewest maps "X.Y" to the minimum of the newest known release of
	// that minor: an update the table does not list is judged against it.
	MinorNewest map[string]string
	// NeverReleased are the "X.Y" minors the matrix knows were never
	// released (12.7).
	NeverReleased []string
	// Oldest and Newest bound the minors the matrix knows ([major, minor]):
	// a minor between them that is not listed was never released (an
	// error); one outside them is unknown (not judged).
	Oldest, Newest [2]int
	// Floors maps a CUDA major ("12") to its minor-version compatibility
	// floor.
	Floors map[string]string
	// Source, AsOf: of the toolkit table and of the minor-compat floors.
	Sources []string
	AsOf    string
}

// CUDADriverGuard returns the CUDA table the generated guards evaluate; it is
// built from the same facts and through the same function (cudaNeeds) as
// validate's CUDA-DRIVER-MIN and CUDA-UNKNOWN rules.
func CUDADriverGuard() CUDAGuard {
	c := cat()
	g := CUDAGuard{Native: map[string]string{}, MinorNewest: map[string]string{}, Floors: map[string]string{}}
	newest := map[string]*toolkitFact{}
	first := c.cuda.Toolkits[0].version
	g.Oldest = [2]int{first[0], minor(first)}
	n := c.newestCUDA().version
	g.Newest = [2]int{n[0], minor(n)}
	text := func(t *toolkitFact) string {
		native, _ := c.cudaNeeds(t)
		switch {
		case native == nil:
			return ""
		case t.minDriver != nil:
			return t.MinDriver
		}
		return strconv.Itoa(t.Branch)
	}
	for i := range c.cuda.Toolkits {
		t := &c.cuda.Toolkits[i]
		mk := fmt.Sprintf("%d.%d", t.version[0], minor(t.version))
		if !t.exists() {
			if !slices.Contains(g.NeverReleased, mk) {
				g.NeverReleased = append(g.NeverReleased, mk)
			}
			continue
		}
		g.Sources = appendUnique(g.Sources, t.Source)
		for _, v := range append([]Version{t.version}, t.aliases...) {
			g.Native[v.String()] = text(t)
		}
		if t.GA {
			g.Native[mk] = text(t)
		}
		if cur, ok := newest[mk]; !ok || cur.version.Less(t.version) {
			newest[mk] = t
		}
	}
	for mk, t := range newest {
		g.MinorNewest[mk] = text(t)
	}
	for _, f := range c.cuda.MinorCompat.Families {
		g.Floors[strconv.Itoa(f.Major)] = f.Floor
	}
	g.Sources = appendUnique(g.Sources, c.cuda.MinorCompat.Source)
	sort.Strings(g.NeverReleased)
	g.AsOf = c.cuda.MinorCompat.AsOf
	return g
}

// ForwardGuard is what a cuda-compat package needs of the driver, in the
// form the generated Terraform evaluates (driver branches).
type ForwardGuard struct {
	// CUDA is the package's major.minor.
	CUDA [2]int
	// RunsOn are the driver branch ranges [from, to) the package runs on.
	RunsOn [][2]int
	// Native is the branch from which the driver runs CUDA natively and the
	// package is not needed (0: none): a warning, not an error.
	Native int
	// Above is the newest branch the package is published for: a newer
	// driver needs none (a warning).
	Above int
	// NFB are the New Feature Branches, which are no forward-compatibility
	// targets (an error where the package is used on one).
	NFB    []int
	Source string
}

// CUDAForwardGuard returns the facts of the cuda-compat package for CUDA
// compat ("13.0"), as validate's CUDA-FORWARD-COMPAT rule judges them; ok is
// false when the matrix has no such package.
func CUDAForwardGuard(compat string) (ForwardGuard, bool) {
	c := cat()
	cv, err := ParseVersion(compat)
	if err != nil || len(cv) < 2 {
		return ForwardGuard{}, false
	}
	p := c.compatPackage(cv)
	if p == nil {
		return ForwardGuard{}, false
	}
	g := ForwardGuard{CUDA: [2]int{cv[0], minor(cv)}, Source: c.cuda.Forward.Source}
	g.RunsOn, g.Native, g.Above = c.forwardReach(p)
	for b, f := range c.branches {
		if f.Type == "NFB" {
			g.NFB = append(g.NFB, b)
		}
	}
	sort.Ints(g.NFB)
	return g, true
}

// DriverRunsCUDA reports whether validate accepts an exact driver with the
// workloads' CUDA version (and their cuda-compat package, "" for none)
// without an error from the CUDA rules (CUDA-DRIVER-MIN, CUDA-UNKNOWN,
// CUDA-FORWARD-COMPAT); why says what fails. dataCenter is whether the GPU
// is a data-center product (forward compatibility serves only those). A
// CUDA version outside the matrix is accepted: validate does not judge it.
func DriverRunsCUDA(driver, cuda, compat string, dataCenter bool) (ok bool, why string) {
	c := cat()
	d, err := ParseVersion(driver)
	if err != nil {
		return false, err.Error()
	}
	r := c.resolveCUDA(cuda)
	switch {
	case r.err != nil:
		return false, r.err.Error()
	case r.nonexistent:
		return false, "CUDA " + cuda + " was never released"
	}
	var p *compatPackages
	if compat != "" {
		if p, why = c.usableCompat(compat, cuda, r.v, dataCenter); p == nil {
			return false, why
		}
		if why := c.compatOnBranch(p, compat, d.Major()); why != "" {
			return false, why
		}
	}
	if r.unknown {
		return true, ""
	}
	if p != nil && !(Version{p.cuda[0], minor(p.cuda)}).Less(Version{r.v[0], minor(r.v)}) && c.forwardServes(p, d.Major()) {
		return true, ""
	}
	if ok, _ := c.exactDriverRuns(r.tk, d); !ok {
		return false, fmt.Sprintf("driver %s is below CUDA %s's minimum and its major's minor-compatibility floor", driver, cuda)
	}
	return true, ""
}

// usableCompat is the cuda-compat package compat ("13.0") for the
// workloads' CUDA cuda (parsed: v) on a GPU that is a data-center product
// or not; nil and why where there is no such package, forward
// compatibility does not serve the GPU, or the package is older than the
// CUDA.
func (c *catalog) usableCompat(compat, cuda string, v Version, dataCenter bool) (*compatPackages, string) {
	cv, err := ParseVersion(compat)
	if err != nil || len(cv) < 2 {
		return nil, fmt.Sprintf("cudaCompat %q is not a CUDA major.minor version", compat)
	}
	p := c.compatPackage(cv)
	switch {
	case p == nil:
		return nil, "no cuda-compat " + compat + " package"
	case !dataCenter:
		return nil, "forward compatibility needs a data-center GPU"
	case len(v) >= 2 && (Version{cv[0], minor(cv)}).Less(Version{v[0], minor(v)}):
		return nil, "cuda-compat " + compat + " is older than CUDA " + cuda
	}
	return p, ""
}

// compatOnBranch says why cuda-compat package p (named compat) fails on
// driver branch b, or "": a branch that runs the CUDA natively or is newer
// than any published package needs none; another must be one the package
// runs on and no New Feature Branch.
func (c *catalog) compatOnBranch(p *compatPackages, compat string, b int) string {
	_, native, above := c.forwardReach(p)
	switch {
	case native != 0 && b >= native:
	case !c.forwardServes(p, b):
		if !(above > 0 && b > above) {
			return fmt.Sprintf("cuda-compat %s does not run on R%d", compat, b)
		}
	default:
		if f, ok := c.branches[b]; ok && f.Type == "NFB" {
			return fmt.Sprintf("R%d is a New Feature Branch, no forward-compatibility target", b)
		}
	}
	return ""
}
