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
)

// Helpers over the hclwrite AST. Every string that comes from a spec is
// written as a cty value (hclwrite escapes quotes, "${" and "%{"); only
// expressions that gpuctl itself builds from identifiers go through expr.

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

// expr lexes an expression that gpuctl composed from fixed text, identifiers
// and quoted literals (see quote) and returns its tokens. It panics on a
// token the lexer refuses or unbalanced brackets: that is a bug in gpuctl,
// never a user input (the generated files are parsed with hclsyntax in the
// tests). Lexing, not parsing, keeps a pool's expressions cheap: parsing
// each through hclwrite.ParseConfig was a fifth of generating 1,000 pools.
func expr(src string) hclwrite.Tokens {
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
func quote(s string) string {
	return string(hclwrite.TokensForValue(cty.StringVal(s)).Bytes())
}

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

// mapTokens are the tokens of stringMap(m) as hclwrite.TokensForValue
// writes them (keys sorted; a key that is not an identifier quoted), left
// unformatted: the file is formatted once (formatBytes), and TokensForValue
// formats each map again, counting the columns of every key through a new
// bufio.Scanner.
func mapTokens(m map[string]string) hclwrite.Tokens {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	toks := hclwrite.Tokens{{Type: hclsyntax.TokenOBrace, Bytes: []byte{'{'}}}
	if len(keys) > 0 {
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte{'\n'}})
	}
	for _, k := range keys {
		if hclsyntax.ValidIdentifier(k) {
			toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenIdent, Bytes: []byte(k)})
		} else {
			toks = append(toks, hclwrite.TokensForValue(cty.StringVal(k))...)
		}
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenEqual, Bytes: []byte{'='}})
		toks = append(toks, hclwrite.TokensForValue(cty.StringVal(m[k]))...)
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte{'\n'}})
	}
	return append(toks, &hclwrite.Token{Type: hclsyntax.TokenCBrace, Bytes: []byte{'}'}})
}

// comment appends "# line" comments to body.
func comment(body *hclwrite.Body, lines ...string) {
	var toks hclwrite.Tokens
	for _, l := range lines {
		// Comments hold spec text too: keep them on one line each.
		l = strings.NewReplacer("\n", " ", "\r", " ").Replace(l)
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenComment, Bytes: []byte("# " + l + "\n")})
	}
	body.AppendUnstructuredTokens(toks)
}

// variable appends a variable block with a description, type, default and
// validations ([condition expression, error message] pairs).
func variable(body *hclwrite.Body, name, description, typ string, def cty.Value, validations ...[2]string) {
	b := body.AppendNewBlock("variable", []string{name}).Body()
	b.SetAttributeValue("description", cty.StringVal(description))
	b.SetAttributeRaw("type", expr(typ))
	if def != cty.NilVal {
		b.SetAttributeValue("default", def)
	}
	for _, v := range validations {
		vb := b.AppendNewBlock("validation", nil).Body()
		vb.SetAttributeRaw("condition", expr(v[0]))
		vb.SetAttributeValue("error_message", cty.StringVal(v[1]))
	}
	body.AppendNewline()
}
