package hclgen

import (
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// The generated files are written as text in the layout hclwrite.Format
// (`terraform fmt`) gives them, not through hclwrite's AST: building that
// AST, a pointer per token, and formatting it again was most of generating
// 1,000 pools. A body records its attributes, blocks, comments and blank
// lines in order (generation fills a block after later siblings were
// added); render writes them out with hclwrite's rules: two spaces of indent
// per block, the "=" of consecutive one-line attributes aligned one column
// after the longest name (a blank line, comment, block or multi-line value
// ends the run), values as hclwrite.TokensForValue writes cty values.
// Strings are escaped by hclwrite's rules (quoteString). TestWriteIsFormatted
// holds every generated file to hclwrite.Format of itself and to hclsyntax.

// body is the body of a file or block under construction. A discard body
// (Check) records nothing and renders no value: Check asks only whether
// the files can be built, and no error depends on what a body holds.
type body struct {
	items   []item
	discard bool
}

// discardBlock is the block a discard body appends: it is shared, since it
// holds nothing.
var discardBlock = &block{body: body{discard: true}}

type itemKind uint8

const (
	itemAttr itemKind = iota
	itemBlock
	itemNewline
	itemComment
)

type item struct {
	kind  itemKind
	name  string // attribute name, block header (type and quoted labels) or comment text
	val   raw    // attribute value
	block *block
}

// block is a nested block; Body is what it holds.
type block struct{ body body }

// Body returns the body of b.
func (b *block) Body() *body { return &b.body }

// raw is an expression as text in its formatted layout. A multi-line one
// has its inner lines indented relative to its first line; render indents
// them to where the attribute is.
type raw struct {
	text  string
	multi bool
}

func single(s string) raw { return raw{text: s} }

// AppendNewBlock appends a block `typ "label"... { }` and returns it.
func (b *body) AppendNewBlock(typ string, labels []string) *block {
	if b.discard {
		return discardBlock
	}
	header := typ
	for _, l := range labels {
		header += " " + quoteString(l)
	}
	nb := &block{}
	b.items = append(b.items, item{kind: itemBlock, name: header, block: nb})
	return nb
}

// AppendNewline appends a blank line.
func (b *body) AppendNewline() {
	if !b.discard {
		b.items = append(b.items, item{kind: itemNewline})
	}
}

// SetAttributeValue appends the attribute name = v. (Generation sets each
// attribute of a body once; nothing replaces an attribute.)
func (b *body) SetAttributeValue(name string, v cty.Value) {
	if !b.discard {
		b.SetAttributeRaw(name, valueRaw(v))
	}
}

// SetAttributeString appends name = "s".
func (b *body) SetAttributeString(name, s string) {
	if !b.discard {
		b.SetAttributeRaw(name, single(quoteString(s)))
	}
}

// SetAttributeRaw appends the attribute name = r.
func (b *body) SetAttributeRaw(name string, r raw) {
	if !b.discard {
		b.items = append(b.items, item{kind: itemAttr, name: name, val: r})
	}
}

// SetAttributeTraversal appends name = <reference>.
func (b *body) SetAttributeTraversal(name string, t hcl.Traversal) {
	if !b.discard {
		b.SetAttributeRaw(name, single(traversalText(t)))
	}
}

// empty reports whether b holds nothing.
func (b *body) empty() bool { return len(b.items) == 0 }

// removeLast removes the last item of b.
func (b *body) removeLast() {
	if !b.discard {
		b.items = b.items[:len(b.items)-1]
	}
}

// render appends b, indented by indent spaces, to out.
func (b *body) render(out []byte, indent int) []byte {
	for i := 0; i < len(b.items); {
		it := &b.items[i]
		switch {
		case it.kind == itemAttr && !it.val.multi:
			// A run of one-line attributes, "=" aligned.
			j, width := i, 0
			for ; j < len(b.items) && b.items[j].kind == itemAttr && !b.items[j].val.multi; j++ {
				width = max(width, textColumns(b.items[j].name))
			}
			for _, a := range b.items[i:j] {
				out = appendSpaces(out, indent)
				out = append(out, a.name...)
				out = appendSpaces(out, width-textColumns(a.name)+1)
				out = append(out, "= "...)
				out = append(out, a.val.text...)
				out = append(out, '\n')
			}
			i = j
			continue
		case it.kind == itemAttr:
			out = appendSpaces(out, indent)
			out = append(out, it.name...)
			out = append(out, " = "...)
			out = appendIndented(out, it.val.text, indent)
			out = append(out, '\n')
		case it.kind == itemBlock:
			out = appendSpaces(out, indent)
			out = append(out, it.name...)
			out = append(out, " {\n"...)
			out = it.block.body.render(out, indent+2)
			out = appendSpaces(out, indent)
			out = append(out, "}\n"...)
		case it.kind == itemNewline:
			out = append(out, '\n')
		case it.kind == itemComment:
			out = appendSpaces(out, indent)
			out = append(out, "# "...)
			out = append(out, it.name...)
			out = append(out, '\n')
		}
		i++
	}
	return out
}

func appendSpaces(out []byte, n int) []byte {
	for ; n > 0; n-- {
		out = append(out, ' ')
	}
	return out
}

// appendIndented appends text with indent spaces after each newline.
func appendIndented(out []byte, text string, indent int) []byte {
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			return append(out, text...)
		}
		out = append(out, text[:i+1]...)
		out = appendSpaces(out, indent)
		text = text[i+1:]
	}
}

// textColumns is the column count hclwrite gives a name or map key: its
// bytes where it is printable ASCII, else its grapheme clusters (a quoted
// key as its quotes and its literal, as hclwrite counts token by token).
func textColumns(s string) int {
	if ascii([]byte(s)) {
		return len(s)
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return 2 + columns(hclwrite.Tokens{{Type: hclsyntax.TokenQuotedLit, Bytes: []byte(s[1 : len(s)-1])}})
	}
	return columns(hclwrite.Tokens{{Type: hclsyntax.TokenIdent, Bytes: []byte(s)}})
}

// quoteString returns s as a quoted HCL string, as hclwrite.TokensForValue
// writes cty.StringVal(s): NFC-normalised (as cty does), with quotes,
// backslashes, newlines, tabs and carriage returns escaped, "${" and "%{"
// doubled and unprintable runes as \u or \U escapes.
func quoteString(s string) string {
	if plainString(s) {
		return `"` + s + `"`
	}
	if !utf8.ValidString(s) || !isASCII(s) {
		s = cty.StringVal(s).AsString()
	}
	buf := make([]byte, 0, len(s)+8)
	buf = append(buf, '"')
	for i, r := range s {
		buf = appendEscaped(buf, r, i+1 < len(s) && s[i+1] == '{')
	}
	buf = append(buf, '"')
	return string(buf)
}

// plainString reports whether s is printable ASCII that needs no escape:
// no quote, backslash, "${" or "%{".
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || ((c == '$' || c == '%') && i+1 < len(s) && s[i+1] == '{') {
			return false
		}
	}
	return true
}

// stringEscapes are the runes a quoted HCL string writes as a backslash
// escape.
var stringEscapes = map[rune]byte{'\n': 'n', '\r': 'r', '\t': 't', '"': '"', '\\': '\\'}

// appendEscaped appends rune r of a quoted string to buf; beforeBrace is
// whether a '{' follows it (a "$" or "%" there is doubled).
func appendEscaped(buf []byte, r rune, beforeBrace bool) []byte {
	if e, ok := stringEscapes[r]; ok {
		return append(buf, '\\', e)
	}
	switch {
	case r == '$' || r == '%':
		buf = append(buf, byte(r))
		if beforeBrace {
			buf = append(buf, byte(r))
		}
		return buf
	case unicode.IsPrint(r):
		return utf8.AppendRune(buf, r)
	case r < 65536:
		return appendHex(append(buf, '\\', 'u'), r, 12)
	}
	return appendHex(append(buf, '\\', 'U'), r, 28)
}

// appendHex appends r in lower-case hex digits, from bit top down.
func appendHex(buf []byte, r rune, top int) []byte {
	const hex = "0123456789abcdef"
	for shift := top; shift >= 0; shift -= 4 {
		buf = append(buf, hex[(r>>shift)&0xf])
	}
	return buf
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// traversalText writes a reference such as var.x or var.n[0].network.
func traversalText(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteByte('.')
			b.WriteString(s.Name)
		case hcl.TraverseIndex:
			b.WriteByte('[')
			b.WriteString(valueRaw(s.Key).text)
			b.WriteByte(']')
		default:
			panic("hclgen: unsupported traversal step")
		}
	}
	return b.String()
}

// valueRaw is v as hclwrite.TokensForValue writes it, formatted: null,
// bools, numbers, strings and lists of those on one line; maps and objects
// one "key = value" per line, keys sorted, "=" aligned. Anything else (a
// list of maps) is formatted by formatBytes.
func valueRaw(v cty.Value) raw {
	t := v.Type()
	switch {
	case v.IsNull():
		return single("null")
	case t == cty.Bool:
		return single(strconv.FormatBool(v.True()))
	case t == cty.Number:
		return single(numberText(v.AsBigFloat()))
	case t == cty.String:
		return single(quoteString(v.AsString()))
	case t.IsListType() || t.IsSetType() || t.IsTupleType():
		return listRaw(v)
	case t.IsMapType() || t.IsObjectType():
		return objectRaw(v)
	}
	return formatted(hclwrite.TokensForValue(v))
}

// numberText is a number as cty writes it: an integer without a point,
// else its shortest decimal.
func numberText(bf *big.Float) string {
	if n, acc := bf.Int64(); acc == big.Exact {
		return strconv.FormatInt(n, 10)
	}
	return bf.Text('f', -1)
}

// listRaw is a list, set or tuple on one line, or formatted where an
// element spans lines.
func listRaw(v cty.Value) raw {
	var b strings.Builder
	b.WriteByte('[')
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, e := it.Element()
		r := valueRaw(e)
		if r.multi {
			return formatted(hclwrite.TokensForValue(v))
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.text)
	}
	b.WriteByte(']')
	return single(b.String())
}

// objectRaw is a map or object, one entry a line (mapRaw), or formatted
// where a value spans lines.
func objectRaw(v cty.Value) raw {
	if v.LengthInt() == 0 {
		return single("{}")
	}
	var keys, vals []string
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		r := valueRaw(e)
		if r.multi {
			return formatted(hclwrite.TokensForValue(v))
		}
		keys = append(keys, keyText(k.AsString()))
		vals = append(vals, r.text)
	}
	return mapRaw(keys, vals)
}

// keyText is a map key as hclwrite writes it: an identifier bare, anything
// else quoted.
func keyText(k string) string {
	if validIdentifier(k) {
		return k
	}
	return quoteString(k)
}

// validIdentifier is hclsyntax.ValidIdentifier, which lexes its argument,
// answered without the lexer for ASCII: a letter or "_", then letters,
// digits, "_" and "-" (TestValidIdentifier compares the two).
func validIdentifier(s string) bool {
	if !isASCII(s) {
		return hclsyntax.ValidIdentifier(s)
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// mapRaw is `{ key = value ... }` over one-line values, one entry per line,
// "=" aligned.
func mapRaw(keys, vals []string) raw {
	width, size := 0, 4
	for i, k := range keys {
		width = max(width, textColumns(k))
		size += len(k) + len(vals[i]) + 8
	}
	buf := make([]byte, 0, size+len(keys)*width)
	buf = append(buf, "{\n"...)
	for i, k := range keys {
		buf = append(buf, "  "...)
		buf = append(buf, k...)
		buf = appendSpaces(buf, width-textColumns(k)+1)
		buf = append(buf, "= "...)
		buf = append(buf, vals[i]...)
		buf = append(buf, '\n')
	}
	buf = append(buf, '}')
	return raw{text: string(buf), multi: true}
}

// formatted formats an expression's tokens as the value of an attribute
// with formatBytes and returns it as raw (inner lines relative to the
// first).
func formatted(toks hclwrite.Tokens) raw {
	line := append(hclwrite.Tokens{
		{Type: hclsyntax.TokenIdent, Bytes: []byte("x")},
		{Type: hclsyntax.TokenEqual, Bytes: []byte{'='}},
	}, toks...)
	line = append(line, &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte{'\n'}})
	out := string(formatBytes(line))
	out = strings.TrimSuffix(strings.TrimPrefix(out, "x = "), "\n")
	return raw{text: out, multi: strings.Contains(out, "\n")}
}
