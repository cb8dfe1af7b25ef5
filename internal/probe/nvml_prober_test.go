//go:build nvml

package probe

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpuctl/gpuctl/internal/probe/nvmlmock"

	"github.com/gpuctl/gpuctl/internal/diag"
)

func probe(t *testing.T, lib nvml.Interface) *NVMLReport {
	t.Helper()
	r, err := NewNVMLProber(lib).Probe(context.Background())
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	return r
}

func findingRules(h *Header) []string {
	var out []string
	for _, f := range h.Findings {
		out = append(out, f.Rule+"@"+f.GPU)
	}
	return out
}

func hasFinding(h *Header, rule, gpu string) bool {
	for _, f := range h.Findings {
		if f.Rule == rule && (gpu == "" || f.GPU == gpu) {
			return true
		}
	}
	return false
}

func TestNVMLProberDGXA100Healthy(t *testing.T) {
	s := dgxa100.New()
	nvmlmock.Healthy(s, 12, 4)
	r := probe(t, s)
	if r.Verdict != diag.ReportOK {
		t.Fatalf("verdict %s, findings %v", r.Verdict, r.Findings)
	}
	if r.Kind != KindNVML || r.FormatVersion != FormatVersion {
		t.Errorf("header %+v", r.Header)
	}
	if r.DriverVersion != "550.54.15" || r.CUDAVersion != "12.4" || r.NVMLVersion != "12.550.54.15" {
		t.Errorf("versions %q %q %q", r.DriverVersion, r.CUDAVersion, r.NVMLVersion)
	}
	if r.AttachedGPUs == nil || *r.AttachedGPUs != 8 || len(r.GPUs) != 8 {
		t.Fatalf("attached %v, gpus %d", r.AttachedGPUs, len(r.GPUs))
	}
	g := r.GPUs[3]
	if g.Name != "Mock NVIDIA A100-SXM4-40GB" || !strings.HasPrefix(g.UUID, "GPU-") || g.BusID != "0000:03:00.0" {
		t.Errorf("identity %q %q %q", g.Name, g.UUID, g.BusID)
	}
	if g.MemoryTotalMiB == nil || *g.MemoryTotalMiB != 40960 {
		t.Errorf("memory %v", g.MemoryTotalMiB)
	}
	if g.ECCEnabled == nil || !*g.ECCEnabled || g.ECCUncorrectedVolatile == nil || *g.ECCUncorrectedVolatile != 0 {
		t.Errorf("ecc %v %v", g.ECCEnabled, g.ECCUncorrectedVolatile)
	}
	if g.RowRemapPending == nil || *g.RowRemapPending || g.RowRemapFailure == nil || *g.RowRemapFailure {
		t.Errorf("row remap %v %v", g.RowRemapPending, g.RowRemapFailure)
	}
	if len(g.NVLinks) != 12 || !g.NVLinks[11].Active {
		t.Errorf("nvlinks %+v", g.NVLinks)
	}
	if g.PowerDrawW == nil || *g.PowerDrawW != 69.25 || g.PowerLimitW == nil || *g.PowerLimitW != 700 {
		t.Errorf("power %v %v", g.PowerDrawW, g.PowerLimitW)
	}
	if g.MIGMode != "Disabled" || g.PersistenceMode != "Enabled" || g.PerformanceState != "P0" {
		t.Errorf("modes %q %q %q", g.MIGMode, g.PersistenceMode, g.PerformanceState)
	}
	if len(g.ClockEventReasons) != 1 || g.ClockEventReasons[0] != "gpu_idle" {
		t.Errorf("clock reasons %v", g.ClockEventReasons)
	}
}

// ERROR_NOT_SUPPORTED leaves a field unknown; it is no failure.
func TestNVMLProberNotSupportedIsUnknownNotFailure(t *testing.T) {
	s := dgxh100.New()
	nvmlmock.NotSupported(s)
	r := probe(t, s)
	if r.Verdict != diag.ReportOK {
		t.Fatalf("verdict %s, findings %v", r.Verdict, r.Findings)
	}
	g := r.GPUs[0]
	if g.ECCEnabled != nil || g.ECCUncorrectedVolatile != nil || g.RowRemapPending != nil || g.TemperatureC != nil || g.PCIeGenCurrent != nil {
		t.Errorf("unsupported fields should be nil: %+v", g)
	}
	if g.MIGMode != "Disabled" {
		t.Errorf("dgxh100 MIG mode = %q", g.MIGMode)
	}
	n := 0
	for _, u := range r.Unavailable {
		if u.Reason == "ERROR_NOT_SUPPORTED" {
			n++
		}
	}
	if n == 0 {
		t.Errorf("unavailable queries not recorded: %v", r.Unavailable)
	}
}

// An injected uncorrectable ECC error and row-remap states on a fake DGX H100.
func TestNVMLProberDGXH100InjectedECCAndRowRemapFaults(t *testing.T) {
	s := faultyH100()
	s.Devices[6].(*server.Device).GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 512, false, true, nvml.SUCCESS }
	r := probe(t, s)
	if r.Verdict != diag.ReportFail {
		t.Fatalf("verdict %s, findings %v", r.Verdict, findingRules(&r.Header))
	}
	for _, want := range []struct{ rule, gpu string }{
		{"ecc-uncorrectable", "0000:03:00.0"},
		{"row-remap-pending", "0000:05:00.0"},
		{"row-remap-failure", "0000:06:00.0"},
	} {
		if !hasFinding(&r.Header, want.rule, want.gpu) {
			t.Errorf("no %s finding for %s: %v", want.rule, want.gpu, findingRules(&r.Header))
		}
	}
	if g := r.GPUs[3]; g.ECCUncorrectedVolatile == nil || *g.ECCUncorrectedVolatile != 2 {
		t.Errorf("GPU 3 ECC = %v", g.ECCUncorrectedVolatile)
	}
	if len(r.Findings) != 3 {
		t.Errorf("want exactly the 3 injected faults, got %v", findingRules(&r.Header))
	}
}

func TestNVMLProberLinkAndPCIeFaults(t *testing.T) {
	s := dgxh100.New()
	nvmlmock.Healthy(s, 18, 5)
	d := s.Devices[2].(*server.Device)
	d.GetNvLinkStateFunc = func(link int) (nvml.EnableState, nvml.Return) {
		switch {
		case link >= 18:
			return 0, nvml.ERROR_INVALID_ARGUMENT
		case link == 7:
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		}
		return nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	busy := s.Devices[4].(*server.Device)
	busy.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 97}, nvml.SUCCESS }
	busy.GetCurrPcieLinkWidthFunc = func() (int, nvml.Return) { return 8, nvml.SUCCESS }
	idle := s.Devices[6].(*server.Device)
	idle.GetCurrPcieLinkGenerationFunc = func() (int, nvml.Return) { return 1, nvml.SUCCESS }
	r := probe(t, s)
	if r.Verdict != diag.ReportFail {
		t.Fatalf("verdict %s", r.Verdict)
	}
	if !hasFinding(&r.Header, "nvlink-inactive", "0000:02:00.0") {
		t.Errorf("no nvlink-inactive: %v", findingRules(&r.Header))
	}
	if !hasFinding(&r.Header, "pcie-width-degraded", "0000:04:00.0") {
		t.Errorf("no pcie-width-degraded under load: %v", findingRules(&r.Header))
	}
	if hasFinding(&r.Header, "pcie-width-degraded", "0000:06:00.0") || !hasFinding(&r.Header, "pcie-link-idle", "0000:06:00.0") {
		t.Errorf("an idle GPU's slower link must be info only: %v", findingRules(&r.Header))
	}
}

func TestNVMLProberInitFailures(t *testing.T) {
	for _, tc := range []struct {
		ret     nvml.Return
		wantErr error
		verdict diag.ReportVerdict
		rule    string
	}{
		{nvml.ERROR_LIBRARY_NOT_FOUND, ErrNVMLUnavailable, "", ""},
		{nvml.ERROR_DRIVER_NOT_LOADED, nil, diag.ReportFail, FailureDriverNotLoaded},
		{nvml.ERROR_LIB_RM_VERSION_MISMATCH, nil, diag.ReportFail, FailureDriverLibraryMismatch},
		{nvml.ERROR_NO_PERMISSION, nil, diag.ReportUnknown, FailureNoPermission},
	} {
		t.Run(tc.ret.Error(), func(t *testing.T) {
			lib := &mock.Interface{
				InitFunc:     func() nvml.Return { return tc.ret },
				ShutdownFunc: func() nvml.Return { return nvml.SUCCESS },
			}
			r, err := NewNVMLProber(lib).Probe(context.Background())
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != tc.verdict || !hasFinding(&r.Header, tc.rule, "") {
				t.Errorf("verdict %s findings %v", r.Verdict, findingRules(&r.Header))
			}
		})
	}
}

func TestNVMLProberLostGPU(t *testing.T) {
	s := dgxa100.New()
	nvmlmock.Healthy(s, 12, 4)
	handle := s.DeviceGetHandleByIndexFunc
	s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 5 {
			return nil, nvml.ERROR_GPU_IS_LOST
		}
		return handle(i)
	}
	r := probe(t, s)
	if r.Verdict != diag.ReportFail || !hasFinding(&r.Header, FailureGPULost, "") {
		t.Fatalf("verdict %s findings %v", r.Verdict, findingRules(&r.Header))
	}
	if len(r.GPUs) != 7 {
		t.Errorf("gpus %d", len(r.GPUs))
	}
}

func TestNVMLProberCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewNVMLProber(dgxa100.New()).Probe(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}
