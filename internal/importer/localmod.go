package importer

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/safefs"
)

// Local modules: a module call whose source is a folder ("./modules/gke",
// "../..", a module repository's own root in its examples) is followed as
// Terraform follows it. The folder's .tf files are read inside the root
// as the root module's are (a folder outside it, missing or without .tf
// files is listed as skipped); each instance of the call (count,
// for_each) is a configuration of its own, evaluated by an evaluator of
// its own: its variables take the call's arguments, evaluated in the
// caller's scope, else their defaults; its locals, resources, module calls
// and outputs are the folder's. Its pools and skips are addressed
// module.NAME[KEY]. inside the caller's address, and module.NAME.OUTPUT
// in the caller is the output's value. Every module spends the one budget
// of the import.

// MaxModuleDepth is the deepest nesting of local module calls followed
// (real configurations nest two or three: a wrapper around a registry
// module, an example of a module repository around the module).
const MaxModuleDepth = 16

// modLoader is what the modules of one import share: the parsed folders,
// each parsed once however often it is called, and the count of their
// .tf files.
type modLoader struct {
	dirs  map[string]*modDir
	files int
}

// newModLoader is the loader of the modules of root module c, whose .tf
// files count into MaxTerraformFiles with theirs.
func newModLoader(c *tfConfig) *modLoader {
	l := &modLoader{dirs: map[string]*modDir{}}
	for _, f := range c.files {
		if strings.HasSuffix(f, ".tf") {
			l.files++
		}
	}
	return l
}

// modDir is a module folder as parsed: its .tf files (names as messages
// name them), their bodies and its .tf.json files; skip says why it is
// not read ("" when it is), listed whether its files are in the result.
type modDir struct {
	files  []string
	bodies []*hclsyntax.Body
	jsonTF []string
	skip   string
	listed bool
}

// modCall is a module call of a local source as evaluated: its instances,
// or why it is not followed (skip, at at).
type modCall struct {
	block *tfBlock
	dir   *modDir
	// keyed is "for_each" or "count" where the call has one: module.NAME
	// is then a map (an object) or a tuple of its instances.
	keyed string
	insts []*modInst
	skip  string
	at    Origin
}

// modInst is one instance of a module call: module.NAME or
// module.NAME[KEY], its configuration and evaluator, and its outputs as
// evaluated.
type modInst struct {
	key  string // the for_each key or the count index; "" without either
	c    *tfConfig
	e    *evaluator
	outs map[string]outVal
}

type outVal struct {
	v   cty.Value
	why []string
}

// isLocalSource reports whether a module source is a local path.
func isLocalSource(src string) bool {
	return src == "." || src == ".." || strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../")
}

// followModule reads the instances of local module call m; a call that is
// not followed is listed as skipped with the reason.
func (t *tfImport) followModule(m *tfBlock) {
	mc := t.e.call(m.typ)
	if mc == nil || mc.skip != "" {
		// not read: an add-on it installs is unknown, not absent
		o := t.obj(m, nil)
		src, _ := o.get("source").str()
		t.addonModule(m, o, src)
	}
	if mc == nil {
		t.b.skip(m.addr(), "a local module whose source gpuctl cannot read", rangeOrigin(m.rng))
		return
	}
	if mc.skip != "" {
		t.b.skip(m.addr(), mc.skip, mc.at)
		return
	}
	if len(mc.insts) == 0 && t.c.budget.err() == nil {
		what := "count is 0"
		if mc.keyed == "for_each" {
			what = "for_each is empty"
		}
		t.b.skip(m.addr(), what+": the module has no instances, nothing of it is read", mc.at)
		return
	}
	if !mc.dir.listed {
		mc.dir.listed = true
		t.b.files = append(t.b.files, mc.dir.files...)
	}
	for _, in := range mc.insts {
		if t.c.budget.err() != nil {
			return
		}
		ct := &tfImport{b: t.b, c: in.c, e: in.e}
		_ = ct.read() // the error is the budget's, which the caller returns
	}
}

// call is module call name of e's module as evaluated, made on first use;
// nil when the module has no such call or its source is not local.
func (e *evaluator) call(name string) *modCall {
	if mc, ok := e.calls[name]; ok {
		return mc
	}
	var blk *tfBlock
	for _, m := range e.c.modules {
		if m.typ == name {
			blk = m
		}
	}
	src, local := e.localSource(blk)
	if !local {
		e.calls[name] = nil
		return nil
	}
	key := "module." + name
	if e.busy[key] {
		// its arguments or count refer to its own outputs: not cached, the
		// outer evaluation goes on
		return &modCall{block: blk, skip: "a module call whose arguments refer to its own outputs", at: rangeOrigin(blk.rng)}
	}
	e.busy[key] = true
	mc := e.newCall(blk, src)
	delete(e.busy, key)
	e.calls[name] = mc
	return mc
}

// localSource is block blk's source when it is a local path.
func (e *evaluator) localSource(blk *tfBlock) (string, bool) {
	if blk == nil || blk.body.Attributes["source"] == nil {
		return "", false
	}
	v, _ := e.eval(blk.body.Attributes["source"].Expr, nil)
	src, ok := val{v: v}.str()
	return src, ok && isLocalSource(src)
}

// dir is the folder of e's module inside the root.
func (e *evaluator) dir() string { return e.chain[len(e.chain)-1] }

// newCall follows module call blk of source src: loads its folder and
// makes its instances.
func (e *evaluator) newCall(blk *tfBlock, src string) *modCall {
	mc := &modCall{block: blk, at: rangeOrigin(blk.rng)}
	rel := filepath.Join(e.dir(), filepath.FromSlash(src))
	if e.sb.outside || !safefs.Local(rel) {
		mc.skip = "a local module outside the folder gpuctl reads (the root " + e.c.root.Shown() + "): not read"
		return mc
	}
	for i, d := range e.chain {
		if d == rel {
			mc.skip = "a local module that calls itself (" + strings.Join(e.chainNames(i), " -> ") + "): not followed again"
			return mc
		}
	}
	if len(e.chain) > MaxModuleDepth {
		e.b.failAt(blk.rng, capErr("local modules nested deeper than %d (MaxModuleDepth)", MaxModuleDepth))
		mc.skip = "stopped"
		return mc
	}
	mc.dir = e.mods.load(e.c, rel)
	if mc.dir.skip != "" || e.b.err() != nil {
		mc.skip = mc.dir.skip
		return mc
	}
	e.expand(mc, rel)
	return mc
}

// chainNames are the folders of e's chain from i on, and again the i-th,
// as messages name them.
func (e *evaluator) chainNames(i int) []string {
	var out []string
	for _, d := range append(e.chain[i:], e.chain[i]) {
		out = append(out, e.c.root.Path(d))
	}
	return out
}

// load parses module folder rel inside the root, once. A folder that is
// missing, outside the root (through a link), not a folder or without .tf
// files is a skip; a file gpuctl refuses (a link out, a FIFO, over its
// cap, a syntax error) stops the import, as in the root module.
func (l *modLoader) load(c *tfConfig, rel string) *modDir {
	if d, ok := l.dirs[rel]; ok {
		return d
	}
	d := &modDir{}
	l.dirs[rel] = d
	shown := c.root.Path(rel)
	st, err := c.root.Stat(rel)
	switch {
	case errors.Is(err, safefs.ErrOutside):
		d.skip = "a local module whose folder " + shown + " leaves the folder gpuctl reads (the root " + c.root.Shown() + "): not read"
		return d
	case errors.Is(err, fs.ErrNotExist):
		d.skip = "a local module whose folder " + shown + " does not exist: not read"
		return d
	case err != nil:
		c.budget.fail(err)
		return d
	case !st.IsDir():
		d.skip = "a local module whose source " + shown + " is not a folder: not read"
		return d
	}
	l.parse(c, rel, d)
	return d
}

// parse reads the .tf files of module folder rel into d.
func (l *modLoader) parse(c *tfConfig, rel string, d *modDir) {
	tmp := newConfig(c.root, c.budget)
	var fs tfFiles
	if err := tmp.addDir(c.root.Path(rel), rel, &fs); err != nil {
		c.budget.fail(err)
		return
	}
	d.jsonTF = tmp.jsonTF
	if len(fs.tfs) == 0 {
		d.skip = "a local module whose folder " + c.root.Path(rel) + " holds no .tf files: not read"
		return
	}
	l.files += len(fs.tfs)
	if l.files > MaxTerraformFiles {
		c.budget.fail(fmt.Errorf("%s: more than %d .tf files with the modules read (MaxTerraformFiles)", c.root.Path(rel), MaxTerraformFiles))
		return
	}
	for _, f := range fs.tfs {
		body, name, err := tmp.parseFile(f)
		if err != nil {
			c.budget.fail(err)
			return
		}
		d.files, d.bodies = append(d.files, name), append(d.bodies, body)
	}
}

// expand makes the instances of module call mc of folder rel: one per
// for_each element or count index, else one.
func (e *evaluator) expand(mc *modCall, rel string) {
	blk := mc.block
	keys, scopes, each := e.instanceKeys(mc)
	for i, k := range keys {
		if e.b.err() != nil {
			return
		}
		addr := e.mod + "module." + blk.typ
		switch mc.keyed {
		case "for_each":
			addr += fmt.Sprintf("[%q]", k)
		case "count":
			addr += "[" + k + "]"
		}
		var scope map[string]cty.Value
		if mc.keyed == "count" {
			scope = map[string]cty.Value{"count": cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(int64(i))})}
		} else if scopes != nil {
			scope = scopes[i]
		}
		o := &hclObj{e: e, body: blk.body, addr: addr, at: rangeOrigin(blk.rng), scope: scope}
		if each != nil {
			o.each = e.child(each, cty.StringVal(k))
		}
		if in := e.instance(mc, rel, o, k); in != nil {
			mc.insts = append(mc.insts, in)
		}
	}
}

// instanceKeys are the keys of module call mc's instances and the scope
// of each (each.key and each.value, count.index), and the for_each
// expression (to locate each.value.X); a for_each or count that is
// unknown is mc's skip.
func (e *evaluator) instanceKeys(mc *modCall) (keys []string, scopes []map[string]cty.Value, each hcl.Expression) {
	body := mc.block.body
	if fe := body.Attributes["for_each"]; fe != nil {
		mc.keyed = "for_each"
		keys, scopes = e.forEachKeys(mc, fe.Expr)
		return keys, scopes, fe.Expr
	}
	if ce := body.Attributes["count"]; ce != nil {
		mc.keyed = "count"
		return e.countKeys(mc, ce.Expr), nil, nil
	}
	return []string{""}, nil, nil
}

// forEachKeys expands a module call's for_each over a map or a set of
// strings.
func (e *evaluator) forEachKeys(mc *modCall, expr hcl.Expression) (keys []string, scopes []map[string]cty.Value) {
	v, why := e.eval(expr, nil)
	switch {
	case e.b.err() != nil:
		return nil, nil
	case !v.IsKnown() || (v.Type().IsSetType() && !v.IsWhollyKnown()):
		// As Terraform: the keys must be known, a map's values need not.
		mc.skip = "for_each is unknown until Terraform applies: it depends on " + strings.Join(why, ", ")
		mc.at = rangeOrigin(expr.Range())
		return nil, nil
	case v.IsNull() || !v.CanIterateElements():
		mc.skip = "for_each is not a map or a set of strings"
		mc.at = rangeOrigin(expr.Range())
		return nil, nil
	case v.LengthInt() > MaxInstances:
		e.b.failAt(expr.Range(), capErr("for_each of more than %d instances (MaxInstances)", MaxInstances))
		return nil, nil
	}
	for it := v.ElementIterator(); it.Next(); {
		k, el := it.Element()
		if k.Type() != cty.String {
			k = el // a set of strings: key and value are the element
		}
		if k.Type() != cty.String {
			mc.skip, mc.at = "for_each is not a map or a set of strings", rangeOrigin(expr.Range())
			return nil, nil
		}
		keys = append(keys, k.AsString())
		scopes = append(scopes, map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": k, "value": el})})
	}
	return keys, scopes
}

// countKeys expands a module call's count into its indexes; the scopes
// are made by instance.
func (e *evaluator) countKeys(mc *modCall, expr hcl.Expression) []string {
	v, why := e.eval(expr, nil)
	x := val{v: v, why: why}
	n, ok := x.int()
	if e.b.err() != nil {
		return nil
	}
	if !ok && hugeNumber(x) {
		n, ok = MaxInstances+1, true
	}
	if !ok {
		mc.skip = "count is unknown until Terraform applies: it depends on " + strings.Join(why, ", ")
		mc.at = rangeOrigin(expr.Range())
		return nil
	}
	if n > MaxInstances {
		e.b.failAt(expr.Range(), capErr("count of more than %d instances (MaxInstances)", MaxInstances))
		return nil
	}
	if n < 0 {
		mc.skip, mc.at = "count is negative", rangeOrigin(expr.Range())
		return nil
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint(i)
	}
	return keys
}

// instance makes the instance of module call mc (folder rel) that o
// addresses (key k): its configuration from the parsed folder, its
// evaluator, and its variables set from the call's arguments.
func (e *evaluator) instance(mc *modCall, rel string, o *hclObj, k string) *modInst {
	c := newConfig(e.c.root, e.b)
	c.sb, c.mod, c.dir = e.sb, o.addr+".", e.c.root.Path(rel)
	c.files, c.jsonTF = mc.dir.files, mc.dir.jsonTF
	for _, body := range mc.dir.bodies {
		if e.b.add(int64(1+len(body.Blocks))) != nil || c.addBody(body) != nil {
			return nil
		}
	}
	pm, err := filepath.Rel(e.chain[0], rel)
	if err != nil {
		pm = rel
	}
	ce := &evaluator{c: c, locals: map[string]cty.Value{}, localWhy: map[string][]string{}, busy: map[string]bool{},
		vars: c.variables, mod: c.mod, pathModule: filepath.ToSlash(pm), calls: map[string]*modCall{}, mods: e.mods,
		sb: e.sb, b: e.b, funcs: e.funcs, chain: append(append([]string(nil), e.chain...), rel)}
	e.setArgs(ce, o)
	return &modInst{key: k, c: c, e: ce, outs: map[string]outVal{}}
}

// setArgs sets the variables of child evaluator ce from the arguments of
// module call o, evaluated in the caller's scope; a variable the call does
// not set keeps its default, else it has no value.
func (e *evaluator) setArgs(ce *evaluator, o *hclObj) {
	names := make([]string, 0, len(ce.vars))
	for n := range ce.vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := o.body.Attributes[n]
		if a == nil {
			continue
		}
		x := o.get(n)
		v := ce.vars[n]
		if x.absent() && v.notNullable {
			// As Terraform: null for a variable that is not nullable
			// leaves its default.
			continue
		}
		value := x.v
		if cv, err := v.convert(value); err == nil {
			value = cv
		}
		v.value, v.expr, v.in, v.why, v.setBy = value, eachItem(o, a.Expr), e, x.why, "the module call"
	}
}

// eachItem is the expression that wrote expr's value: for each.value.X,
// the item of the for_each value (a .tfvars file's map item), else expr.
func eachItem(o *hclObj, expr hcl.Expression) hcl.Expression {
	tr := traversalOf(expr)
	if o.each == nil || len(tr) < 3 || tr.RootName() != "each" || attrName(tr, 1) != "value" {
		return expr
	}
	cur := o.each
	for i := 2; i < len(tr); i++ {
		next := o.e.child(cur, cty.StringVal(attrName(tr, i)))
		if next == nil {
			break
		}
		cur = next
	}
	return cur
}

// output is module.NAME.OUT of instance in: the output's value, evaluated
// once in the instance's scope.
func (in *modInst) output(name string) (cty.Value, []string) {
	if o, ok := in.outs[name]; ok {
		return o.v, o.why
	}
	mod := strings.TrimSuffix(in.c.mod, ".")
	expr, ok := in.c.outputs[name]
	if !ok {
		return cty.DynamicVal, []string{fmt.Sprintf("%s.%s, which %s does not declare as an output", mod, name, mod)}
	}
	key := "output." + name
	if in.e.busy[key] {
		return cty.DynamicVal, []string{fmt.Sprintf("%s.%s, which refers to itself", mod, name)}
	}
	in.e.busy[key] = true
	v, why := in.e.eval(expr, nil)
	delete(in.e.busy, key)
	in.outs[name] = outVal{v: v, why: why}
	return v, why
}

// outputNames are the names of the outputs of in, sorted.
func (in *modInst) outputNames() []string {
	names := make([]string, 0, len(in.c.outputs))
	for n := range in.c.outputs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// object is instance in as module.NAME evaluates: an object of the
// outputs named (all where names is nil), and what those that are unknown
// depend on.
func (in *modInst) object(names []string) (cty.Value, []string) {
	if names == nil {
		names = in.outputNames()
	}
	attrs := map[string]cty.Value{}
	var why []string
	for _, n := range names {
		v, w := in.output(n)
		attrs[n] = v
		if !v.IsWhollyKnown() {
			why = appendUnique(why, w...)
		}
	}
	return cty.ObjectVal(attrs), why
}

// bindModule binds module.NAME...: the outputs of a local module call
// gpuctl follows; any other module's outputs are known only after apply.
func (e *evaluator) bindModule(b *bindings, tr hcl.Traversal) {
	name := attrName(tr, 1)
	mc := e.call(name)
	if mc == nil || mc.skip != "" || (mc.keyed == "" && len(mc.insts) == 0) {
		out := attrName(tr, 2)
		attrs := b.attrs("module", name)
		b.why = appendUnique(b.why, e.mod+outputRef(tr)+", a module output")
		if out != "" {
			attrs[out] = cty.DynamicVal
		}
		return
	}
	if mc.keyed == "" {
		attrs := b.attrs("module", name)
		var names []string
		if out := attrName(tr, 2); out != "" {
			names = []string{out}
		}
		v, why := mc.insts[0].object(names)
		for k, x := range v.AsValueMap() {
			attrs[k] = x
		}
		b.why = appendUnique(b.why, why...)
		return
	}
	b.attrs("module", name)
	if b.modVal == nil {
		b.modVal = map[string]cty.Value{}
	}
	v, why := mc.value(tr)
	b.modVal[name] = v
	b.why = appendUnique(b.why, why...)
}

// value is module.NAME of a call with for_each (an object by key) or
// count (a tuple), each instance an object of all its outputs; why is
// what the outputs tr reads depend on (module.NAME[KEY].OUT: that one).
func (mc *modCall) value(tr hcl.Traversal) (cty.Value, []string) {
	var key string
	if len(tr) > 2 {
		if ix, ok := tr[2].(hcl.TraverseIndex); ok && ix.Key.IsKnown() && !ix.Key.IsNull() {
			if s, ok := (val{v: ix.Key}).str(); ok {
				key = s
			}
		}
	}
	var names []string
	if out := attrName(tr, 3); key != "" && out != "" {
		names = []string{out}
	}
	all := map[string]cty.Value{}
	list := make([]cty.Value, 0, len(mc.insts))
	var why []string
	for _, in := range mc.insts {
		v, _ := in.object(nil)
		all[in.key], list = v, append(list, v)
		if key == "" || key == in.key {
			_, w := in.object(names)
			why = appendUnique(why, w...)
		}
	}
	if mc.keyed == "count" {
		return cty.TupleVal(list), why
	}
	return cty.ObjectVal(all), why
}

// outputDefinition follows module.NAME.OUT (tr) of a local module call
// without count or for_each to the output's expression in the module, as
// definition does for var.X and local.X.
func (e *evaluator) outputDefinition(tr hcl.Traversal, depth int) (hcl.Expression, *evaluator) {
	mc := e.call(attrName(tr, 1))
	if mc == nil || mc.skip != "" || mc.keyed != "" || len(mc.insts) != 1 {
		return nil, nil
	}
	in := mc.insts[0]
	def := in.c.outputs[attrName(tr, 2)]
	if def == nil {
		return nil, nil
	}
	if deeper, din := in.e.definitionIn(def, depth+1); deeper != nil {
		return deeper, din
	}
	return def, in.e
}

// outputRef names the module output traversal tr reads: module.NAME.OUT,
// module.NAME[KEY].OUT.
func outputRef(tr hcl.Traversal) string {
	ref := "module." + attrName(tr, 1)
	for i := 2; i < len(tr) && i < 4; i++ {
		switch s := tr[i].(type) {
		case hcl.TraverseAttr:
			return ref + "." + s.Name
		case hcl.TraverseIndex:
			if k, ok := (val{v: s.Key}).str(); ok && s.Key.Type() == cty.String {
				ref += fmt.Sprintf("[%q]", k)
			} else if ok {
				ref += "[" + k + "]"
			}
		}
	}
	return ref
}
