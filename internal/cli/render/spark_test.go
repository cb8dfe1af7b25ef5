package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// The 8x H100 run of the corpus: 256 MiB .. 2 GiB.
var h100Curve = &BusbwCurve{MinGBps: 333, Points: []CurvePoint{{256 << 20, 420.42}, {512 << 20, 436.02}, {1 << 30, 466.57}, {2 << 30, 470.73}}}

func TestSparkline(t *testing.T) {
	if got, want := Sparkline(h100Curve), "busbw by size  256 MiB ▇▇██ 2 GiB  420.4–470.7 GB/s (minimum 333)"; got != want {
		t.Errorf("Sparkline = %q, want %q", got, want)
	}
	// Bars scale from 0: a small size is a low bar; the minimum raises the top.
	c := &BusbwCurve{Points: []CurvePoint{{8, 0}, {1 << 20, 50}, {1 << 30, 100}}}
	if got := Sparkline(c); !strings.Contains(got, " ▁▅█ ") {
		t.Errorf("Sparkline = %q, want bars ▁▅█", got)
	}
	c.MinGBps = 200
	if got := Sparkline(c); !strings.Contains(got, " ▁▃▅ ") {
		t.Errorf("with a 200 GB/s minimum: %q, want bars ▁▃▅", got)
	}
	if Sparkline(nil) != "" || Sparkline(&BusbwCurve{}) != "" {
		t.Error("a sparkline without points")
	}
}

// parse nccl's table ends with the sparkline on a terminal only.
func TestProbeReportSparklineOnTTY(t *testing.T) {
	v := ProbeView{Label: "nccl (text)", Verdict: diag.ReportOK, Summary: "all_reduce_perf", Curve: h100Curve}
	var plain, tty bytes.Buffer
	if err := ProbeReport(&plain, FormatTable, false, nil, v); err != nil {
		t.Fatal(err)
	}
	if err := ProbeReport(&tty, FormatTable, true, nil, v); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "busbw by size") || strings.ContainsRune(plain.String(), '█') {
		t.Errorf("plain output has the sparkline:\n%s", plain.String())
	}
	if !strings.HasSuffix(tty.String(), "\nbusbw by size  256 MiB ▇▇██ 2 GiB  420.4–470.7 GB/s (minimum 333)\n") {
		t.Errorf("tty output lacks the sparkline at the end:\n%s", tty.String())
	}
}

// accept's node table shows the sparkline on a terminal only.
func TestAcceptTextSparklineOnTTY(t *testing.T) {
	n := AcceptNode{Node: "gpu-node-1", RunID: "r", Verdict: diag.Pass, EvidenceDir: "ev", Curve: h100Curve,
		Stages: []AcceptStage{{Name: "nccl", Verdict: diag.Pass, Reason: "ok", Cause: "node"}}}
	var plain, tty bytes.Buffer
	if err := AcceptText(&plain, false, n); err != nil {
		t.Fatal(err)
	}
	if err := AcceptText(&tty, true, n); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "busbw by size") {
		t.Errorf("plain output has the sparkline:\n%s", plain.String())
	}
	if !strings.Contains(tty.String(), "  nccl   PASS     node   ok\n  busbw by size  256 MiB ▇▇██ 2 GiB  420.4–470.7 GB/s (minimum 333)\n  evidence: ev\n") {
		t.Errorf("tty output:\n%s", tty.String())
	}
	n.Curve = nil
	tty.Reset()
	if err := AcceptText(&tty, true, n); err != nil || strings.Contains(tty.String(), "busbw") {
		t.Errorf("no nccl rows, tty output:\n%s", tty.String())
	}
}
