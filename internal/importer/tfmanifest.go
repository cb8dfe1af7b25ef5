package importer

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// Karpenter NodePools and EC2NodeClasses written inside Terraform:
//
//   - kubectl_manifest (gavinbunney/kubectl and its forks): yaml_body, a
//     heredoc, templatefile(), file(), yamlencode() of an object or any
//     expression whose value is YAML;
//   - kubernetes_manifest (hashicorp/kubernetes): manifest, an object or
//     yamldecode() of one of the above.
//
// The YAML is read as Karpenter YAML is (kpSet), with each value's origin
// in the .tf file or the template that writes it. A value a template
// interpolates that is unknown before apply (a module output, say) is an
// unknown value of the manifest, not an unknown manifest: the rest of the
// document is read, and the pool fields it would set are listed.

// kubectlManifest reads the Karpenter documents of a kubectl_manifest.
func (t *tfImport) kubectlManifest(r *tfBlock) {
	t.manifestResource(r, "yaml_body")
}

// kubernetesManifest reads the Karpenter documents of a
// kubernetes_manifest.
func (t *tfImport) kubernetesManifest(r *tfBlock) {
	t.manifestResource(r, "manifest")
}

// manifestResource reads attribute key of each instance of r as Kubernetes
// documents, the Karpenter ones into t.kp.
func (t *tfImport) manifestResource(r *tfBlock, key string) {
	if docs, ok := t.decodeMultiDocs(r); ok {
		t.takeDocs(r.addr(), docs)
		return
	}
	if t.forDocs(r, key) {
		return
	}
	_, objs := t.instances(r)
	for _, o := range objs {
		expr := o.expr(key)
		if expr == nil {
			t.b.skip(o.name(), "no "+key, o.origin())
			continue
		}
		eval := func(x hcl.Expression) (cty.Value, []string) { return t.e.eval(x, o.scope) }
		docs, why := t.exprDocs(expr, eval, 0)
		if docs == nil {
			t.b.skip(o.name()+" "+key, "unknown until Terraform applies: it depends on "+strings.Join(why, ", "), t.e.origin(expr))
			continue
		}
		t.takeDocs(o.name(), docs)
	}
}

// forDocs reads the documents of a resource whose attribute key is
// each.value of a for_each that is a for expression ({for K, V in C : KEY
// => VALUE}, written there or in a local) over a known collection: VALUE
// with the for's variables bound to each element, so a templatefile()
// there is read with the lines of its template, its unknown variables as
// unknown values of the documents. ok is false for any other resource.
func (t *tfImport) forDocs(r *tfBlock, key string) bool {
	fe, a := r.body.Attributes["for_each"], r.body.Attributes[key]
	if fe == nil || a == nil {
		return false
	}
	if tr := traversalOf(a.Expr); len(tr) != 2 || tr.RootName() != "each" || attrName(tr, 1) != "value" {
		return false
	}
	fx, ok := t.follow(fe.Expr).(*hclsyntax.ForExpr)
	if !ok || fx.KeyExpr == nil {
		return false
	}
	coll, _ := t.e.eval(fx.CollExpr, nil)
	if !coll.IsWhollyKnown() || coll.IsNull() || !coll.CanIterateElements() || coll.LengthInt() > MaxInstances {
		return false
	}
	t.forEachDocs(r, key, fx, coll)
	return true
}

// forEachDocs reads the documents fx's value writes for each element of
// its collection coll, as resource r's instances.
func (t *tfImport) forEachDocs(r *tfBlock, key string, fx *hclsyntax.ForExpr, coll cty.Value) {
	for it := coll.ElementIterator(); it.Next(); {
		k, v := it.Element()
		sc := map[string]cty.Value{fx.ValVar: v}
		if fx.KeyVar != "" {
			sc[fx.KeyVar] = k
		}
		name := r.addr()
		if kv, _ := t.e.eval(fx.KeyExpr, sc); kv.IsKnown() && !kv.IsNull() && kv.Type() == cty.String {
			name = fmt.Sprintf("%s[%q]", r.addr(), kv.AsString())
		}
		docs, why := t.exprDocs(fx.ValExpr, func(x hcl.Expression) (cty.Value, []string) { return t.e.eval(x, sc) }, 0)
		if docs == nil {
			t.b.skip(name+" "+key, "unknown until Terraform applies: it depends on "+strings.Join(why, ", "), t.e.origin(fx.ValExpr))
			continue
		}
		t.takeDocs(name, docs)
	}
}

// decodeMulti is the kubernetes provider's function that splits a YAML
// stream into its documents.
const decodeMulti = "provider::kubernetes::manifest_decode_multi"

// decodeMultiDocs are the documents of a resource with one instance per
// document of a YAML stream: for_each over ({for K, V in} of)
// provider::kubernetes::manifest_decode_multi(YAML), which gpuctl does not
// evaluate (a provider function), read from YAML itself. ok is false for
// any other for_each.
func (t *tfImport) decodeMultiDocs(r *tfBlock) ([]*ynode, bool) {
	fe := r.body.Attributes["for_each"]
	if fe == nil {
		return nil, false
	}
	src := t.follow(fe.Expr)
	if fx, ok := src.(*hclsyntax.ForExpr); ok {
		src = t.follow(fx.CollExpr)
	}
	name, args, ok := callOf(src)
	if !ok || name != decodeMulti || len(args) != 1 {
		return nil, false
	}
	docs, why := t.exprDocs(args[0], func(x hcl.Expression) (cty.Value, []string) { return t.e.eval(x, nil) }, 0)
	if docs == nil {
		t.b.skip(r.addr(), "for_each over "+decodeMulti+"() of YAML unknown until Terraform applies: it depends on "+strings.Join(why, ", "), t.e.origin(src))
		return nil, true
	}
	return docs, true
}

// follow is the expression a plain var or local reference expr stands
// for, else expr, without the budget counter instrument wraps around a
// for expression's collection.
func (t *tfImport) follow(expr hcl.Expression) hcl.Expression {
	if fc, ok := expr.(*hclsyntax.FunctionCallExpr); ok && fc.Name == countFunc && len(fc.Args) > 0 {
		expr = fc.Args[0]
	}
	if def := t.e.definition(expr, 0); def != nil {
		return def
	}
	return expr
}

// takeDocs files the Karpenter documents of docs (read from what) into
// t.kp; others are skips.
func (t *tfImport) takeDocs(what string, docs []*ynode) {
	for _, d := range docs {
		if kind, ok := t.kp.add(d); !ok {
			if kind == "" {
				kind = "document"
			}
			t.b.skip(what+" "+kind, kpNotRead(d, "a manifest that is not a Karpenter NodePool or EC2NodeClass"), d.at)
		}
	}
}

// flushKarpenter imports the NodePools read from the configuration's
// manifests and chart values, once all are read (a NodePool's
// EC2NodeClass may be in another resource).
func (t *tfImport) flushKarpenter() {
	if len(t.kp.pools) > 0 || len(t.kp.classes) > 0 {
		_ = kpImportDocs(t.b, t.kp) // the context's end is the caller's error
	}
}

// evalFunc evaluates an expression in the scope of the block it is in.
type evalFunc func(hcl.Expression) (cty.Value, []string)

// callOf is the function name and arguments of a call as written: a
// provider function's call, which the precheck turns into one of
// providerFunc with the name first, gives its own name and arguments.
func callOf(expr hcl.Expression) (string, []hclsyntax.Expression, bool) {
	fc, ok := expr.(*hclsyntax.FunctionCallExpr)
	if !ok {
		return "", nil, false
	}
	if fc.Name == providerFunc && len(fc.Args) > 0 {
		if lit, ok := fc.Args[0].(*hclsyntax.LiteralValueExpr); ok && lit.Val.Type() == cty.String && lit.Val.IsKnown() {
			return lit.Val.AsString(), fc.Args[1:], true
		}
	}
	return fc.Name, fc.Args, true
}

// maxDocDepth bounds how far exprDocs follows references and calls.
const maxDocDepth = 8

// exprDocs are the YAML documents expr writes: an object (yamlencode(),
// jsonencode() and yamldecode() of it, or an HCL object) as its value, a
// string as YAML text with the origin of each line. nil with why when the
// value is unknown as a whole.
func (t *tfImport) exprDocs(expr hcl.Expression, eval evalFunc, depth int) ([]*ynode, []string) {
	if def := t.e.definition(expr, 0); def != nil && depth < maxDocDepth {
		return t.exprDocs(def, func(x hcl.Expression) (cty.Value, []string) { return t.e.eval(x, nil) }, depth+1)
	}
	if name, args, ok := callOf(expr); ok && len(args) == 1 && depth < maxDocDepth {
		switch name {
		case "yamlencode", "jsonencode", "yamldecode", "provider::kubernetes::manifest_decode", decodeMulti:
			return t.exprDocs(args[0], eval, depth+1)
		}
	}
	if textSyntax(expr) {
		// a template or a file read: its text, without evaluating it whole
		if w := newTFText(); t.text(w, expr, eval) {
			return w.parse(t.e.origin(expr).File)
		}
	}
	v, why := eval(expr)
	if v.IsKnown() && !v.IsNull() && (v.Type().IsObjectType() || v.Type().IsMapType()) {
		return []*ynode{t.ctyNode(v, expr, t.e.origin(expr), why)}, nil
	}
	s, ok := knownString(v)
	if !ok {
		return nil, why
	}
	w := newTFText()
	r := expr.Range()
	w.write(s, r.Filename, r.Start.Line, false)
	return w.parse(r.Filename)
}

// textSyntax reports whether expr is a template, file() or templatefile(),
// whose text tfText writes line by line.
func textSyntax(expr hcl.Expression) bool {
	switch x := expr.(type) {
	case *hclsyntax.TemplateExpr:
		return true
	case *hclsyntax.FunctionCallExpr:
		return x.Name == "file" || x.Name == "templatefile"
	}
	return false
}

// parse is w.docs, an error said as why the documents are unknown.
func (w *tfText) parse(file string) ([]*ynode, []string) {
	docs, err := w.docs(file)
	if err != nil {
		return nil, []string{"YAML gpuctl cannot read (" + err.Error() + ")"}
	}
	return docs, nil
}

// text writes the string expr makes into w: a template part by part (an
// unknown part as a placeholder), templatefile() and file() with the lines
// of the file they read. false when the string is unknown as a whole.
func (t *tfImport) text(w *tfText, expr hcl.Expression, eval evalFunc) bool {
	switch x := expr.(type) {
	case *hclsyntax.TemplateExpr:
		w.template(x, eval)
		return true
	case *hclsyntax.FunctionCallExpr:
		if ok, done := t.fileText(w, x, eval); done {
			return ok
		}
	}
	return false
}

// knownString is v as a string when it is a known string.
func knownString(v cty.Value) (string, bool) {
	if !v.IsWhollyKnown() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

// fileText writes templatefile(PATH, VARS) or file(PATH) of call x into w
// with the lines of the file; done is false for any other call (or a path
// that is not known), ok whether it was written.
func (t *tfImport) fileText(w *tfText, x *hclsyntax.FunctionCallExpr, eval evalFunc) (ok, done bool) {
	if (x.Name != "templatefile" || len(x.Args) != 2) && (x.Name != "file" || len(x.Args) != 1) {
		return false, false
	}
	pv, _ := eval(x.Args[0])
	p, known := knownString(pv)
	if !known {
		return false, false
	}
	data, rel, err := t.e.sb.read(x.Name, 1, p)
	if err != nil {
		return false, false // the call's own evaluation says why
	}
	name := t.e.sb.root.Path(rel)
	if x.Name == "file" {
		w.write(string(data), name, 1, true)
		return true, true
	}
	return t.templateText(w, name, data, x.Args[1], eval), true
}

// templateText renders the template data (file name) with the variables
// vars evaluates to into w, an unknown interpolation as a placeholder.
func (t *tfImport) templateText(w *tfText, name string, data []byte, vars hcl.Expression, eval evalFunc) bool {
	if err := scanNesting(t.e.b, data, name, hcl.InitialPos, scanTemplate); err != nil {
		_ = t.e.b.fail(err)
		return false
	}
	tx, d := hclsyntax.ParseTemplate(data, name, hcl.InitialPos)
	if d.HasErrors() {
		return false
	}
	instrument(tx)
	vv, vwhy := eval(vars)
	scope := map[string]cty.Value{}
	if vv.IsKnown() && !vv.IsNull() && (vv.Type().IsObjectType() || vv.Type().IsMapType()) {
		for k, v := range vv.AsValueMap() {
			scope[k] = v
		}
	}
	ctx := &hcl.EvalContext{Variables: scope, Functions: t.e.funcs}
	inner := func(x hcl.Expression) (cty.Value, []string) {
		if t.e.b.add(1) != nil {
			return cty.DynamicVal, stoppedWhy
		}
		v, d := x.Value(ctx)
		if d.HasErrors() {
			return cty.DynamicVal, []string{"an expression gpuctl cannot evaluate (" + firstError(d) + ")"}
		}
		if !v.IsWhollyKnown() {
			return v, vwhy
		}
		return v, nil
	}
	if tt, ok := tx.(*hclsyntax.TemplateExpr); ok {
		w.template(tt, inner)
		return true
	}
	v, _ := inner(tx)
	s, ok := knownString(v)
	if ok {
		w.write(s, name, 1, false)
	}
	return ok
}

// ctyNode is v as a YAML node, each value at the syntax that writes it
// (expr, else at), an unknown value an unknown scalar (why).
func (t *tfImport) ctyNode(v cty.Value, expr hcl.Expression, at Origin, why []string) *ynode {
	if expr != nil {
		at = t.e.origin(expr)
	}
	if !v.IsKnown() {
		return &ynode{kind: yScalar, at: at, scalar: unknownScalar{why: why}}
	}
	if v.IsNull() {
		return &ynode{kind: yScalar, at: at}
	}
	ty := v.Type()
	switch {
	case ty.IsObjectType() || ty.IsMapType():
		n := &ynode{kind: yMap, at: at, kv: map[string]*ynode{}}
		for _, k := range sortedKeys(v) {
			c, _ := childValue(v, k)
			n.keys = append(n.keys, k)
			n.kv[k] = t.ctyNode(c, t.e.child(expr, cty.StringVal(k)), at, why)
		}
		return n
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		n := &ynode{kind: ySeq, at: at}
		for i, c := range v.AsValueSlice() {
			n.items = append(n.items, t.ctyNode(c, t.e.child(expr, cty.NumberIntVal(int64(i))), at, why))
		}
		return n
	}
	return &ynode{kind: yScalar, at: at, scalar: ctyScalar(v)}
}

// ctyScalar is a known primitive value as a ynode scalar.
func ctyScalar(v cty.Value) any {
	switch v.Type() {
	case cty.Bool:
		return v.True()
	case cty.Number:
		f := v.AsBigFloat()
		if i, acc := f.Int64(); acc == big.Exact {
			return i
		}
		x, _ := f.Float64()
		return x
	case cty.String:
		return v.AsString()
	}
	return fmt.Sprint(v.GoString())
}

// tfText is YAML text made from Terraform syntax: the text, where each of
// its lines was written, and the placeholders written for unknown values
// with what they depend on.
type tfText struct {
	b     strings.Builder
	lines []Origin
	holes map[string][]string
}

func newTFText() *tfText { return &tfText{holes: map[string][]string{}} }

// write appends s, written at file:line; src says s is the source's own
// text (its line breaks are the file's), not a value put into it.
func (w *tfText) write(s, file string, line int, src bool) {
	if len(w.lines) == 0 {
		w.lines = append(w.lines, Origin{File: file, Line: line})
	}
	for i, part := range strings.Split(s, "\n") {
		if i > 0 {
			w.b.WriteByte('\n')
			if src {
				line++
			}
			w.lines = append(w.lines, Origin{File: file, Line: line})
		}
		w.b.WriteString(part)
	}
}

// template writes the parts of template x: literal text as it is, an
// interpolation or directive by its value, a placeholder where unknown.
func (w *tfText) template(x *hclsyntax.TemplateExpr, eval evalFunc) {
	for _, p := range x.Parts {
		r := p.Range()
		if lit, ok := p.(*hclsyntax.LiteralValueExpr); ok && lit.Val.Type() == cty.String && !lit.Val.IsNull() {
			w.write(lit.Val.AsString(), r.Filename, r.Start.Line, true)
			continue
		}
		v, why := eval(p)
		if s, ok := knownString(v); ok {
			w.write(s, r.Filename, r.Start.Line, false)
			continue
		}
		if v.IsWhollyKnown() && !v.IsNull() {
			w.write(fmt.Sprint(ctyScalar(v)), r.Filename, r.Start.Line, false)
			continue
		}
		if len(why) == 0 {
			why = []string{"a value known only after apply"}
		}
		ph := fmt.Sprintf("gpuctl-unknown-%d", len(w.holes)+1)
		w.holes[ph] = why
		w.write(ph, r.Filename, r.Start.Line, false)
	}
}

// docs parses the text as YAML documents (file names it in errors), each
// value at the line that wrote it and each value holding a placeholder
// unknown.
func (w *tfText) docs(file string) ([]*ynode, error) {
	docs, err := yamlDocs(file, []byte(w.b.String()), KarpenterLimits)
	if err != nil {
		return nil, err
	}
	seen := map[*ynode]bool{}
	for _, d := range docs {
		w.place(d, seen)
	}
	return docs, nil
}

// place moves n and what it holds to the lines that wrote them and marks
// the values that hold a placeholder unknown.
func (w *tfText) place(n *ynode, seen map[*ynode]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	if l := n.at.Line; l >= 1 && l <= len(w.lines) {
		o := w.lines[l-1]
		n.at = Origin{File: o.File, Line: o.Line, Column: n.at.Column}
	}
	for _, k := range n.keys {
		w.place(n.kv[k], seen)
	}
	for _, it := range n.items {
		w.place(it, seen)
	}
	if s, ok := n.scalar.(string); ok && len(w.holes) > 0 && strings.Contains(s, "gpuctl-unknown-") {
		var why []string
		for ph, wh := range w.holes {
			if strings.Contains(s, ph) {
				why = appendUnique(why, wh...)
			}
		}
		n.scalar = unknownScalar{why: why}
	}
}

// kpHoles takes the unknown values out of NodePool d (name) where the
// Karpenter reader would read them as known: a requirement, a taint or a
// template label whose value is unknown is removed and returned as an
// unknown value of the pool field it sets.
func kpHoles(d *ynode, name string) []Unknown {
	ts := d.get("spec").get("template").get("spec")
	what := "NodePool " + name
	var out []Unknown
	if rs := ts.get("requirements"); rs != nil && rs.kind == ySeq {
		kept := rs.items[:0:0]
		for _, r := range rs.items {
			why := whyUnknown(r)
			vs := r.get("values")
			if len(why) == 0 && (vs == nil || vs.kind == ySeq) {
				kept = append(kept, r)
				continue
			}
			key := r.get("key").str()
			out = append(out, Unknown{Path: kpRequirementPath(key), What: what + " requirement " + key, Because: kpBecause(why), Origin: r.at})
		}
		rs.items = kept
	}
	if tn := ts.get("taints"); tn != nil && tn.kind == ySeq {
		kept := tn.items[:0:0]
		for _, it := range tn.items {
			if why := whyUnknown(it); len(why) > 0 {
				out = append(out, Unknown{Path: ".taints", What: what + " taint", Because: why, Origin: it.at})
				continue
			}
			kept = append(kept, it)
		}
		tn.items = kept
	}
	if ls := d.get("spec").get("template").get("metadata").get("labels"); ls != nil && ls.kind == yMap {
		var keys []string
		for _, k := range ls.keys {
			if why := whyUnknown(ls.kv[k]); len(why) > 0 {
				out = append(out, Unknown{Path: ".labels" + spec.Key(k), What: what + " label " + k, Because: why, Origin: ls.kv[k].at})
				delete(ls.kv, k)
				continue
			}
			keys = append(keys, k)
		}
		ls.keys = keys
	}
	return out
}

// kpBecause is why a requirement is unknown: what it depends on, else that
// its values are not a list.
func kpBecause(why []string) []string {
	if len(why) == 0 {
		return []string{"values that are not a list"}
	}
	return why
}

// kpRequirementPath is the pool field a requirement of key sets.
func kpRequirementPath(key string) string {
	switch key {
	case kpZone:
		return ".zones"
	case kpCapacityType:
		return ".capacity"
	case kpInstanceType, kpArch, kpFamily, kpCategory, kpGeneration, kpSize, kpGPUName, kpGPUCount, kpGPUMaker:
		return ".instanceTypes"
	}
	return ""
}
