package probe

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// busyCases are real outputs of busy production nodes that other projects
// ship as fixtures (nvidia_gpu_exporter's captures, gpud, azurehpc-health-
// checks, SuperBench, telegraf, netdata) or that were posted in issues: GPUs
// under load, MIG, wide --query-gpu CSV, NVSwitch, NVLink5, /dev/kmsg. Each
// file's .source note names the repository, path, commit and licence, and
// which of the peer's tests asserts which values; the checks below assert
// the same values.
var busyCases = []corpusCase{
	// -q under load: the Processes section (its own colon column on R590).
	{"testdata/nvidia-smi/q-load-h100-80gb-hbm3-590.48.01-processes.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "590.48.01")
		eq(t, "cuda", r.CUDAVersion, "13.1")
		eq(t, "gpus", len(r.GPUs), 1)
		g := r.GPUs[0]
		eq(t, "name", g.Name, "NVIDIA H100 80GB HBM3")
		eq(t, "bus", g.BusID, "00000000:00:09.0")
		eq(t, "mig", g.MIGMode, "Disabled")
		eq(t, "mig devices", len(g.MIGDevices), 0)
		eqp(t, "channel repair pending", g.ChannelRepairPending, false)
		eqp(t, "tpc repair pending", g.TPCRepairPending, false)
		checkSMIHealthyECC(t, r)
	}},
	{"testdata/nvidia-smi/q-load-h100-mig-590.48.01-processes.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		g := r.GPUs[0]
		eq(t, "mig", g.MIGMode, "Enabled")
		checkMIG(t, g.MIGDevices, []migWant{{0, 2, 0, 40448, 11091, 60}, {1, 3, 0, 20096, 17, 32}, {2, 9, 0, 9984, 9, 16}, {3, 10, 0, 9984, 9, 16}})
	}},
	{"testdata/nvidia-smi/q-load-h200-mig-590.48.01-processes.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		eq(t, "name", g.Name, "NVIDIA H200")
		eq(t, "mig", g.MIGMode, "Enabled")
		eq(t, "mig devices", len(g.MIGDevices), 5)
		if len(g.MIGDevices) == 5 {
			eqp(t, "mig 1 GI", g.MIGDevices[1].GPUInstanceID, 2)
			eqp(t, "mig 1 CI", g.MIGDevices[1].ComputeInstanceID, 1)
		}
	}},
	{"testdata/nvidia-smi/q-idle-h200-590.48.01.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		eq(t, "name", g.Name, "NVIDIA H200")
		eq(t, "mig", g.MIGMode, "Disabled")
	}},
	{"testdata/nvidia-smi/q-load-l40s-595.80-processes.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "595.80")
		eq(t, "name", r.GPUs[0].Name, "NVIDIA L40S")
	}},
	{"testdata/nvidia-smi/q-load-rtx-4080-super-595.71.05-processes.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		eq(t, "name", smiOf(rep).GPUs[0].Name, "NVIDIA GeForce RTX 4080 SUPER")
	}},
	{"testdata/nvidia-smi/q-rtx4090-x8-535.154.05-processes.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "535.154.05")
		eqp(t, "attached", r.AttachedGPUs, 8)
		eqSlice(t, "buses", busIDs(r), []string{"00000000:01:00.0", "00000000:23:00.0", "00000000:41:00.0", "00000000:61:00.0", "00000000:81:00.0", "00000000:A1:00.0", "00000000:C1:00.0", "00000000:E1:00.0"})
	}},
	{"testdata/nvidia-smi/q-titan-v-560.35.03-processes.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "560.35.03")
		eq(t, "name", r.GPUs[0].Name, "NVIDIA TITAN V")
	}},
	// -q -d PAGE_RETIREMENT (azurehpc-health-checks nhc-gpu-test.sh).
	{"testdata/nvidia-smi/q-d-page-retirement-x8-bad-azurehpc.txt", KindNvidiaSMI, diag.ReportFail, []string{"retired-pages-pending"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "535.86.10")
		eq(t, "gpus", len(r.GPUs), 8)
		g0, g1 := r.GPUs[0], r.GPUs[1]
		eq(t, "gpu0", g0.BusID, "00000001:00:00.0")
		eqp(t, "gpu0 sbe", g0.RetiredPagesSingleBit, 60)
		eqp(t, "gpu0 dbe", g0.RetiredPagesDoubleBit, 5)
		eqp(t, "gpu0 pending", g0.RetiredPagesPending, false)
		eqp(t, "gpu1 sbe", g1.RetiredPagesSingleBit, 2)
		eqp(t, "gpu1 dbe", g1.RetiredPagesDoubleBit, 61)
		eqp(t, "gpu1 pending", g1.RetiredPagesPending, true)
		if findingFor(rep.Common(), "retired-pages-pending", "00000002:00:00.0") == nil {
			t.Errorf("no retired-pages-pending finding for GPU 00000002:00:00.0")
		}
	}},
	{"testdata/nvidia-smi/q-d-page-retirement-x8-orig-azurehpc.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		for _, g := range smiOf(rep).GPUs {
			eqp(t, g.BusID+" pending", g.RetiredPagesPending, false)
		}
	}},
	// The table's "MIG devices:" section.
	{"testdata/nvidia-smi/table-load-h100-mig-590.48.01.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "590.48.01")
		g := r.GPUs[0]
		eq(t, "mig", g.MIGMode, "Enabled")
		eqp(t, "power", g.PowerDrawW, 432)
		checkMIG(t, g.MIGDevices, []migWant{{0, 2, 0, 40448, 11091, 60}, {1, 3, 0, 20096, 17, 32}, {2, 9, 0, 9984, 9, 16}, {3, 10, 0, 9984, 9, 16}})
	}},
	{"testdata/nvidia-smi/table-idle-h200-mig-590.48.01.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		eq(t, "mig devices", len(g.MIGDevices), 5)
		if len(g.MIGDevices) == 5 {
			eqp(t, "dev 2 memory", g.MIGDevices[2].MemoryMiB, 33280)
			eqp(t, "dev 1 CI", g.MIGDevices[1].ComputeInstanceID, 1)
		}
	}},
	{"testdata/nvidia-smi/table-load-l40s-595.80.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "595.80")
		eq(t, "name", r.GPUs[0].Name, "NVIDIA L40S")
	}},
	{"testdata/nvidia-smi/table-525.125.06-fan-err.txt", KindNvidiaSMI, diag.ReportFail, []string{"gpu-err", "table-processes-not-shown"}, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		eq(t, "bus", g.BusID, "00000000:01:00.0")
		eqSlice(t, "err fields", g.ErrFields, []string{"Fan/Temp/Perf/Power"})
		eqp(t, "temp", g.TemperatureC, 38)
	}},
	{"testdata/nvidia-smi/table-570-l40-x4-no-processes.txt", KindNvidiaSMI, diag.ReportOK, []string{"table-processes-not-shown"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "570.133.07")
		eq(t, "cuda", r.CUDAVersion, "12.8")
		eqSlice(t, "buses", busIDs(r), []string{"00000000:21:00.0", "00000000:61:00.0", "00000000:81:00.0", "00000000:E1:00.0"})
		for i, w := range []float64{83, 36, 36, 37} {
			g := r.GPUs[i]
			eq(t, "name", g.Name, "NVIDIA L40")
			eqp(t, "power", g.PowerDrawW, w)
			eqp(t, "memory total", g.MemoryTotalMiB, 46068)
			eqp(t, "ecc", g.ECCUncorrectedVolatile, 0)
		}
	}},
	{"testdata/nvidia-smi/list-L-h200-mig-590.48.01.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		var profiles []string
		for _, d := range g.MIGDevices {
			profiles = append(profiles, d.Profile)
		}
		eqSlice(t, "profiles", profiles, []string{"1c.3g.71gb", "2c.3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"})
		eq(t, "mig", g.MIGMode, "Enabled")
	}},
	// Wide --query-gpu CSV: detected by the names' shape, every column kept.
	{"testdata/nvidia-smi/csv-wide-load-h100-mig-590.48.01.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "format", r.Format, "csv")
		eq(t, "driver", r.DriverVersion, "590.48.01")
		g := r.GPUs[0]
		// nvidia_gpu_exporter internal/integration: ..._load.metrics.
		eqp(t, "temperature", g.TemperatureC, 53)
		eqp(t, "power", g.PowerDrawW, 433.78)
		eqp(t, "memory total", g.MemoryTotalMiB, 81559)
		eqp(t, "pcie width", g.PCIeWidthCurrent, 16)
		eq(t, "mig", g.MIGMode, "Enabled")
		eq(t, "columns kept", len(g.Fields), 212)
		eq(t, "pci.baseClass", g.Fields["pci.baseClass"], "0x3")
		eq(t, "encoder.stats.sessionCount", g.Fields["encoder.stats.sessionCount"], "0")
	}},
	{"testdata/nvidia-smi/csv-wide-load-l40s-595.80.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		eqp(t, "temperature", g.TemperatureC, 54)
		eqp(t, "power", g.PowerDrawW, 110.23)
		eqp(t, "memory total", g.MemoryTotalMiB, 46068)
		eqp(t, "pcie width", g.PCIeWidthCurrent, 16)
		eq(t, "columns kept", len(g.Fields), 202)
	}},
	{"testdata/nvidia-smi/csv-wide-idle-h200-590.48.01.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		eq(t, "name", g.Name, "NVIDIA H200")
		eqp(t, "temperature", g.TemperatureC, 28)
		eqp(t, "power", g.PowerDrawW, 77.71)
	}},
	{"testdata/nvidia-smi/csv-wide-load-rtx-2080-super-610.57.04.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		eqp(t, "temperature", g.TemperatureC, 38)
		eqp(t, "power", g.PowerDrawW, 98.14)
		eq(t, "columns kept", len(g.Fields), 241)
	}},
	// nvlink -s: MIG mode and no NVLink are facts; an SXM module with all
	// links down fails.
	{"testdata/nvidia-smi/nvlink-s-h100-mig-mode-590.48.01.txt", KindNvidiaSMI, diag.ReportOK, []string{"nvlink-mig-mode"}, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		eq(t, "nvlink status", g.NVLinkStatus, NVLinkMIGMode)
		eq(t, "mig", g.MIGMode, "Enabled")
		eq(t, "links", len(g.NVLinks), 0)
	}},
	{"testdata/nvidia-smi/nvlink-s-h200-mig-mode-590.48.01.txt", KindNvidiaSMI, diag.ReportOK, []string{"nvlink-mig-mode"}, func(t *testing.T, rep Report) {
		eq(t, "nvlink status", smiOf(rep).GPUs[0].NVLinkStatus, NVLinkMIGMode)
	}},
	{"testdata/nvidia-smi/nvlink-s-l40s-no-nvlink-595.80.txt", KindNvidiaSMI, diag.ReportOK, []string{"nvlink-not-supported"}, func(t *testing.T, rep Report) {
		eq(t, "nvlink status", smiOf(rep).GPUs[0].NVLinkStatus, NVLinkNotSupported)
	}},
	{"testdata/nvidia-smi/nvlink-s-h200-18-links-590.48.01.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		eq(t, "links", len(g.NVLinks), 18)
		for _, l := range g.NVLinks {
			eq(t, "active", l.Active, true)
			eqp(t, "speed", l.SpeedGBps, 26.562)
		}
	}},
	{"testdata/nvidia-smi/nvlink-s-rtx-2080-super-all-inactive-610.57.04.txt", KindNvidiaSMI, diag.ReportOK, []string{"nvlink-all-inactive"}, func(t *testing.T, rep Report) {
		eq(t, "nvlink status", smiOf(rep).GPUs[0].NVLinkStatus, NVLinkAllInactive)
		if f := findingFor(rep.Common(), "nvlink-all-inactive", "GPU-00000000-0000-0000-0000-000000000000"); f == nil || f.Severity != diag.SeverityWarning {
			t.Errorf("want a warning for a consumer card without a bridge, got %+v", f)
		}
	}},
	{"testdata/nvidia-smi/nvlink-s-a100-sxm4-all-inactive-azurehpc.txt", KindNvidiaSMI, diag.ReportFail, []string{"nvlink-all-inactive"}, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		eq(t, "index", g.Index, 6)
		eq(t, "name", g.Name, "NVIDIA A100-SXM4-80GB")
		eq(t, "nvlink status", g.NVLinkStatus, NVLinkAllInactive)
	}},
	{"testdata/nvidia-smi/nvlink-s-a100-sxm4-good-azurehpc.txt", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		g := smiOf(rep).GPUs[0]
		eq(t, "links", len(g.NVLinks), 12)
		for _, l := range g.NVLinks {
			eqp(t, "speed", l.SpeedGBps, 25)
		}
	}},
	// XML: v13 repair-pending fields, MIG devices, a document without a
	// driver version.
	{"testdata/nvidia-smi/xml-v13-rtx-3080-repair-pending-no.xml", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "dtd", r.DTDVersion, "nvsmi_device_v13.dtd")
		// telegraf nvidia_smi_test.go: ecc_errors_channel_repair_pending
		// and ecc_errors_tpc_repair_pending "No".
		eqp(t, "channel repair pending", r.GPUs[0].ChannelRepairPending, false)
		eqp(t, "tpc repair pending", r.GPUs[0].TPCRepairPending, false)
	}},
	{"testdata/nvidia-smi/xml-v10-gtx-1070-ti-no-driver-version.xml", KindNvidiaSMI, diag.ReportUnknown, []string{"driver-version-missing"}, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "")
		g := r.GPUs[0]
		// telegraf nvidia_smi_test.go, "GeForce GTX 1070 Ti".
		eq(t, "name", g.Name, "GeForce GTX 1070 Ti")
		eq(t, "uuid", g.UUID, "GPU-f9ba66fc-a7f5-94c5-da19-019ef2f9c665")
		eq(t, "pstate", g.PerformanceState, "P8")
		eqp(t, "memory total", g.MemoryTotalMiB, 4096)
		eqp(t, "memory used", g.MemoryUsedMiB, 42)
		eqp(t, "temperature", g.TemperatureC, 39)
		eqp(t, "pcie gen", g.PCIeGenCurrent, 1)
		eqp(t, "pcie width", g.PCIeWidthCurrent, 16)
	}},
	{"testdata/nvidia-smi/xml-v11-a100-sxm4-mig-netdata.xml", KindNvidiaSMI, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := smiOf(rep)
		eq(t, "driver", r.DriverVersion, "510.47.03")
		g := r.GPUs[0]
		eq(t, "mig", g.MIGMode, "Enabled")
		// netdata collector_test.go: mig_devices_count 2, FB used 19922944 B.
		checkMIG(t, g.MIGDevices, []migWant{{0, 1, 0, 19968, 19, 42}, {1, 2, 0, 19968, 19, 42}})
	}},
	{"testdata/topo/topo-m-h100-80gb-hbm3-590.48.01.txt", KindTopo, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := topoOf(rep)
		eqSlice(t, "gpus", r.GPUs, []string{"GPU0"})
		eq(t, "GPU0 cpu", r.CPUAffinity["GPU0"], "0-19")
		eq(t, "GPU0 numa", r.NUMAAffinity["GPU0"], "0")
	}},
	// Kernel logs: /dev/kmsg, SXid, NVLink5 XIDs, nouveau.
	{"testdata/dmesg/kmsg-nvswitch-open.log", KindDmesg, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "style", r.TimestampStyle, "kmsg")
		eq(t, "lines", r.Lines, 47)
		eq(t, "xids", len(r.XIDs), 0)
		eq(t, "sxids", len(r.SXIDs), 0)
	}},
	{"testdata/dmesg/kmsg-peermem-invalid-context.log", KindDmesg, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		eq(t, "style", dmesgOf(rep).TimestampStyle, "kmsg")
	}},
	{"testdata/dmesg/iso-xid48-63-94-gpud.log", KindDmesg, diag.ReportFail, []string{"xid-reset"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "style", r.TimestampStyle, "iso")
		for _, c := range []int{48, 63, 94} {
			if xid(r, c, "0000:19:00") == nil {
				t.Errorf("no XID %d on 0000:19:00", c)
			}
		}
	}},
	{"testdata/dmesg/journalctl-short-iso-no-nvidia-events.log", KindDmesg, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		eq(t, "xids", len(dmesgOf(rep).XIDs), 0)
	}},
	{"testdata/dmesg/sxid-20034-fatal-with-xid79.log", KindDmesg, diag.ReportFail, []string{"sxid-fatal", "xid-reboot"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		checkSXIDs(t, r.SXIDs, []sxidWant{{20034, "nvidia-nvswitch1", "0000:06:00.0", 48, true, 1}, {20034, "nvidia-nvswitch0", "0000:05:00.0", 63, true, 1}, {20034, "nvidia-nvswitch2", "0000:07:00.0", 37, true, 1}, {20034, "nvidia-nvswitch0", "0000:05:00.0", 62, true, 1}})
		eqSlice(t, "fallen off bus", r.FallenOffBus, []string{"0000:91:00"})
	}},
	{"testdata/dmesg/sxid-12028-nonfatal-gpud.log", KindDmesg, diag.ReportOK, []string{"sxid-nonfatal"}, func(t *testing.T, rep Report) {
		// gpud kmsg_test.go: code 12028 on PCI:0000:05:00.0.
		checkSXIDs(t, dmesgOf(rep).SXIDs, []sxidWant{{12028, "nvidia-nvswitch3", "0000:05:00.0", 32, false, 3}})
	}},
	{"testdata/dmesg/xid-144-150-nvlink5-gpud.log", KindDmesg, diag.ReportFail, []string{"xid-reset", "xid-benign"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		for _, c := range []struct {
			code     int
			bus, sev string
		}{{144, "0000:01:00", "nonfatal"}, {144, "0000:04:00", "nonfatal"}, {145, "0000:04:00", "fatal"}, {149, "0000:04:00", "fatal"}, {150, "0000:04:00", "fatal"}, {149, "0000:00:00", "fatal"}, {145, "0008:06:00", "fatal"}} {
			x := xid(r, c.code, c.bus)
			if x == nil {
				t.Errorf("no XID %d on %s", c.code, c.bus)
				continue
			}
			eq(t, "severity of XID "+itoa(&c.code)+" on "+c.bus, x.Severity, c.sev)
		}
		if findingFor(rep.Common(), "xid-benign", "0000:01:00") == nil {
			t.Errorf("a non-fatal XID 144 alone should be informational")
		}
	}},
	{"testdata/dmesg/nouveau-probe-not-called-3-devices.log", KindDmesg, diag.ReportFail, []string{"driver-probe-failed"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "probe failed", r.ProbeFailed, true)
		eq(t, "probe failures", len(r.ProbeFailures), 2)
	}},
	// dcgmi diag excerpts: a Deployment Error note whose test row was not pasted.
	{"testdata/dcgm/diag-deployment-error-row-remap-pending-gpu3-excerpt.txt", KindDCGM, diag.ReportFail, []string{"dcgm-test-failed", "output-truncated"}, func(t *testing.T, rep Report) {
		r := dcgmOf(rep)
		if len(r.Tests) != 1 {
			t.Fatalf("tests %+v", r.Tests)
		}
		d := r.Tests[0]
		eq(t, "category", d.Category, "Deployment")
		eq(t, "name (row not pasted)", d.Name, "")
		eq(t, "result", d.Result, "FAIL")
		eqSlice(t, "error note", d.Warnings, []string{"GPU 3 has uncorrectable memory errors and row remappings are pending"})
		eq(t, "overall", r.Result, "FAIL")
		if findingFor(rep.Common(), "dcgm-test-failed", "3") == nil {
			t.Errorf("the failure should name GPU 3; findings:\n%s", dumpFindings(rep.Common()))
		}
	}},
	// nccl-tests: a blank redop cell (alltoall), SuperBench's assertions.
	{"testdata/nccl/alltoall-blank-redop-a100-40g-x8-superbench.log", KindNCCL, diag.ReportOK, []string{"nccl-not-validated"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "collective", r.Collective, "alltoall_perf")
		eq(t, "inferred", r.CollectiveInferred, true)
		checkRows(t, r, 34, 0, 8589934592)
		checkNCCLLargest(t, r, 33508, 256.36, 224.31)
		eqp(t, "avg", r.AvgBusBandwidthGBps, 58.6481)
	}},
	{"testdata/nccl/allreduce-a100-40g-x8-superbench.log", KindNCCL, diag.ReportOK, []string{"nccl-not-validated"}, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "collective", r.Collective, "all_reduce_perf")
		checkNCCLLargest(t, r, 63896, 134.44, 235.26)
	}},
	// nccl-tests across two EFA nodes (EKS Blueprints): NCCL's network
	// and aws-ofi-nccl's provider are read from the INFO lines.
	{"testdata/nccl/allreduce-2node-t4-efa-eks-blueprints.log", KindNCCL, diag.ReportOK, nil, func(t *testing.T, rep Report) {
		r := ncclOf(rep)
		eq(t, "ranks", r.Ranks, 2)
		eq(t, "networks", strings.Join(r.Networks, ","), "AWS Libfabric")
		eq(t, "providers", strings.Join(r.OFIProviders, ","), "efa")
		eq(t, "nccl", r.NCCLVersion, "2.12.7+cuda11.4")
		checkNCCLLargest(t, r, 344981, 3.11, 3.11)
	}},
}

func init() { corpusCases = append(corpusCases, busyCases...) }

type migWant struct {
	index, gi, ci int
	totalMiB      int64
	usedMiB       int64
	sms           int
}

func checkMIG(t *testing.T, got []MIGDevice, want []migWant) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("MIG devices = %d, want %d", len(got), len(want))
		return
	}
	for i, w := range want {
		d := got[i]
		eq(t, "mig index", d.Index, w.index)
		eqp(t, "mig GI", d.GPUInstanceID, w.gi)
		eqp(t, "mig CI", d.ComputeInstanceID, w.ci)
		eqp(t, "mig memory", d.MemoryMiB, w.totalMiB)
		eqp(t, "mig memory used", d.MemoryUsedMiB, w.usedMiB)
		eqp(t, "mig SMs", d.Multiprocessors, w.sms)
	}
}

type sxidWant struct {
	code    int
	sw, bus string
	link    int
	fatal   bool
	count   int
}

func checkSXIDs(t *testing.T, got []SXIDCount, want []sxidWant) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("SXids = %+v, want %d", got, len(want))
		return
	}
	for i, w := range want {
		x := got[i]
		eq(t, "sxid code", x.Code, w.code)
		eq(t, "sxid switch", x.Switch, w.sw)
		eq(t, "sxid bus", x.BusID, w.bus)
		eqp(t, "sxid link", x.Link, w.link)
		eqp(t, "sxid fatal", x.Fatal, w.fatal)
		eq(t, "sxid count", x.Count, w.count)
	}
}

// checkNCCLLargest asserts the out-of-place time, algbw and busbw of the
// largest size.
func checkNCCLLargest(t *testing.T, r *NCCLReport, timeUs, algbw, busbw float64) {
	t.Helper()
	row := r.largestRow()
	if row == nil || row.OutOfPlace == nil {
		t.Fatalf("no largest row")
	}
	eq(t, "time", row.OutOfPlace.TimeUs, timeUs)
	eq(t, "algbw", row.OutOfPlace.AlgbwGBps, algbw)
	eq(t, "busbw", row.OutOfPlace.BusBandwidthGBps, busbw)
}
