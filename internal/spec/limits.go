package spec

import (
	"fmt"
)

// Limits on the shape of a spec file, checked by a scan of the bytes before
// the YAML library builds its tree: the library's time and memory grow
// faster than the file with deep nesting, huge mappings and long strings, so
// a limit checked on the finished tree comes too late. Real specs stay far
// below each limit (a spec nests about 8 levels; a 10,000-pool spec has
// about 350,000 nodes).
const (
	// MaxDepth is the deepest nesting of mappings and lists.
	MaxDepth = 64
	// MaxNodes is the most YAML nodes (keys, values, mappings and lists)
	// a file may hold, aliases counted where they expand.
	MaxNodes = 500_000
	// MaxKeys is the most keys one mapping may hold (labels, tags, env,
	// environments).
	MaxKeys = 1_000
	// MaxStringBytes is the longest string (key or value) in bytes.
	MaxStringBytes = 16 << 10
)

// prescan checks data against the limits above. It reads YAML the way the
// library does in the parts that matter for the limits (block indentation,
// flow collections, quoted and block scalars, comments) and counts
// conservatively; anything it cannot make sense of it leaves to the library,
// which reports syntax errors with their position. It returns the first
// limit passed as an *Error at the line and column where it trips, and
// whether the file uses aliases.
func prescan(file string, data []byte) (aliases bool, err error) {
	s := &scanState{file: file, bsParent: -2}
	for len(data) > 0 {
		var line []byte
		if i := indexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		s.lineNo++
		if err := s.line(line); err != nil {
			return s.aliases, err
		}
	}
	return s.aliases, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

type blockFrame struct {
	col  int
	seq  bool
	keys int
}

type flowFrame struct {
	mapping bool
	keys    int
}

type scanState struct {
	file    string
	lineNo  int
	nodes   int
	aliases bool
	block   []blockFrame
	flow    []flowFrame

	// a quoted scalar open across lines: its quote and length so far
	quote    byte
	quoteLen int
	quoteAt  [2]int
	// a block scalar (| or >): the column its lines must be indented past
	// (-2 when none), its length so far
	bsParent int
	bsLen    int
	bsAt     [2]int
}

func (s *scanState) fail(col int, msg, hint string) error {
	return &Error{File: s.file, Line: s.lineNo, Column: col + 1, Message: msg, Hint: hint}
}

func (s *scanState) failAt(at [2]int, msg, hint string) error {
	return &Error{File: s.file, Line: at[0], Column: at[1] + 1, Message: msg, Hint: hint}
}

func (s *scanState) depthErr(col int) error {
	return s.fail(col, fmt.Sprintf("mappings and lists nest deeper than %d levels", MaxDepth),
		"a cluster spec nests about 8 levels; this file is not a spec, or was generated wrongly")
}

func (s *scanState) node(col int) error {
	s.nodes++
	if s.nodes > MaxNodes {
		return s.fail(col, fmt.Sprintf("file holds more than %d YAML nodes (keys, values, mappings and lists)", MaxNodes),
			"a 10,000-pool spec has about 350,000; split the spec into several files")
	}
	return nil
}

func (s *scanState) stringErr(at [2]int) error {
	return s.failAt(at, fmt.Sprintf("string longer than %d KiB", MaxStringBytes>>10),
		"a spec holds names, versions and short reasons; keep long text out of the spec")
}

func (s *scanState) keysErr(col int) error {
	return s.fail(col, fmt.Sprintf("mapping with more than %d keys", MaxKeys),
		"labels, tags and env maps hold tens of keys; this mapping is not a spec's, or was generated wrongly")
}

func (s *scanState) line(line []byte) error {
	p := 0
	if s.quote != 0 {
		end, err := s.quoted(line, 0, true)
		if err != nil || end < 0 {
			return err
		}
		p = end
		if len(s.flow) == 0 {
			return nil // the rest of a block-context quoted line: a comment
		}
		return s.flowScan(line, p)
	}
	indent := 0
	for indent < len(line) && line[indent] == ' ' {
		indent++
	}
	if s.bsParent > -2 {
		if indent == len(line) || indent > s.bsParent {
			s.bsLen += len(line) - min(len(line), s.bsParent+1) + 1
			if s.bsLen > MaxStringBytes {
				return s.stringErr(s.bsAt)
			}
			return nil
		}
		s.bsParent = -2
	}
	if indent == len(line) || line[indent] == '#' {
		return nil
	}
	if len(s.flow) > 0 {
		return s.flowScan(line, indent)
	}
	if indent == 0 && (hasPrefixWord(line, "---") || hasPrefixWord(line, "...")) {
		s.block = s.block[:0]
		p = skipSpaces(line, 3)
		if p >= len(line) || line[p] == '#' {
			return nil
		}
		return s.value(line, p)
	}
	if indent == 0 && line[0] == '%' {
		return nil // a directive
	}
	p = indent
	for p < len(line) {
		c := line[p]
		if (c == '-' || c == '?') && (p+1 == len(line) || line[p+1] == ' ') {
			for len(s.block) > 0 && s.top().col > p {
				s.block = s.block[:len(s.block)-1]
			}
			if len(s.block) == 0 || s.top().col != p || !s.top().seq {
				if err := s.push(blockFrame{col: p, seq: true}, p); err != nil {
					return err
				}
			}
			if err := s.node(p); err != nil {
				return err
			}
			p = skipSpaces(line, p+1)
			if p < len(line) && line[p] == '#' {
				return nil
			}
			continue
		}
		if keyEnd, ok := blockKey(line, p); ok {
			for len(s.block) > 0 && (s.top().col > p || (s.top().col == p && s.top().seq)) {
				s.block = s.block[:len(s.block)-1]
			}
			if len(s.block) > 0 && s.top().col == p {
				s.block[len(s.block)-1].keys++
				if s.top().keys > MaxKeys {
					return s.keysErr(p)
				}
			} else if err := s.push(blockFrame{col: p, keys: 1}, p); err != nil {
				return err
			}
			if err := s.node(p); err != nil {
				return err
			}
			if keyEnd-p > MaxStringBytes {
				return s.stringErr([2]int{s.lineNo, p})
			}
			p = skipSpaces(line, keyEnd+1)
			if p >= len(line) || line[p] == '#' {
				return nil
			}
			return s.value(line, p)
		}
		return s.value(line, p)
	}
	return nil
}

func (s *scanState) top() blockFrame { return s.block[len(s.block)-1] }

func (s *scanState) push(f blockFrame, col int) error {
	s.block = append(s.block, f)
	if len(s.block)+len(s.flow) > MaxDepth {
		return s.depthErr(col)
	}
	return nil
}

// value scans a value in block context starting at line[p].
func (s *scanState) value(line []byte, p int) error {
	for p < len(line) && (line[p] == '!' || line[p] == '&') {
		for p < len(line) && line[p] != ' ' {
			p++
		}
		p = skipSpaces(line, p)
	}
	if p >= len(line) || line[p] == '#' {
		return nil
	}
	switch line[p] {
	case '[', '{':
		return s.flowScan(line, p)
	case '"', '\'':
		if err := s.node(p); err != nil {
			return err
		}
		_, err := s.quoted(line, p, false)
		return err
	case '|', '>':
		s.bsParent = -1
		if len(s.block) > 0 {
			s.bsParent = s.top().col
		}
		s.bsLen, s.bsAt = 0, [2]int{s.lineNo, p}
		return s.node(p)
	case '*':
		s.aliases = true
	}
	if err := s.node(p); err != nil {
		return err
	}
	end := p
	for end < len(line) && !(line[end] == '#' && line[end-1] == ' ') {
		end++
	}
	if end-p > MaxStringBytes {
		return s.stringErr([2]int{s.lineNo, p})
	}
	return nil
}

// quoted scans a quoted scalar opening at line[p] (or continuing from an
// earlier line when cont) and returns the index after its closing quote, or
// -1 when it continues on the next line.
func (s *scanState) quoted(line []byte, p int, cont bool) (int, error) {
	i := p
	if !cont {
		s.quote, s.quoteLen, s.quoteAt = line[p], 0, [2]int{s.lineNo, p}
		i = p + 1
	}
	q := s.quote
	start := i
	for i < len(line) {
		c := line[i]
		if q == '"' && c == '\\' {
			i += 2
			continue
		}
		if c == q {
			if q == '\'' && i+1 < len(line) && line[i+1] == '\'' {
				i += 2
				continue
			}
			s.quoteLen += i - start
			s.quote = 0
			if s.quoteLen > MaxStringBytes {
				return -1, s.stringErr(s.quoteAt)
			}
			return i + 1, nil
		}
		i++
	}
	s.quoteLen += len(line) - start + 1
	if s.quoteLen > MaxStringBytes {
		return -1, s.stringErr(s.quoteAt)
	}
	return -1, nil
}

// flowScan scans flow context ([...] and {...}) from line[p].
func (s *scanState) flowScan(line []byte, p int) error {
	for p < len(line) {
		c := line[p]
		switch {
		case c == ' ' || c == '\t' || c == ',':
			p++
		case c == '#' && (p == 0 || line[p-1] == ' ' || line[p-1] == '\t'):
			return nil
		case c == '[' || c == '{':
			s.flow = append(s.flow, flowFrame{mapping: c == '{'})
			if len(s.block)+len(s.flow) > MaxDepth {
				return s.depthErr(p)
			}
			if err := s.node(p); err != nil {
				return err
			}
			p++
		case c == ']' || c == '}':
			if len(s.flow) > 0 {
				s.flow = s.flow[:len(s.flow)-1]
			}
			p++
			if len(s.flow) == 0 {
				return nil // the rest of the line is a comment, or an error the library reports
			}
		case c == '"' || c == '\'':
			if err := s.node(p); err != nil {
				return err
			}
			end, err := s.quoted(line, p, false)
			if err != nil || end < 0 {
				return err
			}
			p = end
			if p < len(line) && line[p] == ':' {
				if err := s.flowKey(p); err != nil {
					return err
				}
				p++
			}
		case c == ':' && (p+1 == len(line) || isFlowBreak(line[p+1])):
			if err := s.flowKey(p); err != nil {
				return err
			}
			p++
		case c == '?' && (p+1 == len(line) || line[p+1] == ' '):
			p++
		default:
			if c == '*' {
				s.aliases = true
			}
			if err := s.node(p); err != nil {
				return err
			}
			start := p
			for p < len(line) {
				c := line[p]
				if c == ',' || c == '[' || c == ']' || c == '{' || c == '}' ||
					(c == ':' && (p+1 == len(line) || isFlowBreak(line[p+1]))) ||
					(c == '#' && (line[p-1] == ' ' || line[p-1] == '\t')) {
					break
				}
				p++
			}
			if p-start > MaxStringBytes {
				return s.stringErr([2]int{s.lineNo, start})
			}
			if p == start {
				p++ // a character the library will report
			}
		}
	}
	return nil
}

func (s *scanState) flowKey(col int) error {
	if n := len(s.flow); n > 0 && s.flow[n-1].mapping {
		s.flow[n-1].keys++
		if s.flow[n-1].keys > MaxKeys {
			return s.keysErr(col)
		}
	}
	return nil
}

func isFlowBreak(c byte) bool {
	return c == ' ' || c == '\t' || c == ',' || c == ']' || c == '}'
}

// blockKey reports whether line[p:] starts with a mapping key ("key:" then
// a space or the end of the line) and returns the index of its ':'.
func blockKey(line []byte, p int) (int, bool) {
	switch line[p] {
	case '[', '{', '|', '>', '!', '&', '*', '%', '@', '`', '#':
		return 0, false
	case '"', '\'':
		q := line[p]
		i := p + 1
		for i < len(line) {
			if q == '"' && line[i] == '\\' {
				i += 2
				continue
			}
			if line[i] == q {
				if q == '\'' && i+1 < len(line) && line[i+1] == '\'' {
					i += 2
					continue
				}
				break
			}
			i++
		}
		j := skipSpaces(line, i+1)
		if j < len(line) && line[j] == ':' && (j+1 == len(line) || line[j+1] == ' ' || line[j+1] == '\t') {
			return j, true
		}
		return 0, false
	}
	for i := p; i < len(line); i++ {
		switch {
		case line[i] == '#' && i > p && (line[i-1] == ' ' || line[i-1] == '\t'):
			return 0, false
		case line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t'):
			return i, true
		}
	}
	return 0, false
}

func skipSpaces(line []byte, p int) int {
	for p < len(line) && (line[p] == ' ' || line[p] == '\t') {
		p++
	}
	return p
}

func hasPrefixWord(line []byte, w string) bool {
	if len(line) < len(w) || string(line[:len(w)]) != w {
		return false
	}
	return len(line) == len(w) || line[len(w)] == ' ' || line[len(w)] == '\t'
}
