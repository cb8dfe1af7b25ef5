package probe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// corpusCase is one real output: the kind Detect must find, the verdict
// (VERDICTS.md for corpus files, the .source note for testdata files), the
// rules that must be among the findings, and the facts LOG.md gives.
type corpusCase struct {
	file    string
	kind    Kind
	verdict diag.ReportVerdict
	rules   []string
	check   func(t *testing.T, r Report)
}

func smiOf(r Report) *SMIReport     { return r.(*SMIReport) }
func topoOf(r Report) *TopoReport   { return r.(*TopoReport) }
func ncclOf(r Report) *NCCLReport   { return r.(*NCCLReport) }
func cudaOf(r Report) *CUDAReport   { return r.(*CUDAReport) }
func dcgmOf(r Report) *DCGMReport   { return r.(*DCGMReport) }
func dmesgOf(r Report) *DmesgReport { return r.(*DmesgReport) }

// checkSMIHealthyECC asserts ECC on with every counter 0 and no remap or
// retirement pending, for every GPU.
func checkSMIHealthyECC(t *testing.T, r *SMIReport) {
	t.Helper()
	for _, g := range r.GPUs {
		eqp(t, g.BusID+" eccEnabled", g.ECCEnabled, true)
		eqp(t, g.BusID+" eccUncorrectedVolatile", g.ECCUncorrectedVolatile, 0)
		eqp(t, g.BusID+" eccUncorrectedAggregate", g.ECCUncorrectedAggregate, 0)
		eqp(t, g.BusID+" eccCorrectedVolatile", g.ECCCorrectedVolatile, 0)
		eqp(t, g.BusID+" eccCorrectedAggregate", g.ECCCorrectedAggregate, 0)
	}
}

func checkRemapClean(t *testing.T, r *SMIReport) {
	t.Helper()
	for _, g := range r.GPUs {
		eqp(t, g.BusID+" rowsRemappedCorrectable", g.RowsRemappedCorrectable, 0)
		eqp(t, g.BusID+" rowsRemappedUncorrectable", g.RowsRemappedUncorrectable, 0)
		eqp(t, g.BusID+" rowRemapPending", g.RowRemapPending, false)
		eqp(t, g.BusID+" rowRemapFailure", g.RowRemapFailure, false)
	}
}

func busIDs(r *SMIReport) []string {
	var out []string
	for _, g := range r.GPUs {
		out = append(out, g.BusID)
	}
	return out
}

func checkRows(t *testing.T, r *NCCLReport, n int, first, last int64) {
	t.Helper()
	eq(t, "rows", len(r.Rows), n)
	if len(r.Rows) == n && n > 0 {
		eq(t, "first size", r.Rows[0].SizeBytes, first)
		eq(t, "last size", r.Rows[n-1].SizeBytes, last)
	}
}

func checkLargest(t *testing.T, r *NCCLReport, oop, ip float64) {
	t.Helper()
	o, i, ok := r.BusBandwidthAtLargestSize()
	if !ok || o != oop || i != ip {
		t.Errorf("busbw at largest size = %v/%v (ok %v), want %v/%v", o, i, ok, oop, ip)
	}
	eqp(t, "busbwAtLargestSizeGBps", r.BusBandwidthAtLargestSizeGBps, max(oop, ip))
}

func checkNoWrong(t *testing.T, r *NCCLReport) {
	t.Helper()
	for _, row := range r.Rows {
		for _, res := range []*NCCLResult{row.OutOfPlace, row.InPlace} {
			if res == nil || res.Wrong == nil || *res.Wrong != 0 {
				t.Errorf("row %d: wrong %+v, want 0", row.SizeBytes, res)
			}
		}
	}
}

func xid(r *DmesgReport, code int, bus string) *XIDCount {
	for i, x := range r.XIDs {
		if x.Code == code && x.BusID == bus {
			return &r.XIDs[i]
		}
	}
	return nil
}

var corpusCases = []corpusCase{
	// CUDA samples.
	{"cuda-samples/deviceQuery-a100-sxm4-80gb-x4.txt", KindCUDA, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := cudaOf(rep)
		eq(t, "program", r.Program, "deviceQuery")
		eqp(t, "devices", r.Devices, 4)
		eq(t, "driver/runtime", r.DriverVersion+"/"+r.RuntimeVersion, "12.5/12.4")
		eq(t, "device blocks", len(r.DeviceInfo), 4)
		for _, d := range r.DeviceInfo {
			eq(t, "name", d.Name, "NVIDIA A100-SXM4-80GB")
			eqp(t, "MBytes", d.TotalMemoryMiB, 81158)
			eqp(t, "bytes", d.TotalMemoryBytes, 85100068864)
			eqp(t, "SMs", d.Multiprocessors, 108)
			eqp(t, "cores/MP", d.CUDACoresPerMP, 64)
			eqp(t, "cores", d.CUDACores, 6912)
			eqp(t, "ECC", d.ECCEnabled, true)
		}
		eq(t, "peer lines", len(r.PeerAccess), 12)
		for _, p := range r.PeerAccess {
			eq(t, "peer supported", p.Supported, true)
		}
		eq(t, "result", r.Result, "PASS")
	}},
	{"cuda-samples/deviceQuery-l4-x1.txt", KindCUDA, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := cudaOf(rep)
		eqp(t, "devices", r.Devices, 1)
		eq(t, "driver/runtime", r.DriverVersion+"/"+r.RuntimeVersion, "12.4/11.8")
		d := r.DeviceInfo[0]
		eq(t, "name", d.Name, "NVIDIA L4")
		eq(t, "capability", d.ComputeCapability, "8.9")
		eqp(t, "MBytes", d.TotalMemoryMiB, 22478)
		eqp(t, "bytes", d.TotalMemoryBytes, 23570219008)
		eqp(t, "SMs", d.Multiprocessors, 58)
		eqp(t, "cores", d.CUDACores, 7424)
		eqp(t, "ECC", d.ECCEnabled, true)
		eq(t, "peer lines", len(r.PeerAccess), 0)
		eq(t, "result", r.Result, "PASS")
	}},
	{"cuda-samples/deviceQuery-h100-80gb-hbm3-x8.txt", KindCUDA, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := cudaOf(rep)
		eqp(t, "devices", r.Devices, 8)
		eq(t, "driver/runtime", r.DriverVersion+"/"+r.RuntimeVersion, "12.7/12.4")
		var buses []int
		for _, d := range r.DeviceInfo {
			eq(t, "name", d.Name, "NVIDIA H100 80GB HBM3")
			eq(t, "capability", d.ComputeCapability, "9.0")
			eqp(t, "MBytes", d.TotalMemoryMiB, 81106)
			eqp(t, "bytes", d.TotalMemoryBytes, 85045477376)
			eqp(t, "SMs", d.Multiprocessors, 132)
			eqp(t, "cores/MP", d.CUDACoresPerMP, 128)
			eqp(t, "cores", d.CUDACores, 16896)
			eqp(t, "ECC", d.ECCEnabled, true)
			if d.PCIBus != nil {
				buses = append(buses, *d.PCIBus)
			}
		}
		eqSlice(t, "PCI buses", buses, []int{24, 42, 58, 93, 154, 171, 186, 219})
		eq(t, "peer lines", len(r.PeerAccess), 56)
		eq(t, "result", r.Result, "PASS")
	}},
	{"cuda-samples/deviceQuery-h100-nvl-x2.txt", KindCUDA, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := cudaOf(rep)
		eqp(t, "devices", r.Devices, 2)
		eq(t, "driver/runtime", r.DriverVersion+"/"+r.RuntimeVersion, "12.4/12.4")
		for _, d := range r.DeviceInfo {
			eq(t, "name", d.Name, "NVIDIA H100 NVL")
			eqp(t, "MBytes", d.TotalMemoryMiB, 95235)
			eqp(t, "bytes", d.TotalMemoryBytes, 99861594112)
			eqp(t, "SMs", d.Multiprocessors, 132)
			eqp(t, "cores", d.CUDACores, 16896)
			eqp(t, "ECC", d.ECCEnabled, true)
		}
		eq(t, "peer lines", len(r.PeerAccess), 2)
		eq(t, "result", r.Result, "PASS")
	}},
	{"cuda-samples/vectoradd-pass-cuda12.5.txt", KindCUDA, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := cudaOf(rep)
		eq(t, "program", r.Program, "vectorAdd")
		eq(t, "result", r.Result, "PASS")
		eq(t, "error", r.Error, "")
	}},
	{"cuda-samples/vectoradd-fail-driver-insufficient.txt", KindCUDA, diag.ReportFail, []string{"cuda-driver-insufficient"}, func(t *testing.T, rep Report) {
		r := cudaOf(rep)
		eq(t, "program", r.Program, "vectorAdd")
		eq(t, "result", r.Result, "FAIL")
		eq(t, "error", r.Error, "CUDA driver version is insufficient for CUDA runtime version")
	}},
	{"testdata/cuda/devicequery-fail-999-unknown-error.txt", KindCUDA, diag.ReportFail, []string{"cuda-error"}, func(t *testing.T, rep Report) {
		r := cudaOf(rep)
		eq(t, "program", r.Program, "deviceQuery")
		eqp(t, "error code", r.ErrorCode, 999)
		eq(t, "error", r.Error, "unknown error")
		eq(t, "result", r.Result, "FAIL")
		eq(t, "devices listed", len(r.DeviceInfo), 0)
	}},

	// dcgmi diag.
	{"dcgm/h100-x8-diag-r3-cuinit-fail-dcgm3.3.8-driver560.txt", KindDCGM, diag.ReportFail, []string{"dcgm-test-failed"}, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		eq(t, "format", r.Format, "text")
		eq(t, "version", r.Version, "3.3.8")
		eq(t, "driver", r.DriverVersion, "560.35.03")
		eqSlice(t, "device ids", r.DeviceIDs, []string{"2330", "2330", "2330", "2330", "2330", "2330", "2330", "2330"})
		deployment := []string{"Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks", "Persistence Mode", "Environment Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom"}
		tests := map[string]DCGMTest{}
		var names []string
		for _, tt := range r.Tests {
			tests[tt.Name] = tt
			if tt.Category == "Deployment" {
				names = append(names, tt.Name)
				eq(t, tt.Name, tt.Result, "PASS")
			}
		}
		eqSlice(t, "deployment tests", names, deployment)
		info := tests["Persistence Mode"].Info
		if len(info) != 1 || !strings.HasPrefix(info[0], "Persistence mode for GPU 0 is disabled. Enable persistence mode by running \"nvidia-smi -i <gpuId> -pm 1 \" as root.,Persistence mode for GPU 1") || !strings.HasSuffix(info[0], "Enable pers") {
			t.Errorf("wrapped Info cell = %q", info)
		}
		eq(t, "PCIe", tests["PCIe"].Result, "SKIP")
		eq(t, "PCIe detail", tests["PCIe"].Detail, "Skip - All")
		mem := tests["GPU Memory"]
		eq(t, "GPU Memory", mem.Result, "FAIL")
		eq(t, "GPU Memory category", mem.Category, "Hardware")
		eq(t, "GPU Memory warnings", len(mem.Warnings), 8)
		for i, w := range mem.Warnings {
			if !strings.HasPrefix(w, "GPU "+string(rune('0'+i))+" Error using CUDA API cuInit") || !strings.Contains(w, "Unable to initialize CUDA library: 'system not yet initialized'") || !strings.HasSuffix(w, "https://github.com/nvidia/cuda-samples") {
				t.Errorf("warning %d = %q", i, w)
			}
		}
		eq(t, "Memory Bandwidth", tests["Memory Bandwidth"].Result, "SKIP")
		eq(t, "EUD Test", tests["EUD Test"].Result, "SKIP")
		eq(t, "overall", r.Result, "FAIL")
	}},
	{"dcgm/nvvs-json-dcgm3.1.0-x8-pass-warning-prefix-nulls.txt", KindDCGM, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		eq(t, "format", r.Format, "json")
		eq(t, "version", r.Version, "3.1.0")
		var deployment, custom []DCGMTest
		for _, tt := range r.Tests {
			switch tt.Category {
			case "Deployment":
				deployment = append(deployment, tt)
			case "Custom":
				custom = append(custom, tt)
			}
		}
		eq(t, "deployment tests (nulls skipped)", len(deployment), 9)
		for _, tt := range deployment {
			eq(t, tt.Name, tt.Result, "PASS")
			if len(tt.GPUResults) != 1 || tt.GPUResults[0].GPUIDs != "0,1,2,3,4,5,6,7" {
				t.Errorf("%s gpu results %+v", tt.Name, tt.GPUResults)
			}
		}
		if len(custom) != 1 || custom[0].Name != "software" || len(custom[0].GPUResults) != 8 {
			t.Fatalf("custom %+v", custom)
		}
		for i, g := range custom[0].GPUResults {
			eq(t, "integer gpu_ids", g.GPUIDs, string(rune('0'+i)))
			eq(t, "status", g.Status, "PASS")
		}
		eq(t, "overall", r.Result, "PASS")
	}},
	{"dcgm/v100-pcie-x1-diag-r3-pass-dcgm3.3.9-driver560.txt", KindDCGM, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		eq(t, "version", r.Version, "3.3.9")
		eq(t, "driver", r.DriverVersion, "560.35.03")
		eqSlice(t, "device ids", r.DeviceIDs, []string{"1db4"})
		got := map[string]string{}
		deployment := 0
		for _, tt := range r.Tests {
			got[tt.Category+"/"+tt.Name] = tt.Result
			if tt.Category == "Deployment" {
				deployment++
				eq(t, tt.Name, tt.Result, "PASS")
			}
			if tt.Result == "FAIL" || tt.Result == "WARN" {
				t.Errorf("%s = %s", tt.Name, tt.Result)
			}
		}
		eq(t, "deployment tests", deployment, 9)
		for k, v := range map[string]string{"Integration/PCIe": "PASS", "Hardware/GPU Memory": "PASS", "Hardware/Diagnostic": "PASS", "Stress/Targeted Stress": "PASS", "Stress/Targeted Power": "PASS", "Stress/Memory Bandwidth": "PASS", "Stress/EUD Test": "SKIP"} {
			eq(t, k, got[k], v)
		}
		eq(t, "overall", r.Result, "PASS")
	}},
	// Only the Deployment checks ran at -r 3; every GPU test was skipped.
	// The paste holds the run twice.
	{"testdata/dcgm/diag-r3-rtx-pro-6000-bw-x2-only-deployment-ran-dcgm3.3.9-570.txt", KindDCGM, diag.ReportUnknown, []string{"not-exercised", "mixed-input"}, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		eq(t, "version", r.Version, "3.3.9")
		eq(t, "driver", r.DriverVersion, "570.172.08")
		// Both tables' Metadata rows are read: the mix mixed-input flags.
		eqSlice(t, "device ids", r.DeviceIDs, []string{"2bb5", "2bb5", "2bb5", "2bb5"})
		eq(t, "tests (two tables of 15)", len(r.Tests), 30)
		for _, tt := range r.Tests {
			want := "SKIP"
			if tt.Category == "Deployment" {
				want = "PASS"
			}
			eq(t, tt.Category+"/"+tt.Name, tt.Result, want)
		}
		f := findingFor(&r.Header, "not-exercised", "")
		if f == nil || !strings.Contains(f.Message, "Hardware/GPU Memory") || !strings.Contains(f.Message, "Integration/PCIe") {
			t.Errorf("not-exercised finding %+v", f)
		}
	}},
	// DCGM 4's JSON: results per entity (entity_group, entity_id) and a
	// test_summary.
	{"testdata/dcgm/diag-r4-json-dcgm4-diagnostic-pass-x8-issue215-excerpt.txt", KindDCGM, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		eq(t, "format", r.Format, "json")
		if len(r.Tests) != 1 {
			t.Fatalf("tests %+v", r.Tests)
		}
		d := r.Tests[0]
		eq(t, "category", d.Category, "Hardware")
		eq(t, "name", d.Name, "diagnostic")
		eq(t, "result", d.Result, "PASS")
		eq(t, "overall", r.Result, "PASS")
		if len(d.GPUResults) != 8 || d.GPUResults[0].GPUIDs != "0" || d.GPUResults[7].GPUIDs != "7" || d.GPUResults[7].Status != "PASS" {
			t.Errorf("per-GPU results %+v", d.GPUResults)
		}
		if len(d.Info) != 8 || !strings.Contains(d.Info[2], "GPU 0 calculated at approximately 859.08 gigaflops") {
			t.Errorf("info %q", d.Info)
		}
	}},
	{"testdata/dcgm/diag-pcie-fail-nvlink-down-wrapped-excerpt.txt", KindDCGM, diag.ReportFail, []string{"dcgm-test-failed", "output-truncated"}, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		if len(r.Tests) != 1 {
			t.Fatalf("tests %+v", r.Tests)
		}
		pcie := r.Tests[0]
		eq(t, "category", pcie.Category, "Integration")
		eq(t, "result", pcie.Result, "FAIL")
		if len(pcie.Warnings) != 1 || !strings.Contains(pcie.Warnings[0], "GPU 0GPU 0's NvLink link 1 is currently down Run a field diagnostic on the GPU.") || !strings.Contains(pcie.Warnings[0], "link 4 is currently down") {
			t.Errorf("warnings %q", pcie.Warnings)
		}
	}},

	// Kernel logs.
	{"failures/dmesg-T-xid119-gsp-rpc-timeout-h100.log", KindDmesg, diag.ReportFail, []string{"xid-reset"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "style", r.TimestampStyle, "ctime")
		eq(t, "xid groups", len(r.XIDs), 1)
		x := xid(r, 119, "0000:9b:00")
		if x == nil {
			t.Fatalf("xids %+v", r.XIDs)
		}
		eq(t, "xid 119 count", x.Count, 5)
		eq(t, "class", x.Class, XIDReset)
		if !strings.Contains(x.FirstMessage, "Timeout after 6s of waiting for RPC response from GPU4 GSP!") {
			t.Errorf("message %q", x.FirstMessage)
		}
		eq(t, "fallen off bus", len(r.FallenOffBus), 0)
		eq(t, "probe failed", r.ProbeFailed, false)
	}},
	{"failures/dmesg-iso-xid48-63-94-dbe-rowremap.log", KindDmesg, diag.ReportFail, []string{"xid-reset"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "style", r.TimestampStyle, "iso")
		eq(t, "xid groups (peermem noise ignored)", len(r.XIDs), 3)
		for code, n := range map[int]int{48: 1, 63: 1, 94: 9} {
			if x := xid(r, code, "0000:19:00"); x == nil || x.Count != n {
				t.Errorf("xid %d = %+v, want count %d", code, x, n)
			}
		}
		if x := xid(r, 48, "0000:19:00"); x != nil && !strings.Contains(x.FirstMessage, "physAddr 0x12bac1c3e0") {
			t.Errorf("xid 48 message %q", x.FirstMessage)
		}
		if x := xid(r, 63, "0000:19:00"); x != nil && !strings.Contains(x.FirstMessage, "reset gpu to activate") {
			t.Errorf("xid 63 message %q", x.FirstMessage)
		}
	}},
	{"failures/dmesg-decode-iso-xid13-43.log", KindDmesg, diag.ReportOK, []string{"xid-application"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "style", r.TimestampStyle, "iso")
		eq(t, "lines", r.Lines, 30)
		x13, x43 := xid(r, 13, "0000:38:00"), xid(r, 43, "0000:38:00")
		if x13 == nil || x43 == nil {
			t.Fatalf("xids %+v", r.XIDs)
		}
		eq(t, "xid 13 count", x13.Count, 28)
		eq(t, "xid 43 count", x43.Count, 2)
		eq(t, "xid 13 class", x13.Class, XIDApplication)
		eq(t, "xid 43 class", x43.Class, XIDApplication)
		for _, f := range r.Findings {
			eq(t, f.Rule+" severity", f.Severity, diag.SeverityWarning)
		}
	}},
	// gpuctl probe nvml -o json on go-nvml's mock DGX servers; see nvml_json_test.go.
	{"testdata/framework/cpu-gloo-2ranks-torch-1.13-ok.log", KindFramework, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := rep.(*FrameworkReport)
		eq(t, "summary", r.Summary, true)
		eq(t, "torch", r.Torch, "1.13.0a0")
		eq(t, "world", r.World, 2)
		eq(t, "backend", r.Backend, "gloo")
		eq(t, "checks", len(r.Checks), 5)
		for _, c := range r.Checks {
			eq(t, c.Name+" ok", c.OK, true)
			eq(t, c.Name+" ranks", len(c.Ranks), 2)
		}
		e, _ := r.Check("matmul").Number("maxRelErr")
		if lim, _ := r.Check("matmul").ThresholdNumber("maxRelErr"); e <= 0 || e > lim {
			t.Errorf("matmul maxRelErr %g, threshold %g", e, lim)
		}
		ratio, _ := r.Check("training").Number("lossRatio")
		if ratio <= 0 || ratio > 0.5 {
			t.Errorf("training lossRatio %g", ratio)
		}
		n, _ := r.Check("checkpoint").Number("tensors")
		eq(t, "checkpoint tensors", n, 24.0)
	}},
	{"testdata/framework/cpu-gloo-2ranks-torch-1.13-corrupt-checkpoint.log", KindFramework, diag.ReportFail, []string{"framework-checkpoint-failed"}, func(t *testing.T, rep Report) {
		r := rep.(*FrameworkReport)
		eq(t, "failed", strings.Join(r.Failed, ","), "checkpoint")
		c := r.Check("checkpoint")
		eq(t, "checkpoint ok", c.OK, false)
		m, _ := c.Number("mismatched")
		eq(t, "mismatched", m, 1.0)
		eq(t, "firstMismatch", c.Values["firstMismatch"], any("model.net.0.weight"))
		eq(t, "training ok", r.Check("training").OK, true)
		if len(r.Findings) != 1 || !strings.Contains(r.Findings[0].Message, "mismatched 1 (threshold 0)") {
			t.Errorf("findings %+v", r.Findings)
		}
	}},
	{"testdata/framework/cpu-gloo-2ranks-torch-1.13-truncated-after-training.log", KindFramework, diag.ReportUnknown, []string{"output-truncated"}, func(t *testing.T, rep Report) {
		r := rep.(*FrameworkReport)
		eq(t, "summary", r.Summary, false)
		eq(t, "checks", len(r.Checks), 3)
	}},
	{"testdata/nvml/nvml-dgxa100-healthy.json", KindNVML, diag.ReportOK, nil, nil},
	{"testdata/nvml/nvml-dgxh100-healthy.json", KindNVML, diag.ReportOK, nil, nil},
	{"testdata/nvml/nvml-dgxh100-ecc-rowremap.json", KindNVML, diag.ReportFail, []string{"ecc-uncorrectable", "row-remap-pending"}, nil},
	{"testdata/dmesg/fallen-off-bus-multiline-no-xid-probe-failed.log", KindDmesg, diag.ReportFail, []string{"gpu-fallen-off-bus", "driver-probe-failed"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "style", r.TimestampStyle, "raw")
		eq(t, "xids", len(r.XIDs), 0)
		eqSlice(t, "fallen off bus", r.FallenOffBus, []string{"0000:b3:00"})
		eq(t, "probe failed", r.ProbeFailed, true)
		eq(t, "lines (continuations included)", r.Lines, 5)
	}},
	{"testdata/dmesg/xid79-journal-no-hostname.log", KindDmesg, diag.ReportFail, []string{"xid-reboot"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "style", r.TimestampStyle, "syslog")
		if x := xid(r, 79, "0000:2b:00"); x == nil || x.Count != 1 || x.Class != XIDReboot {
			t.Errorf("xid 79 %+v", r.XIDs)
		}
		eqSlice(t, "fallen off bus", r.FallenOffBus, []string{"0000:2b:00"})
		if hasRule(&r.Header, "gpu-fallen-off-bus") {
			t.Errorf("the XID 79 finding already covers the GPU: %v", rules(&r.Header))
		}
	}},
	{"testdata/dmesg/rminitadapter-failed-journal.log", KindDmesg, diag.ReportFail, []string{"driver-probe-failed"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "style", r.TimestampStyle, "syslog")
		eq(t, "probe failed", r.ProbeFailed, true)
		eq(t, "xids", len(r.XIDs), 0)
	}},

	// nvidia-smi and NVML failure messages.
	{"failures/nvidia-smi-a-i0-device-handle-unknown-error.txt", KindNvidiaSMI, diag.ReportFail, []string{FailureDeviceHandle}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "error")
		eq(t, "kind", r.Error.Kind, FailureDeviceHandle)
		eq(t, "bus", r.Error.BusID, "0000:09:00.0")
	}},
	{"testdata/nvidia-smi/device-handle-no-space.txt", KindNvidiaSMI, diag.ReportFail, []string{FailureDeviceHandle}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "kind", r.Error.Kind, FailureDeviceHandle)
		eq(t, "bus", r.Error.BusID, "0000:07:00.0")
	}},
	{"failures/nvidia-smi-couldnt-communicate-with-driver.txt", KindNvidiaSMI, diag.ReportFail, []string{FailureDriverNotLoaded}, func(t *testing.T, rep Report) {
		eq(t, "kind", smiOf(rep).Error.Kind, FailureDriverNotLoaded)
	}},
	{"failures/nvml-version-mismatch-old-one-line.txt", KindNvidiaSMI, diag.ReportFail, []string{FailureDriverLibraryMismatch}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "kind", r.Error.Kind, FailureDriverLibraryMismatch)
		eq(t, "library version (old form has none)", r.Error.LibraryVersion, "")
	}},
	{"testdata/nvidia-smi/version-mismatch-two-lines.txt", KindNvidiaSMI, diag.ReportFail, []string{FailureDriverLibraryMismatch}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "kind", r.Error.Kind, FailureDriverLibraryMismatch)
		eq(t, "library version", r.Error.LibraryVersion, "550.144")
	}},
	{"testdata/nvidia-smi/no-devices-were-found.txt", KindNvidiaSMI, diag.ReportFail, []string{FailureNoDevices}, func(t *testing.T, rep Report) {
		eq(t, "kind", smiOf(rep).Error.Kind, FailureNoDevices)
	}},

	// Kubernetes component logs: context only, unless they state a
	// health fact (NVML did not initialise).
	{"k8s/device-plugin-legacy-failed-init-nvml-could-not-load.txt", KindComponentLog, diag.ReportFail, []string{"component-nvml-init-failed"}, func(t *testing.T, rep Report) {
		r := rep.(*ComponentLogReport)
		eq(t, "component", r.Component, "nvidia-device-plugin")
		eq(t, "failure", r.Failure.Kind, FailureNVMLNotLoadable)
		eq(t, "nvml init failed", r.NVMLInitFailed, true)
		eq(t, "nvml error", r.NVMLError, "could not load NVML library")
		eq(t, "lines", r.Lines, 6)
	}},
	{"k8s/operator-validator-driver-validation-chroot-nvidia-smi-missing.txt", KindComponentLog, diag.ReportUnknown, []string{"component-nvidia-smi-missing"}, func(t *testing.T, rep Report) {
		r := rep.(*ComponentLogReport)
		eq(t, "component", r.Component, "gpu-operator-validator")
		eq(t, "failure", r.Failure.Kind, FailureSMIMissing)
		eq(t, "retries", r.Retries, 4)
		eq(t, "lines", r.Lines, 12)
		eq(t, "nvml init failed", r.NVMLInitFailed, false)
		eq(t, "validations failed (it is still retrying)", len(r.ValidationFailed), 0)
	}},

	// nccl-tests.
	{"nccl-tests/a100-40g-2node-16gpu-allreduce-10G-roce.txt", KindNCCL, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "collective", r.Collective, "all_reduce_perf")
		eq(t, "inferred", r.CollectiveInferred, true)
		eqp(t, "nThread", r.NThreads, 1)
		eqp(t, "nGpus", r.NGPUs, 1)
		eq(t, "ranks", r.Ranks, 16)
		eq(t, "validation column", r.ValidationColumn, "#wrong")
		checkRows(t, r, 1, 10737418240, 10737418240)
		row := r.Rows[0]
		eq(t, "type/redop", row.Type+"/"+row.Redop, "float/sum")
		eqp(t, "root", row.Root, -1)
		checkLargest(t, r, 222.88, 218.96)
		checkNoWrong(t, r)
		eqp(t, "out of bounds", r.OutOfBounds, 0)
		eqp(t, "avg busbw", r.AvgBusBandwidthGBps, 220.921)
	}},
	{"nccl-tests/gh200-2node-allreduce-v2.18.2.txt", KindNCCL, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "tests version", r.TestsVersion, "2.18.2")
		eq(t, "nccl version", r.NCCLVersion, "2.30.7")
		eq(t, "collective", r.Collective, "all_reduce_perf")
		eq(t, "inferred", r.CollectiveInferred, false)
		eq(t, "ranks", r.Ranks, 2)
		eq(t, "busId", r.Devices[0].BusID, "0009:01:00")
		checkRows(t, r, 8, 1048576, 134217728)
		checkLargest(t, r, 22.86, 22.88)
		checkNoWrong(t, r)
		eqp(t, "out of bounds", r.OutOfBounds, 0)
		eqp(t, "avg busbw", r.AvgBusBandwidthGBps, 14.9966)
	}},
	{"testdata/nccl/allreduce-json-v2-gh200.json", KindNCCL, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "format", r.Format, "json")
		eq(t, "collective", r.Collective, "all_reduce_perf")
		eq(t, "nccl version", r.NCCLVersion, "2.30.7")
		eq(t, "ranks", r.Ranks, 2)
		eq(t, "host", r.Devices[1].Host, "node-b")
		checkRows(t, r, 3, 1048576, 134217728)
		eqp(t, "root", r.Rows[0].Root, -1)
		checkLargest(t, r, 22.86, 22.88)
		checkNoWrong(t, r)
		eqp(t, "out of bounds", r.OutOfBounds, 0)
		eqp(t, "avg busbw", r.AvgBusBandwidthGBps, 10.608333)
	}},
	{"nccl-tests/p100-pcie-x8-nccl1.0-oldformat-unhandled-cuda-error.txt", KindNCCL, diag.ReportFail, []string{"nccl-cuda-error"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eqp(t, "nGpus (header without #)", r.NGPUs, 8)
		eq(t, "nccl version", r.NCCLVersion, "1.0")
		eq(t, "ranks", r.Ranks, 8)
		eq(t, "validation column", r.ValidationColumn, "res")
		eq(t, "rows", len(r.Rows), 0)
		eqSlice(t, "errors", r.Errors, []string{"NCCL failure all_reduce.cu:95 'unhandled cuda error'"})
		isNil(t, "avg busbw", r.AvgBusBandwidthGBps)
		eq(t, "collective (from the failing file)", r.Collective, "all_reduce_perf")
	}},
	{"nccl-tests/rtx2080ti-x4-unhandled-system-error-shm.txt", KindNCCL, diag.ReportUnknown, []string{"nccl-system-error"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "ranks", r.Ranks, 4)
		isNil(t, "group (Pid, no Group)", r.Devices[0].Group)
		eqp(t, "pid", r.Devices[0].PID, 1688)
		eq(t, "rows", len(r.Rows), 0)
		eqSlice(t, "errors", r.Errors, []string{"node-a: Test NCCL failure common.cu:777 'unhandled system error'"})
		isNil(t, "avg busbw", r.AvgBusBandwidthGBps)
	}},
	{"nccl-tests/v100-sxm3-dgx2-x12-allgather-error-col-4-FAILED.txt", KindNCCL, diag.ReportFail, []string{"nccl-wrong-results", "nccl-out-of-bounds"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "collective", r.Collective, "all_gather_perf")
		eq(t, "ranks", r.Ranks, 12)
		eq(t, "validation column", r.ValidationColumn, "error")
		checkRows(t, r, 31, 0, 8589934560)
		for i := 0; i < 3; i++ {
			eq(t, "zero-size rows", r.Rows[i].SizeBytes+r.Rows[i].Count, 0)
		}
		for _, row := range r.Rows {
			eq(t, "no redop column", row.Redop, "")
			isNil(t, "no root column", row.Root)
			want := 0.0
			if row.SizeBytes == 4294967280 || row.SizeBytes == 8589934560 {
				want = 1
			}
			eqp(t, "oop error", row.OutOfPlace.Wrong, want)
			eqp(t, "ip error", row.InPlace.Wrong, want)
		}
		eqp(t, "out of bounds", r.OutOfBounds, 4)
		eqp(t, "avg busbw", r.AvgBusBandwidthGBps, 30.2993)
		checkLargest(t, r, 73.75, 112.34)
	}},
	{"nccl-tests/h100-x8-allreduce-g8-256M-2G-noindent-rows.txt", KindNCCL, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "ranks", r.Ranks, 8)
		eq(t, "host", r.Devices[0].Host, "host")
		checkRows(t, r, 4, 268435456, 2147483648)
		checkLargest(t, r, 470.73, 470.63)
		checkNoWrong(t, r)
		eqp(t, "out of bounds", r.OutOfBounds, 0)
		eqp(t, "avg busbw", r.AvgBusBandwidthGBps, 448.212)
	}},
	{"nccl-tests/a100-sxm4-80gb-x8-allreduce-g8-4G.txt", KindNCCL, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "collective", r.Collective, "all_reduce_perf")
		eqp(t, "nGpus", r.NGPUs, 8)
		eqp(t, "maxBytes", r.MaxBytes, 4294967296)
		eq(t, "ranks", r.Ranks, 8)
		var buses []string
		for _, d := range r.Devices {
			eqp(t, "pid", d.PID, 54740)
			buses = append(buses, d.BusID)
		}
		eqSlice(t, "buses", buses, []string{"0x07", "0x0a", "0x45", "0x4b", "0x84", "0x8a", "0xc0", "0xc3"})
		checkRows(t, r, 30, 8, 4294967296)
		checkLargest(t, r, 232.44, 231.59)
		checkNoWrong(t, r)
		eqp(t, "out of bounds", r.OutOfBounds, 0)
		eqp(t, "avg busbw", r.AvgBusBandwidthGBps, 66.2058)
	}},
	{"testdata/nccl/broadcast-2019-root-error-na-warn-excerpt.txt", KindNCCL, diag.ReportUnknown, []string{"output-truncated", "nccl-not-validated"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "collective", r.Collective, "broadcast_perf")
		eq(t, "ranks", r.Ranks, 2)
		eq(t, "nccl version", r.NCCLVersion, "2.9.6+cuda11.2")
		eq(t, "warnings", len(r.Warnings), 2)
		eq(t, "validation column", r.ValidationColumn, "error")
		checkRows(t, r, 1, 8, 8)
		row := r.Rows[0]
		eqp(t, "root", row.Root, 0)
		eq(t, "redop", row.Redop, "")
		eq(t, "oop time", row.OutOfPlace.TimeUs, 45.82)
		eq(t, "ip time", row.InPlace.TimeUs, 38.17)
		isNil(t, "oop error N/A", row.OutOfPlace.Wrong)
		isNil(t, "ip error N/A", row.InPlace.Wrong)
	}},

	// nvidia-smi.
	{"nvidia-smi/a100-sxm4-80gb-x4-mig-v12-535.xml", KindNvidiaSMI, diag.ReportUnknown, []string{"gpu-count-mismatch"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "xml")
		eq(t, "dtd", r.DTDVersion, "nvsmi_device_v12.dtd")
		eq(t, "driver", r.DriverVersion, "535.54.03")
		eq(t, "cuda", r.CUDAVersion, "12.2")
		eqp(t, "attached", r.AttachedGPUs, 4)
		if len(r.GPUs) != 1 {
			t.Fatalf("gpus %d", len(r.GPUs))
		}
		g := r.GPUs[0]
		eq(t, "bus", g.BusID, "00000000:01:00.0")
		eq(t, "mig mode", g.MIGMode, "Enabled")
		eq(t, "mig devices", len(g.MIGDevices), 4)
		for i, m := range g.MIGDevices {
			eqp(t, "gi", m.GPUInstanceID, 3+i)
			eqp(t, "ci", m.ComputeInstanceID, 0)
			eqp(t, "mig memory", m.MemoryMiB, 19968)
		}
		eqp(t, "fb", g.MemoryTotalMiB, 81920)
		checkSMIHealthyECC(t, r)
		isNil(t, "remapped rows N/A", g.RowRemapPending)
		isNil(t, "remapped rows N/A", g.RowsRemappedUncorrectable)
		eqp(t, "pcie gen", g.PCIeGenCurrent, 4)
		eqp(t, "pcie width", g.PCIeWidthCurrent, 16)
		eq(t, "pstate", g.PerformanceState, "P0")
		eqp(t, "power", g.PowerDrawW, 67.03)
	}},
	{"nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "query")
		eq(t, "driver", r.DriverVersion, "535.161.08")
		eq(t, "cuda", r.CUDAVersion, "12.2")
		eqp(t, "attached", r.AttachedGPUs, 8)
		eqSlice(t, "buses", busIDs(r), []string{"00000000:19:00.0", "00000000:3B:00.0", "00000000:4C:00.0", "00000000:5D:00.0", "00000000:9B:00.0", "00000000:BB:00.0", "00000000:CB:00.0", "00000000:DB:00.0"})
		checkSMIHealthyECC(t, r)
		checkRemapClean(t, r)
		for _, g := range r.GPUs {
			eq(t, "mig", g.MIGMode, "Disabled")
			eq(t, "persistence", g.PersistenceMode, "Enabled")
			eq(t, "inforom image", g.InfoROMImage, "G520.0200.00.05")
			eqp(t, "sram threshold", g.SRAMThresholdExceeded, false)
			eqp(t, "reset required", g.ResetRequired, false)
			eqp(t, "drain and reset", g.DrainAndResetRecommended, false)
			eqp(t, "width", g.PCIeWidthCurrent, 16)
			eq(t, "pstate", g.PerformanceState, "P0")
			if g.PowerDrawW == nil || *g.PowerDrawW < 67.7 || *g.PowerDrawW > 72.3 {
				t.Errorf("power %v", g.PowerDrawW)
			}
		}
	}},
	{"nvidia-smi/h100-80gb-hbm3-x8-summary-table-550.90.07.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "table")
		eq(t, "timestamp", r.Timestamp, "Mon Jan 20 10:18:26 2025")
		eq(t, "driver", r.DriverVersion, "550.90.07")
		eq(t, "cuda", r.CUDAVersion, "12.4")
		eqSlice(t, "buses", busIDs(r), []string{"00000000:19:00.0", "00000000:3B:00.0", "00000000:4C:00.0", "00000000:5D:00.0", "00000000:9B:00.0", "00000000:BB:00.0", "00000000:CB:00.0", "00000000:DB:00.0"})
		for i, g := range r.GPUs {
			eq(t, "index", g.Index, i)
			eq(t, "name", g.Name, "NVIDIA H100 80GB HBM3")
			eq(t, "persistence", g.PersistenceMode, "On")
			eqp(t, "ecc", g.ECCUncorrectedVolatile, 0)
			eqp(t, "used", g.MemoryUsedMiB, 1)
			eqp(t, "total", g.MemoryTotalMiB, 81559)
			eq(t, "pstate", g.PerformanceState, "P0")
			eqp(t, "cap", g.PowerLimitW, 700)
			eq(t, "mig", g.MIGMode, "Disabled")
		}
	}},
	{"testdata/nvidia-smi/table-580-a100-sxm4-40gb-excerpt.txt", KindNvidiaSMI, diag.ReportUnknown, []string{"output-truncated"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "580.126.09")
		eq(t, "cuda", r.CUDAVersion, "13.0")
		eqSlice(t, "buses", busIDs(r), []string{"00000000:10:1C.0", "00000000:10:1D.0"})
		g := r.GPUs[1]
		eqp(t, "ecc", g.ECCUncorrectedVolatile, 0)
		eqp(t, "used", g.MemoryUsedMiB, 602)
		eqp(t, "total", g.MemoryTotalMiB, 40960)
		eqp(t, "util", g.UtilizationGPUPercent, 7)
		eq(t, "mig", g.MIGMode, "Disabled")
	}},
	{"testdata/nvidia-smi/table-590-gh200-x4-nonzero-domain.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "table")
		eq(t, "driver", r.DriverVersion, "590.48.01")
		eq(t, "cuda", r.CUDAVersion, "13.1")
		eqSlice(t, "buses", busIDs(r), []string{"00000009:01:00.0", "00000019:01:00.0", "00000029:01:00.0", "00000039:01:00.0"})
		var used []int
		for _, g := range r.GPUs {
			eq(t, "name", g.Name, "NVIDIA GH200 120GB")
			eq(t, "persistence", g.PersistenceMode, "On")
			eqp(t, "ecc", g.ECCUncorrectedVolatile, 0)
			eqp(t, "total", g.MemoryTotalMiB, 97871)
			eqp(t, "cap", g.PowerLimitW, 900)
			eqp(t, "util", g.UtilizationGPUPercent, 0)
			eq(t, "mig", g.MIGMode, "Disabled")
			if g.MemoryUsedMiB != nil {
				used = append(used, int(*g.MemoryUsedMiB))
			}
		}
		eqSlice(t, "used", used, []int{5, 40, 35, 23})
		eqp(t, "GPU 2 power", r.GPUs[2].PowerDrawW, 80)
		eqp(t, "GPU 3 temp", r.GPUs[3].TemperatureC, 45)
	}},
	{"testdata/nvidia-smi/table-470-a10g-old-borders.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "470.256.02")
		eq(t, "cuda", r.CUDAVersion, "11.4")
		if len(r.GPUs) != 1 {
			t.Fatalf("gpus %d", len(r.GPUs))
		}
		g := r.GPUs[0]
		eq(t, "name", g.Name, "NVIDIA A10G")
		eq(t, "bus", g.BusID, "00000000:00:1E.0")
		eq(t, "persistence", g.PersistenceMode, "On")
		eqp(t, "temp", g.TemperatureC, 25)
		eqp(t, "power", g.PowerDrawW, 9)
		eqp(t, "cap", g.PowerLimitW, 300)
		eqp(t, "total", g.MemoryTotalMiB, 22731)
		eq(t, "mig", g.MIGMode, "N/A")
	}},
	{"nvidia-smi/h100-nvl-x2-q.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "550.54.14")
		eq(t, "cuda", r.CUDAVersion, "12.4")
		eqp(t, "attached", r.AttachedGPUs, 2)
		eqSlice(t, "buses", busIDs(r), []string{"00000000:AD:00.0", "00000000:AE:00.0"})
		checkSMIHealthyECC(t, r)
		for i, g := range r.GPUs {
			eqp(t, "fb", g.MemoryTotalMiB, 95830)
			eqp(t, "remap pending", g.RowRemapPending, false)
			eqp(t, "remap failure", g.RowRemapFailure, false)
			eqp(t, "reset required", g.ResetRequired, false)
			eq(t, "pstate", g.PerformanceState, "P0")
			eqp(t, "temp", g.TemperatureC, []int{32, 31}[i])
			eqp(t, "power", g.PowerDrawW, []float64{61.62, 62.11}[i])
		}
	}},
	{"nvidia-smi/l4-x1-q-550.90.07.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "550.90.07")
		eq(t, "cuda", r.CUDAVersion, "12.4")
		eqp(t, "attached", r.AttachedGPUs, 1)
		g := r.GPUs[0]
		eq(t, "bus", g.BusID, "00000000:01:00.0")
		eqp(t, "fb", g.MemoryTotalMiB, 23034)
		checkSMIHealthyECC(t, r)
		checkRemapClean(t, r)
		eqp(t, "reset required", g.ResetRequired, false)
		eq(t, "pstate", g.PerformanceState, "P8")
		eqp(t, "temp", g.TemperatureC, 33)
		eqp(t, "power", g.PowerDrawW, 16.47)
		eq(t, "persistence", g.PersistenceMode, "Enabled")
	}},
	{"nvidia-smi/t4-x1-v11-515.xml", KindNvidiaSMI, diag.ReportOK, []string{"pcie-link-idle"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "dtd", r.DTDVersion, "nvsmi_device_v11.dtd")
		eq(t, "driver", r.DriverVersion, "515.105.01")
		eq(t, "cuda", r.CUDAVersion, "11.7")
		eqp(t, "attached", r.AttachedGPUs, 1)
		g := r.GPUs[0]
		eq(t, "name", g.Name, "Tesla T4")
		checkSMIHealthyECC(t, r)
		eqp(t, "retired pending", g.RetiredPagesPending, false)
		isNil(t, "remapped rows (Turing)", g.RowRemapPending)
		eqp(t, "fb", g.MemoryTotalMiB, 15360)
		eq(t, "pstate", g.PerformanceState, "P0")
		eqp(t, "gen", g.PCIeGenCurrent, 3)
		eqp(t, "width", g.PCIeWidthCurrent, 8)
		eqp(t, "temp", g.TemperatureC, 40)
	}},
	{"nvidia-smi/a10-x1-q-535.129.03.txt", KindNvidiaSMI, diag.ReportFail, []string{"row-remap-pending"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "535.129.03")
		eq(t, "cuda", r.CUDAVersion, "12.2")
		eqp(t, "attached", r.AttachedGPUs, 1)
		g := r.GPUs[0]
		eq(t, "bus", g.BusID, "00000000:07:00.0")
		checkSMIHealthyECC(t, r)
		isNil(t, "retired pages N/A", g.RetiredPagesPending)
		eqp(t, "remapped correctable", g.RowsRemappedCorrectable, 0)
		eqp(t, "remapped uncorrectable", g.RowsRemappedUncorrectable, 4)
		eqp(t, "remap pending", g.RowRemapPending, true)
		eqp(t, "remap failure", g.RowRemapFailure, false)
		eq(t, "pstate", g.PerformanceState, "P8")
		eqp(t, "temp", g.TemperatureC, 33)
		if f := findingFor(&r.Header, "row-remap-pending", "00000000:07:00.0"); f == nil || f.Severity != diag.SeverityError {
			t.Errorf("finding %+v", r.Findings)
		}
	}},
	{"nvidia-smi/a10g-x1-v11-515.xml", KindNvidiaSMI, diag.ReportOK, []string{"pcie-link-idle"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "dtd", r.DTDVersion, "nvsmi_device_v11.dtd")
		eq(t, "driver", r.DriverVersion, "515.105.01")
		g := r.GPUs[0]
		eq(t, "bus", g.BusID, "00000000:00:1E.0")
		eq(t, "inforom image", g.InfoROMImage, "G133.0210.00.04")
		eq(t, "mig", g.MIGMode, "N/A")
		checkSMIHealthyECC(t, r)
		checkRemapClean(t, r)
		eqp(t, "fb", g.MemoryTotalMiB, 23028)
		eq(t, "pstate", g.PerformanceState, "P8")
		eqp(t, "gen", g.PCIeGenCurrent, 1)
		eqp(t, "width", g.PCIeWidthCurrent, 8)
		eqp(t, "gen max", g.PCIeGenMax, 4)
		eqp(t, "width max", g.PCIeWidthMax, 16)
		eq(t, "serial", g.Serial, "0000000000000")
		eqSlice(t, "clock reasons (clocks_throttle_reasons)", g.ClockEventReasons, []string{"gpu_idle"})
		if f := findingFor(&r.Header, "pcie-link-idle", g.BusID); f == nil || f.Severity != diag.SeverityInfo {
			t.Errorf("idle downtraining must be info: %+v", r.Findings)
		}
	}},
	{"nvidia-smi/h100-80gb-hbm3-x8-q-535.183.01-truncated-garbled.txt", KindNvidiaSMI, diag.ReportUnknown, []string{"output-garbled", "output-truncated", "gpu-count-mismatch"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "535.183.01")
		eq(t, "cuda", r.CUDAVersion, "12.2")
		eqp(t, "attached", r.AttachedGPUs, 8)
		eqSlice(t, "buses", busIDs(r), []string{"00000000:53:00.0"})
	}},
	{"nvidia-smi/h100-80gb-hbm3-x8-q-535.183.01.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "535.183.01")
		eqp(t, "attached", r.AttachedGPUs, 8)
		eqSlice(t, "buses", busIDs(r), []string{"00000000:53:00.0", "00000000:64:00.0", "00000000:75:00.0", "00000000:86:00.0", "00000000:97:00.0", "00000000:A8:00.0", "00000000:B9:00.0", "00000000:CA:00.0"})
		checkSMIHealthyECC(t, r)
		maxPower := 0.0
		for _, g := range r.GPUs {
			eqp(t, "remap pending", g.RowRemapPending, false)
			eqp(t, "remap failure", g.RowRemapFailure, false)
			eq(t, "fabric", g.FabricState+"/"+g.FabricStatus, "Completed/Success")
			if g.PCIeReplays == nil || *g.PCIeReplays < 58 || *g.PCIeReplays > 120 {
				t.Errorf("replays %v", g.PCIeReplays)
			}
			maxPower = max(maxPower, *g.PowerDrawW)
		}
		eq(t, "max power", maxPower, 118.01)
	}},
	{"nvidia-smi/rtx4000-sff-ada-x1-v13.xml", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "dtd", r.DTDVersion, "nvsmi_device_v13.dtd")
		eq(t, "driver", r.DriverVersion, "595.84")
		eq(t, "cuda", r.CUDAVersion, "13.2")
		g := r.GPUs[0]
		eqp(t, "ecc", g.ECCEnabled, false)
		isNil(t, "ecc N/A", g.ECCUncorrectedVolatile)
		isNil(t, "ecc N/A", g.ECCUncorrectedAggregate)
		eqp(t, "remapped", g.RowsRemappedUncorrectable, 0)
		eqp(t, "remap pending", g.RowRemapPending, false)
		eqp(t, "instant power draw", g.PowerDrawW, 8.44)
		eqp(t, "fb", g.MemoryTotalMiB, 20475)
		eq(t, "pstate", g.PerformanceState, "P8")
	}},
	{"nvidia-smi/v100-sxm3-32gb-x16-query-gpu-csv-nounits.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "csv")
		eq(t, "rows", len(r.GPUs), 16)
		busy := map[int][2]float64{1: {383.55, 98}, 4: {191.77, 64}, 7: {352.89, 100}, 12: {238.71, 58}, 8: {66.92, 13}}
		maxTemp, maxAt := 0, -1
		for i, g := range r.GPUs {
			eq(t, "name", g.Name, "Tesla V100-SXM3-32GB")
			eqp(t, "total = used + free", g.MemoryTotalMiB, 32500)
			if b, ok := busy[i]; ok {
				eqp(t, "power", g.PowerDrawW, b[0])
				eqp(t, "util", g.UtilizationGPUPercent, int(b[1]))
			} else {
				wantUsed := int64(5)
				if i == 2 { // the third row is idle with 7 MiB in use
					wantUsed = 7
				}
				eqp(t, "idle util", g.UtilizationGPUPercent, 0)
				eqp(t, "idle used", g.MemoryUsedMiB, wantUsed)
			}
			if *g.TemperatureC > maxTemp {
				maxTemp, maxAt = *g.TemperatureC, i
			}
		}
		eq(t, "max temp", maxTemp, 66)
		eq(t, "max temp row (1-based)", maxAt+1, 8)
	}},
	{"nvlink-ecc-mig/a100-80gb-mig-7x1g.10gb-L-535.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "list")
		if len(r.GPUs) != 1 {
			t.Fatalf("gpus %d", len(r.GPUs))
		}
		g := r.GPUs[0]
		eq(t, "name", g.Name, "NVIDIA A100-SXM4-80GB")
		eq(t, "uuid", g.UUID, "GPU-00000000-0000-0000-0000-000000000001")
		eq(t, "mig devices", len(g.MIGDevices), 7)
		for i, m := range g.MIGDevices {
			eq(t, "index", m.Index, i)
			eq(t, "profile", m.Profile, "1g.10gb")
			eq(t, "uuid", m.UUID, "MIG-00000001-0000-0000-0000-00000000000"+string(rune('1'+i)))
		}
	}},
	{"nvlink-ecc-mig/a100-sxm4-80gb-x8-nvlink-status.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "nvlink")
		eq(t, "gpus", len(r.GPUs), 8)
		links, inactive := 0, 0
		for _, g := range r.GPUs {
			eq(t, "name", g.Name, "NVIDIA A100-SXM4-80GB")
			eq(t, "links", len(g.NVLinks), 12)
			for _, l := range g.NVLinks {
				links++
				if !l.Active {
					inactive++
				}
				eqp(t, "speed", l.SpeedGBps, 25)
			}
		}
		eq(t, "links", links, 96)
		eq(t, "inactive", inactive, 0)
	}},
	{"testdata/nvidia-smi/nvlink-s-h100-80gb-hbm3-x8-550.90.07.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "nvlink")
		eq(t, "gpus", len(r.GPUs), 8)
		eq(t, "uuid 0", r.GPUs[0].UUID, "GPU-a13fd687-df01-df63-bd60-ecc0de70cc45")
		links := 0
		for i, g := range r.GPUs {
			eq(t, "index", g.Index, i)
			eq(t, "name", g.Name, "NVIDIA H100 80GB HBM3")
			eq(t, "links", len(g.NVLinks), 18)
			for k, l := range g.NVLinks {
				links++
				eq(t, "link", l.Link, k)
				eq(t, "active", l.Active, true)
				eqp(t, "speed", l.SpeedGBps, 26.562)
			}
		}
		eq(t, "links", links, 144)
	}},
	{"testdata/nvidia-smi/list-L-h100-80gb-hbm3-x8.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "list")
		eq(t, "gpus", len(r.GPUs), 8)
		for i, g := range r.GPUs {
			eq(t, "index", g.Index, i)
			eq(t, "name", g.Name, "NVIDIA H100 80GB HBM3")
			eq(t, "nvlinks", len(g.NVLinks), 0)
		}
		eq(t, "uuid 7", r.GPUs[7].UUID, "GPU-5534d557-2a95-300a-81e6-7b626d87378a")
	}},
	{"testdata/nvidia-smi/nvlink-s-v100-inactive-links.txt", KindNvidiaSMI, diag.ReportFail, []string{"nvlink-inactive", "output-elided"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "nvlink")
		g := r.GPUs[0]
		eq(t, "index", g.Index, 3)
		eq(t, "links", len(g.NVLinks), 6)
		var down []int
		for _, l := range g.NVLinks {
			if !l.Active {
				down = append(down, l.Link)
				isNil(t, "inactive speed", l.SpeedGBps)
			} else {
				eqp(t, "speed", l.SpeedGBps, 25.781)
			}
		}
		eqSlice(t, "inactive links", down, []int{3, 5})
	}},

	// nvidia-smi topo -m.
	{"topo/2gpu-nv2-bridge-matrix-only.txt", KindTopo, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := topoOf(rep)
		eqSlice(t, "gpus", r.GPUs, []string{"GPU0", "GPU1"})
		eq(t, "nics", len(r.NICs), 0)
		eq(t, "GPU0-GPU1", r.Link("GPU0", "GPU1"), "NV2")
		eq(t, "NVLinks", NVLinks(r.Link("GPU0", "GPU1")), 2)
		eq(t, "cpu", r.CPUAffinity["GPU0"], "0-23")
		eq(t, "numa", r.NUMAAffinity["GPU1"], "N/A")
		eq(t, "gpu numa id column", len(r.GPUNUMAID), 0)
		eq(t, "legend", len(r.Legend), 0)
	}},
	{"topo/a100-nv12-x8-18nic-numa8-spaces.txt", KindTopo, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := topoOf(rep)
		eq(t, "gpus", len(r.GPUs), 8)
		eq(t, "nics", len(r.NICs), 18)
		for _, a := range r.GPUs {
			for _, b := range r.GPUs {
				if a != b {
					eq(t, a+"-"+b, r.Link(a, b), "NV12")
				}
			}
			eq(t, a+"-NIC0", r.Link(a, "NIC0"), "SYS")
			eq(t, a+"-NIC13", r.Link(a, "NIC13"), "SYS")
		}
		pxb := map[string][]string{"GPU0": {"NIC5", "NIC6", "NIC7", "NIC8"}, "GPU2": {"NIC1", "NIC2", "NIC3", "NIC4"}, "GPU4": {"NIC14", "NIC15", "NIC16", "NIC17"}, "GPU6": {"NIC9", "NIC10", "NIC11", "NIC12"}}
		for g, nics := range pxb {
			for _, n := range nics {
				eq(t, g+"-"+n, r.Link(g, n), "PXB")
			}
		}
		for g, want := range map[string][2]string{"GPU0": {"48-63", "3"}, "GPU2": {"16-31", "1"}, "GPU4": {"112-127", "7"}, "GPU6": {"80-95", "5"}} {
			eq(t, g+" cpu", r.CPUAffinity[g], want[0])
			eq(t, g+" numa", r.NUMAAffinity[g], want[1])
		}
		eq(t, "last NIC row", r.Link("NIC17", "NIC17"), "X")
		eq(t, "nic names", len(r.NICNames), 18)
		eq(t, "NIC0", r.NICNames["NIC0"], "mlx5_0")
		eq(t, "NIC17", r.NICNames["NIC17"], "mlx5_17")
	}},
	{"topo/h100-x8-8nic-sglang-checkenv-570.txt", KindTopo, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := topoOf(rep)
		eq(t, "gpus", len(r.GPUs), 8)
		eq(t, "nics", len(r.NICs), 8)
		eq(t, "GPU0-GPU7", r.Link("GPU0", "GPU7"), "NV18")
		for g, nics := range map[string][]string{"GPU0": {"NIC0", "NIC1"}, "GPU2": {"NIC2", "NIC3"}, "GPU4": {"NIC4", "NIC5"}, "GPU6": {"NIC6", "NIC7"}} {
			for _, n := range nics {
				eq(t, g+"-"+n, r.Link(g, n), "PIX")
			}
		}
		eq(t, "misaligned NIC4 column", r.Link("GPU4", "NIC4"), "PIX")
		eq(t, "NIC7-NIC6", r.Link("NIC7", "NIC6"), "PIX")
		for i, g := range r.GPUs {
			wantCPU, wantNUMA := "0-47,96-143", "0"
			if i >= 4 {
				wantCPU, wantNUMA = "48-95,144-191", "1"
			}
			eq(t, g+" cpu", r.CPUAffinity[g], wantCPU)
			eq(t, g+" numa", r.NUMAAffinity[g], wantNUMA)
			eq(t, g+" gpu numa id", r.GPUNUMAID[g], "N/A")
		}
		cpus, err := ParseCPUList(r.CPUAffinity["GPU0"])
		if err != nil || len(cpus) != 96 {
			t.Errorf("ParseCPUList = %d cpus, %v", len(cpus), err)
		}
	}},
	{"topo/l40-x4-2nic-tabs-570.txt", KindTopo, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := topoOf(rep)
		eqSlice(t, "gpus", r.GPUs, []string{"GPU0", "GPU1", "GPU2", "GPU3"})
		eqSlice(t, "nics", r.NICs, []string{"NIC0", "NIC1"})
		eq(t, "GPU0-GPU1", r.Link("GPU0", "GPU1"), "NODE")
		eq(t, "GPU0-GPU2", r.Link("GPU0", "GPU2"), "SYS")
		eq(t, "GPU2-GPU3", r.Link("GPU2", "GPU3"), "NODE")
		eq(t, "GPU2-NIC0", r.Link("GPU2", "NIC0"), "NODE")
		eq(t, "GPU3-NIC1", r.Link("GPU3", "NIC1"), "NODE")
		eq(t, "NIC0-NIC1", r.Link("NIC0", "NIC1"), "PIX")
		eq(t, "self", r.Link("GPU0", "GPU0"), "X")
		for g, want := range map[string][2]string{"GPU0": {"0-127,256-383", "0"}, "GPU1": {"0-127,256-383", "0"}, "GPU2": {"128-255,384-511", "1"}, "GPU3": {"128-255,384-511", "1"}} {
			eq(t, g+" cpu", r.CPUAffinity[g], want[0])
			eq(t, g+" numa", r.NUMAAffinity[g], want[1])
			eq(t, g+" gpu numa id", r.GPUNUMAID[g], "N/A")
		}
		eq(t, "NIC1 name", r.NICNames["NIC1"], "mlx5_1")
		for _, a := range r.GPUs {
			for _, b := range r.GPUs {
				if NVLinks(r.Link(a, b)) != 0 {
					t.Errorf("%s-%s NVLink", a, b)
				}
			}
		}
	}},
	{"topo/v100-sxm2-x8-dgx1-1nic-old-noNUMA-470.txt", KindTopo, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := topoOf(rep)
		eq(t, "gpus", len(r.GPUs), 8)
		eqSlice(t, "nics (named by device)", r.NICs, []string{"mlx5_0"})
		for b, want := range map[string]string{"GPU1": "NV1", "GPU2": "NV1", "GPU3": "NV2", "GPU4": "NV2", "GPU5": "SYS", "GPU6": "SYS", "GPU7": "SYS"} {
			eq(t, "GPU0-"+b, r.Link("GPU0", b), want)
		}
		for g, want := range map[string]string{"GPU0": "NODE", "GPU1": "NODE", "GPU2": "PIX", "GPU3": "PIX", "GPU4": "SYS", "GPU7": "SYS"} {
			eq(t, g+"-mlx5_0", r.Link(g, "mlx5_0"), want)
		}
		eq(t, "GPU0 cpu", r.CPUAffinity["GPU0"], "0-11,24-35")
		eq(t, "GPU7 cpu", r.CPUAffinity["GPU7"], "12-23,36-47")
		eq(t, "no NUMA Affinity column", len(r.NUMAAffinity), 0)
		eq(t, "nic name", r.NICNames["mlx5_0"], "mlx5_0")
	}},
	{"testdata/topo/h100-x4-nv6-4nic-cpu-lists-legend-cut.txt", KindTopo, diag.ReportOK, []string{"topo-nic-legend-missing"}, func(t *testing.T, rep Report) {
		r := topoOf(rep)
		eq(t, "gpus", len(r.GPUs), 4)
		eq(t, "nics", len(r.NICs), 4)
		for i, g := range r.GPUs {
			nic := "NIC" + string(rune('0'+i))
			eq(t, g+"-"+nic, r.Link(g, nic), "PIX")
		}
		eq(t, "GPU1-GPU3", r.Link("GPU1", "GPU3"), "NV6")
		eq(t, "GPU0 cpu", r.CPUAffinity["GPU0"], "6,14,22,30")
		eq(t, "GPU2 numa", r.NUMAAffinity["GPU2"], "7")
		eq(t, "NIC3 self", r.Link("NIC3", "NIC3"), "X")
	}},
}

func TestCorpus(t *testing.T) {
	for _, c := range corpusCases {
		t.Run(c.file, func(t *testing.T) {
			if gap := corpusGap(t, source(c.file)); gap != "" {
				checkKnownGap(t, c, gap)
				return
			}
			data := readFile(t, source(c.file))
			k, err := Detect(data)
			if err != nil || k != c.kind {
				t.Errorf("Detect = %q, %v; want %q", k, err, c.kind)
			}
			r, err := Parse(KindAuto, data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			h := r.Common()
			if h.Kind != c.kind || h.FormatVersion != FormatVersion {
				t.Errorf("header kind %q version %q", h.Kind, h.FormatVersion)
			}
			if h.Verdict != c.verdict {
				t.Errorf("verdict %s, want %s; findings:\n%s", h.Verdict, c.verdict, dumpFindings(h))
			}
			for _, rule := range c.rules {
				if !hasRule(h, rule) {
					t.Errorf("no %q finding; findings:\n%s", rule, dumpFindings(h))
				}
			}
			for _, f := range h.Findings {
				if f.Severity == diag.SeverityError && c.verdict != diag.ReportFail {
					t.Errorf("error finding on a %s output: %+v", c.verdict, f)
				}
			}
			if c.check != nil {
				c.check(t, r)
			}
			checkJSONContract(t, r)
		})
	}
}

func dumpFindings(h *Header) string {
	var b strings.Builder
	for _, f := range h.Findings {
		b.WriteString("  " + string(f.Severity) + " " + f.Rule + " [" + f.GPU + "] " + f.Message + "\n")
	}
	return b.String()
}

// TestCorpusCoversEveryFile fails when a file is added to the corpus
// or to testdata without a case here.
func TestCorpusCoversEveryFile(t *testing.T) {
	have := map[string]bool{}
	for _, c := range corpusCases {
		if have[c.file] {
			t.Errorf("%s listed twice", c.file)
		}
		have[c.file] = true
	}
	walk := func(root, prefix string) {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if strings.HasSuffix(rel, ".md") || strings.HasSuffix(rel, ".source") || strings.HasPrefix(rel, "fuzz/") {
				return nil
			}
			if !have[prefix+rel] {
				t.Errorf("%s%s has no test case", prefix, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	walk(corpusDir, "")
	walk("testdata", "testdata/")
}

var reVerdictRow = regexp.MustCompile(`^\| ([^|]+?) \| (ok|fail|unknown|\(not a parse kind)`)

// TestCorpusVerdictsMatchVERDICTS reads VERDICTS.md so that the cases cannot
// drift from the ground truth. Component logs ("not a parse kind") are
// reported with verdict unknown.
func TestCorpusVerdictsMatchVERDICTS(t *testing.T) {
	f, err := os.Open(filepath.Join(corpusDir, "VERDICTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]diag.ReportVerdict{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := reVerdictRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v := diag.ReportVerdict(m[2])
		if strings.HasPrefix(m[2], "(not") {
			v = diag.ReportUnknown
		}
		want[m[1]] = v
	}
	if len(want) < 40 {
		t.Fatalf("read only %d verdicts from VERDICTS.md", len(want))
	}
	have := map[string]bool{}
	for _, c := range corpusCases {
		if strings.HasPrefix(c.file, "testdata/") {
			continue
		}
		have[c.file] = true
		if v, ok := want[c.file]; !ok {
			t.Errorf("%s is not in VERDICTS.md", c.file)
		} else if v != c.verdict {
			t.Errorf("%s: case says %s, VERDICTS.md says %s", c.file, c.verdict, v)
		}
	}
	for f := range want {
		if !have[f] {
			t.Errorf("VERDICTS.md lists %s but no case does", f)
		}
	}
}

// checkJSONContract checks the keys every consumer relies on: the header,
// the kind's contract keys, and that no array is null.
func checkJSONContract(t *testing.T, r Report) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(":null,")) || bytes.Contains(b, []byte(":null}")) {
		// null is allowed for unknown scalars and objects; arrays must be [].
		var generic map[string]any
		_ = json.Unmarshal(b, &generic)
		checkNoNullArrays(t, "", generic)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	keys := []string{"formatVersion", "kind", "verdict", "findings"}
	switch r.(type) {
	case *SMIReport:
		keys = append(keys, "driverVersion", "cudaVersion", "attachedGPUs", "gpus", "error")
	case *TopoReport:
		keys = append(keys, "gpus", "nics", "matrix", "cpuAffinity", "numaAffinity", "nicNames")
	case *NCCLReport:
		keys = append(keys, "collective", "ranks", "rows", "avgBusbwGBps", "outOfBounds", "errors")
	case *CUDAReport:
		keys = append(keys, "program", "devices", "driverVersion", "runtimeVersion", "result")
	case *DCGMReport:
		keys = append(keys, "version", "tests", "result")
	case *DmesgReport:
		keys = append(keys, "xids", "fallenOffBus", "probeFailed")
	}
	for _, k := range keys {
		if _, ok := top[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if s, ok := r.(*SMIReport); ok && len(s.GPUs) > 0 {
		var gpus []map[string]json.RawMessage
		_ = json.Unmarshal(top["gpus"], &gpus)
		for _, k := range []string{"index", "name", "busId", "uuid", "serial", "memoryTotalMiB", "eccEnabled", "eccUncorrectedVolatile", "eccUncorrectedAggregate", "retiredPagesPending", "rowRemapPending", "rowRemapFailure", "pcieGenCurrent", "pcieGenMax", "pcieWidthCurrent", "pcieWidthMax", "migMode"} {
			if _, ok := gpus[0][k]; !ok {
				t.Errorf("gpus[0] lacks %q", k)
			}
		}
	}
	if n, ok := r.(*NCCLReport); ok && len(n.Rows) > 0 {
		var rows []map[string]json.RawMessage
		_ = json.Unmarshal(top["rows"], &rows)
		for _, k := range []string{"sizeBytes", "count", "type", "redop", "root", "outOfPlace", "inPlace"} {
			if _, ok := rows[0][k]; !ok {
				t.Errorf("rows[0] lacks %q", k)
			}
		}
		var half map[string]json.RawMessage
		_ = json.Unmarshal(rows[0]["outOfPlace"], &half)
		for _, k := range []string{"timeUs", "algbwGBps", "busbwGBps", "wrong"} {
			if _, ok := half[k]; !ok {
				t.Errorf("outOfPlace lacks %q", k)
			}
		}
	}
	if d, ok := r.(*DmesgReport); ok && len(d.XIDs) > 0 {
		var xids []map[string]json.RawMessage
		_ = json.Unmarshal(top["xids"], &xids)
		for _, k := range []string{"code", "busId", "count"} {
			if _, ok := xids[0][k]; !ok {
				t.Errorf("xids[0] lacks %q", k)
			}
		}
	}
}

// checkNoNullArrays walks the decoded JSON of a report and reports any key
// whose Go type is a slice (sliceKeys) but whose value is null.
func checkNoNullArrays(t *testing.T, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil && sliceKeys[k] {
				t.Errorf("%s.%s is null, want []", path, k)
			}
			checkNoNullArrays(t, path+"."+k, e)
		}
	case []any:
		for _, e := range x {
			checkNoNullArrays(t, path+"[]", e)
		}
	}
}

// sliceKeys are the JSON keys of slice-typed fields across all reports,
// read from the report types so that a new slice field is covered.
var sliceKeys = jsonSliceKeys(map[string]bool{}, map[reflect.Type]bool{},
	reflect.TypeOf(SMIReport{}), reflect.TypeOf(TopoReport{}), reflect.TypeOf(NCCLReport{}),
	reflect.TypeOf(CUDAReport{}), reflect.TypeOf(DCGMReport{}), reflect.TypeOf(DmesgReport{}),
	reflect.TypeOf(ComponentLogReport{}), reflect.TypeOf(NVMLReport{}))

func jsonSliceKeys(keys map[string]bool, seen map[reflect.Type]bool, types ...reflect.Type) map[string]bool {
	for _, typ := range types {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			continue
		}
		seen[typ] = true
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Type.Kind() == reflect.Slice && name != "" && name != "-" {
				keys[name] = true
			}
			jsonSliceKeys(keys, seen, f.Type)
		}
	}
	return keys
}

// The checks across two torchrun nodes (framework-multi's rank pods): each
// node's log is a whole result, the same for both nodes.
func init() {
	for _, node := range []string{"node0", "node1"} {
		corpusCases = append(corpusCases,
			corpusCase{"testdata/framework/cpu-gloo-2nodes-torch-1.13-ok-" + node + ".log", KindFramework, diag.ReportOK, nil, func(t *testing.T, rep Report) {
				r := rep.(*FrameworkReport)
				eq(t, "world", r.World, 2)
				eq(t, "local world", r.LocalWorld, 1)
				eq(t, "nodes", r.Nodes, 2)
				eq(t, "checks", len(r.Checks), 5)
				for _, c := range r.Checks {
					eq(t, c.Name+" ok", c.OK, true)
				}
			}},
			corpusCase{"testdata/framework/cpu-gloo-2nodes-torch-1.13-corrupt-checkpoint-" + node + ".log", KindFramework, diag.ReportFail, []string{"framework-checkpoint-failed"}, func(t *testing.T, rep Report) {
				r := rep.(*FrameworkReport)
				eq(t, "failed", strings.Join(r.Failed, ","), "checkpoint")
				eq(t, "nodes", r.Nodes, 2)
			}})
	}
}
