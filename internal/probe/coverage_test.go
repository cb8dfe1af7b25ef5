package probe

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// A run that exercised nothing of the GPUs is unknown with a not-exercised
// finding, whatever the tool says of the checks that did run. Each case is
// a real output, or a real output cut where the tool would have stopped.
func TestNotExercisedIsUnknown(t *testing.T) {
	dcgmTwice := readString(t, "testdata/dcgm/diag-r3-rtx-pro-6000-bw-x2-only-deployment-ran-dcgm3.3.9-570.txt")
	// The first of the two tables the paste holds, with dcgmi's first line.
	second := strings.Index(dcgmTwice[1:], "+---------------------------+---------------------------------------------"+"---+\n+") + 1
	dcgmOnce := dcgmTwice[:second+len("+---------------------------+------------------------------------------------+\n")]
	dcgmOnce = strings.Replace(dcgmOnce, "Successfully ran diagnostic for group.\n", "", 1)
	if r := ParseDCGM([]byte(dcgmOnce)); len(r.Tests) != 15 || strings.Count(dcgmOnce, "| Diagnostic ") != 1 {
		t.Fatalf("the first table has %d tests, want 15", len(r.Tests))
	}
	smiQ := readString(t, "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt")
	nccl := readString(t, "nccl-tests/a100-sxm4-80gb-x8-allreduce-g8-4G.txt")
	for _, tc := range []struct {
		name, data string
		kind       Kind
		also       string // another finding the output must have
		says       string // a part of the not-exercised message
	}{
		{"dcgm -r 3 only Deployment ran", dcgmOnce, KindDCGM, "", "every Integration, Hardware and Stress test was skipped (Integration/PCIe, Hardware/GPU Memory, Stress/Targeted Stress"},
		// DCGM 4's level 1 runs the software test alone (its JSON, in the
		// shape of the schema dcgm4_test.go cites).
		{"dcgm 4 -r 1 software only", `{"DCGM Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [{"name": "software", "results": [{"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Pass"}], "test_summary": {"status": "Pass"}}]}]}, "metadata": {"version": "4.4.2"}}`, KindDCGM, "", "no Integration, Hardware or Stress test"},
		{"-q header, no GPU block", smiQ[:strings.Index(smiQ, "GPU 00000000:19:00.0")], KindNvidiaSMI, "no-gpus-in-output", "no GPU block"},
		{"nccl-tests header, no rows", nccl[:strings.Index(nccl, "           8             2")], KindNCCL, "nccl-no-results", "no message size was measured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(KindAuto, []byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			h := r.Common()
			if h.Kind != tc.kind || h.Verdict != diag.ReportUnknown {
				t.Errorf("%s %s, want %s unknown; findings:\n%s", h.Kind, h.Verdict, tc.kind, dumpFindings(h))
			}
			f := findingFor(h, "not-exercised", "")
			if f == nil || f.Severity != diag.SeverityWarning || !strings.Contains(f.Message, tc.says) {
				t.Errorf("not-exercised finding %+v, want a warning saying %q", f, tc.says)
			}
			if tc.also != "" && !hasRule(h, tc.also) {
				t.Errorf("no %s finding:\n%s", tc.also, dumpFindings(h))
			}
		})
	}
}

// A Deployment failure is still a failure; a run whose GPU tests ran is
// not flagged.
func TestNotExercisedLeavesRunsThatTestedAlone(t *testing.T) {
	for _, file := range []string{
		"dcgm/h100-x8-diag-r3-cuinit-fail-dcgm3.3.8-driver560.txt",
		"dcgm/v100-pcie-x1-diag-r3-pass-dcgm3.3.9-driver560.txt",
		"testdata/dcgm/diag-deployment-error-row-remap-pending-gpu3-excerpt.txt",
		"testdata/dcgm/diag-r4-json-dcgm4-diagnostic-pass-x8-issue215-excerpt.txt",
	} {
		r, err := Parse(KindAuto, readFile(t, source(file)))
		if err != nil {
			t.Fatal(err)
		}
		if hasRule(r.Common(), "not-exercised") {
			t.Errorf("%s: not-exercised on a run whose GPU tests ran or that is cut short:\n%s", file, dumpFindings(r.Common()))
		}
	}
}
