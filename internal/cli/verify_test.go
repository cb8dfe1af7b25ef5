package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func runVerify(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	streams, _, out, errOut := TestStreams()
	code := Run(context.Background(), append([]string{"verify"}, args...), streams)
	return code, out.String(), errOut.String()
}

// TestVerifyRefusesAmbiguousRecords: the envelope with the signed PASS
// under "PAYLOAD" and a FAIL under "payload", the one with "payload"
// twice, a record with data after it and one nested too deep are refused
// with exit 2, naming the path and the member and quoting no payload; the
// genuine record verifies.
func TestVerifyRefusesAmbiguousRecords(t *testing.T) {
	dir := t.TempDir()
	caseVariant, duplicate, _ := forgeries(t, dir)
	data, err := os.ReadFile(signedFixture)
	if err != nil {
		t.Fatal(err)
	}
	trailing := filepath.Join(dir, "trailing.json")
	deep := filepath.Join(dir, "deep.json")
	if err := os.WriteFile(trailing, append(append([]byte{}, data...), `{"payload": ""}`...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(deep, []byte(`{"x": `+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runVerify(t, signedFixture, "--key", fixtureKey); code != ExitOK {
		t.Fatalf("the genuine record: exit %d: %s%s", code, out, errOut)
	}
	for path, want := range map[string]string{
		caseVariant: `: malformed record: $: member "PAYLOAD" and "payload" differ only in case`,
		duplicate:   `: malformed record: $: member "payload" appears twice`,
		trailing:    `: malformed record: $: has data after the JSON value`,
		deep:        `: malformed record: $.x` + strings.Repeat("[0]", 63) + `: nests objects and arrays deeper than 64 levels`,
	} {
		code, out, errOut := runVerify(t, path, "--key", fixtureKey)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, "error: "+path+want) || strings.Contains(errOut, "eyJ") || strings.Contains(errOut, "--help") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", filepath.Base(path), code, out, errOut)
		}
	}
}

// TestVerifyRefusesNonRegularFiles: a FIFO or a device as the record, the
// key or --previous is refused by its mode with exit 2 naming the path,
// without blocking.
func TestVerifyRefusesNonRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{fifo, "--key", fixtureKey},
		{"/dev/zero", "--key", fixtureKey},
		{signedFixture, "--key", fifo},
		{signedFixture, "--key", "/dev/zero"},
		{signedFixture, "--key", fixtureKey, "--previous", "/dev/zero"},
	} {
		bad := fifo
		if strings.Contains(strings.Join(args, " "), "/dev/zero") {
			bad = "/dev/zero"
		}
		code, _, errOut := runVerify(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, bad+": not a regular file") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}
