package spec

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agnivade/levenshtein"
	"github.com/goccy/go-yaml/ast"
)

// checkFields walks the YAML tree alongside the Go type t and reports the
// first key that names no field, with the closest field name as a hint,
// and the first scalar the decoder would read as another type than t's
// (a number in an integer or string field, a version written as a number,
// a rollout value that is neither a count nor a percentage). anchors
// collects the anchors met, so that an alias is checked as its target.
func checkFields(file string, n ast.Node, t reflect.Type, path string, anchors map[string]ast.Node) error {
	c := &fieldCheck{file: file, anchors: anchors}
	return c.at(n, t, &fieldPath{kind: pathRoot, key: path})
}

// fieldCheck is one walk of checkFields: the file the errors name and the
// anchors met so far (name to anchored node).
type fieldCheck struct {
	file    string
	anchors map[string]ast.Node
}

// fieldPath is the path of a node as checkFields walks, written out only
// for an error (building each node's path string was most of the walk).
type fieldPath struct {
	parent *fieldPath
	kind   byte
	key    string
	index  int
}

const (
	pathRoot  byte = iota // key is the whole path
	pathField             // join(parent, key)
	pathKey               // parent + Key(key): a map entry
	pathIndex             // parent[index]
)

func (p *fieldPath) String() string {
	switch p.kind {
	case pathField:
		return join(p.parent.String(), p.key)
	case pathKey:
		return p.parent.String() + Key(p.key)
	case pathIndex:
		return fmt.Sprintf("%s[%d]", p.parent.String(), p.index)
	}
	return p.key
}

// at checks the node n, at path, against the type t.
func (c *fieldCheck) at(n ast.Node, t reflect.Type, path *fieldPath) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == intOrPercentType {
		if err := checkIntOrPercent(c.file, n, path); err != nil {
			return err
		}
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		c.anchors[v.Name.String()] = v.Value
		return c.at(v.Value, t, path)
	case *ast.TagNode:
		return c.tagged(v, t, path)
	case *ast.AliasNode:
		if target, ok := c.anchors[v.Value.String()]; ok {
			return c.at(target, t, path)
		}
	case *ast.MappingValueNode:
		return c.mapping([]*ast.MappingValueNode{v}, t, path)
	case *ast.MappingNode:
		return c.mapping(v.Values, t, path)
	case *ast.StringNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		if isInt(t) {
			return errAt(c.file, n.GetToken(), path.String(), fmt.Sprintf("wrong type: want an integer, got %s", quoteShort(n.GetToken().Value)), "write a whole number without quotes")
		}
	case *ast.FloatNode, *ast.IntegerNode:
		return c.number(n, t, path)
	case *ast.SequenceNode:
		return c.sequence(v, t, path)
	}
	return nil
}

// tagged checks a tagged value: a tag other than !!int on an integer
// field is refused, and so is a tagged value other than a list where a
// list belongs (the YAML library's decoder dereferenced nil on it).
func (c *fieldCheck) tagged(v *ast.TagNode, t reflect.Type, path *fieldPath) error {
	if isInt(t) && v.Start != nil && v.Start.Value != "!!int" {
		return errAt(c.file, v.GetToken(), path.String(), fmt.Sprintf("wrong type: want an integer, got %s", quoteShort(v.String())), "write the number without a tag")
	}
	if t.Kind() == reflect.Slice {
		inner := untag(v.Value)
		if _, ok := inner.(*ast.SequenceNode); !ok {
			tk := v.GetToken()
			if inner != nil && inner.GetToken() != nil {
				tk = inner.GetToken()
			}
			return errAt(c.file, tk, path.String(), fmt.Sprintf("wrong type: want a list, got %s", quoteShort(tk.Value)), "")
		}
	}
	return c.at(v.Value, t, path)
}

// untag skips the tags of n to the value they tag.
func untag(n ast.Node) ast.Node {
	for {
		tn, ok := n.(*ast.TagNode)
		if !ok {
			return n
		}
		n = tn.Value
	}
}

// mapping checks a mapping's entries against a struct's fields or a map's
// values; against another type the decoder reports the shape.
func (c *fieldCheck) mapping(values []*ast.MappingValueNode, t reflect.Type, path *fieldPath) error {
	switch t.Kind() {
	case reflect.Struct:
		return c.structFields(values, t, path)
	case reflect.Map:
		for _, mv := range values {
			if err := c.at(mv.Value, t.Elem(), &fieldPath{parent: path, kind: pathKey, key: keyName(mv.Key)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// structFields checks a mapping's keys against the struct t's YAML fields
// (a merge key's mapping against t itself) and each value against its
// field's type.
func (c *fieldCheck) structFields(values []*ast.MappingValueNode, t reflect.Type, path *fieldPath) error {
	fields := yamlFields(t)
	for _, mv := range values {
		key := keyName(mv.Key)
		if key == "<<" {
			if err := c.at(mv.Value, t, path); err != nil {
				return err
			}
			continue
		}
		ft, ok := fields[key]
		if !ok {
			p := join(path.String(), key)
			return errAt(c.file, mv.Key.GetToken(), p, fmt.Sprintf("unknown field %q", key), suggest(key, fields))
		}
		if err := c.at(mv.Value, ft, &fieldPath{parent: path, kind: pathField, key: key}); err != nil {
			return err
		}
	}
	return nil
}

// number checks a number: a float is refused in an integer field, and in
// a string field a number whose text the decoder would not keep (1.30 is
// read as 1.3) or that is a version.
func (c *fieldCheck) number(n ast.Node, t reflect.Type, path *fieldPath) error {
	lit := n.GetToken().Value
	if _, float := n.(*ast.FloatNode); float && isInt(t) {
		return errAt(c.file, n.GetToken(), path.String(), fmt.Sprintf("wrong type: want an integer, got %s", lit), "write a whole number")
	}
	if t.Kind() != reflect.String {
		return nil
	}
	if canon := fmt.Sprint(n.(ast.ScalarNode).GetValue()); canon != lit {
		return errAt(c.file, n.GetToken(), path.String(), fmt.Sprintf("%s is read as the number %s", lit, canon), fmt.Sprintf("quote it: \"%s\"", lit))
	}
	if versionField(path.String()) {
		return errAt(c.file, n.GetToken(), path.String(), fmt.Sprintf("%s is a number, and versions must be strings", lit), fmt.Sprintf("quote it: \"%s\"", lit))
	}
	return nil
}

// sequence checks a list's entries against a slice's element type.
func (c *fieldCheck) sequence(v *ast.SequenceNode, t reflect.Type, path *fieldPath) error {
	if t.Kind() != reflect.Slice {
		return nil
	}
	for i, e := range v.Values {
		if err := c.at(e, t.Elem(), &fieldPath{parent: path, kind: pathIndex, index: i}); err != nil {
			return err
		}
	}
	return nil
}

// checkIntOrPercent refuses a rollout value that is neither a count nor a
// percentage where it is written, before the decoder reads it (a mapping
// would be read as IntOrPercent's own fields).
func checkIntOrPercent(file string, n ast.Node, path *fieldPath) error {
	var text string
	switch v := n.(type) {
	case *ast.AnchorNode, *ast.TagNode, *ast.AliasNode, *ast.NullNode:
		return nil // checked at the value, or nothing to check
	case *ast.IntegerNode:
		text = v.GetToken().Value
	case *ast.StringNode:
		text = v.Value
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode:
		return errAt(file, n.GetToken(), path.String(), fmt.Sprintf("wrong type: want a number of nodes (2) or a percentage (\"25%%\"), got %s", quoteShort(n.GetToken().Value)), intOrPercentHint(path))
	default:
		text = n.GetToken().Value
	}
	if _, err := ParseIntOrPercent(text); err != nil {
		return errAt(file, n.GetToken(), path.String(), err.Error(), intOrPercentHint(path))
	}
	return nil
}

// intOrPercentHint is the example of a count or percentage for the field
// at path (maxUnavailable, maxUnhealthy).
func intOrPercentHint(path *fieldPath) string {
	key := "maxUnavailable"
	if path.kind == pathField {
		key = path.key
	}
	return fmt.Sprintf("for example %[1]s: 2, or %[1]s: \"25%%\"", key)
}

// versionField reports whether the field at path holds a version
// (kubernetesVersion, cuda, cudaCompat, gpu.driver, releaseVersion, a chart's
// version): there an unquoted number is refused even when YAML would keep its
// digits, so that 1.33 and 1.30 get the same answer.
func versionField(path string) bool {
	key := path
	if i := strings.LastIndexAny(path, ".]"); i >= 0 {
		key = path[i+1:]
	}
	key = strings.ToLower(key)
	return strings.Contains(key, "version") || strings.HasPrefix(key, "cuda") || key == "driver"
}

func isInt(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// quoteShort quotes s for a message, cut to 64 bytes so that a huge value
// is not echoed whole.
func quoteShort(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "..."
	}
	return strconv.Quote(s)
}

// yamlFields maps a struct's YAML keys to field types (fieldIndex's keys),
// cached by type like fieldIndex; the maps are shared and never written to.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := yamlFieldTypes.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	idx := fieldIndex(t)
	out := make(map[string]reflect.Type, len(idx))
	for name, i := range idx {
		out[name] = t.Field(i).Type
	}
	yamlFieldTypes.Store(t, out)
	return out
}

var yamlFieldTypes sync.Map // reflect.Type -> map[string]reflect.Type

// NearestFold is the name in names closest to name ignoring case (ties:
// the first in sort order), if it is close (at most a third of name's
// length, and at least 2, edits away); else "". It backs "did you mean"
// hints.
func NearestFold(name string, names []string) string {
	best, bestD := "", 1<<30
	for _, n := range names {
		d := levenshtein.ComputeDistance(strings.ToLower(name), strings.ToLower(n))
		if d < bestD || (d == bestD && n < best) {
			best, bestD = n, d
		}
	}
	if best != "" && bestD <= max(2, len(name)/3) {
		return best
	}
	return ""
}

// suggest returns "did you mean X?" for the known key closest to key, or a
// list of the valid keys when none is close.
func suggest(key string, fields map[string]reflect.Type) string {
	if best := NearestFold(key, slices.Sorted(maps.Keys(fields))); best != "" {
		return fmt.Sprintf("did you mean %q?", best)
	}
	keys := slices.Sorted(maps.Keys(fields))
	return "valid fields here: " + strings.Join(keys, ", ")
}
