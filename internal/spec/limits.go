package spec

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
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
	// MaxDocuments is the most YAML documents a spec, waivers or policy
	// file holds: one. The scan refuses the second where it starts, before
	// the library parses the rest of the file.
	MaxDocuments = 1
)

// YAMLLimits bound the shape of a YAML file that gpuctl reads: nesting
// depth, nodes (aliases counted where they expand), keys of one mapping,
// bytes of one string and, when Documents is not 0, documents (a document
// counts once it holds a node: a leading "---" or a trailing empty
// document does not).
type YAMLLimits struct {
	Depth, Nodes, Keys, StringBytes int
	// Documents is the most documents the file may hold; 0 for no limit.
	Documents int
	// Hint is the advice a refusal gives after the limit it names; "" for
	// the spec's own advice.
	Hint string
}

// SpecLimits are a cluster spec's limits on the shape of one document, for
// other YAML gpuctl reads (Documents is 0: a stream of Kubernetes objects
// holds many). A spec file is read under them and MaxDocuments.
var SpecLimits = YAMLLimits{Depth: MaxDepth, Nodes: MaxNodes, Keys: MaxKeys, StringBytes: MaxStringBytes}

// specFileLimits are a spec file's: SpecLimits and MaxDocuments.
var specFileLimits = oneDocument(SpecLimits, "")

// ListLimits are a waivers or policy file's limits: a spec file's, with
// advice for a list of waivers or a policy.
var ListLimits = oneDocument(SpecLimits, "a waivers or policy file is one short YAML document; is this the right file?")

// oneDocument is lim for a file of MaxDocuments documents, with hint.
func oneDocument(lim YAMLLimits, hint string) YAMLLimits {
	lim.Documents, lim.Hint = MaxDocuments, hint
	return lim
}

// CheckYAML holds data, a YAML stream named file (one or more documents,
// at most lim.Documents when that is not 0), to lim before a YAML library
// builds its tree: the byte scan of the limits, then, when the file uses
// aliases, their expansion (at most lim.Nodes nodes and 4*lim.Depth
// levels). A refusal is an *Error at the line and column where a limit
// trips; it quotes no content. Syntax errors are left to the library that
// parses data next.
func CheckYAML(file string, data []byte, lim YAMLLimits) error {
	aliases, err := prescanWith(file, data, lim)
	if err != nil || !aliases {
		return err
	}
	f, perr := parser.ParseBytes(data, 0)
	if perr != nil {
		return nil // the caller's parse reports it with its position
	}
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if n, ok := expandedSizeWith(d.Body, map[string]ast.Node{}, 0, lim); !ok || n > lim.Nodes {
			return errAt(file, d.Body.GetToken(), "", fmt.Sprintf("YAML aliases expand to more than %d nodes or %d levels", lim.Nodes, 4*lim.Depth), "write the values out instead of nesting anchors and aliases")
		}
	}
	return nil
}

// prescan checks data against the limits above. It reads YAML the way the
// library does in the parts that matter for the limits (block indentation,
// flow collections, quoted and block scalars, comments) and counts
// conservatively; anything it cannot make sense of it leaves to the library,
// which reports syntax errors with their position. It returns the first
// limit passed as an *Error at the line and column where it trips, and
// whether the file uses aliases.
func prescan(file string, data []byte) (aliases bool, err error) {
	return prescanWith(file, data, specFileLimits)
}

// prescanWith is prescan under lim.
func prescanWith(file string, data []byte, lim YAMLLimits) (aliases bool, err error) {
	s := &scanState{file: file, bsParent: -2, lim: lim}
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
	lim     YAMLLimits
	file    string
	lineNo  int
	nodes   int
	aliases bool
	// docs counts the documents that hold a node; inDoc: the current one
	// does.
	docs  int
	inDoc bool
	block []blockFrame
	flow  []flowFrame

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
	return s.failAt([2]int{s.lineNo, col}, msg, hint)
}

// failAt is the refusal of a limit at line at[0], column at[1] (0-based),
// with lim.Hint, when set, for the spec's hint.
func (s *scanState) failAt(at [2]int, msg, hint string) error {
	if s.lim.Hint != "" {
		hint = s.lim.Hint
	}
	return &Error{File: s.file, Line: at[0], Column: at[1] + 1, Message: msg, Hint: hint}
}

func (s *scanState) depthErr(col int) error {
	return s.fail(col, fmt.Sprintf("mappings and lists nest deeper than %d levels", s.lim.Depth),
		"a cluster spec nests about 8 levels; this file is not a spec, or was generated wrongly")
}

func (s *scanState) node(col int) error {
	if !s.inDoc {
		if err := s.document(col); err != nil {
			return err
		}
	}
	s.nodes++
	if s.nodes > s.lim.Nodes {
		return s.fail(col, fmt.Sprintf("file holds more than %d YAML nodes (keys, values, mappings and lists)", s.lim.Nodes),
			"a 10,000-pool spec has about 350,000; split the spec into several files")
	}
	return nil
}

// document counts a document at its first node, at column col.
func (s *scanState) document(col int) error {
	s.inDoc = true
	s.docs++
	if s.lim.Documents == 0 || s.docs <= s.lim.Documents {
		return nil
	}
	msg := fmt.Sprintf("file holds more than %d YAML documents", s.lim.Documents)
	if s.lim.Documents == 1 {
		msg = "file holds more than one YAML document"
	}
	return s.fail(col, msg, "put one ClusterSpec per file; use spec.environments for variants")
}

func (s *scanState) stringErr(at [2]int) error {
	return s.failAt(at, fmt.Sprintf("string longer than %d KiB", s.lim.StringBytes>>10),
		"a spec holds names, versions and short reasons; keep long text out of the spec")
}

func (s *scanState) keysErr(col int) error {
	return s.fail(col, fmt.Sprintf("mapping with more than %d keys", s.lim.Keys),
		"labels, tags and env maps hold tens of keys; this mapping is not a spec's, or was generated wrongly")
}

// line scans one line of the file (without its line break). A document
// marker at the start of a line ends any scalar open (YAML forbids one
// there).
func (s *scanState) line(line []byte) error {
	if hasPrefixWord(line, "---") || hasPrefixWord(line, "...") {
		s.quote, s.bsParent, s.flow = 0, -2, s.flow[:0]
		return s.documentMarker(line)
	}
	if s.quote != 0 {
		return s.quotedContinuation(line)
	}
	indent := leadingSpaces(line)
	if s.bsParent > -2 {
		if indent == len(line) || indent > s.bsParent {
			return s.blockScalarLine(line)
		}
		s.bsParent = -2
	}
	switch {
	case indent == len(line) || line[indent] == '#':
		return nil
	case len(s.flow) > 0:
		return s.flowScan(line, indent)
	case indent == 0 && line[0] == '%':
		return nil // a directive
	}
	return s.blockLine(line, indent)
}

// leadingSpaces is the number of spaces line starts with.
func leadingSpaces(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// quotedContinuation scans a line that continues a quoted scalar opened on
// an earlier line.
func (s *scanState) quotedContinuation(line []byte) error {
	end, err := s.quoted(line, 0, true)
	if err != nil || end < 0 {
		return err
	}
	if len(s.flow) == 0 {
		return nil // the rest of a block-context quoted line: a comment
	}
	return s.flowScan(line, end)
}

// blockScalarLine counts a line of an open block scalar (| or >) towards
// the scalar's length.
func (s *scanState) blockScalarLine(line []byte) error {
	s.bsLen += len(line) - min(len(line), s.bsParent+1) + 1
	if s.bsLen > s.lim.StringBytes {
		return s.stringErr(s.bsAt)
	}
	return nil
}

// documentMarker scans a line that starts with "---" or "...": a new
// document, whose value may follow on the same line.
func (s *scanState) documentMarker(line []byte) error {
	s.block, s.inDoc = s.block[:0], false
	p := skipSpaces(line, 3)
	if p >= len(line) || line[p] == '#' {
		return nil
	}
	return s.value(line, p)
}

// blockLine scans a line in block context from its first non-space
// character at p: list entries ("- ", "? "), then a key or a value.
func (s *scanState) blockLine(line []byte, p int) error {
	for p < len(line) {
		c := line[p]
		if (c == '-' || c == '?') && endsAt(line, p+1) {
			var err error
			if p, err = s.blockEntry(line, p); err != nil {
				return err
			}
			continue
		}
		if keyEnd, ok := blockKey(line, p); ok {
			return s.blockMappingKey(line, p, keyEnd)
		}
		return s.value(line, p)
	}
	return nil
}

// blockEntry scans the indicator of a list entry at line[p] and returns
// where the entry's content starts (len(line) when a comment follows).
func (s *scanState) blockEntry(line []byte, p int) (int, error) {
	for len(s.block) > 0 && s.top().col > p {
		s.block = s.block[:len(s.block)-1]
	}
	if len(s.block) == 0 || s.top().col != p || !s.top().seq {
		if err := s.push(blockFrame{col: p, seq: true}, p); err != nil {
			return 0, err
		}
	}
	if err := s.node(p); err != nil {
		return 0, err
	}
	p = skipSpaces(line, p+1)
	if p < len(line) && line[p] == '#' {
		return len(line), nil
	}
	return p, nil
}

// blockMappingKey scans a block mapping's key at line[p:keyEnd] (keyEnd is
// its ':') and the value that follows it on the line.
func (s *scanState) blockMappingKey(line []byte, p, keyEnd int) error {
	for len(s.block) > 0 && (s.top().col > p || (s.top().col == p && s.top().seq)) {
		s.block = s.block[:len(s.block)-1]
	}
	if err := s.countKey(p); err != nil {
		return err
	}
	if err := s.node(p); err != nil {
		return err
	}
	if keyEnd-p > s.lim.StringBytes {
		return s.stringErr([2]int{s.lineNo, p})
	}
	p = skipSpaces(line, keyEnd+1)
	if p >= len(line) || line[p] == '#' {
		return nil
	}
	return s.value(line, p)
}

// countKey counts a key at column col in the block mapping there, or opens
// the mapping.
func (s *scanState) countKey(col int) error {
	if len(s.block) == 0 || s.top().col != col {
		return s.push(blockFrame{col: col, keys: 1}, col)
	}
	s.block[len(s.block)-1].keys++
	if s.top().keys > s.lim.Keys {
		return s.keysErr(col)
	}
	return nil
}

func (s *scanState) top() blockFrame { return s.block[len(s.block)-1] }

func (s *scanState) push(f blockFrame, col int) error {
	s.block = append(s.block, f)
	if len(s.block)+len(s.flow) > s.lim.Depth {
		return s.depthErr(col)
	}
	return nil
}

// value scans a value in block context starting at line[p].
func (s *scanState) value(line []byte, p int) error {
	p = skipProperties(line, p)
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
		return s.blockScalar(p)
	case '*':
		s.aliases = true
	}
	return s.plainValue(line, p)
}

// skipProperties skips a value's tags (!) and anchors (&) from line[p].
func skipProperties(line []byte, p int) int {
	for p < len(line) && (line[p] == '!' || line[p] == '&') {
		for p < len(line) && line[p] != ' ' {
			p++
		}
		p = skipSpaces(line, p)
	}
	return p
}

// blockScalar opens a block scalar whose indicator is at column p: its
// lines are those indented past the enclosing block's column.
func (s *scanState) blockScalar(p int) error {
	s.bsParent = -1
	if len(s.block) > 0 {
		s.bsParent = s.top().col
	}
	s.bsLen, s.bsAt = 0, [2]int{s.lineNo, p}
	return s.node(p)
}

// plainValue scans a plain scalar (or an alias) in block context at
// line[p], which runs to a comment or the end of the line.
func (s *scanState) plainValue(line []byte, p int) error {
	if err := s.node(p); err != nil {
		return err
	}
	end := p
	for end < len(line) && !(line[end] == '#' && line[end-1] == ' ') {
		end++
	}
	if end-p > s.lim.StringBytes {
		return s.stringErr([2]int{s.lineNo, p})
	}
	return nil
}

// quoted scans a quoted scalar opening at line[p] (or continuing from an
// earlier line when cont) and returns the index after its closing quote, or
// -1 when it continues on the next line.
func (s *scanState) quoted(line []byte, p int, cont bool) (int, error) {
	start := p
	if !cont {
		s.quote, s.quoteLen, s.quoteAt = line[p], 0, [2]int{s.lineNo, p}
		start = p + 1
	}
	i := closingQuote(line, start, s.quote)
	if i < 0 {
		s.quoteLen += len(line) - start + 1
	} else {
		s.quoteLen += i - start
		s.quote = 0
	}
	if s.quoteLen > s.lim.StringBytes {
		return -1, s.stringErr(s.quoteAt)
	}
	if i < 0 {
		return -1, nil
	}
	return i + 1, nil
}

// closingQuote is the index of the quote q that closes a scalar whose text
// starts at line[i], or -1 when the line does not close it: \ escapes in
// double quotes, ” is a quote in single quotes.
func closingQuote(line []byte, i int, q byte) int {
	for i < len(line) {
		c := line[i]
		switch {
		case q == '"' && c == '\\':
			i += 2
		case c == q && q == '\'' && i+1 < len(line) && line[i+1] == '\'':
			i += 2
		case c == q:
			return i
		default:
			i++
		}
	}
	return -1
}

// flowScan scans flow context ([...] and {...}) from line[p].
func (s *scanState) flowScan(line []byte, p int) error {
	for p < len(line) {
		c := line[p]
		var err error
		switch {
		case isBlank(c) || c == ',':
			p++
		case isComment(line, p):
			return nil
		case isBracket(c):
			var done bool
			if done, err = s.bracket(c, p); done {
				return err
			}
			p++
		case c == '"' || c == '\'':
			p, err = s.flowQuoted(line, p)
		case flowIndicator(line, p, ':'):
			err = s.flowKey(p)
			p++
		case c == '?' && endsAt(line, p+1):
			p++
		default:
			p, err = s.flowPlain(line, p)
		}
		if err != nil || p < 0 {
			return err
		}
	}
	return nil
}

// bracket opens or closes a flow collection at column col. done reports
// that the scan of the line stops: flow context ended (the rest of the
// line is a comment, or an error the library reports), or err.
func (s *scanState) bracket(c byte, col int) (done bool, err error) {
	if c == '[' || c == '{' {
		err = s.openFlow(c == '{', col)
		return err != nil, err
	}
	return s.closeFlow(), nil
}

// openFlow opens a flow mapping or list at column col.
func (s *scanState) openFlow(mapping bool, col int) error {
	s.flow = append(s.flow, flowFrame{mapping: mapping})
	if len(s.block)+len(s.flow) > s.lim.Depth {
		return s.depthErr(col)
	}
	return s.node(col)
}

// closeFlow closes the innermost flow collection and reports whether flow
// context ended.
func (s *scanState) closeFlow() bool {
	if len(s.flow) > 0 {
		s.flow = s.flow[:len(s.flow)-1]
	}
	return len(s.flow) == 0
}

// flowQuoted scans a quoted scalar in flow context at line[p], and the ':'
// that makes it a key; it returns where scanning goes on, -1 when the
// scalar continues on the next line.
func (s *scanState) flowQuoted(line []byte, p int) (int, error) {
	if err := s.node(p); err != nil {
		return -1, err
	}
	end, err := s.quoted(line, p, false)
	if err != nil || end < 0 {
		return -1, err
	}
	if end < len(line) && line[end] == ':' {
		if err := s.flowKey(end); err != nil {
			return -1, err
		}
		end++
	}
	return end, nil
}

// flowPlain scans a plain scalar (or an alias) in flow context at line[p]
// and returns the index after it.
func (s *scanState) flowPlain(line []byte, p int) (int, error) {
	if line[p] == '*' {
		s.aliases = true
	}
	if err := s.node(p); err != nil {
		return -1, err
	}
	end := p
	for end < len(line) && !flowPlainEnd(line, end) {
		end++
	}
	if end-p > s.lim.StringBytes {
		return -1, s.stringErr([2]int{s.lineNo, p})
	}
	if end == p {
		end++ // a character the library will report
	}
	return end, nil
}

// flowPlainEnd reports whether a plain scalar in flow context ends at
// line[i]: a flow indicator, a ':' that makes it a key, or a comment.
func flowPlainEnd(line []byte, i int) bool {
	switch line[i] {
	case ',', '[', ']', '{', '}':
		return true
	case ':':
		return flowIndicator(line, i, ':')
	case '#':
		return isComment(line, i)
	}
	return false
}

func (s *scanState) flowKey(col int) error {
	if n := len(s.flow); n > 0 && s.flow[n-1].mapping {
		s.flow[n-1].keys++
		if s.flow[n-1].keys > s.lim.Keys {
			return s.keysErr(col)
		}
	}
	return nil
}

// flowIndicator reports whether line[p] is c followed by the end of the
// line or a flow break.
func flowIndicator(line []byte, p int, c byte) bool {
	return line[p] == c && (p+1 == len(line) || isFlowBreak(line[p+1]))
}

func isFlowBreak(c byte) bool {
	return isBlank(c) || c == ',' || c == ']' || c == '}'
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func isBracket(c byte) bool { return c == '[' || c == '{' || c == ']' || c == '}' }

// isComment reports whether a comment starts at line[p]: a '#' at the
// start of the line or after a blank.
func isComment(line []byte, p int) bool {
	return line[p] == '#' && (p == 0 || isBlank(line[p-1]))
}

// endsAt reports whether a token ends at line[i]: the end of the line or a
// space.
func endsAt(line []byte, i int) bool {
	return i == len(line) || line[i] == ' '
}

// blockKey reports whether line[p:] starts with a mapping key ("key:" then
// a space or the end of the line) and returns the index of its ':'.
func blockKey(line []byte, p int) (int, bool) {
	switch line[p] {
	case '[', '{', '|', '>', '!', '&', '*', '%', '@', '`', '#':
		return 0, false
	case '"', '\'':
		return quotedKey(line, p)
	}
	for i := p; i < len(line); i++ {
		switch {
		case line[i] == '#' && i > p && isBlank(line[i-1]):
			return 0, false
		case keyColon(line, i):
			return i, true
		}
	}
	return 0, false
}

// quotedKey is blockKey for a key quoted at line[p].
func quotedKey(line []byte, p int) (int, bool) {
	i := closingQuote(line, p+1, line[p])
	if i < 0 {
		return 0, false
	}
	j := skipSpaces(line, i+1)
	if j < len(line) && keyColon(line, j) {
		return j, true
	}
	return 0, false
}

// keyColon reports whether line[i] is the ':' after a block mapping key,
// followed by a blank or the end of the line.
func keyColon(line []byte, i int) bool {
	return line[i] == ':' && (i+1 == len(line) || isBlank(line[i+1]))
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
