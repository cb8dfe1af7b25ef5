package render

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/report"
)

func testReport() *report.Report {
	pts := []report.Point{{SizeBytes: 8, BusBandwidthGBps: 0.01}, {SizeBytes: 1 << 20, BusBandwidthGBps: 40}, {SizeBytes: 1 << 30, BusBandwidthGBps: 300}, {SizeBytes: 8 << 30, BusBandwidthGBps: 470.5,
		OutOfPlace: &record.NCCLMeasurement{TimeUs: 7983.5, AlgbwGBps: 268.99, BusBandwidthGBps: 470.5}}}
	return &report.Report{KeyChecked: true, Fleet: map[diag.Verdict]int{diag.Pass: 1, diag.Fail: 1},
		Nodes: []report.Node{
			{Record: "a.json", HasPredicate: true, Verified: true, Trust: report.TrustVerified, Signed: true, KeyID: "SHA256:abcdef0123456789abcdef", Name: `gpu<script>alert(1)</script>`, RunID: "20261129t154400-a1b2", Verdict: diag.Pass,
				Stages: []report.StageOutcome{{Name: "nccl", Verdict: diag.Pass, Reason: `"><img src=x onerror=alert(1)>`,
					Evidence: []record.Evidence{{Name: "nccl.all-reduce.log", Bytes: 2113, SHA256: strings.Repeat("ab", 32)}}}},
				NCCL: &report.NCCL{Verdict: diag.Pass, BusBandwidthGBps: 470.5, LargestBytes: 8 << 30, RowsRecorded: true, Points: pts,
					Baseline: &report.Baseline{SKU: "h100-sxm-x8", MinGBps: 333, MinAlgo: "RING", ExpectedGBps: 450, ExpectedAlgo: "NVLS"}},
				Topology: &report.Topology{Devices: []string{"GPU0", "GPU1"},
					Cells: [][]report.Cell{{{Link: "X", Class: report.LinkSelf}, {Link: "NV18", Class: report.LinkNVLink}}, {{Link: "NV18", Class: report.LinkNVLink}, {Link: "X", Class: report.LinkSelf}}}}},
			{Record: "old.json", HasPredicate: true, Trust: report.TrustUnverified, Signed: true, Name: "old", Verdict: diag.Fail,
				NCCL: &report.NCCL{Verdict: diag.Fail, BusBandwidthGBps: 100, LargestBytes: 8 << 30}},
		}}
}

func TestReportHTML(t *testing.T) {
	var b bytes.Buffer
	if err := ReportHTML(&b, testReport(), "t"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	// Escaped, wherever a record's text lands.
	for _, bad := range []string{"<script>alert", "<img src=x"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}
	if !strings.Contains(page, "gpu&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("node name not shown escaped")
	}
	// One point per message size, x ascending (log scale), y falling as busbw rises.
	re := regexp.MustCompile(`<circle class="point" cx="([0-9.]+)" cy="([0-9.]+)" r="3.5" data-size="(\d+)" data-busbw="([0-9.]+)">`)
	m := re.FindAllStringSubmatch(page, -1)
	if len(m) != 4 {
		t.Fatalf("%d points, want 4", len(m))
	}
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	for i := 1; i < len(m); i++ {
		if num(m[i][1]) <= num(m[i-1][1]) || num(m[i][2]) >= num(m[i-1][2]) {
			t.Errorf("point %d (%v) does not lie right of and above point %d (%v)", i, m[i][1:], i-1, m[i-1][1:])
		}
	}
	// Log x: 8 B .. 8 GiB spans 30 doublings; 1 MiB is 17 of them.
	left, right := num(m[0][1]), num(m[3][1])
	if got := (num(m[1][1]) - left) / (right - left); got < 17.0/30-0.01 || got > 17.0/30+0.01 {
		t.Errorf("1 MiB at %.3f of the axis, want %.3f (log2 scale)", got, 17.0/30)
	}
	for _, want := range []string{`<line class="baseline"`, "minimum 333 GB/s (RING)", "expected 450 GB/s (NVLS)", `<table class="fleet sortable"`,
		`<td class="l-nvlink" title="nvlink">NV18</td>`, `<td class="mono">` + strings.Repeat("ab", 32) + `</td>`, `class="note no-rows"`, "8 GiB",
		`http-equiv="Content-Security-Policy" content="default-src 'none'`,
		`<td class="mono run" data-value="20261129t154400-a1b2">20261129t154400-a1b2</td><td class="mono record" data-value="a.json">a.json</td>`,
		`<td class="mono run" data-value="">–</td><td class="mono record" data-value="old.json">old.json</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The old record (no rows) has no curve: one svg for two nodes.
	if n := strings.Count(page, `<svg class="curve"`); n != 1 {
		t.Errorf("%d curves, want 1", n)
	}
	if regexp.MustCompile(`(?i)(src|href)="(https?:)?//|@import|url\(`).MatchString(page) {
		t.Error("the page refers to something outside itself")
	}
}

func TestSizeLabelAndNiceCeil(t *testing.T) {
	for b, want := range map[int64]string{8: "8 B", 1024: "1 KiB", 256 << 20: "256 MiB", 2 << 30: "2 GiB", 3 << 29: "1.5 GiB"} {
		if got := SizeLabel(b); got != want {
			t.Errorf("SizeLabel(%d) = %q, want %q", b, got, want)
		}
	}
	for v, want := range map[float64]float64{0.5: 1, 508: 600, 360: 400, 1000: 1000, 1001: 1200, 12: 12} {
		if got := niceCeil(v); got != want {
			t.Errorf("niceCeil(%g) = %g, want %g", v, got, want)
		}
	}
}

// TestReportChartBaseline: with the h100 fail record's close figures
// (minimum 480, expected 450) the two labels stand in a legend above the
// plot, one row each, and the lines start at the baseline's min_bytes
// (1 GiB) and end at the largest size; the y axis's name stands apart
// from the tick labels.
func TestReportChartBaseline(t *testing.T) {
	p := testReport()
	p.Nodes = p.Nodes[:1]
	n := &p.Nodes[0]
	n.NCCL.Points = []report.Point{{SizeBytes: 256 << 20, BusBandwidthGBps: 420.42}, {SizeBytes: 512 << 20, BusBandwidthGBps: 436.02},
		{SizeBytes: 1 << 30, BusBandwidthGBps: 466.57}, {SizeBytes: 2 << 30, BusBandwidthGBps: 470.73}}
	n.NCCL.Baseline = &report.Baseline{SKU: "h100-sxm-x8", MinGBps: 480, MinAlgo: "RING", ExpectedGBps: 450, ExpectedAlgo: "NVLS", MinBytes: 1 << 30}
	var b bytes.Buffer
	if err := ReportHTML(&b, p, "t"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	label := func(class string) (x, y float64, text string) {
		m := regexp.MustCompile(`<text class="` + class + `" x="([0-9.]+)" y="([0-9.]+)">([^<]*)</text>`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no %s text", class)
		}
		return num(m[1]), num(m[2]), m[3]
	}
	_, minY, minText := label("bl-label")
	_, exY, exText := label("ex-label")
	if minText != "minimum 480 GB/s (RING) from 1 GiB" || exText != "expected 450 GB/s (NVLS)" {
		t.Errorf("labels %q, %q", minText, exText)
	}
	if d := math.Abs(minY - exY); d < 13 {
		t.Errorf("labels %g apart vertically (11px text): they overprint", d)
	}
	line := func(class string) (x1, x2, y float64) {
		m := regexp.MustCompile(`<line class="` + class + `" x1="([0-9.]+)" x2="([0-9.]+)" y1="([0-9.]+)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no %s line", class)
		}
		return num(m[1]), num(m[2]), num(m[3])
	}
	x1, x2, y := line("baseline")
	ex1, ex2, ey := line("expected")
	if math.Max(minY, exY) >= math.Min(y, ey)-4 {
		t.Errorf("legend rows at %g, %g do not stand above the lines at %g, %g", minY, exY, y, ey)
	}
	pts := regexp.MustCompile(`<circle class="point" cx="([0-9.]+)" cy="[0-9.]+" r="3.5" data-size="(\d+)"`).FindAllStringSubmatch(page, -1)
	cx := map[string]float64{}
	for _, m := range pts {
		cx[m[2]] = num(m[1])
	}
	if want := cx[strconv.Itoa(1<<30)]; x1 != want || ex1 != want {
		t.Errorf("lines start at %g, %g; the 1 GiB point is at %g", x1, ex1, want)
	}
	if want := cx[strconv.Itoa(2<<30)]; x2 != want || ex2 != want {
		t.Errorf("lines end at %g, %g; the largest size is at %g", x2, ex2, want)
	}
	if !strings.Contains(page, `<text class="tick axis-name" transform="rotate(-90)"`) {
		t.Error("the y axis's name is not set vertically beside the tick labels")
	}
}

// A topology of devices but no rows shows the note, not an empty grid.
func TestReportTopologyWithoutRows(t *testing.T) {
	p := testReport()
	p.Nodes = p.Nodes[:1]
	p.Nodes[0].Topology = &report.Topology{Devices: []string{"GPU0", "GPU1"}}
	var b bytes.Buffer
	if err := ReportHTML(&b, p, "t"); err != nil {
		t.Fatal(err)
	}
	if page := b.String(); strings.Contains(page, `<table class="topo">`) || !strings.Contains(page, `class="note no-topology"`) {
		t.Error("devices without a matrix: want the no-topology note and no grid")
	}
}

// A record that did not verify has no GPUs to count: its fleet row says
// "–", not 0.
func TestReportFleetUnverifiedGPUs(t *testing.T) {
	p := testReport()
	p.Nodes = append(p.Nodes, report.Node{Record: "forged.json", Problems: []string{"signature: no key verified it"}})
	p.Unverified++
	var b bytes.Buffer
	if err := ReportHTML(&b, p, "t"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	row := page[strings.Index(page, `data-record="forged.json"`):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, `<td class="num gpus" data-value="-1">–</td>`) || strings.Contains(row, `data-value="0">0<`) {
		t.Errorf("unverified fleet row: %s", row)
	}
}

// section is the HTML of the node section of record in page.
func section(t *testing.T, page, record string) string {
	t.Helper()
	for _, s := range strings.Split(page, `<section class="node"`)[1:] {
		if strings.Contains(s, `record <code>`+record+`</code>`) {
			return s[:strings.Index(s, "</section>")]
		}
	}
	t.Fatalf("no section of %s", record)
	return ""
}

// TestReportTrust: each record's section and fleet row carry its trust
// (data-trust and the words); only the verified record's badges have the
// verdict's colours; a forged unsigned PASS says "PASS — unsigned" on a
// hatched badge, a signed record read without a key "PASS — not verified",
// a refused one "REFUSED"; nothing of theirs has a verified badge's class.
func TestReportTrust(t *testing.T) {
	p := testReport()
	stages := []report.StageOutcome{{Name: "nccl", Verdict: diag.Pass}}
	p.KeyChecked = false
	p.Nodes = append(p.Nodes,
		report.Node{Record: "forged.json", HasPredicate: true, Trust: report.TrustUnsigned, Name: "forged", Verdict: diag.Pass, Stages: stages, StagesVerdict: diag.Pass},
		report.Node{Record: "signed.json", HasPredicate: true, Trust: report.TrustUnverified, Signed: true, Name: "signed", Verdict: diag.Pass, Stages: stages, StagesVerdict: diag.Pass},
		report.Node{Record: "refused.json", Trust: report.TrustUnverified, Refused: true, Problems: []string{`malformed record: $: member "PAYLOAD" and "payload" differ only in case`}})
	var b bytes.Buffer
	if err := ReportHTML(&b, p, "t"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, c := range []struct{ record, trust, words, badge string }{
		{"a.json", "verified", "verified", `<span class="verdict v-pass record-verdict">PASS</span>`},
		{"forged.json", "unsigned", "unsigned", `<span class="verdict nv nv-pass record-verdict">PASS — unsigned</span>`},
		{"signed.json", "unverified", "signed, not verified", `<span class="verdict nv nv-pass record-verdict">PASS — not verified</span>`},
		{"refused.json", "unverified", "not verified (refused)", `<span class="verdict nv nv-refused record-verdict">REFUSED</span>`},
	} {
		sec := section(t, page, c.record)
		if !strings.Contains(sec, `data-trust="`+c.trust+`">`) || !strings.Contains(sec, `data-trust="`+c.trust+`">`+c.words+`</span>`) || !strings.Contains(sec, c.badge) {
			t.Errorf("%s: section lacks trust %q (%q) or badge %s:\n%s", c.record, c.trust, c.words, c.badge, sec)
		}
		if c.trust != "verified" && regexp.MustCompile(`class="verdict v-`).MatchString(sec) {
			t.Errorf("%s (%s) has a verified badge:\n%s", c.record, c.trust, sec)
		}
		row := page[strings.Index(page, `data-record="`+c.record+`" data-trust="`+c.trust+`"`):]
		row = row[:strings.Index(row, "</tr>")]
		if !strings.Contains(row, c.words+"</span>") {
			t.Errorf("%s: fleet row lacks %q: %s", c.record, c.words, row)
		}
	}
	if !strings.Contains(page, `&#34;PAYLOAD&#34; and &#34;payload&#34; differ only in case`) {
		t.Error("the refused record's reason is not shown")
	}
	counts := page[strings.Index(page, `<p id="fleet-counts">`):]
	counts = counts[:strings.Index(counts, "</p>")]
	for _, want := range []string{`<span class="verdict v-pass">PASS</span> 1`, `<span class="verdict nv nv-pass">PASS — unsigned</span> 1`,
		`<span class="verdict nv nv-pass">PASS — not verified</span> 1`, `<span class="verdict nv nv-fail">FAIL — not verified</span> 1`, `<span class="verdict nv nv-refused">REFUSED</span> 1`} {
		if !strings.Contains(counts, want) {
			t.Errorf("fleet counts lack %s: %s", want, counts)
		}
	}
}

// TestReportVerdictDisagreement: a record whose stages give another
// verdict than it states says so in its section and its fleet row.
func TestReportVerdictDisagreement(t *testing.T) {
	p := testReport()
	n := &p.Nodes[0]
	n.Stages[0].Verdict = diag.Fail
	n.StagesVerdict, n.Disagreement = diag.Fail, "the record says PASS, but its stages give FAIL (nccl FAIL)"
	var b bytes.Buffer
	if err := ReportHTML(&b, p, "t"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if sec := section(t, page, "a.json"); !strings.Contains(sec, `<p class="disagree" data-disagree="FAIL">Verdict and stages disagree: the record says PASS, but its stages give FAIL (nccl FAIL).</p>`) {
		t.Errorf("section does not flag the disagreement:\n%s", sec)
	}
	if sec := section(t, page, "old.json"); strings.Contains(sec, "disagree") {
		t.Error("a record without disagreement is flagged")
	}
	row := page[strings.Index(page, `data-record="a.json"`):]
	if row = row[:strings.Index(row, "</tr>")]; !strings.Contains(row, `<span class="disagree">the record says PASS`) {
		t.Errorf("fleet row: %s", row)
	}
}

// The fleet table's regressions column shows how many and the first (the
// node's section lists them all); "none since" a previous record that
// nothing got worse since, "–" without one. Its nccl-multi column shows the
// stage's verdict (hatched when not verified), the lowest busbw with its
// size and transport and the peers, or the node count when the record
// counts them only; "–" without the stage.
func TestReportHTMLRegressionsAndNCCLMulti(t *testing.T) {
	r := testReport()
	r.Nodes[0].Regressions = []string{"busbw-dropped: NCCL busbw 376.6 GB/s is 20 % below the previous run's 470.7 GB/s (more than 10 %)",
		"gpu-health-new: new GPU health finding on GPU 3 (UUID GPU-4, serial 1320000000004, bus 00000000:5D:00.0): xid: Xid 79"}
	r.Nodes[0].Previous = "20261128t120000-9f3c (PASS)"
	r.Nodes[0].NCCLMulti = &report.Multi{Verdict: diag.Pass, Reason: "busbw 222.9 GB/s at 10 GiB across a, b meets the tcpx multi-node minimum 80 GB/s; 0 wrong",
		BusBandwidthGBps: 222.88, LargestBytes: 10 << 30, Transport: "GPUDirectTCPX_v7", Peers: []string{"gpu-node-5"}, Groups: []string{"r-m0"}, Nodes: 2}
	r.Nodes[1].NCCLMulti = &report.Multi{Verdict: diag.Fail, Reason: "below", BusBandwidthGBps: 40, Nodes: 12}
	third := report.Node{Record: "c.json", HasPredicate: true, Trust: report.TrustUnsigned, Name: "c", Verdict: diag.Pass, Previous: "r0 (PASS)"}
	r.Nodes = append(r.Nodes, third)
	var b bytes.Buffer
	if err := ReportHTML(&b, r, "t"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<th data-type="number">nccl-multi</th>`, `<th data-type="number">regressions</th>`,
		`<td class="regressions" data-value="2" data-count="2"><strong class="s-warning">2</strong> busbw-dropped: NCCL busbw 376.6 GB/s is 20 % below the previous run&#39;s 470.7 GB/s (more than 10 %) <span class="note">(and 1 more)</span></td>`,
		`<td class="regressions" data-value="-1" data-count="-1">–</td>`,
		`<td class="regressions" data-value="0" data-count="0">none since r0 (PASS)</td>`,
		`data-verdict="PASS" title="busbw 222.9 GB/s at 10 GiB across a, b meets the tcpx multi-node minimum 80 GB/s; 0 wrong"><span class="verdict v-pass">PASS</span> 222.88 GB/s at 10 GiB over GPUDirectTCPX_v7, with gpu-node-5</td>`,
		`<span class="verdict nv nv-fail">FAIL</span> 40 GB/s, across 12 nodes</td>`,
		`<td class="nccl-multi" data-value="-1">–</td>`,
		`<li class="s-warning">gpu-health-new: new GPU health finding on GPU 3 (UUID GPU-4, serial 1320000000004, bus 00000000:5D:00.0): xid: Xid 79</li>`,
		`<p class="nccl-multi">nccl-multi (all_reduce across nodes): <span class="verdict v-pass">PASS</span> 222.88 GB/s at 10 GiB over GPUDirectTCPX_v7, with gpu-node-5; groups r-m0: busbw 222.9`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
