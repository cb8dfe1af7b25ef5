//go:build nvml

package probe

import (
	"context"
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVMLProber reads GPUs through an nvml.Interface: the real library from
// NewSystemProber, or go-nvml's mocks in tests.
type NVMLProber struct {
	lib nvml.Interface
}

// NewNVMLProber returns a prober over lib. It does not call lib.Init until
// Probe.
func NewNVMLProber(lib nvml.Interface) *NVMLProber {
	return &NVMLProber{lib: lib}
}

// NewSystemProber returns the prober for this machine's NVML
// (libnvidia-ml.so, loaded when Probe runs). This is the only place that
// calls nvml.New.
func NewSystemProber() (Prober, error) {
	return NewNVMLProber(nvml.New()), nil
}

// initFailures maps nvmlInit failures that say something about the node to
// nvidia-smi's failure kinds.
var initFailures = map[nvml.Return]string{
	nvml.ERROR_DRIVER_NOT_LOADED:       FailureDriverNotLoaded,
	nvml.ERROR_LIB_RM_VERSION_MISMATCH: FailureDriverLibraryMismatch,
	nvml.ERROR_NO_PERMISSION:           FailureNoPermission,
	nvml.ERROR_UNKNOWN:                 FailureNVMLUnknownError,
}

// Probe reads every GPU. NVML failing to load (no library) is an error
// wrapping ErrNVMLUnavailable; a driver that is not loaded or does not match
// is a report with a failing verdict.
func (p *NVMLProber) Probe(ctx context.Context) (*NVMLReport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &NVMLReport{}
	if ret := p.lib.Init(); ret != nvml.SUCCESS {
		kind, ok := initFailures[ret]
		if !ok {
			return nil, fmt.Errorf("%w: nvmlInit: %s", ErrNVMLUnavailable, ret.Error())
		}
		r.Error = &SMIError{Kind: kind, Message: "nvmlInit: " + ret.Error()}
		JudgeNVML(r)
		return r, nil
	}
	defer p.lib.Shutdown()

	q := &nvmlQuery{r: r}
	if v, ret := p.lib.SystemGetDriverVersion(); q.ok("", "driver version", ret) {
		r.DriverVersion = v
	}
	if v, ret := p.lib.SystemGetNVMLVersion(); q.ok("", "NVML version", ret) {
		r.NVMLVersion = v
	}
	if v, ret := p.lib.SystemGetCudaDriverVersion(); q.ok("", "CUDA driver version", ret) {
		r.CUDAVersion = cudaVersionString(v)
	}
	count, ret := p.lib.DeviceGetCount()
	if !q.ok("", "device count", ret) {
		JudgeNVML(r)
		return r, nil
	}
	r.AttachedGPUs = ptr(count)
	for i := 0; i < count; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dev, ret := p.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			r.Error = &SMIError{Kind: FailureDeviceHandle, Message: fmt.Sprintf("nvmlDeviceGetHandleByIndex(%d): %s", i, ret.Error())}
			if ret == nvml.ERROR_GPU_IS_LOST {
				r.Error.Kind = FailureGPULost
			}
			continue
		}
		r.GPUs = append(r.GPUs, q.device(i, dev))
	}
	JudgeNVML(r)
	return r, nil
}

type nvmlQuery struct {
	r *NVMLReport
}

// ok reports whether ret is SUCCESS and records why not otherwise. Not
// supported is recorded but is no failure: the field stays unknown.
func (q *nvmlQuery) ok(gpu, field string, ret nvml.Return) bool {
	if ret == nvml.SUCCESS {
		return true
	}
	q.r.Unavailable = append(q.r.Unavailable, NVMLUnavailable{GPU: gpu, Field: field, Reason: ret.Error()})
	return false
}

func cString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

func enabled(s nvml.EnableState) *bool { return ptr(s == nvml.FEATURE_ENABLED) }

// device reads one GPU's fields, group by group in a fixed order (so the
// report's Unavailable list has a stable order).
func (q *nvmlQuery) device(index int, d nvml.Device) SMIGPU {
	g := SMIGPU{Index: index}
	dq := deviceQuery{q: q, d: d, id: fmt.Sprintf("%d", index)}
	dq.identity(&g)
	dq.memory(&g)
	dq.pages(&g)
	dq.pcie(&g)
	g.NVLinks = dq.nvlinks()
	dq.sensors(&g)
	dq.modes(&g)
	return g
}

// deviceQuery reads the fields of one device; id names the GPU in the
// Unavailable list: its index until its PCI bus ID is known.
type deviceQuery struct {
	q  *nvmlQuery
	d  nvml.Device
	id string
}

func (dq *deviceQuery) ok(field string, ret nvml.Return) bool { return dq.q.ok(dq.id, field, ret) }

// identity reads the name, UUID, PCI bus ID, serial and VBIOS version.
func (dq *deviceQuery) identity(g *SMIGPU) {
	d := dq.d
	if v, ret := d.GetName(); dq.ok("name", ret) {
		g.Name = v
	}
	if v, ret := d.GetUUID(); dq.ok("uuid", ret) {
		g.UUID = v
	}
	if v, ret := d.GetPciInfo(); dq.ok("pci info", ret) {
		g.BusID = cString(v.BusId[:])
		if g.BusID != "" {
			dq.id = g.BusID
		}
	}
	if v, ret := d.GetSerial(); dq.ok("serial", ret) {
		g.Serial = v
	}
	if v, ret := d.GetVbiosVersion(); dq.ok("vbios version", ret) {
		g.VBIOS = v
	}
}

// memory reads the framebuffer size and use (MiB), the ECC mode and, unless
// ECC is known to be off, the ECC error counters.
func (dq *deviceQuery) memory(g *SMIGPU) {
	if v, ret := dq.d.GetMemoryInfo(); dq.ok("memory info", ret) {
		g.MemoryTotalMiB = ptr(int64(v.Total >> 20))
		g.MemoryUsedMiB = ptr(int64(v.Used >> 20))
	}
	if cur, _, ret := dq.d.GetEccMode(); dq.ok("ECC mode", ret) {
		g.ECCEnabled = enabled(cur)
	}
	if g.ECCEnabled != nil && !*g.ECCEnabled {
		return
	}
	g.ECCUncorrectedVolatile = dq.eccErrors("ECC uncorrected volatile", nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
	g.ECCUncorrectedAggregate = dq.eccErrors("ECC uncorrected aggregate", nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC)
	g.ECCCorrectedVolatile = dq.eccErrors("ECC corrected volatile", nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
	g.ECCCorrectedAggregate = dq.eccErrors("ECC corrected aggregate", nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.AGGREGATE_ECC)
}

func (dq *deviceQuery) eccErrors(field string, t nvml.MemoryErrorType, c nvml.EccCounterType) *int64 {
	if v, ret := dq.d.GetTotalEccErrors(t, c); dq.ok(field, ret) {
		return ptr(int64(v))
	}
	return nil
}

// pages reads page retirement (older GPUs) and row remapping (A100 and
// later).
func (dq *deviceQuery) pages(g *SMIGPU) {
	d := dq.d
	if v, ret := d.GetRetiredPagesPendingStatus(); dq.ok("retired pages pending", ret) {
		g.RetiredPagesPending = enabled(v)
	}
	if v, ret := d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS); dq.ok("retired pages (single bit)", ret) {
		g.RetiredPagesSingleBit = ptr(int64(len(v)))
	}
	if v, ret := d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR); dq.ok("retired pages (double bit)", ret) {
		g.RetiredPagesDoubleBit = ptr(int64(len(v)))
	}
	if corr, unc, pending, failed, ret := d.GetRemappedRows(); dq.ok("remapped rows", ret) {
		g.RowsRemappedCorrectable = ptr(int64(corr))
		g.RowsRemappedUncorrectable = ptr(int64(unc))
		g.RowRemapPending, g.RowRemapFailure = ptr(pending), ptr(failed)
	}
}

// pcie reads the PCIe link's generation and width, current and max, and
// its replay counter.
func (dq *deviceQuery) pcie(g *SMIGPU) {
	d := dq.d
	g.PCIeGenCurrent = dq.intField("PCIe generation (current)", d.GetCurrPcieLinkGeneration)
	g.PCIeGenMax = dq.intField("PCIe generation (max)", d.GetMaxPcieLinkGeneration)
	g.PCIeWidthCurrent = dq.intField("PCIe width (current)", d.GetCurrPcieLinkWidth)
	g.PCIeWidthMax = dq.intField("PCIe width (max)", d.GetMaxPcieLinkWidth)
	if v, ret := d.GetPcieReplayCounter(); dq.ok("PCIe replay counter", ret) {
		g.PCIeReplays = ptr(int64(v))
	}
}

func (dq *deviceQuery) intField(field string, get func() (int, nvml.Return)) *int {
	if v, ret := get(); dq.ok(field, ret) {
		return ptr(v)
	}
	return nil
}

// nvlinks reads the state of each NVLink; NVML numbers links densely from
// 0, so the first link it does not have ends the list.
func (dq *deviceQuery) nvlinks() []NVLink {
	var links []NVLink
	for link := 0; link < nvml.NVLINK_MAX_LINKS; link++ {
		st, ret := dq.d.GetNvLinkState(link)
		if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_INVALID_ARGUMENT {
			if link == 0 {
				dq.ok("NVLink state", ret)
			}
			break
		}
		if dq.ok(fmt.Sprintf("NVLink %d state", link), ret) {
			links = append(links, NVLink{Link: link, Active: st == nvml.FEATURE_ENABLED})
		}
	}
	return links
}

// sensors reads temperature (°C), power draw and limit (W, from NVML's mW),
// GPU utilization (%) and the clock event reasons.
func (dq *deviceQuery) sensors(g *SMIGPU) {
	d := dq.d
	if v, ret := d.GetTemperature(nvml.TEMPERATURE_GPU); dq.ok("temperature", ret) {
		g.TemperatureC = ptr(int(v))
	}
	if v, ret := d.GetPowerUsage(); dq.ok("power usage", ret) {
		g.PowerDrawW = ptr(float64(v) / 1000)
	}
	if v, ret := d.GetEnforcedPowerLimit(); dq.ok("power limit", ret) {
		g.PowerLimitW = ptr(float64(v) / 1000)
	}
	if v, ret := d.GetUtilizationRates(); dq.ok("utilization", ret) {
		g.UtilizationGPUPercent = ptr(int(v.Gpu))
	}
	if v, ret := d.GetCurrentClocksEventReasons(); dq.ok("clock event reasons", ret) {
		g.ClockEventReasons = clockReasons(v)
	}
}

// modes reads the MIG and persistence modes as nvidia-smi prints them and
// the performance state ("P0").
func (dq *deviceQuery) modes(g *SMIGPU) {
	d := dq.d
	if cur, _, ret := d.GetMigMode(); dq.ok("MIG mode", ret) {
		g.MIGMode = enabledWord(cur == nvml.DEVICE_MIG_ENABLE)
	} else if ret == nvml.ERROR_NOT_SUPPORTED {
		g.MIGMode = "N/A"
	}
	if v, ret := d.GetPersistenceMode(); dq.ok("persistence mode", ret) {
		g.PersistenceMode = enabledWord(v == nvml.FEATURE_ENABLED)
	}
	if v, ret := d.GetPerformanceState(); dq.ok("performance state", ret) && v != nvml.PSTATE_UNKNOWN {
		g.PerformanceState = fmt.Sprintf("P%d", int(v))
	}
}

func enabledWord(on bool) string {
	if on {
		return "Enabled"
	}
	return "Disabled"
}

// cudaVersionString turns NVML's CUDA driver version (12040) into "12.4".
func cudaVersionString(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// clockReasonNames are NVML's clock event reason bits (nvml.h
// nvmlClocksEventReason*), named as in nvidia-smi's XML.
var clockReasonNames = []struct {
	bit  uint64
	name string
}{
	{0x1, "gpu_idle"},
	{0x2, "applications_clocks_setting"},
	{0x4, "sw_power_cap"},
	{0x8, "hw_slowdown"},
	{0x10, "sync_boost"},
	{0x20, "sw_thermal_slowdown"},
	{0x40, "hw_thermal_slowdown"},
	{0x80, "hw_power_brake_slowdown"},
	{0x100, "display_clocks_setting"},
}

func clockReasons(mask uint64) []string {
	var out []string
	for _, r := range clockReasonNames {
		if mask&r.bit != 0 {
			out = append(out, r.name)
		}
	}
	return out
}
