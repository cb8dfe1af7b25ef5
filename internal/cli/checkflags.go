package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// dateLayout is the layout of every date gpuctl reads from a flag: YYYY-MM-DD.
const dateLayout = "2006-01-02"

// dateWant says what a date flag takes, for its errors.
const dateWant = "want a date such as 2026-11-29 (YYYY-MM-DD)"

// asOfFlag is --as-of: the date lifecycle rules (driver end of life,
// Kubernetes support windows) are evaluated at. validate, generate, plan,
// matrix check and matrix drivers share it.
type asOfFlag struct {
	raw string
	// t is the parsed date (UTC midnight), set by complete.
	t time.Time
	// now is the clock that says what today is (the factory's).
	now func() time.Time
}

func (a *asOfFlag) addFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&a.raw, "as-of", "", "evaluate lifecycle rules (driver EOL, support windows) at this date, YYYY-MM-DD (default today)")
}

// complete parses --as-of; empty is today (UTC) by the clock now. Errors: a
// value that is not a date (exit 2).
func (a *asOfFlag) complete() error {
	if a.raw == "" {
		a.t = a.now().UTC().Truncate(24 * time.Hour)
		return nil
	}
	t, err := time.Parse(dateLayout, a.raw)
	if err != nil {
		return usageErrorf("--as-of %q: %s", a.raw, dateWant)
	}
	a.t = t
	return nil
}

// date is the completed date as YYYY-MM-DD.
func (a *asOfFlag) date() string { return a.t.Format(dateLayout) }

// checkFlags are the flags of the document pipeline (check.Options) that
// validate, generate and plan share: --env, --as-of, --waivers and
// --policy, and --strict where the command has it. complete parses --as-of;
// options reads the files. Two steps, so that each command reports a bad
// date and an unreadable waivers file at the point it always has.
type checkFlags struct {
	env     string
	asOf    asOfFlag
	waivers string
	policy  string
	strict  bool
}

func newCheckFlags(now func() time.Time) checkFlags {
	return checkFlags{asOf: asOfFlag{now: now}}
}

// addFlags adds --env, --as-of, --waivers and --policy to cmd; verb is what
// the command does to the one environment --env names ("validate").
func (f *checkFlags) addFlags(cmd *cobra.Command, verb string) {
	fl := cmd.Flags()
	fl.StringVar(&f.env, "env", "", verb+" only this environment (default: the base spec and every environment)")
	f.asOf.addFlag(cmd)
	fl.StringVar(&f.waivers, "waivers", "", "YAML `FILE` with more waivers (waivers: [{rule, path, reason, expires}])")
	fl.StringVar(&f.policy, "policy", "", "YAML `FILE` with the organisation's default policy (policy: {requiredTags, maxSpotShare, trainingUpgradeHold, requiredTaints}); spec.policy overrides it field by field")
}

// addStrictFlag adds --strict to cmd; usage says what a warning does then.
func (f *checkFlags) addStrictFlag(cmd *cobra.Command, usage string) {
	cmd.Flags().BoolVar(&f.strict, "strict", false, usage)
}

// complete parses --as-of (exit 2 for a bad date).
func (f *checkFlags) complete() error { return f.asOf.complete() }

// options are the pipeline's options: the environment, the --waivers and
// --policy files (read here; "" is none) and the --as-of date; generate and
// plan judge for generation. Errors: a waivers or policy file that cannot
// be read (exit 2).
func (f *checkFlags) options(generate bool) (check.Options, error) {
	extra, err := loadWaivers(f.waivers)
	if err != nil {
		return check.Options{}, err
	}
	pol, err := loadPolicy(f.policy)
	if err != nil {
		return check.Options{}, err
	}
	return check.Options{Env: f.env, Waivers: extra, Policy: pol, AsOf: f.asOf.t, Generate: generate}, nil
}

// failed reports whether findings summarised as s fail the command (exit
// 3): an error, or with --strict a warning.
func (f *checkFlags) failed(s diag.Summary) bool { return checksFailed(s, f.strict) }

// checksFailed: an error finding, or with strict a warning, fails a check.
func checksFailed(s diag.Summary, strict bool) bool {
	return s.Errors > 0 || (strict && s.Warnings > 0)
}

// loadWaivers reads a --waivers file; "" is none (nil).
func loadWaivers(file string) (*spec.WaiverSet, error) {
	if file == "" {
		return nil, nil
	}
	ws, err := spec.LoadWaivers(file)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	return ws, nil
}

// loadPolicy reads a --policy file; "" is none (nil).
func loadPolicy(file string) (*spec.Policy, error) {
	if file == "" {
		return nil, nil
	}
	ps, err := spec.LoadPolicy(file)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	return ps.Policy, nil
}

// checkDateEnv checks a GPUCTL_AS_OF value as --as-of will parse it.
func checkDateEnv(s string) error {
	if _, err := time.Parse(dateLayout, s); err != nil {
		return errors.New(dateWant)
	}
	return nil
}
