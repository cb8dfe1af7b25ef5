package probe

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// ReadLimited reads r up to MaxInputBytes and returns ErrInputTooLarge if
// there is more.
func ReadLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxInputBytes {
		return nil, ErrInputTooLarge
	}
	return data, nil
}

// lines splits data into lines without their line endings (\n, \r\n or a
// lone \r, as pasted from Windows tools).
func lines(data []byte) []string {
	s := string(data)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	out := strings.Split(s, "\n")
	if len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// isBlank reports whether data has no visible characters.
func isBlank(data []byte) bool {
	return len(bytes.TrimSpace(data)) == 0
}

// na reports whether a value is one of nvidia-smi's "not available" spellings.
func na(s string) bool {
	switch strings.TrimSpace(s) {
	case "", "N/A", "[N/A]", "Not Supported", "[Not Supported]", "Unknown", "[Unknown Error]", "Unknown Error", "n/a", "-", "None", "Requested functionality has been deprecated", "ERR!", "[GPU requires reset]", "[Insufficient Permissions]":
		return true
	}
	return false
}

// leadingNumber returns the number at the start of s (after spaces), as
// text: "81559 MiB" -> "81559", "16x" -> "16", "-8 C" -> "-8".
func leadingNumber(s string) string {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) {
		c := s[end]
		if (c >= '0' && c <= '9') || c == '.' || (end == 0 && (c == '-' || c == '+')) {
			end++
			continue
		}
		break
	}
	return s[:end]
}

// parseIntPtr parses the leading integer of s; nil for N/A or garbage.
func parseIntPtr(s string) *int {
	if na(s) {
		return nil
	}
	n, err := strconv.Atoi(leadingNumber(s))
	if err != nil {
		return nil
	}
	return &n
}

// parseInt64Ptr is parseIntPtr for 64-bit counters.
func parseInt64Ptr(s string) *int64 {
	if na(s) {
		return nil
	}
	n, err := strconv.ParseInt(leadingNumber(s), 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// parseFloatPtr parses the leading decimal of s ("67.03 W" -> 67.03).
func parseFloatPtr(s string) *float64 {
	if na(s) {
		return nil
	}
	f, err := strconv.ParseFloat(leadingNumber(s), 64)
	if err != nil {
		return nil
	}
	return &f
}

// parseYesNo reads nvidia-smi's Yes/No, Enabled/Disabled, Active/Not Active.
func parseYesNo(s string) *bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "yes", "enabled", "active", "on", "true":
		t := true
		return &t
	case "no", "disabled", "not active", "off", "false":
		f := false
		return &f
	}
	return nil
}

// clean trims spaces and the non-printing characters that pasted output
// sometimes carries.
func clean(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) })
}

func ptr[T any](v T) *T { return &v }

// addInt64 adds b to a where both are known; nil stays nil unless one side is
// known.
func addInt64(a, b *int64) *int64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return ptr(*a + *b)
}

// truncate shortens s for messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
