package spec

import "testing"

// TestIsPlainKey: isPlainKey answers as the plainKey pattern on every
// string of up to two bytes and on longer keys.
func TestIsPlainKey(t *testing.T) {
	cases := []string{"", "nodePools", "gpu-operator", "_x", "a1", "9x", "-a", "a b", "gpuctl.dev/pool", "ünï"}
	for a := 0; a < 0x100; a++ {
		cases = append(cases, string([]byte{byte(a)}))
		for b := 0x20; b < 0x80; b++ {
			cases = append(cases, string([]byte{byte(a), byte(b)}))
		}
	}
	for _, s := range cases {
		if got, want := isPlainKey(s), plainKey.MatchString(s); got != want {
			t.Errorf("isPlainKey(%q) = %v, plainKey says %v", s, got, want)
		}
	}
}
