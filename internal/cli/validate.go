package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/importer"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// validateOptions are the flags of `gpuctl validate`.
type validateOptions struct {
	streams *IOStreams
	files   []string
	env     string
	asOf    string
	strict  bool
	waivers string
	policy  string
	quiet   bool
	output  *outputFlag
	tf      tfFlags

	asOfTime time.Time
	// now is the clock for a missing --as-of.
	now func() time.Time
}

func newValidateCommand(streams *IOStreams, f *Factory) *cobra.Command {
	o := &validateOptions{streams: streams, now: f.Now}
	cmd := &cobra.Command{
		Use:   "validate SPEC|PATH [SPEC|PATH...]",
		Short: "Check a cluster spec against the GPU version matrix",
		Long: `Check a cluster spec (YAML, apiVersion ` + spec.APIVersion + `) against gpuctl's
version matrix: GPU model, machine/instance type, NVIDIA driver, CUDA in the
workload images, node OS image, Kubernetes, device plugin / GPU Operator and
NCCL settings, plus the user's platform policy (spec.policy, --policy), and
what generation needs: a values-key list for every pinned chart version (a
warning here; ` + "`gpuctl generate`" + ` refuses the spec) and generated layers that
fit together. ` + "`gpuctl generate`" + ` runs these same checks.

The base spec and every environment overlay are resolved and validated on
their own; --env validates one environment. Each finding names its rule, the
field to change (file:line:column), the fix and its sources.

Severities follow one contract (` + "`gpuctl explain RULE`" + ` gives each rule's reason):
error, the pool will not come up, its GPUs will not be usable, or the vendor
declares the combination unsupported; warning, it works today but is
deprecated, past support, or risky; info, a note.

Lifecycle rules (end-of-life driver branches, Kubernetes support windows)
are evaluated at today's date; --as-of pins another date, so CI results do
not change with the calendar.

Findings matching a waiver (spec.waivers or --waivers FILE) become info
findings carrying the waiver's reason until it expires.

Platform policy (required tags and taints, the spot share of GPU capacity,
upgrade holds for training pools) is the user's: the POLICY-* rules check
only what spec.policy or --policy FILE (the organisation's default, which
spec.policy and each environment's policy override field by field) asks.

Existing Terraform is validated in place: a PATH that is a Terraform
folder or .tf file, a cluster-toolkit blueprint or Karpenter YAML is read
as ` + "`gpuctl import`" + ` reads it (--from, --var-file, --var), in memory, and
every finding points at the file:line its value came from (in SARIF too),
so a repository without gpuctl specs can run validate in CI. A finding that
depends on a value unknown before apply or deployment (a data source, a
variable without a value, a blueprint module's output, an AMI Karpenter
selects at launch) says so.

Environment: GPUCTL_AS_OF, GPUCTL_OUTPUT, GPUCTL_STRICT, GPUCTL_ENV, GPUCTL_POLICY set the
flags of the same name when they are not given.

` + ExitCodeHelp,
		Example: `  # validate the shipped example
  gpuctl validate examples/gke-h100-l4.yaml

  # CI: pinned date, warnings fail the build, SARIF for code scanning
  gpuctl validate --as-of 2026-11-29 --strict -o sarif spec.yaml > gpuctl.sarif

  # one environment, machine-readable
  gpuctl validate --env dev -o json spec.yaml | jq '.findings[] | .rule'

  # existing Terraform, findings at its file:line, SARIF for code scanning
  gpuctl validate --var-file prod.tfvars -o sarif infra/ > gpuctl.sarif`,
		Args: minimumArgs(1, "at least one SPEC file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&o.env, "env", "", "validate only this environment (default: the base spec and every environment)")
	cmd.Flags().StringVar(&o.asOf, "as-of", "", "evaluate lifecycle rules at this date (YYYY-MM-DD; default today)")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "count warnings as errors (exit 3)")
	cmd.Flags().StringVar(&o.waivers, "waivers", "", "YAML `FILE` with more waivers (waivers: [{rule, path, reason, expires}])")
	cmd.Flags().StringVar(&o.policy, "policy", "", "YAML `FILE` with the organisation's default policy (policy: {requiredTags, maxSpotShare, trainingUpgradeHold, requiredTaints}); spec.policy overrides it field by field")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "table output: hide info findings (notes and waived findings); they stay in the summary and in json/yaml/sarif")
	o.output = addOutputFlag(cmd, "table", "table", "json", "yaml", "sarif")
	o.tf.addFlags(cmd)
	return cmd
}

func (o *validateOptions) complete(args []string) error {
	o.files = args
	if err := o.output.validate(); err != nil {
		return err
	}
	if err := o.tf.validate(); err != nil {
		return err
	}
	t, err := parseAsOf(o.asOf, o.now)
	if err != nil {
		return err
	}
	o.asOfTime = t
	return nil
}

// parseAsOf parses --as-of (YYYY-MM-DD); empty means today (UTC) by the
// factory's clock now.
func parseAsOf(s string, now func() time.Time) (time.Time, error) {
	if s == "" {
		return now().UTC().Truncate(24 * time.Hour), nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return time.Time{}, usageErrorf("--as-of %q: want a date such as 2026-11-29 (YYYY-MM-DD)", s)
	}
	return t, nil
}

func (o *validateOptions) run(ctx context.Context) error {
	copts, err := checkOptions(o.env, o.waivers, o.policy, o.asOfTime, false)
	if err != nil {
		return err
	}
	var all []diag.Finding
	var checked []render.CheckedPool
	envSet := map[string]bool{}
	for _, file := range o.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		doc, imported, err := o.load(ctx, file)
		if err != nil {
			return err
		}
		fileOpts := copts
		if imported != nil {
			fileOpts.Origins = imported.Locate
		}
		res, err := checkDocument(ctx, doc, fileOpts)
		if err != nil {
			return err
		}
		if imported != nil {
			res.Findings = imported.Annotate(res.Findings)
			o.importNotes(file, imported)
		}
		for _, e := range res.Environments() {
			envSet[e] = true
		}
		all = append(all, res.Findings...)
		checked = append(checked, checkedPools(file, res)...)
	}
	envs := make([]string, 0, len(envSet))
	for e := range envSet {
		envs = append(envs, e)
	}
	sort.Strings(envs)
	rep := render.NewValidationReport(spec.APIVersion, o.files, o.asOfTime.Format("2006-01-02"), envs, all)
	rep.Checked = checked
	if err := o.render(rep); err != nil {
		return err
	}
	if rep.Summary.Errors > 0 || (o.strict && rep.Summary.Warnings > 0) {
		return silentExit(ExitCheckFailed)
	}
	return nil
}

// load reads file as a spec, or imports it when it is a Terraform folder or
// file, a blueprint or Karpenter YAML (or --from says what it is); the
// import's result is nil for a spec.
func (o *validateOptions) load(ctx context.Context, file string) (*spec.Document, *importer.Result, error) {
	from := o.tf.from
	if from == "" && file != "-" {
		from, _ = importer.Detect(file) // an unreadable path: spec.Load says so
	}
	if from == "" {
		doc, err := spec.LoadContext(ctx, file, o.streams.In)
		if err != nil {
			return nil, nil, specError(err)
		}
		return doc, nil, nil
	}
	opts := o.tf.options()
	opts.From = from
	res, err := importer.Import([]string{file}, opts)
	if err != nil {
		return nil, nil, importError(err)
	}
	doc, err := res.Document(file)
	if err != nil {
		return nil, nil, specError(err)
	}
	return doc, res, nil
}

// importNotes says on stderr what the import of file could not judge.
func (o *validateOptions) importNotes(file string, res *importer.Result) {
	if n := len(res.Unknowns); n > 0 {
		fmt.Fprintf(o.streams.ErrOut, "note: %s: %d value(s) unknown until %s were left out; `gpuctl import %s` lists them\n", file, n, res.Until(), file)
	}
}

func (o *validateOptions) render(rep *render.ValidationReport) error {
	w := o.streams.Out
	switch o.output.value {
	case "json":
		return render.JSON(w, rep)
	case "yaml":
		return render.YAML(w, rep)
	case "sarif":
		return render.ValidationSARIF(w, rep, BuildVersion(), ruleInfo)
	}
	return render.ValidationText(w, rep, render.NewStyles(w, o.streams.Color), o.quiet)
}

// checkedPools lists the node pools of every environment res judged, with
// what the matrix makes of their machine type and driver.
func checkedPools(file string, res *check.Result) []render.CheckedPool {
	var out []render.CheckedPool
	for _, e := range res.Envs {
		cs := e.Spec
		if cs == nil {
			continue
		}
		s := &cs.Spec
		platform := strings.ToUpper(s.Provider)
		if s.KubernetesVersion != "" {
			platform += " " + s.KubernetesVersion
		}
		for i := range s.NodePools {
			p := &s.NodePools[i]
			c := render.CheckedPool{File: file, Environment: e.Name, Pool: p.Name, Machine: strings.Join(p.MachineTypes(), ","),
				Driver: p.GPU.Driver, OSImage: p.OSImage, Platform: platform, CUDA: s.CUDA}
			if p.CUDA != "" {
				c.CUDA = p.CUDA
			}
			g, gok := matrix.PoolGPU(s.Provider, p)
			n, nok := matrix.PoolGPUsPerNode(s.Provider, p)
			switch {
			case gok && nok:
				c.GPUs = fmt.Sprintf("%d x %s", n, g.Name)
			case gok:
				c.GPUs = g.Name
			default:
				c.GPUs = p.GPU.Type
			}
			if c.Driver == "" {
				switch s.Provider {
				case spec.ProviderGKE:
					if d := matrix.GKEUnsetDriver(s.KubernetesVersion, p.AutoProvisioned); d != "" {
						c.Driver = "unset (GKE: " + d + ")"
					}
				case spec.ProviderEKS:
					c.Driver = "the AMI's"
				}
			}
			out = append(out, c)
		}
	}
	return out
}

func ruleInfo(id string) (render.RuleInfo, bool) {
	r, ok := rules.LookupRule(id)
	if !ok {
		return render.RuleInfo{}, false
	}
	return render.RuleInfo{ID: r.ID, Title: r.Title, Summary: r.Summary, Help: r.Long, Sources: r.Sources}, true
}

// checkOptions are the options of the document pipeline that validate,
// generate and plan share: --env, the --waivers and --policy files (read
// here; "" is none) and the --as-of date. generate and plan judge for
// generation. Errors: a waivers or policy file that cannot be read (exit 2).
func checkOptions(env, waivers, policy string, asOf time.Time, generate bool) (check.Options, error) {
	extra, err := loadWaivers(waivers)
	if err != nil {
		return check.Options{}, err
	}
	pol, err := loadPolicy(policy)
	if err != nil {
		return check.Options{}, err
	}
	return check.Options{Env: env, Waivers: extra, Policy: pol, AsOf: asOf, Generate: generate}, nil
}

// checkDocument runs the document pipeline on doc with opts. Errors: the
// context's cancellation as is; any other error of the pipeline (exit 2).
func checkDocument(ctx context.Context, doc *spec.Document, opts check.Options) (*check.Result, error) {
	res, err := check.DocumentContext(ctx, doc, opts)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, withCode(ExitUsage, err)
	}
	return res, nil
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

// specError maps a spec decoding error to exit 2 (unreadable input).
func specError(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var se *spec.Error
	if errors.As(err, &se) {
		return withCode(ExitUsage, se)
	}
	return withCode(ExitUsage, err)
}
