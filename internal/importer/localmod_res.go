package importer

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Resources with count or for_each, read by key (TYPE.NAME[0].ATTR,
// TYPE.NAME["k"].ATTR): module repositories create every resource with
// count = var.create ? 1 : 0 and read it back as TYPE.NAME[0]. Where the
// count or the for_each keys are known, TYPE.NAME is a tuple (an object by
// key) of its instances, each with the attributes the expression reads,
// evaluated in the instance's scope.

// resInstances are the instances of one resource as an expression reads
// them.
type resInstances struct {
	keyed  string // count | for_each
	keys   []string
	scopes []map[string]cty.Value
	attrs  []map[string]cty.Value
}

// value is the resource as the expression sees it: a tuple of its
// instances (count), an object by key (for_each).
func (ri *resInstances) value() cty.Value {
	vals := make([]cty.Value, len(ri.keys))
	byKey := map[string]cty.Value{}
	for i, k := range ri.keys {
		vals[i] = cty.ObjectVal(ri.attrs[i])
		byKey[k] = vals[i]
	}
	if ri.keyed == "count" {
		return cty.TupleVal(vals)
	}
	return cty.ObjectVal(byKey)
}

// bindInstances binds TYPE.NAME[KEY].ATTR (tr) of a resource with count or
// for_each whose instances are known: every instance's ATTR. It reports
// false where it does not apply (no count nor for_each, or a reference
// without an attribute), which leaves the reference to bind.
func (e *evaluator) bindInstances(b *bindings, tr hcl.Traversal) bool {
	addr := tr.RootName() + "." + attrName(tr, 1)
	blk := e.c.byAddr[addr]
	if blk == nil || !e.counted(addr) || len(tr) < 4 {
		return false
	}
	if _, ok := tr[2].(hcl.TraverseIndex); !ok {
		return false
	}
	attr := attrName(tr, 3)
	if attr == "" {
		return false
	}
	b.attrs(tr.RootName(), attrName(tr, 1)) // variables() makes the root
	ri := b.res[addr]
	if ri == nil {
		ri = e.resourceInstances(blk)
		if ri == nil {
			return false
		}
		if b.res == nil {
			b.res = map[string]*resInstances{}
		}
		b.res[addr] = ri
	}
	for i := range ri.keys {
		if _, done := ri.attrs[i][attr]; done {
			continue
		}
		key := "[" + ri.keys[i] + "]"
		if ri.keyed == "for_each" {
			key = fmt.Sprintf("[%q]", ri.keys[i])
		}
		v, why := e.attrIn(blk, attr, ri.scopes[i], key)
		ri.attrs[i][attr] = v
		if !v.IsWhollyKnown() {
			b.why = appendUnique(b.why, why...)
		}
	}
	return true
}

// resourceInstances are the instances of resource blk: its count's
// indexes or its for_each's keys, each with its scope; nil where they are
// not known before apply (or past MaxInstances, which the resource's
// reader refuses).
func (e *evaluator) resourceInstances(blk *tfBlock) *resInstances {
	if fe := blk.body.Attributes["for_each"]; fe != nil {
		v, _ := e.eval(fe.Expr, nil)
		if !v.IsKnown() || v.IsNull() || !v.CanIterateElements() || (v.Type().IsSetType() && !v.IsWhollyKnown()) || v.LengthInt() > MaxInstances {
			return nil
		}
		ri := &resInstances{keyed: "for_each"}
		for it := v.ElementIterator(); it.Next(); {
			k, el := it.Element()
			if k.Type() != cty.String {
				k = el
			}
			if k.Type() != cty.String {
				return nil
			}
			ri.add(k.AsString(), map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": k, "value": el})})
		}
		return ri
	}
	v, _ := e.eval(blk.body.Attributes["count"].Expr, nil)
	n, ok := val{v: v}.int()
	if !ok || n < 0 || n > MaxInstances {
		return nil
	}
	ri := &resInstances{keyed: "count"}
	for i := 0; i < n; i++ {
		ri.add(fmt.Sprint(i), map[string]cty.Value{"count": cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(int64(i))})})
	}
	return ri
}

func (ri *resInstances) add(key string, scope map[string]cty.Value) {
	ri.keys, ri.scopes = append(ri.keys, key), append(ri.scopes, scope)
	ri.attrs = append(ri.attrs, map[string]cty.Value{})
}
