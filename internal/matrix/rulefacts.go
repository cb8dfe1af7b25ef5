package matrix

import (
	"maps"
	"slices"
	"time"
)

// What the validation rules (package rules) read of the catalogue beyond
// the lookups the other facts files export.

// SourceEKSUpdateConfig documents an EKS node group's updateConfig (the
// most nodes an update takes at once).
const SourceEKSUpdateConfig = srcEKSUpdate

// Nearest returns up to n of candidates closest to s, for "did you mean".
func Nearest(s string, candidates []string, n int) []string { return nearest(s, candidates, n) }

// CloseEnough returns the candidate close enough to s to suggest, or "":
// the one did-you-mean threshold of enum values and names.
func CloseEnough(s string, candidates []string) string { return closeEnough(s, candidates) }

// NormalizeGPU folds a GPU name for comparison ("H100 SXM" -> "h100sxm").
func NormalizeGPU(s string) string { return normalizeGPU(s) }

// Catalog is the embedded catalogue as the rules read it (Facts).
type Catalog = catalog

// Facts returns the embedded catalogue.
func Facts() *Catalog { return cat() }

// The catalogue's record types the rules name.
type (
	OperatorRelease = operatorFact
	GKEReleaseMinor = gkeReleaseMinor
	EKSVersion      = eksVersion
	CompatPackage   = compatPackages
)

// forwardServes reports whether cuda-compat package p runs on a driver of
// branch (forwardReach, which the generated guards evaluate too).
func (c *catalog) forwardServes(p *compatPackages, branch int) bool {
	ranges, _, _ := c.forwardReach(p)
	for _, r := range ranges {
		if branch >= r[0] && branch < r[1] {
			return true
		}
	}
	return false
}

// LookupDriverBranch returns the facts of driver branch n (570), if known.
func LookupDriverBranch(n int) (DriverBranch, bool) {
	b, ok := cat().branches[n]
	if !ok {
		return DriverBranch{}, false
	}
	return branchOf(b), true
}

// ParseMonthOrDate reads YYYY-MM-DD, or YYYY-MM meaning the end of that
// month, as the data does; it returns the first instant after the date.
func ParseMonthOrDate(s string) (time.Time, error) { return parseDate(s) }

// ForwardServes reports whether cuda-compat package p runs on a driver of
// branch (the forward-compatibility matrix, as the generated guards read it).
func (c *catalog) ForwardServes(p *CompatPackage, branch int) bool { return c.forwardServes(p, branch) }

// The data files' tables, as decoded (data/*.yaml).
func (c *catalog) CUDA() *cudaFile         { return &c.cuda }
func (c *catalog) AWS() *awsFile           { return &c.aws }
func (c *catalog) GCP() *gcpFile           { return &c.gcp }
func (c *catalog) Operator() *operatorFile { return &c.operator }
func (c *catalog) NCCL() *ncclFile         { return &c.nccl }

// Product returns the GPU product with ID id, or nil.
func (c *catalog) Product(id string) *productFact { return c.products[id] }

// Accelerators are GKE's accelerator types by name.
func (c *catalog) Accelerators() map[string]*acceleratorFact { return c.accelerators }

// AMI returns the EKS AMI type's facts, or nil.
func (c *catalog) AMI(name string) *AMIFact { return c.amis[name] }

// AMITypes lists the EKS AMI types the matrix knows, sorted.
func AMITypes() []string { return slices.Sorted(maps.Keys(cat().amis)) }

// NCCLKnown reports whether NCCL reads the variable k.
func (c *catalog) NCCLKnown(k string) bool { return c.ncclKnown[k] }

// GFDLabel reports whether GPU Feature Discovery writes the label k.
func (c *catalog) GFDLabel(k string) bool { return c.gfdLabels[k] }

// CompatPackage returns the cuda-compat package of CUDA major.minor v, or
// nil.
func (c *catalog) CompatPackage(v Version) *CompatPackage { return c.compatPackage(v) }

// OperatorRelease returns the facts of GPU Operator version, or nil.
func (c *catalog) OperatorRelease(version string) *OperatorRelease { return c.operatorRelease(version) }

// OperatorRange returns the validated Kubernetes range of a GPU Operator
// release (the CSP range when csp and known) and the release it comes from
// (an earlier release of the same line when the release has none).
func (c *catalog) OperatorRange(version string, csp bool) (lo, hi Version, from string, ok bool) {
	return c.operatorRange(version, csp)
}

// GPUFamilyName returns the family a name stands for when it names a
// family rather than a product ("H100" for the H100 products).
func (c *catalog) GPUFamilyName(name string) (string, bool) { return c.gpuFamilyName(name) }

// CUDAFamily returns the minor-version compatibility family of a CUDA
// major version, or nil.
func (c *catalog) CUDAFamily(major int) *minorFamily { return c.family(major) }

// Floor is the family's driver floor, parsed.
func (f *minorFamily) FloorVersion() Version { return f.floor }

// ResolveCUDA maps a spec CUDA version to a toolkit release: "X.Y" is X.Y
// GA; "X.Y.Z" matches the release numbers NVIDIA ships.
func (c *catalog) ResolveCUDA(s string) CUDAResolution {
	r := c.resolveCUDA(s)
	return CUDAResolution{Version: r.v, Toolkit: r.tk, Nonexistent: r.nonexistent, Fallback: r.fallback, Unknown: r.unknown, Err: r.err}
}

// CUDAResolution is what ResolveCUDA finds.
type CUDAResolution struct {
	Version     Version
	Toolkit     *Toolkit // nil when none matches
	Nonexistent bool     // a release that never existed (12.7)
	Fallback    bool     // X.Y.Z unknown; Toolkit is the newest known release of X.Y
	Unknown     bool     // newer (or older) than anything the matrix knows
	Err         error
}

// Toolkit is one CUDA toolkit release's facts.
type Toolkit = toolkitFact

// ParsedVersion is the toolkit's version, parsed.
func (t *toolkitFact) ParsedVersion() Version { return t.version }

// MinDriverVersion is the toolkit's minimum driver, parsed; nil when none.
func (t *toolkitFact) MinDriverVersion() Version { return t.minDriver }

// Released reports whether the release exists (not a number NVIDIA skipped).
func (t *toolkitFact) Released() bool { return t.exists() }

// NewestCUDA is the newest toolkit release the matrix knows.
func (c *catalog) NewestCUDA() *Toolkit { return c.newestCUDA() }

// CUDANeeds returns the driver a toolkit needs natively and its minor
// compatibility floor.
func (c *catalog) CUDANeeds(t *Toolkit) (native, floor Version) { return c.cudaNeeds(t) }

// ExactDriverRuns reports whether driver d runs toolkit t, and whether only
// under minor-version compatibility.
func (c *catalog) ExactDriverRuns(t *Toolkit, d Version) (ok, minorOnly bool) {
	return c.exactDriverRuns(t, d)
}

// MinorVersion is the GKE minor, parsed.
func (m *gkeReleaseMinor) MinorVersion() Version { return m.minor }

// RegularDate is the first instant after the minor reached the Regular
// channel; EndStandardDate the first after its end of standard support.
func (m *gkeReleaseMinor) RegularDate() time.Time     { return m.regular }
func (m *gkeReleaseMinor) EndStandardDate() time.Time { return m.endStandard }

// EndStandardDate and EndExtendedDate are the first instants after the EKS
// version's standard and extended support end.
func (e *eksVersion) EndStandardDate() time.Time { return e.endStandard }
func (e *eksVersion) EndExtendedDate() time.Time { return e.endExtended }

// Sources are the fact's source URLs (Source, Source2), the empty ones left
// out.
func (f Provenance) Sources() []string { return f.sources() }

// ParsedVersion is the device plugin release's version, parsed.
func (p *pluginFact) ParsedVersion() Version { return p.version }

// MinorCompatFamily is one CUDA major version's minor-version
// compatibility facts (its driver floor).
type MinorCompatFamily = minorFamily
