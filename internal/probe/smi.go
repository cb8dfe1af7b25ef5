package probe

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SMIReport is what nvidia-smi printed, in any of its shapes (see Format).
// NVIDIA documents the fields in `nvidia-smi --help-query-gpu` and the
// nvidia-smi(1) man page; the XML shape is defined by nvsmi_device_vNN.dtd.
type SMIReport struct {
	Header
	// Format is the shape that was read: "xml" (-q -x), "query" (-q text),
	// "table" (the default summary), "csv" (--query-gpu --format=csv), "list"
	// (-L), "nvlink" (nvlink -s) or "error" (only a failure message).
	Format string `json:"format"`
	// DTDVersion is the XML document type, e.g. "nvsmi_device_v12.dtd".
	DTDVersion string `json:"dtdVersion,omitempty"`
	// Timestamp as printed by nvidia-smi (local time of the node).
	Timestamp     string `json:"timestamp,omitempty"`
	DriverVersion string `json:"driverVersion"`
	// CUDAVersion is the newest CUDA version the driver supports (not the
	// toolkit installed).
	CUDAVersion string `json:"cudaVersion"`
	// AttachedGPUs is the count nvidia-smi reports; it can be larger than
	// len(GPUs) when the output is incomplete or filtered. Nil when not shown.
	AttachedGPUs *int     `json:"attachedGPUs"`
	GPUs         []SMIGPU `json:"gpus"`
	// Error is the failure nvidia-smi (or NVML under it) reported instead of
	// or besides its output; nil when there was none.
	Error *SMIError `json:"error"`
	// Fragment: the input was a fragment of -q (a section of one GPU's
	// block without the header and the GPU line, see
	// parseSMIQueryFragment); its one GPU has no bus ID.
	Fragment bool `json:"fragment,omitempty"`
}

// SMIGPU is one physical GPU. Pointer fields are nil when the output did not
// show the value or showed N/A; zero is a real reading.
type SMIGPU struct {
	// Index is the GPU's position in nvidia-smi's enumeration (the printed
	// index where shown, else the order of appearance).
	Index int `json:"index"`
	// Name is the product name, e.g. "NVIDIA H100 80GB HBM3" (the table may
	// truncate it with "...").
	Name         string `json:"name"`
	Brand        string `json:"brand,omitempty"`
	Architecture string `json:"architecture,omitempty"`
	// BusID is the PCI bus ID as printed, e.g. "00000000:19:00.0".
	BusID  string `json:"busId"`
	UUID   string `json:"uuid"`
	Serial string `json:"serial"`
	VBIOS  string `json:"vbios"`
	// InfoROMImage is the InfoROM image version ("Inforom Version" →
	// "Image Version" in -q, <inforom_version><img_version> in -q -x), e.g.
	// "G520.0200.00.05"; "" where not shown.
	InfoROMImage string `json:"inforomImage"`
	// MemoryTotalMiB and MemoryUsedMiB: framebuffer memory in MiB.
	MemoryTotalMiB *int64 `json:"memoryTotalMiB"`
	MemoryUsedMiB  *int64 `json:"memoryUsedMiB"`
	// ECCEnabled is the current ECC mode.
	ECCEnabled *bool `json:"eccEnabled"`
	// ECC error counts: volatile since the last driver load, aggregate over
	// the GPU's life. Uncorrected sums SRAM and DRAM (or the "Double Bit
	// Total" of older drivers); corrected likewise for correctable errors.
	ECCUncorrectedVolatile  *int64 `json:"eccUncorrectedVolatile"`
	ECCUncorrectedAggregate *int64 `json:"eccUncorrectedAggregate"`
	ECCCorrectedVolatile    *int64 `json:"eccCorrectedVolatile"`
	ECCCorrectedAggregate   *int64 `json:"eccCorrectedAggregate"`
	// SRAMThresholdExceeded: the SRAM uncorrectable error threshold was
	// exceeded (Hopper and later).
	SRAMThresholdExceeded *bool `json:"sramThresholdExceeded"`
	// Dynamic page retirement (pre-Ampere): pages retired for single- and
	// double-bit errors, and whether a retirement waits for a reboot.
	RetiredPagesSingleBit *int64 `json:"retiredPagesSingleBit"`
	RetiredPagesDoubleBit *int64 `json:"retiredPagesDoubleBit"`
	RetiredPagesPending   *bool  `json:"retiredPagesPending"`
	// Row remapping (Ampere and later): rows remapped for correctable and
	// uncorrectable errors, a remap waiting for a GPU reset, a failed remap.
	RowsRemappedCorrectable   *int64 `json:"rowsRemappedCorrectable"`
	RowsRemappedUncorrectable *int64 `json:"rowsRemappedUncorrectable"`
	RowRemapPending           *bool  `json:"rowRemapPending"`
	RowRemapFailure           *bool  `json:"rowRemapFailure"`
	// ChannelRepairPending and TPCRepairPending (XML DTD v13, Blackwell):
	// an HBM channel or a TPC repair waits for a GPU reset.
	ChannelRepairPending *bool `json:"channelRepairPending"`
	TPCRepairPending     *bool `json:"tpcRepairPending"`
	// GPU Reset Status (R535 and later).
	ResetRequired            *bool `json:"resetRequired"`
	DrainAndResetRecommended *bool `json:"drainAndResetRecommended"`
	// PCIe link: generation and width (lanes), current and maximum. The
	// current values drop when the GPU is idle.
	PCIeGenCurrent   *int   `json:"pcieGenCurrent"`
	PCIeGenMax       *int   `json:"pcieGenMax"`
	PCIeWidthCurrent *int   `json:"pcieWidthCurrent"`
	PCIeWidthMax     *int   `json:"pcieWidthMax"`
	PCIeReplays      *int64 `json:"pcieReplays"`
	// MIGMode is the current MIG mode as printed: "Enabled", "Disabled",
	// "N/A" (not supported) or "" (not shown).
	MIGMode    string      `json:"migMode"`
	MIGDevices []MIGDevice `json:"migDevices"`
	// PersistenceMode: "Enabled"/"Disabled" (or the table's "On"/"Off").
	PersistenceMode  string `json:"persistenceMode"`
	PerformanceState string `json:"performanceState"`
	// TemperatureC is the GPU core temperature in °C.
	TemperatureC *int `json:"temperatureC"`
	// PowerDrawW and PowerLimitW in watts.
	PowerDrawW  *float64 `json:"powerDrawW"`
	PowerLimitW *float64 `json:"powerLimitW"`
	// UtilizationGPUPercent: percent of time a kernel ran over the last
	// sample period.
	UtilizationGPUPercent *int `json:"utilizationGPUPercent"`
	// ClockEventReasons lists the active clock event (throttle) reasons, in
	// nvidia-smi's words with the XML prefixes removed ("gpu_idle",
	// "hw_slowdown"...).
	ClockEventReasons []string `json:"clockEventReasons"`
	// Fabric state and status on NVSwitch systems ("Completed", "Success").
	FabricState  string `json:"fabricState,omitempty"`
	FabricStatus string `json:"fabricStatus,omitempty"`
	// NVLinks from `nvidia-smi nvlink -s`.
	NVLinks []NVLink `json:"nvlinks"`
	// NVLinkStatus is what `nvidia-smi nvlink -s` said instead of listing
	// links: one of the NVLink* constants, "" when it listed them or was not
	// run.
	NVLinkStatus string `json:"nvlinkStatus,omitempty"`
	// ErrFields names the cells the table showed as "ERR!".
	ErrFields []string `json:"errFields"`
	// Fields holds every column of a --query-gpu CSV row by property name
	// (units removed from the name, values as printed), the ones mapped
	// above and the ones gpuctl does not know alike; absent for other shapes.
	Fields map[string]string `json:"fields,omitempty"`
}

// MIGDevice is one MIG instance of a GPU, as -L (profile, UUID), -q and
// -q -x (instance IDs, memory, SMs) or the table's "MIG devices:" section
// (instance IDs, memory, SMs) show it. Nil and "" are "not shown".
type MIGDevice struct {
	// Index is the MIG device's index on its GPU ("MIG Dev", "Device N").
	Index             int  `json:"index"`
	GPUInstanceID     *int `json:"gpuInstanceId"`
	ComputeInstanceID *int `json:"computeInstanceId"`
	// Profile is the GPU instance profile, e.g. "1g.10gb" (-L only).
	Profile string `json:"profile,omitempty"`
	UUID    string `json:"uuid,omitempty"`
	// MemoryMiB and MemoryUsedMiB: the instance's framebuffer memory.
	MemoryMiB     *int64 `json:"memoryMiB"`
	MemoryUsedMiB *int64 `json:"memoryUsedMiB"`
	// Multiprocessors is the instance's SM count.
	Multiprocessors *int `json:"multiprocessors"`
}

// What `nvidia-smi nvlink -s` prints for a GPU instead of its links.
const (
	// "NVML: Unable to retrieve NVLink information as all links are
	// inactive".
	NVLinkAllInactive = "all-inactive"
	// "Nvlink queries are not supported for Devices in MIG mode".
	NVLinkMIGMode = "mig-mode"
	// "Device does not have or support Nvlink" (PCIe products).
	NVLinkNotSupported = "not-supported"
)

// NVLink is one NVLink of a GPU as `nvidia-smi nvlink -s` shows it.
type NVLink struct {
	Link   int  `json:"link"`
	Active bool `json:"active"`
	// SpeedGBps is the link's speed in GB/s; nil when inactive.
	SpeedGBps *float64 `json:"speedGBps"`
}

// SMIError is a failure message of nvidia-smi or NVML.
type SMIError struct {
	// Kind is one of the Failure* constants.
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// BusID is the GPU the message names, if any.
	BusID string `json:"busId,omitempty"`
	// LibraryVersion is the NVML library version a version mismatch names.
	LibraryVersion string `json:"libraryVersion,omitempty"`
}

// Failure kinds of nvidia-smi and NVML. NodeProblem tells which of them say
// something about the node (see VERDICTS.md).
const (
	// "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA
	// driver": the kernel module is not loaded or not responding.
	FailureDriverNotLoaded = "driver-not-loaded"
	// "Failed to initialize NVML: Driver/library version mismatch": user
	// space and kernel module differ, typically after an unattended upgrade.
	FailureDriverLibraryMismatch = "driver-library-mismatch"
	// "Unable to determine the device handle for GPU <bus>: Unknown Error":
	// the GPU cannot be read (often fallen off the bus).
	FailureDeviceHandle = "device-handle"
	// "... GPU is lost. Reboot the system to recover this GPU".
	FailureGPULost = "gpu-lost"
	// "No devices were found": the driver sees no GPU.
	FailureNoDevices = "no-devices"
	// "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system".
	FailureNVMLNotFound = "nvml-not-found"
	// "Failed to initialize NVML: Unknown Error": inside containers this is
	// classically the runtime losing device access, so it is not judged.
	FailureNVMLUnknownError = "nvml-unknown-error"
	// "Failed to initialize NVML: Insufficient Permissions".
	FailureNoPermission = "insufficient-permissions"
	// "could not load NVML library" (go-nvml users such as the device
	// plugin): libnvidia-ml.so is not in the container (runtime not nvidia).
	FailureNVMLNotLoadable = "nvml-not-loadable"
	// nvidia-smi itself is missing ("command not found", "No such file").
	FailureSMIMissing = "nvidia-smi-missing"
)

// NodeProblem reports whether the failure shows a problem of the node (driver
// or GPU) rather than of the environment the tool ran in.
func (e *SMIError) NodeProblem() bool {
	switch e.Kind {
	case FailureDriverNotLoaded, FailureDriverLibraryMismatch, FailureDeviceHandle, FailureGPULost, FailureNoDevices, FailureNVMLNotFound:
		return true
	}
	return false
}

var (
	reDeviceHandle = regexp.MustCompile(`Unable to (?:determine|detect) the device handle for GPU ?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*:\s*(.*)`)
	reNVMLVersion  = regexp.MustCompile(`NVML library version:\s*(\S+)`)
)

// FindFailure looks for a nvidia-smi or NVML failure message anywhere in data
// and returns the first one found, or nil.
func FindFailure(data []byte) *SMIError {
	for _, l := range lines(data) {
		if e := failureLine(l); e != nil {
			if e.Kind == FailureDriverLibraryMismatch {
				if m := reNVMLVersion.FindSubmatch(data); m != nil {
					e.LibraryVersion = string(m[1])
				}
			}
			return e
		}
	}
	return nil
}

// failureKeywords prefilter failureLine: every message it knows has one.
var failureKeywords = []string{"NVML", "NVIDIA", "nvidia", "device handle", "No devices", "GPU is lost"}

func failureLine(l string) *SMIError {
	hit := false
	for _, k := range failureKeywords {
		if strings.Contains(l, k) {
			hit = true
			break
		}
	}
	if !hit {
		return nil
	}
	t := clean(l)
	low := strings.ToLower(t)
	switch {
	case strings.Contains(t, "couldn't communicate with the NVIDIA driver"):
		return &SMIError{Kind: FailureDriverNotLoaded, Message: t}
	case strings.Contains(low, "driver/library version mismatch"):
		return &SMIError{Kind: FailureDriverLibraryMismatch, Message: t}
	case reDeviceHandle.MatchString(t):
		m := reDeviceHandle.FindStringSubmatch(t)
		kind := FailureDeviceHandle
		if strings.Contains(strings.ToLower(m[2]), "gpu is lost") {
			kind = FailureGPULost
		}
		return &SMIError{Kind: kind, Message: t, BusID: m[1]}
	case strings.Contains(low, "gpu is lost"):
		return &SMIError{Kind: FailureGPULost, Message: t}
	case strings.TrimSuffix(t, ".") == "No devices were found":
		return &SMIError{Kind: FailureNoDevices, Message: t}
	case strings.Contains(t, "couldn't find libnvidia-ml.so"):
		return &SMIError{Kind: FailureNVMLNotFound, Message: t}
	case strings.Contains(low, "could not load nvml library"), strings.Contains(low, "libnvidia-ml.so.1: cannot open shared object file"):
		return &SMIError{Kind: FailureNVMLNotLoadable, Message: t}
	case strings.Contains(t, "Failed to initialize NVML: Insufficient Permissions"):
		return &SMIError{Kind: FailureNoPermission, Message: t}
	case strings.Contains(t, "Failed to initialize NVML: Unknown Error"):
		return &SMIError{Kind: FailureNVMLUnknownError, Message: t}
	case strings.Contains(t, "failed to run command 'nvidia-smi'"), strings.Contains(t, "nvidia-smi: command not found"), strings.Contains(t, `"nvidia-smi": executable file not found`):
		return &SMIError{Kind: FailureSMIMissing, Message: t}
	}
	return nil
}

// smiShape tells which nvidia-smi output data is, or "".
func smiShape(data []byte) string {
	head := data
	if len(head) > 64<<10 {
		head = head[:64<<10]
	}
	switch {
	case bytes.Contains(head, []byte("<nvidia_smi_log")):
		return "xml"
	case bytes.Contains(head, []byte("NVSMI LOG")):
		return "query"
	case scanLines(head).smiTable:
		return "table"
	}
	ls := lines(head)
	if isCSVShape(ls) {
		return "csv"
	}
	if queryFragmentSection(ls) != "" {
		return "query-fragment"
	}
	return listShape(ls)
}

// isCSVShape reports whether the first non-blank line of ls is a
// --query-gpu CSV header (judged with the line after it).
func isCSVShape(ls []string) bool {
	first := slices.IndexFunc(ls, func(l string) bool { return strings.TrimSpace(l) != "" })
	if first < 0 {
		return false
	}
	next := ""
	for _, n := range ls[first+1:] {
		if strings.TrimSpace(n) != "" {
			next = n
			break
		}
	}
	return isCSVHeader(ls[first], next)
}

// listShape tells -L output ("list") from nvlink -s output ("nvlink"): GPU
// lines, with link lines for nvlink; "" without GPU lines.
func listShape(ls []string) string {
	gpuLines, linkLines := 0, 0
	for _, l := range ls {
		switch {
		case strings.HasPrefix(l, "GPU ") && reListGPU.MatchString(l):
			gpuLines++
		case strings.Contains(l, "Link ") && reNVLinkLine.MatchString(l):
			linkLines++
		}
	}
	switch {
	case gpuLines > 0 && linkLines > 0:
		return "nvlink"
	case gpuLines > 0:
		return "list"
	}
	return ""
}

// attachedGPUs reads nvidia-smi's attached GPU count s ("Attached GPUs",
// <attached_gpus>, the CSV count column): nil for N/A. A count that is not
// a whole number from 0 to maxRecords (an overflow such as
// 99999999999999999999, a negative count, text) is a parse error: the
// output is unusable (attached-gpus-invalid) and the count nil.
func attachedGPUs(j *judge, s string) *int {
	if na(s) {
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > maxRecords {
		j.unusable("attached-gpus-invalid", "", "nvidia-smi's attached GPU count %q is not a number of GPUs from 0 to %d: the output is garbled", truncate(s, 40), maxRecords)
		return nil
	}
	return &n
}

// ParseNvidiaSMI reads any nvidia-smi output shape and judges it. It never
// fails: input that is not nvidia-smi output yields a report with verdict
// unknown.
func ParseNvidiaSMI(data []byte) *SMIReport {
	r := &SMIReport{}
	j := newJudge(&r.Header, KindNvidiaSMI)
	r.Error = FindFailure(data)
	switch smiShape(data) {
	case "xml":
		parseSMIXML(r, j, data)
	case "query":
		parseSMIQuery(r, j, data)
	case "query-fragment":
		parseSMIQueryFragment(r, j, data, queryFragmentSection(lines(data)))
	case "table":
		parseSMITable(r, j, data)
	case "csv":
		parseSMICSV(r, j, data)
	case "nvlink", "list":
		parseSMIList(r, j, data)
	default:
		if r.Error != nil {
			r.Format = "error"
		}
	}
	judgeSMI(r, j)
	unnameFragmentGPU(r)
	j.done()
	fillNil(r)
	return r
}
