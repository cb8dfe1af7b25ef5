package probe

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// driverInitCases are real kernel logs of GPUs the driver could not bring
// up, without an XID: each failing GPU is named, with the cause the
// driver's lines give and the action it calls for.
var driverInitCases = []corpusCase{
	{"testdata/dmesg/dmesg-gsp-wpr2-already-up-rminitadapter-gpu6-repeated-excerpt.log", KindDmesg, diag.ReportFail, []string{"driver-probe-failed"}, func(t *testing.T, rep Report) {
		checkInitFailures(t, dmesgOf(rep), "0000:a1:00="+InitCauseGSPWPR2+"/reset")
	}},
	{"testdata/dmesg/dmesg-gsp-nvassert-wpr2-rtx3080-laptop-excerpt.log", KindDmesg, diag.ReportFail, []string{"driver-probe-failed"}, func(t *testing.T, rep Report) {
		checkInitFailures(t, dmesgOf(rep), "0000:01:00="+InitCauseGSPWPR2+"/reset")
	}},
	{"testdata/dmesg/dmesg-fsp-boot-timeout-gsp-rminitadapter-h100-cc-excerpt.log", KindDmesg, diag.ReportFail, []string{"driver-probe-failed"}, func(t *testing.T, rep Report) {
		checkInitFailures(t, dmesgOf(rep), "0000:01:00="+InitCauseFSP+"/reset")
	}},
}

func init() {
	corpusCases = append(corpusCases, driverInitCases...)
}

// checkInitFailures asserts the report's driver initialisation failures,
// each "bus=cause/action", in order, and that every one is a finding
// naming its GPU.
func checkInitFailures(t *testing.T, r *DmesgReport, want ...string) {
	t.Helper()
	var got []string
	for _, f := range r.DriverInitFailures {
		got = append(got, f.BusID+"="+f.Cause+"/"+f.Action)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("driver init failures %v, want %v", got, want)
	}
	eq(t, "probe failed", r.ProbeFailed, true)
	eq(t, "xids", len(r.XIDs), 0)
	for _, f := range r.DriverInitFailures {
		found := false
		for _, fd := range r.Findings {
			found = found || (fd.Rule == "driver-probe-failed" && fd.GPU == f.BusID && strings.Contains(fd.Message, f.Cause))
		}
		if !found {
			t.Errorf("no driver-probe-failed finding names GPU %q and %s", f.BusID, f.Cause)
		}
	}
}

// The driver's lines name the stage that failed before the line that
// names the GPU: the stage is the GPU's cause; a retry's lines count on
// the same GPU; a stage line after the only failure is that GPU's; with
// several failing GPUs a stage line naming none is left out.
func TestDriverInitCauseFollowsTheDriversOrder(t *testing.T) {
	for _, c := range []struct {
		name, log string
		want      []string
	}{
		{"stage then gpu", "[ 1.0] NVRM: GPU3 RmInitAdapter: Cannot initialize GSP firmware RM\n[ 1.1] NVRM: GPU 0000:1b:00.0: RmInitAdapter failed! (0x62:0x40:2168)\n",
			[]string{"0000:1b:00=gsp-init/reset"}},
		{"gpu then stage, one gpu", "[ 1.0] NVRM: GPU 0000:98:00.0: RmInitAdapter failed! (0x62:0x65:1792)\n[ 9.0] NVRM: gpuWaitForGfwBootComplete_TU102: failed to wait for GFW_BOOT: (progress 0x3)\n",
			[]string{"0000:98:00=gfw-boot/reboot"}},
		{"two gpus, a stage naming none", "[ 1.0] NVRM: GPU 0000:04:01.0: RmInitAdapter failed! (0x11:0x45:2525)\n[ 1.1] NVRM: GPU 0000:04:02.0: RmInitAdapter failed! (0x11:0x45:2525)\n[ 2.0] NVRM: gpuWaitForGfwBootComplete_TU102: failed to wait for GFW_BOOT: (progress 0x3)\n",
			[]string{"0000:04:01=rm-init/reset", "0000:04:02=rm-init/reset"}},
		{"probe without a gpu", "[ 1.0] NVRM: No NVIDIA graphics adapter probed!\n", []string{"=probe/investigate"}},
	} {
		r := ParseDmesg([]byte(c.log))
		var got []string
		for _, f := range r.DriverInitFailures {
			got = append(got, f.BusID+"="+f.Cause+"/"+f.Action)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") || r.Verdict != diag.ReportFail {
			t.Errorf("%s: %v %s, want %v fail", c.name, got, r.Verdict, c.want)
		}
	}
}

// An XID line whose bus ID a paste redacted ("PCI:...") is still an XID of
// that (unnamed) GPU, judged by its code.
func TestRedactedXIDBusIsCounted(t *testing.T) {
	r := ParseDmesg([]byte("[  100.1] NVRM: Xid (PCI:...): 79, pid=1234, name=python, GPU has fallen off the bus.\n"))
	if len(r.XIDs) != 1 || r.XIDs[0].Code != 79 || r.XIDs[0].BusID != "..." || !hasRule(&r.Header, "xid-reboot") {
		t.Errorf("xids %+v, findings:\n%s", r.XIDs, dumpFindings(&r.Header))
	}
}

// runtimeCases: a GPU the driver had brought up stops answering, and the
// log has no XID for it.
var runtimeCases = []corpusCase{
	{"testdata/dmesg/dmesg-595.71.05-gsp-heartbeat-timeout-memsys-error-no-xid-excerpt.log", KindDmesg, diag.ReportFail, []string{"driver-gpu-lost"}, func(t *testing.T, rep Report) {
		r := dmesgOf(rep)
		eq(t, "xids", len(r.XIDs), 0)
		eq(t, "probe failed", r.ProbeFailed, false)
		if len(r.DriverRuntimeFailures) != 1 {
			t.Fatalf("runtime failures %+v", r.DriverRuntimeFailures)
		}
		f := r.DriverRuntimeFailures[0]
		if f.Device != "GPU6" || f.BusID != "" || f.Cause != RuntimeCauseMemsys || f.Action != XIDReset || f.Count != 4 {
			t.Errorf("runtime failure %+v", f)
		}
	}},
}

func init() {
	corpusCases = append(corpusCases, runtimeCases...)
}
