package matrix

import "testing"

func TestVersionCompareNumeric(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"535.54.14", "535.104.05", -1}, // string compare gets this wrong
		{"525.105.17", "525.60.13", 1},  // and this
		{"470", "1000", -1},
		{"455.23", "455.23.0", 0},
		{"12.4", "12.10", -1},
		{"535.129.03", "535.129.3", 0},
		{"v26.7.0", "25.10.1", 1},
		{"580.65.06", "580.65.06", 0},
	}
	for _, c := range cases {
		got := MustVersion(c.a).Compare(MustVersion(c.b))
		if got != c.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestParseVersionErrors(t *testing.T) {
	for _, s := range []string{"", "LATEST", "535.x", "1.2.3.4.5", "535..1", "-1"} {
		if _, err := ParseVersion(s); err == nil {
			t.Errorf("ParseVersion(%q) = nil error, want one", s)
		}
	}
}
