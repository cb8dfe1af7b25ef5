package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/record"
)

func runReport(t *testing.T, tty bool, args ...string) (int, string, string) {
	t.Helper()
	streams, _, out, errOut := TestStreams()
	streams.OutTTY = tty
	code := Run(context.Background(), append([]string{"report"}, args...), streams)
	return code, out.String(), errOut.String()
}

var reportFixture = filepath.Join("..", "accept", "testdata", "statement-healthy.json")

// On a terminal without --out the page is refused, as a wrong use; piped,
// it goes to stdout.
func TestReportRefusesTerminal(t *testing.T) {
	code, out, errOut := runReport(t, true, reportFixture)
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "--out FILE, or redirect stdout") || !strings.Contains(errOut, "Run 'gpuctl report --help' for usage.") {
		t.Errorf("terminal: exit %d, %d bytes out, stderr %q", code, len(out), errOut)
	}
	if code, out, errOut := runReport(t, false, reportFixture); code != ExitOK || !strings.HasPrefix(out, "<!DOCTYPE html>") {
		t.Errorf("piped: exit %d, stderr %q", code, errOut)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := runReport(t, true, reportFixture, "--out", html); code != ExitOK {
		t.Errorf("terminal with --out: exit %d, stderr %q", code, errOut)
	}
}

// A record file that is missing, too large, a FIFO or a device is bad
// input (exit 2) naming the path, not a wrong use: no --help hint. A file
// that is no acceptance record is shown as refused (exit 0) and named on
// stderr.
func TestReportDataErrorsHaveNoUsageHint(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	big := filepath.Join(dir, "big.json")
	fifo := filepath.Join(dir, "fifo.json")
	if err := os.WriteFile(bad, []byte(`{"payload": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, bytes.Repeat([]byte(" "), record.MaxRecordBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.json"), big, fifo, "/dev/zero"} {
		code, _, errOut := runReport(t, false, path)
		if code != ExitUsage || !strings.Contains(errOut, path+": ") || strings.Contains(errOut, "--help") {
			t.Errorf("%s: exit %d, stderr %q", filepath.Base(path), code, errOut)
		}
	}
	// A page of nothing but refused files is still written, and exits 2.
	code, out, errOut := runReport(t, false, bad)
	if code != ExitUsage || !strings.Contains(errOut, "REFUSED: "+bad+": ") || !strings.Contains(out, `data-trust="unverified">not verified (refused)</span>`) {
		t.Errorf("not a record: exit %d, stderr %q", code, errOut)
	}
}

// forgeries writes the hostile records of the signed fixture into dir: the
// envelope whose "PAYLOAD" holds the signed PASS statement and whose
// "payload" a FAIL one, the same with the member twice, and the unsigned
// statement that says PASS.
func forgeries(t *testing.T, dir string) (caseVariant, duplicate, unsigned string) {
	t.Helper()
	data, err := os.ReadFile(signedFixture)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		PayloadType string          `json:"payloadType"`
		Payload     string          `json:"payload"`
		Signatures  json.RawMessage `json:"signatures"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	st, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	fail := base64.StdEncoding.EncodeToString(bytes.Replace(st, []byte(`"verdict":"PASS"`), []byte(`"verdict":"FAIL"`), 1))
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caseVariant = write("case.json", `{"payloadType": "`+env.PayloadType+`", "payload": "`+fail+`", "PAYLOAD": "`+env.Payload+`", "signatures": `+string(env.Signatures)+`}`)
	duplicate = write("dup.json", `{"payloadType": "`+env.PayloadType+`", "payload": "`+fail+`", "payload": "`+env.Payload+`", "signatures": `+string(env.Signatures)+`}`)
	statement, err := os.ReadFile(reportFixture)
	if err != nil {
		t.Fatal(err)
	}
	return caseVariant, duplicate, write("forged-pass.json", string(statement))
}

var (
	signedFixture = filepath.Join("..", "accept", "testdata", "records", "h100-pass.dsse.json")
	fixtureKey    = filepath.Join("..", "accept", "testdata", "records", "test.pub")
)

// pageSection is the node section of record on page.
func pageSection(t *testing.T, page, record string) string {
	t.Helper()
	i := strings.Index(page, "record <code>"+record+"</code>")
	if i < 0 {
		t.Fatalf("no section of %s", record)
	}
	start := strings.LastIndex(page[:i], `<section class="node"`)
	return page[start : i+strings.Index(page[i:], "</section>")]
}

// TestReportForgedRecords: without a key the signed fixture is "signed,
// not verified", a hand-written PASS statement "unsigned" with a hatched
// "PASS — unsigned" badge, and the case-variant and duplicate envelopes
// are refused, naming the member; with the key the fixture is verified and
// the run exits 3 for the rest.
func TestReportForgedRecords(t *testing.T) {
	dir := t.TempDir()
	caseVariant, duplicate, unsigned := forgeries(t, dir)
	out := filepath.Join(dir, "r.html")
	code, _, errOut := runReport(t, false, "--out", out, signedFixture, caseVariant, duplicate, unsigned)
	page, err := os.ReadFile(out)
	if code != ExitOK || err != nil {
		t.Fatalf("exit %d (%v), stderr %q", code, err, errOut)
	}
	for _, c := range []struct{ record, trust, words string }{
		{signedFixture, "unverified", "PASS — not verified"},
		{unsigned, "unsigned", "PASS — unsigned"},
		{caseVariant, "unverified", "REFUSED"},
		{duplicate, "unverified", "REFUSED"},
	} {
		sec := pageSection(t, string(page), c.record)
		if !strings.Contains(sec, `data-trust="`+c.trust+`"`) || !strings.Contains(sec, c.words+"</span>") || strings.Contains(sec, `class="verdict v-`) {
			t.Errorf("%s: want trust %s and %q on a hatched badge:\n%s", c.record, c.trust, c.words, sec)
		}
	}
	for _, want := range []string{"REFUSED: " + caseVariant + `: malformed record: $: member "PAYLOAD" and "payload" differ only in case`,
		"REFUSED: " + duplicate + `: malformed record: $: member "payload" appears twice`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	code, _, errOut = runReport(t, false, "--out", out, "--key", fixtureKey, signedFixture, caseVariant, unsigned)
	page, _ = os.ReadFile(out)
	if code != ExitCheckFailed || !strings.Contains(pageSection(t, string(page), signedFixture), `data-trust="verified">verified</span>`) {
		t.Errorf("with the key: exit %d, stderr %q", code, errOut)
	}
	if sec := pageSection(t, string(page), unsigned); !strings.Contains(sec, `data-trust="unsigned"`) || strings.Contains(sec, "<h3>Stages</h3>") {
		t.Errorf("unsigned with the key: %s", sec)
	}
}

// TestReportCancelled: SIGTERM (the context cancelled with its cause)
// while report reads, verifies and renders 600 records stops it within a
// second with 143, and no page or temporary file is left.
func TestReportCancelled(t *testing.T) {
	data, err := os.ReadFile(signedFixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	recs := filepath.Join(dir, "records")
	var args []string
	for i := range 600 {
		run := filepath.Join(recs, "node", fmt.Sprintf("run-%03d", i))
		if err := os.MkdirAll(run, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, "record.dsse.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, filepath.Join(run, "record.dsse.json"))
	}
	out := filepath.Join(dir, "page", "r.html")
	if err := os.Mkdir(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, after := range []time.Duration{0, 30 * time.Millisecond, 150 * time.Millisecond} {
		for _, input := range [][]string{args, {recs}} {
			ctx, cancel := context.WithCancelCause(context.Background())
			timer := time.AfterFunc(after, func() { cancel(&SignalError{Signal: syscall.SIGTERM}) })
			streams, _, _, errOut := TestStreams()
			start := time.Now()
			code := Run(ctx, append([]string{"report", "--key", fixtureKey, "--out", out}, input...), streams)
			took := time.Since(start)
			timer.Stop()
			cancel(nil)
			if code == ExitOK {
				t.Logf("after %s: done in %s before the cancel", after, took)
				os.Remove(out)
				continue
			}
			if code != ExitTerminated || took > after+time.Second {
				t.Errorf("cancel after %s: exit %d in %s, stderr %q", after, code, took, errOut)
			}
			if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 0 {
				t.Errorf("cancel after %s: left %v", after, ents)
			}
		}
	}
}

// TestReportFolder: a folder stands for the record files below it
// (NODE/RUN-ID/record.dsse.json and the statement), in name order; a link
// is not followed and nothing deeper than 4 folders is read.
func TestReportFolder(t *testing.T) {
	data, err := os.ReadFile(signedFixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "record.dsse.json")
	for _, f := range []struct{ rel, link string }{
		{rel: "gpu-node-1/run-2/record.dsse.json"},
		{rel: "gpu-node-1/run-1/statement.intoto.json"},
		{rel: "gpu-node-1/run-1/other.json"},
		{rel: "a/b/c/d/e/record.dsse.json"},
		{rel: "gpu-node-2/run-1/record.dsse.json", link: outside},
		{rel: "gpu-node-3", link: filepath.Dir(outside)},
	} {
		p := filepath.Join(dir, f.rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if f.link != "" {
			if err := os.Symlink(f.link, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(outside, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runReport(t, false, dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := regexp.MustCompile(`data-record="([^"]*)"`).FindAllStringSubmatch(out, -1)
	var records []string
	for _, m := range got {
		records = append(records, m[1])
	}
	want := []string{filepath.Join(dir, "gpu-node-1/run-1/statement.intoto.json"), filepath.Join(dir, "gpu-node-1/run-2/record.dsse.json")}
	if !slices.Equal(records, want) {
		t.Errorf("records %v, want %v", records, want)
	}
}

// Without --key, a record whose subject names another node than its
// predicate is flagged on the page and on stderr.
func TestReportFlagsSubjectNodeMismatch(t *testing.T) {
	data, err := os.ReadFile(reportFixture)
	if err != nil {
		t.Fatal(err)
	}
	h, err := record.Decode(reportFixture, data)
	if err != nil {
		t.Fatal(err)
	}
	name := `"name": "` + h.SubjectName + `"`
	if h.SubjectName != "node/"+h.Predicate.Node.Name || bytes.Count(data, []byte(name)) != 1 {
		t.Fatalf("fixture's subject %q, node %q", h.SubjectName, h.Predicate.Node.Name)
	}
	path := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(path, bytes.Replace(data, []byte(name), []byte(`"name": "node/someone-else"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runReport(t, false, path)
	want := `subject "node/someone-else" does not name the predicate's node (node/` + h.Predicate.Node.Name + `)`
	if code != ExitOK || !strings.Contains(errOut, "warning: "+path+": "+want) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, `<ul class="problems"><li class="s-error">subject &#34;node/someone-else&#34; does not name`) {
		t.Error("the page does not flag the mismatch")
	}
	if _, _, errOut := runReport(t, false, reportFixture); errOut != "" {
		t.Errorf("a consistent record: stderr %q", errOut)
	}
}

// TestReportFolderWithoutRecords: a folder with no record file below it is
// bad input (exit 2) naming the folder and the file names report looks
// for; --out in a folder that does not exist is refused before anything
// is read.
func TestReportFolderWithoutRecords(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pass.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runReport(t, false, dir)
	if code != ExitUsage || !strings.Contains(errOut, dir+": no record files") || !strings.Contains(errOut, "record.dsse.json") {
		t.Errorf("folder without records: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runReport(t, false, signedFixture, "--out", filepath.Join(dir, "nowhere", "x.html"))
	if code != ExitUsage || !strings.Contains(errOut, "does not exist") {
		t.Errorf("--out in a missing folder: exit %d, stderr %q", code, errOut)
	}
}
