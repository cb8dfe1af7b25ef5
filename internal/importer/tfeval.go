package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// evaluator evaluates expressions of one configuration the way Terraform
// does before apply: what the configuration states is known, what a
// provider computes is unknown.
type evaluator struct {
	c      *tfConfig
	funcs  map[string]function.Function
	locals map[string]cty.Value
	// localWhy are the reasons a local is (partly) unknown.
	localWhy map[string][]string
	busy     map[string]bool // locals and resource attributes being evaluated (cycles)
	// sb is the sandbox of the configuration's functions and b the
	// command's budget; depth counts evaluations one inside the other.
	sb    *sandbox
	b     *budget
	depth int
	// vars are the module's variables with their values: the
	// configuration's in the root module, the call's in a child.
	vars map[string]*tfVariable
	// mod is the module instance's address ("module.a." , "" in the root
	// module) and pathModule its path.module, relative to the root
	// module's folder ("." in the root module).
	mod, pathModule string
	// calls are the module's module calls as evaluated, by name, and
	// mods what every module of the import shares (localmod.go).
	calls map[string]*modCall
	mods  *modLoader
	// chain are the folders (inside the root) of the modules from the
	// root module to this one, to refuse a module that calls itself.
	chain []string
}

func newEvaluator(c *tfConfig) *evaluator {
	e := &evaluator{c: c, locals: map[string]cty.Value{}, localWhy: map[string][]string{}, busy: map[string]bool{},
		vars: c.variables, pathModule: ".", calls: map[string]*modCall{}, mods: newModLoader(c)}
	e.b, e.sb = c.budget, c.sb
	e.funcs = e.sb.funcs
	e.chain = []string{e.sb.dir}
	return e
}

// of names reference ref (var.x, local.y) of the evaluator's module in a
// message: "var.x of module.a" in a child module.
func (e *evaluator) of(ref string) string {
	if e.mod == "" {
		return ref
	}
	return ref + " of " + strings.TrimSuffix(e.mod, ".")
}

// stoppedWhy is the value of every expression once a refusal stoppedWhy the
// import (the import returns the refusal).
var stoppedWhy = []string{"an evaluation gpuctl stoppedWhy"}

// eval returns expr's value and, when the value is not wholly known, what
// it depends on that is unknown. scope binds each, count and dynamic-block
// iterators.
func (e *evaluator) eval(expr hcl.Expression, scope map[string]cty.Value) (cty.Value, []string) {
	if e.b.add(1) != nil {
		return cty.DynamicVal, stoppedWhy
	}
	if e.depth >= MaxRefDepth {
		e.b.failAt(expr.Range(), capErr("references nested deeper than %d (MaxRefDepth)", MaxRefDepth))
		return cty.DynamicVal, stoppedWhy
	}
	e.depth++
	defer func() { e.depth-- }()
	v, why := e.evalIn(expr, scope)
	if e.b.err() != nil {
		return cty.DynamicVal, stoppedWhy
	}
	if size, err := measure(v); err != nil {
		e.b.failAt(expr.Range(), err)
		return cty.DynamicVal, stoppedWhy
	} else if e.b.add(size.steps()) != nil {
		e.b.place(nil, expr.Range())
		return cty.DynamicVal, stoppedWhy
	}
	return v, why
}

// evalIn is eval once the budget allows it.
func (e *evaluator) evalIn(expr hcl.Expression, scope map[string]cty.Value) (cty.Value, []string) {
	b := &bindings{vars: map[string]cty.Value{}, tree: map[string]map[string]map[string]cty.Value{},
		varObj: map[string]cty.Value{}, localObj: map[string]cty.Value{}}
	for k, v := range scope {
		b.vars[k] = v
	}
	for _, tr := range expr.Variables() {
		if _, bound := scope[tr.RootName()]; !bound {
			e.bind(b, tr)
		}
	}
	ctx := &hcl.EvalContext{Variables: e.variables(b), Functions: e.funcs}
	v, d := expr.Value(ctx)
	if e.b.err() != nil {
		e.b.place(d, expr.Range())
		return cty.DynamicVal, stoppedWhy
	}
	why := b.why
	if d.HasErrors() {
		if v == cty.NilVal || v.IsKnown() {
			v = cty.DynamicVal
		}
		if len(why) == 0 {
			why = append(why, "an expression gpuctl cannot evaluate ("+firstError(d)+")")
		}
	}
	if v.IsWhollyKnown() {
		return v, nil
	}
	if len(why) == 0 {
		why = []string{"a value known only after apply"}
	}
	return v, why
}

// bindings are the values an expression's references are evaluated
// against: vars (scope and the roots path and terraform), var.* and
// local.* (varObj, localObj), data sources, module outputs and resources
// (tree: root -> name -> attribute -> value), and why, the reasons some
// are unknown.
type bindings struct {
	vars             map[string]cty.Value
	varObj, localObj map[string]cty.Value
	tree             map[string]map[string]map[string]cty.Value
	// modVal are the whole values of module calls with count or
	// for_each that import follows (their instances by key).
	modVal map[string]cty.Value
	// res are the instances of resources with count or for_each that
	// the expression reads by key, with the attributes it reads.
	res map[string]*resInstances
	why []string
}

// attrs is the attribute map of root.name in the tree, made where missing.
func (b *bindings) attrs(root, name string) map[string]cty.Value {
	if b.tree[root] == nil {
		b.tree[root] = map[string]map[string]cty.Value{}
	}
	if b.tree[root][name] == nil {
		b.tree[root][name] = map[string]cty.Value{}
	}
	return b.tree[root][name]
}

// bind binds the value reference tr reads.
func (e *evaluator) bind(b *bindings, tr hcl.Traversal) {
	switch root := tr.RootName(); root {
	case "var":
		e.bindVar(b, attrName(tr, 1))
	case "local":
		n := attrName(tr, 1)
		v, w := e.local(n)
		b.localObj[n] = v
		if !v.IsWhollyKnown() {
			b.why = appendUnique(b.why, w...)
		}
	case "path":
		b.vars["path"] = cty.ObjectVal(map[string]cty.Value{"module": cty.StringVal(e.pathModule), "root": cty.StringVal("."), "cwd": cty.StringVal(e.sb.cwd())})
	case "terraform":
		b.vars["terraform"] = cty.ObjectVal(map[string]cty.Value{"workspace": cty.StringVal("default")})
	case "module":
		e.bindModule(b, tr)
	case "data":
		typ, name := attrName(tr, 1), attrName(tr, 2)
		b.attrs(root, typ)[name] = cty.DynamicVal
		b.why = appendUnique(b.why, fmt.Sprintf("%sdata.%s.%s, a data source read from the provider", e.mod, typ, name))
	case "each", "count", "self":
		b.vars[root] = cty.DynamicVal
		b.why = appendUnique(b.why, root+", outside the block it belongs to")
	default:
		// A resource: TYPE.NAME.ATTR, or TYPE.NAME[KEY].ATTR of one with
		// count or for_each.
		name, attr := attrName(tr, 1), attrName(tr, 2)
		if e.bindInstances(b, tr) {
			return
		}
		attrs := b.attrs(root, name)
		v, w := e.resourceAttr(root, name, attr)
		if attr != "" {
			attrs[attr] = v
		}
		if !v.IsWhollyKnown() {
			b.why = appendUnique(b.why, w...)
		}
	}
}

// bindVar binds var.n: its value, unknown where it is not declared or has
// no value.
func (e *evaluator) bindVar(b *bindings, n string) {
	v, ok := e.vars[n]
	switch {
	case !ok:
		b.varObj[n] = cty.DynamicVal
		b.why = appendUnique(b.why, e.of("var."+n)+", which is not declared")
	case v.value == cty.NilVal && e.mod != "":
		b.varObj[n] = cty.DynamicVal
		b.why = appendUnique(b.why, e.of("var."+n)+", which has no value (no default, and the module call does not set it)")
	case v.value == cty.NilVal:
		b.varObj[n] = cty.DynamicVal
		b.why = appendUnique(b.why, fmt.Sprintf("var.%s, which has no value (no default, not in a .tfvars file or --var)", n))
	default:
		b.varObj[n] = v.value
		if !v.value.IsWhollyKnown() {
			b.why = appendUnique(b.why, v.why...)
		}
	}
}

// variables are the evaluation context's variables of b: a resource with
// count or for_each is unknown as a whole (its instances are indexed by
// key).
func (e *evaluator) variables(b *bindings) map[string]cty.Value {
	vars := b.vars
	if len(b.varObj) > 0 {
		vars["var"] = cty.ObjectVal(b.varObj)
	}
	if len(b.localObj) > 0 {
		vars["local"] = cty.ObjectVal(b.localObj)
	}
	for root, names := range b.tree {
		obj := map[string]cty.Value{}
		for n, attrs := range names {
			if mv, ok := b.modVal[n]; ok && root == "module" {
				obj[n] = mv
				continue
			}
			if ri := b.res[root+"."+n]; ri != nil {
				obj[n] = ri.value()
				continue
			}
			if root != "data" && root != "module" && e.counted(root+"."+n) {
				obj[n] = cty.DynamicVal // instances indexed by key: unknown as a whole
				continue
			}
			obj[n] = cty.ObjectVal(maps.Clone(attrs))
		}
		vars[root] = cty.ObjectVal(obj)
	}
	return vars
}

// counted reports whether the resource at addr has count or for_each.
func (e *evaluator) counted(addr string) bool {
	b := e.c.byAddr[addr]
	return b != nil && (b.body.Attributes["count"] != nil || b.body.Attributes["for_each"] != nil)
}

// firstError is the first error of d in words of gpuctl's messages: its
// summary (a fixed text of HCL's) and where it is. The detail is left out:
// HCL's details quote values ("Unsuitable value: a number is required",
// with the value), which may be a file's content.
func firstError(d hcl.Diagnostics) string {
	for _, x := range d {
		if x.Severity != hcl.DiagError {
			continue
		}
		s := strings.TrimSuffix(x.Summary, ".")
		var ce *callError
		if fx, ok := x.Extra.(hclsyntax.FunctionCallDiagExtra); ok && errors.As(fx.FunctionCallError(), &ce) {
			s = diag.OneLine(ce.msg)
		} else if fc, ok := x.Expression.(*hclsyntax.FunctionCallExpr); ok && fc.Name != countFunc {
			s += " " + fc.Name + "()"
		}
		if x.Subject != nil {
			s += fmt.Sprintf(" at %s:%d:%d", x.Subject.Filename, x.Subject.Start.Line, x.Subject.Start.Column)
		}
		return s
	}
	return "an error"
}

// local evaluates local.NAME (once; a cycle is unknown).
func (e *evaluator) local(name string) (cty.Value, []string) {
	if v, ok := e.locals[name]; ok {
		return v, e.localWhy[name]
	}
	a, ok := e.c.locals[name]
	if !ok {
		return cty.DynamicVal, []string{e.of("local."+name) + ", which is not defined"}
	}
	key := "local." + name
	if e.busy[key] {
		return cty.DynamicVal, []string{e.of(key) + ", which refers to itself"}
	}
	e.busy[key] = true
	v, why := e.eval(a.Expr, nil)
	delete(e.busy, key)
	e.locals[name], e.localWhy[name] = v, why
	return v, why
}

// resourceAttr is TYPE.NAME.ATTR before apply: the attribute's configured
// value where the configuration sets it (a name, a strategy), else unknown
// (ids, ARNs, endpoints the provider computes).
func (e *evaluator) resourceAttr(typ, name, attr string) (cty.Value, []string) {
	addr := typ + "." + name
	b := e.c.byAddr[addr]
	if b == nil {
		return cty.DynamicVal, []string{e.mod + addr + ", which is not in the files read"}
	}
	if b.body.Attributes["count"] != nil || b.body.Attributes["for_each"] != nil {
		return cty.DynamicVal, []string{e.mod + addr + ", whose instances are known only at plan time"}
	}
	return e.attrIn(b, attr, nil, "")
}

// attrIn is attribute attr of resource b evaluated in scope (the count.index
// or each of instance key, "[0]"): its configured value, else unknown.
func (e *evaluator) attrIn(b *tfBlock, attr string, scope map[string]cty.Value, key string) (cty.Value, []string) {
	addr := b.local()
	a := b.body.Attributes[attr]
	if a == nil || e.busy[addr+"."+attr] {
		return cty.DynamicVal, []string{fmt.Sprintf("%s%s%s.%s, which the provider computes", e.mod, addr, key, attr)}
	}
	e.busy[addr+"."+attr] = true
	v, why := e.eval(a.Expr, scope)
	delete(e.busy, addr+"."+attr)
	return v, why
}

func attrName(tr hcl.Traversal, i int) string {
	if i >= len(tr) {
		return ""
	}
	switch s := tr[i].(type) {
	case hcl.TraverseAttr:
		return s.Name
	case hcl.TraverseIndex:
		if s.Key.Type() == cty.String {
			return s.Key.AsString()
		}
	}
	return ""
}

func appendUnique(xs []string, more ...string) []string {
	for _, m := range more {
		dup := false
		for _, x := range xs {
			if x == m {
				dup = true
				break
			}
		}
		if !dup {
			xs = append(xs, m)
		}
	}
	return xs
}

// origin is where expr's value was written: for a plain reference to a
// variable, the tfvars line or default that set it; for a local, the
// local's expression; else expr itself.
func (e *evaluator) origin(expr hcl.Expression) Origin {
	if def := e.definition(expr, 0); def != nil {
		expr = def
	}
	return rangeOrigin(expr.Range())
}

func rangeOrigin(r hcl.Range) Origin {
	return Origin{File: r.Filename, Line: r.Start.Line, Column: r.Start.Column}
}

// definition follows a plain var.X, local.X or module.NAME.OUTPUT
// reference to the expression that defines its value; nil when expr is not
// such a reference or the value came from the command line.
func (e *evaluator) definition(expr hcl.Expression, depth int) hcl.Expression {
	def, _ := e.definitionIn(expr, depth)
	return def
}

// definitionIn is definition, with the evaluator of the module the
// expression is written in (a module call's argument is the caller's).
func (e *evaluator) definitionIn(expr hcl.Expression, depth int) (hcl.Expression, *evaluator) {
	st, ok := expr.(*hclsyntax.ScopeTraversalExpr)
	if !ok || depth > 16 {
		return nil, nil
	}
	if len(st.Traversal) == 3 && st.Traversal.RootName() == "module" {
		return e.outputDefinition(st.Traversal, depth)
	}
	if len(st.Traversal) != 2 {
		return nil, nil
	}
	n := attrName(st.Traversal, 1)
	var def hcl.Expression
	in := e
	switch st.Traversal.RootName() {
	case "var":
		if v := e.vars[n]; v != nil {
			def = v.expr
			if v.in != nil {
				in = v.in
			}
		}
	case "local":
		if a := e.c.locals[n]; a != nil {
			def = a.Expr
		}
	}
	if def == nil {
		return nil, nil
	}
	if deeper, din := in.definitionIn(def, depth+1); deeper != nil {
		return deeper, din
	}
	return def, in
}

// child is the expression that writes the value at key (a string key or
// a number index) inside expr: an item of an object or tuple constructor,
// followed through var/local references and merge() arguments; nil when
// the syntax does not say.
func (e *evaluator) child(expr hcl.Expression, key cty.Value) hcl.Expression {
	if expr == nil {
		return nil
	}
	if def, in := e.definitionIn(expr, 0); def != nil {
		expr, e = def, in
	}
	switch x := expr.(type) {
	case *hclsyntax.ObjectConsExpr:
		return objectItem(x, key)
	case *hclsyntax.TupleConsExpr:
		if key.Type() == cty.Number {
			i, _ := key.AsBigFloat().Int64()
			if i >= 0 && int(i) < len(x.Exprs) {
				return x.Exprs[i]
			}
		}
	case *hclsyntax.FunctionCallExpr:
		if x.Name == "merge" {
			// The last argument that writes the key wins, as merge() says.
			for i := len(x.Args) - 1; i >= 0; i-- {
				if c := e.child(x.Args[i], key); c != nil {
					return c
				}
			}
		}
	case *hclsyntax.ParenthesesExpr:
		return e.child(x.Expression, key)
	case *hclsyntax.ConditionalExpr:
		if br := e.branch(x); br != nil {
			return e.child(br, key)
		}
	}
	return nil
}

// branch is the result of conditional x its condition takes where the
// condition is known (for_each = var.create ? var.groups : {}); nil
// otherwise.
func (e *evaluator) branch(x *hclsyntax.ConditionalExpr) hcl.Expression {
	c, _ := e.eval(x.Condition, nil)
	if !c.IsKnown() || c.IsNull() || c.Type() != cty.Bool {
		return nil
	}
	if c.True() {
		return x.TrueResult
	}
	return x.FalseResult
}

// objectItem is the value expression of the item of object constructor x
// whose key (a constant or a bare keyword) is the string key; nil when none
// is.
func objectItem(x *hclsyntax.ObjectConsExpr, key cty.Value) hcl.Expression {
	if key.Type() != cty.String {
		return nil
	}
	// The last item that writes the key wins, as HCL's object constructor
	// evaluates it.
	for i := len(x.Items) - 1; i >= 0; i-- {
		it := x.Items[i]
		k, d := it.KeyExpr.Value(&hcl.EvalContext{})
		if d.HasErrors() {
			kw := hcl.ExprAsKeyword(it.KeyExpr)
			if kw == "" {
				continue
			}
			k = cty.StringVal(kw)
		}
		if k.Type() == cty.String && k.IsKnown() && k.AsString() == key.AsString() {
			return it.ValueExpr
		}
	}
	return nil
}

// yamlToCty decodes YAML (or JSON) into a cty value of its implied type.
func yamlToCty(data []byte) (cty.Value, error) {
	var x any
	if err := yaml.Unmarshal(data, &x); err != nil {
		return cty.NilVal, err
	}
	b, err := json.Marshal(jsonable(x))
	if err != nil {
		return cty.NilVal, err
	}
	t, err := ctyjson.ImpliedType(b)
	if err != nil {
		return cty.NilVal, err
	}
	return ctyjson.Unmarshal(b, t)
}

// jsonable turns YAML's map[any]any / map[string]any trees into what
// encoding/json writes.
func jsonable(x any) any {
	switch v := x.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = jsonable(e)
		}
		return out
	case map[any]any:
		out := map[string]any{}
		for k, e := range v {
			out[fmt.Sprint(k)] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonable(e)
		}
		return out
	}
	return x
}

// sortedKeys returns the keys of a cty map or object, sorted.
func sortedKeys(v cty.Value) []string {
	if !v.IsKnown() || v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil
	}
	var ks []string
	for k := range v.AsValueMap() {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
