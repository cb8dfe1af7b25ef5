package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// The fixtures are what `gpuctl probe nvml -o json` printed on go-nvml's mock
// DGX A100 and H100 (see TestNVMLJSONRoundTripOnMockServers); reading them
// needs no cgo.
func TestParseNVMLFixtures(t *testing.T) {
	for _, tc := range []struct {
		file    string
		verdict diag.ReportVerdict
		gpus    int
		product string
		rules   []string
	}{
		{"nvml-dgxa100-healthy.json", diag.ReportOK, 8, "A100-SXM4-40GB", nil},
		{"nvml-dgxh100-healthy.json", diag.ReportOK, 8, "H100", nil},
		{"nvml-dgxh100-ecc-rowremap.json", diag.ReportFail, 8, "H100", []string{"ecc-uncorrectable@0000:03:00.0", "row-remap-pending@0000:05:00.0"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "nvml", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if k, err := Detect(data); err != nil || k != KindNVML {
				t.Fatalf("Detect = %q, %v", k, err)
			}
			rep, err := Parse(KindAuto, data)
			if err != nil {
				t.Fatal(err)
			}
			r, ok := rep.(*NVMLReport)
			if !ok {
				t.Fatalf("Parse gave %T", rep)
			}
			if r.Verdict != tc.verdict {
				t.Errorf("verdict %s, findings %v", r.Verdict, r.Findings)
			}
			var rules []string
			for _, f := range r.Findings {
				if f.Severity == diag.SeverityError {
					rules = append(rules, f.Rule+"@"+f.GPU)
				}
			}
			if strings.Join(rules, " ") != strings.Join(tc.rules, " ") {
				t.Errorf("error findings %v, want %v", rules, tc.rules)
			}
			if len(r.GPUs) != tc.gpus || !strings.Contains(r.GPUs[0].Name, tc.product) {
				t.Fatalf("%d GPUs, first %q", len(r.GPUs), r.GPUs[0].Name)
			}
			g := r.GPUs[0]
			if !strings.HasPrefix(g.UUID, "GPU-") || g.Serial == "" || g.VBIOS == "" || len(g.NVLinks) == 0 || r.DriverVersion == "" {
				t.Errorf("facts missing: uuid %q serial %q vbios %q nvlinks %d driver %q", g.UUID, g.Serial, g.VBIOS, len(g.NVLinks), r.DriverVersion)
			}
		})
	}
}

func TestParseNVMLRejudgesAndRejects(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "nvml", "nvml-dgxh100-ecc-rowremap.json"))
	if err != nil {
		t.Fatal(err)
	}
	// A report claiming ok with faults in its GPU facts is judged by them.
	forged := strings.Replace(string(data), `"verdict": "fail"`, `"verdict": "ok"`, 1)
	if r := ParseNVML([]byte(forged)); r.Verdict != diag.ReportFail {
		t.Errorf("forged ok: verdict %s", r.Verdict)
	}
	for _, in := range []string{`{"kind": "nvml", "gpus": [`, `{"kind": "dcgm"}`} {
		r, err := Parse(KindNVML, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if r.Common().Verdict != diag.ReportUnknown {
			t.Errorf("%q: verdict %s", in, r.Common().Verdict)
		}
	}
}
