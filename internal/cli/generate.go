package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Layers gpuctl generates.
const (
	layerTerraform = check.LayerTerraform
	layerHelm      = check.LayerHelm
	layerManifests = check.LayerManifests
	layerAll       = check.LayerAll
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
		Use:   "generate terraform|helm|manifests|all SPEC",
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
                    DaemonSets its transport needs)

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
wrote. --check compares --out with what would be generated and exits 3
listing the files that differ, are missing or are listed but not generated
any more (an environment taken out of the spec, an add-on turned off);
without --check generate removes those. Files the list does not name (a
backend.tf or providers.tf beside the generated Terraform) are never
compared or removed. terraform/<env>/ is a child
module: variables in, outputs out, no provider or backend block.

Environment: GPUCTL_AS_OF, GPUCTL_ENV, GPUCTL_STRICT, GPUCTL_WAIVERS, GPUCTL_POLICY set the
flags of the same name when they are not given, as for validate.

` + ExitCodeHelp,
		Example: `  # Everything for every environment, into ./generated
  gpuctl generate all examples/gke-h100-l4.yaml --out generated

  # Only the Terraform of the dev environment, to stdout
  gpuctl generate terraform examples/gke-h100-l4.yaml --env dev

  # CI gate: fail when the committed files were edited by hand or are stale
  gpuctl generate all examples/gke-h100-l4.yaml --out generated --check`,
		Args:      exactArgs(2, "a LAYER (terraform, helm, manifests or all) and a SPEC file"),
		ValidArgs: []string{layerTerraform, layerHelm, layerManifests, layerAll},
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
	case layerTerraform, layerHelm, layerManifests, layerAll:
	default:
		return usageErrorf("unknown layer %q: want terraform, helm, manifests or all", o.layer)
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
	for _, e := range o.doc.Environments() {
		if e == baseEnvDir {
			return usageErrorf("environment %q clashes with the folder of the base spec; rename it", e)
		}
	}
	return nil
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
	env := check.RunEnv(res)
	stale, err := o.stale(files, env)
	if err != nil {
		return err
	}
	m, err := o.manifestFile(files, env)
	if err != nil {
		return err
	}
	files = append(files, m)
	if o.check {
		return o.runCheck(files, stale)
	}
	return o.writeOut(ctx, files, stale)
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

// writeOut writes files under --out and removes the stale ones. Each file
// is written to a temporary file beside it and renamed over it, and no
// link below --out is followed; an interrupt stops between files, never
// inside one.
func (o *generateOptions) writeOut(ctx context.Context, files []genFile, stale []string) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := mkdirNoLinks(o.out, path.Dir(f.Path)); err != nil {
			return withCode(ExitUsage, fmt.Errorf("--out: %w", err))
		}
		if err := writeFileAtomic(filepath.Join(o.out, filepath.FromSlash(f.Path)), f.Data, 0o644); err != nil {
			if errors.Is(err, errSymlink) {
				return withCode(ExitUsage, fmt.Errorf("--out: %w", err))
			}
			return err
		}
	}
	// Files an earlier generate wrote here and this one does not any
	// more (the manifest lists them) are removed; nothing else is.
	for _, p := range stale {
		if err := removeNoLinks(o.out, p); err != nil {
			return err
		}
	}
	msg := fmt.Sprintf("generate: wrote %d file(s) under %s", len(files), o.out)
	if len(stale) > 0 {
		msg += fmt.Sprintf("; removed %d it wrote before and no longer generates (%s)", len(stale), strings.Join(stale, ", "))
	}
	fmt.Fprintln(o.streams.ErrOut, msg)
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

const manifestHeader = "# Files written by gpuctl generate; gpuctl generate --check compares these and no others.\n"

// readManifest returns the paths the manifest under --out lists (nil when
// there is none).
func (o *generateOptions) readManifest() ([]string, error) {
	return check.ReadManifest(os.DirFS(o.out))
}

// stale are the entries of the manifest on disk that this run would write
// in its place (its layers and environment: check.InScope) but does not
// any more, and that are still on disk: a removed environment, an add-on
// turned off.
func (o *generateOptions) stale(files []genFile, env string) ([]string, error) {
	listed, err := o.readManifest()
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, f := range files {
		want[f.Path] = true
	}
	var out []string
	for _, p := range listed {
		if want[p] || !check.InScope(p, o.layer, env) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(o.out, filepath.FromSlash(p))); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// removeNoLinks removes the file rel (slash-separated) under root, after
// checking that no folder on the way is a symbolic link (so nothing
// outside root is removed).
func removeNoLinks(root, rel string) error {
	dir := root
	parts := strings.Split(rel, "/")
	for _, d := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, d)
		st, err := os.Lstat(dir)
		if err != nil {
			return err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return withCode(ExitUsage, fmt.Errorf("--out: %s: %w", dir, errSymlink))
		}
	}
	if err := os.Remove(filepath.Join(root, filepath.FromSlash(rel))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// manifestFile is the manifest after this run: what it writes, and the
// entries of the manifest on disk that belong to another run (another
// layer or environment: out of check.InScope).
func (o *generateOptions) manifestFile(files []genFile, env string) (genFile, error) {
	old, err := o.readManifest()
	if err != nil {
		return genFile{}, err
	}
	set := map[string]bool{}
	for _, p := range old {
		if !check.InScope(p, o.layer, env) && p != manifestName {
			set[p] = true
		}
	}
	for _, f := range files {
		set[f.Path] = true
	}
	var b strings.Builder
	b.WriteString(manifestHeader)
	for _, p := range slices.Sorted(maps.Keys(set)) {
		b.WriteString(p + "\n")
	}
	return genFile{Path: manifestName, Data: []byte(b.String())}, nil
}

// runCheck compares files with the tree under --out: files that differ or
// are missing (the manifest .gpuctl-files among them), and files that the
// manifest on disk lists where this run writes but gpuctl would not write
// any more (extra: stale). A file the manifest does not list is not
// gpuctl's and is not compared.
func (o *generateOptions) runCheck(files []genFile, stale []string) error {
	var problems []string
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(o.out, filepath.FromSlash(f.Path)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, "missing  "+f.Path)
		case err != nil:
			return err
		case !bytes.Equal(got, f.Data):
			problems = append(problems, "differs  "+f.Path)
		}
	}
	for _, p := range stale {
		problems = append(problems, "extra    "+p)
	}
	sort.Strings(problems)
	for _, p := range problems {
		fmt.Fprintln(o.streams.Out, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(o.streams.ErrOut, "generate --check: %d file(s) under %s differ from what gpuctl generates; run the same command without --check\n", len(problems), o.out)
		return silentExit(ExitCheckFailed)
	}
	fmt.Fprintf(o.streams.ErrOut, "generate --check: %d file(s) up to date\n", len(files))
	return nil
}
