// Package importer reads GPU node pools that already exist as code —
// Terraform (.tf with its .tfvars), cluster-toolkit blueprints and
// Karpenter NodePool / EC2NodeClass YAML — and writes them as a gpuctl
// cluster spec, so that `gpuctl validate` can judge them and `gpuctl
// generate` can write them again.
//
// Terraform expressions are evaluated the way Terraform evaluates them
// where they are static: variables (defaults, terraform.tfvars,
// *.auto.tfvars, --var-file, --var), locals, string templates and the pure
// functions of go-cty's function library (lookup, merge, concat, try, ...).
// Local modules (a source that is a folder inside the root) are followed:
// each instance evaluated with the call's arguments as its variables, its
// outputs read where the caller refers to them (localmod.go). A value that
// depends on a resource attribute the provider computes, a data source, the
// output of a module import does not read or a variable without a value is
// unknown: it is left out of the spec and listed with its reason, never
// guessed.
//
// Every value of the spec carries its origin, the file:line:column it was
// read from; Result.Locate maps a finding's path there, so findings on an
// imported spec point at the Terraform or YAML the user changes.
//
// The package reads files and returns values; it never prints.
package importer

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gpuctl/gpuctl/internal/safefs"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Sources import reads.
const (
	FromTerraform = "terraform"
	FromBlueprint = "blueprint"
	FromKarpenter = "karpenter"
)

// Froms are the values of Options.From, in the order --help lists them.
var Froms = []string{FromTerraform, FromBlueprint, FromKarpenter}

// Options say what to read and how.
type Options struct {
	// From is terraform, blueprint or karpenter; "" detects it from the
	// files (a .tf file, or a folder with one, is Terraform; YAML with
	// deployment_groups is a blueprint; YAML of karpenter.sh is Karpenter;
	// a folder without .tf files is what its YAML files are).
	From string
	// VarFiles are --var-file files, applied in order after
	// terraform.tfvars and *.auto.tfvars (Terraform only).
	VarFiles []string
	// Vars are --var name=value assignments, applied in order after the
	// var files (a later one wins, as in Terraform); for a blueprint they
	// set its vars over the deployment files' (the value read as YAML).
	Vars []string
	// Name is metadata.name of the spec; "" names it after the cluster or
	// the first path.
	Name string
	// ClusterName, Region and KubernetesVersion set the spec's
	// cluster-level values (--cluster-name, --region,
	// --kubernetes-version) over what the files say; for sources that
	// cannot hold them (Karpenter YAML, node pools without their cluster
	// or provider block) they are the only way to give them. "" leaves a
	// value as imported.
	ClusterName, Region, KubernetesVersion string

	// VarArgs are the --var-file and --var flags in command-line order,
	// which Terraform applies in that order (the later one wins). When
	// set, a Terraform import reads them instead of VarFiles then Vars
	// (which hold the same flags by kind).
	VarArgs []VarArg

	// Root is the folder whatever is read on behalf of the paths must stay
	// inside (--root): every path must lie inside it by its name (else an
	// *OutsideRootError), the files of a folder path and a file, template,
	// module or variable file a path's content names are read only inside
	// it, and a link is followed only where it stays inside. "" is the
	// nearest ancestor of the first path that holds .git, else that path
	// itself, its folder for a file (safefs.FindRoot).
	Root string

	// fromVar names the --var that set a cluster-level value (Karpenter)
	fromVar map[string]string

	// root is the open Root and ctx the command's context, set by
	// ImportContext for the readers below it.
	root *safefs.Root
	ctx  context.Context
}

// VarArg is one --var-file (File) or --var (Var, NAME=VALUE) flag.
type VarArg struct {
	File string
	Var  string
}

// clusterFields are the spec's cluster-level values: the spec path, the
// flag that sets it, and the --var name a Karpenter import takes for it.
var clusterFields = []clusterField{
	{"spec.clusterName", "--cluster-name", "cluster_name", "the cluster name"},
	{"spec.region", "--region", "region", "the region"},
	{"spec.kubernetesVersion", "--kubernetes-version", "kubernetes_version", "the Kubernetes version"},
}

// clusterField is a cluster-level spec field that options can set: its
// path, its flag, its --var name (Karpenter YAML) and what it is.
type clusterField struct{ path, flag, varName, what string }

// field is the cluster-level value of o at path.
func (o *Options) field(path string) *string {
	switch path {
	case "spec.clusterName":
		return &o.ClusterName
	case "spec.region":
		return &o.Region
	}
	return &o.KubernetesVersion
}

func specField(s *spec.ClusterSpec, path string) *string {
	switch path {
	case "spec.clusterName":
		return &s.Spec.ClusterName
	case "spec.region":
		return &s.Spec.Region
	}
	return &s.Spec.KubernetesVersion
}

// Origin is where a value was read: file, 1-based line and column.
type Origin struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	// Note says how the value was derived from what was read, e.g.
	// "min_node_count 2 per zone x 3 zones"; "" when it was read as is.
	Note string `json:"note,omitempty"`
}

func (o Origin) String() string {
	if o.Line == 0 {
		return o.File
	}
	return fmt.Sprintf("%s:%d", o.File, o.Line)
}

// Unknown is a value import could not know without applying the
// configuration.
type Unknown struct {
	// Path is the spec field the value would fill.
	Path string `json:"path"`
	// What names the attribute, e.g. "aws_eks_node_group.gpu instance_types".
	What string `json:"what"`
	// Because lists what it depends on ("data.aws_ami.gpu.id", "var.zone,
	// which has no value").
	Because []string `json:"because"`
	Origin  Origin   `json:"origin"`
	// Hint says how to give the value, e.g. "pass --region REGION".
	Hint string `json:"hint,omitempty"`
	// PlatformDefault: no file read sets the value, so the platform picks
	// its default when it creates the resource (a cluster's version).
	PlatformDefault bool `json:"platformDefault,omitempty"`
}

// Reason is the unknown value in one sentence.
func (u Unknown) Reason() string {
	return fmt.Sprintf("%s is unknown until Terraform applies: it depends on %s (%s)", u.What, strings.Join(u.Because, ", "), u.Origin)
}

// reason is u.Reason() in the words of the source read: a blueprint is
// deployed, Karpenter launches nodes, Terraform applies.
func (r *Result) reason(u Unknown) string {
	s := u.Reason()
	if r.From != FromTerraform {
		s = fmt.Sprintf("%s is unknown before %s: it depends on %s (%s)", u.What, r.Until(), strings.Join(u.Because, ", "), u.Origin)
	}
	if u.Hint != "" {
		s += "; " + u.Hint
	}
	return s
}

// Until says when the unknown values become known: "Terraform applies",
// "the blueprint is deployed", "Karpenter launches a node".
func (r *Result) Until() string {
	switch r.From {
	case FromBlueprint:
		return "the blueprint is deployed"
	case FromKarpenter:
		return "Karpenter launches a node"
	}
	return "Terraform applies"
}

// Skipped is something import read but does not turn into spec fields.
type Skipped struct {
	// What is the resource, module call, block or document, e.g.
	// "aws_iam_role.nodes" or "module.vpc".
	What   string `json:"what"`
	Reason string `json:"reason"`
	Origin Origin `json:"origin"`
}

// Result is an imported spec with the origin of each value.
type Result struct {
	Spec *spec.ClusterSpec
	// From is the source kind that was read.
	From string
	// Files are the files read, in order.
	Files []string
	// Origins maps spec field paths (as findings report them) to where
	// their values were read.
	Origins map[string]Origin
	// Unknowns are the values left out because they are not known before
	// apply; Skipped what was read and not imported. Both sorted by origin.
	Unknowns []Unknown
	Skipped  []Skipped
}

// Import reads paths (files or folders) as opts say. Errors: a path that
// cannot be read, a file that does not parse, no GPU node pool found, a
// --var that is not name=value.
func Import(paths []string, opts Options) (*Result, error) {
	return ImportContext(context.Background(), paths, opts)
}

// ImportContext is Import that stops when ctx is done (the error then wraps
// ctx's error) and reads under opts.Root: every PATH must lie inside the
// root by its name, and whatever is read on behalf of the paths is opened
// inside it (links are followed only inside it). Errors: those of Import,
// a PATH outside the root, a root that is not a folder.
func ImportContext(ctx context.Context, paths []string, opts Options) (*Result, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no path to import")
	}
	if err := stopped(ctx); err != nil {
		return nil, err
	}
	root, err := openRoot(paths[0], opts.Root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	opts.root, opts.ctx = root, ctx
	for _, p := range paths {
		if _, err := opts.place(p); err != nil {
			return nil, err
		}
	}
	res, err := importPaths(paths, opts)
	if cerr := opts.alive(); cerr != nil {
		return nil, cerr // stopped: no result, whatever came of it
	}
	return res, err
}

// openRoot opens the root of an import of path: dir when given, else
// safefs.FindRoot(path).
func openRoot(path, dir string) (*safefs.Root, error) {
	if dir == "" {
		var err error
		if dir, err = safefs.FindRoot(path); err != nil {
			return nil, err
		}
	}
	return safefs.OpenRoot(dir)
}

// importPaths is ImportContext once the root is open.
func importPaths(paths []string, opts Options) (*Result, error) {
	from, err := detectPaths(&opts, paths)
	if err != nil {
		return nil, err
	}
	b := newBuilder(from)
	b.ctx = opts.ctx
	switch from {
	case FromTerraform:
		err = importTerraform(b, paths, opts)
	case FromBlueprint:
		err = importBlueprint(b, paths, opts)
	case FromKarpenter:
		if err = karpenterVars(&opts); err == nil {
			err = importKarpenter(b, paths, &opts)
		}
	default:
		return nil, fmt.Errorf("--from %q: want one of %s", from, strings.Join(Froms, ", "))
	}
	if err == nil {
		err = opts.alive()
	}
	if err != nil {
		return nil, err
	}
	b.clusterLevel(opts)
	if from == FromKarpenter {
		b.karpenterAddons(paths)
	}
	res := b.finish(opts.Name, paths)
	if len(res.Spec.Spec.NodePools) == 0 {
		return res, &NoPoolsError{Result: res}
	}
	return res, nil
}

// detectPaths is opts.From, else what the first of paths that tells holds.
// Errors: a path cannot be read, none tells (with the syntax error of a
// YAML file that does not parse, when one does not).
func detectPaths(opts *Options, paths []string) (string, error) {
	if opts.From != "" {
		return opts.From, nil
	}
	for _, p := range paths {
		from, err := detect(opts, p)
		if err != nil || from != "" {
			return from, err
		}
	}
	// YAML that does not parse: say where, not that it is unknown
	if err := yamlSyntax(opts, paths); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: cannot tell what it is (Terraform, cluster-toolkit blueprint or Karpenter YAML); say it with --from", paths[0])
}

// yamlSyntax is the syntax error (or limit passed) of the first YAML file
// of paths (files or folders) that does not parse; nil when all parse.
func yamlSyntax(opts *Options, paths []string) error {
	var files []string
	for _, p := range paths {
		if isDir, err := opts.isDir(p); err == nil && isDir {
			m, err := opts.list(p, ".yaml", ".yml")
			if err != nil {
				return err
			}
			files = append(files, m...)
			continue
		}
		if ext := strings.ToLower(filepath.Ext(p)); ext == ".yaml" || ext == ".yml" {
			files = append(files, p)
		}
	}
	for _, f := range files {
		data, err := opts.readPath(f, safefs.Blueprint)
		if err != nil {
			return err
		}
		if _, err := yamlDocs(f, data, BlueprintLimits); err != nil {
			return err
		}
	}
	return nil
}

// karpenterVars turns the --var assignments of a Karpenter import into
// the cluster-level values they name (cluster_name, region,
// kubernetes_version); Karpenter YAML has no variables, so any other name,
// and any --var-file, is an error.
func karpenterVars(opts *Options) error {
	if len(opts.VarFiles) > 0 {
		return fmt.Errorf("--var-file: Karpenter YAML has no variables; give the cluster-level values with --cluster-name, --region and --kubernetes-version")
	}
	for _, kv := range opts.Vars {
		name, v, _ := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		found := false
		for _, f := range clusterFields {
			if name == f.varName {
				if dst := opts.field(f.path); *dst == "" {
					*dst = v // the flag wins
					if opts.fromVar == nil {
						opts.fromVar = map[string]string{}
					}
					opts.fromVar[f.path] = "--var " + name
				}
				found = true
			}
		}
		if !found {
			return fmt.Errorf("--var %q: Karpenter YAML has no variables; --var sets only cluster_name, region and kubernetes_version (or pass --cluster-name, --region, --kubernetes-version)", kv)
		}
	}
	return nil
}

// clusterLevel sets the cluster-level values opts gives, and lists as
// unknown those neither the files nor opts give: a source that cannot
// hold them (a Karpenter NodePool) or files without the block that sets
// them (an EKS node group without its provider "aws" block) leaves them
// unknown, not missing.
func (b *builder) clusterLevel(opts Options) {
	for _, f := range clusterFields {
		if v := *opts.field(f.path); v != "" {
			b.setClusterField(f, v, opts)
			continue
		}
		if *specField(&b.cs, f.path) != "" {
			continue
		}
		b.unknownClusterField(f)
	}
}

// setClusterField sets field f to v from opts (its flag, or the --var that
// set it), which also settles what was unknown about it.
func (b *builder) setClusterField(f clusterField, v string, opts Options) {
	*specField(&b.cs, f.path) = v
	b.origins[f.path] = Origin{File: f.flag}
	if by, ok := opts.fromVar[f.path]; ok {
		b.origins[f.path] = Origin{File: by}
	}
	kept := b.unknowns[:0]
	for _, u := range b.unknowns {
		if u.Path != f.path {
			kept = append(kept, u)
		}
	}
	b.unknowns = kept
}

// unknownClusterField lists field f, which nothing set, as unknown with a
// hint to pass it (or adds the hint to what is already unknown about it).
// Nothing is listed before the provider is known.
func (b *builder) unknownClusterField(f clusterField) {
	hint := "pass " + f.flag + " VALUE"
	if b.from == FromKarpenter {
		hint = fmt.Sprintf("pass %s VALUE or --var %s=VALUE", f.flag, f.varName)
	}
	have := false
	for i, u := range b.unknowns {
		if u.Path == f.path {
			have = true
			if u.Hint == "" {
				b.unknowns[i].Hint = hint
			}
		}
	}
	if have || b.cs.Spec.Provider == "" {
		return
	}
	at := Origin{}
	if len(b.files) > 0 {
		at.File = b.files[0]
	}
	if len(b.pools) > 0 {
		at = b.pools[0].origins[""]
	}
	b.unknowns = append(b.unknowns, Unknown{Path: f.path, What: f.what, Because: []string{b.unsetBecause(f)}, Origin: at, Hint: hint,
		PlatformDefault: f.path == "spec.kubernetesVersion" && b.from != FromKarpenter && (b.clusterRead || b.from == FromBlueprint)})
}

// unsetBecause says what would have set field f in the files read.
func (b *builder) unsetBecause(f clusterField) string {
	if b.from != FromTerraform {
		return "no block of the files read sets it"
	}
	switch {
	case f.path == "spec.region" && b.cs.Spec.Provider == spec.ProviderEKS:
		return `the provider "aws" block's region, which no file read sets (it may be in a file not given, or in AWS_REGION or the profile)`
	case f.path == "spec.region":
		return "the cluster's location or the provider \"google\" block's region, which no file read sets"
	case f.path == "spec.clusterName":
		return "the cluster resource or cluster_name argument, which no file read sets"
	case f.path == "spec.kubernetesVersion" && !b.clusterRead:
		return "the cluster's version: the node pools join a cluster the files read do not create (an existing cluster, or one a data source reads)"
	case f.path == "spec.kubernetesVersion" && b.cs.Spec.Provider == spec.ProviderGKE:
		return "the cluster's min_master_version (kubernetes_version of a module), which no file read sets: GKE then picks its release channel's default version"
	case f.path == "spec.kubernetesVersion":
		return "the cluster's version (kubernetes_version or cluster_version of a module), which no file read sets: EKS then picks its default version"
	}
	return "no block of the files read sets it"
}

// NoPoolsError is an import that found no GPU node pool; Result holds what
// was skipped.
type NoPoolsError struct{ Result *Result }

func (e *NoPoolsError) Error() string {
	files := strings.Join(e.Result.Files, ", ")
	if n := len(e.Result.Files); n > 4 {
		files = fmt.Sprintf("%s and %d more file(s)", strings.Join(e.Result.Files[:4], ", "), n-4)
	}
	msg := "no GPU node pool found in " + files
	ss := telling(e.Result.Skipped)
	if len(ss) > 0 && skipRank(ss[0]) == 0 {
		msg += ": " + ss[0].What + " is " + ss[0].Reason
	}
	if n := len(ss); n > 0 {
		msg += fmt.Sprintf(" (%d skipped: %s)", n, skippedList(ss, 5))
	}
	return msg
}

// telling is ss with the skips that tell most why no pool was found
// first: an Autopilot cluster, then node pools and module calls, then
// the rest (data sources, resources and blocks of other kinds) in order.
func telling(ss []Skipped) []Skipped {
	out := slices.Clone(ss)
	slices.SortStableFunc(out, func(a, b Skipped) int { return skipRank(a) - skipRank(b) })
	return out
}

// skipRank orders skips by how much they say about a missing GPU pool.
func skipRank(s Skipped) int {
	switch {
	case strings.HasPrefix(s.Reason, "an Autopilot cluster"), strings.HasPrefix(s.Reason, "a self-managed node group"), strings.HasPrefix(s.Reason, "a Karpenter v1alpha5"):
		return 0
	case strings.HasPrefix(s.What, "data."), strings.HasPrefix(s.Reason, "resource type gpuctl does not import"), strings.Contains(s.Reason, "block: it configures no node pool"):
		return 2
	}
	return 1
}

func skippedList(ss []Skipped, max int) string {
	var parts []string
	for i, s := range ss {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more; -v lists them", len(ss)-max))
			break
		}
		parts = append(parts, skipShown(s))
	}
	return strings.Join(parts, ", ")
}

// Detect says what path holds: terraform, blueprint or karpenter; "" for
// anything else (a gpuctl spec among them). It reads inside the root of
// path (safefs.FindRoot), as Import does. Errors: path cannot be read.
func Detect(path string) (string, error) {
	return DetectIn(path, "")
}

// DetectIn is Detect reading inside the folder root ("" for the root
// Import would use). Errors: path cannot be read, path is not inside root
// (wrapping safefs.ErrOutside).
func DetectIn(path, root string) (string, error) {
	r, err := openRoot(path, root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	return detect(&Options{root: r}, path)
}

// detect is Detect inside opts' root.
func detect(opts *Options, path string) (string, error) {
	rel, err := opts.place(path)
	if err != nil {
		return "", err
	}
	st, err := opts.root.Stat(rel)
	if err != nil {
		return "", named(err, path)
	}
	if st.IsDir() {
		return detectDir(opts, path)
	}
	if !st.Mode().IsRegular() {
		// a FIFO or device: only a spec is read from those (spec.Load
		// refuses them, or honours cancellation while it blocks)
		return "", nil
	}
	lower := strings.ToLower(path)
	if strings.HasSuffix(lower, ".tf.json") || strings.HasSuffix(lower, ".tfvars.json") {
		return FromTerraform, nil
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".tf", ".tfvars":
		return FromTerraform, nil
	case ".yaml", ".yml":
	default:
		return "", nil
	}
	data, err := opts.readPath(path, safefs.Blueprint)
	if err != nil {
		return "", err
	}
	if isEksctl(data) {
		return "", eksctlError(path)
	}
	return detectYAML(data), nil
}

// isEksctl reports whether YAML data is an eksctl ClusterConfig.
func isEksctl(data []byte) bool {
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "apiVersion:"); ok {
			return spec.IsEksctlAPIVersion(v)
		}
	}
	return false
}

// eksctlError says that path, an eksctl ClusterConfig, is not an input
// gpuctl reads.
func eksctlError(path string) error {
	return fmt.Errorf("%s: %s; %s", path, spec.EksctlConfig, spec.EksctlHint)
}

// detectDir: a folder with .tf (or .tf.json) files is Terraform, else what
// its YAML files are (Terraform when they say nothing).
func detectDir(opts *Options, dir string) (string, error) {
	tf, err := opts.list(dir, ".tf", ".tf.json")
	if err != nil {
		return "", err
	}
	if len(tf) > 0 {
		return FromTerraform, nil
	}
	files, err := opts.list(dir, ".yaml", ".yml")
	if err != nil {
		return "", err
	}
	eksctl := ""
	for _, f := range files {
		data, err := opts.readPath(f, safefs.Blueprint)
		if err != nil {
			return "", err
		}
		if from := detectYAML(data); from != "" {
			return from, nil
		}
		if eksctl == "" && isEksctl(data) {
			eksctl = f
		}
	}
	if eksctl != "" {
		// no .tf and nothing else gpuctl reads: name what is there
		return "", eksctlError(eksctl)
	}
	return FromTerraform, nil
}

// detectYAML tells a blueprint or Karpenter YAML by its top-level keys.
func detectYAML(data []byte) string {
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "deployment_groups:"), strings.HasPrefix(l, "blueprint_name:"):
			return FromBlueprint
		case strings.HasPrefix(l, "apiVersion:") && (strings.Contains(l, "karpenter.sh/") || strings.Contains(l, "karpenter.k8s.aws/") || strings.Contains(l, kpAutoGroup+"/")):
			return FromKarpenter
		case strings.HasPrefix(l, "apiVersion:") && strings.Contains(l, spec.APIVersion):
			return ""
		}
	}
	return ""
}

// Locate maps a finding's path to the origin of its value: the path's own,
// else that of its nearest parent with one. ok is false when no parent has
// one.
func (r *Result) Locate(path string) (file string, line, column int, ok bool) {
	for p := path; p != ""; p = parentPath(p) {
		if o, found := r.Origins[p]; found {
			return o.File, o.Line, o.Column, true
		}
	}
	return "", 0, 0, false
}

// parentPath drops the last segment of a field path: spec.nodePools[0].gpu
// -> spec.nodePools[0] -> spec.nodePools -> spec -> "".
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		// a quoted key may hold "[": find the '[' that opens the last segment
		if i := strings.LastIndex(p, "[\""); i >= 0 && strings.HasSuffix(p, "\"]") {
			return p[:i]
		}
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

func sortOrigins[T any](xs []T, at func(T) Origin) {
	sort.SliceStable(xs, func(i, j int) bool {
		a, b := at(xs[i]), at(xs[j])
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}
