package diag

import (
	"fmt"
	"strings"
	"unicode"
)

// OneLine is s made safe to write on one line of a file or a terminal (a
// YAML or HCL comment, a file header, a message): line breaks, other
// control characters, Unicode line and paragraph separators and bidi
// controls are written as Go escapes (\n, \x1b, \u2028), so that text from
// an input can never start a new line, a new document or a terminal
// sequence. Printable text is kept as it is.
func OneLine(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == unicode.ReplacementChar:
			b.WriteString(`\ufffd`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsEscape(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == unicode.ReplacementChar || unsafeRune(r) {
			return true
		}
	}
	return false
}

// unsafeRune: C1 controls, line/paragraph separators, bidi controls and
// other format characters that change how a line reads.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r < 0xa0:
		return true
	case r == 0x2028 || r == 0x2029 || r == 0x85:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e || r == 0x200f || r == 0x061c:
		return true
	case r == 0xfeff:
		return true
	}
	return false
}
