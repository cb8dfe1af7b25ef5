package importer

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/gpuctl/gpuctl/internal/safefs"
)

// tfConfig is one Terraform root module as import reads it: its blocks by
// kind, and the values of its variables.
type tfConfig struct {
	dir       string
	files     []string
	variables map[string]*tfVariable
	locals    map[string]*hclsyntax.Attribute
	resources []*tfBlock // resource blocks, in file order
	data      []*tfBlock
	modules   []*tfBlock
	providers []*tfBlock
	// other are blocks import does not read (check, import, moved,
	// removed, ephemeral, ...), listed as skipped; terraform and output
	// blocks configure nothing a node pool has.
	other  []*tfBlock
	byAddr map[string]*tfBlock // "TYPE.NAME" of resources
	// outputs are the output blocks' value expressions, by name (read
	// where a caller refers to module.NAME.OUTPUT).
	outputs map[string]hcl.Expression
	// bodies are the parsed .tf files, in order: a module folder called
	// more than once is parsed once (localmod.go).
	bodies []*hclsyntax.Body
	// mod is the address of the module instance the configuration is
	// ("module.a[\"x\"]." ; "" for the root module), which prefixes
	// every block's address.
	mod string
	// jsonTF are the .tf.json files of the paths: JSON configuration
	// syntax, which import does not read; each is listed as skipped.
	jsonTF []string
	// root is the folder every file is read inside, sb the sandbox of
	// the configuration's functions and budget the command's budget.
	root   *safefs.Root
	sb     *sandbox
	budget *budget
}

// tfBlock is a resource, data, module or provider block.
type tfBlock struct {
	kind string // resource | data | module | provider
	typ  string // resource type, module name, provider name
	name string // resource name ("" for module and provider)
	body *hclsyntax.Body
	rng  hcl.Range
	// mod is the address of the module instance the block is in ("" in
	// the root module).
	mod string
}

// addr is the block's address: aws_eks_node_group.gpu, module.eks,
// module.pools["a"].google_container_node_pool.gpu.
func (b *tfBlock) addr() string { return b.mod + b.local() }

// local is the block's address inside its module.
func (b *tfBlock) local() string {
	switch b.kind {
	case "module":
		return "module." + b.typ
	case "data":
		return "data." + b.typ + "." + b.name
	case "provider":
		return "provider." + b.typ
	}
	return b.typ + "." + b.name
}

// tfVariable is a declared variable and the value it takes.
type tfVariable struct {
	name string
	typ  cty.Type // cty.DynamicPseudoType without a type constraint
	// value is the variable's value; cty.NilVal when it has none (no
	// default, not set), which evaluates as unknown.
	value cty.Value
	// expr is the expression that set the value (a tfvars attribute or the
	// default), for origins and for locating values inside it; nil for a
	// --var on the command line.
	expr hcl.Expression
	// in is the evaluator of the module call's scope where a module call
	// set the value (expr is the call's argument); nil where the module
	// itself did (a default, a .tfvars file).
	in *evaluator
	// why is what a value a module call set depends on that is unknown.
	why []string
	// setBy names what set the value: "default", a tfvars file, "--var",
	// "the module call".
	setBy string
	decl  hcl.Range
	// defaults are the optional attributes' defaults of its type.
	defaults *typeexpr.Defaults
	// notNullable is nullable = false: a module call's null leaves the
	// default.
	notNullable bool
}

// convert converts val to v's type, with the type's optional defaults.
func (v *tfVariable) convert(val cty.Value) (cty.Value, error) {
	if v.defaults != nil {
		val = v.defaults.Apply(val)
	}
	return convert.Convert(val, v.typ)
}

// loadTerraform parses the .tf files of paths (a folder reads every .tf and
// the tfvars files Terraform loads automatically; files are read as given)
// and assigns the variables. Every file is read inside opts' root (a path
// or a link that leaves it is refused with its path), except --var-file
// files, which the user names. Errors: unreadable files, syntax errors,
// nesting past MaxNesting, a bad --var, a value that does not convert to
// its variable's type, the context done.
func loadTerraform(paths []string, opts Options) (*tfConfig, error) {
	if opts.root == nil {
		return nil, fmt.Errorf("%s: no root to read under", strings.Join(paths, ", "))
	}
	c := newConfig(opts.root, newBudget(opts.ctx))
	var fs tfFiles
	for _, p := range paths {
		if err := c.addPath(p, &fs); err != nil {
			return nil, err
		}
	}
	if len(fs.tfs) == 0 && len(c.jsonTF) > 0 {
		return nil, fmt.Errorf("%s: only .tf.json files (Terraform's JSON configuration syntax), which gpuctl import does not read; give the configuration as .tf files", strings.Join(c.jsonTF, ", "))
	}
	if len(fs.tfs) == 0 {
		return nil, fmt.Errorf("%s: no .tf files", strings.Join(paths, ", "))
	}
	c.sb = newSandbox(opts, c.dir, c.budget)
	for _, f := range fs.tfs {
		if err := c.parseTF(f); err != nil {
			return nil, err
		}
	}
	for _, f := range fs.autoVars {
		if err := c.applyVarFile(f, ""); err != nil {
			return nil, err
		}
	}
	for _, a := range varArgs(opts) {
		var err error
		if a.File != "" {
			err = c.applyVarFile("", a.File)
		} else {
			err = c.applyVar(a.Var)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, c.budget.err()
}

// newConfig is an empty configuration read under root, spending into b.
func newConfig(root *safefs.Root, b *budget) *tfConfig {
	return &tfConfig{variables: map[string]*tfVariable{}, locals: map[string]*hclsyntax.Attribute{}, byAddr: map[string]*tfBlock{},
		outputs: map[string]hcl.Expression{}, root: root, budget: b}
}

// addPath adds path p, a folder or a file as the user gave it, which must
// be inside the root.
func (c *tfConfig) addPath(p string, fs *tfFiles) error {
	rel, err := c.root.Rel(p)
	if err != nil {
		return err
	}
	st, err := c.root.Stat(rel)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return c.addDir(p, rel, fs)
	}
	return c.addFile(p, rel, fs)
}

// tfFiles are the .tf files of a configuration and its variable files in
// the order Terraform applies them, as names inside the root.
type tfFiles struct {
	tfs, autoVars []string
}

// addDir adds the files of folder p (rel inside the root) that Terraform
// reads: every .tf (and .tf.json, which import does not read), and the
// variable files it loads by itself. The first folder is the
// configuration's.
func (c *tfConfig) addDir(p, rel string, fs *tfFiles) error {
	if c.dir == "" {
		c.dir = p
	}
	ents, err := c.root.ReadDir(rel)
	if err != nil {
		return err
	}
	var tv, auto []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			continue
		}
		f := filepath.Join(rel, n)
		if isTerraformName(n) {
			if err := c.checkFileName(f, len(fs.tfs)); err != nil {
				return err
			}
		}
		switch {
		case strings.HasSuffix(n, ".tf"):
			fs.tfs = append(fs.tfs, f)
		case strings.HasSuffix(n, ".tf.json"):
			c.jsonTF = append(c.jsonTF, c.root.Path(f))
		case n == "terraform.tfvars":
			tv = append([]string{f}, tv...)
		case n == "terraform.tfvars.json":
			tv = append(tv, f)
		case strings.HasSuffix(n, ".auto.tfvars"), strings.HasSuffix(n, ".auto.tfvars.json"):
			auto = append(auto, f)
		}
	}
	// As Terraform loads them ("Variable Definition Precedence",
	// https://developer.hashicorp.com/terraform/language/values/variables):
	// terraform.tfvars, then terraform.tfvars.json, then the
	// *.auto.tfvars and *.auto.tfvars.json files together in
	// lexical order of their names (ReadDir sorts), then -var and
	// -var-file in command-line order.
	fs.autoVars = append(fs.autoVars, append(tv, auto...)...)
	return nil
}

// addFile adds file p (rel inside the root), read as given; its folder is
// the configuration's where no folder came first.
func (c *tfConfig) addFile(p, rel string, fs *tfFiles) error {
	if c.dir == "" {
		c.dir = filepath.Dir(p)
	}
	switch {
	case strings.HasSuffix(p, ".tf"):
		fs.tfs = append(fs.tfs, rel)
	case strings.HasSuffix(p, ".tf.json"):
		c.jsonTF = append(c.jsonTF, c.root.Path(rel))
	case strings.HasSuffix(p, ".tfvars"), strings.HasSuffix(p, ".tfvars.json"):
		fs.autoVars = append(fs.autoVars, rel)
	default:
		return fmt.Errorf("%s: not a Terraform file (.tf, .tf.json, .tfvars or .tfvars.json)", p)
	}
	return nil
}

// varArgs are the --var and --var-file arguments in command-line order
// (opts.VarArgs), else the files, then the values.
func varArgs(opts Options) []VarArg {
	if len(opts.VarArgs) > 0 {
		return opts.VarArgs
	}
	var args []VarArg
	for _, f := range opts.VarFiles {
		args = append(args, VarArg{File: f})
	}
	for _, kv := range opts.Vars {
		args = append(args, VarArg{Var: kv})
	}
	return args
}

// diagErr is the first error of d as FILE:LINE:COL: summary. HCL's
// detail is left out, as firstError says why.
func diagErr(d hcl.Diagnostics) error {
	if !d.HasErrors() {
		return nil
	}
	for _, x := range d {
		if x.Severity == hcl.DiagError {
			if x.Subject != nil {
				return &posError{rng: *x.Subject, err: errors.New(strings.TrimSuffix(x.Summary, "."))}
			}
			return errors.New(strings.TrimSuffix(x.Summary, "."))
		}
	}
	return errors.New("an error")
}

// parseTF reads and parses the .tf file rel inside the root: its nesting
// scanned first, its syntax tree instrumented for the budget.
func (c *tfConfig) parseTF(rel string) error {
	body, name, err := c.parseFile(rel)
	if err != nil {
		return err
	}
	c.files = append(c.files, name)
	return c.addBody(body)
}

// parseFile reads and parses the .tf file rel inside the root; name is
// the file as messages name it.
func (c *tfConfig) parseFile(rel string) (body *hclsyntax.Body, name string, err error) {
	if err := c.budget.done(); err != nil {
		return nil, "", err
	}
	data, err := c.root.ReadFile(rel, safefs.Terraform)
	if err != nil {
		return nil, "", err
	}
	name = c.root.Path(rel)
	if err := scanNesting(c.budget, data, name, hcl.InitialPos, scanConfig); err != nil {
		return nil, "", err
	}
	f, d := hclsyntax.ParseConfig(data, name, hcl.InitialPos)
	if err := diagErr(d); err != nil {
		return nil, "", err
	}
	body = f.Body.(*hclsyntax.Body)
	instrument(body)
	return body, name, nil
}

// addBody files the blocks of a parsed .tf file.
func (c *tfConfig) addBody(body *hclsyntax.Body) error {
	c.bodies = append(c.bodies, body)
	for _, b := range body.Blocks {
		if err := c.addBlock(b); err != nil {
			return err
		}
	}
	return nil
}

// literal evaluates a value that holds no reference nor function call (a
// default, a .tfvars value, a --var), counted into the budget. Errors:
// HCL's (as diagErr), a cap.
func (c *tfConfig) literal(expr hcl.Expression) (cty.Value, error) {
	ctx := &hcl.EvalContext{Functions: map[string]function.Function{countFunc: c.sb.countFunction()}}
	v, d := expr.Value(ctx)
	if c.budget.err() != nil {
		c.budget.place(d, expr.Range())
		return cty.NilVal, c.budget.err()
	}
	if err := diagErr(d); err != nil {
		return cty.NilVal, err
	}
	size, err := measure(v)
	if err != nil {
		return cty.NilVal, c.budget.failAt(expr.Range(), err)
	}
	if err := c.budget.add(size.steps()); err != nil {
		c.budget.place(nil, expr.Range())
		return cty.NilVal, err
	}
	return v, nil
}

// addBlock files a top-level block by kind: resources (by address), data
// sources, modules, providers, locals, variables and outputs; terraform
// blocks are dropped, anything else is kept as other.
func (c *tfConfig) addBlock(b *hclsyntax.Block) error {
	block := func(kind, typ, name string) *tfBlock {
		return &tfBlock{kind: kind, typ: typ, name: name, body: b.Body, rng: b.DefRange(), mod: c.mod}
	}
	switch {
	case b.Type == "resource" && len(b.Labels) == 2:
		tb := block("resource", b.Labels[0], b.Labels[1])
		c.resources = append(c.resources, tb)
		c.byAddr[tb.local()] = tb
	case b.Type == "data" && len(b.Labels) == 2:
		c.data = append(c.data, block("data", b.Labels[0], b.Labels[1]))
	case b.Type == "module" && len(b.Labels) == 1:
		c.modules = append(c.modules, block("module", b.Labels[0], ""))
	case b.Type == "provider" && len(b.Labels) == 1:
		c.providers = append(c.providers, block("provider", b.Labels[0], ""))
	default:
		return c.addValues(b)
	}
	return nil
}

// addValues files the blocks of values (locals, variables, outputs);
// terraform blocks are dropped, anything else is kept as other.
func (c *tfConfig) addValues(b *hclsyntax.Block) error {
	switch {
	case b.Type == "locals":
		for n, a := range b.Body.Attributes {
			c.locals[n] = a
		}
	case b.Type == "variable" && len(b.Labels) == 1:
		return c.declare(b)
	case b.Type == "output" && len(b.Labels) == 1:
		if a := b.Body.Attributes["value"]; a != nil {
			c.outputs[b.Labels[0]] = a.Expr
		}
	case b.Type == "terraform":
	default:
		c.other = append(c.other, &tfBlock{kind: b.Type, typ: strings.Join(b.Labels, "."), body: b.Body, rng: b.DefRange(), mod: c.mod})
	}
	return nil
}

func (c *tfConfig) declare(b *hclsyntax.Block) error {
	v := &tfVariable{name: b.Labels[0], typ: cty.DynamicPseudoType, decl: b.DefRange()}
	if a, ok := b.Body.Attributes["type"]; ok {
		// A constraint gpuctl cannot read leaves the value unconverted,
		// as Terraform would still accept a value that fits it.
		if t, defs, d := typeexpr.TypeConstraintWithDefaults(a.Expr); !d.HasErrors() {
			v.typ, v.defaults = t, defs
		}
	}
	if a, ok := b.Body.Attributes["nullable"]; ok {
		nv, d := a.Expr.Value(nil)
		v.notNullable = !d.HasErrors() && nv.Type() == cty.Bool && nv.IsKnown() && !nv.IsNull() && nv.False()
	}
	if a, ok := b.Body.Attributes["default"]; ok {
		val, err := c.literal(a.Expr)
		if c.budget.err() != nil {
			return c.budget.err()
		}
		if err == nil {
			v.value, v.expr, v.setBy = val, a.Expr, "default"
			if cv, err := v.convert(val); err == nil {
				v.value = cv
			}
		}
	}
	c.variables[v.name] = v
	return nil
}

// applyVarFile sets the variables a .tfvars file assigns: rel inside the
// root, else path (a --var-file the user named); assignments to undeclared
// variables are ignored, as Terraform only warns about them.
func (c *tfConfig) applyVarFile(rel, path string) error {
	data, name, err := c.readVarFile(rel, path)
	if err != nil {
		return err
	}
	f, err := c.parseVarFile(data, name)
	if err != nil {
		return err
	}
	c.files = append(c.files, name)
	attrs, d := f.Body.JustAttributes()
	if err := diagErr(d); err != nil {
		return err
	}
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := attrs[n]
		val, err := c.literal(a.Expr)
		if c.budget.err() != nil {
			return c.budget.err()
		}
		if err != nil {
			return fmt.Errorf("%w (a .tfvars file holds only literal values)", err)
		}
		if c.placeholder(n, val, a.Expr, name) {
			continue
		}
		if err := c.assign(n, val, a.Expr, name); err != nil {
			return fmt.Errorf("%s:%d: %w", name, a.Range.Start.Line, err)
		}
	}
	return nil
}

// placeholder sets variable name unknown where a .tfvars file (by) gives
// it a placeholder to fill in, "<cluster-name>" or "<your project ID>"
// (an example's tfvars its README says to edit): Terraform would take it
// as written, but no cluster has such a value. It reports whether it did.
func (c *tfConfig) placeholder(name string, val cty.Value, expr hcl.Expression, by string) bool {
	v, ok := c.variables[name]
	if !ok || !val.IsKnown() || val.IsNull() || val.Type() != cty.String || !anglePlaceholder.MatchString(val.AsString()) {
		return false
	}
	v.value, v.expr, v.setBy = cty.UnknownVal(cty.String), expr, by
	if v.typ != cty.DynamicPseudoType {
		v.value = cty.UnknownVal(v.typ)
	}
	v.why = []string{fmt.Sprintf("var.%s, which %s sets to a placeholder to fill in", name, by)}
	return true
}

// MaxTerraformFiles is the most .tf files one import reads (a large
// configuration has tens; each file costs a parse and its scan).
const MaxTerraformFiles = 10_000

// isTerraformName reports whether a folder entry is a file Terraform reads.
func isTerraformName(n string) bool {
	return strings.HasSuffix(n, ".tf") || strings.HasSuffix(n, ".tf.json") || strings.HasSuffix(n, ".tfvars") || strings.HasSuffix(n, ".tfvars.json")
}

// checkFileName refuses a file rel inside the root whose name is not plain
// (plainName), and more than MaxTerraformFiles .tf files (n read so far).
func (c *tfConfig) checkFileName(rel string, n int) error {
	if err := plainName(c.root.Path(rel)); err != nil {
		return err
	}
	if n >= MaxTerraformFiles {
		return fmt.Errorf("%s: more than %d .tf files (MaxTerraformFiles); import the folder of the configuration itself", c.root.Path(filepath.Dir(rel)), MaxTerraformFiles)
	}
	return nil
}

// readVarFile reads a variable file: rel inside the root, else path as
// the user named it; name is the file as messages name it.
func (c *tfConfig) readVarFile(rel, path string) (data []byte, name string, err error) {
	if err := c.budget.done(); err != nil {
		return nil, "", err
	}
	if rel == "" {
		// a --var-file inside the root is read through it: the pull
		// request may have made the named file a link that leaves it
		r, rerr := c.root.Rel(path)
		if rerr != nil {
			data, err = safefs.ReadFile(path, safefs.VarFile)
			return data, path, err
		}
		rel = r
	}
	data, err = c.root.ReadFile(rel, safefs.VarFile)
	return data, c.root.Path(rel), err
}

// parseVarFile parses a variable file named name: JSON syntax for
// .tfvars.json, as Terraform reads it, else HCL; its nesting is scanned
// first.
func (c *tfConfig) parseVarFile(data []byte, name string) (*hcl.File, error) {
	if strings.HasSuffix(name, ".json") {
		if err := c.budget.addTokens(data, name, hcl.InitialPos); err != nil {
			return nil, err
		}
		if err := scanJSONNesting(data, name); err != nil {
			return nil, err
		}
		f, d := hcljson.Parse(data, name)
		return f, diagErr(d)
	}
	if err := scanNesting(c.budget, data, name, hcl.InitialPos, scanConfig); err != nil {
		return nil, err
	}
	f, d := hclsyntax.ParseConfig(data, name, hcl.InitialPos)
	if err := diagErr(d); err != nil {
		return nil, err
	}
	instrument(f.Body.(*hclsyntax.Body))
	return f, nil
}

// applyVar sets one --var name=value: the value is HCL when it parses as
// an expression of a number, bool, list or map, else a string, as
// Terraform reads it for a variable of that type.
func (c *tfConfig) applyVar(kv string) error {
	name, raw, ok := strings.Cut(kv, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("--var %q: want name=value", kv)
	}
	v, declared := c.variables[name]
	val := cty.StringVal(raw)
	if declared && !v.typ.Equals(cty.String) && v.typ != cty.DynamicPseudoType {
		if err := scanNesting(c.budget, []byte(raw), "--var "+name, hcl.InitialPos, scanExpression); err != nil {
			return err
		}
		expr, d := hclsyntax.ParseExpression([]byte(raw), "--var "+name, hcl.InitialPos)
		if !d.HasErrors() {
			instrument(expr)
			if x, err := c.literal(expr); err == nil {
				val = x
			} else if c.budget.err() != nil {
				return err
			}
		}
	}
	if !declared {
		return fmt.Errorf("--var %s: no variable %q is declared", name, name)
	}
	return c.assign(name, val, nil, "--var")
}

func (c *tfConfig) assign(name string, val cty.Value, expr hcl.Expression, by string) error {
	v, ok := c.variables[name]
	if !ok {
		return nil
	}
	cv, err := v.convert(val)
	if err != nil {
		return fmt.Errorf("variable %s: %v", name, err)
	}
	v.value, v.expr, v.setBy = cv, expr, by
	return nil
}
