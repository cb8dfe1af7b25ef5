package accept

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// nvmlFixture reads a `gpuctl probe nvml -o json` report that the NVML
// prober produced on go-nvml's mock DGX servers (internal/probe testdata).
func nvmlFixture(t *testing.T, name string) []byte {
	t.Helper()
	return probeFixture(t, "nvml", name)
}

// TestJudgeInventoryNVML: the gpuctl-probe-nvml container's report gives
// the checks nvidia-smi's outputs give.
func TestJudgeInventoryNVML(t *testing.T) {
	h100 := string(nvmlFixture(t, "nvml-dgxh100-healthy.json"))
	faulty := string(nvmlFixture(t, "nvml-dgxh100-ecc-rowremap.json"))
	a100 := string(nvmlFixture(t, "nvml-dgxa100-healthy.json"))
	h100mock := Expectations{Source: "spec", GPUProduct: "NVIDIA-H100-80GB-HBM3", GPUCount: 8, DriverVersion: "550"}
	edit := func(s, old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("fixture has no %q", old)
		}
		return strings.Replace(s, old, new, 1)
	}
	nvmlOut := func(s string, code int32) StageOutput {
		return StageOutput{Logs: map[string][]byte{ContainerNVML: []byte(s)}, ExitCode: map[string]int32{ContainerNVML: code}}
	}
	for _, tc := range []struct {
		name    string
		out     StageOutput
		exp     Expectations
		verdict diag.Verdict
		reason  string
	}{
		{"h100 healthy", nvmlOut(h100, 0), h100mock, diag.Pass, "8 x NVIDIA H100 80GB HBM3, driver 550.54.15 (CUDA 12.4); ECC, retired pages and row remapping clean; 144 NVLinks active"},
		{"a100 healthy", nvmlOut(a100, 0), Expectations{Source: "spec", GPUCount: 8, GPUProduct: "A100-SXM4-40GB"}, diag.Pass, "96 NVLinks active"},
		{"ECC and row remap pending", nvmlOut(faulty, 3), h100mock, diag.Fail, "row remap is pending"},
		{"ECC", nvmlOut(faulty, 3), h100mock, diag.Fail, "2 uncorrectable ECC errors"},
		{"wrong driver", nvmlOut(h100, 0), Expectations{Source: "spec", DriverVersion: "535"}, diag.Fail, "driver 550.54.15, expected 535 (spec)"},
		{"driver older than the oldest accepted", nvmlOut(h100, 0), Expectations{Source: "spec", DriverMin: "550.90"}, diag.Fail, "driver 550.54.15 is older than 550.90, the oldest accepted (spec)"},
		{"driver at the oldest accepted", nvmlOut(h100, 0), Expectations{Source: "spec", DriverMin: "550.54.15"}, diag.Pass, ""},
		{"wrong count", nvmlOut(h100, 0), Expectations{Source: "spec", GPUCount: 16}, diag.Fail, "expected 16 GPUs (spec), NVML shows 8"},
		{"wrong product", nvmlOut(h100, 0), Expectations{Source: "spec", GPUProduct: "A100-SXM4-80GB"}, diag.Fail, `expected "A100-SXM4-80GB"`},
		{"NVLink inactive", nvmlOut(edit(h100, `"active": true`, `"active": false`), 0), h100mock, diag.Fail, "NVLink"},
		{"PCIe narrower under load", nvmlOut(edit(edit(h100, `"pcieWidthCurrent": 16`, `"pcieWidthCurrent": 8`), `"utilizationGPUPercent": 0`, `"utilizationGPUPercent": 100`), 0), h100mock, diag.Fail, "PCIe link at gen 5 x8 (max gen 5 x16)"},
		{"PCIe gen down when idle", nvmlOut(edit(h100, `"pcieGenCurrent": 5`, `"pcieGenCurrent": 1`), 0), h100mock, diag.Pass, ""},
		{"MIG enabled", nvmlOut(edit(h100, `"migMode": "Disabled"`, `"migMode": "Enabled"`), 0), h100mock, diag.Inconclusive, "MIG is enabled on GPU 0"},
		{"persistence off", nvmlOut(edit(h100, `"persistenceMode": "Enabled"`, `"persistenceMode": "Disabled"`), 0), h100mock, diag.Pass, "persistence mode disabled on GPU 0"},
		{"no NVML", nvmlOut("Error: NVML unavailable: nvmlInit: ERROR_LIBRARY_NOT_FOUND (is this a GPU node with the NVIDIA driver installed?)\n", 4), h100mock, diag.Inconclusive, "not a gpuctl probe nvml JSON report: Error: NVML unavailable: nvmlInit: ERROR_LIBRARY_NOT_FOUND"},
		{"truncated", nvmlOut(h100[:len(h100)/2], 0), h100mock, diag.Inconclusive, "not a gpuctl probe nvml JSON report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Judge(StageInventory, tc.out, tc.exp, DefaultBaselines(), ProbeParser(), &Observed{})
			if r.Verdict != tc.verdict || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("%s: %q, want %s containing %q", r.Verdict, r.Reason, tc.verdict, tc.reason)
			}
		})
	}
}

// TestJudgeInventoryNVMLFacts: the record's hardware facts come from the
// NVML report as from nvidia-smi.
func TestJudgeInventoryNVMLFacts(t *testing.T) {
	data := strings.Replace(string(nvmlFixture(t, "nvml-dgxh100-healthy.json")), `"inforomImage": ""`, `"inforomImage": "G520.0200.00.05"`, 1)
	obs := &Observed{}
	out := StageOutput{Logs: map[string][]byte{ContainerNVML: []byte(data)}, ExitCode: map[string]int32{ContainerNVML: 0}}
	r := Judge(StageInventory, out, Expectations{}, DefaultBaselines(), ProbeParser(), obs)
	if r.Verdict != diag.Pass {
		t.Fatalf("%s: %s", r.Verdict, r.Reason)
	}
	if obs.Driver != "550.54.15" || obs.DriverCUDA != "12.4" || obs.GPUCount != 8 || obs.GPUProduct != "NVIDIA H100 80GB HBM3" {
		t.Errorf("observed %q %q %d %q", obs.Driver, obs.DriverCUDA, obs.GPUCount, obs.GPUProduct)
	}
	g := obs.GPUs[0]
	if !strings.HasPrefix(g.UUID, "GPU-") || g.Serial == "" || g.VBIOS != "96.00.74.00.01" || g.InfoROMImage != "G520.0200.00.05" ||
		pcieLink(g) != "GPU 0: gen 5 16x" || g.MIGMode != "Disabled" || g.PersistenceMode != "Enabled" || len(g.NVLinks) != 18 {
		t.Errorf("GPU 0 facts %+v", g)
	}
	if r.Facts["driverVersion"] != "550.54.15" || r.Facts["gpuCount"] != "8" {
		t.Errorf("facts %v", r.Facts)
	}
}
