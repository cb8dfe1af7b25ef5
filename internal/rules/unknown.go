package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Unknown is a fact of the spec that its source could not know, as
// opposed to one it leaves out: a value imported from a data source, a
// variable without a value, or what a module gpuctl does not read may
// install. A fact has three states: known (the field is set), unknown (the
// field is empty and Options.Unknown holds it) and absent (the field is
// empty and nothing says it is unknown). A rule never reports an error or a
// warning from an unknown fact: it says what it could not judge.
type Unknown struct {
	// Reason says why it is unknown, on one line, e.g. "it depends on
	// data.google_container_engine_versions.gke (main.tf:12)".
	Reason string
	// Hint says how to give the value, e.g. "pass --kubernetes-version
	// VERSION"; "" for the general --var / --var-file advice.
	Hint string
	// PlatformDefault: no file sets the value, so the platform picks its
	// default when it creates the resource (a GKE cluster on its release
	// channel's default version): not a value that may be anything, so
	// what it keeps from being judged is an info even for a deciding fact.
	PlatformDefault bool
}

// NotJudged is one unknown fact with the checks that could not be judged
// without it.
type NotJudged struct {
	// Path is the spec field of the fact, e.g. spec.kubernetesVersion.
	Path string `json:"path"`
	// What names the fact: "the Kubernetes version".
	What   string `json:"what"`
	Reason string `json:"reason"`
	Hint   string `json:"hint"`
	// Checks are the checks not judged, e.g. "GKE-DRIVER-OPTION (pool l4)",
	// sorted.
	Checks []string `json:"checks"`
	// Deciding: the fact decides whether the pools come up (the Kubernetes
	// version, a machine type, an OS image), so its finding is a warning.
	Deciding bool `json:"deciding"`
}

// defaultHint is how to give an unknown value when the source says nothing
// more precise.
const defaultHint = "give the value with --var NAME=VALUE or --var-file FILE"

// unknownFacts names the facts the rules ask about, by the last segment of
// their path, and says which decide whether the pools come up.
var unknownFacts = map[string]struct {
	what     string
	deciding bool
}{
	"kubernetesVersion": {"the Kubernetes version", true},
	"machineType":       {"the machine type", true},
	"instanceTypes":     {"the instance types", true},
	"osImage":           {"the OS image", true},
	"driver":            {"the GPU driver", true},
	"reservation":       {"the reservation", false},
	"type":              {"the GPU type", true},
	"provider":          {"the device plugin", false},
	"enabled":           {"the GPU Operator", false},
	"nodeSelector":      {"the device plugin's nodeSelector", false},
	"name":              {"the pool's name", false},
}

// unknownAt is the unknown fact at path or at a field above it; ok false
// when the fact is known or absent.
func (v *validator) unknownAt(paths ...string) (string, Unknown, bool) {
	for _, path := range paths {
		for p := path; p != ""; p = parentField(p) {
			if u, ok := v.unknowns[p]; ok {
				return path, u, true
			}
		}
	}
	return "", Unknown{}, false
}

// parentField drops a field path's last segment (spec.nodePools[0].gpu ->
// spec.nodePools[0] -> spec.nodePools -> spec); "" after spec.
func parentField(p string) string {
	if i := strings.LastIndexAny(p, ".["); i > 0 {
		return p[:i]
	}
	return ""
}

// notJudged records that check could not be judged on pool ("" for the
// cluster) because the fact at path is unknown; it reports whether the fact
// is unknown (false: absent, the caller judges as before).
func (v *validator) notJudged(check, pool string, paths ...string) bool {
	path, u, ok := v.unknownAt(paths...)
	if !ok {
		return false
	}
	if v.skipped == nil {
		v.skipped = map[string]*NotJudged{}
	}
	nj := v.skipped[path]
	if nj == nil {
		last := path[strings.LastIndexAny(path, ".]")+1:]
		fact := unknownFacts[last]
		nj = &NotJudged{Path: path, What: cmp.Or(fact.what, path), Reason: u.Reason, Hint: cmp.Or(u.Hint, defaultHint), Deciding: fact.deciding && !u.PlatformDefault}
		v.skipped[path] = nj
	}
	if pool != "" {
		check += " (pool " + pool + ")"
	}
	if !slices.Contains(nj.Checks, check) {
		nj.Checks = append(nj.Checks, check)
		slices.Sort(nj.Checks)
	}
	return true
}

// reportNotJudged adds one SPEC-UNKNOWN finding per unknown fact that kept
// checks from being judged: a warning for a deciding fact, else info.
func (v *validator) reportNotJudged() {
	for _, nj := range v.NotJudged() {
		sev := diag.SeverityInfo
		if nj.Deciding {
			sev = diag.SeverityWarning
		}
		msg := fmt.Sprintf("%s is unknown, not missing: %s; %d check(s) not judged: %s", nj.What, nj.Reason, len(nj.Checks), strings.Join(nj.Checks, ", "))
		v.add(RuleSpecUnknown, sev, nj.Path, msg, strings.ToUpper(nj.Hint[:1])+nj.Hint[1:]+".")
	}
}

// NotJudged lists the unknown facts of the last Validate run, by path.
func (v *validator) NotJudged() []NotJudged {
	out := make([]NotJudged, 0, len(v.skipped))
	for _, nj := range v.skipped {
		out = append(out, *nj)
	}
	slices.SortFunc(out, func(a, b NotJudged) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Report is a validation's findings and the checks it could not judge.
type Report struct {
	Findings  []diag.Finding
	NotJudged []NotJudged
}

// ValidateReport is Validate that also says which checks were not judged
// because a fact they need is unknown (Options.Unknown).
func ValidateReport(cs *spec.ClusterSpec, opts Options) Report {
	if cs == nil {
		return Report{Findings: []diag.Finding{}, NotJudged: []NotJudged{}}
	}
	v := validate(cs, opts)
	return Report{Findings: v.result(), NotJudged: v.NotJudged()}
}

// devicePluginPaths are the fields whose unknown value may install a device
// plugin on pool i: its own provider, the cluster's, the GPU Operator.
func devicePluginPaths(field func(string) string) []string {
	return []string{field(".devicePlugin.provider"), "spec.addons.devicePlugin.provider", "spec.addons.gpuOperator.enabled"}
}

// supportRule is the rule of the provider's Kubernetes support window.
func (v *validator) supportRule() string {
	if v.gke() {
		return RuleGKEK8sSupport
	}
	return RuleEKSK8sSupport
}
