package probe

import (
	"context"
	"errors"
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
