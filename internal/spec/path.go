package spec

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Field paths name one field of a spec the way findings report it:
// "spec.nodePools[0].gpu.driver", with map keys that are not plain
// identifiers quoted: `spec.nodePools[0].labels["nvidia.com/gpu.product"]`.

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// Key returns the path segment for a map key or field name: ".name" for plain
// identifiers, `["name"]` otherwise.
func Key(name string) string {
	if isPlainKey(name) {
		return "." + name
	}
	return "[" + strconv.Quote(name) + "]"
}

// isPlainKey is plainKey.MatchString without the regexp engine (Key is
// called for every key of a spec).
func isPlainKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// PoolPath returns the path of node pool i, "spec.nodePools[i]".
func PoolPath(i int) string { return fmt.Sprintf("spec.nodePools[%d]", i) }

type segment struct {
	key   string
	index int // -1 when key is used
}

// parsePath splits a field path into segments. It accepts the forms Key and
// PoolPath produce.
func parsePath(p string) ([]segment, error) {
	var segs []segment
	i := 0
	for i < len(p) {
		switch p[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if i+1 < len(p) && p[i+1] == '"' {
				// quoted key: find the closing quote, honouring escapes
				j := i + 2
				for j < len(p) && p[j] != '"' {
					if p[j] == '\\' {
						j++
					}
					j++
				}
				if j >= len(p) {
					return nil, fmt.Errorf("unterminated key in path %q", p)
				}
				k, err := strconv.Unquote(p[i+1 : j+1])
				if err != nil {
					return nil, err
				}
				segs = append(segs, segment{key: k, index: -1})
				i = j + 2 // skip `"]`
				continue
			}
			if end < 0 {
				return nil, fmt.Errorf("unterminated index in path %q", p)
			}
			n, err := strconv.Atoi(p[i+1 : i+end])
			if err != nil {
				return nil, fmt.Errorf("bad index in path %q", p)
			}
			segs = append(segs, segment{index: n})
			i += end + 1
		default:
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			segs = append(segs, segment{key: p[i:j], index: -1})
			i = j
		}
	}
	return segs, nil
}

func formatPath(segs []segment) string {
	var b strings.Builder
	for i, s := range segs {
		if s.index >= 0 {
			fmt.Fprintf(&b, "[%d]", s.index)
			continue
		}
		k := Key(s.key)
		if i == 0 && k[0] == '.' {
			k = k[1:]
		}
		b.WriteString(k)
	}
	return b.String()
}

// lookup finds the node at segs below n, following anchors, aliases and
// merge keys. It returns the key node for a mapping entry (so positions
// point at the field name) and the value node.
func lookup(n ast.Node, segs []segment, anchors map[string]ast.Node) (keyNode, valNode ast.Node) {
	cur := n
	var key ast.Node
	for _, s := range segs {
		cur = resolve(cur, anchors)
		if cur == nil {
			return nil, nil
		}
		if s.index >= 0 {
			seq, ok := cur.(*ast.SequenceNode)
			if !ok || s.index >= len(seq.Values) {
				return nil, nil
			}
			cur = seq.Values[s.index]
			key = cur
			continue
		}
		mv := findKey(cur, s.key, anchors)
		if mv == nil {
			return nil, nil
		}
		key, cur = mv.Key, mv.Value
	}
	return key, cur
}

func findKey(n ast.Node, k string, anchors map[string]ast.Node) *ast.MappingValueNode {
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		return nil
	}
	for _, mv := range values {
		if keyName(mv.Key) == k {
			return mv
		}
	}
	for _, mv := range values {
		if keyName(mv.Key) == "<<" {
			if found := findKey(resolve(mv.Value, anchors), k, anchors); found != nil {
				return found
			}
		}
	}
	return nil
}

func resolve(n ast.Node, anchors map[string]ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			t, ok := anchors[v.Value.String()]
			if !ok {
				return nil
			}
			n = t
		default:
			return n
		}
	}
}

// anchors maps the document's anchor names to their nodes. The walk over the
// whole tree runs once per document: Position and Has run once per finding,
// and a walk each time made validation quadratic in the spec's size.
func (d *Document) anchors() map[string]ast.Node {
	if d.anchorIndex != nil {
		return d.anchorIndex
	}
	m := map[string]ast.Node{}
	ast.Walk(visitFunc(func(n ast.Node) {
		if a, ok := n.(*ast.AnchorNode); ok {
			m[a.Name.String()] = a.Value
		}
	}), d.root)
	d.anchorIndex = m
	return m
}

type visitFunc func(ast.Node)

func (f visitFunc) Visit(n ast.Node) ast.Visitor { f(n); return f }

// firstToken is the token a position should point at: for a mapping, its
// first key rather than the ':' the parser records.
func firstToken(n ast.Node) *token.Token {
	switch v := n.(type) {
	case *ast.MappingNode:
		if len(v.Values) > 0 {
			return v.Values[0].Key.GetToken()
		}
	case *ast.MappingValueNode:
		return v.Key.GetToken()
	}
	return n.GetToken()
}

// Has reports whether path is written in the file (not defaulted).
func (d *Document) Has(path string) bool {
	segs, err := parsePath(path)
	if err != nil {
		return false
	}
	k, _ := lookup(d.root, segs, d.anchors())
	return k != nil
}

// Position returns the 1-based line and column of the field at path. When
// the field itself is not written in the file, it returns the position of
// the nearest written parent and ok=false.
func (d *Document) Position(path string) (line, column int, ok bool) {
	segs, err := parsePath(path)
	if err != nil {
		return 0, 0, false
	}
	anchors := d.anchors()
	for n := len(segs); n > 0; n-- {
		k, _ := lookup(d.root, segs[:n], anchors)
		if k != nil {
			tk := firstToken(k)
			if tk != nil && tk.Position != nil {
				return tk.Position.Line, tk.Position.Column, n == len(segs)
			}
		}
	}
	if tk := d.root.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line, tk.Position.Column, false
	}
	return 0, 0, false
}
