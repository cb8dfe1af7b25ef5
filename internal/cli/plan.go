package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/plan"
	"github.com/gpuctl/gpuctl/internal/spec"
)

type planOptions struct {
	streams *IOStreams
	factory *Factory
	path    string
	out     string
	from    string
	checks  checkFlags
	output  *outputFlag
	kube    *genericclioptions.ConfigFlags
	// stepStart is --step-start (RFC 3339), stepAt its time.
	stepStart string
	stepAt    time.Time

	doc     *spec.Document
	fromDoc *spec.Document
}

func newPlanCommand(streams *IOStreams, f *Factory) *cobra.Command {
	o := &planOptions{streams: streams, factory: f, checks: newCheckFlags(f.Now)}
	cmd := &cobra.Command{
		Use:   "plan SPEC",
		Short: "Show what a spec resolves to, what would change, what has drifted, and how to roll it out",
		Long: `Plan shows, before anything is touched:

  pools     every pool of every environment as resolved: GPUs per node, the
            resource the device plugin advertises, who installs the driver and
            which driver (GKE's DEFAULT/LATEST branch, the AMI's, the GPU
            Operator's), the NCCL transport, the Kueue quota, taints, labels,
            and the acceptance gate (stages, NCCL baseline)
  files     with --out DIR: what ` + "`gpuctl generate all`" + ` would add (+), change (~) or
            remove (-) there, per file and per Terraform block or YAML object,
            with a unified diff; "!" marks a file generate would keep as it
            is because its content is not what gpuctl wrote there. --out is
            read as generate reads it: a link, FIFO or device where gpuctl
            writes a file, or a .gpuctl-files line naming a path outside
            the tree, is refused (exit 2) by its path, never read
  changes   with --from OLD_SPEC: pools added, removed and changed, and for a
            driver, Kubernetes or node-image change a rollout that says what
            applying the generated Terraform does: a surge upgrade in place
            (checkpoints of max_surge + max_unavailable nodes, the platform's
            order), an upgrade the Terraform ignores (the gcloud command that
            starts it), or a replacement of the pool (then a new pool beside
            the old: a canary node, the rest, the move, the removal), each
            step followed by ` + "`gpuctl accept`" + ` of its nodes
  drift     with --kubeconfig or --context: each node of each spec pool (by
            its cloud.google.com/gke-nodepool or eks.amazonaws.com/nodegroup
            label) against the spec: GFD product, count, driver and CUDA,
            instance type, kubelet version, OS image, taints, device plugin
            pods, each with the spec's file:line. Read-only: list calls only.
  sweep     with a cluster, for each pool with rollout.gate sweep: each node's
            GPUAccepted condition (set by the acceptance sweep, see
            docs/acceptance-sweep.md) against the gate, which passes when every
            node of the step has GPUAccepted=True newer than the step's start
            (--step-start TIME; without it any GPUAccepted=True counts)

The spec is checked as validate checks it (--env, --as-of, --waivers,
--policy); error findings are listed and no files are compared. Drift needs
one environment: --env when the spec has environments.

Like terraform plan -detailed-exitcode, plan exits:
  0  nothing would change and nothing has drifted
  3  a file would change, the spec changed against --from, a node drifted,
     or the spec has an error finding (then only the findings are shown)
  4  the cluster could not be read
  2  usage error, unreadable input, or an --out tree gpuctl does not read

` + ExitCodeHelp,
		Example: `  # What the spec resolves to, per environment
  gpuctl plan examples/gke-h100-l4.yaml

  # CI: the committed generated files are what the spec makes (exit 3 if not)
  gpuctl plan examples/gke-h100-l4.yaml --out generated

  # A driver upgrade: what changes and the rollout, as data for a pipeline
  gpuctl plan new.yaml --from old.yaml --env prod -o json

  # What the prod cluster's GPU nodes say against the spec
  gpuctl plan cluster.yaml --env prod --kubeconfig ~/.kube/prod

  # A sweep gate: have the nodes been accepted since the step started?
  gpuctl plan cluster.yaml --env prod --kubeconfig ~/.kube/prod --step-start 2026-12-03T10:00:00Z -o json`,
		Args: exactArgs(1, "a SPEC file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(cmd.Context(), args); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.out, "out", "", "compare what generate would write with this `DIR`")
	fl.StringVar(&o.from, "from", "", "the old spec `FILE`: show what changes and plan the rollout")
	fl.StringVar(&o.stepStart, "step-start", "", "with a cluster: the rollout step's start (RFC 3339 `TIME`); a sweep gate counts GPUAccepted=True set after it")
	o.checks.addFlags(cmd, "plan")
	o.output = addViewFlag(cmd, planFormats)
	s := func() *string { v := ""; return &v }
	o.kube = &genericclioptions.ConfigFlags{KubeConfig: s(), Context: s()}
	o.kube.AddFlags(fl)
	return cmd
}

func (o *planOptions) complete(ctx context.Context, args []string) error {
	o.path = args[0]
	doc, err := spec.LoadContext(ctx, o.path, o.streams.In)
	if err != nil {
		return specError(err)
	}
	o.doc = doc
	if o.from != "" {
		if o.fromDoc, err = spec.LoadContext(ctx, o.from, nil); err != nil {
			return specError(err)
		}
	}
	return nil
}

// cluster reports whether plan reads the live cluster.
func (o *planOptions) cluster() bool { return *o.kube.KubeConfig != "" || *o.kube.Context != "" }

func (o *planOptions) validate() error {
	if err := o.output.validate(); err != nil {
		return err
	}
	if err := o.checks.complete(); err != nil {
		return err
	}
	if o.cluster() && o.checks.env == "" && len(o.doc.Environments()) > 0 {
		return usageErrorf("drift compares one environment with the cluster: choose it with --env (%d environments in %s)", len(o.doc.Environments()), o.path)
	}
	if o.out != "" {
		if err := checkOutFolder(o.out); err != nil {
			return err
		}
	}
	return o.validateStepStart()
}

// validateStepStart reads --step-start: an RFC 3339 time, with a cluster.
func (o *planOptions) validateStepStart() error {
	if o.stepStart == "" {
		return nil
	}
	if !o.cluster() {
		return usageErrorf("--step-start holds the cluster's nodes to a sweep gate: give --kubeconfig or --context")
	}
	t, err := time.Parse(time.RFC3339, o.stepStart)
	if err != nil {
		return usageErrorf("--step-start %q is not an RFC 3339 time (2026-12-03T10:00:00Z)", o.stepStart)
	}
	o.stepAt = t
	return nil
}

func (o *planOptions) run(ctx context.Context) error {
	copts, err := o.checks.options(true)
	if err != nil {
		return err
	}
	res, err := checkDocument(ctx, o.doc, copts)
	if err != nil {
		return err
	}
	in := plan.Input{Doc: o.doc, Result: res, AsOf: o.checks.asOf.date(), StepStart: o.stepAt}
	if o.fromDoc != nil {
		if in.FromResult, err = o.checkFrom(ctx, copts); err != nil {
			return err
		}
		in.From = o.fromDoc
	}
	if o.out != "" {
		tree, err := plan.OpenTree(o.out)
		if err != nil {
			return outTreeError(err)
		}
		defer tree.Close()
		in.Tree, in.OutDir = tree, o.out
	}
	if o.cluster() {
		kc, err := o.factory.KubeClient(o.kube)
		if err != nil {
			return withCode(ExitInconclusive, fmt.Errorf("cluster: %w", err))
		}
		in.Kube = kc
	}
	p, err := plan.Make(ctx, in)
	if err != nil {
		if te := (*plan.TreeError)(nil); errors.As(err, &te) {
			return outTreeError(err)
		}
		if in.Kube != nil && ctx.Err() == nil {
			return withCode(ExitInconclusive, err)
		}
		return err
	}
	if err := writeOutput(o.streams, o.output, planFormats, p); err != nil {
		return err
	}
	if p.Summary.Changes {
		return silentExit(ExitCheckFailed)
	}
	return nil
}

// checkFrom checks the --from spec with the new spec's options less the
// waivers of the --waivers file. Errors: --env names no environment of it, or it does not check (exit 2).
func (o *planOptions) checkFrom(ctx context.Context, copts check.Options) (*check.Result, error) {
	if env := o.checks.env; env != "" && !hasEnv(o.fromDoc, env) {
		return nil, usageErrorf("--from %s has no environment %q", o.from, env)
	}
	copts.Waivers = nil
	res, err := check.DocumentContext(ctx, o.fromDoc, copts)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	return res, nil
}

// planFormats are plan's output formats: the plan (its JSON a contract,
// `gpuctl schema plan`), or its tables.
var planFormats = viewFormats[*plan.Plan]{tableFormat(writePlanTable), jsonFormat[*plan.Plan](), yamlFormat[*plan.Plan]()}

func writePlanTable(s *IOStreams, p *plan.Plan) error {
	return render.PlanText(s.Out, s.OutTTY, planView(p))
}

func hasEnv(doc *spec.Document, env string) bool {
	for _, e := range doc.Environments() {
		if e == env {
			return true
		}
	}
	return false
}
