package render

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/report"
)

// reportPage is the view of `gpuctl report`: internal/report's model with
// what the page adds to it (a title, the fleet's counts, an anchor, the
// facts and the curve of each node).
type reportPage struct {
	Title string
	// KeyChecked says whether signatures were verified; without a key the
	// page says that the records were read unverified.
	KeyChecked bool
	// Fleet is set for more than one record.
	Fleet *reportFleet
	Nodes []reportNode
	// Sections are the nodes' sections, in Nodes' order, each the "node"
	// template executed on its own (nodeSections).
	Sections []template.HTML
}

// reportFleet counts the nodes per verdict and trust (PASS, FAIL,
// INCONCLUSIVE, each verified, not verified or unsigned; then the records
// that did not verify and those refused; counts of 0 are left out).
type reportFleet struct {
	Counts []verdictCount
	// Unverified is the number of records that did not verify.
	Unverified int
}

// verdictCount is one badge of the fleet's counts: its class, its words
// and how many records it stands for.
type verdictCount struct {
	Class, Text string
	N           int
}

// reportNode is one record's section.
type reportNode struct {
	report.Node
	// ID is the section's anchor ("node-1").
	ID string
	// TrustText is the trust's words: "verified", "signed, not verified",
	// "not verified (refused)" or "unsigned".
	TrustText string
	// VerdictClass and VerdictText are the record's verdict badge: the
	// verdict's colours and words only when verified ("PASS"); else a
	// hatched badge that says so ("PASS — not verified", "PASS —
	// unsigned", "NOT VERIFIED", "REFUSED").
	VerdictClass, VerdictText string
	// KeyChecked is the page's: whether signatures were verified.
	KeyChecked bool
	// Facts are label/value pairs shown under the heading.
	Facts []reportFact
	// Chart is the busbw curve; nil without per-size points.
	Chart *chart
}

// verdictClass is the class of a verdict badge in a record of trust t:
// "verdict v-pass" when verified, else "verdict nv nv-pass" (hatched, never
// a verified badge's fill).
func verdictClass(t report.Trust, v diag.Verdict) string {
	if t == report.TrustVerified {
		return "verdict v-" + strings.ToLower(string(v))
	}
	return "verdict nv nv-" + strings.ToLower(string(v))
}

// trustText is the words of a record's trust.
func trustText(n report.Node) string {
	switch {
	case n.Trust == report.TrustVerified:
		return "verified"
	case n.Refused:
		return "not verified (refused)"
	case n.Trust == report.TrustUnverified:
		return "signed, not verified"
	}
	return "unsigned"
}

// verdictBadge is a record's verdict badge: class and words.
func verdictBadge(n report.Node) (class, text string) {
	switch {
	case n.Refused:
		return "verdict nv nv-refused", "REFUSED"
	case !n.HasPredicate:
		return "verdict nv nv-refused", "NOT VERIFIED"
	case n.Trust == report.TrustVerified:
		return verdictClass(n.Trust, n.Verdict), string(n.Verdict)
	case n.Trust == report.TrustUnverified:
		return verdictClass(n.Trust, n.Verdict), string(n.Verdict) + " — not verified"
	}
	return verdictClass(n.Trust, n.Verdict), string(n.Verdict) + " — unsigned"
}

// reportFact is one label and value.
type reportFact struct{ Label, Value string }

// ReportHTML writes the page of r: one self-contained HTML document
// (inline CSS, SVG and a few lines of script for sorting tables; no
// request leaves the page: its Content-Security-Policy allows none). title
// is the page's title; "" says "gpuctl acceptance report" and the node or
// the number of records.
func ReportHTML(w io.Writer, r *report.Report, title string) error {
	p := reportPage{Title: pageTitle(r, title), KeyChecked: r.KeyChecked}
	if len(r.Nodes) > 1 {
		p.Fleet = fleetOf(r)
	}
	for i, n := range r.Nodes {
		v := reportNode{Node: n, ID: "node-" + strconv.Itoa(i+1), TrustText: trustText(n), KeyChecked: r.KeyChecked}
		v.VerdictClass, v.VerdictText = verdictBadge(n)
		if n.HasPredicate {
			v.Facts = nodeFacts(n)
		}
		if n.NCCL != nil && len(n.NCCL.Points) > 0 {
			v.Chart = newChart(n.NCCL)
		}
		p.Nodes = append(p.Nodes, v)
	}
	var err error
	if p.Sections, err = nodeSections(p.Nodes); err != nil {
		return err
	}
	return reportTemplate.Execute(w, p)
}

// nodeSections executes the "node" template for each node, on as many
// goroutines as GOMAXPROCS: a node's section is most of a page (its curve,
// topology and evidence), and one goroutine took most of a second over 500
// records (BenchmarkReport in internal/cli). The sections are escaped as
// the page's body text, where the page places them. Errors: the template's
// first.
func nodeSections(nodes []reportNode) ([]template.HTML, error) {
	out := make([]template.HTML, len(nodes))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range nodes {
		g.Go(func() error {
			var b strings.Builder
			if err := reportTemplate.ExecuteTemplate(&b, "node", nodes[i]); err != nil {
				return err
			}
			out[i] = template.HTML(b.String()) //nolint:gosec // the "node" template's escaped output
			return nil
		})
	}
	return out, g.Wait()
}

// pageTitle is title, or "gpuctl acceptance report" with the node's name
// (one record) or the number of records.
func pageTitle(r *report.Report, title string) string {
	if title != "" {
		return title
	}
	title = "gpuctl acceptance report"
	switch {
	case len(r.Nodes) == 1 && r.Nodes[0].Name != "":
		title += ": " + r.Nodes[0].Name
	case len(r.Nodes) > 1:
		title += fmt.Sprintf(": %d records", len(r.Nodes))
	}
	return title
}

// fleetOf counts the records by their verdict badge, in the order of
// verdicts and then trust (verified first).
func fleetOf(r *report.Report) *reportFleet {
	f := &reportFleet{Unverified: r.Unverified}
	counts := map[string]int{}
	classes := map[string]string{}
	for _, n := range r.Nodes {
		class, text := verdictBadge(n)
		counts[text]++
		classes[text] = class
	}
	var order []string
	for _, v := range []diag.Verdict{diag.Pass, diag.Fail, diag.Inconclusive} {
		order = append(order, string(v), string(v)+" — not verified", string(v)+" — unsigned")
	}
	for _, text := range append(order, "NOT VERIFIED", "REFUSED") {
		if counts[text] > 0 {
			f.Counts = append(f.Counts, verdictCount{Class: classes[text], Text: text, N: counts[text]})
			delete(counts, text)
		}
	}
	for _, text := range slices.Sorted(maps.Keys(counts)) { // verdicts of other names
		f.Counts = append(f.Counts, verdictCount{Class: classes[text], Text: text, N: counts[text]})
	}
	return f
}

// nodeFacts are the facts under a node's heading, in the page's order;
// an empty value is left out.
func nodeFacts(n report.Node) []reportFact {
	var facts []reportFact
	fact := func(label, value string) {
		if value != "" {
			facts = append(facts, reportFact{Label: label, Value: value})
		}
	}
	fact("run", n.RunID)
	if !n.Started.IsZero() {
		fact("started", n.Started.UTC().Format(time.RFC3339))
	}
	fact("took", took(n.Duration))
	if n.Rejudged {
		fact("re-judged", "offline, from saved evidence")
	}
	fact("pool", n.Pool)
	fact("instance type", n.InstanceType)
	if n.GPUCount > 0 {
		fact("GPUs", fmt.Sprintf("%d x %s", n.GPUCount, n.GPUProduct))
	}
	fact("driver", n.Driver)
	fact("CUDA (driver)", n.CUDA)
	for _, f := range systemFacts(n.System) {
		fact(f.Label, f.Value)
	}
	fact("previous record", n.Previous)
	fact("gpuctl", n.Gpuctl)
	return facts
}

// systemFacts are the node's software facts of the practice's record
// template, in its order: OS image and kernel, container runtime and
// kubelet, device plugin and GPU Operator, the DCGM run level and the
// evidence bundle's URI ("" values are left out by nodeFacts).
func systemFacts(s report.System) []reportFact {
	level := ""
	if s.DCGMLevel > 0 {
		level = strconv.Itoa(s.DCGMLevel)
	}
	return []reportFact{
		{"OS image", s.OSImage}, {"kernel", s.Kernel}, {"container runtime", s.ContainerRuntime}, {"kubelet", s.Kubelet},
		{"device plugin", s.DevicePlugin}, {"GPU Operator", s.GPUOperator}, {"DCGM diag level", level}, {"evidence URI", s.EvidenceURI},
	}
}

// baselineText is one baseline of the record for the page.
func baselineText(b record.BaselineMet) string { return record.BaselineText(b) }

// nicRate is a port's rate ("400 Gb/s"), "–" when not shown.
func nicRate(r *float64) string {
	if r == nil {
		return "–"
	}
	return strconv.FormatFloat(*r, 'f', -1, 64) + " Gb/s"
}

// took is a duration to the second ("1m5s"); "" for none.
func took(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.Round(time.Second).String()
}

// topoLabels are the topology grid's heads: each device, a NIC with its
// name ("NIC0 (mlx5_0)").
func topoLabels(t *report.Topology) []string {
	labels := make([]string, 0, len(t.Devices))
	for _, d := range t.Devices {
		if name := t.NICNames[d]; name != "" {
			d += " (" + name + ")"
		}
		labels = append(labels, d)
	}
	return labels
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
	X, Y             float64
	SizeBytes        int64
	BusBandwidthGBps float64
	Label            string
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
func newChart(n *report.NCCL) *chart {
	c := &chart{Width: 640, Height: 300, Left: 56, Right: 16, Top: 16, Bottom: 40}
	c.reserveLegend(n.Baseline)
	s := c.scaleFor(n)
	c.YMid = round1(c.Top + s.plotH/2)
	c.plot(n.Points, s)
	c.ticks(n.Points, s)
	if b := n.Baseline; b != nil && b.MinGBps > 0 {
		c.baselineLines(b, n.Points, s)
	}
	return c
}

// chartScale maps message sizes (log2) and GB/s (linear from 0 to top)
// onto the plot area.
type chartScale struct {
	left, plotW, top, plotH float64
	// lo and hi are log2 of the smallest and largest size; max is the
	// GB/s at the plot's top.
	lo, hi, max float64
}

func (s chartScale) x(size int64) float64 {
	if s.hi == s.lo {
		return s.left + s.plotW/2
	}
	return s.left + s.plotW*(math.Log2(math.Max(float64(size), 1))-s.lo)/(s.hi-s.lo)
}

func (s chartScale) y(gbps float64) float64 { return s.top + s.plotH*(1-gbps/s.max) }

// reserveLegend makes a legend row above the plot for the baseline's
// minimum and, when it has one, its expected figure (their text comes with
// the lines), and moves the plot's top down below them.
func (c *chart) reserveLegend(b *report.Baseline) {
	if b != nil && b.MinGBps > 0 {
		c.Legend = append(c.Legend, chartLegend{Class: "baseline", LabelClass: "bl-label"})
		if b.ExpectedGBps > 0 {
			c.Legend = append(c.Legend, chartLegend{Class: "expected", LabelClass: "ex-label"})
		}
	}
	for i := range c.Legend {
		c.Legend[i].Y = float64(14 * (i + 1))
	}
	c.Top += float64(14 * len(c.Legend))
}

// scaleFor is the scale of the plot area: the sizes' range and a round
// top above the highest busbw and baseline figure.
func (c *chart) scaleFor(n *report.NCCL) chartScale {
	s := chartScale{left: c.Left, plotW: c.Width - c.Left - c.Right, top: c.Top, plotH: c.Height - c.Top - c.Bottom,
		lo: math.Inf(1), hi: math.Inf(-1)}
	for _, p := range n.Points {
		x := math.Log2(math.Max(float64(p.SizeBytes), 1))
		s.lo, s.hi = math.Min(s.lo, x), math.Max(s.hi, x)
		s.max = math.Max(s.max, p.BusBandwidthGBps)
	}
	if b := n.Baseline; b != nil {
		s.max = math.Max(s.max, math.Max(b.MinGBps, b.ExpectedGBps))
	}
	s.max = niceCeil(s.max * 1.08)
	return s
}

// plot places the points and the line through them.
func (c *chart) plot(points []report.Point, s chartScale) {
	var line []string
	for _, p := range points {
		cp := chartPoint{X: round1(s.x(p.SizeBytes)), Y: round1(s.y(p.BusBandwidthGBps)), SizeBytes: p.SizeBytes, BusBandwidthGBps: p.BusBandwidthGBps,
			Label: fmt.Sprintf("%s: busbw %s GB/s", SizeLabel(p.SizeBytes), gbps(p.BusBandwidthGBps))}
		c.Points = append(c.Points, cp)
		line = append(line, fmt.Sprintf("%g,%g", cp.X, cp.Y))
	}
	c.Line = strings.Join(line, " ")
}

// ticks labels at most about 10 sizes (every k-th point and the last) and
// five GB/s figures from 0 to the top.
func (c *chart) ticks(points []report.Point, s chartScale) {
	step := (len(points) + 9) / 10
	for i, p := range points {
		if i%step == 0 || i == len(points)-1 {
			c.XTicks = append(c.XTicks, chartTick{Pos: round1(s.x(p.SizeBytes)), Label: SizeLabel(p.SizeBytes)})
		}
	}
	for i := 0; i <= 4; i++ {
		v := s.max * float64(i) / 4
		c.YTicks = append(c.YTicks, chartTick{Pos: round1(s.y(v)), Label: gbps(v)})
	}
}

// baselineLines draws the baseline's minimum and expected figures across
// the sizes it holds for (from min_bytes up: the lines start there, at the
// right end when every size is below it) and writes their legend rows.
func (c *chart) baselineLines(b *report.Baseline, points []report.Point, s chartScale) {
	c.Baseline = &chartLine{Y: round1(s.y(b.MinGBps)), Label: figureLabel("minimum", b.MinGBps, b.MinAlgo, b.MinBytes)}
	c.Legend[0].Text = c.Baseline.Label
	if b.ExpectedGBps > 0 {
		c.Expected = &chartLine{Y: round1(s.y(b.ExpectedGBps)), Label: figureLabel("expected", b.ExpectedGBps, b.ExpectedAlgo, 0)}
		c.Legend[1].Text = c.Expected.Label
	}
	x1, x2 := c.Left, c.Width-c.Right
	if len(points) > 0 {
		x2 = round1(s.x(points[len(points)-1].SizeBytes))
		if b.MinBytes > points[0].SizeBytes {
			x1 = math.Min(round1(s.x(b.MinBytes)), x2)
		}
	}
	for _, l := range []*chartLine{c.Baseline, c.Expected} {
		if l != nil {
			l.X1, l.X2 = x1, x2
		}
	}
}

// figureLabel is a baseline line's label: "minimum 333 GB/s (RING) from
// 1 GiB"; the algorithm and the size are left out when not known (0).
func figureLabel(what string, gbpsValue float64, algo string, fromBytes int64) string {
	label := what + " " + gbps(gbpsValue) + " GB/s"
	if algo != "" {
		label += " (" + algo + ")"
	}
	if fromBytes > 0 {
		label += " from " + SizeLabel(fromBytes)
	}
	return label
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

//go:embed report.html.tmpl
var reportHTML string

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"lower":      func(v any) string { return strings.ToLower(fmt.Sprint(v)) },
	"rank":       verdictRank,
	"size":       SizeLabel,
	"gbps":       gbps,
	"us":         func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"add":        func(a, b float64) float64 { return a + b },
	"sub":        func(a, b float64) float64 { return a - b },
	"bytes":      func(b int64) string { return strconv.FormatInt(b, 10) },
	"shortID":    short,
	"took":       took,
	"topoLabels": topoLabels,
	"baseline":   baselineText,
	"nicRate":    nicRate,
	"vclass":     verdictClass,
	"multiText":  multiText,
	"join":       func(s []string) string { return strings.Join(s, ", ") },
	"more":       func(s []string) int { return len(s) - 1 },
}).Parse(reportHTML))

// multiText is what the report says of a node's nccl-multi groups after
// the verdict: "222.88 GB/s at 10 GiB over FasTrak, with gpu-node-2,
// gpu-node-4" (the lowest busbw of its groups; "across 12 nodes" when the
// record counts the peers only); "" for a record without the stage's facts.
func multiText(m *report.Multi) string {
	var parts []string
	if m.BusBandwidthGBps > 0 {
		s := gbps(m.BusBandwidthGBps) + " GB/s"
		if m.LargestBytes > 0 {
			s += " at " + SizeLabel(m.LargestBytes)
		}
		if m.Transport != "" {
			s += " over " + m.Transport
		}
		parts = append(parts, s)
	}
	switch {
	case len(m.Peers) > 0:
		parts = append(parts, "with "+strings.Join(m.Peers, ", "))
	case m.Nodes > 1:
		parts = append(parts, fmt.Sprintf("across %d nodes", m.Nodes))
	}
	return strings.Join(parts, ", ")
}
