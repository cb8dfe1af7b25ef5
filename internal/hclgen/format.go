// This file is derived from hclwrite/format.go of github.com/hashicorp/hcl/v2
// v2.25.0 (https://github.com/hashicorp/hcl/blob/v2.25.0/hclwrite/format.go),
// Copyright IBM Corp. 2014, 2026, and is covered by the Mozilla Public
// License 2.0 (https://mozilla.org/MPL/2.0/), as that file is.
// SPDX-License-Identifier: MPL-2.0

package hclgen

import (
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// formatBytes formats tokens exactly as hclwrite does (File.Bytes,
// hclwrite.Format: `terraform fmt`) and returns their bytes. hclwrite counts
// the columns of every attribute name through a new bufio.Scanner over
// grapheme clusters (a 4 KiB buffer per token, most of the garbage of
// generating 1,000 pools); here a token of printable ASCII, which is every
// name gpuctl writes, counts its bytes, and any other token is counted by
// hclwrite itself. TestWriteIsFormatted holds the two to the same bytes.
func formatBytes(tokens hclwrite.Tokens) []byte {
	lines := linesForFormat(tokens)
	formatIndent(lines)
	formatSpaces(lines)
	formatCells(lines)
	size := 0
	for _, t := range tokens {
		size += max(t.SpacesBefore, 0) + len(t.Bytes)
	}
	out := make([]byte, 0, size)
	for _, t := range tokens {
		for i := 0; i < t.SpacesBefore; i++ {
			out = append(out, ' ')
		}
		out = append(out, t.Bytes...)
	}
	return out
}

// columns is hclwrite.Tokens.Columns.
func columns(ts hclwrite.Tokens) int {
	n := 0
	for _, t := range ts {
		n += t.SpacesBefore
		if ascii(t.Bytes) {
			n += len(t.Bytes)
		} else {
			n += hclwrite.Tokens{{Type: t.Type, Bytes: t.Bytes}}.Columns()
		}
	}
	return n
}

// ascii reports whether b is printable ASCII, where every byte is one
// grapheme cluster.
func ascii(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

type formatLine struct {
	lead, assign, comment hclwrite.Tokens
}

func formatIndent(lines []formatLine) {
	indents := make([]int, 0, 10)
	for i := range lines {
		line := &lines[i]
		if len(line.lead) == 0 {
			continue
		}
		if line.lead[0].Type == hclsyntax.TokenNewline {
			line.lead[0].SpacesBefore = 0
			continue
		}
		netBrackets := 0
		for _, token := range line.lead {
			netBrackets += tokenBracketChange(token)
			if token.Type == hclsyntax.TokenOHeredoc {
				break
			}
		}
		for _, token := range line.assign {
			netBrackets += tokenBracketChange(token)
		}
		switch {
		case netBrackets > 0:
			line.lead[0].SpacesBefore = 2 * len(indents)
			indents = append(indents, netBrackets)
		case netBrackets < 0:
			closed := -netBrackets
			for closed > 0 && len(indents) > 0 {
				switch {
				case closed > indents[len(indents)-1]:
					closed -= indents[len(indents)-1]
					indents = indents[:len(indents)-1]
				case closed < indents[len(indents)-1]:
					indents[len(indents)-1] -= closed
					closed = 0
				default:
					indents = indents[:len(indents)-1]
					closed = 0
				}
			}
			line.lead[0].SpacesBefore = 2 * len(indents)
		default:
			line.lead[0].SpacesBefore = 2 * len(indents)
		}
	}
}

var nilToken = &hclwrite.Token{Type: hclsyntax.TokenNil, Bytes: []byte{}}

func formatSpaces(lines []formatLine) {
	for _, line := range lines {
		spaceCell(line.lead, false)
		spaceCell(line.assign, true)
	}
}

func spaceCell(cell hclwrite.Tokens, assign bool) {
	for i, token := range cell {
		if i == 0 && assign {
			token.SpacesBefore = 1
		}
		before := nilToken
		if i > 0 {
			before = cell[i-1]
		}
		if i >= len(cell)-1 {
			continue
		}
		after := cell[i+1]
		if spaceAfterToken(token, before, after) {
			after.SpacesBefore = 1
		} else {
			after.SpacesBefore = 0
		}
	}
}

func formatCells(lines []formatLine) {
	chainStart, maxColumns := -1, 0
	closeAssignChain := func(i int) {
		for _, chainLine := range lines[chainStart:i] {
			chainLine.assign[0].SpacesBefore = maxColumns - columns(chainLine.lead) + 1
		}
		chainStart, maxColumns = -1, 0
	}
	for i, line := range lines {
		if line.assign == nil {
			if chainStart != -1 {
				closeAssignChain(i)
			}
			continue
		}
		if chainStart == -1 {
			chainStart = i
		}
		if c := columns(line.lead); c > maxColumns {
			maxColumns = c
		}
	}
	if chainStart != -1 {
		closeAssignChain(len(lines))
	}

	closeCommentChain := func(i int) {
		for _, chainLine := range lines[chainStart:i] {
			chainLine.comment[0].SpacesBefore = maxColumns - (columns(chainLine.lead) + columns(chainLine.assign)) + 1
		}
		chainStart, maxColumns = -1, 0
	}
	for i, line := range lines {
		if line.comment == nil {
			if chainStart != -1 {
				closeCommentChain(i)
			}
			continue
		}
		if chainStart == -1 {
			chainStart = i
		}
		if c := columns(line.lead) + columns(line.assign); c > maxColumns {
			maxColumns = c
		}
	}
	if chainStart != -1 {
		closeCommentChain(len(lines))
	}
}

// spaceAfterToken decides whether subject has a space after it, between
// before (TokenNil at the start of a cell) and after: hclwrite's rules, in
// its order, grouped as punctuation, operands and brackets.
func spaceAfterToken(subject, before, after *hclwrite.Token) bool {
	if space, ok := punctuationSpace(subject, after); ok {
		return space
	}
	if space, ok := operandSpace(subject, before, after); ok {
		return space
	}
	return bracketSpace(subject, after)
}

// punctuationSpace: nothing before a newline, a call's parenthesis, a
// namespace's ::, around a dot, or before a comma or ellipsis; a space after
// a comma. ok is false where none of these applies.
func punctuationSpace(subject, after *hclwrite.Token) (space, ok bool) {
	s, a := subject.Type, after.Type
	switch {
	case a == hclsyntax.TokenNewline || a == hclsyntax.TokenNil:
		return false, true
	case s == hclsyntax.TokenIdent && (a == hclsyntax.TokenOParen || a == hclsyntax.TokenDoubleColon),
		s == hclsyntax.TokenDoubleColon && a == hclsyntax.TokenIdent:
		return false, true
	case s == hclsyntax.TokenDot || a == hclsyntax.TokenDot:
		return false, true
	case a == hclsyntax.TokenComma || a == hclsyntax.TokenEllipsis:
		return false, true
	case s == hclsyntax.TokenComma:
		return true, true
	}
	return false, false
}

// opensString and closesString are the tokens nothing is spaced after, and
// before, inside a string or heredoc.
var (
	opensString  = map[hclsyntax.TokenType]bool{hclsyntax.TokenQuotedLit: true, hclsyntax.TokenStringLit: true, hclsyntax.TokenOQuote: true, hclsyntax.TokenOHeredoc: true}
	closesString = map[hclsyntax.TokenType]bool{hclsyntax.TokenQuotedLit: true, hclsyntax.TokenStringLit: true, hclsyntax.TokenCQuote: true, hclsyntax.TokenCHeredoc: true}
)

// unaryContext are the tokens after which a minus is a sign (no space
// after it), not a subtraction.
var unaryContext = map[hclsyntax.TokenType]bool{
	hclsyntax.TokenNil: true, hclsyntax.TokenOParen: true, hclsyntax.TokenOBrace: true, hclsyntax.TokenOBrack: true,
	hclsyntax.TokenEqual: true, hclsyntax.TokenColon: true, hclsyntax.TokenComma: true, hclsyntax.TokenQuestion: true,
	hclsyntax.TokenPlus: true, hclsyntax.TokenStar: true, hclsyntax.TokenSlash: true, hclsyntax.TokenPercent: true, hclsyntax.TokenMinus: true,
	hclsyntax.TokenEqualOp: true, hclsyntax.TokenNotEqual: true, hclsyntax.TokenGreaterThan: true, hclsyntax.TokenGreaterThanEq: true,
	hclsyntax.TokenLessThan: true, hclsyntax.TokenLessThanEq: true, hclsyntax.TokenAnd: true, hclsyntax.TokenOr: true, hclsyntax.TokenBang: true,
}

// operandSpace: nothing inside a string, before an index, or after ! or a
// sign; a space after the "in" of a for expression. ok is false where none
// of these applies.
func operandSpace(subject, before, after *hclwrite.Token) (space, ok bool) {
	switch {
	case opensString[subject.Type] || closesString[after.Type]:
		return false, true
	case subject.Type == hclsyntax.TokenIdent && string(subject.Bytes) == "in" && before.Type == hclsyntax.TokenIdent:
		return true, true
	case after.Type == hclsyntax.TokenOBrack && (subject.Type == hclsyntax.TokenIdent || subject.Type == hclsyntax.TokenNumberLit || tokenBracketChange(subject) < 0):
		return false, true
	case subject.Type == hclsyntax.TokenBang:
		return false, true
	case subject.Type == hclsyntax.TokenMinus:
		return !unaryContext[before.Type], true
	}
	return false, false
}

// bracketSpace: a space inside braces (none in an empty {}) and around a
// template's ${ and }, none inside other brackets; a space everywhere else.
func bracketSpace(subject, after *hclwrite.Token) bool {
	s, a := subject.Type, after.Type
	switch {
	case s == hclsyntax.TokenOBrace || a == hclsyntax.TokenCBrace:
		return !(s == hclsyntax.TokenOBrace && a == hclsyntax.TokenCBrace)
	case (s == hclsyntax.TokenTemplateInterp || s == hclsyntax.TokenTemplateControl) && a == hclsyntax.TokenOBrace:
		return true
	case s == hclsyntax.TokenCBrace && a == hclsyntax.TokenTemplateSeqEnd:
		return true
	case s == hclsyntax.TokenTemplateSeqEnd && (a == hclsyntax.TokenTemplateInterp || a == hclsyntax.TokenTemplateControl):
		return false
	case tokenBracketChange(subject) > 0:
		return false
	case tokenBracketChange(after) < 0:
		return false
	}
	return true
}

// linesForFormat splits tokens into lines (a comment that ends in a
// newline ends its line; EOF is dropped) and each line into its cells.
func linesForFormat(tokens hclwrite.Tokens) []formatLine {
	if len(tokens) == 0 {
		return nil
	}
	lines := splitLines(tokens)
	for i := range lines {
		splitCells(&lines[i])
	}
	return lines
}

// splitLines is the lines of tokens, each in lead.
func splitLines(tokens hclwrite.Tokens) []formatLine {
	lineCount := 1
	for _, tok := range tokens {
		if tokenIsNewline(tok) {
			lineCount++
		}
	}
	lines := make([]formatLine, lineCount)
	li, lineStart := 0, 0
	for i, tok := range tokens {
		if tok.Type == hclsyntax.TokenEOF {
			lines[li].lead = tokens[lineStart:i]
			break
		}
		if tokenIsNewline(tok) {
			lines[li].lead = tokens[lineStart : i+1]
			lineStart = i + 1
			li++
		}
	}
	if lineStart < len(tokens) {
		lines[li].lead = tokens[lineStart:]
		if lines[li].lead[len(lines[li].lead)-1].Type == hclsyntax.TokenEOF {
			lines[li].lead = lines[li].lead[:len(lines[li].lead)-1]
		}
	}
	return lines
}

// splitCells moves a line's trailing comment into comment and, where its
// first = (after the first token) closes every bracket it opens, the = and
// what follows into assign.
func splitCells(line *formatLine) {
	if len(line.lead) == 0 {
		return
	}
	if len(line.lead) > 1 && line.lead[len(line.lead)-1].Type == hclsyntax.TokenComment {
		line.comment = line.lead[len(line.lead)-1:]
		line.lead = line.lead[:len(line.lead)-1]
	}
	for i, tok := range line.lead {
		if i == 0 || tok.Type != hclsyntax.TokenEqual {
			continue
		}
		netBrackets := 0
		for _, token := range line.lead[i:] {
			netBrackets += tokenBracketChange(token)
		}
		if netBrackets == 0 {
			line.assign = line.lead[i:]
			line.lead = line.lead[:i]
		}
		return
	}
}

func tokenIsNewline(tok *hclwrite.Token) bool {
	switch tok.Type {
	case hclsyntax.TokenNewline:
		return true
	case hclsyntax.TokenComment:
		return len(tok.Bytes) > 0 && tok.Bytes[len(tok.Bytes)-1] == '\n'
	}
	return false
}

func tokenBracketChange(tok *hclwrite.Token) int { return bracketChange(tok.Type) }

func bracketChange(t hclsyntax.TokenType) int {
	switch t {
	case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenTemplateControl, hclsyntax.TokenTemplateInterp:
		return 1
	case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenTemplateSeqEnd:
		return -1
	}
	return 0
}
