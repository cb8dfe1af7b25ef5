package probe

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// issue27Cases are the real outputs collected for issue 27 (see
// testdata/ISSUE27.md): the verdict is the one the file's .source note gives,
// a GPU SRE's reading, and the checks assert the facts the note lists. A note
// with a "Gap:" line is a reading gpuctl does not reach yet; TestCorpus logs
// such a case's mismatches and fails once gpuctl matches (see checkKnownGap).
var issue27Cases = []corpusCase{
	// Kernel logs.
	{"testdata/dmesg/journal-xid45-caused-by-xid149-145-4gpus-590.48.01-excerpt.log", KindDmesg, diag.ReportFail, []string{"xid-reset"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "style (journalctl -o cat: no time)", r.TimestampStyle, "none")
		eq(t, "xid groups", len(r.XIDs), 4)
		for bus, want := range map[string][2]int{"0000:dc:00": {2, 149}, "0000:ed:00": {2, 145}, "0000:ba:00": {2, 145}, "0000:97:00": {1, 145}} {
			if x := xid(r, 45, bus); x == nil || x.Count != want[0] || x.CausedBy != want[1] || x.Class != XIDReset {
				t.Errorf("xid 45 on %s = %+v, want x%d caused by %d, reset", bus, x, want[0], want[1])
			}
		}
	}},
	{"testdata/dmesg/dmesg-bar1-0m-invalid-probe-egpu-excerpt.log", KindDmesg, diag.ReportFail, []string{"driver-probe-failed"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "probe failed", r.ProbeFailed, true)
		if len(r.ProbeFailures) != 1 || !strings.Contains(r.ProbeFailures[0], "BAR1 is 0M @ 0x0 (PCI:0000:0a:00.0)") {
			t.Errorf("probe failures %q", r.ProbeFailures)
		}
		eq(t, "xids", len(r.XIDs), 0)
	}},
	{"testdata/dmesg/dmesg-T-xid119-gsp-rpc-timeout-nvidia-smi-2023-excerpt.log", KindDmesg, diag.ReportFail, []string{"xid-reset"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "style", r.TimestampStyle, "ctime")
		eq(t, "xid groups", len(r.XIDs), 1)
		if x := xid(r, 119, "0000:61:00"); x == nil || x.Count != 7 || !strings.Contains(x.FirstMessage, "Timeout waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL)") {
			t.Errorf("xid 119 = %+v", x)
		}
	}},
	{"testdata/dmesg/dmesg-570.195.03-load-sxid-22013-nonfatal-h100-tdx-excerpt.log", KindDmesg, diag.ReportOK, []string{"sxid-nonfatal"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "xids", len(r.XIDs), 0)
		eq(t, "sxid groups", len(r.SXIDs), 3)
		for i, s := range r.SXIDs {
			eq(t, "sxid code", s.Code, 22013)
			eq(t, "switch", s.Switch, "nvidia-nvswitch3")
			eq(t, "bus", s.BusID, "0000:04:00.0")
			eqp(t, "link", s.Link, 44+i)
			eqp(t, "fatal", s.Fatal, false)
		}
	}},
	{"testdata/dmesg/dmesg-rminitadapter-gsp-gfw-boot-rtx3090-550-excerpt.log", KindDmesg, diag.ReportFail, []string{"driver-probe-failed"}, func(t *testing.T, rep Report) {
		checkInitFailures(t, dmesgOf(rep), "0000:98:00=gfw-boot/reboot")
	}},
	{"testdata/dmesg/syslog-kernel-rminitadapter-repeated-minor5-excerpt.log", KindDmesg, diag.ReportFail, []string{"driver-probe-failed"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "probe failed", r.ProbeFailed, true)
		eq(t, "xids", len(r.XIDs), 0)
	}},
	{"testdata/dmesg/dmesg-rminitadapter-2-vgpus-ocp-with-net-noise-excerpt.log", KindDmesg, diag.ReportFail, []string{"driver-probe-failed"}, func(t *testing.T, rep Report) {
		checkInitFailures(t, dmesgOf(rep), "0000:04:01=rm-init/reset", "0000:04:02=rm-init/reset")
	}},
	{"testdata/dmesg/dmesg-xid120-gsp-store-access-page-fault-risc-v-dump-excerpt.log", KindDmesg, diag.ReportFail, []string{"xid-reset"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "xid groups (register dump lines are not xids)", len(r.XIDs), 1)
		if x := xid(r, 120, "0000:06:00"); x == nil || x.Count != 1 || !strings.Contains(x.FirstMessage, "GSP task exception: store access page fault") {
			t.Errorf("xid 120 = %+v", x)
		}
	}},

	// nvidia-smi topo -m.
	{"testdata/topo/topo-m-b200-x8-gpu2-no-nvlink-20nic-vllm-excerpt.txt", KindTopo, diag.ReportFail, []string{"topo-nvlink-missing", "output-fragment", "output-truncated"}, func(t *testing.T, rep Report) {
		r := topoOf(rep)
		// No header row: 20 link columns, 8 GPUs (GPU0's NV18 to GPU7)
		// and 12 NICs, then the three affinity columns.
		eq(t, "gpus", len(r.GPUs), 8)
		eq(t, "nics", len(r.NICs), 12)
		eq(t, "rows", len(r.Matrix), 6)
		eq(t, "GPU0-GPU7", r.Link("GPU0", "GPU7"), "NV18")
		eq(t, "GPU2-GPU0", r.Link("GPU2", "GPU0"), "NODE")
		eq(t, "GPU2-GPU4", r.Link("GPU2", "GPU4"), "SYS")
		eq(t, "GPU2-NIC2", r.Link("GPU2", "NIC2"), "PXB")
		eq(t, "GPU4 cpus", r.CPUAffinity["GPU4"], "56-111,168-223")
		eq(t, "GPU4 numa", r.NUMAAffinity["GPU4"], "1")
		eq(t, "GPU0 gpu numa id", r.GPUNUMAID["GPU0"], "N/A")
		var bad []string
		for _, f := range rep.Common().Findings {
			if f.Rule == "topo-nvlink-missing" {
				bad = append(bad, f.GPU)
			}
		}
		eqSlice(t, "GPUs without NVLink", bad, []string{"GPU2"})
	}},
	{"testdata/topo/topo-m-b200-x8-nv18-16nic-vllm-excerpt.txt", KindTopo, diag.ReportOK, nil, nil},
	{"testdata/topo/topo-m-b200-x8-nv18-12nic-vllm-excerpt.txt", KindTopo, diag.ReportOK, nil, nil},
	{"testdata/topo/topo-m-b200-x8-nv18-13nic-vllm-excerpt.txt", KindTopo, diag.ReportOK, nil, nil},
	{"testdata/topo/topo-m-b300-x8-nv18-2nic-vllm-excerpt.txt", KindTopo, diag.ReportOK, nil, nil},
	{"testdata/topo/topo-m-b200-x8-nv18-9nic-4numa-unsloth-excerpt.txt", KindTopo, diag.ReportOK, nil, nil},
	{"testdata/topo/topo-m-x2-nv12-8nic-empty-affinity-vllm-excerpt.txt", KindTopo, diag.ReportOK, []string{"topo-legend-cut"}, func(t *testing.T, rep Report) {
		r := topoOf(rep)
		// Blank CPU and NUMA affinity cells, told by position.
		eq(t, "GPU0 cpus", r.CPUAffinity["GPU0"], "")
		eq(t, "GPU1 numa", r.NUMAAffinity["GPU1"], "")
		eq(t, "GPU1 gpu numa id", r.GPUNUMAID["GPU1"], "N/A")
		eqSlice(t, "gpus", r.GPUs, []string{"GPU0", "GPU1"})
		eq(t, "nics", len(r.NICs), 8)
		eq(t, "GPU0-GPU1", r.Link("GPU0", "GPU1"), "NV12")
		eq(t, "GPU0-NIC6", r.Link("GPU0", "NIC6"), "PXB")
		eq(t, "GPU1-NIC0", r.Link("GPU1", "NIC0"), "SYS")
		eq(t, "NIC0-NIC1", r.Link("NIC0", "NIC1"), "PIX")
	}},

	// nvidia-smi.
	{"testdata/nvidia-smi/table-610.43.02-b200-kmd-version-header-excerpt.txt", KindNvidiaSMI, diag.ReportOK, nil, nil},
	{"testdata/nvidia-smi/table-595.71.05-rtx-5090-x1-excerpt.txt", KindNvidiaSMI, diag.ReportOK, []string{"table-processes-cut"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver/cuda", r.DriverVersion+"/"+r.CUDAVersion, "595.71.05/13.2")
		eq(t, "gpus", len(r.GPUs), 1)
		eq(t, "name", r.GPUs[0].Name, "NVIDIA GeForce RTX 5090")
		eq(t, "bus", r.GPUs[0].BusID, "00000000:C5:00.0")
		eqp(t, "memory used", r.GPUs[0].MemoryUsedMiB, 492)
		eqp(t, "memory total", r.GPUs[0].MemoryTotalMiB, 32607)
	}},
	{"testdata/nvidia-smi/table-580.82.09-rtx-5090-4090-mixed-excerpt.txt", KindNvidiaSMI, diag.ReportOK, nil, nil},
	{"testdata/nvidia-smi/table-525.60.13-t4-kubectl-exec-defaulted-container-excerpt.txt", KindNvidiaSMI, diag.ReportOK, []string{"table-processes-cut"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver/cuda", r.DriverVersion+"/"+r.CUDAVersion, "525.60.13/12.0")
		eqSlice(t, "buses", busIDs(r), []string{"00000000:84:00.0"})
		eq(t, "name", r.GPUs[0].Name, "Tesla T4")
		eqp(t, "memory total", r.GPUs[0].MemoryTotalMiB, 15360)
	}},
	{"testdata/nvidia-smi/table-535.54.03-h100-pcie-mig-on-excerpt.txt", KindNvidiaSMI, diag.ReportOK, nil, nil},
	{"testdata/nvidia-smi/table-550.135-tesla-p4-x1-excerpt.txt", KindNvidiaSMI, diag.ReportOK, []string{"table-processes-cut"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver/cuda", r.DriverVersion+"/"+r.CUDAVersion, "550.135/12.4")
		eqSlice(t, "buses", busIDs(r), []string{"00000000:86:00.0"})
		eq(t, "name", r.GPUs[0].Name, "Tesla P4")
		eqp(t, "memory used", r.GPUs[0].MemoryUsedMiB, 7719)
		eqp(t, "memory total", r.GPUs[0].MemoryTotalMiB, 8192)
	}},
	{"testdata/nvidia-smi/device-handle-unknown-error-0b-with-prompt.txt", KindNvidiaSMI, diag.ReportFail, []string{"device-handle"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		if r.Error == nil || !strings.Contains(r.Error.Message, "0000:0B:00.0: Unknown Error") {
			t.Errorf("error %+v", r.Error)
		}
	}},
	{"testdata/nvidia-smi/q-fragment-remapped-rows-pending-yes-uncorrectable-4-excerpt.txt", KindNvidiaSMI, diag.ReportFail, []string{"row-remap-pending", "output-fragment"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "query")
		eq(t, "fragment", r.Fragment, true)
		eq(t, "gpus", len(r.GPUs), 1)
		g := r.GPUs[0]
		eq(t, "bus (not in the fragment)", g.BusID, "")
		eqp(t, "remapped correctable", g.RowsRemappedCorrectable, 0)
		eqp(t, "remapped uncorrectable", g.RowsRemappedUncorrectable, 4)
		eqp(t, "remap pending", g.RowRemapPending, true)
		if f := findingFor(&r.Header, "row-remap-pending", ""); f == nil {
			t.Errorf("the pending remap names no GPU: %s", dumpFindings(&r.Header))
		}
	}},

	// dcgmi diag.
	{"testdata/dcgm/diag-r1-dcgm4.2.3-570.148.08-l40s-x4-software-memory-pass-cut-excerpt.txt", KindDCGM, diag.ReportUnknown, []string{"output-truncated"}, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		eq(t, "version", r.Version, "4.2.3")
		eq(t, "driver", r.DriverVersion, "570.148.08")
		eqSlice(t, "device ids", r.DeviceIDs, []string{"26b9", "26b9", "26b9", "26b9"})
		checkDCGMTests(t, r, []string{"Deployment/software=PASS", "Hardware/memory=PASS"})
	}},
	{"testdata/dcgm/diag-r3-dcgm3.3.5-550.54.15-a100-x4-kubectl-exec-deployment-cut-excerpt.txt", KindDCGM, diag.ReportUnknown, []string{"output-truncated"}, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		eq(t, "version", r.Version, "3.3.5")
		eq(t, "driver", r.DriverVersion, "550.54.15")
		eqSlice(t, "device ids", r.DeviceIDs, []string{"20b5", "20b5", "20b5", "20b5"})
	}},
	{"testdata/dcgm/nvlink-link-status-all-down-and-diag-r2-dcgm3.3.7-h100-nvl-x2-excerpt.txt", KindDCGM, diag.ReportFail, []string{"dcgm-nvlink-down", "output-truncated"}, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		eq(t, "link status devices", len(r.LinkStatus), 2)
		for i, s := range r.LinkStatus {
			eq(t, "device", s.Device+" "+strconv.Itoa(s.ID), "gpu "+strconv.Itoa(i))
			eq(t, "links", len(s.Links), 18)
			eq(t, "down", s.Down(), 18)
			if findingFor(&r.Header, "dcgm-nvlink-down", strconv.Itoa(i)) == nil {
				t.Errorf("no dcgm-nvlink-down for GPU %d", i)
			}
		}
		eq(t, "version", r.Version, "3.3.7")
		eq(t, "driver", r.DriverVersion, "560.35.03")
		eqSlice(t, "device ids", r.DeviceIDs, []string{"2321", "2321"})
		checkDCGMTests(t, r, []string{"Deployment/Denylist=PASS"})
		eq(t, "tests (no link status row among them)", len(r.Tests), 2)
		if hasRule(&r.Header, "dcgm-all-skipped") {
			t.Errorf("findings:\n%s", dumpFindings(&r.Header))
		}
	}},
	{"testdata/dcgm/diag-r2-dcgm3.3.1-535.129.03-t4-deployment-pass-cut-excerpt.txt", KindDCGM, diag.ReportUnknown, []string{"output-truncated"}, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		eq(t, "version", r.Version, "3.3.1")
		eq(t, "driver", r.DriverVersion, "535.129.03")
		eqSlice(t, "device ids", r.DeviceIDs, []string{"1eb8"})
		checkDCGMTests(t, r, []string{"Deployment/Denylist=PASS", "Deployment/Environment Variables=PASS", "Deployment/Page Retirement/Row Remap=PASS"})
	}},
	{"testdata/dcgm/diag-r3-dcgm3.0.4-no-metadata-deployment-pass-cut-excerpt.txt", KindDCGM, diag.ReportUnknown, []string{"output-truncated"}, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		eq(t, "version (no Metadata section)", r.Version, "")
		checkDCGMTests(t, r, []string{"Deployment/Denylist=PASS", "Deployment/Inforom=PASS"})
	}},

	// nccl-tests.
	{"testdata/nccl/alltoall-rtx-5090-1rank-busbw-zero.log", KindNCCL, diag.ReportUnknown, []string{"nccl-single-rank"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "ranks", r.Ranks, 1)
		checkRows(t, r, 1, 33554432, 33554432)
		eqp(t, "out of bounds", r.OutOfBounds, 0)
	}},
	{"testdata/nccl/allreduce-mpirun-tag-output-busbw-collapse-64m-excerpt.log", KindNCCL, diag.ReportFail, []string{"nccl-busbw-drop", "nccl-inplace-divergence", "output-truncated"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		checkRows(t, r, 10, 1048576, 536870912)
		checkLargest(t, r, 5.31, 5.33)
		checkNoWrong(t, r)
		eqp(t, "peak busbw", r.PeakBusBandwidthGBps, 29.50)
		eq(t, "row 32 MiB", fmt.Sprint(r.Rows[5].OutOfPlace.BusBandwidthGBps, r.Rows[5].InPlace.BusBandwidthGBps), "29.5 28.14")
		eq(t, "row 64 MiB", fmt.Sprint(r.Rows[6].OutOfPlace.TimeUs, r.Rows[6].OutOfPlace.BusBandwidthGBps, r.Rows[6].InPlace.BusBandwidthGBps), "24410 5.27 5.27")
		eq(t, "row 2 MiB", fmt.Sprint(r.Rows[1].OutOfPlace.BusBandwidthGBps, r.Rows[1].InPlace.BusBandwidthGBps), "1.73 9.65")
		eq(t, "redop/root", fmt.Sprintf("%s %d", r.Rows[0].Redop, *r.Rows[0].Root), "sum -1")
		eq(t, "ranks (no preamble)", r.Ranks, 0)
	}},
	{"testdata/nccl/allreduce-h100-x8-cuda-system-not-yet-initialized.log", KindNCCL, diag.ReportFail, []string{"nccl-cuda-error"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "rows", len(r.Rows), 0)
		if len(r.Errors) == 0 || !strings.Contains(r.Errors[0], "'system not yet initialized'") {
			t.Errorf("errors %q", r.Errors)
		}
	}},
	{"testdata/nccl/perf-h20-2node-mpirun-cuda-system-not-yet-initialized-excerpt.log", KindNCCL, diag.ReportFail, []string{"nccl-cuda-error", "output-truncated"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "rows", len(r.Rows), 0)
		eqSlice(t, "errors", r.Errors, []string{"gpu: Test CUDA failure common.cu:1030 'system not yet initialized'", ".. gpu pid 3018: Test failure common.cu:937"})
		if f := findingFor(&r.Header, "nccl-cuda-error", ""); f == nil || f.Severity != diag.SeverityError || !strings.Contains(f.Message, "cudaErrorSystemNotReady") {
			t.Errorf("nccl-cuda-error %+v", f)
		}
	}},
	{"testdata/nccl/perf-many-ranks-unhandled-cuda-error-mpirun-exit-excerpt.log", KindNCCL, diag.ReportFail, []string{"nccl-cuda-error", "output-truncated"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "rows", len(r.Rows), 0)
		if len(r.Errors) == 0 || !strings.Contains(r.Errors[0], "HCA-14: Test NCCL failure common.cu:1204 'unhandled cuda error") {
			t.Errorf("errors %q", r.Errors)
		}
	}},
	{"testdata/nccl/allreduce-nccl2.6.4-2gpu-error-column-rows-excerpt.log", KindNCCL, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		checkRows(t, r, 12, 65536, 134217728)
		checkLargest(t, r, 20.34, 21.86)
		eqp(t, "out of bounds", r.OutOfBounds, 0)
		eqp(t, "avg busbw", r.AvgBusBandwidthGBps, 6.6972)
	}},
	{"testdata/nccl/allreduce-gb10-2node-2.20.0-small-sizes-cut-excerpt.log", KindNCCL, diag.ReportUnknown, []string{"output-truncated"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "tests version", r.TestsVersion, "2.20.0")
		eq(t, "ranks", r.Ranks, 2)
		checkRows(t, r, 4, 8192, 65536)
		checkNoWrong(t, r)
	}},

	// Component logs.
	{"testdata/component/dcgm-exporter-4.3.1-h200-570.172.08-nvml-init-unknown-error-excerpt.log", KindComponentLog, diag.ReportFail, []string{"component-nvml-init-failed"}, func(t *testing.T, rep Report) {
		checkComponent(t, rep, "dcgm-exporter", "4.3.1-4.4.1", "Unknown Error", "")
		eq(t, "lines", rep.(*ComponentLogReport).Lines, 11)
	}},
	{"testdata/component/dcgm-exporter-4.8.4-nvml-library-not-found.log", KindComponentLog, diag.ReportFail, []string{"component-nvml-init-failed"}, func(t *testing.T, rep Report) {
		checkComponent(t, rep, "dcgm-exporter", "4.8.4", "ERROR_LIBRARY_NOT_FOUND", "")
	}},
	{"testdata/component/dcgm-exporter-bottlerocket-failed-to-initialize-nvml-fatal.log", KindComponentLog, diag.ReportFail, []string{"component-nvml-init-failed"}, func(t *testing.T, rep Report) {
		checkComponent(t, rep, "dcgm-exporter", "", "", "Error starting nv-hostengine: DCGM initialization error")
	}},
	{"testdata/component/dcgm-exporter-gke-2020-failed-to-initialize-nvml-fatal.log", KindComponentLog, diag.ReportFail, []string{"component-nvml-init-failed"}, func(t *testing.T, rep Report) {
		checkComponent(t, rep, "dcgm-exporter", "", "", "Error starting nv-hostengine: DCGM initialization error")
	}},
	{"testdata/component/nv-hostengine-2.3.1-debug-log-failed-to-initialize-nvml-excerpt.log", KindComponentLog, diag.ReportFail, []string{"component-nvml-init-failed"}, func(t *testing.T, rep Report) {
		checkComponent(t, rep, "nv-hostengine", "2.3.1", "", "")
	}},
	{"testdata/component/device-plugin-xid69-marked-unhealthy.log", KindComponentLog, diag.ReportFail, []string{"component-gpu-unhealthy"}, func(t *testing.T, rep Report) {
		r := rep.(*ComponentLogReport)
		eq(t, "component", r.Component, "nvidia-device-plugin")
		if len(r.Unhealthy) != 1 || r.Unhealthy[0] != "GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8" {
			t.Errorf("unhealthy devices %q", r.Unhealthy)
		}
	}},

	// CUDA samples (the GPU Operator's cuda-validation container).
	{"testdata/cuda/vectoradd-cuda-validator-rtx-pro-6000-580.82.07-driver-insufficient.txt", KindCUDA, diag.ReportFail, []string{"cuda-driver-insufficient"}, func(t *testing.T, rep Report) {
		r := cudaOf(rep)
		eq(t, "program", r.Program, "vectorAdd")
		eq(t, "result", r.Result, "FAIL")
		eq(t, "error", r.Error, "CUDA driver version is insufficient for CUDA runtime version")
	}},
	{"testdata/cuda/vectoradd-cuda-validator-forward-compat-non-supported-hw.txt", KindCUDA, diag.ReportFail, []string{"cuda-forward-compat-unsupported"}, func(t *testing.T, rep Report) {
		r := cudaOf(rep)
		eq(t, "program", r.Program, "vectorAdd")
		eq(t, "result", r.Result, "FAIL")
		eq(t, "error", r.Error, "forward compatibility was attempted on non supported HW")
	}},
}

func init() {
	corpusCases = append(corpusCases, issue27Cases...)
}

// checkDCGMTests asserts "Category/Name=RESULT" for each want.
func checkDCGMTests(t *testing.T, r *DCGMReport, want []string) {
	t.Helper()
	got := map[string]string{}
	for _, tt := range r.Tests {
		got[tt.Category+"/"+tt.Name] = tt.Result
	}
	for _, w := range want {
		k, v, _ := strings.Cut(w, "=")
		eq(t, k, got[k], v)
	}
}

// checkComponent asserts a component log's component, version, NVML
// failure (nvmlError "" with NVML failed all the same: the line names no
// error) and fatal exit message.
func checkComponent(t *testing.T, rep Report, component, version, nvmlError, fatal string) {
	t.Helper()
	r := rep.(*ComponentLogReport)
	eq(t, "component", r.Component, component)
	eq(t, "version", r.Version, version)
	eq(t, "nvml init failed", r.NVMLInitFailed, true)
	eq(t, "nvml error", r.NVMLError, nvmlError)
	eq(t, "fatal", r.Fatal, fatal)
	eq(t, "unhealthy", len(r.Unhealthy), 0)
}

// noteLine returns the text after prefix on the first line of path's
// .source note that starts with it; "" when the note or the line is missing.
func noteLine(t testing.TB, path, prefix string) string {
	t.Helper()
	f, err := os.Open(path + ".source")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// corpusGap is the "Gap:" line of the file's .source note: what gpuctl does
// not read yet; "" when gpuctl must read the file as the note says.
func corpusGap(t testing.TB, path string) string {
	return noteLine(t, path, "Gap:")
}

// checkKnownGap runs TestCorpus's checks on a case with a known gap as a
// list of mismatches: it logs them, and fails once there are none (the gap
// is closed and the note must lose its Gap: line). The facts check runs only
// once the gap is closed; the JSON contract holds either way.
func checkKnownGap(t *testing.T, c corpusCase, gap string) {
	t.Helper()
	var miss []string
	data := readFile(t, source(c.file))
	if k, err := Detect(data); err != nil || k != c.kind {
		miss = append(miss, fmt.Sprintf("Detect = %q, %v; want %q", k, err, c.kind))
	}
	r, err := Parse(KindAuto, data)
	if err != nil {
		miss = append(miss, "Parse: "+err.Error())
	} else {
		checkJSONContract(t, r)
		h := r.Common()
		if h.Kind != c.kind {
			miss = append(miss, fmt.Sprintf("kind %q, want %q", h.Kind, c.kind))
		}
		if h.Verdict != c.verdict {
			miss = append(miss, fmt.Sprintf("verdict %s, want %s", h.Verdict, c.verdict))
		}
		for _, rule := range c.rules {
			if !hasRule(h, rule) {
				miss = append(miss, "no "+rule+" finding")
			}
		}
		for _, f := range h.Findings {
			if f.Severity == diag.SeverityError && c.verdict != diag.ReportFail {
				miss = append(miss, "error finding on a "+string(c.verdict)+" output: "+f.Rule)
			}
		}
	}
	if len(miss) == 0 {
		t.Errorf("gpuctl now reads %s as its note says: the gap is closed; remove the note's Gap: line, mark its ISSUE27.md row right and add the facts to its check (%s)", c.file, gap)
		return
	}
	t.Logf("known gap: %s; mismatches: %s", gap, strings.Join(miss, "; "))
}

var reNoteVerdict = regexp.MustCompile(`(?m)^Verdict: (ok|fail|unknown)\b`)

// TestIssue27CasesFollowNotes: every issue 27 case asserts the verdict its
// .source note gives, every file of ISSUE27.md has a case, and the set keeps
// what the issue asks for: at least 40 outputs, at least half of them
// faulty, from at least 6 repositories.
func TestIssue27CasesFollowNotes(t *testing.T) {
	repos := map[string]bool{}
	fail := 0
	reRepo := regexp.MustCompile(`^https://github\.com/([^/]+/[^/]+)/`)
	for _, c := range issue27Cases {
		note, err := os.ReadFile(source(c.file) + ".source")
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		m := reNoteVerdict.FindSubmatch(note)
		if m == nil {
			t.Errorf("%s: note has no Verdict line", c.file)
		} else if diag.ReportVerdict(m[1]) != c.verdict {
			t.Errorf("%s: case says %s, note says %s", c.file, c.verdict, m[1])
		}
		if c.verdict == diag.ReportFail {
			fail++
		}
		if rm := reRepo.FindStringSubmatch(noteLine(t, source(c.file), "SOURCE: ")); rm != nil {
			repos[rm[1]] = true
		} else {
			t.Errorf("%s: note's SOURCE is not a GitHub thread", c.file)
		}
	}
	if len(issue27Cases) < 40 || 2*fail < len(issue27Cases) || len(repos) < 6 {
		t.Errorf("issue 27 wants >= 40 outputs, half faulty, >= 6 sources; have %d, %d faulty, %d repositories", len(issue27Cases), fail, len(repos))
	}
	table, err := os.ReadFile("testdata/ISSUE27.md")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, c := range issue27Cases {
		have[strings.TrimPrefix(c.file, "testdata/")] = true
	}
	rows := 0
	for _, line := range strings.Split(string(table), "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) < 6 || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| file ") {
			continue
		}
		rows++
		file := strings.TrimPrefix(cells[0], "| ")
		if !have[file] {
			t.Errorf("ISSUE27.md lists %s, which has no case", file)
		}
		gap := corpusGap(t, "testdata/"+file) != ""
		if right := cells[4] == "yes"; right == gap {
			t.Errorf("ISSUE27.md says right=%s for %s, its note has a Gap: line: %v", cells[4], file, gap)
		}
	}
	eq(t, "ISSUE27.md rows", rows, len(issue27Cases))
}
