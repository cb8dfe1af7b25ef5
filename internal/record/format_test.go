package record

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestVerifyMalformedRecord: a record that is not one well-formed JSON
// value, has a member twice (parsers disagree on which one counts), or is
// over the size cap is ErrRecordFormat, before any signature is looked at.
func TestVerifyMalformedRecord(t *testing.T) {
	cases := map[string]string{
		"not-json":       "this is not JSON",
		"dup-payload":    `{"payloadType": "application/vnd.in-toto+json", "payload": "e30=", "payload": "e30=", "signatures": []}`,
		"dup-nested":     `{"payload": "e30=", "signatures": [{"keyid": "a", "keyid": "b", "sig": ""}]}`,
		"trailing-value": `{"payload": "e30="} {}`,
		"too-large":      `{"payload": "` + strings.Repeat("A", MaxRecordBytes) + `"}`,
	}
	for name, rec := range cases {
		_, err := Verify(context.Background(), []byte(rec), nil, "")
		if !errors.Is(err, ErrRecordFormat) {
			t.Errorf("%s: %v, want ErrRecordFormat", name, err)
		}
	}
	if err := noDuplicateMembers([]byte(`{"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]}`)); err != nil {
		t.Errorf("same name in different objects: %v", err)
	}
}
