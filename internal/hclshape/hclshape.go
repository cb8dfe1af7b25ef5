// Package hclshape estimates the shape of HCL source from its bytes, before
// hclsyntax's lexer runs: the lexer keeps every token (about 100 bytes
// each), so a hostile file of a few MiB would cost hundreds of MB before
// any limit on tokens could be checked. The package reads bytes and
// returns numbers; it never prints.
package hclshape

// tokenBytes are the bytes that start a token of their own.
var tokenBytes = func() (t [256]bool) {
	for _, c := range []byte("{}[]()=\",.:?!+-*/%<>&|\n$~^;'`#") {
		t[c] = true
	}
	return t
}()

// wordBytes are the bytes of identifiers and numbers.
var wordBytes = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
	}
	return t
}()

// Tokens estimates the tokens of src: one per punctuation byte and one per
// start of a word, which is at least what hclsyntax's lexer makes of it.
// It stops once the count passes limit and returns the byte offset where
// it did (-1 when it does not), with the count so far.
func Tokens(src []byte, limit int) (n, at int) {
	word := false
	for i, c := range src {
		w := wordBytes[c]
		if tokenBytes[c] || w && !word {
			if n++; n > limit {
				return n, i
			}
		}
		word = w
	}
	return n, -1
}
