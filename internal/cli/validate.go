package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

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
	checks  checkFlags
	quiet   bool
	output  *outputFlag
	tf      tfFlags
	// groups are the files as validated: a blueprint with its deployment files (groupPaths)
	groups [][]string
}

func newValidateCommand(streams *IOStreams, f *Factory) *cobra.Command {
	o := &validateOptions{streams: streams, checks: newCheckFlags(f.Now)}
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
so a repository without gpuctl specs can run validate in CI. A finding
that depends on a value unknown before apply or deployment (a data
source, a variable without a value, a blueprint module's output, an AMI
Karpenter selects at launch) says so. An unknown value is not a missing one:
no rule reports an error or a warning from it, and the checks it kept from
being judged are listed (SPEC-UNKNOWN; a warning when it is the Kubernetes
version, a machine type or an OS image, with the flag that supplies it;
"notJudged" and "imports" in -o json). Such a PATH is read inside one
folder, as import reads it: --root DIR, else the nearest folder above
PATH that holds .git, else PATH itself; nothing its content names is read
outside that folder.

A folder without .tf files (and without --from) is read file by file:
each .yaml/.yml file that is a gpuctl ClusterSpec is validated on its
own, its Karpenter NodePool/EC2NodeClass files together as one import,
and the rest are listed as skipped with the reason (-o json: "results"
per file, "skipped"); the exit code is the worst of the files'. A file
that cannot be read or decoded, and a wrong flag, are findings of the
json, yaml and sarif documents too (SPEC-DECODE, IMPORT-DECODE,
CLI-USAGE), with exit 2.

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
  gpuctl validate --var-file prod.tfvars -o sarif infra/ > gpuctl.sarif

  # every spec of a folder, one line per file
  gpuctl validate --as-of 2026-11-29 examples/

  # a Terraform folder whose modules live beside it: read inside repo/
  gpuctl validate --root repo repo/infra/prod`,
		Args:        minimumArgs(1, "at least one SPEC file"),
		Annotations: map[string]string{errorDocumentAnnotation: "validate"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	o.checks.addFlags(cmd, "validate")
	o.checks.addStrictFlag(cmd, "count warnings as errors (exit 3)")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "table output: hide info findings (notes and waived findings); they stay in the summary and in json/yaml/sarif")
	o.output = addViewFlag(cmd, o.formats())
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
	if err := o.groupPaths(); err != nil {
		return err
	}
	return o.checks.complete()
}

func (o *validateOptions) run(ctx context.Context) error {
	copts, err := o.checks.options(false)
	if err != nil {
		return err
	}
	var acc validated
	for _, file := range o.leads() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := o.validatePath(ctx, &acc, copts, file); err != nil {
			return err
		}
	}
	rep := acc.report(o)
	if err := writeOutput(o.streams, o.output, o.formats(), rep); err != nil {
		return err
	}
	if acc.failed > 0 {
		return silentExit(ExitUsage)
	}
	if o.checks.failed(rep.Summary) {
		return silentExit(ExitCheckFailed)
	}
	return nil
}

// validatePath validates file (a spec, or a PATH imported with the files
// grouped with it; a folder without .tf files as validateDir reads it)
// into acc. Errors: file cannot be read (written in -o json|yaml|sarif's
// document), the pipeline's.
func (o *validateOptions) validatePath(ctx context.Context, acc *validated, copts check.Options, file string) error {
	if files, ok, err := o.yamlDir(file); err != nil || ok {
		if err != nil {
			return o.writeInputError(acc, file, withCode(ExitUsage, err))
		}
		return o.validateDir(ctx, acc, copts, file, files)
	}
	doc, imported, err := o.load(ctx, file, o.pathsOf(file), o.tf.from)
	if err != nil {
		return o.writeInputError(acc, file, err)
	}
	return o.checkInto(ctx, acc, copts, file, doc, imported)
}

// checkInto runs the checks on doc (imported: nil for a spec) into acc as
// file's.
func (o *validateOptions) checkInto(ctx context.Context, acc *validated, copts check.Options, file string, doc *spec.Document, imported *importer.Result) error {
	fileOpts := copts
	if imported != nil {
		fileOpts.Origins = imported.Locate
		fileOpts.Unknown = unknownFacts(imported)
	}
	res, err := checkDocument(ctx, doc, fileOpts)
	if err != nil {
		return err
	}
	from := importer.FromSpec
	if imported != nil {
		res.Findings = imported.Annotate(res.Findings)
		o.importNotes(file, imported)
		acc.imports = append(acc.imports, importLists(file, imported, ""))
		from = imported.From
	}
	acc.add(file, res)
	acc.results = append(acc.results, render.NewFileResult(file, from, res.Findings))
	return nil
}

// validated gathers the judgement of validate's files.
type validated struct {
	all       []diag.Finding
	checked   []render.CheckedPool
	notJudged []render.NotJudged
	imports   []render.Import
	envSet    map[string]bool
	// results are each PATH's (each file's of a folder of YAML); skipped
	// the files of such a folder not validated
	results []render.FileResult
	skipped []render.SkippedFile
	// failed counts the files of folders that could not be decoded (exit 2)
	failed int
}

// add takes in the result of file.
func (v *validated) add(file string, res *check.Result) {
	if v.envSet == nil {
		v.envSet = map[string]bool{}
	}
	for _, e := range res.Environments() {
		v.envSet[e] = true
	}
	v.all = append(v.all, res.Findings...)
	v.checked = append(v.checked, checkedPools(file, res)...)
	v.notJudged = append(v.notJudged, notJudged(file, res)...)
}

// report is the validation report of what was gathered.
func (v *validated) report(o *validateOptions) *render.ValidationReport {
	envs := make([]string, 0, len(v.envSet))
	for e := range v.envSet {
		envs = append(envs, e)
	}
	sort.Strings(envs)
	rep := render.NewValidationReport(spec.APIVersion, o.files, o.checks.asOf.date(), envs, v.all)
	rep.Checked = v.checked
	rep.NotJudged = append(rep.NotJudged, v.notJudged...)
	rep.Imports = append(rep.Imports, v.imports...)
	rep.Results = append(rep.Results, v.results...)
	rep.Skipped = append(rep.Skipped, v.skipped...)
	return rep
}

// load reads file as a spec, or imports paths (file and the files grouped
// with it) when it is a Terraform folder or file, a blueprint or Karpenter
// YAML (or from, --from's value, says what it is); the import's result is
// nil for a spec.
func (o *validateOptions) load(ctx context.Context, file string, paths []string, from string) (*spec.Document, *importer.Result, error) {
	if from == "" && file != "-" {
		var err error
		from, err = importer.DetectIn(file, o.tf.root) // an unreadable file: spec.Load says so
		if err != nil && detectSays(file, err) {
			return nil, nil, withCode(ExitUsage, err)
		}
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
	res, err := importer.ImportContext(ctx, paths, opts)
	if err != nil {
		return nil, nil, importError(ctx, err)
	}
	doc, err := res.Document(file)
	if err != nil {
		return nil, nil, specError(err)
	}
	return doc, res, nil
}

// detectSays reports whether err, Detect's error on file, is the one to
// report: a PATH outside --root, or a folder (which spec.Load cannot read)
// whose files could not be read.
func detectSays(file string, err error) bool {
	var out *importer.OutsideRootError
	if errors.As(err, &out) {
		return true
	}
	st, serr := os.Stat(file)
	return serr == nil && st.IsDir()
}

// importNotes says on stderr what the import of file could not judge.
func (o *validateOptions) importNotes(file string, res *importer.Result) {
	if n := len(res.Unknowns); n > 0 {
		fmt.Fprintf(o.streams.ErrOut, "note: %s: %d value(s) unknown until %s were left out; `gpuctl import %s` lists them\n", file, n, res.Until(), file)
	}
	for _, s := range res.Skipped {
		if strings.HasPrefix(s.Reason, "a second cluster") {
			fmt.Fprintf(o.streams.ErrOut, "note: %s: %s is %s\n", file, s.What, s.Reason)
		}
	}
}

// formats are validate's output formats.
func (o *validateOptions) formats() viewFormats[*render.ValidationReport] {
	return viewFormats[*render.ValidationReport]{
		tableFormat(o.writeTable),
		jsonFormat[*render.ValidationReport](),
		yamlFormat[*render.ValidationReport](),
		{"sarif", writeValidationSARIF},
	}
}

// writeTable writes the findings for people (info findings hidden with -q).
func (o *validateOptions) writeTable(s *IOStreams, rep *render.ValidationReport) error {
	return render.ValidationText(s.Out, rep, render.NewStyles(s.Out, s.Color), o.quiet)
}

// writeValidationSARIF writes the findings as SARIF 2.1.0 for code scanning.
func writeValidationSARIF(s *IOStreams, rep *render.ValidationReport) error {
	return render.ValidationSARIF(s.Out, rep, BuildVersion(), ruleInfo)
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
			c.GPUs = poolGPUs(s.Provider, p)
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

// poolGPUs says what GPUs a pool's nodes carry: "8 x NVIDIA H100 ...", or
// for instance types that differ, the range and the products ("1-8 x
// NVIDIA T4, NVIDIA A10G").
func poolGPUs(provider string, p *spec.NodePool) string {
	if mts := p.MachineTypes(); len(mts) > 1 && p.GPU.Count == 0 && p.GPU.Type == "" {
		lo, hi, names := 0, 0, []string{}
		for _, mt := range mts {
			g, n, ok := matrix.MachineGPU(provider, mt)
			if !ok {
				continue
			}
			if lo == 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
			if !slices.Contains(names, g.Name) {
				names = append(names, g.Name)
			}
		}
		switch {
		case lo != hi:
			return fmt.Sprintf("%d-%d x %s", lo, hi, strings.Join(names, ", "))
		case len(names) > 1:
			return fmt.Sprintf("%d x %s", lo, strings.Join(names, ", "))
		}
	}
	g, gok := matrix.PoolGPU(provider, p)
	n, nok := matrix.PoolGPUsPerNode(provider, p)
	switch {
	case gok && nok:
		return fmt.Sprintf("%d x %s", n, g.Name)
	case gok:
		return g.Name
	}
	return p.GPU.Type
}

func ruleInfo(id string) (render.RuleInfo, bool) {
	r, ok := rules.LookupRule(id)
	if !ok {
		info, ok := inputRules[id]
		return info, ok
	}
	return render.RuleInfo{ID: r.ID, Title: r.Title, Summary: r.Summary, Help: r.Long, Sources: r.Sources}, true
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
