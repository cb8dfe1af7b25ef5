package probe

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// TestParseDCGM4Shapes holds the DCGM 4 keys the real excerpt of
// testdata/dcgm/diag-r4-json-dcgm4-diagnostic-pass-x8-issue215-excerpt.txt
// does not have: metadata, entity_groups, a per-entity warning object, a
// summary that fails a test without a failed result, another entity group
// and runtime_error. The documents are gpuctl's, in the shape of DCGM's
// schema (https://github.com/NVIDIA/DCGM/blob/v4.6.0/testing/python3/dcgm_diag_schema.json).
func TestParseDCGM4Shapes(t *testing.T) {
	const meta = `, "entity_groups": [{"entity_group": "GPU", "entity_group_id": 1, "entities": [{"entity_id": 0, "device_id": "2901", "serial_num": "1650000000001"}]}],
 "metadata": {"Driver Version Detected": "580.95.05", "version": "4.6.0"}}`
	for _, tc := range []struct {
		name, doc, version, driver, device string
		verdict                            diag.ReportVerdict
		rules                              []string
		gpu, warning                       string
	}{
		{"fail with a warning object",
			`{"DCGM Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [{"name": "software", "results": [{"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Fail",
 "warnings": [{"error_category": 8, "error_id": 95, "error_severity": 5, "warning": "GPU 0 has uncorrectable memory errors and row remappings are pending"}]}], "test_summary": {"status": "Fail"}}]}]}` + meta,
			"4.6.0", "580.95.05", "2901", diag.ReportFail, []string{"dcgm-test-failed"}, "0", "row remappings are pending"},
		{"summary fails",
			`{"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [{"name": "memory", "results": [{"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Pass"}], "test_summary": {"status": "Fail", "info": ["one result missing"]}}]}]}` + meta,
			"4.6.0", "580.95.05", "2901", diag.ReportFail, []string{"dcgm-test-failed"}, "", ""},
		{"cpu entity",
			`{"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [{"name": "cpu_eud", "results": [{"entity_group": "CPU", "entity_group_id": 7, "entity_id": 1, "status": "Pass"}], "test_summary": {"status": "Pass"}}]}]}` + meta,
			"4.6.0", "580.95.05", "2901", diag.ReportOK, nil, "", ""},
		{"runtime error",
			`{"DCGM Diagnostic": {"runtime_error": "Unable to create a DCGM group"}` + meta,
			"4.6.0", "580.95.05", "2901", diag.ReportUnknown, []string{"dcgm-runtime-error"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ParseDCGM([]byte(tc.doc))
			if r.Format != "json" || r.Version != tc.version || r.DriverVersion != tc.driver || strings.Join(r.DeviceIDs, ",") != tc.device {
				t.Errorf("format %s version %q driver %q devices %v", r.Format, r.Version, r.DriverVersion, r.DeviceIDs)
			}
			if r.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (%+v)", r.Verdict, tc.verdict, r.Findings)
			}
			for _, rule := range tc.rules {
				f := findingFor(&r.Header, rule, tc.gpu)
				if f == nil {
					t.Errorf("no %s finding for GPU %q in %+v", rule, tc.gpu, r.Findings)
				} else if !strings.Contains(f.Message, tc.warning) {
					t.Errorf("%s: %q lacks %q", rule, f.Message, tc.warning)
				}
			}
			if tc.name == "cpu entity" && r.Tests[0].GPUResults[0].GPUIDs != "CPU 1" {
				t.Errorf("entity %+v", r.Tests[0].GPUResults)
			}
		})
	}
}
