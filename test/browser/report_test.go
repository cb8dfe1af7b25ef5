package browser

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gpuctl/gpuctl/internal/cli"
	"github.com/gpuctl/gpuctl/internal/record"
)

// TestLoadCatchesErrors: the checker sees what the report must not have:
// an uncaught exception, a console error and a request that leaves the
// page (refused: nothing listens on port 9).
func TestLoadCatchesErrors(t *testing.T) {
	exe := Chromium(t, false)
	page := filepath.Join(t.TempDir(), "bad.html")
	bad := `<!DOCTYPE html><html><head><title>bad</title></head><body>
<img src="http://127.0.0.1:9/x.png"><script>console.error("broken view"); throw new Error("boom");</script></body></html>`
	if err := os.WriteFile(page, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(context.Background(), exe, page, "")
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(p.Errors, "\n")
	for _, want := range []string{"console.error: broken view", "uncaught exception", "boom", "127.0.0.1:9/x.png"} {
		if !strings.Contains(all, want) {
			t.Errorf("errors lack %q:\n%s", want, all)
		}
	}
	if !slices.Equal(p.External, []string{"http://127.0.0.1:9/x.png"}) {
		t.Errorf("external %v", p.External)
	}
	if len(p.LeftLoopback) != 0 {
		t.Errorf("a loopback request went to the guard: %v", p.LeftLoopback)
	}
}

// TestFlags: Chromium starts with background networking, component
// updates, sync, default apps, first run and metrics reporting off, its
// own update, time and account requests sent nowhere but loopback, and
// with every name but localhost resolving to nothing.
func TestFlags(t *testing.T) {
	for _, name := range []string{"disable-background-networking", "disable-component-update", "disable-sync", "disable-default-apps",
		"no-first-run", "metrics-recording-only", "disable-crash-reporter", "no-pings", "disable-domain-reliability"} {
		if Flags[name] != true {
			t.Errorf("--%s is not set", name)
		}
	}
	if r, _ := Flags["host-resolver-rules"].(string); !strings.HasPrefix(r, "MAP * ~NOTFOUND") || !strings.Contains(r, "EXCLUDE localhost") {
		t.Errorf("--host-resolver-rules=%q", r)
	}
	for name, want := range map[string]string{"component-updater": "url-source=http://127.0.0.1:9/", "gaia-url": "http://127.0.0.1:9/"} {
		if Flags[name] != want {
			t.Errorf("--%s=%v, want %s", name, Flags[name], want)
		}
	}
	if f, _ := Flags["disable-features"].(string); !strings.Contains(f, "NetworkTimeServiceQuerying") {
		t.Errorf("--disable-features=%s", f)
	}
	if n := len(AllocatorOptions("chromium", "127.0.0.1:1")); n < len(Flags)+3 {
		t.Errorf("%d allocator options for %d flags", n, len(Flags))
	}
}

// TestLoadStaysOnLoopback: a page that asks for images, scripts and a
// fetch from the network reaches nothing: every such request goes to the
// loopback guard (which fails it and records it) and the page logs the
// failures, while a request to a server on 127.0.0.1 goes straight to it.
func TestLoadStaysOnLoopback(t *testing.T) {
	exe := Chromium(t, false)
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/gif")
		_, _ = w.Write([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
	}))
	defer local.Close()
	var localHits atomic.Int32
	local.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { localHits.Add(1); w.WriteHeader(204) })
	page := filepath.Join(t.TempDir(), "leaky.html")
	leaky := `<!DOCTYPE html><html><head><title>leaky</title></head><body>
<img src="http://example.com/x.png"><script src="https://example.org/y.js"></script><img src="` + local.URL + `/ok.gif">
<script>fetch("http://93.184.216.34/z").catch(function () {});</script></body></html>`
	if err := os.WriteFile(page, []byte(leaky), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(context.Background(), exe, page, "")
	if err != nil {
		t.Fatal(err)
	}
	seen := strings.Join(p.LeftLoopback, "\n")
	for _, want := range []string{"GET http://example.com/x.png", "CONNECT example.org:443", "GET http://93.184.216.34/z"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the guard did not see %q; it saw:\n%s", want, seen)
		}
	}
	if strings.Contains(seen, local.URL[len("http://"):]) || localHits.Load() == 0 {
		t.Errorf("the loopback request went to the guard or nowhere (%d hits): %s", localHits.Load(), seen)
	}
	if errs := strings.Join(p.Errors, "\n"); !strings.Contains(errs, "example.com/x.png") {
		t.Errorf("the page did not log the failed request:\n%s", errs)
	}
}

// TestReportTrustInChromium: as the browser draws it, only the verified
// record's badge looks like a verified one; a signed record read without
// the key, the hand-written statement that says PASS and the envelope
// whose "PAYLOAD" hides the signed PASS each carry their trust mark and a
// badge that says what they are; the record whose stages FAIL under a
// PASS says so.
func TestReportTrustInChromium(t *testing.T) {
	exe := Chromium(t, false)
	dir := t.TempDir()
	signed := filepath.Join("..", "..", "internal", "accept", "testdata", "records", "h100-pass.dsse.json")
	key := filepath.Join("..", "..", "internal", "accept", "testdata", "records", "test.pub")
	data, err := os.ReadFile(signed)
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
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fail := base64.StdEncoding.EncodeToString(bytes.Replace(st, []byte(`"verdict":"PASS"`), []byte(`"verdict":"FAIL"`), 1))
	caseVariant := write("case.json", []byte(`{"payloadType": "`+env.PayloadType+`", "payload": "`+fail+`", "PAYLOAD": "`+env.Payload+`", "signatures": `+string(env.Signatures)+`}`))
	// The unsigned statement with the signed PASS predicate, its nccl stage FAIL.
	i := bytes.Index(st, []byte(`"name":"nccl"`))
	j := bytes.Index(st[i:], []byte(`"verdict":"PASS"`))
	if i < 0 || j < 0 {
		t.Fatal("fixture layout changed")
	}
	forged := append(append(append([]byte{}, st[:i+j]...), `"verdict":"FAIL"`...), st[i+j+len(`"verdict":"PASS"`):]...)
	unsigned := write("forged.json", forged)
	for _, c := range []struct {
		key  []string
		want map[string]string // record -> trust
	}{
		{[]string{"--key", key}, map[string]string{signed: "verified"}},
		{nil, map[string]string{signed: "unverified", unsigned: "unsigned", caseVariant: "unverified"}},
	} {
		out := filepath.Join(dir, "report.html")
		records := []string{signed}
		if c.key == nil {
			records = append(records, unsigned, caseVariant)
		}
		streams, _, _, errOut := cli.TestStreams()
		if code := cli.Run(context.Background(), append(append([]string{"report", "--out", out}, c.key...), records...), streams); code != 0 {
			t.Fatalf("gpuctl report: exit %d: %s", code, errOut)
		}
		p, err := Load(context.Background(), exe, out, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Errors) > 0 || len(p.LeftLoopback) > 0 {
			t.Errorf("the page logged %v, requested %v", p.Errors, p.LeftLoopback)
		}
		for k, n := range p.Nodes {
			want := c.want[records[k]]
			if n.Trust != want || (n.Trust == "verified") != n.BadgeLooksVerified {
				t.Errorf("%s: trust %q (%q), badge %q looks verified: %v; want trust %q", records[k], n.Trust, n.TrustText, n.Badge, n.BadgeLooksVerified, want)
			}
		}
		if c.key == nil {
			if n := p.Nodes[1]; n.Badge != "PASS — unsigned" || !strings.Contains(n.Disagreement, "stages give FAIL (nccl FAIL)") {
				t.Errorf("forged statement: badge %q, disagreement %q", n.Badge, n.Disagreement)
			}
			if n := p.Nodes[2]; n.Badge != "REFUSED" || n.TrustText != "not verified (refused)" {
				t.Errorf("case-variant envelope: badge %q, trust %q", n.Badge, n.TrustText)
			}
		}
	}
}

// TestReportInChromium renders gpuctl report for the records that accept
// wrote from real 8x H100 outputs (internal/accept/testdata/records: one
// PASS, one FAIL at nccl; TestRecordFixtures keeps them current) and a
// record from before nccl.rows and topology, loads the page from its file
// in headless Chromium and checks what it shows against the records: no
// console error, exception or request, each node's verdict and stages, one
// curve point per message size, the topology grid, the evidence rows, and
// the fleet table sorting. The screenshot goes to $GPUCTL_ARTIFACTS.
func TestReportInChromium(t *testing.T) {
	exe := Chromium(t, false)
	records := []string{
		filepath.Join("..", "..", "internal", "accept", "testdata", "records", "h100-pass.dsse.json"),
		filepath.Join("..", "..", "internal", "accept", "testdata", "records", "h100-nccl-fail.dsse.json"),
		filepath.Join("..", "..", "internal", "accept", "testdata", "statement-healthy.json"),
	}
	out := filepath.Join(t.TempDir(), "report.html")
	streams, _, _, errOut := cli.TestStreams()
	if code := cli.Run(context.Background(), append([]string{"report", "--out", out}, records...), streams); code != 0 {
		t.Fatalf("gpuctl report: exit %d: %s", code, errOut)
	}
	page := LoadAndCheck(t, exe, out, "report.png", records)
	if want := []string{records[1], records[0], records[2]}; !slices.Equal(page.SortedByVerdict, want) {
		t.Errorf("sorted by verdict (descending): %v, want %v", page.SortedByVerdict, want)
	}
	// busbw at the largest size: 470.73, 470.73, 470.7 (the old record).
	if want := []string{records[2], records[1], records[0]}; !slices.Equal(page.SortedByBusbw, want) {
		t.Errorf("sorted by busbw (ascending): %v, want %v", page.SortedByBusbw, want)
	}
	old := page.Nodes[2]
	if !old.NoRows || !old.NoTopology || len(old.Points) != 0 || old.TopologyCells != 0 {
		t.Errorf("old record: %+v", old)
	}
}

// TestReportNetworkAndFrameworkInChromium: a record with the network and
// framework stages (internal/accept's l4-network-framework fixture) shows
// both, with their verdicts, on the report page (LoadAndCheck compares each
// stage the page shows with the record).
func TestReportNetworkAndFrameworkInChromium(t *testing.T) {
	exe := Chromium(t, false)
	records := []string{filepath.Join("..", "..", "internal", "accept", "testdata", "records", "l4-network-framework.dsse.json")}
	out := filepath.Join(t.TempDir(), "report.html")
	streams, _, _, errOut := cli.TestStreams()
	if code := cli.Run(context.Background(), append([]string{"report", "--out", out}, records...), streams); code != 0 {
		t.Fatalf("gpuctl report: exit %d: %s", code, errOut)
	}
	page := LoadAndCheck(t, exe, out, "report-network-framework.png", records)
	if len(page.Nodes) != 1 {
		t.Fatalf("%d nodes on the page", len(page.Nodes))
	}
	for _, st := range []string{"network", "framework"} {
		if got := page.Nodes[0].Stages[st]; got != "PASS" {
			t.Errorf("stage %s shows %q, want PASS", st, got)
		}
	}
}

// TestReportRegressionsAndNCCLMultiInChromium: a fleet of the PASS record,
// the record of a node that PASSes with regressions since its previous
// record and an nccl-multi pair (internal/accept's h100-regressed-multi
// fixture: busbw 20 % lower, new clock warnings on each of 8 GPUs) and the
// nccl FAIL. As Chromium draws the fleet table, the regressed node's row
// shows its count and first regression and its nccl-multi verdict with the
// pair's busbw and partner; the other rows say they have neither; the
// node's section lists every regression of the record, one per GPU for the
// health findings; sorting by regressions puts it first.
func TestReportRegressionsAndNCCLMultiInChromium(t *testing.T) {
	exe := Chromium(t, false)
	dir := filepath.Join("..", "..", "internal", "accept", "testdata", "records")
	records := []string{filepath.Join(dir, "h100-pass.dsse.json"), filepath.Join(dir, "h100-regressed-multi.dsse.json"), filepath.Join(dir, "h100-nccl-fail.dsse.json")}
	out := filepath.Join(t.TempDir(), "report.html")
	streams, _, _, errOut := cli.TestStreams()
	if code := cli.Run(context.Background(), append([]string{"report", "--key", filepath.Join(dir, "test.pub"), "--out", out}, records...), streams); code != 0 {
		t.Fatalf("gpuctl report: exit %d: %s", code, errOut)
	}
	page := LoadAndCheck(t, exe, out, "report-regressions-nccl-multi.png", records)
	h, err := record.ReadFile(records[1])
	if err != nil {
		t.Fatal(err)
	}
	regs := h.Predicate.Regressions
	if len(regs) != 9 {
		t.Fatalf("the fixture has %d regressions, want 9 (busbw and one per GPU)", len(regs))
	}
	first := regs[0].Kind + ": " + regs[0].Message
	want := []Cell{{Value: "-1", Text: "–", Drawn: true}, {Value: "9", Text: "9 " + first + " (and 8 more)", Drawn: true}, {Value: "-1", Text: "–", Drawn: true}}
	if !slices.Equal(page.FleetRegressions, want) {
		t.Errorf("regressions cells:\n%+v\nwant\n%+v", page.FleetRegressions, want)
	}
	want = []Cell{{Text: "–", Drawn: true}, {Value: "PASS", Text: "PASS 222.88 GB/s at 10 GiB over GPUDirectTCPX_v7, with gpu-node-5", Drawn: true}, {Text: "–", Drawn: true}}
	if !slices.Equal(page.FleetNCCLMulti, want) {
		t.Errorf("nccl-multi cells:\n%+v\nwant\n%+v", page.FleetNCCLMulti, want)
	}
	var listed []string
	for _, r := range regs {
		listed = append(listed, r.Kind+": "+r.Message)
	}
	if got := page.Nodes[1].Regressions; !slices.Equal(got, listed) {
		t.Errorf("the section lists regressions\n%v\nwant the record's\n%v", got, listed)
	}
	for i, r := range listed[1:] {
		if !strings.Contains(r, "on GPU "+strconv.Itoa(i)+" (UUID "+h.Predicate.Hardware.UUIDs[i]+", serial "+h.Predicate.Hardware.Serials[i]) {
			t.Errorf("health regression %d does not name GPU %d: %s", i+1, i, r)
		}
	}
	if got := page.Nodes[1].Stages["nccl-multi"]; got != "PASS" {
		t.Errorf("the section's nccl-multi stage shows %q", got)
	}
	if len(page.SortedByRegressions) == 0 || page.SortedByRegressions[0] != records[1] {
		t.Errorf("sorted by regressions (descending): %v, want %s first", page.SortedByRegressions, records[1])
	}
}
