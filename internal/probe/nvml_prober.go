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

// device reads one GPU's fields.
func (q *nvmlQuery) device(index int, d nvml.Device) SMIGPU {
	g := SMIGPU{Index: index}
	id := fmt.Sprintf("%d", index)
	if v, ret := d.GetName(); q.ok(id, "name", ret) {
		g.Name = v
	}
	if v, ret := d.GetUUID(); q.ok(id, "uuid", ret) {
		g.UUID = v
	}
	if v, ret := d.GetPciInfo(); q.ok(id, "pci info", ret) {
		g.BusID = cString(v.BusId[:])
		if g.BusID != "" {
			id = g.BusID
		}
	}
	if v, ret := d.GetSerial(); q.ok(id, "serial", ret) {
		g.Serial = v
	}
	if v, ret := d.GetVbiosVersion(); q.ok(id, "vbios version", ret) {
		g.VBIOS = v
	}
	if v, ret := d.GetMemoryInfo(); q.ok(id, "memory info", ret) {
		g.MemoryTotalMiB = ptr(int64(v.Total >> 20))
		g.MemoryUsedMiB = ptr(int64(v.Used >> 20))
	}
	if cur, _, ret := d.GetEccMode(); q.ok(id, "ECC mode", ret) {
		g.ECCEnabled = enabled(cur)
	}
	if g.ECCEnabled == nil || *g.ECCEnabled {
		ecc := func(field string, t nvml.MemoryErrorType, c nvml.EccCounterType) *int64 {
			if v, ret := d.GetTotalEccErrors(t, c); q.ok(id, field, ret) {
				return ptr(int64(v))
			}
			return nil
		}
		g.ECCUncorrectedVolatile = ecc("ECC uncorrected volatile", nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
		g.ECCUncorrectedAggregate = ecc("ECC uncorrected aggregate", nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC)
		g.ECCCorrectedVolatile = ecc("ECC corrected volatile", nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
		g.ECCCorrectedAggregate = ecc("ECC corrected aggregate", nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.AGGREGATE_ECC)
	}
	if v, ret := d.GetRetiredPagesPendingStatus(); q.ok(id, "retired pages pending", ret) {
		g.RetiredPagesPending = enabled(v)
	}
	if v, ret := d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS); q.ok(id, "retired pages (single bit)", ret) {
		g.RetiredPagesSingleBit = ptr(int64(len(v)))
	}
	if v, ret := d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR); q.ok(id, "retired pages (double bit)", ret) {
		g.RetiredPagesDoubleBit = ptr(int64(len(v)))
	}
	if corr, unc, pending, failed, ret := d.GetRemappedRows(); q.ok(id, "remapped rows", ret) {
		g.RowsRemappedCorrectable = ptr(int64(corr))
		g.RowsRemappedUncorrectable = ptr(int64(unc))
		g.RowRemapPending, g.RowRemapFailure = ptr(pending), ptr(failed)
	}
	pcie := func(field string, f func() (int, nvml.Return)) *int {
		if v, ret := f(); q.ok(id, field, ret) {
			return ptr(v)
		}
		return nil
	}
	g.PCIeGenCurrent = pcie("PCIe generation (current)", d.GetCurrPcieLinkGeneration)
	g.PCIeGenMax = pcie("PCIe generation (max)", d.GetMaxPcieLinkGeneration)
	g.PCIeWidthCurrent = pcie("PCIe width (current)", d.GetCurrPcieLinkWidth)
	g.PCIeWidthMax = pcie("PCIe width (max)", d.GetMaxPcieLinkWidth)
	if v, ret := d.GetPcieReplayCounter(); q.ok(id, "PCIe replay counter", ret) {
		g.PCIeReplays = ptr(int64(v))
	}
	for link := 0; link < nvml.NVLINK_MAX_LINKS; link++ {
		st, ret := d.GetNvLinkState(link)
		if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_INVALID_ARGUMENT {
			// No such link: NVML numbers links densely from 0.
			if link == 0 {
				q.ok(id, "NVLink state", ret)
			}
			break
		}
		if !q.ok(id, fmt.Sprintf("NVLink %d state", link), ret) {
			continue
		}
		g.NVLinks = append(g.NVLinks, NVLink{Link: link, Active: st == nvml.FEATURE_ENABLED})
	}
	if v, ret := d.GetTemperature(nvml.TEMPERATURE_GPU); q.ok(id, "temperature", ret) {
		g.TemperatureC = ptr(int(v))
	}
	if v, ret := d.GetPowerUsage(); q.ok(id, "power usage", ret) {
		g.PowerDrawW = ptr(float64(v) / 1000)
	}
	if v, ret := d.GetEnforcedPowerLimit(); q.ok(id, "power limit", ret) {
		g.PowerLimitW = ptr(float64(v) / 1000)
	}
	if v, ret := d.GetUtilizationRates(); q.ok(id, "utilization", ret) {
		g.UtilizationGPUPercent = ptr(int(v.Gpu))
	}
	if v, ret := d.GetCurrentClocksEventReasons(); q.ok(id, "clock event reasons", ret) {
		g.ClockEventReasons = clockReasons(v)
	}
	if cur, _, ret := d.GetMigMode(); q.ok(id, "MIG mode", ret) {
		g.MIGMode = "Disabled"
		if cur == nvml.DEVICE_MIG_ENABLE {
			g.MIGMode = "Enabled"
		}
	} else if ret == nvml.ERROR_NOT_SUPPORTED {
		g.MIGMode = "N/A"
	}
	if v, ret := d.GetPersistenceMode(); q.ok(id, "persistence mode", ret) {
		g.PersistenceMode = "Disabled"
		if v == nvml.FEATURE_ENABLED {
			g.PersistenceMode = "Enabled"
		}
	}
	if v, ret := d.GetPerformanceState(); q.ok(id, "performance state", ret) && v != nvml.PSTATE_UNKNOWN {
		g.PerformanceState = fmt.Sprintf("P%d", int(v))
	}
	return g
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
