package importer

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// ynode is a YAML node with the file:line it was written at: the key's
// line for a mapping value, the node's own for a list item.
type ynode struct {
	kind  ykind
	at    Origin
	keys  []string // mapping keys in order
	kv    map[string]*ynode
	items []*ynode
	// scalar is a string, int64, float64, bool or nil (null).
	scalar any
}

type ykind int

const (
	yScalar ykind = iota
	yMap
	ySeq
)

// get is the value of key k of a mapping; nil when n is not a mapping or
// has no such key.
func (n *ynode) get(k string) *ynode {
	if n == nil || n.kind != yMap {
		return nil
	}
	return n.kv[k]
}

// kindName says what n is in a message: "mapping", "list", "null" or
// "value".
func (n *ynode) kindName() string {
	switch {
	case n.kind == yMap:
		return "mapping"
	case n.kind == ySeq:
		return "list"
	case n.scalar == nil:
		return "null"
	}
	return "value"
}

// str is a scalar as a string; "" for anything else (an unknown value
// among them).
func (n *ynode) str() string {
	if n == nil || n.kind != yScalar || n.scalar == nil || isUnknownNode(n) {
		return ""
	}
	return fmt.Sprint(n.scalar)
}

// yamlSyntaxError is a goccy/go-yaml parse error as file:line:col:
// message, without the library's "[line:col]" prefix and source excerpt.
func yamlSyntaxError(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		msg := strings.TrimSpace(ye.GetMessage())
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			at := hcl.Pos{Line: tk.Position.Line, Column: tk.Position.Column}
			return &posError{rng: hcl.Range{Filename: file, Start: at, End: at}, err: errors.New(msg)}
		}
		return fmt.Errorf("%s: %s", file, msg)
	}
	msg := strings.TrimSpace(err.Error())
	if i := strings.IndexByte(msg, '\n'); i > 0 {
		msg = msg[:i]
	}
	return fmt.Errorf("%s: %s", file, msg)
}

// yamlDocs parses the documents of a YAML file, held to lim before the
// YAML library builds its tree (spec.CheckYAML); empty documents are left
// out. Errors: a limit passed (a *spec.Error at its line:column), the file
// does not parse (with its line).
func yamlDocs(file string, data []byte, lim spec.YAMLLimits) ([]*ynode, error) {
	if err := spec.CheckYAML(file, data, lim); err != nil {
		var se *spec.Error
		if errors.As(err, &se) && lim.Hint != "" {
			c := *se
			c.Hint = lim.Hint // the spec's advice does not fit this file
			return nil, &c
		}
		return nil, err
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlSyntaxError(file, err)
	}
	c := &yconv{file: file, anchors: map[string]*ynode{}}
	var out []*ynode
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		n, err := c.node(d.Body, Origin{})
		if err != nil {
			return nil, err
		}
		if n != nil {
			out = append(out, n)
		}
	}
	return out, nil
}

type yconv struct {
	file    string
	anchors map[string]*ynode
	depth   int
}

func (c *yconv) pos(n ast.Node) Origin {
	if t := n.GetToken(); t != nil && t.Position != nil {
		return Origin{File: c.file, Line: t.Position.Line, Column: t.Position.Column}
	}
	return Origin{File: c.file}
}

// node converts n; at, when set, is where n is written (its key's line).
// Errors: nesting deeper than 64, an alias before its anchor, a node kind
// gpuctl does not read.
func (c *yconv) node(n ast.Node, at Origin) (*ynode, error) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > 64 {
		return nil, fmt.Errorf("%s:%d: YAML nested more than 64 deep", c.file, c.pos(n).Line)
	}
	if at.File == "" {
		at = c.pos(n)
	}
	switch v := n.(type) {
	case *ast.CommentGroupNode, *ast.CommentNode:
		return nil, nil
	case *ast.DocumentNode:
		return c.node(v.Body, at)
	case *ast.TagNode:
		return c.node(v.Value, at)
	case *ast.AnchorNode:
		return c.anchor(v, at)
	case *ast.AliasNode:
		a := c.anchors[v.Value.String()]
		if a == nil {
			return nil, fmt.Errorf("%s:%d: alias *%s names no anchor", c.file, at.Line, v.Value.String())
		}
		return a, nil
	case *ast.MappingValueNode:
		return c.mapping([]*ast.MappingValueNode{v}, at)
	case *ast.MappingNode:
		return c.mapping(v.Values, at)
	case *ast.SequenceNode:
		return c.sequence(v, at)
	}
	if v, ok := yscalar(n); ok {
		return &ynode{kind: yScalar, at: at, scalar: v}, nil
	}
	return nil, fmt.Errorf("%s:%d: YAML construct gpuctl does not read (%s)", c.file, at.Line, n.Type())
}

// anchor converts an anchored value and records it under the anchor's
// name, for the aliases after it.
func (c *yconv) anchor(v *ast.AnchorNode, at Origin) (*ynode, error) {
	out, err := c.node(v.Value, at)
	if err == nil && v.Name != nil {
		c.anchors[v.Name.String()] = out
	}
	return out, err
}

// sequence converts a list; its items are written at their own lines.
func (c *yconv) sequence(v *ast.SequenceNode, at Origin) (*ynode, error) {
	out := &ynode{kind: ySeq, at: at}
	for _, e := range v.Values {
		item, err := c.node(e, Origin{})
		if err != nil {
			return nil, err
		}
		if item != nil {
			out.items = append(out.items, item)
		}
	}
	return out, nil
}

// yscalar is the value of a scalar node as a ynode holds it: a string
// (block scalars too, and the text of other scalar kinds), int64,
// float64, bool, or nil for null; ok is false when n is not a scalar.
func yscalar(n ast.Node) (v any, ok bool) {
	switch v := n.(type) {
	case *ast.LiteralNode:
		return v.Value.Value, true
	case *ast.NullNode:
		return nil, true
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return x, true
		case uint64:
			return int64(x), true
		case int:
			return int64(x), true
		}
		return int64(0), true
	case *ast.FloatNode:
		return v.Value, true
	case *ast.BoolNode:
		return v.Value, true
	case *ast.StringNode:
		return v.Value, true
	case ast.ScalarNode:
		return fmt.Sprint(v.GetValue()), true
	}
	return nil, false
}

func (c *yconv) mapping(vs []*ast.MappingValueNode, at Origin) (*ynode, error) {
	out := &ynode{kind: yMap, at: at, kv: map[string]*ynode{}}
	for _, mv := range vs {
		kat := c.pos(mv.Key)
		if mv.Key.IsMergeKey() {
			m, err := c.node(mv.Value, kat)
			if err != nil {
				return nil, err
			}
			if m != nil && m.kind == yMap {
				for _, k := range m.keys {
					if _, ok := out.kv[k]; !ok {
						out.keys = append(out.keys, k)
						out.kv[k] = m.kv[k]
					}
				}
			}
			continue
		}
		key := strings.Trim(mv.Key.String(), `"'`)
		if s, ok := mv.Key.(ast.ScalarNode); ok {
			key = fmt.Sprint(s.GetValue())
		}
		var val *ynode
		if mv.Value != nil {
			var err error
			if val, err = c.node(mv.Value, kat); err != nil {
				return nil, err
			}
		}
		if val == nil {
			val = &ynode{kind: yScalar, at: kat}
		}
		if _, dup := out.kv[key]; !dup {
			out.keys = append(out.keys, key)
		}
		out.kv[key] = val
	}
	return out, nil
}

// ctyOf is a resolved YAML node as a cty value; a node resolve marks
// unknown is cty.DynamicVal.
func ctyOf(n *ynode) cty.Value {
	if n == nil {
		return cty.NilVal
	}
	switch n.kind {
	case yMap:
		m := map[string]cty.Value{}
		for _, k := range n.keys {
			m[k] = ctyOf(n.kv[k])
		}
		return cty.ObjectVal(m)
	case ySeq:
		if len(n.items) == 0 {
			return cty.EmptyTupleVal
		}
		var vs []cty.Value
		for _, it := range n.items {
			vs = append(vs, ctyOf(it))
		}
		return cty.TupleVal(vs)
	}
	switch v := n.scalar.(type) {
	case nil:
		return cty.NullVal(cty.DynamicPseudoType)
	case unknownScalar:
		return cty.DynamicVal
	case string:
		return cty.StringVal(v)
	case int64:
		return cty.NumberIntVal(v)
	case float64:
		return cty.NumberVal(new(big.Float).SetFloat64(v))
	case bool:
		return cty.BoolVal(v)
	}
	return cty.StringVal(fmt.Sprint(n.scalar))
}

// unknownScalar is a value a YAML source refers to that is not known
// before deployment (a module output, a function evaluated at deploy
// time); why is what it depends on.
type unknownScalar struct{ why []string }

// whyUnknown lists what the unknown values inside n depend on.
func whyUnknown(n *ynode) []string {
	if n == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	var walk func(*ynode)
	walk = func(n *ynode) {
		switch n.kind {
		case yMap:
			for _, k := range n.keys {
				walk(n.kv[k])
			}
		case ySeq:
			for _, it := range n.items {
				walk(it)
			}
		default:
			if u, ok := n.scalar.(unknownScalar); ok {
				for _, w := range u.why {
					if !seen[w] {
						seen[w] = true
						out = append(out, w)
					}
				}
			}
		}
	}
	walk(n)
	return out
}

// yObj is a resolved YAML mapping as an obj: settings of a blueprint
// module, the spec of a Karpenter document.
type yObj struct {
	n    *ynode
	what string
}

func (o *yObj) origin() Origin { return o.n.at }
func (o *yObj) name() string   { return o.what }

func (o *yObj) get(key string) val {
	what := o.what + " " + key
	c := o.n.get(key)
	if c == nil {
		return val{what: what, at: o.n.at}
	}
	return val{v: ctyOf(c), what: what, at: c.at, why: whyUnknown(c)}
}

func (o *yObj) blocks(key string) []obj {
	c := o.n.get(key)
	if c == nil {
		return nil
	}
	what := o.what + " " + key
	switch c.kind {
	case yMap:
		return []obj{&yObj{n: c, what: what}}
	case ySeq:
		var out []obj
		for i, it := range c.items {
			w := fmt.Sprintf("%s[%d]", what, i)
			switch {
			case it.kind == yMap:
				out = append(out, &yObj{n: it, what: w})
			case isUnknownNode(it):
				out = append(out, &unknownObj{what: w, at: it.at, why: whyUnknown(it)})
			}
		}
		return out
	}
	if isUnknownNode(c) {
		return []obj{&unknownObj{what: what, at: c.at, why: whyUnknown(c)}}
	}
	return nil
}

func isUnknownNode(n *ynode) bool {
	_, ok := n.scalar.(unknownScalar)
	return n.kind == yScalar && ok
}
