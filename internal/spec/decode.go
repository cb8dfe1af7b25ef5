package spec

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// The spec's values are decoded from goccy/go-yaml's tree by the walk
// below, which knows the spec's types: yaml.NodeToValue first turned the
// whole tree into generic maps (to resolve anchors), then walked it again
// by reflection, keyed every mapping twice and re-serialised nodes for
// types with an UnmarshalYAML method, most of the CPU of reading a large
// spec. The walk runs after checkFields, so unknown fields, numbers in
// integer and string fields and bad rollout values are already refused
// with their positions. It takes the plain shapes a spec is written in:
// block and flow mappings with plain or quoted keys, lists, scalars,
// nulls, anchors and aliases. Anything else (tags, merge keys, keys that
// are not strings, a repeated key, an anchored null, an anchor name
// defined twice, an alias before its anchor or inside it, a value of the
// wrong shape) it leaves to yaml.NodeToValue, which decodes such a file as before, with the same
// values and the same errors; TestDecodeAgreesWithLibrary and
// FuzzDecodeAgrees hold the two to the same result.

// errLibrary says the walk met a construct it leaves to the YAML library.
var errLibrary = errors.New("spec: construct left to the YAML library")

var (
	intOrPercentType    = reflect.TypeOf(IntOrPercent{})
	stringType          = reflect.TypeOf("")
	stringSliceType     = reflect.TypeOf([]string(nil))
	stringMapType       = reflect.TypeOf(map[string]string(nil))
	maxDecodeDepthLimit = 4*MaxDepth + 8
)

// decodeSpec decodes the document body into v (a pointer to the spec's
// type), by the walk where it can and by the YAML library where not.
func decodeSpec(file string, body ast.Node, v any) error {
	d := &decoder{file: file}
	rv := reflect.ValueOf(v).Elem()
	err := d.value(rv, body, 0)
	if err == nil {
		return nil
	}
	if !errors.Is(err, errLibrary) {
		return err
	}
	rv.Set(reflect.Zero(rv.Type()))
	if err := libraryDecode(body, v); err != nil {
		e := yamlError(file, err)
		if se, ok := e.(*Error); ok && se.Line > 0 {
			se.Path = pathAt(body, se.Line, se.Column)
		}
		return e
	}
	return nil
}

// libraryDecode is yaml.NodeToValue, with a panic in the library (it has
// dereferenced nil on shapes checkFields does not know of) returned as an
// error.
func libraryDecode(body ast.Node, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML library cannot decode this file (%v); write it without YAML tags and merge keys", r)
		}
	}()
	return yaml.NodeToValue(body, v, yaml.DisallowUnknownField())
}

type decoder struct {
	file string
	// anchors are the anchors met so far in document order (name to the
	// anchored node), as the library resolves them; active are those whose
	// value is being decoded.
	anchors map[string]ast.Node
	active  map[string]bool
}

// value decodes n into v, a settable value that holds its type's zero.
func (d *decoder) value(v reflect.Value, n ast.Node, depth int) error {
	if depth > maxDecodeDepthLimit {
		return errLibrary
	}
	switch x := n.(type) {
	case *ast.AnchorNode:
		name := x.Name.GetToken().Value
		if _, null := x.Value.(*ast.NullNode); null || x.Value == nil {
			return errLibrary // an anchored null: the library decodes it unlike a plain one
		}
		if prev, ok := d.anchors[name]; ok && prev != x.Value {
			return errLibrary // defined twice: which one an alias means depends on the library's order
		}
		if d.anchors == nil {
			d.anchors, d.active = map[string]ast.Node{}, map[string]bool{}
		}
		d.anchors[name] = x.Value
		d.active[name] = true
		err := d.value(v, x.Value, depth+1)
		d.active[name] = false
		return err
	case *ast.AliasNode:
		name := x.Value.GetToken().Value
		target, ok := d.anchors[name]
		if !ok || d.active[name] {
			return errLibrary
		}
		return d.value(v, target, depth+1)
	case *ast.NullNode:
		return nil // the zero value, as the library leaves it
	case *ast.TagNode:
		return errLibrary
	}
	t := v.Type()
	switch t {
	case stringType:
		s, ok := scalarString(n)
		if !ok {
			return errLibrary
		}
		v.SetString(s)
		return nil
	case stringSliceType:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			return errLibrary
		}
		out := make([]string, len(seq.Values))
		for i, e := range seq.Values {
			if s, ok := scalarString(e); ok {
				out[i] = s
				continue
			}
			ev := reflect.ValueOf(&out[i]).Elem()
			if err := d.value(ev, e, depth+1); err != nil {
				return err
			}
		}
		v.Set(reflect.ValueOf(out))
		return nil
	case stringMapType:
		values, ok := entries(n)
		if !ok {
			return errLibrary
		}
		out := make(map[string]string, len(values))
		for _, mv := range values {
			key, ok := stringKey(mv.Key)
			if !ok {
				return errLibrary
			}
			if _, dup := out[key]; dup {
				return errLibrary
			}
			s, ok := scalarString(mv.Value)
			if !ok {
				var ev string
				if err := d.value(reflect.ValueOf(&ev).Elem(), mv.Value, depth+1); err != nil {
					return err
				}
				s = ev
			}
			out[key] = s
		}
		v.Set(reflect.ValueOf(out))
		return nil
	case intOrPercentType:
		return d.intOrPercent(v, n)
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := d.value(p.Elem(), n, depth+1); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Struct:
		values, ok := entries(n)
		if !ok || t.NumField() > 64 {
			return errLibrary
		}
		fields := fieldIndex(t)
		var seen uint64
		for _, mv := range values {
			key, ok := stringKey(mv.Key)
			if !ok {
				return errLibrary
			}
			i, ok := fields[key]
			if !ok || seen&(1<<i) != 0 {
				return errLibrary
			}
			seen |= 1 << i
			if err := d.value(v.Field(i), mv.Value, depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			return errLibrary
		}
		s := reflect.MakeSlice(t, len(seq.Values), len(seq.Values))
		for i, e := range seq.Values {
			if err := d.value(s.Index(i), e, depth+1); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Map:
		values, ok := entries(n)
		if !ok || t.Key() != stringType {
			return errLibrary
		}
		m := reflect.MakeMapWithSize(t, len(values))
		for _, mv := range values {
			key, ok := stringKey(mv.Key)
			if !ok {
				return errLibrary
			}
			kv := reflect.ValueOf(key)
			if m.MapIndex(kv).IsValid() {
				return errLibrary
			}
			ev := reflect.New(t.Elem()).Elem()
			if err := d.value(ev, mv.Value, depth+1); err != nil {
				return err
			}
			m.SetMapIndex(kv, ev)
		}
		v.Set(m)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, ok := n.(*ast.IntegerNode)
		if !ok {
			return errLibrary
		}
		var i int64
		switch n := x.Value.(type) {
		case int64:
			i = n
		case uint64:
			if n > math.MaxInt64 {
				return errLibrary
			}
			i = int64(n)
		default:
			return errLibrary
		}
		if v.OverflowInt(i) {
			return errLibrary
		}
		v.SetInt(i)
	case reflect.Bool:
		x, ok := n.(*ast.BoolNode)
		if !ok {
			return errLibrary
		}
		v.SetBool(x.Value)
	case reflect.Float64:
		switch x := n.(type) {
		case *ast.FloatNode:
			v.SetFloat(x.Value)
		case *ast.IntegerNode:
			switch i := x.Value.(type) {
			case int64:
				v.SetFloat(float64(i))
			case uint64:
				v.SetFloat(float64(i))
			default:
				return errLibrary
			}
		case *ast.InfinityNode:
			v.SetFloat(x.Value)
		case *ast.NanNode:
			v.SetFloat(math.NaN())
		default:
			return errLibrary
		}
	default:
		return errLibrary
	}
	return nil
}

// intOrPercent decodes a rollout count or percentage. checkFields has
// refused a value that is neither; the library reads the node's text.
func (d *decoder) intOrPercent(v reflect.Value, n ast.Node) error {
	var text string
	switch x := n.(type) {
	case *ast.IntegerNode:
		text = x.Token.Value
	case *ast.StringNode:
		text = x.Value
		if !plainText(x) {
			return errLibrary
		}
	default:
		return errLibrary
	}
	p, err := ParseIntOrPercent(text)
	if err != nil {
		return errLibrary
	}
	v.Set(reflect.ValueOf(p))
	return nil
}

// plainText reports whether the library's text for the string node, which
// UnmarshalYAML unquotes, is its value: a plain scalar, or a quoted one
// without escapes or inner quotes.
func plainText(x *ast.StringNode) bool {
	tk := x.Token
	if tk == nil {
		return false
	}
	for i := 0; i < len(x.Value); i++ {
		if c := x.Value[i]; c == '\\' || c == '"' || c == '\'' || c < ' ' {
			return false
		}
	}
	if o := tk.Origin; o != "" {
		for i := 0; i < len(o); i++ {
			if o[i] == '\\' {
				return false
			}
		}
	}
	return true
}

// scalarString is the string the library decodes a scalar node to for a
// string field: the text of strings and block scalars, the canonical form
// of numbers (checkFields has refused a number whose form differs from
// its text) and booleans.
func scalarString(n ast.Node) (string, bool) {
	switch x := n.(type) {
	case *ast.StringNode:
		return x.Value, true
	case *ast.LiteralNode:
		if x.Value == nil {
			return "", false
		}
		return x.Value.Value, true
	case *ast.IntegerNode:
		switch i := x.Value.(type) {
		case int64:
			return strconv.FormatInt(i, 10), true
		case uint64:
			return strconv.FormatUint(i, 10), true
		}
	case *ast.FloatNode:
		return fmt.Sprint(x.Value), true
	case *ast.BoolNode:
		return strconv.FormatBool(x.Value), true
	case *ast.InfinityNode:
		return fmt.Sprint(x.Value), true
	case *ast.NanNode:
		return "NaN", true
	}
	return "", false
}

// entries are the entries of a mapping node.
func entries(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}, true
	}
	return nil, false
}

// stringKey is a mapping key written as a plain or quoted string, other
// than the merge key.
func stringKey(k ast.MapKeyNode) (string, bool) {
	s, ok := k.(*ast.StringNode)
	if !ok || s.Value == "<<" {
		return "", false
	}
	return s.Value, true
}
