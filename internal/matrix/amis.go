package matrix

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// amis.yaml: the releases of the EKS NVIDIA AMI types (AL2023, AL2,
// Bottlerocket) with the Kubernetes minor each is published for, its date
// and its NVIDIA driver; their index and lookups.

// amisFile is data/amis.yaml as decoded; indexed by (*catalog).indexAMIs.
type amisFile struct {
	EKSReleases          []eksReleaseFact          `yaml:"eks_releases"`
	EKSTags              []eksTagFact              `yaml:"eks_tags"`
	BottlerocketReleases []bottlerocketReleaseFact `yaml:"bottlerocket_releases"`
}

type eksReleaseFact struct {
	Provenance `yaml:",inline"`
	Release    string            `yaml:"release"`
	Kubernetes string            `yaml:"kubernetes"`
	Date       string            `yaml:"date"`
	Drivers    map[string]string `yaml:"drivers"`
	// Published lists the AMI types of the release where one of them ships
	// a driver the notes do not state; empty: the keys of Drivers.
	Published []string `yaml:"published"`
}

type eksTagFact struct {
	Provenance `yaml:",inline"`
	Tag        string `yaml:"tag"`
	Date       string `yaml:"date"`
}

type bottlerocketReleaseFact struct {
	Provenance `yaml:",inline"`
	Version    string            `yaml:"version"`
	Listed     string            `yaml:"listed"`
	FIPS       bool              `yaml:"fips"`
	Drivers    map[string]string `yaml:"drivers"` // Kubernetes minor -> driver ("" unstated)
}

// Tables of amis.yaml, as TableDates names them.
const (
	TableEKSReleases          = "amis eks_releases"
	TableBottlerocketReleases = "amis bottlerocket_releases"
)

// AMIRelease is one release of an EKS AMI type for one Kubernetes minor.
type AMIRelease struct {
	// AMIType is the EKS AMI type ("AL2023_x86_64_NVIDIA").
	AMIType string `json:"amiType"`
	// Release is the release version: for AL2023 and AL2 the string a
	// node group's releaseVersion takes ("1.34.2-20251209"); for
	// Bottlerocket the OS version ("1.54.0"), which releaseVersion
	// follows with "-" and a commit.
	Release string `json:"release"`
	// Kubernetes is the minor the release is published for ("1.34").
	Kubernetes string `json:"kubernetes"`
	// Date is the release date (AL2023/AL2: the date in the release
	// version); for Bottlerocket the day its GPU driver page was listed,
	// on or after the release (DateListed true).
	Date       string `json:"date"`
	DateListed bool   `json:"dateListed,omitempty"`
	// Driver is the NVIDIA driver version the release ships ("580.105.08");
	// "" where the source does not state it.
	Driver string `json:"driver"`
	// CUDA is the CUDA toolkit the AMI ships, where the notes state one.
	CUDA   string `json:"cuda,omitempty"`
	Source string `json:"source"`
	AsOf   string `json:"asOf"`

	date time.Time
	ver  Version // Bottlerocket: the OS version; AL: the Kubernetes patch
}

// Bottlerocket AMI types and the one each FIPS type follows.
var bottlerocketNVIDIA = []string{"BOTTLEROCKET_x86_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA"}

// IsBottlerocket reports whether the EKS AMI type is a Bottlerocket one.
func IsBottlerocket(amiType string) bool { return strings.HasPrefix(amiType, "BOTTLEROCKET_") }

var (
	alRelease = regexp.MustCompile(`^(1\.\d+)\.(\d+)-(\d{8})$`)
	brRelease = regexp.MustCompile(`^(\d+\.\d+\.\d+)-([0-9a-f]{8})$`)
)

// ReleaseVersion is an EKS releaseVersion read: for AL2023/AL2
// "<k8s patch>-<YYYYMMDD>" (Kubernetes "1.34", Date 2025-12-09), for
// Bottlerocket "<OS version>-<commit>" (OS "1.54.0").
type ReleaseVersion struct {
	Raw        string
	Kubernetes string    // AL2023/AL2: the minor of the prefix ("1.34")
	Date       time.Time // AL2023/AL2: the date of the suffix
	OS         Version   // Bottlerocket: the OS version
}

// ParseReleaseVersion reads the releaseVersion s of an AMI type; an error
// when s is not of the type's form.
func ParseReleaseVersion(amiType, s string) (ReleaseVersion, error) {
	if IsBottlerocket(amiType) {
		m := brRelease.FindStringSubmatch(s)
		if m == nil {
			return ReleaseVersion{}, fmt.Errorf("release version %q is not <Bottlerocket version>-<commit>", s)
		}
		return ReleaseVersion{Raw: s, OS: MustVersion(m[1])}, nil
	}
	m := alRelease.FindStringSubmatch(s)
	if m == nil {
		return ReleaseVersion{}, fmt.Errorf("release version %q is not <Kubernetes version>-<YYYYMMDD>", s)
	}
	d, err := time.Parse("20060102", m[3])
	if err != nil {
		return ReleaseVersion{}, fmt.Errorf("release version %q: %w", s, err)
	}
	return ReleaseVersion{Raw: s, Kubernetes: m[1], Date: d}, nil
}

// indexAMIs checks amis.yaml (versions, dates, the AMI types named) and
// builds the flat release list, newest first per AMI type.
func (c *catalog) indexAMIs() error {
	var out []AMIRelease
	for _, r := range c.amisData.EKSReleases {
		rs, err := c.eksReleaseRows(r)
		if err != nil {
			return err
		}
		out = append(out, rs...)
	}
	for _, t := range c.amisData.EKSTags {
		if _, err := time.Parse("2006-01-02", t.Date); err != nil {
			return fmt.Errorf("eks tag %s: %w", t.Tag, err)
		}
	}
	for _, r := range c.amisData.BottlerocketReleases {
		rs, err := c.bottlerocketRows(r)
		if err != nil {
			return err
		}
		out = append(out, rs...)
	}
	slices.SortStableFunc(out, compareReleases)
	c.amiReleases = out
	return nil
}

// compareReleases orders by AMI type, then newest first (date, then
// version), then Kubernetes minor descending.
func compareReleases(a, b AMIRelease) int {
	if x := strings.Compare(a.AMIType, b.AMIType); x != 0 {
		return x
	}
	if x := b.date.Compare(a.date); x != 0 {
		return x
	}
	if x := b.ver.Compare(a.ver); x != 0 {
		return x
	}
	return MustVersion(b.Kubernetes).Compare(MustVersion(a.Kubernetes))
}

// eksReleaseRows are the rows of one AL2023/AL2 release, one per AMI type.
func (c *catalog) eksReleaseRows(r eksReleaseFact) ([]AMIRelease, error) {
	rv, err := ParseReleaseVersion("AL2023_x86_64_NVIDIA", r.Release)
	if err != nil {
		return nil, err
	}
	if rv.Kubernetes != r.Kubernetes || rv.Date.Format("2006-01-02") != r.Date {
		return nil, fmt.Errorf("eks release %s: kubernetes %s / date %s differ from the version's", r.Release, r.Kubernetes, r.Date)
	}
	types := r.Published
	if len(types) == 0 {
		for t := range r.Drivers {
			types = append(types, t)
		}
	}
	out := make([]AMIRelease, 0, len(types))
	for _, t := range types {
		if c.amis[t] == nil {
			return nil, fmt.Errorf("eks release %s: unknown AMI type %s", r.Release, t)
		}
		if d := r.Drivers[t]; d != "" {
			if _, err := parseV("eks release "+r.Release, d); err != nil {
				return nil, err
			}
		}
		out = append(out, AMIRelease{AMIType: t, Release: r.Release, Kubernetes: r.Kubernetes, Date: r.Date,
			Driver: r.Drivers[t], Source: r.Source, AsOf: r.AsOf, date: rv.Date, ver: MustVersion(r.Kubernetes + ".0")})
	}
	return out, nil
}

// bottlerocketRows are the rows of one Bottlerocket version: per AMI type
// (the FIPS ones where fips) and Kubernetes minor.
func (c *catalog) bottlerocketRows(r bottlerocketReleaseFact) ([]AMIRelease, error) {
	v, err := parseV("bottlerocket "+r.Version, r.Version)
	if err != nil {
		return nil, err
	}
	d, err := time.Parse("2006-01-02", r.Listed)
	if err != nil {
		return nil, fmt.Errorf("bottlerocket %s: %w", r.Version, err)
	}
	types := slices.Clone(bottlerocketNVIDIA)
	if r.FIPS {
		types = append(types, bottlerocketNVIDIA[0]+"_FIPS", bottlerocketNVIDIA[1]+"_FIPS")
	}
	var out []AMIRelease
	for _, t := range types {
		for minor, drv := range r.Drivers {
			if _, err := parseV("bottlerocket "+r.Version, minor); err != nil {
				return nil, err
			}
			if drv != "" {
				if _, err := parseV("bottlerocket "+r.Version, drv); err != nil {
					return nil, err
				}
			}
			out = append(out, AMIRelease{AMIType: t, Release: r.Version, Kubernetes: minor, Date: r.Listed, DateListed: true,
				Driver: drv, Source: r.Source, AsOf: r.AsOf, date: d, ver: v})
		}
	}
	return out, nil
}

// AMIReleaseFilter selects releases: the zero value selects all.
type AMIReleaseFilter struct {
	AMIType    string // "" any
	Kubernetes string // a minor ("1.34"), "" any
	Driver     string // a driver version, or a branch ("580"), "" any
}

func (f AMIReleaseFilter) match(r AMIRelease) bool {
	return (f.AMIType == "" || strings.EqualFold(f.AMIType, r.AMIType)) &&
		(f.Kubernetes == "" || f.Kubernetes == r.Kubernetes) &&
		(f.Driver == "" || (r.Driver != "" && sameVersion(f.Driver, r.Driver)))
}

// sameVersion reports whether driver b is driver a, or of branch a where a
// is a branch ("580").
func sameVersion(a, b string) bool {
	x, err1 := ParseVersion(a)
	y, err2 := ParseVersion(b)
	if err1 != nil || err2 != nil {
		return false
	}
	if len(x) == 1 {
		return x.Major() == y.Major()
	}
	return x.Compare(y) == 0
}

// AMIReleases returns the releases the filter selects, by AMI type, newest
// first (data/amis.yaml; sources: awslabs/amazon-eks-ami release notes,
// bottlerocket.dev GPU driver pages).
func AMIReleases(f AMIReleaseFilter) []AMIRelease {
	var out []AMIRelease
	for _, r := range cat().amiReleases {
		if f.match(r) {
			out = append(out, r)
		}
	}
	return out
}

// AMIReleasesWithDriver returns the releases of amiType that ship driver
// (an exact version), for Kubernetes minor k8s ("" any), newest first; at
// most limit of them (0: all).
func AMIReleasesWithDriver(amiType, driver, k8s string, limit int) []AMIRelease {
	out := AMIReleases(AMIReleaseFilter{AMIType: amiType, Kubernetes: k8s, Driver: driver})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// NewestAMIReleases returns the newest release of amiType for each
// Kubernetes minor, by minor, newest minor first.
func NewestAMIReleases(amiType string) []AMIRelease {
	seen := map[string]bool{}
	var out []AMIRelease
	for _, r := range AMIReleases(AMIReleaseFilter{AMIType: amiType}) {
		if !seen[r.Kubernetes] {
			seen[r.Kubernetes] = true
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b AMIRelease) int { return MustVersion(b.Kubernetes).Compare(MustVersion(a.Kubernetes)) })
	return out
}

// ReleaseStatus is what the matrix knows of an AMI type's release version.
type ReleaseStatus int

// Release statuses of LookupAMIRelease.
const (
	// ReleaseNotTabled: the AMI type has no release table (standard AMIs,
	// CUSTOM), or the version is not of the type's form.
	ReleaseNotTabled ReleaseStatus = iota
	// ReleaseKnown: the table lists it (Releases: its rows, one per
	// Kubernetes minor).
	ReleaseKnown
	// ReleaseNoSuch: its date (Bottlerocket: version) lies within the
	// table's range, and the table does not list it; Releases: the type's
	// releases of the same date, if any.
	ReleaseNoSuch
	// ReleaseNewer: newer than the table's newest release.
	ReleaseNewer
	// ReleaseOlder: older than the table's oldest release.
	ReleaseOlder
	// ReleaseUnlisted: within the range, of a date with a tag but no
	// release notes (AL), or a Bottlerocket patch release of a minor the
	// table lists without that patch: it may exist.
	ReleaseUnlisted
)

// ReleaseLookup is LookupAMIRelease's answer.
type ReleaseLookup struct {
	Status   ReleaseStatus
	Version  ReleaseVersion
	Releases []AMIRelease
	// Table is the release table of the AMI type (TableEKSReleases,
	// TableBottlerocketReleases) and TableDate its date (its newest
	// as_of); Oldest and Newest its range (dates, or Bottlerocket
	// versions).
	Table          string
	TableDate      time.Time
	Oldest, Newest string
}

// TabledAMITypes returns the AMI types amis.yaml has releases of, sorted.
func TabledAMITypes() []string {
	seen := map[string]bool{}
	for _, r := range cat().amiReleases {
		seen[r.AMIType] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// tabled reports whether the AMI type has releases in amis.yaml.
func tabled(amiType string) bool {
	for _, r := range cat().amiReleases {
		if r.AMIType == amiType {
			return true
		}
	}
	return false
}

// LookupAMIRelease looks up releaseVersion rv of amiType in amis.yaml.
// The version's form is checked elsewhere (a version not of the type's
// form is ReleaseNotTabled).
func LookupAMIRelease(amiType, rv string) ReleaseLookup {
	v, err := ParseReleaseVersion(amiType, rv)
	if err != nil || !tabled(amiType) {
		return ReleaseLookup{Version: v}
	}
	if IsBottlerocket(amiType) {
		return lookupBottlerocket(amiType, v)
	}
	return lookupEKS(amiType, v)
}

func lookupEKS(amiType string, v ReleaseVersion) ReleaseLookup {
	c := cat()
	out := ReleaseLookup{Version: v, Table: TableEKSReleases, TableDate: tableDate(TableEKSReleases)}
	var oldest, newest time.Time
	for _, r := range c.amiReleases {
		if IsBottlerocket(r.AMIType) {
			continue
		}
		if oldest.IsZero() || r.date.Before(oldest) {
			oldest = r.date
		}
		if r.date.After(newest) {
			newest = r.date
		}
		if r.AMIType != amiType {
			continue
		}
		if r.Release == v.Raw {
			out.Releases = append(out.Releases, r)
		} else if r.date.Equal(v.Date) && out.Status == ReleaseNotTabled {
			out.Status = ReleaseNoSuch
		}
	}
	out.Oldest, out.Newest = oldest.Format("2006-01-02"), newest.Format("2006-01-02")
	switch {
	case len(out.Releases) > 0:
		out.Status = ReleaseKnown
	case v.Date.After(newest):
		out.Status = ReleaseNewer
	case v.Date.Before(oldest):
		out.Status = ReleaseOlder
	case out.Status == ReleaseNoSuch:
		out.Releases = AMIReleases(AMIReleaseFilter{AMIType: amiType})
		out.Releases = slices.DeleteFunc(out.Releases, func(r AMIRelease) bool { return !r.date.Equal(v.Date) })
	case c.eksTagDated(v.Date):
		out.Status = ReleaseUnlisted
	default:
		out.Status = ReleaseNoSuch
	}
	return out
}

// eksTagDated reports whether an amazon-eks-ami tag without release notes
// carries date d.
func (c *catalog) eksTagDated(d time.Time) bool {
	for _, t := range c.amisData.EKSTags {
		if t.Date == d.Format("2006-01-02") {
			return true
		}
	}
	return false
}

func lookupBottlerocket(amiType string, v ReleaseVersion) ReleaseLookup {
	out := ReleaseLookup{Version: v, Table: TableBottlerocketReleases, TableDate: tableDate(TableBottlerocketReleases)}
	var oldest, newest Version
	minorKnown := false
	for _, r := range AMIReleases(AMIReleaseFilter{AMIType: amiType}) {
		if oldest == nil || r.ver.Less(oldest) {
			oldest = r.ver
		}
		if newest == nil || newest.Less(r.ver) {
			newest = r.ver
		}
		if r.ver.Compare(v.OS) == 0 {
			out.Releases = append(out.Releases, r)
		}
		minorKnown = minorKnown || sameMinor(r.ver, v.OS)
	}
	out.Oldest, out.Newest = oldest.String(), newest.String()
	switch {
	case len(out.Releases) > 0:
		out.Status = ReleaseKnown
	case newest.Less(v.OS):
		out.Status = ReleaseNewer
	case v.OS.Less(oldest):
		out.Status = ReleaseOlder
	case minorKnown:
		out.Status = ReleaseUnlisted
	default:
		out.Status = ReleaseNoSuch
	}
	return out
}

// sameMinor reports whether versions a and b share major and minor.
func sameMinor(a, b Version) bool {
	return len(a) >= 2 && len(b) >= 2 && a[0] == b[0] && a[1] == b[1]
}

// releasesNamed is how many releases ReleasesShipping names at most.
const releasesNamed = 3

// ReleasesShipping says which releases of amiType ship driver for
// Kubernetes minor k8s ("" any): the newest three, or that none the matrix
// knows does. validate (EKS-RELEASE-PIN, EKS-RELEASE-DRIVER) and
// generate's refusal say the same.
func ReleasesShipping(amiType, driver, k8s string) string {
	rs := AMIReleasesWithDriver(amiType, driver, k8s, releasesNamed)
	on := ""
	if k8s != "" {
		on = " for Kubernetes " + k8s
	}
	if len(rs) == 0 {
		return fmt.Sprintf("no %s release the matrix knows%s ships driver %s", amiType, on, driver)
	}
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Release
		if IsBottlerocket(amiType) {
			names[i] = "Bottlerocket " + r.Release + " (releaseVersion " + r.Release + "-<commit>)"
		}
	}
	return fmt.Sprintf("%s releases%s that ship driver %s: %s", amiType, on, driver, strings.Join(names, ", "))
}
