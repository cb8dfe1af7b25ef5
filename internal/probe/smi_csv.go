package probe

import (
	"regexp"
	"strings"
)

// `nvidia-smi --query-gpu=a,b,c --format=csv[,nounits]`: a header of the
// queried property names, units in brackets ("memory.total [MiB]"), then one
// row per GPU with ", " between values. With units the values carry them
// ("81559 MiB", "45 %", "24.80 W"); with nounits they do not. Values that
// cannot be read print as "[N/A]" or "[Not Supported]". Property names are
// documented by `nvidia-smi --help-query-gpu`.

// reCSVField is the shape of a property name: dotted words that may carry
// capitals (pci.baseClass, encoder.stats.sessionCount, fabric.cliqueId) and
// a unit in brackets. Detection relies on the shape, not on a list of
// names, so a field NVIDIA adds is recognised and kept.
var reCSVField = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*( \[[^\]]*\])?$`)

// csvKnown lists the properties the parser maps to SMIGPU fields (with
// their aliases); every other column is kept in SMIGPU.Fields.
var csvKnown = map[string]bool{
	"index": true, "name": true, "gpu_name": true, "uuid": true, "gpu_uuid": true, "serial": true, "gpu_serial": true,
	"pci.bus_id": true, "gpu_bus_id": true, "vbios_version": true, "driver_version": true,
	"memory.total": true, "memory.used": true, "memory.free": true, "temperature.gpu": true,
	"power.draw": true, "power.draw.instant": true, "power.draw.average": true, "power.limit": true, "enforced.power.limit": true,
	"utilization.gpu": true, "utilization.memory": true, "ecc.mode.current": true,
	"ecc.errors.uncorrected.volatile.total": true, "ecc.errors.uncorrected.aggregate.total": true,
	"ecc.errors.corrected.volatile.total": true, "ecc.errors.corrected.aggregate.total": true,
	"retired_pages.pending": true, "retired_pages.sbe": true, "retired_pages.dbe": true,
	"retired_pages.single_bit_ecc.count": true, "retired_pages.double_bit.count": true,
	"ecc.errors.uncorrected.aggregate.sram.thresholdExceeded": true, "fabric.state": true, "fabric.status": true,
	"architecture": true, "inforom.img": true,
	"remapped_rows.pending": true, "remapped_rows.failure": true, "remapped_rows.correctable": true, "remapped_rows.uncorrectable": true,
	"pcie.link.gen.current": true, "pcie.link.gen.max": true, "pcie.link.gen.gpucurrent": true, "pcie.link.gen.gpumax": true,
	"pcie.link.width.current": true, "pcie.link.width.max": true,
	"mig.mode.current": true, "persistence_mode": true, "pstate": true, "fan.speed": true, "count": true,
	"clocks.current.graphics": true, "clocks.current.sm": true, "clocks.current.memory": true,
}

func csvName(h string) string {
	h = strings.TrimSpace(h)
	if i := strings.Index(h, " ["); i >= 0 {
		h = h[:i]
	}
	return h
}

// isCSVHeader reports whether l is a --query-gpu CSV header: every field
// has the shape of a property name, and a dotted or known name shows that
// they are nvidia-smi's (a single field must be dotted). When next, the
// following non-blank line, is given, it must have as many fields.
func isCSVHeader(l, next string) bool {
	parts := strings.Split(l, ",")
	dotted, known := false, false
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if !reCSVField.MatchString(p) {
			return false
		}
		name := csvName(p)
		dotted = dotted || strings.Contains(name, ".")
		known = known || csvKnown[name]
	}
	if len(parts) == 1 && !dotted {
		return false
	}
	if !dotted && !known {
		return false
	}
	return next == "" || len(strings.Split(next, ",")) == len(parts)
}

// parseSMICSV reads --query-gpu CSV output.
func parseSMICSV(r *SMIReport, j *judge, data []byte) {
	r.Format = "csv"
	var header []string
	bad, lastShort := 0, false
	for _, l := range lines(data) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lastShort = false
		if header == nil {
			for _, h := range strings.Split(l, ",") {
				header = append(header, csvName(h))
			}
			continue
		}
		vals := strings.Split(l, ",")
		if len(vals) != len(header) {
			bad++
			lastShort = len(vals) < len(header)
			continue
		}
		row := map[string]string{}
		for i, v := range vals {
			row[header[i]] = strings.TrimSpace(v)
		}
		if !j.room(len(r.GPUs), "GPUs") {
			break
		}
		g := csvGPU(row, len(r.GPUs))
		g.Fields = row
		r.GPUs = append(r.GPUs, g)
		if v := row["driver_version"]; v != "" && r.DriverVersion == "" {
			r.DriverVersion = v
		}
		if _, ok := row["count"]; ok && r.AttachedGPUs == nil && len(r.GPUs) == 1 {
			r.AttachedGPUs = attachedGPUs(j, row["count"])
		}
	}
	if lastShort {
		// The last row is cut where the input ends: truncated, not garbled.
		bad--
		j.unusable("output-truncated", "", "the last CSV row has fewer than the header's %d columns: the output ends inside it, and GPUs after it may be missing", len(header))
	}
	if bad > 0 {
		j.unusable("output-garbled", "", "%d CSV rows do not have the %d columns of the header", bad, len(header))
	}
}

func csvGPU(row map[string]string, order int) SMIGPU {
	get := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := row[k]; ok && !na(v) {
				return v
			}
		}
		return ""
	}
	g := SMIGPU{
		Index:            order,
		Name:             get("name", "gpu_name"),
		UUID:             get("uuid", "gpu_uuid"),
		Serial:           get("serial", "gpu_serial"),
		BusID:            get("pci.bus_id", "gpu_bus_id"),
		VBIOS:            get("vbios_version"),
		MemoryTotalMiB:   parseInt64Ptr(get("memory.total")),
		MemoryUsedMiB:    parseInt64Ptr(get("memory.used")),
		TemperatureC:     parseIntPtr(get("temperature.gpu")),
		PowerDrawW:       parseFloatPtr(get("power.draw", "power.draw.instant", "power.draw.average")),
		PowerLimitW:      parseFloatPtr(get("enforced.power.limit", "power.limit")),
		ECCEnabled:       parseYesNo(get("ecc.mode.current")),
		PCIeGenCurrent:   parseIntPtr(get("pcie.link.gen.current", "pcie.link.gen.gpucurrent")),
		PCIeGenMax:       parseIntPtr(get("pcie.link.gen.max", "pcie.link.gen.gpumax")),
		PCIeWidthCurrent: parseIntPtr(get("pcie.link.width.current")),
		PCIeWidthMax:     parseIntPtr(get("pcie.link.width.max")),
		MIGMode:          get("mig.mode.current"),
		PersistenceMode:  get("persistence_mode"),
		PerformanceState: get("pstate"),

		UtilizationGPUPercent:     parseIntPtr(get("utilization.gpu")),
		ECCUncorrectedVolatile:    parseInt64Ptr(get("ecc.errors.uncorrected.volatile.total")),
		ECCUncorrectedAggregate:   parseInt64Ptr(get("ecc.errors.uncorrected.aggregate.total")),
		ECCCorrectedVolatile:      parseInt64Ptr(get("ecc.errors.corrected.volatile.total")),
		ECCCorrectedAggregate:     parseInt64Ptr(get("ecc.errors.corrected.aggregate.total")),
		RetiredPagesSingleBit:     parseInt64Ptr(get("retired_pages.sbe", "retired_pages.single_bit_ecc.count")),
		RetiredPagesDoubleBit:     parseInt64Ptr(get("retired_pages.dbe", "retired_pages.double_bit.count")),
		SRAMThresholdExceeded:     parseYesNo(get("ecc.errors.uncorrected.aggregate.sram.thresholdExceeded")),
		FabricState:               get("fabric.state"),
		FabricStatus:              get("fabric.status"),
		Architecture:              get("architecture"),
		InfoROMImage:              get("inforom.img"),
		RetiredPagesPending:       parseYesNo(get("retired_pages.pending")),
		RowRemapPending:           parseYesNo(get("remapped_rows.pending")),
		RowRemapFailure:           parseYesNo(get("remapped_rows.failure")),
		RowsRemappedCorrectable:   parseInt64Ptr(get("remapped_rows.correctable")),
		RowsRemappedUncorrectable: parseInt64Ptr(get("remapped_rows.uncorrectable")),
	}
	if n := parseIntPtr(get("index")); n != nil {
		g.Index = *n
	}
	if g.MemoryTotalMiB == nil {
		g.MemoryTotalMiB = addNonNil(parseInt64Ptr(get("memory.used")), parseInt64Ptr(get("memory.free")))
	}
	return g
}

// addNonNil adds two known values; nil if either is unknown.
func addNonNil(a, b *int64) *int64 {
	if a == nil || b == nil {
		return nil
	}
	return ptr(*a + *b)
}
