package probe

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strings"
)

// The XML shapes follow NVIDIA's nvsmi_device_vNN.dtd. Differences handled
// here, all seen in real outputs:
//   - v10 and older count ECC errors as single_bit/double_bit with a <total>;
//     v11/v12 split them into sram_/dram_ correctable/uncorrectable without a
//     total; v13 splits sram_uncorrectable into _parity and _secded;
//   - <remapped_rows> is either children or the text "N/A";
//   - clocks_throttle_reasons (v11) became clocks_event_reasons (v12);
//   - power_readings/power_draw (v11) became gpu_power_readings with
//     power_draw or, in v13, instant_power_draw/average_power_draw only;
//   - attached_gpus may be larger than the number of <gpu> elements;
//   - v13 adds <ecc_errors><channel_repair_pending> and <tpc_repair_pending>
//     (Blackwell memory and TPC repair waiting for a GPU reset).

type xmlLeaf struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

type xmlECCCounts struct {
	SRAMCorrectable         string       `xml:"sram_correctable"`
	SRAMUncorrectable       string       `xml:"sram_uncorrectable"`
	SRAMUncorrectableParity string       `xml:"sram_uncorrectable_parity"`
	SRAMUncorrectableSECDED string       `xml:"sram_uncorrectable_secded"`
	DRAMCorrectable         string       `xml:"dram_correctable"`
	DRAMUncorrectable       string       `xml:"dram_uncorrectable"`
	SRAMThresholdExceeded   string       `xml:"sram_threshold_exceeded"`
	SingleBit               xmlBitCounts `xml:"single_bit"`
	DoubleBit               xmlBitCounts `xml:"double_bit"`
}

type xmlBitCounts struct {
	Total string `xml:"total"`
}

type xmlGPU struct {
	ID           string `xml:"id,attr"`
	ProductName  string `xml:"product_name"`
	ProductBrand string `xml:"product_brand"`
	ProductArch  string `xml:"product_architecture"`
	Persistence  string `xml:"persistence_mode"`
	MIGMode      struct {
		Current string `xml:"current_mig"`
	} `xml:"mig_mode"`
	MIGDevices struct {
		Devices []struct {
			Index             string `xml:"index"`
			GPUInstanceID     string `xml:"gpu_instance_id"`
			ComputeInstanceID string `xml:"compute_instance_id"`
			FB                struct {
				Total string `xml:"total"`
				Used  string `xml:"used"`
			} `xml:"fb_memory_usage"`
			Attributes struct {
				SMs string `xml:"shared>multiprocessor_count"`
			} `xml:"device_attributes"`
		} `xml:"mig_device"`
	} `xml:"mig_devices"`
	Serial  string `xml:"serial"`
	UUID    string `xml:"uuid"`
	VBIOS   string `xml:"vbios_version"`
	InfoROM struct {
		Image string `xml:"img_version"`
	} `xml:"inforom_version"`
	ResetState struct {
		ResetRequired string `xml:"reset_required"`
		DrainAndReset string `xml:"drain_and_reset_recommended"`
	} `xml:"gpu_reset_status"`
	PCI struct {
		BusID string `xml:"pci_bus_id"`
		Link  struct {
			Gen struct {
				Max     string `xml:"max_link_gen"`
				Current string `xml:"current_link_gen"`
			} `xml:"pcie_gen"`
			Width struct {
				Max     string `xml:"max_link_width"`
				Current string `xml:"current_link_width"`
			} `xml:"link_widths"`
		} `xml:"pci_gpu_link_info"`
		Replays string `xml:"replay_counter"`
	} `xml:"pci"`
	PerfState       string `xml:"performance_state"`
	ThrottleReasons struct {
		Items []xmlLeaf `xml:",any"`
	} `xml:"clocks_throttle_reasons"`
	EventReasons struct {
		Items []xmlLeaf `xml:",any"`
	} `xml:"clocks_event_reasons"`
	FB struct {
		Total string `xml:"total"`
		Used  string `xml:"used"`
	} `xml:"fb_memory_usage"`
	Utilization struct {
		GPU string `xml:"gpu_util"`
	} `xml:"utilization"`
	ECCMode struct {
		Current string `xml:"current_ecc"`
	} `xml:"ecc_mode"`
	ECCErrors struct {
		Volatile             xmlECCCounts `xml:"volatile"`
		Aggregate            xmlECCCounts `xml:"aggregate"`
		ChannelRepairPending string       `xml:"channel_repair_pending"`
		TPCRepairPending     string       `xml:"tpc_repair_pending"`
	} `xml:"ecc_errors"`
	RetiredPages struct {
		SingleBit struct {
			Count string `xml:"retired_count"`
		} `xml:"multiple_single_bit_retirement"`
		DoubleBit struct {
			Count string `xml:"retired_count"`
		} `xml:"double_bit_retirement"`
		PendingBlacklist  string `xml:"pending_blacklist"`
		PendingRetirement string `xml:"pending_retirement"`
	} `xml:"retired_pages"`
	RemappedRows struct {
		Text    string `xml:",chardata"`
		Corr    string `xml:"remapped_row_corr"`
		Unc     string `xml:"remapped_row_unc"`
		Pending string `xml:"remapped_row_pending"`
		Failure string `xml:"remapped_row_failure"`
	} `xml:"remapped_rows"`
	Temperature struct {
		GPU string `xml:"gpu_temp"`
	} `xml:"temperature"`
	PowerReadings    xmlPower `xml:"power_readings"`
	GPUPowerReadings xmlPower `xml:"gpu_power_readings"`
	Fabric           struct {
		State  string `xml:"state"`
		Status string `xml:"status"`
	} `xml:"fabric"`
}

type xmlPower struct {
	PowerDraw         string `xml:"power_draw"`
	InstantPowerDraw  string `xml:"instant_power_draw"`
	AveragePowerDraw  string `xml:"average_power_draw"`
	PowerLimit        string `xml:"power_limit"`
	EnforcedLimit     string `xml:"enforced_power_limit"`
	CurrentPowerLimit string `xml:"current_power_limit"`
}

var reDoctype = regexp.MustCompile(`<!DOCTYPE\s+nvidia_smi_log\s+SYSTEM\s+"([^"]+)"`)

// parseSMIXML reads `nvidia-smi -q -x`. It decodes <gpu> elements one at a
// time so that a truncated document still yields the GPUs before the cut.
func parseSMIXML(r *SMIReport, j *judge, data []byte) {
	r.Format = "xml"
	if m := reDoctype.FindSubmatch(data); m != nil {
		r.DTDVersion = string(m[1])
	}
	if xmlDepth(data) > maxXMLDepth {
		j.unusable("output-truncated", "", "the XML nests elements deeper than %d levels; nvidia-smi writes about 5", maxXMLDepth)
		return
	}
	xr := xmlReader{r: r, j: j, d: xml.NewDecoder(bytes.NewReader(data))}
	if xr.read() && (!xr.sawRoot || !xr.closedRoot) {
		j.unusable("output-truncated", "", "the XML document is not complete (no closing </nvidia_smi_log>)")
	}
}

// maxXMLDepth is the deepest nesting of elements parseSMIXML reads
// (nvidia-smi's XML nests about 5): encoding/xml skips unknown elements
// by recursion and keeps a name for each open one, so a document of
// millions of nested elements ran out of memory.
const maxXMLDepth = 64

// xmlDepth is the deepest element nesting of data, by its tags: "<name"
// opens, "</" and "/>" close; comments, declarations and processing
// instructions are not elements. It reads the bytes once, without a
// stack.
func xmlDepth(data []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '<' && i+1 < len(data) && data[i+1] == '/':
			depth = max(depth-1, 0)
		case data[i] == '<' && i+1 < len(data) && data[i+1] != '!' && data[i+1] != '?':
			depth++
			deepest = max(deepest, depth)
		case data[i] == '/' && i+1 < len(data) && data[i+1] == '>':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// xmlReader walks the document's tokens, decoding the children of the root
// <nvidia_smi_log> that the report holds: the header elements and each
// <gpu>.
type xmlReader struct {
	r *SMIReport
	j *judge
	d *xml.Decoder
	// stack holds the names of the open elements not decoded whole.
	stack               []string
	sawRoot, closedRoot bool
}

// read walks the document to its end; false when it stopped early, with a
// finding or for want of room.
func (xr *xmlReader) read() bool {
	for {
		tok, err := xr.d.Token()
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			xr.j.unusable("output-truncated", "", "the XML is malformed or truncated: %v", err)
			return false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if !xr.start(&t) {
				return false
			}
		case xml.EndElement:
			if len(xr.stack) > 0 {
				xr.stack = xr.stack[:len(xr.stack)-1]
			}
			if t.Name.Local == "nvidia_smi_log" && len(xr.stack) == 0 {
				xr.closedRoot = true
			}
		}
	}
}

func (xr *xmlReader) start(t *xml.StartElement) bool {
	name := t.Name.Local
	if len(xr.stack) == 1 && xr.stack[0] == "nvidia_smi_log" {
		switch name {
		case "gpu":
			return xr.gpu(t)
		case "timestamp", "driver_version", "cuda_version", "attached_gpus":
			return xr.header(name, t)
		}
	}
	if name == "nvidia_smi_log" && len(xr.stack) == 0 {
		xr.sawRoot = true
	}
	xr.stack = append(xr.stack, name)
	return true
}

// gpu decodes a <gpu> element whole.
func (xr *xmlReader) gpu(t *xml.StartElement) bool {
	if !xr.j.room(len(xr.r.GPUs), "GPUs") {
		return false
	}
	var xg xmlGPU
	if err := xr.d.DecodeElement(&xg, t); err != nil {
		xr.j.unusable("output-truncated", "", "the XML ends inside a <gpu> element: %v", err)
		return false
	}
	xr.r.GPUs = append(xr.r.GPUs, xg.toGPU(len(xr.r.GPUs)))
	return true
}

// header decodes one of the root's text elements into the report.
func (xr *xmlReader) header(name string, t *xml.StartElement) bool {
	var v string
	if err := xr.d.DecodeElement(&v, t); err != nil {
		xr.j.unusable("output-truncated", "", "the XML is truncated: %v", err)
		return false
	}
	v = strings.TrimSpace(v)
	switch name {
	case "timestamp":
		xr.r.Timestamp = v
	case "driver_version":
		xr.r.DriverVersion = v
	case "cuda_version":
		xr.r.CUDAVersion = v
	case "attached_gpus":
		xr.r.AttachedGPUs = attachedGPUs(xr.j, v)
	}
	return true
}

func (x *xmlGPU) toGPU(index int) SMIGPU {
	g := SMIGPU{
		Index:            index,
		Name:             clean(x.ProductName),
		Brand:            clean(x.ProductBrand),
		Architecture:     clean(x.ProductArch),
		BusID:            clean(x.ID),
		UUID:             clean(x.UUID),
		Serial:           clean(x.Serial),
		VBIOS:            clean(x.VBIOS),
		InfoROMImage:     clean(x.InfoROM.Image),
		MemoryTotalMiB:   parseInt64Ptr(x.FB.Total),
		MemoryUsedMiB:    parseInt64Ptr(x.FB.Used),
		ECCEnabled:       parseYesNo(x.ECCMode.Current),
		PCIeGenCurrent:   parseIntPtr(x.PCI.Link.Gen.Current),
		PCIeGenMax:       parseIntPtr(x.PCI.Link.Gen.Max),
		PCIeWidthCurrent: parseIntPtr(x.PCI.Link.Width.Current),
		PCIeWidthMax:     parseIntPtr(x.PCI.Link.Width.Max),
		PCIeReplays:      parseInt64Ptr(x.PCI.Replays),
		MIGMode:          clean(x.MIGMode.Current),
		PersistenceMode:  clean(x.Persistence),
		PerformanceState: clean(x.PerfState),
		TemperatureC:     parseIntPtr(x.Temperature.GPU),

		UtilizationGPUPercent: parseIntPtr(x.Utilization.GPU),
		ResetRequired:         parseYesNo(x.ResetState.ResetRequired),

		DrainAndResetRecommended: parseYesNo(x.ResetState.DrainAndReset),
		FabricState:              clean(x.Fabric.State),
		FabricStatus:             clean(x.Fabric.Status),
	}
	if g.BusID == "" {
		g.BusID = clean(x.PCI.BusID)
	}
	g.ECCUncorrectedVolatile, g.ECCCorrectedVolatile = x.ECCErrors.Volatile.sums()
	g.ECCUncorrectedAggregate, g.ECCCorrectedAggregate = x.ECCErrors.Aggregate.sums()
	g.SRAMThresholdExceeded = parseYesNo(x.ECCErrors.Aggregate.SRAMThresholdExceeded)
	g.ChannelRepairPending = parseYesNo(x.ECCErrors.ChannelRepairPending)
	g.TPCRepairPending = parseYesNo(x.ECCErrors.TPCRepairPending)
	g.RetiredPagesSingleBit = parseInt64Ptr(x.RetiredPages.SingleBit.Count)
	g.RetiredPagesDoubleBit = parseInt64Ptr(x.RetiredPages.DoubleBit.Count)
	g.RetiredPagesPending = parseYesNo(x.RetiredPages.PendingRetirement)
	if g.RetiredPagesPending == nil {
		g.RetiredPagesPending = parseYesNo(x.RetiredPages.PendingBlacklist)
	}
	rr := x.RemappedRows
	g.RowsRemappedCorrectable = parseInt64Ptr(rr.Corr)
	g.RowsRemappedUncorrectable = parseInt64Ptr(rr.Unc)
	g.RowRemapPending = parseYesNo(rr.Pending)
	g.RowRemapFailure = parseYesNo(rr.Failure)
	for _, p := range []xmlPower{x.GPUPowerReadings, x.PowerReadings} {
		for _, s := range []string{p.PowerDraw, p.InstantPowerDraw, p.AveragePowerDraw} {
			if g.PowerDrawW == nil {
				g.PowerDrawW = parseFloatPtr(s)
			}
		}
		for _, s := range []string{p.EnforcedLimit, p.CurrentPowerLimit, p.PowerLimit} {
			if g.PowerLimitW == nil {
				g.PowerLimitW = parseFloatPtr(s)
			}
		}
	}
	for _, it := range append(x.ThrottleReasons.Items, x.EventReasons.Items...) {
		if b := parseYesNo(it.Value); b != nil && *b {
			name := it.XMLName.Local
			for _, p := range []string{"clocks_throttle_reason_", "clocks_event_reason_"} {
				name = strings.TrimPrefix(name, p)
			}
			g.ClockEventReasons = append(g.ClockEventReasons, name)
		}
	}
	for i, m := range x.MIGDevices.Devices {
		if i >= maxRecords {
			break
		}
		idx := i
		if n := parseIntPtr(m.Index); n != nil {
			idx = *n
		}
		g.MIGDevices = append(g.MIGDevices, MIGDevice{
			Index:             idx,
			GPUInstanceID:     parseIntPtr(m.GPUInstanceID),
			ComputeInstanceID: parseIntPtr(m.ComputeInstanceID),
			MemoryMiB:         parseInt64Ptr(m.FB.Total),
			MemoryUsedMiB:     parseInt64Ptr(m.FB.Used),
			Multiprocessors:   parseIntPtr(m.Attributes.SMs),
		})
	}
	return g
}

// sums returns the uncorrectable and correctable totals of one ECC counter
// group across the DTD layouts.
func (c *xmlECCCounts) sums() (uncorrected, corrected *int64) {
	if t := parseInt64Ptr(c.DoubleBit.Total); t != nil {
		uncorrected = t
	} else {
		sram := parseInt64Ptr(c.SRAMUncorrectable)
		if sram == nil {
			sram = addInt64(parseInt64Ptr(c.SRAMUncorrectableParity), parseInt64Ptr(c.SRAMUncorrectableSECDED))
		}
		uncorrected = addInt64(sram, parseInt64Ptr(c.DRAMUncorrectable))
	}
	if t := parseInt64Ptr(c.SingleBit.Total); t != nil {
		corrected = t
	} else {
		corrected = addInt64(parseInt64Ptr(c.SRAMCorrectable), parseInt64Ptr(c.DRAMCorrectable))
	}
	return uncorrected, corrected
}
