package hclgen

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// Helpers over the generated tree (write.go). Every string that comes from a
// spec is written as a cty value or through quote (escaped as hclwrite
// escapes quotes, "${" and "%{"); only expressions that gpuctl itself builds
// from identifiers and quoted literals go through expr.

// ident turns a spec name into a Terraform identifier: lowercase letters,
// digits and underscores, never starting with a digit.
func ident(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "p_" + s
	}
	return s
}

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// traversal builds a reference such as var.cluster_name or
// aws_launch_template.train.id from identifiers.
func traversal(root string, attrs ...string) hcl.Traversal {
	t := hcl.Traversal{hcl.TraverseRoot{Name: root}}
	for _, a := range attrs {
		t = append(t, hcl.TraverseAttr{Name: a})
	}
	return t
}

func varRef(name string) hcl.Traversal { return traversal("var", name) }

// expr is an expression that gpuctl composed from fixed text, identifiers
// and quoted literals (see quote). One on a single line is written as it
// is: gpuctl writes them in hclwrite's layout, which the tests check
// (checkExprs: each is lexed and formatted, and must come out unchanged). A
// multi-line one is lexed and formatted (formatted).
func expr(src string) raw {
	if strings.IndexByte(src, '\n') < 0 {
		if checkExprs {
			if f := formatted(lex(src)); f.text != src {
				panic(fmt.Sprintf("hclgen: generated expression %q is not in hclwrite's layout %q", src, f.text))
			}
		}
		return single(src)
	}
	return formatted(lex(src))
}

// checkExprs makes expr check that one-line expressions are formatted
// (set by the package's tests).
var checkExprs = false

// lex lexes a generated expression into tokens. It panics on a token the
// lexer refuses or unbalanced brackets: that is a bug in gpuctl, never a
// user input (the generated files are parsed with hclsyntax in the tests).
func lex(src string) hclwrite.Tokens {
	native, diags := hclsyntax.LexExpression([]byte(src), "expr.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		panic(fmt.Sprintf("hclgen: bad generated expression %q: %s", src, diags.Error()))
	}
	buf := make([]hclwrite.Token, 0, len(native))
	depth, last := 0, 0
	for _, t := range native {
		if t.Type == hclsyntax.TokenEOF {
			break
		}
		if t.Type == hclsyntax.TokenInvalid || t.Type == hclsyntax.TokenBadUTF8 || t.Type == hclsyntax.TokenQuotedNewline {
			panic(fmt.Sprintf("hclgen: bad generated expression %q: token %q", src, t.Bytes))
		}
		depth += bracketChange(t.Type)
		if depth < 0 {
			break
		}
		buf = append(buf, hclwrite.Token{Type: t.Type, Bytes: t.Bytes, SpacesBefore: t.Range.Start.Byte - last})
		last = t.Range.End.Byte
	}
	if depth != 0 {
		panic(fmt.Sprintf("hclgen: bad generated expression %q: unbalanced brackets", src))
	}
	toks := make(hclwrite.Tokens, len(buf))
	for i := range buf {
		toks[i] = &buf[i]
	}
	return toks
}

// quote returns s as an HCL quoted string literal with every template
// sequence escaped, for use inside expr.
func quote(s string) string { return quoteString(s) }

// quoteList returns ss as quoted literals separated by ", ", the elements
// of an HCL list inside expr.
func quoteList(ss []string) string {
	quoted := make([]string, len(ss))
	for i, s := range ss {
		quoted[i] = quote(s)
	}
	return strings.Join(quoted, ", ")
}

// stringList is a list of strings as a cty value (an empty list when empty).
func stringList(ss []string) cty.Value {
	if len(ss) == 0 {
		return cty.ListValEmpty(cty.String)
	}
	vals := make([]cty.Value, len(ss))
	for i, s := range ss {
		vals[i] = cty.StringVal(s)
	}
	return cty.ListVal(vals)
}

// stringMap is a map of strings as a cty value; hclwrite writes its keys
// sorted.
func stringMap(m map[string]string) cty.Value {
	if len(m) == 0 {
		return cty.MapValEmpty(cty.String)
	}
	vals := make(map[string]cty.Value, len(m))
	for k, v := range m {
		vals[k] = cty.StringVal(v)
	}
	return cty.MapVal(vals)
}

// mapTokens is stringMap(m) as hclwrite.TokensForValue writes it, formatted
// (keys sorted; a key that is not an identifier quoted).
func mapTokens(m map[string]string) raw {
	if len(m) == 0 {
		return single("{}")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	texts, vals := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		texts[i], vals[i] = keyText(k), quoteString(m[k])
	}
	return mapRaw(texts, vals)
}

// comment appends "# line" comments to body. Comments hold spec text and
// the spec's file name, so each line is escaped with diag.OneLine: no line
// break or other control character in them can end the comment and write
// HCL of its own.
func comment(body *body, lines ...string) {
	if body.discard {
		return
	}
	for _, l := range lines {
		body.items = append(body.items, item{kind: itemComment, name: diag.OneLine(l)})
	}
}

// variable appends a variable block with a description, type, default and
// validations ([condition expression, error message] pairs).
func variable(body *body, name, description, typ string, def cty.Value, validations ...[2]string) {
	b := body.AppendNewBlock("variable", []string{name}).Body()
	b.SetAttributeString("description", description)
	b.SetAttributeRaw("type", expr(typ))
	if def != cty.NilVal {
		b.SetAttributeValue("default", def)
	}
	for _, v := range validations {
		vb := b.AppendNewBlock("validation", nil).Body()
		vb.SetAttributeRaw("condition", expr(v[0]))
		vb.SetAttributeString("error_message", v[1])
	}
	body.AppendNewline()
}
