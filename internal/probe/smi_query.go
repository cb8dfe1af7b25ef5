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
	var ql []queryLine
	colonCount := map[int]int{}
	// The Processes section of a GPU under load pads its colons to a
	// column of its own (R580 and later), so it is left out of the
	// alignment check.
	procIndent := -1
	for i, l := range lines(data) {
		if q, ok := splitQueryLine(i+1, l); ok {
			if procIndent >= 0 && q.indent <= procIndent {
				procIndent = -1
			}
			q.inProcesses = procIndent >= 0
			if q.key == "Processes" && !q.hasValue && q.indent > 0 {
				procIndent = q.indent
			}
			ql = append(ql, q)
			if q.hasValue && q.padded && !q.inProcesses {
				colonCount[q.colon]++
			}
		}
	}
	dominant, best := -1, 0
	for c, n := range colonCount {
		if n > best || (n == best && c < dominant) {
			dominant, best = c, n
		}
	}
	var garbled []string
	type block struct {
		busID string
		vals  map[string]string
		kids  map[string][]queryLine
		// migs holds the "MIG Device" sections, which repeat under one key.
		migs []map[string]string
	}
	var blocks []*block
	var cur *block
	var path []string
	var pathIndent []int
	for _, q := range ql {
		if q.hasValue && q.padded && dominant >= 0 && q.colon != dominant && !q.inProcesses {
			garbled = append(garbled, q.key)
		}
		if q.indent == 0 {
			if m := reQueryGPU.FindStringSubmatch(q.key); m != nil && !q.hasValue {
				cur = &block{busID: m[1], vals: map[string]string{}, kids: map[string][]queryLine{}}
				blocks = append(blocks, cur)
				path, pathIndent = path[:0], pathIndent[:0]
				continue
			}
			if cur == nil || q.hasValue {
				switch q.key {
				case "Timestamp":
					r.Timestamp = q.value
				case "Driver Version":
					r.DriverVersion = q.value
				case "CUDA Version":
					r.CUDAVersion = q.value
				case "Attached GPUs":
					r.AttachedGPUs = parseIntPtr(q.value)
				}
				if cur != nil && q.hasValue {
					cur = nil
				}
				continue
			}
		}
		if cur == nil {
			continue
		}
		for len(pathIndent) > 0 && pathIndent[len(pathIndent)-1] >= q.indent {
			path, pathIndent = path[:len(path)-1], pathIndent[:len(pathIndent)-1]
		}
		if len(path) == 0 && q.key == "MIG Device" && !q.hasValue && len(cur.migs) < maxRecords {
			cur.migs = append(cur.migs, map[string]string{})
		}
		if len(path) > 0 && path[0] == "MIG Device" && q.hasValue && len(cur.migs) > 0 {
			rel := strings.Join(append(append([]string{}, path[1:]...), q.key), "/")
			cur.migs[len(cur.migs)-1][rel] = q.value
		}
		full := strings.Join(append(append([]string{}, path...), q.key), "/")
		if q.hasValue {
			if _, seen := cur.vals[full]; !seen {
				cur.vals[full] = q.value
			}
			parent := strings.Join(path, "/")
			cur.kids[parent] = append(cur.kids[parent], q)
		}
		if !q.hasValue {
			if _, seen := cur.vals[full]; !seen {
				cur.vals[full] = ""
			}
			path = append(path, q.key)
			pathIndent = append(pathIndent, q.indent)
		}
	}
	if len(garbled) > 0 {
		j.unusable("output-garbled", "", "%d lines are mangled (misaligned keys such as %q): the output was damaged", len(garbled), truncate(garbled[0], 60))
	}
	hasProcesses := 0
	for _, b := range blocks {
		if _, ok := b.vals["Processes"]; ok {
			hasProcesses++
		}
	}
	if len(blocks) > maxRecords {
		j.room(len(blocks), "GPUs")
		blocks = blocks[:maxRecords]
	}
	for i, b := range blocks {
		get := func(keys ...string) string {
			for _, k := range keys {
				if v, ok := b.vals[k]; ok {
					return v
				}
			}
			return ""
		}
		_, full := b.vals["Product Name"]
		_, procs := b.vals["Processes"]
		if full && !procs && (hasProcesses > 0 || i == len(blocks)-1) {
			j.unusable("output-truncated", b.busID, "the block of GPU %s ends early (no Processes section): the output is truncated", b.busID)
		}
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
		}
		if bus := get("PCI/Bus Id"); g.BusID == "" {
			g.BusID = bus
		}
		// The ECC counter groups hold the XML's counters under -q's labels.
		ecc := func(group string) *xmlECCCounts {
			p := "ECC Errors/" + group + "/"
			return &xmlECCCounts{
				SRAMCorrectable:         get(p + "SRAM Correctable"),
				SRAMUncorrectable:       get(p + "SRAM Uncorrectable"),
				SRAMUncorrectableParity: get(p + "SRAM Uncorrectable Parity"),
				SRAMUncorrectableSECDED: get(p + "SRAM Uncorrectable SEC-DED"),
				DRAMCorrectable:         get(p + "DRAM Correctable"),
				DRAMUncorrectable:       get(p + "DRAM Uncorrectable"),
				SingleBit:               xmlBitCounts{Total: get(p + "Single Bit/Total")},
				DoubleBit:               xmlBitCounts{Total: get(p + "Double Bit/Total")},
			}
		}
		g.ECCUncorrectedVolatile, g.ECCCorrectedVolatile = ecc("Volatile").sums()
		g.ECCUncorrectedAggregate, g.ECCCorrectedAggregate = ecc("Aggregate").sums()
		g.PowerDrawW = parseFloatPtr(get("GPU Power Readings/Power Draw", "GPU Power Readings/Instantaneous Power Draw", "GPU Power Readings/Average Power Draw", "Power Readings/Power Draw"))
		g.PowerLimitW = parseFloatPtr(get("GPU Power Readings/Current Power Limit", "Power Readings/Enforced Power Limit", "GPU Power Readings/Enforced Power Limit", "Power Readings/Power Limit"))
		for _, sect := range []string{"Clocks Event Reasons", "Clocks Throttle Reasons", "Clocks Throttle Reasons (Windows)"} {
			collectReasons(&g, b.vals, sect)
		}
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
			g.MIGDevices = append(g.MIGDevices, d)
		}
		r.GPUs = append(r.GPUs, g)
	}
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
