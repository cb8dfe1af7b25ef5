package probe

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// TopoReport is `nvidia-smi topo -m`: the connection matrix between GPUs and
// NICs and each GPU's CPU and NUMA affinity. Link values are nvidia-smi's
// legend: X (self), SYS, NODE, PHB, PXB, PIX, NV# (a bonded set of # NVLinks).
type TopoReport struct {
	Header
	// GPUs and NICs are the matrix's column names in order ("GPU0", "NIC0";
	// older drivers name NIC columns by device, e.g. "mlx5_0").
	GPUs []string `json:"gpus"`
	NICs []string `json:"nics"`
	// Matrix maps row -> column -> link, for every row the output has.
	Matrix map[string]map[string]string `json:"matrix"`
	// CPUAffinity and NUMAAffinity map a GPU to the CPUs ("0-47,96-143") and
	// NUMA nodes ("0", "N/A") it is close to; see ParseCPUList.
	CPUAffinity  map[string]string `json:"cpuAffinity"`
	NUMAAffinity map[string]string `json:"numaAffinity"`
	// GPUNUMAID maps a GPU to its own NUMA node (Grace/CDMM systems), as
	// printed; "N/A" elsewhere.
	GPUNUMAID map[string]string `json:"gpuNumaId"`
	// NICNames maps a NIC column to its device ("NIC0" -> "mlx5_0") from the
	// NIC legend; old outputs name the column by device already.
	NICNames map[string]string `json:"nicNames"`
	// Legend is the link legend as printed ("SYS" -> "Connection traversing
	// ...").
	Legend map[string]string `json:"legend"`
}

// Link returns the link between two devices, or "".
func (t *TopoReport) Link(a, b string) string { return t.Matrix[a][b] }

// NVLinks returns the number of bonded NVLinks a link value stands for
// ("NV12" -> 12), or 0.
func NVLinks(link string) int {
	if !strings.HasPrefix(link, "NV") {
		return 0
	}
	n, err := strconv.Atoi(link[2:])
	if err != nil {
		return 0
	}
	return n
}

// maxTopoColumns caps the matrix: real systems have at most a few dozen GPUs
// and NICs.
const maxTopoColumns = 512

var (
	reTopoGPU  = regexp.MustCompile(`^GPU\d+$`)
	reTopoNIC  = regexp.MustCompile(`^NIC\d+$`)
	reTopoLink = regexp.MustCompile(`^(X|SYS|NODE|PHB|PXB|PIX|SOC|NV\d+|NV#)$`)
	reTopoLeg  = regexp.MustCompile(`^\s+(\S+)\s+=\s+(.+?)\s*$`)
	reTopoNICL = regexp.MustCompile(`^\s+(NIC\d+):\s+(\S+)\s*$`)
)

// ParseCPUList expands a Linux CPU list ("0-47,96-143") into CPU numbers.
// It returns an error for malformed lists and for lists longer than 1<<16
// CPUs.
func ParseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("cpu list %q: %w", s, err)
			}
		}
		if b < a || a < 0 || len(out)+(b-a) > 1<<16 {
			return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// topoField is a whitespace-separated token of a matrix line and the
// column it starts at (tabs expanded to stops of 8, as a terminal shows
// them).
type topoField struct {
	text string
	at   int
}

// topoFields splits l into its tokens and their columns.
func topoFields(l string) []topoField {
	var out []topoField
	col, start := 0, -1
	var tok strings.Builder
	for _, c := range l + " " {
		if c == ' ' || c == '\t' {
			if start >= 0 {
				out = append(out, topoField{tok.String(), start})
				tok.Reset()
				start = -1
			}
			if c == '\t' {
				col += 8 - col%8
			} else {
				col++
			}
			continue
		}
		if start < 0 {
			start = col
		}
		tok.WriteRune(c)
		col++
	}
	return out
}

// reTopoName is one column name a header token may hold several of when
// nvidia-smi runs them together (`NIC11NIC12`, `NIC11CPU` before
// "Affinity"): a device column, or the first word of an affinity column.
var reTopoName = regexp.MustCompile(`^(?:GPU\d+|NIC\d+|mlx5_\d+|CPU|NUMA|GPU)`)

// splitTopoToken splits a header token of column names run together into
// the names; a token that is not wholly such names stays as it is.
func splitTopoToken(f topoField) []topoField {
	var out []topoField
	for rest, at := f.text, f.at; rest != ""; {
		m := reTopoName.FindString(rest)
		if m == "" {
			return []topoField{f}
		}
		out = append(out, topoField{m, at})
		rest, at = rest[len(m):], at+len(m)
	}
	return out
}

// topoColumns splits the header's run-together names and merges its
// multi-word column names ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID").
func topoColumns(fields []topoField) []topoField {
	var tokens []topoField
	for _, f := range fields {
		tokens = append(tokens, splitTopoToken(f)...)
	}
	var out []topoField
	for i := 0; i < len(tokens); i++ {
		t := tokens[i].text
		switch {
		case i+1 < len(tokens) && (t == "CPU" || t == "NUMA") && tokens[i+1].text == "Affinity":
			out = append(out, topoField{t + " Affinity", tokens[i].at})
			i++
		case i+2 < len(tokens) && t == "GPU" && tokens[i+1].text == "NUMA" && tokens[i+2].text == "ID":
			out = append(out, topoField{"GPU NUMA ID", tokens[i].at})
			i += 2
		default:
			out = append(out, tokens[i])
		}
	}
	return out
}

// ParseTopo reads `nvidia-smi topo -m`. Columns are found by whitespace
// tokens, not positions: outputs come tab-separated, space-aligned and
// misaligned.
func ParseTopo(data []byte) *TopoReport {
	r := &TopoReport{}
	j := newJudge(&r.Header, KindTopo)
	r.Matrix = map[string]map[string]string{}
	r.CPUAffinity, r.NUMAAffinity, r.GPUNUMAID = map[string]string{}, map[string]string{}, map[string]string{}
	r.NICNames, r.Legend = map[string]string{}, map[string]string{}
	tr := topoReader{r: r, j: j, section: "matrix"}
	for _, l := range lines(data) {
		if !tr.line(l) {
			break
		}
	}
	tr.finish()
	for _, n := range r.NICs {
		if !reTopoNIC.MatchString(n) {
			r.NICNames[n] = n
		}
	}
	judgeTopo(r, j, tr.badRows, tr.unknownLinks)
	j.done()
	fillNil(r)
	return r
}

// topoReader reads topo -m line by line: the matrix (its header row, then a
// row per device), the link legend and the NIC legend.
type topoReader struct {
	r       *TopoReport
	j       *judge
	section string // "matrix", "legend" or "nics"
	// cols are the header's columns, devices those that are GPUs or NICs
	// and affCols the affinity columns after them; nil before the header.
	cols, devices, affCols []topoField
	// headerless holds the rows of a matrix whose header row is not in the
	// input, read once all of them are known (inferHeader).
	headerless [][]topoField
	// badRows counts rows with too few or too many cells, unknownLinks
	// cells that are no link type.
	badRows, unknownLinks int
	// shortLast: the last line read was a matrix row with too few cells
	// (a row cut where the input ends, not a garbled one).
	shortLast bool
}

// line reads one line; false stops at a matrix too large to be real.
func (tr *topoReader) line(l string) bool {
	r := tr.r
	t := strings.TrimSpace(l)
	if t != "" {
		tr.shortLast = false
	}
	switch {
	case t == "":
	case t == "Legend:":
		tr.section = "legend"
	case t == "NIC Legend:":
		tr.section = "nics"
	case tr.section == "legend":
		if m := reTopoLeg.FindStringSubmatch(l); m != nil {
			r.Legend[m[1]] = m[2]
		}
	case tr.section == "nics":
		if m := reTopoNICL.FindStringSubmatch(l); m != nil {
			r.NICNames[m[1]] = m[2]
		}
	default:
		return tr.matrixLine(l)
	}
	return true
}

func (tr *topoReader) matrixLine(l string) bool {
	tok := topoFields(l)
	if len(tok) > maxTopoColumns+4 || len(tr.r.Matrix)+len(tr.headerless) >= maxTopoColumns {
		tr.j.unusable("output-too-large", "", "more than %d matrix columns or rows: this is not a real topology", maxTopoColumns)
		return false
	}
	if tr.cols != nil {
		tr.row(tok[0].text, tok[1:])
		return true
	}
	// The header row starts with GPU0, indented or followed by a column
	// name rather than a link; a row of GPU0's links without a header
	// above it starts a headerless matrix.
	indented := l[0] == ' ' || l[0] == '\t'
	first := splitTopoToken(tok[0])[0].text
	switch {
	case first == "GPU0" && (indented || len(tok) < 2 || !reTopoLink.MatchString(tok[1].text)):
		tr.header(topoColumns(tok))
	case len(tok) > 1 && (len(tr.headerless) > 0 || tok[0].text == "GPU0" && tok[1].text == "X") && reTopoLink.MatchString(tok[1].text):
		tr.headerless = append(tr.headerless, tok)
	}
	return true
}

// finish reads a matrix whose header row is not in the input, and tells a
// row cut short where the input ends (the matrix is truncated: the row is
// missing) from a garbled one.
func (tr *topoReader) finish() {
	if tr.cols == nil && len(tr.headerless) > 0 {
		cut := tr.section == "matrix"
		tr.inferHeader()
		for _, row := range tr.headerless {
			tr.shortLast = false
			tr.row(row[0].text, row[1:])
		}
		tr.shortLast = tr.shortLast && cut
	}
	if tr.shortLast {
		tr.badRows--
	}
}

// topoAffinityNames are the affinity columns in the order nvidia-smi
// prints them; a headerless row with n cells after its links has the
// first n.
var topoAffinityNames = []string{"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"}

// inferHeader builds the columns of a headerless matrix from its rows: as
// many device columns as the longest run of link cells, the first of them
// GPUs up to the last a GPU row's diagonal (X) or an NVLink cell (NV#) is in
// (NICs have neither), the rest NICs named NIC0..., and the cells after the
// links affinity columns in nvidia-smi's order.
func (tr *topoReader) inferHeader() {
	var widest []topoField
	links, gpus := 0, 0
	for _, row := range tr.headerless {
		n := 0
		for n+1 < len(row) && reTopoLink.MatchString(row[n+1].text) {
			n++
		}
		if n > links {
			links, widest = n, row
		}
		isGPU := reTopoGPU.MatchString(row[0].text)
		if k, err := strconv.Atoi(strings.TrimPrefix(row[0].text, "GPU")); isGPU && err == nil {
			gpus = max(gpus, k+1)
		}
		for i := 1; i <= n; i++ {
			if NVLinks(row[i].text) > 0 || isGPU && row[i].text == "X" {
				gpus = max(gpus, i)
			}
		}
	}
	gpus = min(gpus, links)
	cols := make([]topoField, 0, len(widest))
	for i := 0; i < links; i++ {
		name := fmt.Sprintf("NIC%d", i-gpus)
		if i < gpus {
			name = fmt.Sprintf("GPU%d", i)
		}
		cols = append(cols, topoField{name, widest[i+1].at})
	}
	for k, f := range widest[links+1:] {
		if k < len(topoAffinityNames) {
			cols = append(cols, topoField{topoAffinityNames[k], f.at})
		}
	}
	tr.header(cols)
	tr.j.unusable("output-fragment", "", "the matrix has no header row: its columns are inferred from the rows (%d GPUs, from the diagonal and NVLink cells, and %d NICs, named NIC0... here, whose devices are not known)", gpus, links-gpus)
}

func isTopoAffinityColumn(c string) bool {
	return c == "CPU Affinity" || c == "NUMA Affinity" || c == "GPU NUMA ID"
}

func (tr *topoReader) header(cols []topoField) {
	tr.cols = cols
	for _, c := range cols {
		switch {
		case isTopoAffinityColumn(c.text):
			tr.affCols = append(tr.affCols, c)
			continue
		case reTopoGPU.MatchString(c.text):
			tr.r.GPUs = append(tr.r.GPUs, c.text)
		default:
			tr.r.NICs = append(tr.r.NICs, c.text)
		}
		tr.devices = append(tr.devices, c)
	}
}

// row reads a device's row: a link per device column, then its affinities.
func (tr *topoReader) row(name string, cells []topoField) {
	if len(cells) < len(tr.devices) {
		tr.badRows++
		tr.shortLast = true
		return
	}
	links := map[string]string{}
	tr.r.Matrix[name] = links
	for i, d := range tr.devices {
		links[d.text] = cells[i].text
		if !reTopoLink.MatchString(cells[i].text) {
			tr.unknownLinks++
		}
	}
	extra := cells[len(tr.devices):]
	if len(extra) > len(tr.affCols) {
		tr.badRows++
	}
	if !reTopoGPU.MatchString(name) {
		return
	}
	for _, c := range tr.affinityCells(extra) {
		tr.setAffinity(name, c[0], c[1])
	}
}

// affinityCells pairs each affinity column with its cell of a row (the
// cells after its links): {column, value}. A row with a cell per column (or more) is read in order, since
// outputs pad their affinity cells narrower or wider than the header; a row
// with fewer cells has blank ones (a VM without NUMA information), whose
// columns are told by position: each cell belongs to the column whose
// header starts nearest to it, in order, the later one on a tie. nvidia-smi
// writes the row's affinities as "CPU\tNUMA\t\tGPU-NUMA" under a header of
// "CPU Affinity\tNUMA Affinity\tGPU NUMA ID", so at tab stops of 8 a blank
// cell moves the next one to a stop halfway between two headers, and the
// cell belongs to the later (the corpus' topo-m-h100-80gb-hbm3-590.48.01.txt
// shows the double tab; topo-m-x2-nv12-8nic-empty-affinity-vllm-excerpt.txt
// the blank cells). A blank column reads "".
func (tr *topoReader) affinityCells(extra []topoField) [][2]string {
	cells := make([][2]string, 0, len(tr.affCols))
	if len(extra) >= len(tr.affCols) {
		for i, c := range tr.affCols {
			cells = append(cells, [2]string{c.text, extra[i].text})
		}
		return cells
	}
	next := 0 // the first column a cell may still take
	taken := map[int]bool{}
	for i, f := range extra {
		best := next
		last := len(tr.affCols) - (len(extra) - i) // leave a column for each cell after
		for k := next; k <= last; k++ {
			if abs(tr.affCols[k].at-f.at) <= abs(tr.affCols[best].at-f.at) {
				best = k
			}
		}
		cells = append(cells, [2]string{tr.affCols[best].text, f.text})
		taken[best], next = true, best+1
	}
	for k, c := range tr.affCols {
		if !taken[k] {
			cells = append(cells, [2]string{c.text, ""})
		}
	}
	return cells
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func (tr *topoReader) setAffinity(gpu, col, v string) {
	switch col {
	case "CPU Affinity":
		tr.r.CPUAffinity[gpu] = v
	case "NUMA Affinity":
		tr.r.NUMAAffinity[gpu] = v
	case "GPU NUMA ID":
		tr.r.GPUNUMAID[gpu] = v
	}
}

func judgeTopo(r *TopoReport, j *judge, badRows, unknownLinks int) {
	if len(r.GPUs) == 0 {
		j.unusable("not-topo", "", "no `nvidia-smi topo -m` matrix found (no header row with GPU0)")
		return
	}
	judgeTopoRows(r, j, badRows, unknownLinks)
	for _, g := range r.GPUs {
		if v, ok := r.Matrix[g][g]; ok && v != "X" {
			j.unusable("output-garbled", g, "the diagonal cell of %s is %q, not X", g, v)
		}
		if cpus, ok := r.CPUAffinity[g]; ok && !na(cpus) {
			if _, err := ParseCPUList(cpus); err != nil {
				j.warn("topo-cpu-affinity", g, "CPU affinity %q is not a CPU list", cpus)
			}
		}
	}
	for _, n := range r.NICs {
		if _, ok := r.NICNames[n]; !ok {
			j.warn("topo-nic-legend-missing", "", "the NIC legend is missing: the devices behind %s are not named", strings.Join(r.NICs, ", "))
			break
		}
	}
	judgeTopoPairs(r, j)
	judgeTopoNVLinkMissing(r, j)
	judgeTopoLegend(r, j)
}

// topoLegendKeys are the link types every topo -m legend explains
// (nvidia-smi topo -m's "Legend:", as the corpus' whole outputs of drivers
// 535-590 print it).
var topoLegendKeys = []string{"X", "SYS", "NODE", "PHB", "PXB", "PIX", "NV#"}

// judgeTopoLegend notes a legend cut short after a whole matrix: the
// legend only explains the link types, so the matrix's facts stand.
func judgeTopoLegend(r *TopoReport, j *judge) {
	if len(r.Legend) == 0 || j.has("output-truncated") {
		return
	}
	var missing []string
	for _, k := range topoLegendKeys {
		if _, ok := r.Legend[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		j.info("topo-legend-cut", "", "the legend is cut (no line for %s) after a whole matrix: the matrix's links are all read", strings.Join(missing, ", "))
	}
}

// topoLink is the link between GPUs a and b from either's row; "" when
// neither row is shown.
func topoLink(r *TopoReport, a, b string) string {
	if v := r.Matrix[a][b]; v != "" {
		return v
	}
	return r.Matrix[b][a]
}

// judgeTopoNVLinkMissing fails a GPU with no NVLink to any peer on a
// system whose other GPUs are NVLinked all to all. Three or more GPUs each
// NVLinked to every other are an NVSwitch (HGX/DGX) baseboard, where every
// GPU's links run to the switches and every pair shows NV# (NVIDIA HGX
// B200/H100: each GPU's 18 NVLinks connect to the NVSwitch chips); a GPU
// that shows PCIe paths (NODE, SYS...) to all its peers there has its
// NVLinks down. A pair of GPUs with an NVLink bridge next to one without
// is not such a system and is not judged.
func judgeTopoNVLinkMissing(r *TopoReport, j *judge) {
	var meshed, alone []string
	for _, a := range r.GPUs {
		nv, shown := 0, 0
		for _, b := range r.GPUs {
			if l := topoLink(r, a, b); a != b && l != "" {
				shown++
				if NVLinks(l) > 0 {
					nv++
				}
			}
		}
		switch {
		case nv > 0:
			meshed = append(meshed, a)
		case shown > 0:
			alone = append(alone, a)
		}
	}
	if len(meshed) < 3 || len(alone) == 0 || !topoAllToAll(r, meshed) {
		return
	}
	for _, g := range alone {
		j.fail("topo-nvlink-missing", g, "%s has no NVLink to any peer (PCIe paths only) while %s are NVLinked all to all (%s): on an NVSwitch system its NVLinks are down", g, strings.Join(meshed, ", "), topoLink(r, meshed[0], meshed[1]))
	}
}

// topoAllToAll reports whether every shown link between gpus is NVLink.
func topoAllToAll(r *TopoReport, gpus []string) bool {
	for i, a := range gpus {
		for _, b := range gpus[i+1:] {
			if l := topoLink(r, a, b); l != "" && NVLinks(l) == 0 {
				return false
			}
		}
	}
	return true
}

// judgeTopoRows judges the matrix's completeness: a row per device, a cell
// per column, link types only.
func judgeTopoRows(r *TopoReport, j *judge, badRows, unknownLinks int) {
	missing := []string{}
	for _, d := range append(append([]string{}, r.GPUs...), r.NICs...) {
		if _, ok := r.Matrix[d]; !ok {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		j.unusable("output-truncated", "", "the matrix has no row for %s: the output is incomplete", strings.Join(missing, ", "))
	}
	if badRows > 0 {
		j.unusable("output-garbled", "", "%d matrix rows do not have one cell per column", badRows)
	}
	if unknownLinks > 0 {
		j.unusable("output-garbled", "", "%d matrix cells are not link types nvidia-smi prints", unknownLinks)
	}
}

// judgeTopoPairs warns of GPU pairs whose two cells disagree and counts the
// pairs NVLink connects.
func judgeTopoPairs(r *TopoReport, j *judge) {
	pairs, nv := 0, 0
	for a, ga := range r.GPUs {
		for _, gb := range r.GPUs[a+1:] {
			pairs++
			x, y := r.Matrix[ga][gb], r.Matrix[gb][ga]
			if NVLinks(x) > 0 {
				nv++
			}
			if x != "" && y != "" && x != y {
				j.warn("topo-asymmetric", ga, "%s-%s is %s but %s-%s is %s", ga, gb, x, gb, ga, y)
			}
		}
	}
	if pairs > 0 {
		j.info("topo-nvlink-pairs", "", "%d of %d GPU pairs are connected by NVLink; %d NICs", nv, pairs, len(r.NICs))
	}
}
