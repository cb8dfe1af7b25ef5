package spec

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
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
			seg, next, err := bracketSegment(p, i)
			if err != nil {
				return nil, err
			}
			segs = append(segs, seg)
			i = next
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

// bracketSegment reads the segment in brackets at p[i], a quoted key
// (["a.b"]) or an index ([2]), and returns the index after it.
func bracketSegment(p string, i int) (segment, int, error) {
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
			return segment{}, 0, fmt.Errorf("unterminated key in path %q", p)
		}
		k, err := strconv.Unquote(p[i+1 : j+1])
		if err != nil {
			return segment{}, 0, err
		}
		return segment{key: k, index: -1}, j + 2, nil // skip `"]`
	}
	end := strings.IndexByte(p[i:], ']')
	if end < 0 {
		return segment{}, 0, fmt.Errorf("unterminated index in path %q", p)
	}
	n, err := strconv.Atoi(p[i+1 : i+end])
	if err != nil {
		return segment{}, 0, fmt.Errorf("bad index in path %q", p)
	}
	return segment{index: n}, i + end + 1, nil
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

// Has reports whether path is written in the file (not defaulted).
func (d *Document) Has(path string) bool {
	segs, err := parsePath(path)
	if err != nil {
		return false
	}
	_, ok := d.index.lookup(segs)
	return ok
}

// Position returns the 1-based line and column of the field at path. When
// the field itself is not written in the file, it returns the position of
// the nearest written parent and ok=false.
func (d *Document) Position(path string) (line, column int, ok bool) {
	segs, err := parsePath(path)
	if err != nil {
		return 0, 0, false
	}
	for n := len(segs); n > 0; n-- {
		if ref, found := d.index.lookup(segs[:n]); found && ref.line > 0 {
			return int(ref.line), int(ref.col), n == len(segs)
		}
	}
	if d.index.line > 0 {
		return int(d.index.line), int(d.index.col), false
	}
	return 0, 0, false
}
