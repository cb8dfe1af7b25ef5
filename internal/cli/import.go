package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/importer"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// importOptions are the flags of `gpuctl import`.
type importOptions struct {
	streams *IOStreams
	paths   []string
	tf      tfFlags
	output  *outputFlag
	// verbose (-v) lists every skipped and unknown value on stderr, with
	// its reason and file:line:column.
	verbose bool
}

// tfFlags are the flags that say how to read existing Terraform, shared by
// import and validate.
type tfFlags struct {
	from     string
	varFiles []string
	vars     []string
	// varArgs are --var-file and --var in command-line order, which
	// Terraform applies in that order (the later one wins); pflag keeps
	// each flag's values but not their order across two flags, so both
	// flags append here through one varArgsValue each.
	varArgs []importer.VarArg
	// cluster-level values the imported files do not hold
	clusterName, region, k8sVersion string
	// root is --root: the folder every PATH and whatever they name is read
	// inside ("" for the nearest ancestor of the first PATH holding .git,
	// else that PATH)
	root string
}

func (f *tfFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.from, "from", "", "what PATH holds: "+strings.Join(importer.Froms, "|")+" (default: detected)")
	cmd.Flags().Var(&varArgsValue{f: f, file: true}, "var-file", "Terraform .tfvars or .tfvars.json `FILE` to read after terraform.tfvars(.json) and *.auto.tfvars(.json) (repeatable; --var-file and --var apply in command-line order, the later one wins)")
	cmd.Flags().Var(&varArgsValue{f: f}, "var", "Terraform variable `NAME=VALUE` (repeatable; --var-file and --var apply in command-line order, the later one wins); for Karpenter YAML only cluster_name, region and kubernetes_version")
	cmd.Flags().StringVar(&f.clusterName, "cluster-name", "", "imported sources: spec.clusterName, over what the files say (Karpenter YAML and node pools without their cluster do not hold it)")
	cmd.Flags().StringVar(&f.region, "region", "", "imported sources: spec.region, over what the files say (Karpenter YAML and files without the provider block do not hold it)")
	cmd.Flags().StringVar(&f.k8sVersion, "kubernetes-version", "", "imported sources: spec.kubernetesVersion (minor version, e.g. 1.33), over what the files say")
	cmd.Flags().StringVar(&f.root, "root", "", "imported sources: the `DIR` every PATH, and every file, template, module or folder they name, is read inside; nothing leaves it through .., an absolute path or a symbolic link (default: the nearest folder above the first PATH that holds .git, else that PATH itself)")
	_ = cmd.MarkFlagDirname("root")
	_ = cmd.RegisterFlagCompletionFunc("from", cobra.FixedCompletions(importer.Froms, cobra.ShellCompDirectiveNoFileComp))
}

// varArgsValue is the pflag.Value of --var-file (file) or --var: each
// value is kept by kind and, in command-line order, in f.varArgs.
type varArgsValue struct {
	f    *tfFlags
	file bool
}

func (v *varArgsValue) Set(s string) error {
	if v.file {
		v.f.varFiles = append(v.f.varFiles, s)
		v.f.varArgs = append(v.f.varArgs, importer.VarArg{File: s})
	} else {
		v.f.vars = append(v.f.vars, s)
		v.f.varArgs = append(v.f.varArgs, importer.VarArg{Var: s})
	}
	return nil
}

func (v *varArgsValue) Type() string { return "stringArray" }

func (v *varArgsValue) String() string {
	xs := v.f.vars
	if v.file {
		xs = v.f.varFiles
	}
	if len(xs) == 0 {
		return "[]"
	}
	return "[" + strings.Join(xs, ",") + "]"
}

func (f *tfFlags) validate() error {
	if f.from != "" && !contains(importer.Froms, f.from) {
		return usageErrorf("--from %q: want one of %s", f.from, strings.Join(importer.Froms, ", "))
	}
	for _, kv := range f.vars {
		if n, _, ok := strings.Cut(kv, "="); !ok || strings.TrimSpace(n) == "" {
			return usageErrorf("--var %q: want NAME=VALUE", kv)
		}
	}
	if f.root != "" {
		if st, err := os.Stat(f.root); err != nil || !st.IsDir() {
			return usageErrorf("--root %s: not a folder", diag.OneLine(f.root))
		}
	}
	return nil
}

func (f *tfFlags) options() importer.Options {
	return importer.Options{From: f.from, VarFiles: f.varFiles, Vars: f.vars, VarArgs: f.varArgs,
		ClusterName: f.clusterName, Region: f.region, KubernetesVersion: f.k8sVersion, Root: f.root}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func newImportCommand(streams *IOStreams) *cobra.Command {
	o := &importOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "import PATH [PATH...]",
		Short: "Write a cluster spec from existing Terraform, a cluster-toolkit blueprint or Karpenter YAML",
		Long: `Read GPU node pools where they already are and write them as a gpuctl
cluster spec (apiVersion ` + spec.APIVersion + `), each value with a comment
naming the file:line it came from.

Terraform (a folder, .tf files): google_container_node_pool, node_pool blocks
and settings of google_container_cluster, aws_eks_node_group with its
aws_launch_template, aws_eks_cluster, module calls of
terraform-aws-modules/eks/aws (eks_managed_node_groups and their defaults)
and terraform-google-modules/kubernetes-engine/google (node_pools,
node_pools_labels, node_pools_taints) with the modules' defaults for the
version the call allows, cloud-foundation-fabric's gke-nodepool and
gke-cluster-standard, local modules (./x, ../.., with their variables,
count/for_each and outputs, inside --root), helm_release of NVIDIA's charts
(gpu-operator, nvidia-device-plugin, dcgm-exporter) and eks-data-addons'
NVIDIA inputs as addons, and Karpenter NodePools in kubectl_manifest,
kubernetes_manifest and karpenter-resources chart values. Variables take
their values as Terraform gives them: defaults, terraform.tfvars,
*.auto.tfvars, then --var-file and --var in order. Expressions are
evaluated where they are static (locals, templates, Terraform's built-in
functions); a value that depends on a data source, a resource attribute the
provider computes, a module output gpuctl cannot follow or a variable
without a value is unknown: only that value is left out and listed, never
guessed. Resources, and pool attributes without a spec field, are listed as
skipped with why (-v lists them all). No provider, no terraform binary and
no network are used.

Cluster-toolkit blueprints (a blueprint YAML, then its deployment files,
whose vars win; --var NAME=VALUE wins over both): gke-cluster (name,
region, min_master_version or version_prefix, release_channel) and
gke-node-pool modules (machine type, guest_accelerator, static node count
or autoscaling, zones, spot, reservation_affinity, compact placement,
taints, kubernetes_labels) with the modules' defaults, and the NCCL
TCPX/TCPXO installer of kubectl-apply. $(vars.NAME) and $(...) expressions
are resolved as gcluster resolves them; $(MODULE.OUTPUT), ((...)) and a
var without a value are unknown.

Karpenter YAML: it does not name the cluster, its region or Kubernetes
version; they are unknown unless --cluster-name, --region and
--kubernetes-version (or --var cluster_name=..., region=...,
kubernetes_version=...) give them. Each NodePool that selects GPU instances is one pool of
the spec, with its EC2NodeClass: instance types (listed, or the types of
gpuctl's matrix that match the family, size, GPU name and count
requirements), the capacity type Karpenter prefers of those allowed,
zones, taints, labels, limits nvidia.com/gpu as autoscaling.max, the AMI
type of an amiSelectorTerms alias, the root (Bottlerocket: data) volume,
EFA-only network interfaces, placement group and capacity reservation.

Keys and modules with no spec field are listed as skipped.

Everything is read inside one folder, the root: --root DIR, else the
nearest folder above the first PATH that holds .git (the repository), else
that PATH itself (a file's folder). Every PATH must lie inside it, and
whatever is read on their behalf (the files of a folder, a file or
template an expression names) is opened inside it: no "..", absolute path
or symbolic link leaves it, and FIFOs, devices and sockets are refused.

` + "`gpuctl validate PATH`" + ` imports the same way in memory and points every
finding at the file:line the value came from.

` + ExitCodeHelp,
		Example: `  # a Terraform folder, with the variables of an environment
  gpuctl import infra/gke --var-file envs/prod.tfvars > spec.yaml

  # one variable on the command line, JSON with the origin of every value
  gpuctl import infra/eks --var cluster_name=ml-prod -o json

  # a cluster-toolkit blueprint with its deployment file
  gpuctl import gke-a3-mega.yaml gke-a3-mega-deployment.yaml

  # Karpenter NodePools and EC2NodeClasses
  gpuctl import karpenter/ --from karpenter

  # a blueprint whose $(file(...)) reads scripts from the folder above it
  gpuctl import --root cluster cluster/blueprints/a3.yaml
`,
		Args: minimumArgs(1, "at least one PATH (a Terraform folder or file, a blueprint, Karpenter YAML)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args
			if err := o.output.validate(); err != nil {
				return err
			}
			if err := o.tf.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	o.tf.addFlags(cmd)
	o.output = addViewFlag(cmd, importFormats)
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "list every skipped attribute, block or resource and every unknown value on stderr, each with its reason and file:line:column")
	return cmd
}

// run imports the paths and writes the spec once, at the end: a cancelled
// or failed import writes nothing on stdout, except -o json of an import
// that found no GPU pool, which writes what it read (unknowns and skipped
// among it) before the error.
func (o *importOptions) run(ctx context.Context) error {
	res, err := importer.ImportContext(ctx, o.paths, o.tf.options())
	var np *importer.NoPoolsError
	if err != nil && errors.As(err, &np) && ctx.Err() == nil {
		o.listAll(np.Result)
		if o.output.value == render.FormatJSON {
			if werr := writeImportJSON(o.streams, np.Result); werr != nil {
				return werr
			}
		}
	}
	if err != nil {
		return importError(ctx, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	o.listAll(res)
	return writeOutput(o.streams, o.output, importFormats, res)
}

// listAll writes, with -v, every unknown value and every skip of r on
// stderr, each with its reason and position.
func (o *importOptions) listAll(r *importer.Result) {
	if !o.verbose || r == nil {
		return
	}
	w := o.streams.ErrOut
	fmt.Fprintf(w, "%d unknown:\n", len(r.Unknowns))
	for _, u := range r.Unknowns {
		why := strings.Join(u.Because, ", ")
		fmt.Fprintf(w, "  %s %s (%s): %s\n", diag.OneLine(u.Path), diag.OneLine(u.What), diag.OneLine(positionOf(u.Origin)), diag.OneLine(why))
	}
	fmt.Fprintf(w, "%d skipped:\n", len(r.Skipped))
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "  %s (%s): %s\n", diag.OneLine(s.What), diag.OneLine(positionOf(s.Origin)), diag.OneLine(s.Reason))
	}
}

// positionOf is o as file:line:column (file alone where no line is known).
func positionOf(o importer.Origin) string {
	if o.Line == 0 {
		return o.File
	}
	return fmt.Sprintf("%s:%d:%d", o.File, o.Line, o.Column)
}

// importFormats are import's output formats: the spec with a comment on
// each value naming its origin (the default), or importJSON.
var importFormats = viewFormats[*importer.Result]{
	{render.FormatYAML, writeImportedSpec},
	{render.FormatJSON, writeImportJSON},
}

func writeImportJSON(s *IOStreams, r *importer.Result) error {
	return render.JSON(s.Out, importView(r))
}

func writeImportedSpec(s *IOStreams, r *importer.Result) error {
	_, err := s.Out.Write(r.YAML())
	return err
}

// importError: what cannot be imported is unreadable input (exit 2); an
// import stopped by ctx is ctx's error (Main exits 130 or 143).
func importError(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	var np *importer.NoPoolsError
	if errors.As(err, &np) {
		return withCode(ExitUsage, fmt.Errorf("%w; say what the files hold with --from, or check the path", err))
	}
	return withCode(ExitUsage, err)
}

// importJSON is `gpuctl import -o json`: the spec, the origin of each
// value, the unknown values and what was skipped.
type importJSON struct {
	APIVersion string                     `json:"apiVersion"`
	From       string                     `json:"from"`
	Files      []string                   `json:"files"`
	Spec       *spec.ClusterSpec          `json:"spec"`
	Origins    map[string]importer.Origin `json:"origins"`
	Unknowns   []importer.Unknown         `json:"unknowns"`
	Skipped    []importer.Skipped         `json:"skipped"`
}

func importView(r *importer.Result) importJSON {
	v := importJSON{APIVersion: spec.APIVersion, From: r.From, Files: r.Files, Spec: r.Spec, Origins: r.Origins,
		Unknowns: r.Unknowns, Skipped: r.Skipped}
	if v.Files == nil {
		v.Files = []string{}
	}
	if v.Unknowns == nil {
		v.Unknowns = []importer.Unknown{}
	}
	if v.Skipped == nil {
		v.Skipped = []importer.Skipped{}
	}
	return v
}
