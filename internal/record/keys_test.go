package record

import "testing"

func TestLoadKeyRejectsOtherAlgorithms(t *testing.T) {
	rsa := "-----BEGIN PUBLIC KEY-----\nMFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAL6Hn0xxJG0N+hZOjA9X+yk2uFmV2nL8\nXUAmQdSfJcfLyS3tWhhKnA1K1P1q3u8KzN5xwq8b0bX3LUr4R6v3nS0CAwEAAQ==\n-----END PUBLIC KEY-----\n"
	if _, err := LoadSignerVerifier([]byte(rsa)); err == nil {
		t.Error("RSA key accepted")
	}
	if _, err := LoadSignerVerifier([]byte("not a key")); err == nil {
		t.Error("garbage accepted")
	}
}
