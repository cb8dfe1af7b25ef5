package render

import (
	"bytes"
	"fmt"
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

// A node's health regressions, one per GPU, are one line each under the
// node's table (not one line joined with "; ", which the findings listed
// in each use too), and the summary counts a kind that comes more than
// once; one regression stays on the regressions line.
func TestAcceptTextRegressionsOneALine(t *testing.T) {
	var rs []Regression
	for i := range 3 {
		rs = append(rs, Regression{Kind: "gpu-health-new", Message: fmt.Sprintf("2 new GPU health findings on GPU %d (UUID GPU-%d): a: x; b: y", i, i)})
	}
	n := AcceptNode{Node: "n", RunID: "r", Verdict: diag.Pass, Previous: "r0 (PASS)", Regressions: append([]Regression{{Kind: "busbw-dropped", Message: "20 % below"}}, rs...)}
	var b bytes.Buffer
	if err := AcceptText(&b, false, n); err != nil {
		t.Fatal(err)
	}
	want := "  regressions: 4\n    - busbw-dropped: 20 % below\n" +
		"    - gpu-health-new: 2 new GPU health findings on GPU 0 (UUID GPU-0): a: x; b: y\n" +
		"    - gpu-health-new: 2 new GPU health findings on GPU 1 (UUID GPU-1): a: x; b: y\n" +
		"    - gpu-health-new: 2 new GPU health findings on GPU 2 (UUID GPU-2): a: x; b: y\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("node text:\n%s\nwant it to hold\n%s", b.String(), want)
	}
	b.Reset()
	n.Regressions = n.Regressions[:1]
	if err := AcceptText(&b, false, n); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n  regressions: busbw-dropped: 20 % below\n") {
		t.Errorf("one regression:\n%s", b.String())
	}
	b.Reset()
	n.Regressions = append(n.Regressions, rs...)
	if err := AcceptSummary(&b, []AcceptNode{n}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), " busbw-dropped,gpu-health-new x3 ") {
		t.Errorf("summary:\n%s", b.String())
	}
}
