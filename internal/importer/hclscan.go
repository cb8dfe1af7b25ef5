package importer

import (
	"bytes"
	"strconv"

	"github.com/gpuctl/gpuctl/internal/hclshape"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// HCL's parser and evaluator recurse once per level of nesting, so a file
// of 200 KB of parentheses, a long run of unary operators or 100,000
// nested blocks would run the Go stack out before any check on the tree
// could run. scanNesting reads the file's tokens (hclsyntax's lexer, which
// does not recurse) and refuses one that nests deeper than MaxNesting
// before it is parsed.

// The syntax a scan reads: a configuration file, an expression, a template.
const (
	scanConfig = iota
	scanExpression
	scanTemplate
)

// chainTokens are the tokens that make the tree one level deeper without
// a bracket: operators (a+b+c nests left to right), unary operators, the
// conditional and for expressions' parts, and an index or attribute after
// an expression.
var chainTokens = map[hclsyntax.TokenType]bool{
	hclsyntax.TokenStar: true, hclsyntax.TokenSlash: true, hclsyntax.TokenPlus: true, hclsyntax.TokenMinus: true,
	hclsyntax.TokenPercent: true, hclsyntax.TokenEqualOp: true, hclsyntax.TokenNotEqual: true,
	hclsyntax.TokenLessThan: true, hclsyntax.TokenLessThanEq: true, hclsyntax.TokenGreaterThan: true,
	hclsyntax.TokenGreaterThanEq: true, hclsyntax.TokenAnd: true, hclsyntax.TokenOr: true, hclsyntax.TokenBang: true,
	hclsyntax.TokenQuestion: true, hclsyntax.TokenColon: true, hclsyntax.TokenFatArrow: true,
	hclsyntax.TokenEllipsis: true,
}

// opening and closing tokens, by what they open.
var (
	openTokens = map[hclsyntax.TokenType]bool{
		hclsyntax.TokenOBrace: true, hclsyntax.TokenOBrack: true, hclsyntax.TokenOParen: true,
		hclsyntax.TokenOQuote: true, hclsyntax.TokenOHeredoc: true,
		hclsyntax.TokenTemplateInterp: true, hclsyntax.TokenTemplateControl: true,
	}
	closeTokens = map[hclsyntax.TokenType]bool{
		hclsyntax.TokenCBrace: true, hclsyntax.TokenCBrack: true, hclsyntax.TokenCParen: true,
		hclsyntax.TokenCQuote: true, hclsyntax.TokenCHeredoc: true, hclsyntax.TokenTemplateSeqEnd: true,
	}
)

// nestFrame is one open bracket: the depth below it and the operators
// chained at its level since the last separator.
type nestFrame struct {
	base, chain int
	// resetOnNewline: a newline ends an item here (a block body, an
	// object, the top level); inside ( and [ it does not.
	resetOnNewline bool
}

// nestScan is the state of one scan.
type nestScan struct {
	frames []nestFrame
	// directives is the depth of open %{if} and %{for} directives.
	directives int
	// afterControl: the token before was %{, so an if/for/end keyword
	// follows.
	afterControl bool
}

// deepBrackets is the offset in src where brackets outside quoted strings
// and comments first nest deeper than limit, -1 when they do not: a scan
// of the bytes before the lexer, whose tokens for a file of 100,000
// nested blocks cost 200 MB. It overcounts only brackets that a heredoc
// holds unbalanced; the limit is 4 times MaxNesting, which the exact
// token scan that follows holds.
func deepBrackets(src []byte, limit int) int {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '"':
			i = stringEnd(src, i+1)
		case c == '#' || c == '/' && i+1 < len(src) && src[i+1] == '/':
			i = lineEnd(src, i)
		case c == '{' || c == '[' || c == '(':
			if depth++; depth > limit {
				return i
			}
		case c == '}' || c == ']' || c == ')':
			depth = max(depth-1, 0)
		}
	}
	return -1
}

// lineEnd is the offset of the line break at or after src[i] (len(src)
// when none).
func lineEnd(src []byte, i int) int {
	for i < len(src) && src[i] != '\n' {
		i++
	}
	return i
}

// stringEnd is the offset of the quote that closes a string whose text
// starts at src[i] (backslash escapes), or of the line's end.
func stringEnd(src []byte, i int) int {
	for ; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '"', '\n':
			return i
		}
	}
	return i
}

// scanNesting refuses src (named file, starting at start) when its
// tokens would take the command past MaxTokens (spent into b), or when it
// nests deeper than MaxNesting; the error is at the byte or token where it
// does. Syntax errors are left to the parser.
func scanNesting(b *budget, src []byte, file string, start hcl.Pos, mode int) error {
	if err := b.addTokens(src, file, start); err != nil {
		return err
	}
	if mode != scanTemplate {
		if i := deepBrackets(src, 4*MaxNesting); i >= 0 {
			return &posError{rng: rangeAt(src, i, file, start), err: capErr("expressions or blocks nested deeper than %d levels (MaxNesting)", MaxNesting)}
		}
	}
	var toks hclsyntax.Tokens
	switch mode {
	case scanExpression:
		toks, _ = hclsyntax.LexExpression(src, file, start)
	case scanTemplate:
		toks, _ = hclsyntax.LexTemplate(src, file, start)
	default:
		toks, _ = hclsyntax.LexConfig(src, file, start)
	}
	s := &nestScan{frames: []nestFrame{{resetOnNewline: true}}}
	for _, t := range toks {
		if t.Type == hclsyntax.TokenNumberLit && !plainNumber(t.Bytes) {
			return &posError{rng: t.Range, err: capErr("a number of more than %d digits or an exponent past %d (MaxNumberDigits)", MaxNumberDigits, MaxNumberDigits)}
		}
		if d := s.step(t); d > MaxNesting {
			return &posError{rng: t.Range, err: capErr("expressions or blocks nested deeper than %d levels (MaxNesting)", MaxNesting)}
		}
	}
	return nil
}

// MaxNumberDigits bounds a number literal: its digits, and the decimal
// exponent it writes (1e400). Turning a number of a million digits into a
// string (a label, a map key) takes seconds and grows with the square of
// its length; no configuration writes one (float64 ends near 1e308).
const MaxNumberDigits = 400

// plainNumber reports whether a number literal has at most MaxNumberDigits
// digits and an exponent of at most that.
func plainNumber(lit []byte) bool {
	if len(lit) <= 20 && !bytes.ContainsAny(lit, "eE") {
		return true
	}
	mant, exp, hasExp := bytes.Cut(bytes.ToLower(lit), []byte("e"))
	if len(mant) > MaxNumberDigits+1 {
		return false
	}
	if !hasExp {
		return true
	}
	exp = bytes.TrimLeft(exp, "+-")
	n, err := strconv.Atoi(string(exp))
	return err == nil && len(exp) <= 6 && n <= MaxNumberDigits
}

// step reads one token and returns the depth it reaches.
func (s *nestScan) step(t hclsyntax.Token) int {
	top := &s.frames[len(s.frames)-1]
	if s.afterControl && t.Type == hclsyntax.TokenIdent {
		s.directive(string(t.Bytes))
	}
	s.afterControl = t.Type == hclsyntax.TokenTemplateControl
	switch {
	case openTokens[t.Type]:
		if t.Type == hclsyntax.TokenOBrack || t.Type == hclsyntax.TokenOParen {
			// an index or call after an expression nests in its level too
			top.chain++
		}
		base := top.base + top.chain + 1
		s.frames = append(s.frames, nestFrame{base: base, resetOnNewline: t.Type == hclsyntax.TokenOBrace})
		return base + s.directives
	case closeTokens[t.Type]:
		if len(s.frames) > 1 {
			s.frames = s.frames[:len(s.frames)-1]
		}
	case t.Type == hclsyntax.TokenComma, t.Type == hclsyntax.TokenNewline && top.resetOnNewline:
		top.chain = 0
	case chainTokens[t.Type]:
		top.chain++
	}
	top = &s.frames[len(s.frames)-1]
	return top.base + top.chain + s.directives
}

// directive counts the template directives that open and close a level.
func (s *nestScan) directive(kw string) {
	switch kw {
	case "if", "for":
		s.directives++
	case "endif", "endfor":
		if s.directives > 0 {
			s.directives--
		}
	}
}

// scanJSONNesting refuses JSON (jsondecode's argument, a .tfvars.json
// file) that nests arrays and objects deeper than MaxValueDepth or holds
// more than MaxValueNodes values, by a scan of its bytes before it is
// decoded.
func scanJSONNesting(src []byte, what string) error {
	depth, nodes, inString, escaped := 0, 0, false, false
	for _, c := range src {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			if depth++; depth > MaxValueDepth {
				return capErr("%s: JSON nested deeper than %d levels (MaxValueDepth)", what, MaxValueDepth)
			}
		case c == ']' || c == '}':
			depth--
		case c == ',':
			if nodes++; nodes > MaxValueNodes {
				return capErr("%s: JSON of more than %d values (MaxValueNodes)", what, MaxValueNodes)
			}
		}
	}
	return nil
}

// addTokens spends the estimated tokens of src (named file, from start):
// one per punctuation byte and one per start of a word, which is at least
// what HCL's lexer makes of it. Errors: the command's tokens pass
// MaxTokens, at the line and column where they do.
func (b *budget) addTokens(src []byte, file string, start hcl.Pos) error {
	if b.fatal != nil {
		return b.fatal
	}
	n, at := hclshape.Tokens(src, MaxTokens-b.tokens)
	b.tokens += n
	if at >= 0 {
		return b.failAt(rangeAt(src, at, file, start), capErr("more than %d tokens in the files read (MaxTokens)", MaxTokens))
	}
	return nil
}

// rangeAt is the position of byte i of src (named file, from start).
func rangeAt(src []byte, i int, file string, start hcl.Pos) hcl.Range {
	line, col := start.Line, start.Column
	for _, c := range src[:i] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	p := hcl.Pos{Line: line, Column: col, Byte: start.Byte + i}
	return hcl.Range{Filename: file, Start: p, End: p}
}
