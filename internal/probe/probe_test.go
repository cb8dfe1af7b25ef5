package probe

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// The inputs in this file are synthetic: small variations of real outputs
// that the corpus does not have, each labelled with what it varies.

func TestDetectErrors(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":   nil,
		"blank":   []byte("  \n\t\n"),
		"garbage": []byte("hello world\nthis is not the output of any GPU tool\n"),
		"binary":  {0x00, 0x01, 0xff, 0xfe, 0x7f},
	} {
		if _, err := Detect(data); !errors.Is(err, ErrUnrecognized) {
			t.Errorf("%s: err = %v, want ErrUnrecognized", name, err)
		}
		if _, err := Parse(KindAuto, data); !errors.Is(err, ErrUnrecognized) {
			t.Errorf("%s: Parse err = %v", name, err)
		}
	}
	big := bytes.Repeat([]byte("x"), MaxInputBytes+1)
	if _, err := Detect(big); !errors.Is(err, ErrInputTooLarge) {
		t.Errorf("too large: %v", err)
	}
	if _, err := Parse(KindTopo, big); !errors.Is(err, ErrInputTooLarge) {
		t.Errorf("too large: %v", err)
	}
	if _, err := Parse("gpu-burn", []byte("x")); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := ReadLimited(bytes.NewReader(big)); !errors.Is(err, ErrInputTooLarge) {
		t.Errorf("ReadLimited: %v", err)
	}
	if data, err := ReadLimited(strings.NewReader("abc")); err != nil || string(data) != "abc" {
		t.Errorf("ReadLimited = %q, %v", data, err)
	}
}

// Parsing with an explicit kind that does not fit is no error: the report
// says the input could not be judged.
func TestParseWrongKindIsUnknown(t *testing.T) {
	topo := readFile(t, source("topo/l40-x4-2nic-tabs-570.txt"))
	for _, k := range []Kind{KindNvidiaSMI, KindNCCL, KindCUDA, KindDCGM, KindDmesg, KindComponentLog} {
		r, err := Parse(k, topo)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if r.Common().Verdict != diag.ReportUnknown {
			t.Errorf("%s on topo output: verdict %s, findings %v", k, r.Common().Verdict, rules(r.Common()))
		}
		if r.Common().Kind != k {
			t.Errorf("kind %s, want %s", r.Common().Kind, k)
		}
	}
}

// A table whose bus IDs have a non-zero PCI domain (as on GH200 and some
// cloud VMs), with an ERR! cell. Variation of the corpus' 550.90.07 table.
const tableNonZeroDomainErr = `+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA GH200 480GB             On  |   00000009:01:00.0 Off |                    0 |
| N/A   33C    P0             90W /  900W |       1MiB /  97871MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA GH200 480GB             On  |   00000019:01:00.0 Off |                 ERR! |
| N/A   ERR!   P0            ERR! /  900W |       1MiB /  97871MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|  No running processes found                                                             |
+-----------------------------------------------------------------------------------------+
`

func TestTableNonZeroDomainAndErr(t *testing.T) {
	r := ParseNvidiaSMI([]byte(tableNonZeroDomainErr))
	eqSlice(t, "buses", busIDs(r), []string{"00000009:01:00.0", "00000019:01:00.0"})
	eq(t, "verdict", r.Verdict, diag.ReportFail)
	if findingFor(&r.Header, "gpu-err", "00000019:01:00.0") == nil {
		t.Errorf("no gpu-err finding: %v", rules(&r.Header))
	}
	eqp(t, "GPU 0 total", r.GPUs[0].MemoryTotalMiB, 97871)
}

// --format=csv (with units), in the shape nvidia-smi prints: units in the
// header and after every value, [N/A] for unreadable values.
const csvWithUnits = `index, name, pci.bus_id, memory.total [MiB], memory.used [MiB], utilization.gpu [%], temperature.gpu, power.draw [W], pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max, ecc.errors.uncorrected.volatile.total, retired_pages.pending
0, Tesla P100-PCIE-16GB, 00000000:08:00.0, 16280 MiB, 1628 MiB, 10 %, 25, 24.80 W, 3, 3, 16, 16, 0, No
1, Tesla P100-PCIE-16GB, 00000000:0B:00.0, 16280 MiB, 3256 MiB, 95 %, 25, 245.05 W, 3, 3, 8, 16, 0, No
2, Tesla P100-PCIE-16GB, 00000000:0E:00.0, 16280 MiB, 1628 MiB, 20 %, 24, [N/A], 1, 3, 16, 16, 2, Yes
`

func TestCSVWithUnitsAndPCIeUnderLoad(t *testing.T) {
	if k, err := Detect([]byte(csvWithUnits)); err != nil || k != KindNvidiaSMI {
		t.Fatalf("Detect = %s, %v", k, err)
	}
	r := ParseNvidiaSMI([]byte(csvWithUnits))
	eq(t, "format", r.Format, "csv")
	eq(t, "gpus", len(r.GPUs), 3)
	g := r.GPUs[1]
	eqp(t, "total", g.MemoryTotalMiB, 16280)
	eqp(t, "util", g.UtilizationGPUPercent, 95)
	eqp(t, "power", g.PowerDrawW, 245.05)
	isNil(t, "[N/A] power", r.GPUs[2].PowerDrawW)
	eq(t, "verdict", r.Verdict, diag.ReportFail)
	for _, want := range []struct{ rule, gpu string }{
		{"pcie-width-degraded", "00000000:0B:00.0"}, // x8 of x16 at 95 %
		{"pcie-gen-degraded", "00000000:0E:00.0"},   // gen 1 of 3 at 20 %
		{"ecc-uncorrectable", "00000000:0E:00.0"},
		{"retired-pages-pending", "00000000:0E:00.0"},
	} {
		if findingFor(&r.Header, want.rule, want.gpu) == nil {
			t.Errorf("no %s for %s: %v", want.rule, want.gpu, rules(&r.Header))
		}
	}
}

// Without its header a CSV cannot be mapped to fields.
func TestCSVWithoutHeaderIsNotRecognised(t *testing.T) {
	// nvidia-smi --query-gpu=...  --format=csv,noheader,nounits, as pasted in
	// https://github.com/Ricks-Lab/gpu-utils/issues/83
	data := []byte("200.00, 105.00, 292.00, 7979, 90.04.23.00.5F, 440.64, GeForce RTX 2080, GPU-00000000-0000-0000-0000-000000000001, 176.98, 45, N/A, 1965, 1965, 7199, 86, 55, 100, 8, P2\n")
	if _, err := Detect(data); !errors.Is(err, ErrUnrecognized) {
		t.Errorf("Detect: %v", err)
	}
	if r := ParseNvidiaSMI(data); r.Verdict != diag.ReportUnknown {
		t.Errorf("verdict %s", r.Verdict)
	}
}

// A single-rank run: busbw is 0 by definition, which is no measurement.
// Variation of the corpus' h100 all_reduce output with one rank.
const ncclSingleRank = `# nThread 1 nGpus 1 minBytes 268435456 maxBytes 536870912 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 1623025 on    host device  0 [0x1b] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
   268435456      67108864     float     sum      -1    85.44  3141.8    0.00      0     0.51  526344    0.00      0
   536870912     134217728     float     sum      -1    161.2  3330.5    0.00      0     0.51  1052688    0.00      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0
#
`

func TestNCCLSingleRankIsUnknown(t *testing.T) {
	r := ParseNCCL([]byte(ncclSingleRank))
	eq(t, "ranks", r.Ranks, 1)
	eq(t, "verdict", r.Verdict, diag.ReportUnknown)
	if !hasRule(&r.Header, "nccl-single-rank") {
		t.Errorf("findings %v", rules(&r.Header))
	}
	if hasRule(&r.Header, "nccl-busbw") {
		t.Errorf("a single-rank run must not report a bandwidth result")
	}
}

// TestNCCLSingleRankBlankRedopNamesNoCollective: a one-rank table whose
// redop cells are blank (alltoall before nccl-tests printed "none" there,
// hypercube today) cannot be told apart from the other rootless
// collectives; the report says so instead of guessing.
func TestNCCLSingleRankBlankRedopNamesNoCollective(t *testing.T) {
	blank := strings.ReplaceAll(ncclSingleRank, "     float     sum      -1", "     float              -1")
	r := ParseNCCL([]byte(blank))
	eq(t, "rows", len(r.Rows), 2)
	eq(t, "collective", r.Collective, "")
	eq(t, "verdict", r.Verdict, diag.ReportUnknown)
	found := false
	for _, f := range r.Header.Findings {
		if f.Rule == "nccl-collective-unknown" {
			found = strings.Contains(f.Message, "with one rank")
		}
	}
	if !found {
		t.Errorf("want an nccl-collective-unknown finding with the one-rank reason, got %v", rules(&r.Header))
	}
	named := ParseNCCL([]byte("# Collective test starting: alltoall_perf\n" + blank))
	eq(t, "named collective", named.Collective, "alltoall_perf")
	if hasRule(&named.Header, "nccl-collective-unknown") {
		t.Errorf("a named collective needs no note")
	}
}

func TestNCCLWrongCountFails(t *testing.T) {
	data := strings.Replace(readString(t, "nccl-tests/h100-x8-allreduce-g8-256M-2G-noindent-rows.txt"),
		"470.73      0   7985.2", "470.73     17   7985.2", 1)
	r := ParseNCCL([]byte(data))
	eq(t, "verdict", r.Verdict, diag.ReportFail)
	if !hasRule(&r.Header, "nccl-wrong-results") {
		t.Errorf("findings %v", rules(&r.Header))
	}
}

func TestNCCLJSONTruncatedIsUnknown(t *testing.T) {
	data := readFile(t, source("testdata/nccl/allreduce-json-v2-gh200.json"))
	r := ParseNCCL(data[:len(data)*2/3])
	eq(t, "format", r.Format, "json")
	eq(t, "verdict", r.Verdict, diag.ReportUnknown)
}

func readString(t *testing.T, name string) string { return string(readFile(t, source(name))) }

// Truncated output is never ok: cutting a healthy output short must make the
// verdict unknown wherever the format lets a parser notice (not for
// line-oriented lists and logs, where any prefix is itself a valid output).
func TestTruncatedIsNeverOK(t *testing.T) {
	judged := 0
	for _, c := range []struct {
		file string
		cuts []float64
	}{
		{"nvidia-smi/t4-x1-v11-515.xml", []float64{0.1, 0.5, 0.9, 0.99}},
		{"nvidia-smi/rtx4000-sff-ada-x1-v13.xml", []float64{0.3, 0.7}},
		{"nvidia-smi/h100-nvl-x2-q.txt", []float64{0.1, 0.3, 0.6, 0.9}},
		{"nvidia-smi/l4-x1-q-550.90.07.txt", []float64{0.3, 0.8, 0.97}},
		{"nvidia-smi/h100-80gb-hbm3-x8-summary-table-550.90.07.txt", []float64{0.3, 0.6, 0.85}},
		{"nccl-tests/a100-sxm4-80gb-x8-allreduce-g8-4G.txt", []float64{0.2, 0.5, 0.9}},
		{"nccl-tests/gh200-2node-allreduce-v2.18.2.txt", []float64{0.3, 0.7}},
		{"dcgm/v100-pcie-x1-diag-r3-pass-dcgm3.3.9-driver560.txt", []float64{0.2, 0.5, 0.95}},
		{"dcgm/nvvs-json-dcgm3.1.0-x8-pass-warning-prefix-nulls.txt", []float64{0.5, 0.99}},
		{"cuda-samples/deviceQuery-a100-sxm4-80gb-x4.txt", []float64{0.2, 0.5, 0.95}},
		{"cuda-samples/vectoradd-pass-cuda12.5.txt", []float64{0.3, 0.7}},
		{"topo/a100-nv12-x8-18nic-numa8-spaces.txt", []float64{0.1, 0.3}},
		{"topo/l40-x4-2nic-tabs-570.txt", []float64{0.1, 0.2}},
	} {
		data := readFile(t, source(c.file))
		for _, f := range c.cuts {
			cut := data[:int(float64(len(data))*f)]
			r, err := Parse(KindAuto, cut)
			if err != nil {
				continue // too short to recognise at all: not ok either
			}
			judged++
			if v := r.Common().Verdict; v == diag.ReportOK {
				t.Errorf("%s cut at %.0f%%: verdict ok; findings %v", c.file, f*100, rules(r.Common()))
			}
		}
	}
	if judged < 30 {
		t.Errorf("only %d cuts were recognised at all", judged)
	}
}

func TestXIDCatalogue(t *testing.T) {
	for _, code := range []int{13, 31, 43, 45} {
		x, ok := LookupXID(code)
		if !ok || x.Class != XIDApplication || x.NodeProblem() {
			t.Errorf("XID %d = %+v, want an application fault", code, x)
		}
	}
	for _, code := range []int{48, 63, 64, 74, 79, 92, 94, 95, 119, 120} {
		x, ok := LookupXID(code)
		if !ok || !x.NodeProblem() {
			t.Errorf("XID %d = %+v, want a node problem", code, x)
		}
	}
	all := XIDCatalogue()
	for i := range all {
		if all[i].Mnemonic == "" || all[i].Description == "" || all[i].NVIDIAAction == "" {
			t.Errorf("incomplete entry %+v", all[i])
		}
		if i > 0 && all[i-1].Code >= all[i].Code {
			t.Errorf("not ordered at %d", all[i].Code)
		}
	}
	if _, ok := LookupXID(9999); ok {
		t.Error("XID 9999 found")
	}
}

func TestDmesgUncatalogued154AndOldXIDFormat(t *testing.T) {
	// Synthetic lines in the driver's formats: XID 154 names the recovery
	// action; R390-era drivers printed the bus ID without "PCI:"; XID 1234
	// is not in the catalogue.
	log := `[  100.000001] NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)
[  100.000002] NVRM: Xid (0000:3c:00): 31, Ch 00000010, intr 10000000. MMU Fault
[  100.000003] NVRM: Xid (PCI:0000:3d:00): 1234, something new
`
	r := ParseDmesg([]byte(log))
	eq(t, "verdict", r.Verdict, diag.ReportFail)
	if findingFor(&r.Header, "xid-reset", "0000:3b:00") == nil {
		t.Errorf("154 reset: %v", rules(&r.Header))
	}
	if x := xid(r, 31, "0000:3c:00"); x == nil || x.Class != XIDApplication {
		t.Errorf("old format XID 31: %+v", r.XIDs)
	}
	if findingFor(&r.Header, "xid-uncatalogued", "0000:3d:00") == nil {
		t.Errorf("uncatalogued: %v", rules(&r.Header))
	}
}

func TestParseCPUList(t *testing.T) {
	got, err := ParseCPUList("0-2,8,10-11")
	eqSlice(t, "cpus", got, []int{0, 1, 2, 8, 10, 11})
	if err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", "N/A", "3-1", "a-b", "0-99999999"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestFindFailureForms(t *testing.T) {
	for line, kind := range map[string]string{
		"Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU":      FailureGPULost,
		"NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is": FailureNVMLNotFound,
		"Failed to initialize NVML: Unknown Error":                                                                                          FailureNVMLUnknownError,
		"Failed to initialize NVML: Insufficient Permissions":                                                                               FailureNoPermission,
		"Unable to detect the device handle for GPU0000:B1:00.0: Unknown Error":                                                             FailureDeviceHandle,
		"OCI runtime exec failed: exec failed: unable to start container process: exec: \"nvidia-smi\": executable file not found in $PATH": FailureSMIMissing,
	} {
		e := FindFailure([]byte(line + "\n"))
		if e == nil || e.Kind != kind {
			t.Errorf("%q: %+v, want %s", line, e, kind)
		}
	}
	if FindFailure([]byte("all good\n")) != nil {
		t.Error("failure found in a clean line")
	}
}

// A paste cut inside a result row must not read the row from both ends: the
// shifted columns turned a bandwidth into a "#wrong" count and the verdict
// into fail.
func TestNCCLRowCutShortIsNotWrongValues(t *testing.T) {
	data := readString(t, "nccl-tests/h100-x8-allreduce-g8-256M-2G-noindent-rows.txt")
	row := "268435456      67108864     float     sum      -1   1119.8  239.71  419.49      0   1117.4  240.24  420.4"
	i := strings.Index(data, row)
	if i < 0 {
		t.Fatal("row not found in the corpus file")
	}
	r := ParseNCCL([]byte(data[:i+len(row)]))
	eq(t, "verdict", r.Verdict, diag.ReportUnknown)
	if hasRule(&r.Header, "nccl-wrong-results") {
		t.Errorf("a row cut short was read as wrong values: %v", rules(&r.Header))
	}
	eq(t, "rows", len(r.Rows), 0)
}
