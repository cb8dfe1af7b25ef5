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

// The fleet summary carries each node's regressions: the JSON lists them
// ([] for none), counts the nodes with any, and the table names their kinds.
func TestFleetCarriesRegressions(t *testing.T) {
	nodes := []AcceptNode{
		{Node: "b", Verdict: diag.Pass, Previous: "r1 (PASS)", Regressions: []Regression{
			{Kind: "busbw-dropped", Message: "NCCL busbw 376.6 GB/s is 20 % below the previous run's 470.7 GB/s (more than 10 %)"},
			{Kind: "driver-changed", Message: "driver 550.54.15, the previous run had 535.161.08"}}},
		{Node: "a", Verdict: diag.Pass, Previous: "r0 (PASS)"},
	}
	f := NewFleet(nodes, 0)
	if f.NodesWithRegressions != 1 || f.Nodes[0].Node != "a" || f.Nodes[0].Regressions == nil || len(f.Nodes[0].Regressions) != 0 ||
		len(f.Nodes[1].Regressions) != 2 || f.Nodes[1].Regressions[0].Kind != "busbw-dropped" || f.Nodes[1].Previous != "r1 (PASS)" {
		t.Fatalf("fleet %+v", f)
	}
	var js, tab bytes.Buffer
	if err := FleetJSON(&js, f); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"nodesWithRegressions": 1`, `"regressions": []`, `"kind": "busbw-dropped"`, `"previous": "r1 (PASS)"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("fleet JSON lacks %s:\n%s", want, js.String())
		}
	}
	if !strings.Contains(FleetLine(f), "1 with regressions") {
		t.Errorf("fleet line %q", FleetLine(f))
	}
	if err := AcceptSummary(&tab, nodes); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(tab.String(), "\n")
	if !strings.Contains(lines[0], "REGRESSIONS") || !strings.Contains(lines[1], "busbw-dropped,driver-changed") || !strings.Contains(lines[2], "  -  ") {
		t.Errorf("summary table:\n%s", tab.String())
	}
}
