package accept

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// corpus reads a file of the corpus of real tool outputs in the
// repository's testdata.
func corpus(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func out(container string, data []byte) StageOutput {
	return StageOutput{Logs: map[string][]byte{container: data}, ExitCode: map[string]int32{container: 0}}
}

var h100x8 = Expectations{Source: "test", GPUProduct: "NVIDIA-H100-80GB-HBM3", GPUCount: 8}

// TestJudgeCorpus judges real outputs with the real parsers.
func TestJudgeCorpus(t *testing.T) {
	bl := DefaultBaselines()
	for _, tc := range []struct {
		name    string
		stage   Stage
		file    string
		exp     Expectations
		verdict diag.Verdict
		reason  string // a part of the reason, case-insensitive
	}{
		{"h100 -q healthy", StageInventory, "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt", h100x8, diag.Pass, "8 x NVIDIA H100 80GB HBM3, driver 535.161.08"},
		{"h100 -q other release healthy", StageInventory, "nvidia-smi/h100-80gb-hbm3-x8-q-535.183.01.txt", h100x8, diag.Pass, "driver 535.183.01"},
		{"h100 -q truncated", StageInventory, "nvidia-smi/h100-80gb-hbm3-x8-q-535.183.01-truncated-garbled.txt", h100x8, diag.Inconclusive, ""},
		{"a10 row remap pending", StageInventory, "nvidia-smi/a10-x1-q-535.129.03.txt", Expectations{GPUCount: 1}, diag.Fail, "remap"},
		{"wrong GPU count", StageInventory, "nvidia-smi/l4-x1-q-550.90.07.txt", Expectations{Source: "spec", GPUCount: 2}, diag.Fail, "expected 2 GPUs (spec), nvidia-smi shows 1"},
		{"wrong product", StageInventory, "nvidia-smi/l4-x1-q-550.90.07.txt", Expectations{Source: "spec", GPUProduct: "A100-SXM4-80GB"}, diag.Fail, "expected \"A100-SXM4-80GB\""},
		{"wrong driver", StageInventory, "nvidia-smi/l4-x1-q-550.90.07.txt", Expectations{Source: "spec", DriverVersion: "535"}, diag.Fail, "driver 550.90.07, expected 535"},
		{"driver branch matches", StageInventory, "nvidia-smi/l4-x1-q-550.90.07.txt", Expectations{Source: "spec", DriverVersion: "550"}, diag.Pass, ""},
		{"no driver", StageInventory, "failures/nvidia-smi-couldnt-communicate-with-driver.txt", h100x8, diag.Fail, ""},
		{"h100 topo NV18", StageTopology, "topo/h100-x8-8nic-sglang-checkenv-570.txt", h100x8, diag.Pass, "NV18 as expected for h100-sxm-x8"},
		{"a100 topo on an H100 node", StageTopology, "topo/a100-nv12-x8-18nic-numa8-spaces.txt", h100x8, diag.Fail, "expected NV18"},
		{"vectorAdd", StageCUDA, "cuda-samples/vectoradd-pass-cuda12.5.txt", Expectations{GPUCount: 1}, diag.Pass, ""},
		{"vectorAdd without driver", StageCUDA, "cuda-samples/vectoradd-fail-driver-insufficient.txt", Expectations{GPUCount: 1}, diag.Fail, "cannot use the node's driver"},
		{"h100 allreduce 2 GiB", StageNCCL, "nccl-tests/h100-x8-allreduce-g8-256M-2G-noindent-rows.txt", h100x8, diag.Pass, "meets the h100-sxm-x8 baseline"},
		{"a100 allreduce 4 GiB", StageNCCL, "nccl-tests/a100-sxm4-80gb-x8-allreduce-g8-4G.txt", Expectations{GPUProduct: "A100-SXM4-80GB", GPUCount: 8}, diag.Pass, "a100-sxm4-x8"},
		{"wrong values", StageNCCL, "nccl-tests/v100-sxm3-dgx2-x12-allgather-error-col-4-FAILED.txt", Expectations{GPUCount: 12}, diag.Fail, ""},
		{"shm error", StageNCCL, "nccl-tests/rtx2080ti-x4-unhandled-system-error-shm.txt", Expectations{GPUCount: 4}, diag.Inconclusive, ""},
		{"dcgm pass", StageDCGM, "dcgm/v100-pcie-x1-diag-r3-pass-dcgm3.3.9-driver560.txt", Expectations{}, diag.Pass, ""},
		{"dcgm fail", StageDCGM, "dcgm/h100-x8-diag-r3-cuinit-fail-dcgm3.3.8-driver560.txt", Expectations{}, diag.Fail, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := map[Stage]string{StageInventory: ContainerSMIQuery, StageTopology: ContainerSMITopo, StageCUDA: "vectoradd-0", StageNCCL: ContainerNCCL, StageDCGM: ContainerDCGM}[tc.stage]
			obs := &Observed{}
			r := Judge(tc.stage, out(c, corpus(t, tc.file)), tc.exp, bl, ProbeParser(), obs)
			if r.Verdict != tc.verdict || !strings.Contains(strings.ToLower(r.Reason), strings.ToLower(tc.reason)) {
				t.Errorf("%s: %q, want %s containing %q", r.Verdict, r.Reason, tc.verdict, tc.reason)
			}
		})
	}
}

// TestNCCLBelowBaseline is the acceptance case: 8x H100 SXM, all_reduce_perf
// busbw 250 GB/s at 8 GB fails against the H100 SXM baseline, naming it.
func TestNCCLBelowBaseline(t *testing.T) {
	text := `# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid      1 on     node-a device  0 [0x19] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid      1 on     node-a device  1 [0x3b] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid      1 on     node-a device  2 [0x4c] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid      1 on     node-a device  3 [0x5d] NVIDIA H100 80GB HBM3
#  Rank  4 Group  0 Pid      1 on     node-a device  4 [0x9b] NVIDIA H100 80GB HBM3
#  Rank  5 Group  0 Pid      1 on     node-a device  5 [0xbb] NVIDIA H100 80GB HBM3
#  Rank  6 Group  0 Pid      1 on     node-a device  6 [0xcb] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid      1 on     node-a device  7 [0xdb] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
  1073741824     268435456     float     sum      -1   7516.2  142.86  250.00      0   7516.9  142.84  249.98      0
  2147483648     536870912     float     sum      -1    15032  142.86  250.00      0    15033  142.85  249.99      0
  4294967296    1073741824     float     sum      -1    30064  142.86  250.00      0    30065  142.86  249.99      0
  8589934592    2147483648     float     sum      -1    60129  142.86  250.00      0    60130  142.85  249.99      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 249.995
#
`
	obs := &Observed{}
	r := Judge(StageNCCL, out(ContainerNCCL, []byte(text)), h100x8, DefaultBaselines(), ProbeParser(), obs)
	if r.Verdict != diag.Fail || !strings.Contains(r.Reason, "h100-sxm-x8") || !strings.Contains(r.Reason, "250.0 GB/s at 8 GiB") {
		t.Fatalf("%s: %s", r.Verdict, r.Reason)
	}
	if obs.Baseline == nil || obs.Baseline.SKU != "h100-sxm-x8" {
		t.Errorf("baseline used: %+v", obs.Baseline)
	}
}

func TestJudgeHarnessAndExitCodes(t *testing.T) {
	r := Judge(StageInventory, StageOutput{Harness: "image pull failed for x (ErrImagePull): nope"}, h100x8, nil, ProbeParser(), &Observed{})
	if r.Verdict != diag.Inconclusive || !strings.Contains(r.Reason, "image pull failed") {
		t.Errorf("%s: %s", r.Verdict, r.Reason)
	}
	o := out(ContainerSMIQuery, nil)
	o.ExitCode[ContainerSMIQuery] = 127
	o.Message = map[string]string{ContainerSMIQuery: "exec: nvidia-smi: not found"}
	r = Judge(StageInventory, o, h100x8, nil, ProbeParser(), &Observed{})
	if r.Verdict != diag.Inconclusive || !strings.Contains(r.Reason, "exit code 127") {
		t.Errorf("%s: %s", r.Verdict, r.Reason)
	}
}

func TestBaselines(t *testing.T) {
	b := DefaultBaselines()
	if got := b.Lookup("NVIDIA-H100-80GB-HBM3", 8); got == nil || got.SKU != "h100-sxm-x8" || got.GPULink != "NV18" {
		t.Errorf("H100 x8: %+v", got)
	}
	if got := b.Lookup("NVIDIA H100 80GB HBM3", 4); got != nil {
		t.Errorf("H100 x4 matched %s", got.SKU)
	}
	// L4 has no published figure: its entry says so (no minimum).
	if got := b.Lookup("NVIDIA L4", 1); got == nil || got.SKU != "l4" || got.NoFigure == "" || got.MinBusBandwidthGBps != 0 {
		t.Errorf("L4: %+v", got)
	}
	if got := b.Lookup("NVIDIA A100-PCIE-40GB", 4); got != nil {
		t.Errorf("A100 PCIe x4 matched %s", got.SKU)
	}
	// One copy of the facts: the embedded set is matrix's. The minimum is 90%
	// of the RING figure; NVLS's is the informative expected value.
	h := b.Lookup("NVIDIA H100 80GB HBM3", 8)
	if h == nil || h.MinBusBandwidthGBps != 333 || h.MinAlgo != "RING" || h.ExpectedBusBandwidthGBps != 450 || h.ExpectedAlgo != "NVLS" || h.GPU != "H100-SXM" ||
		h.ExpectedBusBW != "~450-480 GB/s with NVLS (default), ~370 GB/s with NCCL_ALGO=RING" || b.AsOf != "2026-11-29" || b.Origin != "embedded" {
		t.Errorf("H100 x8 baseline: %+v (set as of %s, %s)", h, b.AsOf, b.Origin)
	}
	if m, ok := matrix.NCCLBaseline("H100-SXM-8"); !ok || m.AcceptanceMinBusBandwidthGBps != h.MinBusBandwidthGBps {
		t.Errorf("matrix says %+v, accept %v", m, h.MinBusBandwidthGBps)
	}
	if a := b.Lookup("NVIDIA A100-SXM4-80GB", 8); a == nil || a.SKU != "a100-sxm4-x8" || b.Lookup("NVIDIA A100-PCIE-40GB", 8) != nil {
		t.Errorf("A100 SXM4 x8: %+v; PCIe must not match", a)
	}
	// --baselines FILE keeps today's format.
	f := filepath.Join(t.TempDir(), "b.yaml")
	if err := os.WriteFile(f, []byte(`formatVersion: "1"
as_of: "2026-01-01"
baselines:
- sku: l4-x1
  gpu_match: ["L4"]
  gpus: 1
  expected_busbw: "n/a"
  min_busbw_gbps: 1
  min_bytes: 1073741824
  confidence: low
  sources: [https://example.com/l4]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	fb, err := LoadBaselines(f)
	if err != nil || fb.Lookup("NVIDIA L4", 1) == nil || fb.Origin != f || fb.AsOf != "2026-01-01" {
		t.Errorf("LoadBaselines: %+v, %v", fb, err)
	}
	for _, bl := range b.Baselines {
		for _, s := range bl.Sources {
			if !strings.HasPrefix(s, "https://") {
				t.Errorf("%s: source %q", bl.SKU, s)
			}
		}
	}
	if _, err := parseBaselines([]byte("formatVersion: \"1\"\nbaselines:\n- sku: x\n"), "t"); err == nil {
		t.Error("incomplete baseline accepted")
	}
}

func TestImages(t *testing.T) {
	if img, _ := ChooseImage(StageCUDA, "", "12.2"); img.CUDA != "11.7" {
		t.Errorf("cuda image on 12.2: %+v", img)
	}
	if img, _ := ChooseImage(StageCUDA, "", "12.8"); img.CUDA != "12.5" {
		t.Errorf("cuda image on 12.8: %+v", img)
	}
	img, _ := ChooseImage(StageCUDA, "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04", "12.2")
	if err := CheckImageCUDA(img, "12.2"); err == nil {
		t.Error("a CUDA 12.5 image on a CUDA 12.2 driver passes the check")
	}
	for ref, want := range map[string]string{"nvidia/cuda:12.4.1-base-ubuntu22.04": "12.4", "x/y:vectoradd-cuda11.7.1": "11.7", "localhost:5000/probe:v1": "", "nvcr.io/nvidia/pytorch:24.05-py3": ""} {
		if got := ImageCUDA(ref); got != want {
			t.Errorf("ImageCUDA(%s) = %q, want %q", ref, got, want)
		}
	}
	if CompareVersions("535.161.08", "535.54.03") <= 0 || CompareVersions("12.10", "12.9") <= 0 {
		t.Error("CompareVersions")
	}
}

func TestProductMatches(t *testing.T) {
	for _, tc := range []struct {
		exp, obs string
		want     bool
	}{
		{"H100", "NVIDIA H100 80GB HBM3", true},
		{"nvidia-h100-80gb", "NVIDIA H100 80GB HBM3", true},
		{"NVIDIA-H100-80GB-HBM3", "NVIDIA H100 80GB HBM3", true},
		{"nvidia-tesla-a100", "NVIDIA A100-SXM4-40GB", true},
		{"L4", "NVIDIA L40", false},
		{"A100-SXM4-80GB", "NVIDIA L4", false},
		{"", "NVIDIA L4", false},
	} {
		if got := ProductMatches(tc.exp, tc.obs); got != tc.want {
			t.Errorf("ProductMatches(%q, %q) = %v", tc.exp, tc.obs, got)
		}
	}
}

func TestProductMatchesAndCatalogue(t *testing.T) {
	if !ProductMatches("nvidia-h100-80gb", "NVIDIA H100 80GB HBM3") || !ProductMatches("H100-SXM", "NVIDIA H100 80GB HBM3") || ProductMatches("A100-80GB", "NVIDIA H100 80GB HBM3") {
		t.Error("ProductMatches")
	}
	p, n, ok := MatrixCatalogue.LookupMachine("a3-highgpu-8g")
	if !ok || n != 8 || !ProductMatches(p, "NVIDIA H100 80GB HBM3") {
		t.Errorf("a3-highgpu-8g: %q %d %v", p, n, ok)
	}
	if _, _, ok := MatrixCatalogue.LookupMachine("n2-standard-8"); ok {
		t.Error("a machine without GPUs")
	}
}

func TestSpecExpectations(t *testing.T) {
	doc, err := spec.Load(filepath.Join("..", "..", "examples", "gke-h100-l4.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SpecExpectations(doc, "", "", MatrixCatalogue); err == nil || !strings.Contains(err.Error(), "choose one with --pool") {
		t.Errorf("two pools without --pool: %v", err)
	}
	e, err := SpecExpectations(doc, "dev", "train-h100", MatrixCatalogue)
	if err != nil {
		t.Fatal(err)
	}
	if e.GPUCount != 8 || !ProductMatches(e.GPUProduct, "NVIDIA H100 80GB HBM3") || e.DriverVersion != "" || len(e.Taints) != 1 || !strings.Contains(e.Source, "env dev, pool train-h100") {
		t.Errorf("%+v", e)
	}
	if _, err := SpecExpectations(doc, "", "nope", nil); err == nil {
		t.Error("unknown pool")
	}
}

// probeFixture reads a file of internal/probe's testdata/DIR.
func probeFixture(t *testing.T, dir, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "probe", "testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	return probeFixture(t, "nvidia-smi", name)
}

// TestJudgeInventoryListAndNVLink judges the three inventory outputs
// together: -q, -L and nvlink -s, with the real parsers.
func TestJudgeInventoryListAndNVLink(t *testing.T) {
	query := corpus(t, "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt")
	list := testdata(t, "list-L-h100-80gb-hbm3-x8.txt")
	nvlink := testdata(t, "nvlink-s-h100-80gb-hbm3-x8-550.90.07.txt")
	inv := func(q, l, nv []byte) StageOutput {
		return StageOutput{Logs: map[string][]byte{ContainerSMIQuery: q, ContainerSMIList: l, ContainerSMINVLink: nv},
			ExitCode: map[string]int32{ContainerSMIQuery: 0, ContainerSMIList: 0, ContainerSMINVLink: 0}}
	}
	// GPU 2 link 7 down: the real capture with one link edited.
	var oneDown []byte
	if i := strings.Index(string(nvlink), "GPU 2:"); i >= 0 {
		j := i + strings.Index(string(nvlink[i:]), "Link 7: 26.562 GB/s")
		oneDown = append(append(append([]byte{}, nvlink[:j]...), []byte("Link 7: <inactive>")...), nvlink[j+len("Link 7: 26.562 GB/s"):]...)
	}
	allDown := []byte(strings.ReplaceAll(string(nvlink), "26.562 GB/s", "<inactive>"))
	sevenGPUs := []byte(strings.Join(strings.SplitAfter(string(list), "\n")[:7], ""))
	l4 := corpus(t, "nvidia-smi/l4-x1-q-550.90.07.txt")
	l4x1 := Expectations{Source: "spec", GPUCount: 1}
	for _, tc := range []struct {
		name    string
		out     StageOutput
		exp     Expectations
		verdict diag.Verdict
		reason  string
	}{
		{"healthy", inv(query, list, nvlink), h100x8, diag.Pass, "144 NVLinks active"},
		{"-L shows 7 GPUs", inv(query, sevenGPUs, nvlink), h100x8, diag.Fail, "expected 8 GPUs, nvidia-smi -L lists 7"},
		{"one link inactive", inv(query, list, oneDown), h100x8, diag.Fail, "GPU GPU-20a2005b-2297-26f5-b9d1-03b1a7f0a657: 1 of 18 NVLinks are inactive (links 7)"},
		{"all links inactive on an NVLink SKU", inv(query, list, allDown), h100x8, diag.Fail, "GPU 0: NVLink 0, 1, 2"},
		{"nvlink empty on an NVLink SKU", inv(query, list, []byte("")), h100x8, diag.Inconclusive, "nvlink -s printed nothing, but h100-sxm-x8 has NVLink"},
		{"nvlink garbled", inv(query, list, []byte("Segmentation fault\nxx yy\n")), h100x8, diag.Inconclusive, "nvidia-smi-nvlink"},
		{"-L empty", inv(query, nil, nvlink), h100x8, diag.Inconclusive, "nvidia-smi-list: empty output"},
		{"nvlink empty without NVLink", inv(l4, []byte("GPU 0: NVIDIA L4 (UUID: GPU-00000000-0000-0000-0000-000000000001)\n"), nil), l4x1, diag.Pass, "nvidia-smi nvlink -s printed nothing (l4 has no NVLink)"},
		{"-L and nvlink empty", inv(query, nil, nil), h100x8, diag.Inconclusive, "nvidia-smi-list: empty output; nvidia-smi-nvlink: empty output (nvidia-smi nvlink -s printed nothing), so NVLink was not checked"},
		{"GPU line without links, no NVLink SKU", inv(l4, []byte("GPU 0: NVIDIA L4 (UUID: GPU-00000000-0000-0000-0000-000000000001)\n"), []byte("GPU 0: NVIDIA L4 (UUID: GPU-00000000-0000-0000-0000-000000000001)\n")), l4x1, diag.Pass, "nvlink -s shows no NVLinks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Judge(StageInventory, tc.out, tc.exp, DefaultBaselines(), ProbeParser(), &Observed{})
			if r.Verdict != tc.verdict || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("%s: %q, want %s containing %q", r.Verdict, r.Reason, tc.verdict, tc.reason)
			}
		})
	}
	// No baseline says whether the SKU has NVLink: an empty nvlink -s
	// passes as before, and the reason says NVLink was not checked.
	r := Judge(StageInventory, inv(l4, []byte("GPU 0: NVIDIA L4 (UUID: GPU-00000000-0000-0000-0000-000000000001)\n"), nil), l4x1, nil, ProbeParser(), &Observed{})
	if r.Verdict != diag.Pass || !strings.Contains(r.Reason, "nvidia-smi nvlink -s printed nothing, so NVLink was not checked") {
		t.Errorf("without a baseline: %s %q", r.Verdict, r.Reason)
	}
}

// TestJudgeInventoryPersistenceDisabled: persistence mode off is a warning
// in gpuHealth and the reason, not a failure.
func TestJudgeInventoryPersistenceDisabled(t *testing.T) {
	q := strings.Replace(string(corpus(t, "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt")), "Persistence Mode                      : Enabled", "Persistence Mode                      : Disabled", 1)
	obs := &Observed{}
	r := Judge(StageInventory, out(ContainerSMIQuery, []byte(q)), h100x8, DefaultBaselines(), ProbeParser(), obs)
	if r.Verdict != diag.Pass || !strings.Contains(r.Reason, "persistence mode disabled on GPU 0") || !strings.Contains(r.Reason, "warning(s) recorded in gpuHealth") {
		t.Fatalf("%s: %s", r.Verdict, r.Reason)
	}
	found := false
	for _, f := range obs.Findings {
		if f.Rule == "persistence-disabled" && f.Severity == "warning" && f.GPU == "00000000:19:00.0" {
			found = true
		}
	}
	if !found {
		t.Errorf("findings %+v", obs.Findings)
	}
	if obs.GPUs[0].InfoROMImage != "G520.0200.00.05" {
		t.Errorf("inforom %q", obs.GPUs[0].InfoROMImage)
	}
}

// TestSpecExpectationsSeveralInstanceTypes: a pool of several instance
// types of different GPU counts expects, on each node, the GPU count of
// that node's own instance type.
func TestSpecExpectationsSeveralInstanceTypes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "karpenter.yaml")
	src := `apiVersion: gpuctl.dev/v1alpha1
kind: ClusterSpec
metadata: {name: inference}
spec:
  provider: eks
  kubernetesVersion: "1.33"
  region: us-east-1
  nodePools:
    - name: l4
      instanceTypes: [g6.xlarge, g6.12xlarge]
      osImage: AL2023_x86_64_NVIDIA
      autoscaling: {min: 0, max: 4}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := spec.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := SpecExpectations(doc, "", "l4", MatrixCatalogue)
	if err != nil {
		t.Fatal(err)
	}
	if e.GPUCount != 0 || !ProductMatches(e.GPUProduct, "NVIDIA L4") {
		t.Fatalf("the pool fixes no GPU count and the L4 product: %+v", e)
	}
	for it, want := range map[string]int{"g6.xlarge": 1, "g6.12xlarge": 4} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: it, Labels: map[string]string{"node.kubernetes.io/instance-type": it}}}
		got := planExpectations(Plan{Expect: &e, Catalogue: MatrixCatalogue}, node)
		if got.GPUCount != want || got.InstanceType != it {
			t.Errorf("%s: expected %d GPUs of instance type %s, got %+v", it, want, it, got)
		}
	}
}

// A SKU whose data says no public figure exists is not judged against an
// invented number: the nccl stage is INCONCLUSIVE and names why; B200,
// GB200 and H200 have their published figures.
func TestNCCLNoPublishedFigure(t *testing.T) {
	b := DefaultBaselines()
	for _, tc := range []struct {
		product string
		gpus    int
		sku     string
		min     float64
	}{
		{"NVIDIA A10G", 4, "a10g", 0}, {"NVIDIA A10G", 8, "a10g", 0}, {"NVIDIA L4", 1, "l4", 0}, {"NVIDIA-L40S", 8, "l40s", 0},
		{"NVIDIA B200", 8, "b200-x8", 747}, {"NVIDIA GB200", 4, "gb200-x4", 582}, {"NVIDIA H200", 8, "h200-sxm-x8", 333},
		{"NVIDIA H100 80GB HBM3", 8, "h100-sxm-x8", 333}, // also a3-megagpu-8g's GPU
	} {
		got := b.Lookup(tc.product, tc.gpus)
		if got == nil || got.SKU != tc.sku || got.MinBusBandwidthGBps != tc.min || (tc.min == 0) != (got.NoFigure != "") || len(got.Sources) == 0 {
			t.Errorf("Lookup(%s, %d) = %+v, want %s minimum %v", tc.product, tc.gpus, got, tc.sku, tc.min)
		}
	}
	text := `# nThread 1 nGpus 4 minBytes 1073741824 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid      1 on     node-a device  0 [0x1b] NVIDIA A10G
#  Rank  1 Group  0 Pid      1 on     node-a device  1 [0x1c] NVIDIA A10G
#  Rank  2 Group  0 Pid      1 on     node-a device  2 [0x1d] NVIDIA A10G
#  Rank  3 Group  0 Pid      1 on     node-a device  3 [0x1e] NVIDIA A10G
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
  1073741824     268435456     float     sum      -1    89478   12.00   18.00      0    89480   12.00   18.00      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 18.000
#
`
	r := Judge(StageNCCL, out(ContainerNCCL, []byte(text)), Expectations{GPUProduct: "NVIDIA-A10G", GPUCount: 4}, b, ProbeParser(), &Observed{})
	if r.Verdict != diag.Inconclusive || !strings.Contains(r.Reason, "no baseline for a10g: no published large-message all_reduce_perf busbw") || r.Facts["baseline"] != "a10g" {
		t.Errorf("A10G x4: %s %q", r.Verdict, r.Reason)
	}
}

// A dcgmi diag run in which only the Deployment checks ran (every GPU test
// skipped) tested nothing of the GPUs: the stage is INCONCLUSIVE, the
// harness's (the diagnostic was not able to run its tests), not a PASS.
func TestJudgeDCGMNotExercised(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "probe", "testdata", "dcgm", "diag-r3-rtx-pro-6000-bw-x2-only-deployment-ran-dcgm3.3.9-570.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := Judge(StageDCGM, out(ContainerDCGM, data), Expectations{}, DefaultBaselines(), ProbeParser(), &Observed{})
	if r.Verdict != diag.Inconclusive || r.Cause != CauseHarness || !strings.Contains(r.Reason, "not exercised") {
		t.Errorf("%s (cause %q): %q, want INCONCLUSIVE (harness) saying the GPUs were not exercised", r.Verdict, r.Cause, r.Reason)
	}
}

// TestCutInventoryKeepsAttachedCount: a -q cut after its first GPU block
// (Attached GPUs 8, one GPU described; a real H100 output) is INCONCLUSIVE,
// and the topology stage after it judges the node's real 8x H100 matrix
// against the 8 GPUs attached, not the one the cut output kept.
func TestCutInventoryKeepsAttachedCount(t *testing.T) {
	bl, obs := DefaultBaselines(), &Observed{}
	inv := Judge(StageInventory, out(ContainerSMIQuery, corpus(t, "nvidia-smi/h100-80gb-hbm3-x8-q-535.183.01-truncated-garbled.txt")), Expectations{}, bl, ProbeParser(), obs)
	if inv.Verdict != diag.Inconclusive {
		t.Fatalf("inventory %s: %s", inv.Verdict, inv.Reason)
	}
	if obs.AttachedGPUs != 8 {
		t.Fatalf("attached GPUs %d, want 8", obs.AttachedGPUs)
	}
	topo := Judge(StageTopology, out(ContainerSMITopo, corpus(t, "topo/h100-x8-8nic-sglang-checkenv-570.txt")), Expectations{}, bl, ProbeParser(), obs)
	if topo.Verdict == diag.Fail && strings.Contains(topo.Reason, "expected 1") {
		t.Errorf("topology judged against the cut inventory's count: %s", topo.Reason)
	}
	if topo.Verdict != diag.Pass {
		t.Errorf("topology %s: %s, want PASS for the real 8x H100 matrix", topo.Verdict, topo.Reason)
	}
}
