// Package check is gpuctl's one document-validation pipeline: the judgement
// of a spec document that every command accepting or refusing a spec uses
// (validate, generate, plan), so that they agree on what is an error.
//
// For the base spec and every environment (or one), Document resolves the
// spec, runs the validation rules (package rules, with the policy in force: Options.Policy,
// overridden field by field by spec.policy and the environment's) and checks that gpuctl has a values-key list
// for every chart version the spec pins (helmgen). When no error remains it
// generates the Terraform (hclgen; for validate, without Options.Generate,
// it only checks that the Terraform can be written), builds the Helm values and in-cluster
// objects and cross-checks them against the node pools (helmgen.Build and
// Layers.Check); what the generators refuse is a GEN-BUILD error. Then it
// applies the waivers of the spec, of the environment's overlay and of a
// --waivers file in that order, and fills in file, line, column and
// environment. It returns the findings together with what generation needs
// (the resolved specs, the Terraform files and the built layers), so no
// command repeats the work.
package check

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/hclgen"
	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Options say what to check and how.
type Options struct {
	// Env is the one environment to check; "" checks the base spec and
	// every environment.
	Env string
	// Waivers are the waivers of a --waivers file, applied after those of
	// the spec and of the environment's overlay; nil for none.
	Waivers *spec.WaiverSet
	// Policy is the organisation's default policy (a --policy file); the
	// spec's spec.policy, then the environment's, override it field by
	// field. Nil for none: then only the spec's own policy applies.
	Policy *spec.Policy
	// AsOf is the date lifecycle rules and waiver expiry dates are judged
	// at. It must be set: the caller owns the clock (--as-of or today).
	AsOf time.Time
	// Generate judges the document for generation: findings of the rules
	// that stop generation (GEN-CHART-VERSION, GEN-BUILD) are errors, and
	// no waiver lifts them, since no waiver makes the files writable.
	Generate bool
	// Origins locates the values of a document built from other files
	// (`gpuctl import`): it maps a finding's path to the file, line and
	// column its value was read from, ok false where it does not know.
	// Nil: findings point into the document's own file.
	Origins func(path string) (file string, line, column int, ok bool)
	// Unknown are the document's unknown facts by spec path (an import's
	// values that depend on a data source, a variable without a value or a
	// module gpuctl does not read): the rules judge them unknown, not
	// absent (rules.Options.Unknown). Nil: none.
	Unknown map[string]rules.Unknown
}

// Env is one checked environment.
type Env struct {
	// Name is the environment; "" is the base spec.
	Name string
	// Spec is the resolved spec of the environment.
	Spec *spec.ClusterSpec
	// Terraform are the environment's Terraform files (hclgen.Generate,
	// headers naming the spec file's base name), and Layers its built Helm
	// values and in-cluster objects. Both are nil when the environment has
	// an error finding (after waivers; with Options.Generate, one that
	// stops generation): then nothing may be written for it. Terraform is
	// written only with Options.Generate; without it (validate) the check
	// only asks whether it can be (hclgen.Check).
	Terraform []hclgen.File
	Layers    *helmgen.Layers
	// NotJudged are the unknown facts (Options.Unknown) that kept checks
	// of the environment from being judged; never nil.
	NotJudged []rules.NotJudged
}

// Result is the judgement of one document.
type Result struct {
	// Envs are the environments checked, the base spec ("") first.
	Envs []Env
	// Findings have file, line, column and environment filled in. A finding
	// an environment shares with the base spec (same rule, located path and
	// message) is reported once, for the base.
	Findings []diag.Finding
}

// Environments returns the names of the environments checked.
func (r *Result) Environments() []string {
	out := make([]string, len(r.Envs))
	for i, e := range r.Envs {
		out[i] = e.Name
	}
	return out
}

// NotJudged are the unknown facts that kept checks from being judged, over
// every environment (a fact the base spec shares once), by path; never nil.
func (r *Result) NotJudged() []rules.NotJudged {
	out := []rules.NotJudged{}
	seen := map[string]bool{}
	for _, e := range r.Envs {
		for _, nj := range e.NotJudged {
			if !seen[nj.Path] {
				seen[nj.Path] = true
				out = append(out, nj)
			}
		}
	}
	return out
}

// Summary counts the findings by severity.
func (r *Result) Summary() diag.Summary { return diag.Summarize(r.Findings) }

// stopsGeneration are the rules whose findings mean generate cannot write
// the files at all.
var stopsGeneration = map[string]bool{rules.RuleGenChartVersion: true, rules.RuleGenBuild: true}

// StopsGeneration reports whether findings of rule mean that generation
// cannot write the files, whatever their severity in validate.
func StopsGeneration(rule string) bool { return stopsGeneration[rule] }

// Document checks doc as the package comment says. Errors: AsOf is not set,
// or Env is not an environment of the spec.
func Document(doc *spec.Document, opts Options) (*Result, error) {
	return DocumentContext(context.Background(), doc, opts)
}

// DocumentContext is Document that stops between environments when ctx is
// done, with an error wrapping ctx's.
func DocumentContext(ctx context.Context, doc *spec.Document, opts Options) (*Result, error) {
	if opts.AsOf.IsZero() {
		return nil, errors.New("check: Options.AsOf is not set")
	}
	names := []string{""}
	if opts.Env != "" {
		names = []string{opts.Env}
	} else {
		names = append(names, doc.Environments()...)
	}
	type key struct{ rule, path, msg string }
	base := map[key]bool{}
	res := &Result{Findings: []diag.Finding{}}
	for _, e := range names {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", doc.File, err)
		}
		cs, err := doc.Resolve(e)
		if err != nil {
			return nil, err
		}
		fs, checked := checkEnv(doc, e, cs, opts)
		res.Envs = append(res.Envs, checked)
		for _, f := range fs {
			locate(doc, e, opts.Waivers, &f)
			if opts.Origins != nil {
				if file, line, col, ok := opts.Origins(f.Path); ok {
					f.File, f.Line, f.Column = file, line, col
				}
			}
			k := key{f.Rule, f.Path, f.Message}
			if e == "" {
				base[k] = true
			} else if base[k] {
				continue
			}
			res.Findings = append(res.Findings, f)
		}
	}
	return res, nil
}

// checkEnv judges one resolved environment and generates its Terraform and
// builds its Helm layers when it can; the findings' paths are paths into the resolved spec (or into the
// waiver lists).
func checkEnv(doc *spec.Document, env string, cs *spec.ClusterSpec, opts Options) ([]diag.Finding, Env) {
	waive := func(fs []diag.Finding) []diag.Finding {
		fs = rules.ApplyWaiversAt(fs, doc.Spec.Spec.Waivers, opts.AsOf, "spec.waivers")
		if env != "" {
			fs = rules.ApplyWaiversAt(fs, doc.Spec.Spec.Environments[env].Waivers, opts.AsOf, "spec.environments"+spec.Key(env)+".waivers")
		}
		if opts.Waivers != nil {
			fs = rules.ApplyWaiversAt(fs, opts.Waivers.Waivers, opts.AsOf, "waivers")
		}
		return fs
	}
	rep := rules.ValidateReport(cs, rules.Options{AsOf: opts.AsOf, Policy: opts.Policy, Unknown: opts.Unknown})
	fs := rep.Findings
	if opts.Generate {
		fs = append(fs, emptyPools(cs)...)
	}
	charts, blocked := chartFindings(cs)
	fs = append(fs, charts...)
	out := Env{Name: env, Spec: cs, NotJudged: rep.NotJudged}
	if !blocked && !hasErrors(waive(fs)) {
		var tf []hclgen.File
		var err error
		if opts.Generate {
			tf, err = hclgen.Generate(cs, hclgen.Options{SpecFile: filepath.Base(doc.File), Environment: env})
		} else {
			err = hclgen.Check(cs) // validate: whether it builds, not the text
		}
		var l *helmgen.Layers
		if err == nil {
			l, err = helmgen.Build(cs)
		}
		var cross []diag.Finding
		if err == nil {
			cross, err = l.Check()
		}
		if err != nil {
			fs = append(fs, buildFinding(err, !opts.Generate && len(opts.Unknown) > 0))
		} else {
			fs = append(fs, cross...)
			out.Terraform, out.Layers = tf, l
		}
	}
	fs = waive(fs)
	if opts.Generate {
		fs = forGeneration(fs, blocked)
	}
	if hasErrors(fs) {
		out.Terraform, out.Layers = nil, nil
	}
	return fs, out
}

// forGeneration holds findings to what generate needs: a finding of a
// rule that stops generation is an error, waived or not, and a chart that
// cannot be built (blocked: a version that does not parse, whose
// SPEC-VERSION error may be waived) is a GEN-BUILD error if nothing else
// is, so that generate never goes on without the chart's values.
func forGeneration(fs []diag.Finding, blocked bool) []diag.Finding {
	for i := range fs {
		if stopsGeneration[fs[i].Rule] {
			fs[i].Severity, fs[i].Waiver = diag.SeverityError, ""
		}
	}
	if blocked && !hasErrors(fs) {
		fs = append(fs, buildFinding(errors.New("a chart version of the spec is not a version, so the chart's values cannot be written (see SPEC-VERSION)"), false))
	}
	return fs
}

// emptyPools warns, for generation, of each pool whose autoscaling.max is
// 0 or unset (an imported pool whose node count was unknown): its node
// pool would be written with a maximum of 0 nodes.
func emptyPools(cs *spec.ClusterSpec) []diag.Finding {
	var fs []diag.Finding
	for i, p := range cs.Spec.NodePools {
		if p.AutoProvisioned || p.Autoscaling.Max != 0 {
			continue
		}
		fs = append(fs, diag.Finding{Rule: rules.RuleSpecAutoscaling, Severity: diag.SeverityWarning, Path: spec.PoolPath(i) + ".autoscaling.max",
			Message: fmt.Sprintf("pool %s: autoscaling.max is 0 or unset, so the generated node pool can never have a node (an imported node count that was unknown is left unset)", p.Name),
			Fix:     "Set autoscaling.min and autoscaling.max to the pool's node count bounds."})
	}
	return fs
}

// chartFindings returns a GEN-CHART-VERSION finding for each chart version
// of cs that gpuctl has no values-key list for, and whether any chart
// cannot be built (also when a version does not parse: the rules report
// that as SPEC-VERSION).
func chartFindings(cs *spec.ClusterSpec) (fs []diag.Finding, blocked bool) {
	for _, pin := range helmgen.Charts(cs) {
		if _, err := helmgen.LoadKeys(pin.Chart, pin.Version); err == nil {
			continue
		}
		blocked = true
		if _, err := matrix.ParseVersion(pin.Version); err != nil {
			continue
		}
		known := helmgen.ChartVersions(pin.Chart)
		fs = append(fs, diag.Finding{
			Rule: rules.RuleGenChartVersion, Severity: diag.SeverityWarning, Path: pin.Path,
			Message: fmt.Sprintf("chart %s %s: gpuctl has no values-key list for this version, so `gpuctl generate` cannot write its values; it can write %s",
				pin.Chart, pin.Version, versionSpan(known)),
			Fix:     fmt.Sprintf("Pin one of %s, or leave the version out for the newest (%s).", strings.Join(known, ", "), known[len(known)-1]),
			Sources: []string{helmgen.ChartSource(pin.Chart)},
		})
	}
	return fs, blocked
}

// versionSpan says which of the known versions (oldest first) gpuctl can
// write: "0.20.0", "0.19.3 and 0.20.0", or "18 versions from 0.15.0 to
// 0.20.0".
func versionSpan(known []string) string {
	switch len(known) {
	case 1:
		return known[0]
	case 2:
		return known[0] + " and " + known[1]
	}
	return fmt.Sprintf("%d versions from %s to %s", len(known), known[0], known[len(known)-1])
}

// buildFinding is a spec the generators cannot implement: a GEN-BUILD
// error, or in validate of a spec with unknown values (unknown) a
// SPEC-UNKNOWN info, since
// what the generators lack may be a value that is only unknown.
func buildFinding(err error, unknown bool) diag.Finding {
	f := diag.Finding{
		Rule: rules.RuleGenBuild, Severity: diag.SeverityError, Path: "spec",
		Message: "gpuctl cannot generate this spec: " + err.Error(),
		Sources: ruleSources(rules.RuleGenBuild),
	}
	if unknown {
		f.Rule, f.Severity, f.Sources = rules.RuleSpecUnknown, diag.SeverityInfo, ruleSources(rules.RuleSpecUnknown)
		f.Message = "not judged whether gpuctl can generate this spec, which holds unknown values: " + err.Error()
	}
	return f
}

func ruleSources(id string) []string {
	r, _ := rules.LookupRule(id)
	return r.Sources
}

// locate fills in file, line, column and environment of f: a finding about
// a waiver points at the file and line where that waiver is written, one in
// an environment at the overlay where the environment sets the field, if it
// does.
func locate(doc *spec.Document, env string, extra *spec.WaiverSet, f *diag.Finding) {
	file, where := doc.File, f.Path
	var line, col int
	switch {
	case extra != nil && strings.HasPrefix(f.Path, "waivers["):
		file = extra.File
		line, col = extra.Position(f.Path)
	case strings.HasPrefix(f.Path, "spec.environments."):
		line, col, _ = doc.Position(f.Path)
	default:
		where, line, col = doc.Locate(env, f.Path)
	}
	f.Path, f.File, f.Line, f.Column, f.Environment = where, file, line, col, env
}

func hasErrors(fs []diag.Finding) bool {
	for _, f := range fs {
		if f.Severity == diag.SeverityError {
			return true
		}
	}
	return false
}
