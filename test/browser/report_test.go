package browser

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/cli"
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
