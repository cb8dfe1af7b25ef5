package spec

import (
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// A Document keeps, instead of goccy/go-yaml's tree, what Position, Has,
// Locate and Resolve need of it: the structure of the mappings and lists
// as written, with each key's and list item's position and anchors,
// tags and aliases resolved. The tree (tokens, comments, every scalar's
// node) was most of the live heap for the rest of a command and most of
// the collector's work; the index is a small fraction of it and is built
// in one walk when the file is read.

// posNode is a written value: a mapping (entries), a list (items) or a
// scalar (neither).
type posNode struct {
	entries []posEntry
	items   []posRef
	kind    byte
}

const (
	posScalar byte = iota
	posMapping
	posList
)

// posEntry is a mapping entry: its key as the decoder reads it and where
// the key is written.
type posEntry struct {
	key string
	posRef
}

// posRef is where a key or list item is written (line 0: no position)
// and its value, resolved through anchors, tags and aliases (nil for an
// alias to no anchor).
type posRef struct {
	line, col int32
	node      *posNode
}

// posIndex is the index of one document.
type posIndex struct {
	root      *posNode
	line, col int32 // where the document body starts
}

// buildIndex indexes the document body n.
func buildIndex(n ast.Node) *posIndex {
	b := &indexBuilder{body: n}
	ix := &posIndex{root: b.node(n, 0)}
	ix.line, ix.col = tokenPos(n.GetToken())
	return ix
}

type indexBuilder struct {
	body ast.Node
	// anchors maps anchor names to their nodes, the last definition of a
	// name winning; collected at the first alias.
	anchors map[string]ast.Node
	// shared holds the nodes of anchored values, which aliases share.
	shared map[ast.Node]*posNode
}

func tokenPos(tk *token.Token) (line, col int32) {
	if tk == nil || tk.Position == nil {
		return 0, 0
	}
	return int32(tk.Position.Line), int32(tk.Position.Column)
}

// node indexes the value n; depth bounds the walk (aliases into their own
// anchor have been refused by Parse, but the index does not rely on it).
// An anchored value is indexed once, and its aliases share its node.
func (b *indexBuilder) node(n ast.Node, depth int) *posNode {
	if depth > maxExpandedDepth {
		return nil
	}
	n, anchored := b.target(n)
	if n == nil {
		return nil
	}
	p := &posNode{}
	if anchored {
		if shared, ok := b.shared[n]; ok {
			return shared
		}
		if b.shared == nil {
			b.shared = map[ast.Node]*posNode{}
		}
		b.shared[n] = p
	}
	b.fill(p, n, depth)
	return p
}

// target is the value n stands for, past anchors, tags and aliases (nil
// for an unknown alias); anchored says it is an anchored value.
func (b *indexBuilder) target(n ast.Node) (ast.Node, bool) {
	anchored := false
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n, anchored = v.Value, true
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			if b.anchors == nil {
				b.anchors = collectAnchors(b.body)
			}
			t, ok := b.anchors[v.Value.String()]
			if !ok {
				return nil, false
			}
			n, anchored = t, true
		default:
			return n, anchored
		}
	}
}

// fill indexes the entries of a mapping or the items of a list n into p.
func (b *indexBuilder) fill(p *posNode, n ast.Node, depth int) {
	switch v := n.(type) {
	case *ast.MappingNode:
		p.kind = posMapping
		p.entries = make([]posEntry, len(v.Values))
		for i, mv := range v.Values {
			p.entries[i] = b.entry(mv, depth)
		}
	case *ast.MappingValueNode:
		p.kind = posMapping
		p.entries = []posEntry{b.entry(v, depth)}
	case *ast.SequenceNode:
		p.kind = posList
		p.items = make([]posRef, len(v.Values))
		for i, e := range v.Values {
			r := &p.items[i]
			r.line, r.col = tokenPos(firstToken(e))
			r.node = b.node(e, depth+1)
		}
	}
}

func (b *indexBuilder) entry(mv *ast.MappingValueNode, depth int) posEntry {
	e := posEntry{key: keyName(mv.Key)}
	e.line, e.col = tokenPos(mv.Key.GetToken())
	e.node = b.node(mv.Value, depth+1)
	return e
}

// lookup finds the entry or item at segs, following merge keys; ok is
// false when segs is empty or names nothing written.
func (ix *posIndex) lookup(segs []segment) (ref posRef, ok bool) {
	cur := ix.root
	for _, s := range segs {
		if cur == nil {
			return posRef{}, false
		}
		if s.index >= 0 {
			if cur.kind != posList || s.index >= len(cur.items) {
				return posRef{}, false
			}
			ref = cur.items[s.index]
		} else {
			e := cur.findKey(s.key, 0)
			if e == nil {
				return posRef{}, false
			}
			ref = e.posRef
		}
		cur = ref.node
	}
	return ref, len(segs) > 0
}

// findKey is the entry of mapping n with key k: written in n itself, else
// in a mapping merged into it (<<).
func (n *posNode) findKey(k string, depth int) *posEntry {
	if n == nil || n.kind != posMapping || depth > maxExpandedDepth {
		return nil
	}
	for i := range n.entries {
		if n.entries[i].key == k {
			return &n.entries[i]
		}
	}
	for i := range n.entries {
		if n.entries[i].key == "<<" {
			if found := n.entries[i].node.findKey(k, depth+1); found != nil {
				return found
			}
		}
	}
	return nil
}

// mappingEntries are the entries of mapping n with merge keys (<<)
// expanded, in the order the decoder applies them.
func (n *posNode) mappingEntries() []posEntry {
	if n == nil || n.kind != posMapping {
		return nil
	}
	merges := false
	for i := range n.entries {
		if n.entries[i].key == "<<" {
			merges = true
			break
		}
	}
	if !merges {
		return n.entries
	}
	var out []posEntry
	for _, e := range n.entries {
		if e.key != "<<" {
			out = append(out, e)
			continue
		}
		if v := e.node; v != nil && v.kind == posList {
			for _, it := range v.items {
				out = append(out, it.node.mappingEntries()...)
			}
			continue
		}
		out = append(out, e.node.mappingEntries()...)
	}
	return out
}

func (n *posNode) isMapping() bool { return n != nil && n.kind == posMapping }

// collectAnchors maps the anchor names of the tree below n to their nodes.
func collectAnchors(n ast.Node) map[string]ast.Node {
	m := map[string]ast.Node{}
	ast.Walk(visitFunc(func(n ast.Node) {
		if a, ok := n.(*ast.AnchorNode); ok {
			m[a.Name.String()] = a.Value
		}
	}), n)
	return m
}

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

type visitFunc func(ast.Node)

func (f visitFunc) Visit(n ast.Node) ast.Visitor { f(n); return f }
