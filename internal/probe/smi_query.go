package probe

import (
	"regexp"
	"sort"
	"strings"
)

// `nvidia-smi -q` prints "Key<padding>: Value" lines indented by four spaces
// per level, with GPU blocks headed "GPU <bus id>" at the left margin. The
// padding puts every colon in one column; a line whose colon is padded to a
// different column was mangled on its way to us (the corpus has lines with
// an "Invalid " prefix and a shifted colon).

var reQueryGPU = regexp.MustCompile(`^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$`)

type queryLine struct {
	no       int
	indent   int
	key      string
	value    string
	hasValue bool
	colon    int // column of the colon, -1 without value
	padded   bool
	// inProcesses: the line is inside a GPU's Processes section.
	inProcesses bool
}

func splitQueryLine(no int, l string) (queryLine, bool) {
	l = strings.TrimRight(l, " \t")
	if strings.TrimSpace(l) == "" {
		return queryLine{}, false
	}
	indent := len(l) - len(strings.TrimLeft(l, " "))
	q := queryLine{no: no, indent: indent, colon: -1}
	if i := strings.Index(l, " :"); i >= 0 && (len(l) == i+2 || l[i+2] == ' ') {
		q.key = strings.TrimSpace(l[:i])
		q.value = strings.TrimSpace(l[i+2:])
		q.hasValue = true
		q.colon = i + 1
		q.padded = strings.HasSuffix(l[:i+1], "  ")
		return q, true
	}
	q.key = strings.TrimSpace(l)
	return q, true
}

// parseSMIQuery reads `nvidia-smi -q` text.
func parseSMIQuery(r *SMIReport, j *judge, data []byte) {
	r.Format = "query"
	ql := readQueryLines(data)
	if garbled := garbledQueryKeys(ql); len(garbled) > 0 {
		j.unusable("output-garbled", "", "%d lines are mangled (misaligned keys such as %q): the output was damaged", len(garbled), truncate(garbled[0], 60))
	}
	qr := queryReader{r: r, j: j}
	for _, q := range ql {
		qr.line(q)
	}
	blocks := qr.blocks
	withProcesses := 0
	for _, b := range blocks {
		if b.has("Processes") {
			withProcesses++
		}
	}
	if len(blocks) > maxRecords {
		j.room(len(blocks), "GPUs")
		blocks = blocks[:maxRecords]
	}
	for i, b := range blocks {
		// A block with a product name but no Processes section stopped
		// early, unless no block has one and it is not the last.
		if b.has("Product Name") && !b.has("Processes") && (withProcesses > 0 || i == len(blocks)-1) {
			j.unusable("output-truncated", b.busID, "the block of GPU %s ends early (no Processes section): the output is truncated", b.busID)
		}
		r.GPUs = append(r.GPUs, b.gpu(i))
	}
}

// readQueryLines splits -q text into its non-blank lines and marks those
// inside a GPU's Processes section.
func readQueryLines(data []byte) []queryLine {
	var ql []queryLine
	procIndent := -1 // indent of the Processes heading while inside it
	for i, l := range lines(data) {
		q, ok := splitQueryLine(i+1, l)
		if !ok {
			continue
		}
		if procIndent >= 0 && q.indent <= procIndent {
			procIndent = -1
		}
		q.inProcesses = procIndent >= 0
		if q.key == "Processes" && !q.hasValue && q.indent > 0 {
			procIndent = q.indent
		}
		ql = append(ql, q)
	}
	return ql
}

// alignedLine reports whether q takes part in the colon alignment check: a
// padded key with a value outside a Processes section, which pads its colons
// to a column of its own under load (R580 and later).
func (q queryLine) alignedLine() bool {
	return q.hasValue && q.padded && !q.inProcesses
}

// garbledQueryKeys returns the keys of the aligned lines whose colon is not
// in the column most aligned lines use (the lowest such column on a tie).
func garbledQueryKeys(ql []queryLine) []string {
	colonCount := map[int]int{}
	for _, q := range ql {
		if q.alignedLine() {
			colonCount[q.colon]++
		}
	}
	dominant, best := -1, 0
	for c, n := range colonCount {
		if n > best || (n == best && c < dominant) {
			dominant, best = c, n
		}
	}
	var garbled []string
	for _, q := range ql {
		if q.alignedLine() && q.colon != dominant {
			garbled = append(garbled, q.key)
		}
	}
	return garbled
}

// queryBlock is one "GPU <bus id>" block of -q output.
type queryBlock struct {
	busID string
	// vals holds every key of the block by its section path joined with
	// "/" ("FB Memory Usage/Total"); a section heading maps to "". The first
	// of repeated keys wins.
	vals map[string]string
	// migs holds the "MIG Device" sections, which repeat under one key, by
	// the path below the heading.
	migs []map[string]string
}

// queryReader builds the GPU blocks of -q output line by line and fills the
// report's header (the lines at the margin outside any block).
type queryReader struct {
	r      *SMIReport
	j      *judge
	blocks []*queryBlock
	cur    *queryBlock
	// path is the stack of section headings above the current line, and
	// pathIndent their indents.
	path       []string
	pathIndent []int
}

func (qr *queryReader) line(q queryLine) {
	if q.indent == 0 && qr.margin(q) {
		return
	}
	if qr.cur != nil {
		qr.inBlock(q)
	}
}

// margin handles a line at the left margin: a "GPU <bus id>" heading opens a
// block; a key with a value is a header line and closes any block. It
// returns false for a section heading inside the current block.
func (qr *queryReader) margin(q queryLine) bool {
	if m := reQueryGPU.FindStringSubmatch(q.key); m != nil && !q.hasValue {
		qr.cur = &queryBlock{busID: m[1], vals: map[string]string{}}
		qr.blocks = append(qr.blocks, qr.cur)
		qr.path, qr.pathIndent = qr.path[:0], qr.pathIndent[:0]
		return true
	}
	if qr.cur != nil && !q.hasValue {
		return false
	}
	qr.header(q)
	qr.cur = nil
	return true
}

// header records the report-wide lines of -q output.
func (qr *queryReader) header(q queryLine) {
	switch q.key {
	case "Timestamp":
		qr.r.Timestamp = q.value
	case "Driver Version":
		qr.r.DriverVersion = q.value
	case "CUDA Version":
		qr.r.CUDAVersion = q.value
	case "Attached GPUs":
		qr.r.AttachedGPUs = attachedGPUs(qr.j, q.value)
	}
}

// inBlock files a line of the current block under its section path.
func (qr *queryReader) inBlock(q queryLine) {
	for n := len(qr.pathIndent); n > 0 && qr.pathIndent[n-1] >= q.indent; n-- {
		qr.path, qr.pathIndent = qr.path[:n-1], qr.pathIndent[:n-1]
	}
	b := qr.cur
	b.addMIG(qr.path, q)
	full := strings.Join(append(append([]string{}, qr.path...), q.key), "/")
	if _, seen := b.vals[full]; !seen {
		b.vals[full] = q.value
	}
	if !q.hasValue {
		qr.path = append(qr.path, q.key)
		qr.pathIndent = append(qr.pathIndent, q.indent)
	}
}

// addMIG opens a MIG device at a top-level "MIG Device" heading and files
// the values below one under their path relative to it.
func (b *queryBlock) addMIG(path []string, q queryLine) {
	if len(path) == 0 && q.key == "MIG Device" && !q.hasValue && len(b.migs) < maxRecords {
		b.migs = append(b.migs, map[string]string{})
	}
	if len(path) > 0 && path[0] == "MIG Device" && q.hasValue && len(b.migs) > 0 {
		rel := strings.Join(append(append([]string{}, path[1:]...), q.key), "/")
		b.migs[len(b.migs)-1][rel] = q.value
	}
}

func (b *queryBlock) has(key string) bool {
	_, ok := b.vals[key]
	return ok
}

// get returns the value of the first of keys the block has, or "".
func (b *queryBlock) get(keys ...string) string {
	return firstOf(b.vals, keys...)
}

// gpu reads the block's facts into the i-th GPU of the report.
func (b *queryBlock) gpu(i int) SMIGPU {
	get := b.get
	g := SMIGPU{
		Index:            i,
		BusID:            b.busID,
		Name:             get("Product Name"),
		Brand:            get("Product Brand"),
		Architecture:     get("Product Architecture"),
		PersistenceMode:  get("Persistence Mode"),
		MIGMode:          get("MIG Mode/Current"),
		Serial:           get("Serial Number"),
		UUID:             get("GPU UUID"),
		VBIOS:            get("VBIOS Version"),
		InfoROMImage:     get("Inforom Version/Image Version"),
		ResetRequired:    parseYesNo(get("GPU Reset Status/Reset Required")),
		PCIeGenMax:       parseIntPtr(get("PCI/GPU Link Info/PCIe Generation/Max")),
		PCIeGenCurrent:   parseIntPtr(get("PCI/GPU Link Info/PCIe Generation/Current")),
		PCIeWidthMax:     parseIntPtr(get("PCI/GPU Link Info/Link Width/Max")),
		PCIeWidthCurrent: parseIntPtr(get("PCI/GPU Link Info/Link Width/Current")),
		PCIeReplays:      parseInt64Ptr(get("PCI/Replays Since Reset")),
		PerformanceState: get("Performance State"),
		MemoryTotalMiB:   parseInt64Ptr(get("FB Memory Usage/Total")),
		MemoryUsedMiB:    parseInt64Ptr(get("FB Memory Usage/Used")),
		ECCEnabled:       parseYesNo(get("ECC Mode/Current")),
		TemperatureC:     parseIntPtr(get("Temperature/GPU Current Temp")),
		FabricState:      get("Fabric/State"),
		FabricStatus:     get("Fabric/Status"),

		UtilizationGPUPercent:    parseIntPtr(get("Utilization/Gpu")),
		DrainAndResetRecommended: parseYesNo(get("GPU Reset Status/Drain and Reset Recommended")),
		SRAMThresholdExceeded:    parseYesNo(get("ECC Errors/Aggregate/SRAM Threshold Exceeded")),
		ChannelRepairPending:     parseYesNo(get("ECC Errors/Channel Repair Pending")),
		TPCRepairPending:         parseYesNo(get("ECC Errors/TPC Repair Pending")),
		RetiredPagesSingleBit:    parseInt64Ptr(get("Retired Pages/Single Bit ECC")),
		RetiredPagesDoubleBit:    parseInt64Ptr(get("Retired Pages/Double Bit ECC")),
		RetiredPagesPending:      parseYesNo(get("Retired Pages/Pending Page Blacklist", "Retired Pages/Pending Page Retirement", "Retired Pages/Pending")),

		RowsRemappedCorrectable:   parseInt64Ptr(get("Remapped Rows/Correctable Error")),
		RowsRemappedUncorrectable: parseInt64Ptr(get("Remapped Rows/Uncorrectable Error")),
		RowRemapPending:           parseYesNo(get("Remapped Rows/Pending")),
		RowRemapFailure:           parseYesNo(get("Remapped Rows/Remapping Failure Occurred")),

		PowerDrawW:  parseFloatPtr(get("GPU Power Readings/Power Draw", "GPU Power Readings/Instantaneous Power Draw", "GPU Power Readings/Average Power Draw", "Power Readings/Power Draw")),
		PowerLimitW: parseFloatPtr(get("GPU Power Readings/Current Power Limit", "Power Readings/Enforced Power Limit", "GPU Power Readings/Enforced Power Limit", "Power Readings/Power Limit")),
		MIGDevices:  b.migDevices(),
	}
	if bus := get("PCI/Bus Id"); g.BusID == "" {
		g.BusID = bus
	}
	g.ECCUncorrectedVolatile, g.ECCCorrectedVolatile = b.eccCounts("Volatile").sums()
	g.ECCUncorrectedAggregate, g.ECCCorrectedAggregate = b.eccCounts("Aggregate").sums()
	for _, sect := range []string{"Clocks Event Reasons", "Clocks Throttle Reasons", "Clocks Throttle Reasons (Windows)"} {
		collectReasons(&g, b.vals, sect)
	}
	return g
}

// eccCounts reads an "ECC Errors/<group>" section (Volatile, Aggregate) into
// the XML's counters, which -q prints under its own labels.
func (b *queryBlock) eccCounts(group string) *xmlECCCounts {
	p := "ECC Errors/" + group + "/"
	return &xmlECCCounts{
		SRAMCorrectable:         b.get(p + "SRAM Correctable"),
		SRAMUncorrectable:       b.get(p + "SRAM Uncorrectable"),
		SRAMUncorrectableParity: b.get(p + "SRAM Uncorrectable Parity"),
		SRAMUncorrectableSECDED: b.get(p + "SRAM Uncorrectable SEC-DED"),
		DRAMCorrectable:         b.get(p + "DRAM Correctable"),
		DRAMUncorrectable:       b.get(p + "DRAM Uncorrectable"),
		SingleBit:               xmlBitCounts{Total: b.get(p + "Single Bit/Total")},
		DoubleBit:               xmlBitCounts{Total: b.get(p + "Double Bit/Total")},
	}
}

// migDevices reads the block's "MIG Device" sections; nil without any.
func (b *queryBlock) migDevices() []MIGDevice {
	var out []MIGDevice
	for k, m := range b.migs {
		d := MIGDevice{
			Index:             k,
			GPUInstanceID:     parseIntPtr(m["GPU Instance ID"]),
			ComputeInstanceID: parseIntPtr(m["Compute Instance ID"]),
			MemoryMiB:         parseInt64Ptr(firstOf(m, "Shared FB Memory Usage/Total", "FB Memory Usage/Total")),
			MemoryUsedMiB:     parseInt64Ptr(firstOf(m, "Shared FB Memory Usage/Used", "FB Memory Usage/Used")),
			Multiprocessors:   parseIntPtr(firstOf(m, "Device Attributes/Shared/Multiprocessor count")),
		}
		if n := parseIntPtr(m["Index"]); n != nil {
			d.Index = *n
		}
		out = append(out, d)
	}
	return out
}

// firstOf returns the first of keys that m has, or "".
func firstOf(m map[string]string, keys ...string) string {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return ""
}

// reasonNames maps -q's clock event reason labels to the XML names.
var reasonNames = map[string]string{
	"Idle":                        "gpu_idle",
	"Applications Clocks Setting": "applications_clocks_setting",
	"SW Power Cap":                "sw_power_cap",
	"HW Slowdown":                 "hw_slowdown",
	"HW Thermal Slowdown":         "hw_thermal_slowdown",
	"HW Power Brake Slowdown":     "hw_power_brake_slowdown",
	"Sync Boost":                  "sync_boost",
	"SW Thermal Slowdown":         "sw_thermal_slowdown",
	"Display Clock Setting":       "display_clocks_setting",
}

func collectReasons(g *SMIGPU, vals map[string]string, section string) {
	prefix := section + "/"
	var names []string
	for k, v := range vals {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if b := parseYesNo(v); b == nil || !*b {
			continue
		}
		label := k[strings.LastIndex(k, "/")+1:]
		name, ok := reasonNames[label]
		if !ok {
			name = strings.ReplaceAll(strings.ToLower(label), " ", "_")
		}
		names = append(names, name)
	}
	sort.Strings(names)
	g.ClockEventReasons = append(g.ClockEventReasons, names...)
}
