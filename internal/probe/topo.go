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

// topoColumns merges the header's multi-word column names.
func topoColumns(tokens []string) []string {
	var out []string
	for i := 0; i < len(tokens); i++ {
		switch {
		case i+1 < len(tokens) && (tokens[i] == "CPU" || tokens[i] == "NUMA") && tokens[i+1] == "Affinity":
			out = append(out, tokens[i]+" Affinity")
			i++
		case i+2 < len(tokens) && tokens[i] == "GPU" && tokens[i+1] == "NUMA" && tokens[i+2] == "ID":
			out = append(out, "GPU NUMA ID")
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
	// cols are the header's column names, devices those that are GPUs or
	// NICs and affCols the affinity columns after them; nil before the
	// header.
	cols, devices, affCols []string
	// badRows counts rows with too few or too many cells, unknownLinks
	// cells that are no link type.
	badRows, unknownLinks int
}

// line reads one line; false stops at a matrix too large to be real.
func (tr *topoReader) line(l string) bool {
	r := tr.r
	switch t := strings.TrimSpace(l); {
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
	tok := strings.Fields(l)
	if len(tok) > maxTopoColumns+4 || len(tr.r.Matrix) >= maxTopoColumns {
		tr.j.unusable("output-too-large", "", "more than %d matrix columns or rows: this is not a real topology", maxTopoColumns)
		return false
	}
	if tr.cols == nil {
		// The header row starts with GPU0, indented or followed by a
		// column name rather than a link.
		indented := l[0] == ' ' || l[0] == '\t'
		if tok[0] == "GPU0" && (indented || len(tok) < 2 || !reTopoLink.MatchString(tok[1])) {
			tr.header(topoColumns(tok))
		}
		return true
	}
	tr.row(tok[0], tok[1:])
	return true
}

func isTopoAffinityColumn(c string) bool {
	return c == "CPU Affinity" || c == "NUMA Affinity" || c == "GPU NUMA ID"
}

func (tr *topoReader) header(cols []string) {
	tr.cols = cols
	for _, c := range cols {
		switch {
		case isTopoAffinityColumn(c):
			tr.affCols = append(tr.affCols, c)
			continue
		case reTopoGPU.MatchString(c):
			tr.r.GPUs = append(tr.r.GPUs, c)
		default:
			tr.r.NICs = append(tr.r.NICs, c)
		}
		tr.devices = append(tr.devices, c)
	}
}

// row reads a device's row: a link per device column, then its affinities.
func (tr *topoReader) row(name string, cells []string) {
	if len(cells) < len(tr.devices) {
		tr.badRows++
		return
	}
	links := map[string]string{}
	tr.r.Matrix[name] = links
	for i, d := range tr.devices {
		links[d] = cells[i]
		if !reTopoLink.MatchString(cells[i]) {
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
	for i, c := range tr.affCols[:min(len(extra), len(tr.affCols))] {
		switch c {
		case "CPU Affinity":
			tr.r.CPUAffinity[name] = extra[i]
		case "NUMA Affinity":
			tr.r.NUMAAffinity[name] = extra[i]
		case "GPU NUMA ID":
			tr.r.GPUNUMAID[name] = extra[i]
		}
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
