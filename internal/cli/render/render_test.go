package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/probe"
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

// Arrays are [] and unknown values null, in JSON and YAML alike.
func TestProbeReportJSONAndYAML(t *testing.T) {
	r, err := probe.Parse(probe.KindNvidiaSMI, []byte("No devices were found\n"))
	if err != nil {
		t.Fatal(err)
	}
	var js, ym bytes.Buffer
	if err := ProbeReport(&js, FormatJSON, false, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"gpus": []`, `"attachedGPUs": null`, `"kind": "no-devices"`, `"verdict": "fail"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, js.String())
		}
	}
	if err := ProbeReport(&ym, FormatYAML, false, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gpus: []", "attachedGPUs: null", "verdict: fail"} {
		if !strings.Contains(ym.String(), want) {
			t.Errorf("YAML lacks %s:\n%s", want, ym.String())
		}
	}
	if err := ProbeReport(&js, "xml", false, r); err == nil {
		t.Error("xml accepted")
	}
}
