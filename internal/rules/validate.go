package rules

import (
	"sort"
	"strings"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Options tune a validation run.
type Options struct {
	// AsOf is the date lifecycle rules evaluate at (driver EOL, EKS support,
	// waivers); the zero value means today (UTC).
	AsOf time.Time
	// Policy is the organisation's default policy (a --policy file); the
	// spec's own spec.policy overrides it field by field (spec.MergePolicy).
	// With neither, no POLICY-* rule fires.
	Policy *spec.Policy
	// Unknown are the facts of the spec its source could not know (an
	// import's unknown values), by spec path: an empty field listed here is
	// unknown, not absent, and the rules that need it say what they could
	// not judge instead of reporting it missing. Nil: every empty field is
	// absent.
	Unknown map[string]Unknown
}

func (o Options) asOf() time.Time {
	if o.AsOf.IsZero() {
		return time.Now().UTC()
	}
	return o.AsOf
}

// Validate checks a resolved cluster spec (no environments: see
// spec.Document.Resolve) against the matrix and returns its findings sorted
// by path, then rule. Each finding has Path set to the field to change;
// File, Line, Column and Environment are left for the caller. A nil spec
// yields no findings. Validate never fails: what it cannot judge it reports
// as an info finding (MATRIX-UNKNOWN-FACT).
func Validate(cs *spec.ClusterSpec, opts Options) []diag.Finding {
	return ValidateReport(cs, opts).Findings
}

// validate runs every rule on cs (not nil).
func validate(cs *spec.ClusterSpec, opts Options) *validator {
	v := newValidator(opts)
	v.cs, v.s = cs, &cs.Spec
	v.policy = spec.MergePolicy(opts.Policy, cs.Spec.Policy)
	v.checkSpec()
	v.checkAutoscaler()
	v.checkOperator()
	for i := range v.s.NodePools {
		pf := matrix.ResolvePool(cs, i)
		pc := &pf
		v.checkMachine(pc)
		v.checkGKENodeImage(pc)
		v.checkGKECapacity(pc)
		v.checkAMI(pc)
		v.checkEKSPool(pc)
		v.checkDiskSizeSet(pc)
		v.checkLocalStorage(pc)
		v.checkRelease(pc)
		v.checkDriverOwner(pc)
		v.checkOperatorPool(pc)
		v.checkDevicePlugin(pc)
		v.checkCompat(poolSubject(pc))
		v.checkSharing(pc)
		v.checkLabels(pc)
		v.checkNCCL(pc)
		v.checkUpgrades(pc)
		v.checkPoolPolicy(pc)
	}
	v.checkVPCCNI()
	v.checkMaintenanceWindows()
	v.checkClusterPolicy()
	v.checkAcceptance()
	v.checkDataAge(true)
	v.reportNotJudged()
	for i := range v.findings {
		v.findings[i].Sources = sourcesFor(cs.Spec.Provider, v.findings[i].Sources)
	}
	return v
}

// otherCloud lists URL fragments of each provider's documentation; a
// finding on a GKE spec drops AWS sources (and the other way round) when
// sources of its own cloud or vendor remain.
var otherCloud = map[string][]string{
	spec.ProviderGKE: {"aws.amazon.com", "awslabs", "bottlerocket", "amazonaws"},
	spec.ProviderEKS: {"cloud.google.com", "cos.googlesource.com", "GoogleCloudPlatform"},
}

func sourcesFor(provider string, sources []string) []string {
	drop := otherCloud[provider]
	if len(drop) == 0 {
		return sources
	}
	kept := make([]string, 0, len(sources))
	for _, s := range sources {
		other := false
		for _, d := range drop {
			if strings.Contains(s, d) {
				other = true
				break
			}
		}
		if !other {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return sources
	}
	return kept
}

type validator struct {
	c        *matrix.Catalog
	cs       *spec.ClusterSpec
	s        *spec.Spec
	asOf     time.Time
	k8s      matrix.Version // the parsed kubernetesVersion's major.minor, nil when unset or bad
	k8sVer   matrix.KubernetesVersion
	findings []diag.Finding

	policy *spec.Policy // the policy in force; nil: none
	// GPU capacity (autoscaling.max x GPUs per node) for maxSpotShare.
	gpuCapacity, spotCapacity float64
	unboundedSpot             []int // spot pools without autoscaling.max

	unknowns map[string]Unknown    // Options.Unknown
	skipped  map[string]*NotJudged // by the unknown fact's path
}

func newValidator(opts Options) *validator {
	return &validator{c: matrix.Facts(), asOf: opts.asOf(), unknowns: opts.Unknown}
}

// add records a finding. sev "" means the rule's severity; fix "" the
// rule's fix. Sources are the facts' URLs, followed by the rule's own.
func (v *validator) add(rule string, sev diag.Severity, path, msg, fix string, sources ...string) {
	r, ok := ruleIndex[rule]
	if !ok {
		panic("matrix: finding with unregistered rule " + rule)
	}
	if sev == "" {
		sev = r.Severity
	}
	if fix == "" {
		fix = r.Fix
	}
	srcs := appendUnique([]string{}, sources...)
	srcs = appendUnique(srcs, r.Sources...)
	v.findings = append(v.findings, diag.Finding{Rule: rule, Severity: sev, Message: msg, Fix: fix, Sources: srcs, Path: path})
}

// unknown records a MATRIX-UNKNOWN-FACT note.
func (v *validator) unknown(path, msg string, sources ...string) {
	v.add(RuleUnknownFact, diag.SeverityInfo, path, msg, "", sources...)
}

// beyond adds a MATRIX-BEYOND-TABLE warning: a spec value lies beyond the
// range of the table that would judge it (msg names the table and its
// date).
func (v *validator) beyond(path, msg string, sources ...string) {
	v.add(RuleBeyondTable, diag.SeverityWarning, path, msg, "", sources...)
}

func (v *validator) result() []diag.Finding {
	seen := map[string]bool{}
	out := []diag.Finding{}
	for _, f := range v.findings {
		k := f.Rule + "\x00" + f.Path + "\x00" + f.Message
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, f)
	}
	SortFindings(out)
	return out
}

// SortFindings orders findings by path, then rule, then message, the order
// Validate, Check and ApplyWaivers return.
func SortFindings(fs []diag.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
}

func (v *validator) gke() bool { return v.s.Provider == spec.ProviderGKE }
func (v *validator) eks() bool { return v.s.Provider == spec.ProviderEKS }

func (v *validator) date(t time.Time) string { return t.Format("2006-01-02") }

// operatorRelease returns the facts of the configured GPU Operator version,
// or nil.
func (v *validator) operatorRelease() *matrix.OperatorRelease {
	return v.c.OperatorRelease(v.s.Addons.GPUOperator.Version)
}

// checkDataAge adds the MATRIX-DATA-STALE note when the data is stale at
// the validator's date; Validate (tables true) notes otherwise the tables
// that are, each with its date (Check's queries use too few tables for
// that to help).
func (v *validator) checkDataAge(tables bool) {
	const fix = "Upgrade gpuctl to a release with newer data, or pass --as-of to judge as of an earlier date."
	if note := matrix.DataStaleNote(v.asOf); note != "" {
		v.add(RuleDataStale, diag.SeverityInfo, "", note, fix)
		return
	}
	if !tables {
		return
	}
	if note := matrix.TableStaleNoteFor(v.asOf, v.s.Provider); note != "" {
		v.add(RuleDataStale, diag.SeverityInfo, "", note, fix)
	}
}
