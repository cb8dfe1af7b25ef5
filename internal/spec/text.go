package spec

import (
	"fmt"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// What a spec, waivers or policy file may write, beyond its schema, so that
// what a reviewer reads is what gpuctl uses and nothing gpuctl echoes from it
// into a generated file or a message can start a new line:
//
//   - No YAML tag (`!x`, `!!binary`, `!!str`, `!<tag:...>`): the YAML library
//     reads several of them as something other than the text a reader sees
//     (!!binary decodes base64, !!null drops the value, !!bool turns yes into
//     true, !!float turns text into 0, !!str ~ reads as ""), and no field of
//     the schema needs one: quoting makes a value a string.
//   - No control character in a key or a string value: C0 controls (line
//     breaks and tabs included), DEL, C1 controls, the Unicode line and
//     paragraph separators, bidi controls, the byte order mark and U+FFFD,
//     the characters diag.OneLine escapes. No field of the schema is more
//     than one line (names, versions, labels, reasons); a long value may be
//     folded over several lines with `>-`, which joins them with spaces.
//   - No string that is not valid UTF-8.
//
// Each is refused as an *Error at the line and column where it is written,
// with the field's path.

// checkText walks the document body and refuses the first tag, control
// character or invalid UTF-8 in a key or a string value.
func checkText(file string, body ast.Node) error {
	w := &textWalk{}
	ast.Walk(w, body)
	if w.tk == nil {
		return nil
	}
	return errAt(file, w.tk, w.path(body), w.msg, w.hint)
}

// textWalk is one walk of checkText: the first refusal's token and text.
type textWalk struct {
	tk        *token.Token
	msg, hint string
}

func (w *textWalk) Visit(n ast.Node) ast.Visitor {
	if w.tk != nil {
		return nil
	}
	switch v := n.(type) {
	case *ast.TagNode:
		w.tk = v.GetToken()
		w.msg = fmt.Sprintf("YAML tag %s is not allowed: gpuctl reads values as they are written", quoteShort(v.Start.Value))
		w.hint = "write the value without a tag; quote it to make it a string"
		return nil
	case *ast.LiteralNode:
		if v.Value != nil {
			w.check(v.GetToken(), v.Value.Value)
		}
		return nil
	case *ast.StringNode:
		w.check(v.GetToken(), v.Value)
	case *ast.CommentGroupNode, *ast.CommentNode:
		return nil
	}
	return w
}

// check records a refusal of s, written at tk, if it holds a control
// character or is not valid UTF-8.
func (w *textWalk) check(tk *token.Token, s string) {
	if !utf8.ValidString(s) {
		w.tk, w.msg, w.hint = tk, "string is not valid UTF-8", "save the file as UTF-8"
		return
	}
	for _, r := range s {
		if ControlRune(r) {
			w.tk = tk
			w.msg = fmt.Sprintf("string holds the control character %U%s", r, runeName(r))
			w.hint = "a value is one line of printable text; fold a long one over lines with >-"
			return
		}
	}
}

// path is the field path of the refused node, "" when none is known (an
// anchor's name).
func (w *textWalk) path(body ast.Node) string {
	if w.tk.Position == nil {
		return ""
	}
	return pathAt(body, w.tk.Position.Line, w.tk.Position.Column)
}

// ControlRune reports whether r is a character no spec string may hold:
// a C0 control (\n, \r, \t included), DEL, a C1 control, U+2028 and
// U+2029, a bidi control (U+061C, U+200E, U+200F, U+202A-U+202E,
// U+2066-U+2069), the byte order mark U+FEFF or U+FFFD. These are the
// characters diag.OneLine escapes.
func ControlRune(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r < 0xa0:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f || r == 0xfeff || r == utf8.RuneError:
		return true
	}
	return false
}

// runeName names the control characters a spec most often holds by
// mistake.
func runeName(r rune) string {
	switch r {
	case '\n', '\r', 0x85, 0x2028, 0x2029:
		return " (a line break)"
	case '\t':
		return " (a tab)"
	case 0xfeff:
		return " (a byte order mark)"
	case utf8.RuneError:
		return " (not valid UTF-8, or the replacement character)"
	}
	return ""
}
