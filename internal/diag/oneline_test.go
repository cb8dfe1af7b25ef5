package diag

import (
	"strings"
	"testing"
)

func TestOneLine(t *testing.T) {
	cases := map[string]string{
		"plain text: ok":          "plain text: ok",
		"a\nb":                    `a\nb`,
		"nope\n---\nkind: Secret": `nope\n---\nkind: Secret`,
		"\x1b[31mred":             `\x1b[31mred`,
		"a\u2028b\u202ec":         `a\u2028b\u202ec`,
		"tab\there\r":             `tab\there\r`,
		"ünïcødé ✓":               "ünïcødé ✓",
		"bad\xffbyte":             `bad\ufffdbyte`,
	}
	for in, want := range cases {
		got := OneLine(in)
		if got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
		if strings.ContainsAny(got, "\n\r\x1b") {
			t.Errorf("OneLine(%q) keeps a control character", in)
		}
	}
}
