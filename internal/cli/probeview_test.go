package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// Arrays are [] and unknown values null, in JSON and YAML alike.
func TestProbeReportJSONAndYAML(t *testing.T) {
	r, err := probe.Parse(probe.KindNvidiaSMI, []byte("No devices were found\n"))
	if err != nil {
		t.Fatal(err)
	}
	var js, ym bytes.Buffer
	if err := render.ProbeReport(&js, render.FormatJSON, false, r, probeView(r)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"gpus": []`, `"attachedGPUs": null`, `"kind": "no-devices"`, `"verdict": "fail"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, js.String())
		}
	}
	if err := render.ProbeReport(&ym, render.FormatYAML, false, r, probeView(r)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gpus: []", "attachedGPUs: null", "verdict: fail"} {
		if !strings.Contains(ym.String(), want) {
			t.Errorf("YAML lacks %s:\n%s", want, ym.String())
		}
	}
	if err := render.ProbeReport(&js, "xml", false, r, probeView(r)); err == nil {
		t.Error("xml accepted")
	}
}
