package probe

import (
	"context"
	"errors"
	"fmt"
)

// NVMLReport is what NVML reports about the node's GPUs. Its GPU records have
// the same shape as nvidia-smi's, so both are judged by the same rules.
type NVMLReport struct {
	Header
	DriverVersion string `json:"driverVersion"`
	// CUDAVersion is the newest CUDA version the driver supports ("12.4").
	CUDAVersion  string   `json:"cudaVersion"`
	NVMLVersion  string   `json:"nvmlVersion"`
	AttachedGPUs *int     `json:"attachedGPUs"`
	GPUs         []SMIGPU `json:"gpus"`
	// Error is a failure of NVML as a whole (driver not loaded, version
	// mismatch); nil when NVML worked.
	Error *SMIError `json:"error"`
	// Unavailable lists the queries NVML did not answer. Not supported is
	// not a failure: the field is just unknown.
	Unavailable []NVMLUnavailable `json:"unavailable"`
}

// NVMLUnavailable is one NVML query without an answer.
type NVMLUnavailable struct {
	GPU   string `json:"gpu"`
	Field string `json:"field"`
	// Reason is NVML's return code, e.g. "ERROR_NOT_SUPPORTED".
	Reason string `json:"reason"`
}

// Prober reads the node's GPUs through NVML.
type Prober interface {
	// Probe returns the report, or an error when NVML cannot be used at all
	// (the library is missing, or ctx ended); ErrNVMLUnavailable and
	// ErrNVMLNotCompiled mark those.
	Probe(ctx context.Context) (*NVMLReport, error)
}

var (
	// ErrNVMLNotCompiled: this gpuctl was built without the "nvml" build tag
	// (NVML needs cgo).
	ErrNVMLNotCompiled = errors.New("NVML support not compiled in (build gpuctl with CGO_ENABLED=1 -tags nvml)")
	// ErrNVMLUnavailable: NVML could not be loaded or initialised on this
	// machine (no NVIDIA driver, not a GPU node).
	ErrNVMLUnavailable = errors.New("NVML unavailable")
)

// JudgeNVML applies the health rules to an NVML report and sets its verdict
// and findings. The prober calls it; it is exported for reports built by
// other means (tests, replays).
func JudgeNVML(r *NVMLReport) {
	j := newJudge(&r.Header, KindNVML)
	if r.Error != nil {
		judgeFailure(j, r.Error)
	} else if len(r.GPUs) == 0 {
		j.fail(FailureNoDevices, "", "NVML sees no GPU")
	}
	for _, u := range r.Unavailable {
		switch u.Reason {
		case "ERROR_NOT_SUPPORTED", "ERROR_INVALID_ARGUMENT":
		case "ERROR_GPU_IS_LOST":
			j.fail(FailureGPULost, u.GPU, "NVML reports the GPU lost (%s): the node needs a reboot", u.Field)
		case "ERROR_NO_PERMISSION":
			j.unusable(FailureNoPermission, u.GPU, "no permission to read %s", u.Field)
		default:
			j.unusable("nvml-query-failed", u.GPU, "NVML could not read %s: %s", u.Field, u.Reason)
		}
	}
	judgeGPUs(j, r.GPUs)
	j.done()
	fillNil(r)
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
