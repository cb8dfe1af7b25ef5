package spec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// treePosition is Document.Position as it was written against
// goccy/go-yaml's tree, before the index: TestIndexAgreesWithTree holds
// the index to it.
func treePosition(root ast.Node, path string) (line, column int, ok, has bool) {
	segs, err := parsePath(path)
	if err != nil {
		return 0, 0, false, false
	}
	anchors := collectAnchors(root)
	for n := len(segs); n > 0; n-- {
		k, _ := treeLookup(root, segs[:n], anchors)
		if n == len(segs) {
			has = k != nil
		}
		if k != nil {
			if tk := firstToken(k); tk != nil && tk.Position != nil {
				return tk.Position.Line, tk.Position.Column, n == len(segs), has
			}
		}
	}
	if tk := root.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line, tk.Position.Column, false, has
	}
	return 0, 0, false, has
}

func treeLookup(n ast.Node, segs []segment, anchors map[string]ast.Node) (keyNode, valNode ast.Node) {
	cur := n
	var key ast.Node
	for _, s := range segs {
		cur = treeResolve(cur, anchors)
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
		mv := treeFindKey(cur, s.key, anchors)
		if mv == nil {
			return nil, nil
		}
		key, cur = mv.Key, mv.Value
	}
	return key, cur
}

func treeFindKey(n ast.Node, k string, anchors map[string]ast.Node) *ast.MappingValueNode {
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
			if found := treeFindKey(treeResolve(mv.Value, anchors), k, anchors); found != nil {
				return found
			}
		}
	}
	return nil
}

func treeResolve(n ast.Node, anchors map[string]ast.Node) ast.Node {
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

// treePaths are the paths written in the tree below n (aliases followed
// to a depth), each with one child that is not written.
func treePaths(n ast.Node, path string, anchors map[string]ast.Node, depth int, out *[]string) {
	if depth > 12 || len(*out) > 5000 {
		return
	}
	join := func(k string) string {
		if path == "" {
			if isPlainKey(k) {
				return k
			}
			return Key(k)
		}
		return path + Key(k)
	}
	switch v := treeResolve(n, anchors).(type) {
	case *ast.MappingNode:
		for _, mv := range v.Values {
			p := join(keyName(mv.Key))
			*out = append(*out, p)
			treePaths(mv.Value, p, anchors, depth+1, out)
		}
		*out = append(*out, join("notWritten"))
	case *ast.MappingValueNode:
		p := join(keyName(v.Key))
		*out = append(*out, p, join("notWritten"))
		treePaths(v.Value, p, anchors, depth+1, out)
	case *ast.SequenceNode:
		for i, e := range v.Values {
			p := fmt.Sprintf("%s[%d]", path, i)
			*out = append(*out, p)
			treePaths(e, p, anchors, depth+1, out)
		}
		*out = append(*out, fmt.Sprintf("%s[%d]", path, len(v.Values)))
	}
}

// TestIndexAgreesWithTree: for every path written in the corpus's
// documents (and a child of each that is not), Position and Has give what
// they gave when they walked the YAML tree.
func TestIndexAgreesWithTree(t *testing.T) {
	corpus := decodeCorpus(t)
	// merge keys, repeated anchors, aliases into lists
	for i, c := range []string{
		"spec:\n  tags: &t {a: b}\n  nodePools:\n    - &p {name: x, labels: {<<: *t, c: d}}\n    - {<<: *p, name: y}\n    - {<<: [*t, {e: f}], name: z}\n",
		"spec:\n  tags: &t {a: b}\n  region: &t x\n  clusterName: *t\n  zones: [*t, *u]\n",
		"spec:\n  nodePools: &ps\n    - name: a\n  environments:\n    dev: {nodePools: *ps}\n",
	} {
		corpus[fmt.Sprintf("index-%d", i)] = []byte(c)
	}
	checked := 0
	for name, data := range corpus {
		data = []byte(strings.TrimPrefix(string(data), "\xef\xbb\xbf"))
		f, err := parser.ParseBytes(data, 0)
		if err != nil || len(f.Docs) == 0 || f.Docs[0] == nil || f.Docs[0].Body == nil {
			continue
		}
		root := f.Docs[0].Body
		if n, ok := expandedSize(root, map[string]ast.Node{}, 0); !ok || n > 100_000 {
			continue
		}
		doc := &Document{index: buildIndex(root)}
		var paths []string
		treePaths(root, "", collectAnchors(root), 0, &paths)
		paths = append(paths, "", "nothing.here", "spec.nodePools[0].gpu.driver")
		for _, p := range paths {
			wl, wc, wok, whas := treePosition(root, p)
			l, c, ok := doc.Position(p)
			has := doc.Has(p)
			if l != wl || c != wc || ok != wok || has != whas {
				t.Errorf("%s: %s: index %d:%d ok=%v has=%v, tree %d:%d ok=%v has=%v", name, p, l, c, ok, has, wl, wc, wok, whas)
			}
			checked++
		}
	}
	if checked < 2000 {
		t.Errorf("checked %d paths only", checked)
	}
}
