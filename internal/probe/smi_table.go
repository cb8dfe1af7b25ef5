package probe

import (
	"regexp"
	"strings"
)

// The default `nvidia-smi` table. Each GPU is a block of two (R418 and
// older) or three (R450 and later) rows of "|"-separated cells, closed by a
// "+---" border:
//
//	|   0  NVIDIA H100 80GB HBM3          On  |   00000000:19:00.0 Off |                    0 |
//	| N/A   27C    P0             72W /  700W |       1MiB /  81559MiB |      0%      Default |
//	|                                         |                        |             Disabled |
//
// The header row gives "NVIDIA-SMI", "Driver Version" (R610: "KMD Version")
// and "CUDA Version" (R610: "CUDA UMD Version"); R580 and later draw the
// border under it with "+" instead of "|". Cells are located by the "|"
// separators, never by fixed columns, so column widths may vary.

var (
	reTableHeader   = regexp.MustCompile(`(?m)^\|\s*NVIDIA-SMI\s+\S+.*(?:Driver|KMD) Version:`)
	reTableVersions = regexp.MustCompile(`NVIDIA-SMI\s+(\S+)\s+(?:Driver|KMD) Version:\s*(\S+)(?:\s+CUDA(?: UMD)? Version:\s*(\S+))?`)
	reTableGPU      = regexp.MustCompile(`^\s*(\d+)\s+(.+?)\s+(On|Off|WDDM|TCC|N/A)\s*$`)
	reTableBus      = regexp.MustCompile(`^\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*(\S*)\s*$`)
	reTableTemp     = regexp.MustCompile(`^(\d+)C$`)
	reTableMem      = regexp.MustCompile(`(\d+)MiB\s*/\s*(\d+)MiB`)
	reTablePower    = regexp.MustCompile(`(\S+)\s*/\s*(\S+)\s*$`)
)

func tableCells(l string) []string {
	l = strings.TrimSpace(l)
	if !strings.HasPrefix(l, "|") {
		return nil
	}
	l = strings.TrimPrefix(l, "|")
	l = strings.TrimSuffix(l, "|")
	return strings.Split(l, "|")
}

func isTableBorder(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "+-") || strings.HasPrefix(t, "|=") || strings.HasPrefix(t, "+=")
}

// parseSMITable reads the default nvidia-smi summary table.
func parseSMITable(r *SMIReport, j *judge, data []byte) {
	r.Format = "table"
	ls := lines(data)
	tableHeader(r, ls)
	tr := tableReader{r: r, j: j, ls: ls}
	for tr.i = 0; tr.i < len(ls); tr.i++ {
		if !tr.line() {
			break
		}
	}
	for _, m := range tr.migs {
		for k := range r.GPUs {
			if r.GPUs[k].Index == m.gpu {
				r.GPUs[k].MIGDevices = append(r.GPUs[k].MIGDevices, m.dev)
				break
			}
		}
	}
	tr.judgeEnd()
}

// tableHeader reads the timestamp line above the table and the versions of
// its header row.
func tableHeader(r *SMIReport, ls []string) {
	for i, l := range ls {
		if i == 0 && !strings.HasPrefix(strings.TrimSpace(l), "|") && !strings.HasPrefix(strings.TrimSpace(l), "+") {
			r.Timestamp = strings.TrimSpace(l)
		}
		if m := reTableVersions.FindStringSubmatch(l); m != nil {
			r.DriverVersion = m[2]
			r.CUDAVersion = m[3]
			return
		}
	}
}

// tableReader walks the table's lines: the GPU blocks, then the "MIG
// devices:" and "Processes:" sections.
type tableReader struct {
	r  *SMIReport
	j  *judge
	ls []string
	i  int // the current line
	// inMIG and inProcesses: the walk has reached that section.
	inMIG, inProcesses bool
	// lastBorder is the last border that closed a GPU block.
	lastBorder string
	migs       []tableMIG
}

// line reads line i (and the rows of a GPU block it opens); false stops the
// walk when the report has no room for more GPUs.
func (tr *tableReader) line() bool {
	l := tr.ls[tr.i]
	if strings.Contains(l, "MIG devices:") {
		tr.inMIG = true
	}
	if strings.Contains(l, "Processes:") {
		tr.inProcesses, tr.inMIG = true, false
	}
	switch {
	case tr.inMIG:
		if m, ok := tableMIGRow(l); ok && len(tr.migs) < maxRecords {
			tr.migs = append(tr.migs, m)
		}
		return true
	case tr.inProcesses:
		return true
	}
	g, ok := tableFirstRow(tableCells(l), len(tr.r.GPUs))
	if !ok {
		return true
	}
	if !tr.j.room(len(tr.r.GPUs), "GPUs") {
		return false
	}
	if !tr.blockRows(&g) {
		tr.j.unusable("output-truncated", gpuLabel(&g), "the table ends inside the block of GPU %d", g.Index)
	}
	tr.r.GPUs = append(tr.r.GPUs, g)
	return true
}

// blockRows reads the rows after a GPU block's first up to its closing
// border, and reports whether the border came.
func (tr *tableReader) blockRows(g *SMIGPU) (closed bool) {
	for row := 1; tr.i+1 < len(tr.ls); row++ {
		next := tr.ls[tr.i+1]
		if isTableBorder(next) {
			tr.lastBorder = strings.TrimSpace(next)
			tr.i++
			return true
		}
		c := tableCells(next)
		if len(c) < 3 {
			return false
		}
		tr.i++
		switch row {
		case 1:
			tableSecondRow(g, c)
		case 2:
			if mig := strings.TrimSpace(c[2]); mig != "" {
				g.MIGMode = mig
			}
		}
	}
	return false
}

// judgeEnd tells a table cut short from one whose paste left out only the
// Processes table.
func (tr *tableReader) judgeEnd() {
	r, ls := tr.r, tr.ls
	if len(r.GPUs) == 0 {
		return
	}
	lastLine := ""
	for k := len(ls) - 1; k >= 0 && lastLine == ""; k-- {
		lastLine = strings.TrimSpace(ls[k])
	}
	if tr.inProcesses {
		// Every GPU block was closed before the Processes header: the GPUs
		// are all read, whatever happened to the process list.
		if !strings.HasPrefix(lastLine, "+-") || !strings.HasSuffix(lastLine, "+") {
			tr.j.info("table-processes-cut", "", "the output is cut in the Processes section, after the GPU table: every GPU was read; the process list may be incomplete")
		}
		return
	}
	topBorder := ""
	for _, l := range ls {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "+-") {
			topBorder = t
			break
		}
	}
	if !tr.inMIG && lastLine == tr.lastBorder && strings.HasSuffix(tr.lastBorder, "+") && len(tr.lastBorder) == len(topBorder) {
		// The output ends with the GPU table's full closing border: the
		// paste left out only the Processes table printed after it.
		tr.j.info("table-processes-not-shown", "", "the output ends after the GPU table (its Processes section is not shown)")
		return
	}
	tr.j.unusable("output-truncated", "", "the table ends before its Processes section: GPUs after GPU %d may be missing", r.GPUs[len(r.GPUs)-1].Index)
}

// tableFirstRow reads a GPU block's first row, "| GPU Name Persistence-M |
// Bus-Id Disp.A | Volatile Uncorr. ECC |"; false when cells are not one.
// The GPU's Index is the row's GPU number, or index when that does not parse.
func tableFirstRow(cells []string, index int) (SMIGPU, bool) {
	if len(cells) < 3 {
		return SMIGPU{}, false
	}
	m := reTableGPU.FindStringSubmatch(cells[0])
	if m == nil {
		return SMIGPU{}, false
	}
	g := SMIGPU{Index: index, Name: strings.TrimSpace(m[2]), PersistenceMode: m[3]}
	if n := parseIntPtr(m[1]); n != nil {
		g.Index = *n
	}
	if bm := reTableBus.FindStringSubmatch(cells[1]); bm != nil {
		g.BusID = bm[1]
	}
	ecc := strings.TrimSpace(cells[2])
	switch {
	case ecc == "ERR!":
		g.ErrFields = append(g.ErrFields, "Volatile Uncorr. ECC")
	case ecc == "Off":
		g.ECCEnabled = ptr(false)
	case parseInt64Ptr(ecc) != nil:
		g.ECCEnabled = ptr(true)
		g.ECCUncorrectedVolatile = parseInt64Ptr(ecc)
	}
	if strings.Contains(cells[0], "ERR!") || strings.Contains(cells[1], "ERR!") {
		g.ErrFields = append(g.ErrFields, "GPU/Bus-Id")
	}
	return g, true
}

// tableMIG is a row of the "MIG devices:" section.
type tableMIG struct {
	gpu int
	dev MIGDevice
}

// tableMIGRow reads the first row of a MIG device's block:
//
//	|  0    2   0   0  |           11091MiB / 40448MiB    | 60      0 |  3   0    3    0    3 |
//
// (GPU, GPU instance, compute instance, MIG device; memory used / total;
// SMs and volatile uncorrected ECC). The row under it (BAR1) is skipped.
func tableMIGRow(l string) (tableMIG, bool) {
	c := tableCells(l)
	if len(c) < 3 {
		return tableMIG{}, false
	}
	ids := strings.Fields(c[0])
	if len(ids) != 4 {
		return tableMIG{}, false
	}
	var n [4]int
	for k, f := range ids {
		p := parseIntPtr(f)
		if p == nil || !isIntToken(f) {
			return tableMIG{}, false
		}
		n[k] = *p
	}
	m := tableMIG{gpu: n[0], dev: MIGDevice{Index: n[3], GPUInstanceID: ptr(n[1]), ComputeInstanceID: ptr(n[2])}}
	if mm := reTableMem.FindStringSubmatch(c[1]); mm != nil {
		m.dev.MemoryUsedMiB = parseInt64Ptr(mm[1])
		m.dev.MemoryMiB = parseInt64Ptr(mm[2])
	}
	if f := strings.Fields(c[2]); len(f) > 0 && isIntToken(f[0]) {
		m.dev.Multiprocessors = parseIntPtr(f[0])
	}
	return m, true
}

// tableSecondRow reads "| Fan Temp Perf Pwr:Usage/Cap | Memory-Usage |
// GPU-Util Compute M. |".
func tableSecondRow(g *SMIGPU, c []string) {
	f := strings.Fields(c[0])
	for _, t := range f {
		if m := reTableTemp.FindStringSubmatch(t); m != nil {
			g.TemperatureC = parseIntPtr(m[1])
		}
		if len(t) >= 2 && t[0] == 'P' && t[1] >= '0' && t[1] <= '9' {
			g.PerformanceState = t
		}
		if t == "ERR!" {
			g.ErrFields = append(g.ErrFields, "Fan/Temp/Perf/Power")
		}
	}
	if m := reTablePower.FindStringSubmatch(c[0]); m != nil {
		if strings.HasSuffix(m[1], "W") {
			g.PowerDrawW = parseFloatPtr(strings.TrimSuffix(m[1], "W"))
		}
		if strings.HasSuffix(m[2], "W") {
			g.PowerLimitW = parseFloatPtr(strings.TrimSuffix(m[2], "W"))
		}
	}
	if m := reTableMem.FindStringSubmatch(c[1]); m != nil {
		g.MemoryUsedMiB = parseInt64Ptr(m[1])
		g.MemoryTotalMiB = parseInt64Ptr(m[2])
	}
	if uf := strings.Fields(c[2]); len(uf) > 0 {
		if strings.HasSuffix(uf[0], "%") {
			g.UtilizationGPUPercent = parseIntPtr(strings.TrimSuffix(uf[0], "%"))
		}
		if uf[0] == "ERR!" {
			g.ErrFields = append(g.ErrFields, "GPU-Util")
		}
	}
}
