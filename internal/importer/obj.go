package importer

import (
	"fmt"
	"math/big"
	"slices"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// val is one value read from a configuration, with where it was written.
type val struct {
	v cty.Value // cty.NilVal when the attribute is absent
	// what names it in messages: "aws_eks_node_group.gpu instance_types".
	what string
	at   Origin
	// why lists what an unknown value depends on.
	why []string
}

func (x val) absent() bool { return x.v == cty.NilVal || (x.v.IsKnown() && x.v.IsNull()) }

func (x val) unknown() bool { return !x.absent() && !x.v.IsWhollyKnown() }

func (x val) known() bool { return !x.absent() && x.v.IsWhollyKnown() }

// str is x as a string; ok false when absent, unknown or not a string.
func (x val) str() (string, bool) {
	if !x.known() {
		return "", false
	}
	s, err := convert.Convert(x.v, cty.String)
	if err != nil || s.IsNull() {
		return "", false
	}
	return s.AsString(), true
}

func (x val) int() (int, bool) {
	if !x.known() {
		return 0, false
	}
	n, err := convert.Convert(x.v, cty.Number)
	if err != nil || n.IsNull() {
		return 0, false
	}
	i, acc := n.AsBigFloat().Int64()
	if acc != big.Exact {
		return 0, false
	}
	return int(i), true
}

func (x val) bool() (bool, bool) {
	if !x.known() {
		return false, false
	}
	b, err := convert.Convert(x.v, cty.Bool)
	if err != nil || b.IsNull() {
		return false, false
	}
	return b.True(), true
}

func (x val) strs() ([]string, bool) {
	if !x.known() {
		return nil, false
	}
	t := x.v.Type()
	if !(t.IsListType() || t.IsTupleType() || t.IsSetType()) {
		if s, ok := x.str(); ok {
			return []string{s}, true
		}
		return nil, false
	}
	var out []string
	for _, e := range x.v.AsValueSlice() {
		s, err := convert.Convert(e, cty.String)
		if err != nil || s.IsNull() {
			return nil, false
		}
		out = append(out, s.AsString())
	}
	return out, true
}

func (x val) strmap() (map[string]string, bool) {
	if !x.known() {
		return nil, false
	}
	t := x.v.Type()
	if !(t.IsMapType() || t.IsObjectType()) {
		return nil, false
	}
	out := map[string]string{}
	for k, e := range x.v.AsValueMap() {
		s, err := convert.Convert(e, cty.String)
		if err != nil || s.IsNull() {
			return nil, false
		}
		out[k] = s.AsString()
	}
	return out, true
}

// obj is a configuration object gpuctl reads fields of: a block body, or a
// value (an item of a module's map of node groups, a blueprint's settings).
type obj interface {
	// get is the attribute or key; an absent val when not set.
	get(key string) val
	// blocks are the nested blocks of a type (HCL), or the objects of a
	// list-of-objects attribute / key.
	blocks(key string) []obj
	origin() Origin
	// name names the object in messages.
	name() string
}

// hclObj is a block body evaluated by e, with scope bound (each, count,
// a dynamic block's iterator).
type hclObj struct {
	e     *evaluator
	body  *hclsyntax.Body
	addr  string
	at    Origin
	scope map[string]cty.Value
	// each is the syntax of the for_each item the instance is of (nil
	// when unknown), to locate each.value.X.
	each hcl.Expression
	// scopeWhy is what the scope's unknown values (a dynamic block's
	// iterator over partly-unknown values) depend on.
	scopeWhy []string
}

func (o *hclObj) origin() Origin { return o.at }
func (o *hclObj) name() string   { return o.addr }

func (o *hclObj) get(key string) val {
	a := o.body.Attributes[key]
	if a == nil {
		return val{what: o.addr + " " + key, at: o.at}
	}
	v, why := o.e.eval(a.Expr, o.scope)
	if !v.IsWhollyKnown() && len(o.scopeWhy) > 0 && (len(why) == 0 || why[0] == "a value known only after apply") {
		why = o.scopeWhy
	}
	return val{v: v, what: o.addr + " " + key, at: o.originOf(a.Expr), why: why}
}

// originOf is o.e.origin, with each.value.X located in the for_each
// value (a .tfvars file's map item, say).
func (o *hclObj) originOf(expr hcl.Expression) Origin {
	tr := traversalOf(expr)
	if o.each == nil || len(tr) < 3 || tr.RootName() != "each" || attrName(tr, 1) != "value" {
		return o.e.origin(expr)
	}
	cur := o.each
	for i := 2; i < len(tr); i++ {
		next := o.e.child(cur, cty.StringVal(attrName(tr, i)))
		if next == nil {
			break
		}
		cur = next
	}
	return o.e.origin(cur)
}

// expr is the expression of attribute key; nil when not set.
func (o *hclObj) expr(key string) hcl.Expression {
	if a := o.body.Attributes[key]; a != nil {
		return a.Expr
	}
	return nil
}

func (o *hclObj) blocks(key string) []obj {
	var out []obj
	for _, b := range o.body.Blocks {
		switch {
		case b.Type == key:
			out = append(out, &hclObj{e: o.e, body: b.Body, addr: o.addr + " " + key, at: rangeOrigin(b.DefRange()), scope: o.scope, each: o.each, scopeWhy: o.scopeWhy})
		case b.Type == "dynamic" && len(b.Labels) == 1 && b.Labels[0] == key:
			out = append(out, o.dynamic(b)...)
		}
	}
	if len(out) == 0 && o.body.Attributes[key] != nil {
		return valObjsIn(o.e, o.get(key), o.expr(key), o.scope)
	}
	return out
}

// keys are the attributes and block types o sets (a dynamic block by the
// type it writes), sorted.
func (o *hclObj) keys() []string {
	set := map[string]bool{}
	for k := range o.body.Attributes {
		set[k] = true
	}
	for _, b := range o.body.Blocks {
		if b.Type == "dynamic" && len(b.Labels) == 1 {
			set[b.Labels[0]] = true
		} else {
			set[b.Type] = true
		}
	}
	return setKeys(set)
}

// setKeys are the keys of set, sorted.
func setKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// keyed is an object that can say which keys it sets.
type keyed interface{ keys() []string }

// objKeys are the keys o sets; nil when o cannot say (an unknown object).
func objKeys(o obj) []string {
	if k, ok := o.(keyed); ok {
		return k.keys()
	}
	return nil
}

// dynamic expands a dynamic block over its for_each value; an unknown
// for_each expands to nothing known, one object whose values are unknown.
func (o *hclObj) dynamic(b *hclsyntax.Block) []obj {
	it := b.Labels[0]
	if a := b.Body.Attributes["iterator"]; a != nil {
		if kw := hcl.ExprAsKeyword(a.Expr); kw != "" {
			it = kw
		}
	}
	var content *hclsyntax.Body
	for _, c := range b.Body.Blocks {
		if c.Type == "content" {
			content = c.Body
		}
	}
	fe := b.Body.Attributes["for_each"]
	if content == nil || fe == nil {
		return nil
	}
	v, why := o.e.eval(fe.Expr, o.scope)
	at := rangeOrigin(b.DefRange())
	// The elements decide the blocks: a list or map whose values are partly
	// unknown gives its blocks, each unknown only where its value is.
	if !v.IsKnown() || (v.Type().IsSetType() && !v.IsWhollyKnown()) {
		return []obj{&unknownObj{what: o.addr + " dynamic " + b.Labels[0], at: at, why: why}}
	}
	if !iterable(v) {
		return nil
	}
	var out []obj
	for i := v.ElementIterator(); i.Next(); {
		k, e := i.Element()
		sc := copyScope(o.scope)
		sc[it] = cty.ObjectVal(map[string]cty.Value{"key": k, "value": e})
		out = append(out, &hclObj{e: o.e, body: content, addr: o.addr + " " + b.Labels[0], at: at, scope: sc, scopeWhy: why})
	}
	return out
}

// iterable reports whether v is a known collection whose elements
// (keys and count) are known, whatever their values.
func iterable(v cty.Value) bool {
	return v.IsKnown() && !v.IsNull() && v.CanIterateElements() && v.Length().IsKnown()
}

func copyScope(s map[string]cty.Value) map[string]cty.Value {
	out := map[string]cty.Value{}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// valObj is an evaluated object value; expr is the syntax that wrote it
// (nil when unknown), to locate its fields.
type valObj struct {
	e    *evaluator
	x    val
	expr hcl.Expression
	// scope binds what expr was evaluated with (each, a dynamic block's
	// iterator), to evaluate one key's own syntax.
	scope map[string]cty.Value
}

func (o *valObj) origin() Origin { return o.x.at }
func (o *valObj) name() string   { return o.x.what }

func (o *valObj) get(key string) val {
	what := o.x.what + "." + key
	if ce := o.sub(key); ce != nil && !o.x.known() {
		// A value not wholly known: the key's own syntax gives its own
		// value and reasons, so that an unknown sibling (or a sibling
		// Terraform cannot evaluate) leaves this key as it is.
		v, why := o.e.eval(ce, o.scope)
		return val{v: v, what: what, at: o.e.origin(ce), why: why}
	}
	if o.x.v != cty.NilVal && !o.x.v.IsKnown() {
		if ks := syntaxKeys(o.e, o.expr); ks != nil && !slices.Contains(ks, key) {
			return val{what: what, at: o.x.at} // the syntax does not write it: absent
		}
	}
	if o.x.unknown() && !(o.x.v.IsKnown() && (o.x.v.Type().IsObjectType() || o.x.v.Type().IsMapType())) {
		return val{v: cty.DynamicVal, what: what, at: o.x.at, why: o.x.why}
	}
	c, ok := childValue(o.x.v, key)
	if !ok {
		return val{what: what, at: o.x.at}
	}
	at := o.x.at
	if ce := o.e.child(o.expr, cty.StringVal(key)); ce != nil {
		at = o.e.origin(ce)
	}
	x := val{v: c, what: what, at: at}
	if !c.IsWhollyKnown() {
		x.why = o.x.why
	}
	return x
}

func (o *valObj) sub(key string) hcl.Expression { return o.e.child(o.expr, cty.StringVal(key)) }

func (o *valObj) blocks(key string) []obj {
	return valObjsIn(o.e, o.get(key), o.sub(key), o.scope)
}

// keys are the keys of o's value, else (a value not known) of the syntax
// that writes it.
func (o *valObj) keys() []string {
	if ks := sortedKeys(o.x.v); ks != nil || (o.x.v != cty.NilVal && o.x.v.IsKnown()) {
		return ks
	}
	return syntaxKeys(o.e, o.expr)
}

// objOf is x (written by expr, evaluated in scope) as one object: an
// object value, or one whose value is not known but whose syntax says
// its keys (each then read from its own expression); else the first of
// valObjs (an unknownObj for an unknown value).
func objOf(e *evaluator, x val, expr hcl.Expression, scope map[string]cty.Value) obj {
	if x.unknown() && !x.v.IsKnown() && syntaxKeys(e, expr) != nil {
		return &valObj{e: e, x: x, expr: expr, scope: scope}
	}
	return first(valObjsIn(e, x, expr, scope))
}

// valObjs are the objects of x: its elements when it is a list, tuple or
// set, x itself when it is an object or map.
func valObjs(e *evaluator, x val, expr hcl.Expression) []obj {
	return valObjsIn(e, x, expr, nil)
}

// valObjsIn is valObjs of a value evaluated in scope.
func valObjsIn(e *evaluator, x val, expr hcl.Expression, scope map[string]cty.Value) []obj {
	if x.absent() {
		return nil
	}
	if !x.v.IsKnown() {
		return syntaxObjs(e, x, expr, scope)
	}
	t := x.v.Type()
	if t.IsObjectType() || t.IsMapType() {
		return []obj{&valObj{e: e, x: x, expr: expr, scope: scope}}
	}
	if !(t.IsListType() || t.IsTupleType() || t.IsSetType()) {
		return nil
	}
	var out []obj
	for i, el := range x.v.AsValueSlice() {
		at, ce := x.at, e.child(expr, cty.NumberIntVal(int64(i)))
		if ce != nil {
			at = e.origin(ce)
		}
		c := val{v: el, what: fmt.Sprintf("%s[%d]", x.what, i), at: at}
		if !el.IsWhollyKnown() {
			c.why = x.why
		}
		out = append(out, &valObj{e: e, x: c, expr: ce, scope: scope})
	}
	return out
}

// syntaxObjs are the objects of x, a value not known as a whole, as its
// syntax writes them: the items of a tuple constructor (each read key by
// key from its own expression), or x itself when an object constructor
// writes it; else one unknownObj.
func syntaxObjs(e *evaluator, x val, expr hcl.Expression, scope map[string]cty.Value) []obj {
	if syntaxKeys(e, expr) != nil {
		return []obj{&valObj{e: e, x: x, expr: expr, scope: scope}}
	}
	var out []obj
	for i := 0; ; i++ {
		ce := e.child(expr, cty.NumberIntVal(int64(i)))
		if ce == nil || syntaxKeys(e, ce) == nil {
			break
		}
		c := val{v: cty.DynamicVal, what: fmt.Sprintf("%s[%d]", x.what, i), at: e.origin(ce), why: x.why}
		out = append(out, &valObj{e: e, x: c, expr: ce, scope: scope})
	}
	if len(out) == 0 || e.child(expr, cty.NumberIntVal(int64(len(out)))) != nil {
		return []obj{&unknownObj{what: x.what, at: x.at, why: x.why}}
	}
	return out
}

// childValue is v[key] for an object or map.
func childValue(v cty.Value, key string) (cty.Value, bool) {
	if !v.IsKnown() || v.IsNull() {
		return cty.NilVal, false
	}
	t := v.Type()
	switch {
	case t.IsObjectType():
		if !t.HasAttribute(key) {
			return cty.NilVal, false
		}
		return v.GetAttr(key), true
	case t.IsMapType():
		k := cty.StringVal(key)
		if !v.HasIndex(k).True() {
			return cty.NilVal, false
		}
		return v.Index(k), true
	}
	return cty.NilVal, false
}

// unknownObj is an object whose every field is unknown (a dynamic block
// over an unknown for_each, an unknown list of objects).
type unknownObj struct {
	what string
	at   Origin
	why  []string
}

func (o *unknownObj) origin() Origin { return o.at }
func (o *unknownObj) name() string   { return o.what }
func (o *unknownObj) get(key string) val {
	return val{v: cty.DynamicVal, what: o.what + " " + key, at: o.at, why: o.why}
}
func (o *unknownObj) blocks(string) []obj { return []obj{o} }

// first is the first of the objects, or nil.
func first(os []obj) obj {
	if len(os) == 0 {
		return nil
	}
	return os[0]
}

// mergedObj reads keys from its layers, the first that sets a key winning:
// a node group over the module's defaults block.
type mergedObj struct{ layers []obj }

func (m *mergedObj) origin() Origin { return m.layers[0].origin() }
func (m *mergedObj) name() string   { return m.layers[0].name() }
func (m *mergedObj) get(key string) val {
	for _, l := range m.layers {
		if x := l.get(key); !x.absent() {
			return x
		}
	}
	return m.layers[0].get(key)
}
func (m *mergedObj) blocks(key string) []obj {
	for _, l := range m.layers {
		if bs := l.blocks(key); len(bs) > 0 {
			return bs
		}
	}
	return nil
}

// keysOf returns the keys of a map/object value, sorted: a value whose
// keys are known even where some values are not.
func keysOf(x val) []string {
	if x.absent() {
		return nil
	}
	return sortedKeys(x.v)
}

// syntaxKeys are the keys an object constructor writes (followed through
// var/local references and parentheses), where each key is a constant or
// a bare name; nil when the syntax does not say.
func syntaxKeys(e *evaluator, expr hcl.Expression) []string {
	if expr == nil {
		return nil
	}
	if def := e.definition(expr, 0); def != nil {
		expr = def
	}
	switch x := expr.(type) {
	case *hclsyntax.ParenthesesExpr:
		return syntaxKeys(e, x.Expression)
	case *hclsyntax.ObjectConsExpr:
		set := map[string]bool{}
		for _, it := range x.Items {
			k, d := it.KeyExpr.Value(&hcl.EvalContext{})
			switch {
			case !d.HasErrors() && k.Type() == cty.String && k.IsKnown() && !k.IsNull():
				set[k.AsString()] = true
			case hcl.ExprAsKeyword(it.KeyExpr) != "":
				set[hcl.ExprAsKeyword(it.KeyExpr)] = true
			default:
				return nil
			}
		}
		return setKeys(set)
	}
	return nil
}

// mapObjs are the items of a map of objects, by key (sorted).
func mapObjs(e *evaluator, x val, expr hcl.Expression) (keys []string, objs []obj) {
	return mapObjsIn(e, x, expr, nil)
}

// mapObjsIn is mapObjs of a value evaluated in scope. A map whose keys
// are known has its items, each value as known as it is; a map Terraform
// cannot know as a whole (an item it cannot evaluate) has the items its
// syntax writes, each read from its own expression.
func mapObjsIn(e *evaluator, x val, expr hcl.Expression, scope map[string]cty.Value) (keys []string, objs []obj) {
	ks := keysOf(x)
	whole := ks != nil
	if !whole && x.unknown() {
		ks = syntaxKeys(e, expr)
	}
	for _, k := range ks {
		c := cty.DynamicVal
		if whole {
			c, _ = childValue(x.v, k)
		}
		at, ce := x.at, e.child(expr, cty.StringVal(k))
		if ce != nil {
			at = e.origin(ce)
		}
		cx := val{v: c, what: x.what + "[\"" + k + "\"]", at: at}
		if !c.IsWhollyKnown() {
			cx.why = x.why
		}
		keys = append(keys, k)
		objs = append(objs, &valObj{e: e, x: cx, expr: ce, scope: scope})
	}
	return keys, objs
}

// keys of a merged object: every layer's.
func (m *mergedObj) keys() []string {
	set := map[string]bool{}
	for _, l := range m.layers {
		for _, k := range objKeys(l) {
			set[k] = true
		}
	}
	return setKeys(set)
}
