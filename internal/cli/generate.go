package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/plan"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Layers gpuctl generates.
const (
	layerTerraform  = check.LayerTerraform
	layerHelm       = check.LayerHelm
	layerManifests  = check.LayerManifests
	layerKarpenter  = check.LayerKarpenter
	layerAcceptance = check.LayerAcceptance
	layerAll        = check.LayerAll
)

// baseEnvDir is the folder of the base spec (the spec without overlays).
const baseEnvDir = check.BaseEnvDir

type generateOptions struct {
	streams *IOStreams
	layer   string
	path    string
	out     string
	check   bool
	checks  checkFlags

	doc *spec.Document
}

func newGenerateCommand(streams *IOStreams, f *Factory) *cobra.Command {
	o := &generateOptions{streams: streams, checks: newCheckFlags(f.Now)}
	cmd := &cobra.Command{
		Use:   "generate terraform|helm|manifests|karpenter|acceptance|all SPEC",
		Short: "Generate the Terraform, Helm values and in-cluster objects of a spec",
		Long: `Generate writes what a platform team commits for a cluster spec, one folder per
environment (base/ for the spec without overlays, then one per environment):

  terraform/<env>/  versions.tf, variables.tf, node_pools.tf, outputs.tf
                    (google_container_node_pool on GKE; aws_eks_node_group,
                    aws_launch_template and aws_placement_group on EKS)
  helm/<env>/       <chart>.values.yaml for nvidia-device-plugin, gpu-operator,
                    dcgm-exporter and aws-efa-k8s-device-plugin, as the spec
                    uses them
  manifests/<env>/  kueue.yaml (ResourceFlavors, ClusterQueues, LocalQueues),
                    teams.yaml (Namespaces, ResourceQuotas, NetworkPolicies) and
                    nccl.yaml (each pool's NCCL ConfigMap; on GKE the GPUDirect
                    DaemonSets its transport needs); for each GKE GPUDirect
                    pool (TCPX, TCPXO, RDMA) workload/<pool>-pod-template.yaml
                    (the pod side: sidecar, device and network annotations,
                    NCCL variables) and workload/<pool>/, a Kustomize
                    Component that patches it into a kustomization's
                    Deployments, StatefulSets and Jobs; acceptance.yaml for
                    a spec with spec.acceptance (the acceptance sweep: its
                    Namespace, ServiceAccount, the RBAC accept --dry-run
                    --bind prints for it, and a CronJob running gpuctl
                    accept --sweep; docs/acceptance-sweep.md) and, for
                    each pool of spec.acceptance.preflight,
                    workload/<pool>-preflight.yaml (a pod template whose
                    init container runs gpuctl preflight on the pod's GPUs
                    before the training container starts), which generate
                    acceptance writes alone (exit 2 for a spec without
                    spec.acceptance)
  karpenter/<env>/  karpenter.yaml: a Karpenter v1 NodePool and EC2NodeClass
                    per pool, for an EKS spec with addons.autoscaler:
                    karpenter (all writes it for such a spec; the Terraform
                    then writes no managed node group for the pools;
                    generate karpenter on another spec exits 2)

The spec is judged first, by the same checks as ` + "`gpuctl validate`" + ` with the same
--env, --as-of, --waivers, --policy and --strict: the matrix rules, and the layers
against each other (every GPU DaemonSet tolerates and selects its pools, Kueue
quotas name the resource the device plugin advertises, one device plugin per
pool). The findings go to stderr in validate's format (info findings hidden).
If validate would report an error (with --strict, also a warning), nothing is
written (exit 3). A chart version gpuctl has no values-key list for
(GEN-CHART-VERSION, a warning in validate) and a spec the generators cannot
implement (GEN-BUILD) are errors here, which waivers do not lift. Output is
byte-identical for the same spec and gpuctl.

Without --out the files go to stdout, each after a "# ==> PATH <==" line.
With --out, gpuctl also writes .gpuctl-files there, listing every file it
wrote with the SHA-256 of what it wrote ("DIGEST  PATH" a line, as sha256sum
writes them). --check compares --out with what would be generated and exits 3
listing the files that differ, are missing or are listed but not generated
any more (an environment taken out of the spec, an add-on turned off);
without --check generate removes those. Files the list does not name (a
backend.tf or providers.tf beside the generated Terraform) are never
compared or removed. terraform/<env>/ is a child
module: variables in, outputs out, no provider or backend block.

generate replaces or removes only its own files: a file whose content is
not what .gpuctl-files says gpuctl wrote (a hand edit, a file of the team's
own, a line added to the list) is kept and named in a warning on stderr; a
listed file without a digest (a list of an older gpuctl) counts as gpuctl's
only when it already holds what this version writes. A kept file that is
no longer generated leaves the list (exit 0); a kept file that generate
would have written makes it exit 3 (remove it to let generate write it).
A run writes its files into --out/.gpuctl-staging/ and moves them into
place only when every one is written, so an error leaves --out as it was.

--out is read as a tree gpuctl does not trust: links are never followed
nor read, and every file is read through a cap (4 MiB a file, 4 MiB and
10000 paths for .gpuctl-files). A symbolic link, FIFO, device or folder
where gpuctl writes a file (or at a folder on the way), a file over the
cap, or a .gpuctl-files line naming an absolute path, ".." or a link stops
generate, --check and plan alike with exit 2, naming each path and never
its content. --out naming a file is a usage error (exit 2).

Environment: GPUCTL_AS_OF, GPUCTL_ENV, GPUCTL_STRICT, GPUCTL_WAIVERS, GPUCTL_POLICY set the
flags of the same name when they are not given, as for validate.

` + ExitCodeHelp,
		Example: `  # Everything for every environment, into ./generated
  gpuctl generate all examples/gke-h100-l4.yaml --out generated

  # Only the Terraform of the dev environment, to stdout
  gpuctl generate terraform examples/gke-h100-l4.yaml --env dev

  # The Karpenter NodePools and EC2NodeClasses of an EKS spec
  gpuctl generate karpenter examples/eks-karpenter-gpu.yaml --out generated

  # The in-cluster acceptance sweep alone (manifests/<env>/acceptance.yaml)
  gpuctl generate acceptance examples/gke-h100-acceptance-sweep.yaml --out generated

  # CI gate: fail when the committed files were edited by hand or are stale
  gpuctl generate all examples/gke-h100-l4.yaml --out generated --check`,
		Args:      exactArgs(2, "a LAYER (terraform, helm, manifests, karpenter, acceptance or all) and a SPEC file"),
		ValidArgs: []string{layerTerraform, layerHelm, layerManifests, layerKarpenter, layerAcceptance, layerAll},
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
	fl.StringVar(&o.out, "out", "", "write the files under this folder instead of stdout")
	fl.BoolVar(&o.check, "check", false, "compare --out with what would be generated; exit 3 when they differ")
	o.checks.addFlags(cmd, "generate")
	o.checks.addStrictFlag(cmd, "count warnings as errors: write nothing (exit 3) when there is one")
	return cmd
}

func (o *generateOptions) complete(ctx context.Context, args []string) error {
	o.layer, o.path = args[0], args[1]
	switch o.layer {
	case layerTerraform, layerHelm, layerManifests, layerKarpenter, layerAcceptance, layerAll:
	default:
		return usageErrorf("unknown layer %q: want terraform, helm, manifests, karpenter, acceptance or all", o.layer)
	}
	doc, err := spec.LoadContext(ctx, o.path, o.streams.In)
	if err != nil {
		return specError(err)
	}
	o.doc = doc
	return nil
}

func (o *generateOptions) validate() error {
	if err := o.checks.complete(); err != nil {
		return err
	}
	if o.check && o.out == "" {
		return usageErrorf("--check needs --out: the folder to compare")
	}
	if o.out != "" {
		if err := checkOutFolder(o.out); err != nil {
			return err
		}
	}
	if s := &o.doc.Spec.Spec; o.layer == layerKarpenter && (s.Provider != spec.ProviderEKS || s.Addons.Autoscaler != spec.AutoscalerKarpenter) {
		return usageErrorf("generate karpenter writes Karpenter NodePools for an EKS spec with addons.autoscaler: karpenter; %s has provider %q, addons.autoscaler %q", o.path, s.Provider, s.Addons.Autoscaler)
	}
	if o.layer == layerAcceptance && !hasAcceptance(o.doc) {
		return usageErrorf("generate acceptance writes the acceptance sweep of spec.acceptance; %s has none (docs/acceptance-sweep.md)", o.path)
	}
	for _, e := range o.doc.Environments() {
		if e == baseEnvDir {
			return usageErrorf("environment %q clashes with the folder of the base spec; rename it", e)
		}
	}
	return nil
}

// hasAcceptance reports whether the spec or one of its environments sets
// spec.acceptance.
func hasAcceptance(doc *spec.Document) bool {
	if doc.Spec.Spec.Acceptance != nil {
		return true
	}
	for _, ov := range doc.Spec.Spec.Environments {
		if ov.Acceptance != nil {
			return true
		}
	}
	return false
}

// genFile is one generated file, Path relative to --out.
type genFile = check.File

// run judges the spec, then writes its files under --out, compares them
// with --out (--check), or prints them.
func (o *generateOptions) run(ctx context.Context) error {
	res, err := o.judge(ctx)
	if err != nil {
		return err
	}
	// The files come from what the check built: the document (the spec
	// and its position index) is not needed from here on.
	o.doc = nil
	files, err := o.files(res)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if o.out == "" {
		return o.printFiles(files)
	}
	st, err := o.readOut(files, check.RunEnv(res))
	if err != nil {
		return err
	}
	r := decideOut(st)
	if o.check {
		return o.runCheck(st, r)
	}
	return o.writeOut(ctx, r)
}

// readOut reads --out as plan does (plan.ReadOut: links never followed,
// every file through its cap). Errors: a tree gpuctl does not read, exit 2.
func (o *generateOptions) readOut(files []genFile, env string) (*plan.Out, error) {
	tree, err := plan.OpenTree(o.out)
	if err != nil {
		return nil, outTreeError(err)
	}
	defer tree.Close()
	st, err := plan.ReadOut(tree, files, o.layer, env)
	if err != nil {
		return nil, outTreeError(err)
	}
	return st, nil
}

// judge runs the checks validate runs, for generation, and prints their
// findings on stderr (info hidden). Errors: exit 3 when a finding fails
// generation (an error; with --strict a warning), nothing written.
func (o *generateOptions) judge(ctx context.Context) (*check.Result, error) {
	copts, err := o.checks.options(true)
	if err != nil {
		return nil, err
	}
	res, err := checkDocument(ctx, o.doc, copts)
	if err != nil {
		return nil, err
	}
	rep := render.NewValidationReport(spec.APIVersion, []string{o.path}, o.checks.asOf.date(), res.Environments(), res.Findings)
	if err := render.ValidationText(o.streams.ErrOut, rep, render.NewStyles(o.streams.ErrOut, false), true); err != nil {
		return nil, err
	}
	if !o.checks.failed(rep.Summary) {
		return res, nil
	}
	if n := rep.Summary.Errors; n > 0 {
		fmt.Fprintf(o.streams.ErrOut, "generate: %d error finding(s); nothing written\n", n)
	} else {
		fmt.Fprintf(o.streams.ErrOut, "generate: %d warning(s) and --strict; nothing written\n", rep.Summary.Warnings)
	}
	return nil, silentExit(ExitCheckFailed)
}

// printFiles writes files to stdout, each after a "# ==> PATH <==" line.
func (o *generateOptions) printFiles(files []genFile) error {
	for _, f := range files {
		if _, err := fmt.Fprintf(o.streams.Out, "# ==> %s <==\n%s", f.Path, f.Data); err != nil {
			return err
		}
	}
	return nil
}

// writeOut applies r to --out through the staging folder (stager): every
// file is written before any is moved into place, and an error leaves the
// tree as it was. It then names on stderr each file it kept. Errors: exit
// 3 when it kept a file it would have written (the tree is not what the
// spec makes).
func (o *generateOptions) writeOut(ctx context.Context, r outRun) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	s, err := newStager(o.out)
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.apply(ctx, r.write, r.remove); err != nil {
		return err
	}
	for _, p := range r.keep {
		fmt.Fprintf(o.streams.ErrOut, "generate: warning: kept %s: its content is not what gpuctl wrote there (edited by hand, or not gpuctl's); remove it to let generate write it\n", s.show(p))
	}
	for _, p := range r.handOver {
		fmt.Fprintf(o.streams.ErrOut, "generate: warning: kept %s: %s lists it and gpuctl no longer generates it, but its content is not what gpuctl wrote there; it is no longer listed\n", s.show(p), manifestName)
	}
	msg := fmt.Sprintf("generate: wrote %d file(s) under %s", len(r.write), o.out)
	if len(r.remove) > 0 {
		msg += fmt.Sprintf("; removed %d it wrote before and no longer generates (%s)", len(r.remove), strings.Join(r.remove, ", "))
	}
	fmt.Fprintln(o.streams.ErrOut, msg)
	if len(r.keep) > 0 {
		fmt.Fprintf(o.streams.ErrOut, "generate: kept %d file(s) it would have written; %s is not what the spec makes\n", len(r.keep), o.out)
		return silentExit(ExitCheckFailed)
	}
	return nil
}

// files are the requested layers of every checked environment, from what
// the check built (res has no error finding): check.Files, the one copy that
// plan compares too. Sorted by path.
func (o *generateOptions) files(res *check.Result) ([]genFile, error) {
	fs, err := check.Files(res, o.layer, filepath.Base(o.path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.path, err)
	}
	return fs, nil
}

// manifestName is check.ManifestName, the list of what generate wrote.
const manifestName = check.ManifestName

// runCheck compares what the run would write with the tree under --out:
// files that differ or are missing (the manifest .gpuctl-files among them),
// and files that the manifest on disk lists where this run writes but
// gpuctl would not write any more (extra: stale). A file the manifest
// does not list and the run does not write is not gpuctl's and is not
// compared.
func (o *generateOptions) runCheck(st *plan.Out, r outRun) error {
	var problems []string
	for _, f := range append(st.Files, plan.OutFile{Path: manifestName, Want: r.manifest.Data, Have: st.Manifest.Have, Exists: st.Manifest.Exists}) {
		switch {
		case !f.Exists:
			problems = append(problems, "missing  "+f.Path)
		case f.Differs():
			problems = append(problems, "differs  "+f.Path)
		}
	}
	for _, f := range st.Stale {
		problems = append(problems, "extra    "+f.Path)
	}
	sort.Strings(problems)
	for _, p := range problems {
		fmt.Fprintln(o.streams.Out, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(o.streams.ErrOut, "generate --check: %d file(s) under %s differ from what gpuctl generates; run the same command without --check\n", len(problems), o.out)
		return silentExit(ExitCheckFailed)
	}
	fmt.Fprintf(o.streams.ErrOut, "generate --check: %d file(s) up to date\n", len(st.Files)+1)
	return nil
}
