package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// ReportPage is the view of `gpuctl report`: one section per record and,
// for several records, a fleet table first. internal/cli fills it from
// internal/report's model.
type ReportPage struct {
	Title string
	// KeyChecked says whether signatures were verified; without a key the
	// page says that the records were read unverified.
	KeyChecked bool
	// Fleet is set for more than one record.
	Fleet *ReportFleet
	Nodes []ReportNode
}

// ReportFleet counts the nodes per verdict.
type ReportFleet struct {
	Counts []ReportCount
	// Unverified is the number of records that did not verify.
	Unverified int
}

// ReportCount is one verdict's count.
type ReportCount struct {
	Verdict diag.Verdict
	N       int
}

// ReportNode is one record.
type ReportNode struct {
	// ID is the section's anchor ("node-1").
	ID     string
	Record string
	// Verified: the key verified it; Problems: what did not (with a key).
	Verified     bool
	Problems     []string
	KeyID        string
	HasPredicate bool
	Name, RunID  string
	Verdict      diag.Verdict
	// Facts are label/value pairs shown under the heading.
	Facts        []ReportFact
	FirstProblem string
	Stages       []ReportStage
	GPUs         []ReportGPU
	NodeFindings []diag.Finding
	Regressions  []string
	NCCL         *ReportNCCL
	Topology     *ReportTopology
}

// ReportFact is one label and value.
type ReportFact struct{ Label, Value string }

// ReportStage is one stage.
type ReportStage struct {
	Name     string
	Verdict  diag.Verdict
	Cause    string
	Reason   string
	Duration string
	Evidence []ReportEvidence
}

// ReportEvidence is one evidence file.
type ReportEvidence struct {
	Name   string
	Bytes  int64
	SHA256 string
}

// ReportGPU is one GPU row of the health table.
type ReportGPU struct {
	Index                               int
	BusID, UUID, Serial, VBIOS, InfoROM string
	// Worst is the worst finding's severity ("" when healthy).
	Worst    diag.Severity
	Findings []diag.Finding
}

// ReportNCCL is the nccl stage: the curve's points (one per message size,
// ascending), the result at the largest size and the baseline.
type ReportNCCL struct {
	Verdict      diag.Verdict
	BusbwGBps    float64
	LargestBytes int64
	// RowsRecorded is false for records written before nccl.rows existed.
	RowsRecorded bool
	Points       []ReportPoint
	Baseline     *ReportBaseline
}

// ReportPoint is one message size.
type ReportPoint struct {
	SizeBytes  int64
	BusbwGBps  float64
	OutOfPlace *ReportHalf
	InPlace    *ReportHalf
}

// ReportHalf is the out-of-place or in-place result of one size (TimeUs 0:
// not recorded; Wrong "" when validation was off).
type ReportHalf struct {
	TimeUs, AlgbwGBps, BusbwGBps float64
	Wrong                        string
}

// ReportBaseline is the baseline the stage was judged against.
type ReportBaseline struct {
	SKU          string
	MinGBps      float64
	MinAlgo      string
	ExpectedGBps float64
	ExpectedAlgo string
	// MinBytes is the smallest message size the baseline applies to (0:
	// every size).
	MinBytes int64
	Origin   string
	Sources  []string
}

// ReportTopology is the topo -m grid.
type ReportTopology struct {
	Devices []string
	// Labels are the column heads: the device, with a NIC's name.
	Labels []string
	Rows   [][]ReportCell
}

// ReportCell is one link; Class is a CSS class ("nvlink", "pcie", ...).
type ReportCell struct{ Link, Class string }

// ReportHTML writes the page: one self-contained HTML document (inline
// CSS, SVG and a few lines of script for sorting tables; no request
// leaves the page: its Content-Security-Policy allows none).
func ReportHTML(w io.Writer, p ReportPage) error {
	type nodeView struct {
		ReportNode
		Chart *chart
	}
	type pageView struct {
		ReportPage
		Nodes []nodeView
	}
	v := pageView{ReportPage: p}
	for _, n := range p.Nodes {
		nv := nodeView{ReportNode: n}
		if n.NCCL != nil && len(n.NCCL.Points) > 0 {
			nv.Chart = newChart(n.NCCL)
		}
		v.Nodes = append(v.Nodes, nv)
	}
	return reportTemplate.Execute(w, v)
}

// chart is the busbw curve's geometry, in SVG user units.
type chart struct {
	Width, Height            float64
	Left, Right, Top, Bottom float64
	Points                   []chartPoint
	Line                     string
	XTicks, YTicks           []chartTick
	Baseline, Expected       *chartLine
	// Legend is the baseline lines' labels, one row each above the plot
	// (so that two close lines' labels never overprint).
	Legend []chartLegend
	// YMid is the plot's vertical middle, where the y axis's name stands.
	YMid float64
}

// chartLegend is one legend row: a swatch of the line's class and its label.
type chartLegend struct {
	Y          float64
	Class      string // the line's class: baseline, expected
	LabelClass string // its text's: bl-label, ex-label
	Text       string
}

type chartPoint struct {
	X, Y      float64
	SizeBytes int64
	BusbwGBps float64
	Label     string
}

type chartTick struct {
	Pos   float64
	Label string
}

type chartLine struct {
	X1, X2, Y float64
	Label     string
}

// newChart lays the points out on a log2 x axis (message size) and a
// linear y axis from 0 to above the highest of the points and the
// baseline's figures.
func newChart(n *ReportNCCL) *chart {
	c := &chart{Width: 640, Height: 300, Left: 56, Right: 16, Top: 16, Bottom: 40}
	if b := n.Baseline; b != nil && b.MinGBps > 0 {
		c.Legend = append(c.Legend, chartLegend{Class: "baseline", LabelClass: "bl-label"})
		if b.ExpectedGBps > 0 {
			c.Legend = append(c.Legend, chartLegend{Class: "expected", LabelClass: "ex-label"})
		}
	}
	for i := range c.Legend {
		c.Legend[i].Y = float64(14 * (i + 1))
	}
	c.Top += float64(14 * len(c.Legend))
	plotW, plotH := c.Width-c.Left-c.Right, c.Height-c.Top-c.Bottom
	lo, hi := math.Inf(1), math.Inf(-1)
	top := 0.0
	for _, p := range n.Points {
		x := math.Log2(math.Max(float64(p.SizeBytes), 1))
		lo, hi = math.Min(lo, x), math.Max(hi, x)
		top = math.Max(top, p.BusbwGBps)
	}
	if b := n.Baseline; b != nil {
		top = math.Max(top, math.Max(b.MinGBps, b.ExpectedGBps))
	}
	top = niceCeil(top * 1.08)
	xOf := func(size int64) float64 {
		if hi == lo {
			return c.Left + plotW/2
		}
		return c.Left + plotW*(math.Log2(math.Max(float64(size), 1))-lo)/(hi-lo)
	}
	yOf := func(gbps float64) float64 { return c.Top + plotH*(1-gbps/top) }
	c.YMid = round1(c.Top + plotH/2)
	var line []string
	for _, p := range n.Points {
		cp := chartPoint{X: round1(xOf(p.SizeBytes)), Y: round1(yOf(p.BusbwGBps)), SizeBytes: p.SizeBytes, BusbwGBps: p.BusbwGBps,
			Label: fmt.Sprintf("%s: busbw %s GB/s", SizeLabel(p.SizeBytes), gbps(p.BusbwGBps))}
		c.Points = append(c.Points, cp)
		line = append(line, fmt.Sprintf("%g,%g", cp.X, cp.Y))
	}
	c.Line = strings.Join(line, " ")
	// At most about 10 size labels: every k-th point.
	step := (len(n.Points) + 9) / 10
	for i, p := range n.Points {
		if i%step == 0 || i == len(n.Points)-1 {
			c.XTicks = append(c.XTicks, chartTick{Pos: round1(xOf(p.SizeBytes)), Label: SizeLabel(p.SizeBytes)})
		}
	}
	for i := 0; i <= 4; i++ {
		v := top * float64(i) / 4
		c.YTicks = append(c.YTicks, chartTick{Pos: round1(yOf(v)), Label: gbps(v)})
	}
	if b := n.Baseline; b != nil && b.MinGBps > 0 {
		label := "minimum " + gbps(b.MinGBps) + " GB/s"
		if b.MinAlgo != "" {
			label += " (" + b.MinAlgo + ")"
		}
		if b.MinBytes > 0 {
			label += " from " + SizeLabel(b.MinBytes)
		}
		c.Baseline = &chartLine{Y: round1(yOf(b.MinGBps)), Label: label}
		if b.ExpectedGBps > 0 {
			label := "expected " + gbps(b.ExpectedGBps) + " GB/s"
			if b.ExpectedAlgo != "" {
				label += " (" + b.ExpectedAlgo + ")"
			}
			c.Expected = &chartLine{Y: round1(yOf(b.ExpectedGBps)), Label: label}
		}
		// The baseline holds from min_bytes up: the lines start there (at
		// the right end when every size is below it).
		x1, x2 := c.Left, c.Width-c.Right
		if len(n.Points) > 0 {
			x2 = round1(xOf(n.Points[len(n.Points)-1].SizeBytes))
			if b.MinBytes > n.Points[0].SizeBytes {
				x1 = math.Min(round1(xOf(b.MinBytes)), x2)
			}
		}
		for _, l := range []*chartLine{c.Baseline, c.Expected} {
			if l != nil {
				l.X1, l.X2 = x1, x2
			}
		}
		c.Legend[0].Text = c.Baseline.Label
		if c.Expected != nil {
			c.Legend[1].Text = c.Expected.Label
		}
	}
	return c
}

// niceCeil rounds v up to a round figure (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6
// or 8 times a power of ten; at least 1).
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func gbps(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// SizeLabel writes a message size the way nccl-tests' -b/-e take it, in
// binary units: "8 B", "256 KiB", "2 GiB" (fractions to one place).
func SizeLabel(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(b), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + " " + units[u]
}

func verdictRank(v diag.Verdict) int {
	switch v {
	case diag.Fail:
		return 3
	case diag.Inconclusive:
		return 2
	case diag.Pass:
		return 1
	}
	return 0
}

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"lower":   func(v any) string { return strings.ToLower(fmt.Sprint(v)) },
	"rank":    verdictRank,
	"size":    SizeLabel,
	"gbps":    gbps,
	"us":      func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"add":     func(a, b float64) float64 { return a + b },
	"sub":     func(a, b float64) float64 { return a - b },
	"bytes":   func(b int64) string { return strconv.FormatInt(b, 10) },
	"shortID": short,
}).Parse(reportHTML))

const reportHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 6px}h3{font-size:15px;margin:18px 0 6px}
.note{color:#5b6475}.warn{color:#8a5a00}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #d5d9e0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f4f7}th[data-type]{cursor:pointer}th[aria-sort=ascending]::after{content:" \25B2"}th[aria-sort=descending]::after{content:" \25BC"}
table.fleet td:first-child{white-space:nowrap}td.num{text-align:right;font-variant-numeric:tabular-nums}code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.verdict{font-weight:600;padding:1px 6px;border-radius:3px;white-space:nowrap}
.v-pass{background:#d9f2de;color:#135c24}.v-fail{background:#fbd9d9;color:#8c1515}.v-inconclusive{background:#fdecc8;color:#7a4d00}.v-skipped{background:#eceef1;color:#5b6475}
.s-error{color:#8c1515;font-weight:600}.s-warning{color:#7a4d00;font-weight:600}.s-info{color:#5b6475}
section.node{border-top:2px solid #d5d9e0;margin-top:24px}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:6px 0}dl.facts dt{color:#5b6475}dl.facts dd{margin:0}
svg.curve{background:#fafbfc;border:1px solid #d5d9e0}svg.curve .axis{stroke:#8a93a3;stroke-width:1}svg.curve .grid{stroke:#e3e6eb;stroke-width:1}
svg.curve .tick{font-size:11px;fill:#5b6475}svg.curve .line{fill:none;stroke:#2f6fd6;stroke-width:2}svg.curve .point{fill:#2f6fd6}
svg.curve .baseline{stroke:#c0392b;stroke-width:1.5;stroke-dasharray:6 4}svg.curve .expected{stroke:#27884a;stroke-width:1;stroke-dasharray:2 3}
svg.curve .bl-label{font-size:11px;fill:#c0392b}svg.curve .ex-label{font-size:11px;fill:#27884a}
table.topo td{text-align:center;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;padding:2px 5px}
.l-self{background:#eceef1;color:#8a93a3}.l-nvlink{background:#2e9d57;color:#fff}.l-pcie{background:#8cc4ee}.l-host{background:#cfe3f5}.l-numa{background:#fbe7a1}.l-system{background:#f4b39a}.l-other{background:#fff}
.legend span{display:inline-block;padding:1px 6px;margin-right:6px;border:1px solid #d5d9e0}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .KeyChecked}}<p class="note" id="key-note">Signatures, payloads and subjects were verified with the given public key.</p>
{{else}}<p class="warn" id="key-note">Records read without a key: signatures were <strong>not</strong> verified (gpuctl report --key PUB verifies them).</p>
{{end}}
{{with .Fleet}}<h2>Fleet</h2>
<p id="fleet-counts">{{range .Counts}}<span class="verdict v-{{lower .Verdict}}">{{.Verdict}}</span> {{.N}} &nbsp; {{end}}{{if .Unverified}}<span class="verdict v-fail">NOT VERIFIED</span> {{.Unverified}}{{end}}</p>
<table class="fleet sortable" id="fleet">
<thead><tr><th data-type="text">node</th><th data-type="text">run</th><th data-type="text">record</th><th data-type="number">verdict</th><th data-type="number">busbw GB/s</th><th data-type="number">minimum GB/s</th><th data-type="number">GPUs</th><th data-type="text">driver</th><th data-type="text">first problem</th></tr></thead>
<tbody>
{{range $.Nodes}}<tr data-node="{{.Name}}" data-record="{{.Record}}">
<td data-value="{{.Name}}"><a href="#{{.ID}}">{{if .Name}}{{.Name}}{{else}}{{.Record}}{{end}}</a></td>
<td class="mono run" data-value="{{.RunID}}">{{if .RunID}}{{.RunID}}{{else}}–{{end}}</td><td class="mono record" data-value="{{.Record}}">{{.Record}}</td>
{{if .HasPredicate}}<td data-value="{{rank .Verdict}}"><span class="verdict v-{{lower .Verdict}}">{{.Verdict}}</span></td>
{{else}}<td data-value="4"><span class="verdict v-fail">NOT VERIFIED</span></td>
{{end}}{{with .NCCL}}<td class="num" data-value="{{.BusbwGBps}}">{{gbps .BusbwGBps}}</td><td class="num" data-value="{{with .Baseline}}{{.MinGBps}}{{else}}0{{end}}">{{with .Baseline}}{{gbps .MinGBps}}{{end}}</td>
{{else}}<td class="num" data-value="-1">–</td><td class="num" data-value="0"></td>
{{end}}{{if .HasPredicate}}<td class="num gpus" data-value="{{len .GPUs}}">{{len .GPUs}}</td>{{else}}<td class="num gpus" data-value="-1">–</td>{{end}}
<td data-value="{{range .Facts}}{{if eq .Label "driver"}}{{.Value}}{{end}}{{end}}">{{range .Facts}}{{if eq .Label "driver"}}{{.Value}}{{end}}{{end}}</td>
<td data-value="{{.FirstProblem}}">{{.FirstProblem}}</td>
</tr>
{{end}}</tbody>
</table>
{{end}}
{{range .Nodes}}<section class="node" id="{{.ID}}" data-node="{{.Name}}" data-verdict="{{if .HasPredicate}}{{.Verdict}}{{else}}NOT VERIFIED{{end}}">
<h2>{{if .Name}}{{.Name}}{{else}}{{.Record}}{{end}} {{if .HasPredicate}}<span class="verdict v-{{lower .Verdict}}">{{.Verdict}}</span>{{else}}<span class="verdict v-fail">NOT VERIFIED</span>{{end}}</h2>
<p class="note">record <code>{{.Record}}</code>{{if .Verified}}, signed by key <code>{{shortID .KeyID}}</code>{{end}}</p>
{{if .Problems}}<h3>Verification</h3><ul class="problems">{{range .Problems}}<li class="s-error">{{.}}</li>{{end}}</ul>{{end}}
{{if .HasPredicate}}
<dl class="facts">{{range .Facts}}<dt>{{.Label}}</dt><dd>{{.Value}}</dd>{{end}}</dl>
{{if .Regressions}}<h3>Regressions since the previous record</h3><ul>{{range .Regressions}}<li class="s-warning">{{.}}</li>{{end}}</ul>{{end}}
<h3>Stages</h3>
<table class="stages"><thead><tr><th>stage</th><th>verdict</th><th>cause</th><th>time</th><th>reason</th></tr></thead><tbody>
{{range .Stages}}<tr data-stage="{{.Name}}" data-verdict="{{.Verdict}}"><td>{{.Name}}</td><td><span class="verdict v-{{lower .Verdict}}">{{.Verdict}}</span></td><td>{{.Cause}}</td><td class="num">{{.Duration}}</td><td>{{.Reason}}</td></tr>
{{end}}</tbody></table>
<h3>GPU health</h3>
{{if .GPUs}}<table class="gpus"><thead><tr><th>GPU</th><th>bus ID</th><th>UUID</th><th>serial</th><th>VBIOS</th><th>InfoROM</th><th>health</th></tr></thead><tbody>
{{range .GPUs}}<tr><td class="num">{{.Index}}</td><td class="mono">{{.BusID}}</td><td class="mono">{{.UUID}}</td><td class="mono">{{.Serial}}</td><td class="mono">{{.VBIOS}}</td><td class="mono">{{.InfoROM}}</td>
<td>{{if .Findings}}{{range .Findings}}<div><span class="s-{{.Severity}}">{{.Severity}}</span> <code>{{.Rule}}</code> {{.Message}}</div>{{end}}{{else}}<span class="v-pass verdict">ok</span>{{end}}</td></tr>
{{end}}</tbody></table>
{{else}}<p class="note">No GPUs in the record (inventory did not run).</p>{{end}}
{{if .NodeFindings}}<ul>{{range .NodeFindings}}<li><span class="s-{{.Severity}}">{{.Severity}}</span> <code>{{.Rule}}</code> {{if .GPU}}{{.GPU}}: {{end}}{{.Message}}</li>{{end}}</ul>{{end}}
<h3>NCCL bus bandwidth</h3>
{{with .NCCL}}<p>all_reduce_perf: busbw <strong>{{gbps .BusbwGBps}} GB/s</strong> at {{size .LargestBytes}}, <span class="verdict v-{{lower .Verdict}}">{{.Verdict}}</span>{{with .Baseline}}; baseline <code>{{.SKU}}</code>: minimum {{gbps .MinGBps}} GB/s{{if .MinAlgo}} ({{.MinAlgo}}){{end}}{{if .MinBytes}} from {{size .MinBytes}}{{end}}{{if .ExpectedGBps}}, expected {{gbps .ExpectedGBps}} GB/s{{if .ExpectedAlgo}} ({{.ExpectedAlgo}}){{end}}{{end}} ({{.Origin}}){{end}}</p>
{{else}}<p class="note">The nccl stage did not run.</p>{{end}}
{{with .Chart}}{{$c := .}}<svg class="curve" xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="bus bandwidth by message size">
{{range .YTicks}}<line class="grid" x1="{{$c.Left}}" x2="{{sub $c.Width $c.Right}}" y1="{{.Pos}}" y2="{{.Pos}}"/><text class="tick" x="{{sub $c.Left 6}}" y="{{add .Pos 4}}" text-anchor="end">{{.Label}}</text>
{{end}}{{range .XTicks}}<text class="tick" x="{{.Pos}}" y="{{sub $c.Height 22}}" text-anchor="middle">{{.Label}}</text>
{{end}}<line class="axis" x1="{{.Left}}" x2="{{sub .Width .Right}}" y1="{{sub .Height .Bottom}}" y2="{{sub .Height .Bottom}}"/><line class="axis" x1="{{.Left}}" x2="{{.Left}}" y1="{{.Top}}" y2="{{sub .Height .Bottom}}"/>
<text class="tick" x="{{add .Left 4}}" y="{{sub .Height 6}}">message size (log scale)</text><text class="tick axis-name" transform="rotate(-90)" x="-{{.YMid}}" y="12" text-anchor="middle">GB/s</text>
{{range .Legend}}<line class="{{.Class}} swatch" x1="{{$c.Left}}" x2="{{add $c.Left 24}}" y1="{{sub .Y 4}}" y2="{{sub .Y 4}}"/><text class="{{.LabelClass}}" x="{{add $c.Left 30}}" y="{{.Y}}">{{.Text}}</text>
{{end}}{{with .Expected}}<line class="expected" x1="{{.X1}}" x2="{{.X2}}" y1="{{.Y}}" y2="{{.Y}}"/>
{{end}}{{with .Baseline}}<line class="baseline" x1="{{.X1}}" x2="{{.X2}}" y1="{{.Y}}" y2="{{.Y}}"/>
{{end}}<polyline class="line" points="{{.Line}}"/>
{{range .Points}}<circle class="point" cx="{{.X}}" cy="{{.Y}}" r="3.5" data-size="{{bytes .SizeBytes}}" data-busbw="{{.BusbwGBps}}"><title>{{.Label}}</title></circle>
{{end}}</svg>
{{end}}{{with .NCCL}}{{if .Points}}<table class="nccl-rows"><thead><tr><th>size</th><th>bytes</th><th>out-of-place µs</th><th>algbw GB/s</th><th>busbw GB/s</th><th>in-place µs</th><th>algbw GB/s</th><th>busbw GB/s</th></tr></thead><tbody>
{{range .Points}}<tr><td>{{size .SizeBytes}}</td><td class="num">{{bytes .SizeBytes}}</td>{{with .OutOfPlace}}<td class="num">{{if .TimeUs}}{{us .TimeUs}}{{end}}</td><td class="num">{{gbps .AlgbwGBps}}</td><td class="num">{{gbps .BusbwGBps}}</td>{{else}}<td></td><td></td><td></td>{{end}}{{with .InPlace}}<td class="num">{{if .TimeUs}}{{us .TimeUs}}{{end}}</td><td class="num">{{gbps .AlgbwGBps}}</td><td class="num">{{gbps .BusbwGBps}}</td>{{else}}<td></td><td></td><td></td>{{end}}</tr>
{{end}}</tbody></table>
{{else if not .RowsRecorded}}<p class="note no-rows">This record has no per-size rows (written before gpuctl recorded nccl.rows): no curve.</p>{{end}}{{end}}
<h3>Topology</h3>
{{if and .Topology .Topology.Rows}}{{with .Topology}}{{$t := .}}<table class="topo"><thead><tr><th></th>{{range .Labels}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range $i, $row := .Rows}}<tr><th>{{index $t.Labels $i}}</th>{{range $row}}<td class="l-{{.Class}}" title="{{.Class}}">{{.Link}}</td>{{end}}</tr>
{{end}}</tbody></table>
<p class="legend note"><span class="l-nvlink">NV#</span>NVLink <span class="l-pcie">PIX/PXB</span>PCIe switch <span class="l-host">PHB</span>host bridge <span class="l-numa">NODE</span>same NUMA node <span class="l-system">SYS</span>across NUMA nodes</p>
{{end}}{{else}}<p class="note no-topology">No topology matrix in this record (the topology stage did not run, or the record predates topology.matrix).</p>{{end}}
<h3>Evidence</h3>
<table class="evidence"><thead><tr><th>stage</th><th>file</th><th>bytes</th><th>sha256</th></tr></thead><tbody>
{{range .Stages}}{{$s := .Name}}{{range .Evidence}}<tr><td>{{$s}}</td><td class="mono">{{.Name}}</td><td class="num">{{.Bytes}}</td><td class="mono">{{.SHA256}}</td></tr>
{{end}}{{end}}</tbody></table>
{{end}}</section>
{{end}}<script>
document.querySelectorAll("table.sortable").forEach(function (t) {
  t.querySelectorAll("th[data-type]").forEach(function (th) {
    th.addEventListener("click", function () {
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows), i = th.cellIndex;
      var asc = th.getAttribute("aria-sort") !== "ascending", num = th.getAttribute("data-type") === "number";
      t.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      rows.sort(function (a, b) {
        var x = a.cells[i].getAttribute("data-value"), y = b.cells[i].getAttribute("data-value");
        var c = num ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
</script>
</body>
</html>
`
