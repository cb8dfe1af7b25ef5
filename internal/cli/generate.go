package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/hclgen"
	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Layers gpuctl generates.
const (
	layerTerraform = "terraform"
	layerHelm      = "helm"
	layerManifests = "manifests"
	layerAll       = "all"
)

// baseEnvDir is the folder of the base spec (the spec without overlays).
const baseEnvDir = "base"

// validateSpec runs the version matrix on one environment's resolved spec.
// Generation refuses a spec with any error finding.
var validateSpec = func(cs *spec.ClusterSpec, asOf time.Time) []diag.Finding {
	return matrix.Validate(cs, matrix.Options{AsOf: asOf})
}

type generateOptions struct {
	streams *IOStreams
	layer   string
	path    string
	env     string
	out     string
	check   bool
	asOf    string

	asOfTime time.Time

	doc  *spec.Document
	envs []string
	// resolved holds the environments already resolved (--env, by complete).
	resolved map[string]*spec.ClusterSpec
}

func newGenerateCommand(streams *IOStreams) *cobra.Command {
	o := &generateOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "generate terraform|helm|manifests|all SPEC",
		Short: "Generate the Terraform, Helm values and in-cluster objects of a spec",
		Long: `Generate writes what a platform team commits for a cluster spec, one folder per
environment (base/ for the spec without overlays, then one per environment):

  terraform/<env>/  versions.tf, variables.tf, node_pools.tf, outputs.tf
                    (google_container_node_pool on GKE; aws_eks_node_group,
                    aws_launch_template and aws_placement_group on EKS)
  helm/<env>/       <chart>.values.yaml for nvidia-device-plugin, gpu-operator
                    and dcgm-exporter, as the spec uses them
  manifests/<env>/  kueue.yaml (ResourceFlavors, ClusterQueue, LocalQueues) and
                    teams.yaml (Namespaces, ResourceQuotas, NetworkPolicies)

The spec is validated first: if any environment has an error finding, the
findings are printed and nothing is written (exit 3). The layers are also
checked against each other (every GPU DaemonSet tolerates and selects its
pools, Kueue quotas name the resource the device plugin advertises, one device
plugin per pool). Output is byte-identical for the same spec and gpuctl.

Without --out the files go to stdout, each after a "# ==> PATH <==" line.
--check compares --out with what would be generated and exits 3 listing the
files that differ, are missing or are not generated any more.

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
			if err := o.complete(args); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.env, "env", "", "generate only this environment (default: the base spec and every environment)")
	f.StringVar(&o.out, "out", "", "write the files under this folder instead of stdout")
	f.BoolVar(&o.check, "check", false, "compare --out with what would be generated; exit 3 when they differ")
	f.StringVar(&o.asOf, "as-of", "", "evaluate date-dependent rules (driver EOL, support windows) at this date, YYYY-MM-DD (default today)")
	return cmd
}

func (o *generateOptions) complete(args []string) error {
	o.layer, o.path = args[0], args[1]
	doc, err := spec.Load(o.path, o.streams.In)
	if err != nil {
		var se *spec.Error
		if errors.As(err, &se) {
			return withCode(ExitUsage, err)
		}
		return err
	}
	o.doc = doc
	o.resolved = map[string]*spec.ClusterSpec{}
	if o.env != "" {
		cs, err := doc.Resolve(o.env)
		if err != nil {
			return withCode(ExitUsage, err)
		}
		o.resolved[o.env] = cs
		o.envs = []string{o.env}
		return nil
	}
	o.envs = append([]string{""}, doc.Environments()...)
	return nil
}

func (o *generateOptions) validate() error {
	switch o.layer {
	case layerTerraform, layerHelm, layerManifests, layerAll:
	default:
		return usageErrorf("unknown layer %q: want terraform, helm, manifests or all", o.layer)
	}
	if o.asOf != "" {
		t, err := time.Parse("2006-01-02", o.asOf)
		if err != nil {
			return usageErrorf("--as-of %q: want a date YYYY-MM-DD", o.asOf)
		}
		o.asOfTime = t
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
type genFile struct {
	Path string
	Data []byte
}

func (o *generateOptions) run() error {
	files, findings, err := o.generate()
	if err != nil {
		return err
	}
	errorsFound, infos := 0, 0
	for _, f := range findings {
		switch f.Severity {
		case diag.SeverityError:
			errorsFound++
		case diag.SeverityInfo:
			infos++
			continue // `gpuctl validate` shows them
		}
		printFinding(o.streams, f)
	}
	if infos > 0 {
		fmt.Fprintf(o.streams.ErrOut, "generate: %d info finding(s) not shown; `gpuctl validate` lists them\n", infos)
	}
	if errorsFound > 0 {
		fmt.Fprintf(o.streams.ErrOut, "generate: %d error finding(s); nothing written\n", errorsFound)
		return silentExit(ExitCheckFailed)
	}
	switch {
	case o.check:
		return o.runCheck(files)
	case o.out != "":
		for _, f := range files {
			p := filepath.Join(o.out, filepath.FromSlash(f.Path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintf(o.streams.ErrOut, "generate: wrote %d file(s) under %s\n", len(files), o.out)
		return nil
	default:
		for _, f := range files {
			if _, err := fmt.Fprintf(o.streams.Out, "# ==> %s <==\n%s", f.Path, f.Data); err != nil {
				return err
			}
		}
		return nil
	}
}

// generate validates every environment and, when no environment has an
// error, generates the requested layers. Files are sorted by path.
func (o *generateOptions) generate() ([]genFile, []diag.Finding, error) {
	var findings []diag.Finding
	resolved := map[string]*spec.ClusterSpec{}
	// layers are built once per environment, for the cross-check and the
	// Helm and manifest files.
	layers := map[string]*helmgen.Layers{}
	for _, env := range o.envs {
		cs, ok := o.resolved[env]
		if !ok {
			var err error
			if cs, err = o.doc.Resolve(env); err != nil {
				return nil, nil, withCode(ExitUsage, err)
			}
		}
		resolved[env] = cs
		fs := validateSpec(cs, o.asOfTime)
		if !hasErrors(fs) {
			l, err := helmgen.Build(cs)
			if err != nil {
				return nil, nil, o.genError(env, err)
			}
			cross, err := l.Check()
			if err != nil {
				return nil, nil, o.genError(env, err)
			}
			layers[env] = l
			fs = append(fs, cross...)
		}
		for _, f := range fs {
			f.Environment = env
			if f.File == "" {
				f.File = o.doc.File
				where, line, col := o.doc.Locate(env, f.Path)
				f.Path, f.Line, f.Column = where, line, col
			}
			findings = append(findings, f)
		}
	}
	if hasErrors(findings) {
		return nil, findings, nil
	}
	var files []genFile
	specFile := filepath.Base(o.path)
	for _, env := range o.envs {
		cs := resolved[env]
		dir := env
		if dir == "" {
			dir = baseEnvDir
		}
		if o.layer == layerTerraform || o.layer == layerAll {
			tf, err := hclgen.Generate(cs, hclgen.Options{SpecFile: specFile, Environment: env})
			if err != nil {
				return nil, nil, o.genError(env, err)
			}
			for _, f := range tf {
				files = append(files, genFile{layerTerraform + "/" + dir + "/" + f.Name, f.Data})
			}
		}
		hopts := helmgen.Options{SpecFile: specFile, Environment: env}
		if o.layer == layerHelm || o.layer == layerAll {
			vs, err := layers[env].Values(hopts)
			if err != nil {
				return nil, nil, o.genError(env, err)
			}
			for _, f := range vs {
				files = append(files, genFile{layerHelm + "/" + dir + "/" + f.Name, f.Data})
			}
		}
		if o.layer == layerManifests || o.layer == layerAll {
			ms, err := layers[env].Manifests(hopts)
			if err != nil {
				return nil, nil, o.genError(env, err)
			}
			for _, f := range ms {
				files = append(files, genFile{layerManifests + "/" + dir + "/" + f.Name, f.Data})
			}
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, findings, nil
}

// genError is a spec the generators cannot implement: invalid input (exit 2).
func (o *generateOptions) genError(env string, err error) error {
	if env == "" {
		return withCode(ExitUsage, fmt.Errorf("%s: %w", o.doc.File, err))
	}
	return withCode(ExitUsage, fmt.Errorf("%s: environment %s: %w", o.doc.File, env, err))
}

func hasErrors(fs []diag.Finding) bool {
	for _, f := range fs {
		if f.Severity == diag.SeverityError {
			return true
		}
	}
	return false
}

// printFinding writes one finding as "file:line:col: severity RULE [env]: message (fix)".
func printFinding(streams *IOStreams, f diag.Finding) {
	loc := f.File
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column)
	}
	env := ""
	if f.Environment != "" {
		env = " [" + f.Environment + "]"
	}
	fmt.Fprintf(streams.ErrOut, "%s: %s %s%s: %s: %s", loc, f.Severity, f.Rule, env, f.Path, f.Message)
	if f.Fix != "" {
		fmt.Fprintf(streams.ErrOut, " (fix: %s)", f.Fix)
	}
	fmt.Fprintln(streams.ErrOut)
}

// runCheck compares files with the tree under --out: files that differ or
// are missing, and files under the generated layer/environment folders that
// gpuctl would not write any more.
func (o *generateOptions) runCheck(files []genFile) error {
	want := map[string][]byte{}
	dirs := map[string]bool{}
	for _, f := range files {
		want[f.Path] = f.Data
		dirs[f.Path[:strings.LastIndex(f.Path, "/")]] = true
	}
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
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		entries, err := os.ReadDir(filepath.Join(o.out, filepath.FromSlash(d)))
		if err != nil {
			continue
		}
		for _, e := range entries {
			p := d + "/" + e.Name()
			if _, ok := want[p]; !ok && !e.IsDir() {
				problems = append(problems, "extra    "+p)
			}
		}
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
