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
	var cols []string
	var devices []string
	section := "matrix"
	badRows, unknownLinks := 0, 0
	for _, l := range lines(data) {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			continue
		case t == "Legend:":
			section = "legend"
			continue
		case t == "NIC Legend:":
			section = "nics"
			continue
		}
		if section == "legend" {
			if m := reTopoLeg.FindStringSubmatch(l); m != nil {
				r.Legend[m[1]] = m[2]
			}
			continue
		}
		if section == "nics" {
			if m := reTopoNICL.FindStringSubmatch(l); m != nil {
				r.NICNames[m[1]] = m[2]
			}
			continue
		}
		tok := strings.Fields(l)
		if len(tok) > maxTopoColumns+4 || len(r.Matrix) >= maxTopoColumns {
			j.unusable("output-too-large", "", "more than %d matrix columns or rows: this is not a real topology", maxTopoColumns)
			break
		}
		if cols == nil {
			indented := l[0] == ' ' || l[0] == '\t'
			if len(tok) > 0 && tok[0] == "GPU0" && (indented || len(tok) < 2 || !reTopoLink.MatchString(tok[1])) {
				cols = topoColumns(tok)
				for _, c := range cols {
					switch {
					case c == "CPU Affinity" || c == "NUMA Affinity" || c == "GPU NUMA ID":
					case reTopoGPU.MatchString(c):
						r.GPUs = append(r.GPUs, c)
						devices = append(devices, c)
					default:
						r.NICs = append(r.NICs, c)
						devices = append(devices, c)
					}
				}
			}
			continue
		}
		row := tok[0]
		cells := tok[1:]
		if len(cells) < len(devices) {
			badRows++
			continue
		}
		r.Matrix[row] = map[string]string{}
		for i, d := range devices {
			v := cells[i]
			r.Matrix[row][d] = v
			if !reTopoLink.MatchString(v) {
				unknownLinks++
			}
		}
		extra := cells[len(devices):]
		var affCols []string
		for _, c := range cols {
			if c == "CPU Affinity" || c == "NUMA Affinity" || c == "GPU NUMA ID" {
				affCols = append(affCols, c)
			}
		}
		if len(extra) > len(affCols) {
			badRows++
		}
		if reTopoGPU.MatchString(row) {
			for i, c := range affCols {
				if i >= len(extra) {
					break
				}
				switch c {
				case "CPU Affinity":
					r.CPUAffinity[row] = extra[i]
				case "NUMA Affinity":
					r.NUMAAffinity[row] = extra[i]
				case "GPU NUMA ID":
					r.GPUNUMAID[row] = extra[i]
				}
			}
		}
	}
	for _, n := range r.NICs {
		if !reTopoNIC.MatchString(n) {
			r.NICNames[n] = n
		}
	}
	judgeTopo(r, j, badRows, unknownLinks)
	j.done()
	fillNil(r)
	return r
}

func judgeTopo(r *TopoReport, j *judge, badRows, unknownLinks int) {
	if len(r.GPUs) == 0 {
		j.unusable("not-topo", "", "no `nvidia-smi topo -m` matrix found (no header row with GPU0)")
		return
	}
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
	pairs, nv := 0, 0
	for a := 0; a < len(r.GPUs); a++ {
		for b := a + 1; b < len(r.GPUs); b++ {
			pairs++
			if NVLinks(r.Matrix[r.GPUs[a]][r.GPUs[b]]) > 0 {
				nv++
			}
			if x, y := r.Matrix[r.GPUs[a]][r.GPUs[b]], r.Matrix[r.GPUs[b]][r.GPUs[a]]; x != "" && y != "" && x != y {
				j.warn("topo-asymmetric", r.GPUs[a], "%s-%s is %s but %s-%s is %s", r.GPUs[a], r.GPUs[b], x, r.GPUs[b], r.GPUs[a], y)
			}
		}
	}
	if pairs > 0 {
		j.info("topo-nvlink-pairs", "", "%d of %d GPU pairs are connected by NVLink; %d NICs", nv, pairs, len(r.NICs))
	}
}
