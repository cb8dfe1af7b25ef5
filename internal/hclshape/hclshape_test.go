package hclshape

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestTokensAtLeastTheLexers: the estimate is never below the number of
// tokens hclsyntax's lexer makes (so a cap on it holds the lexer), and it
// stops where the limit passes.
func TestTokensAtLeastTheLexers(t *testing.T) {
	for _, src := range []string{
		"resource \"a\" \"b\" {\n  x = [1, 2, \"${var.y}\"]\n  z = a.b[0] + -3.5e2\n}\n",
		strings.Repeat("a\n", 1000),
		"locals {\n  s = <<EOT\nline ${x}\nEOT\n}\n",
	} {
		toks, _ := hclsyntax.LexConfig([]byte(src), "f.tf", hcl.InitialPos)
		if n, at := Tokens([]byte(src), 1<<30); n < len(toks)-1 || at != -1 {
			t.Errorf("%.30q: estimate %d (at %d), lexer %d tokens", src, n, at, len(toks))
		}
	}
	if n, at := Tokens([]byte("a b c d"), 2); n != 3 || at != 4 {
		t.Errorf("Tokens past the limit = %d at %d, want 3 at 4", n, at)
	}
}
