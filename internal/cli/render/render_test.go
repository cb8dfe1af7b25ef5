package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

func TestTablesTTYAndPlain(t *testing.T) {
	tab := Table{Title: "gpus", Headers: []string{"GPU", "NAME"}, Rows: [][]string{{"0", "NVIDIA H100 80GB HBM3"}, {"1", ""}}}
	var plain, tty bytes.Buffer
	if err := Tables(&plain, false, tab); err != nil {
		t.Fatal(err)
	}
	if got, want := plain.String(), "GPU\tNAME\n0\tNVIDIA H100 80GB HBM3\n1\t-\n"; got != want {
		t.Errorf("plain = %q, want %q", got, want)
	}
	if err := Tables(&tty, true, tab); err != nil {
		t.Fatal(err)
	}
	if got := tty.String(); !strings.HasPrefix(got, "GPUS\nGPU  NAME\n0    NVIDIA H100 80GB HBM3\n") || strings.Contains(got, "\t") {
		t.Errorf("tty = %q", got)
	}
}

// The table shows the view: summary row, non-empty detail tables, findings;
// JSON shows the document, not the view.
func TestProbeReportView(t *testing.T) {
	v := ProbeView{Label: "nvidia-smi (xml)", Verdict: diag.ReportFail, Summary: "driver 535.161.08",
		Details:  []Table{{Title: "gpus", Headers: []string{"GPU"}, Rows: [][]string{{"0"}}}, {Title: "empty", Headers: []string{"X"}}},
		Findings: []diag.Finding{{Rule: "row-remap-pending", Severity: diag.SeverityError, Message: "a row remap is pending", GPU: "0"}}}
	var tab, js bytes.Buffer
	if err := ProbeReport(&tab, FormatTable, false, nil, v); err != nil {
		t.Fatal(err)
	}
	want := "KIND\tVERDICT\tSUMMARY\nnvidia-smi (xml)\tfail\tdriver 535.161.08\n\nGPU\n0\n\nSEVERITY\tRULE\tGPU\tMESSAGE\nerror\trow-remap-pending\t0\ta row remap is pending\n"
	if got := tab.String(); got != want {
		t.Errorf("table = %q, want %q", got, want)
	}
	if err := ProbeReport(&js, FormatJSON, false, map[string]string{"kind": "doc"}, v); err != nil {
		t.Fatal(err)
	}
	if got := js.String(); got != "{\n  \"kind\": \"doc\"\n}\n" {
		t.Errorf("JSON = %q", got)
	}
	if err := ProbeReport(&js, "xml", false, nil, v); err == nil {
		t.Error("xml accepted")
	}
}
