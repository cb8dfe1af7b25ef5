package probe

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// parseAuto parses data as Parse(KindAuto) does and fails the test on an
// error.
func parseAuto(t *testing.T, data string) Report {
	t.Helper()
	r, err := Parse(KindAuto, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A -q fragment with nothing failing in it is nvidia-smi output, read, and
// unknown: the rest of the GPU's block is not shown.
func TestQueryFragmentWithNothingFailingIsUnknown(t *testing.T) {
	data := readString(t, "testdata/nvidia-smi/q-fragment-remapped-rows-pending-yes-uncorrectable-4-excerpt.txt")
	data = strings.Replace(data, "Yes", "No", 1)
	data = strings.Replace(data, ": 4", ": 0", 1)
	r := smiOf(parseAuto(t, data))
	if r.Verdict != diag.ReportUnknown || !hasRule(&r.Header, "output-fragment") || len(r.Findings) != 1 {
		t.Errorf("%s; findings:\n%s", r.Verdict, dumpFindings(&r.Header))
	}
	eqp(t, "remap pending", r.GPUs[0].RowRemapPending, false)
	eqp(t, "remapped uncorrectable", r.GPUs[0].RowsRemappedUncorrectable, 0)
}

// A section of a whole -q output that does not start with its heading, or
// a heading followed by keys of another section, is no fragment.
func TestQueryFragmentNeedsItsHeading(t *testing.T) {
	data := readString(t, "testdata/nvidia-smi/q-fragment-remapped-rows-pending-yes-uncorrectable-4-excerpt.txt")
	for name, in := range map[string]string{
		"no heading":   data[strings.Index(data, "\n")+1:],
		"foreign keys": strings.Replace(data, "Correctable Error", "Product Name", 1),
	} {
		if _, err := Parse(KindAuto, []byte(in)); err == nil {
			t.Errorf("%s: read as a known tool's output", name)
		}
	}
}

// Header cells nvidia-smi ran together (`NIC11CPU Affinity`, `NIC11NIC12`)
// are split on the column names: the NICs and the affinities are those the
// notes read.
func TestTopoGluedHeaderColumns(t *testing.T) {
	r := topoOf(parseAuto(t, readString(t, "testdata/topo/topo-m-b200-x8-nv18-12nic-vllm-excerpt.txt")))
	eq(t, "12nic: nics", len(r.NICs), 12)
	eq(t, "12nic: last nic", r.NICs[11], "NIC11")
	eq(t, "12nic: GPU1-NIC3", r.Link("GPU1", "NIC3"), "PIX")
	eq(t, "12nic: GPU0-NIC11", r.Link("GPU0", "NIC11"), "SYS")
	eq(t, "12nic: GPU2 cpus", r.CPUAffinity["GPU2"], "28-55,140-167")
	eq(t, "12nic: GPU2 numa", r.NUMAAffinity["GPU2"], "1")
	eq(t, "12nic: GPU2 gpu numa id", r.GPUNUMAID["GPU2"], "N/A")

	r = topoOf(parseAuto(t, readString(t, "testdata/topo/topo-m-b200-x8-nv18-13nic-vllm-excerpt.txt")))
	eq(t, "13nic: nics", len(r.NICs), 13)
	eq(t, "13nic: GPU0-NIC11", r.Link("GPU0", "NIC11"), "PIX")
	eq(t, "13nic: GPU0-NIC12", r.Link("GPU0", "NIC12"), "NODE")
	eq(t, "13nic: GPU3-NIC8", r.Link("GPU3", "NIC8"), "PIX")
	eq(t, "13nic: GPU3 cpus", r.CPUAffinity["GPU3"], "0-15")
	eq(t, "13nic: GPU3 numa", r.NUMAAffinity["GPU3"], "0")
	for _, rep := range []*TopoReport{r} {
		if hasRule(&rep.Header, "output-garbled") || hasRule(&rep.Header, "topo-cpu-affinity") {
			t.Errorf("findings:\n%s", dumpFindings(&rep.Header))
		}
	}
}

// A headerless matrix with nothing failing is unknown, not fail: its
// columns are inferred, and a complete one (every row) is still a fragment.
func TestTopoHeaderlessNothingFailing(t *testing.T) {
	data := readString(t, "testdata/topo/topo-m-x2-nv12-8nic-empty-affinity-vllm-excerpt.txt")
	r := topoOf(parseAuto(t, data[strings.Index(data, "\n")+1:]))
	if r.Verdict != diag.ReportUnknown || !hasRule(&r.Header, "output-fragment") || hasRule(&r.Header, "output-truncated") {
		t.Errorf("%s; findings:\n%s", r.Verdict, dumpFindings(&r.Header))
	}
	eqSlice(t, "gpus", r.GPUs, []string{"GPU0", "GPU1"})
	eq(t, "nics", len(r.NICs), 8)
	eq(t, "GPU0-NIC6", r.Link("GPU0", "NIC6"), "PXB")
	eq(t, "NIC7-NIC6", r.Link("NIC7", "NIC6"), "PIX")
}

// `dcgmi nvlink --link-status` on its own is read as dcgmi's output: the
// Down links fail, with no diag table to ask for.
func TestDCGMLinkStatusAlone(t *testing.T) {
	data := readString(t, "testdata/dcgm/nvlink-link-status-all-down-and-diag-r2-dcgm3.3.7-h100-nvl-x2-excerpt.txt")
	data = data[:strings.Index(data, "dcgmi diag")]
	r := dcgmOf(parseAuto(t, data))
	if r.Verdict != diag.ReportFail || hasRule(&r.Header, "not-dcgm") || len(r.Tests) != 0 {
		t.Errorf("%s, %d tests; findings:\n%s", r.Verdict, len(r.Tests), dumpFindings(&r.Header))
	}
	eq(t, "devices", len(r.LinkStatus), 2)
	up := strings.ReplaceAll(data, " D", " U") // the first link of each GPU too: it follows the indent's spaces
	up = strings.Replace(up, "        U", "        X", 1)
	r = dcgmOf(parseAuto(t, up))
	if r.Verdict != diag.ReportOK || r.LinkStatus[0].Links[0] != "X" || r.LinkStatus[1].Down() != 0 {
		t.Errorf("all up: %s %+v; findings:\n%s", r.Verdict, r.LinkStatus, dumpFindings(&r.Header))
	}
}

// topo-nvlink-missing needs an all-to-all NVLink system: on the H100 x4
// (NV6 between every pair) a GPU whose cells turn to SYS fails; the same
// matrix rewired as two NVLink-bridged pairs (GPU0-GPU1, GPU2-GPU3, SYS
// between the pairs) has no GPU without NVLink and is not judged.
func TestTopoNVLinkMissingNeedsAnAllToAllSystem(t *testing.T) {
	data := strings.Split(readString(t, "testdata/topo/h100-x4-nv6-4nic-cpu-lists-legend-cut.txt"), "\n")
	// cell replaces the link of row r, column c (GPU columns 0-3).
	cell := func(ls []string, r, c int, v string) {
		f := strings.Fields(ls[r+1])
		f[c+1] = v
		ls[r+1] = strings.Join(f, "\t")
	}
	lost := append([]string{}, data...)
	for g := 0; g < 4; g++ {
		if g != 3 {
			cell(lost, 3, g, "SYS")
			cell(lost, g, 3, "SYS")
		}
	}
	r := topoOf(parseAuto(t, strings.Join(lost, "\n")))
	if f := findingFor(&r.Header, "topo-nvlink-missing", "GPU3"); f == nil || r.Verdict != diag.ReportFail || len(r.Findings) != len(topoOf(parseAuto(t, strings.Join(data, "\n"))).Findings)+1 {
		t.Errorf("GPU3 without NVLink: %s; findings:\n%s", r.Verdict, dumpFindings(&r.Header))
	}
	pairs := append([]string{}, data...)
	for _, p := range [][2]int{{0, 2}, {0, 3}, {1, 2}, {1, 3}} {
		cell(pairs, p[0], p[1], "SYS")
		cell(pairs, p[1], p[0], "SYS")
	}
	r = topoOf(parseAuto(t, strings.Join(pairs, "\n")))
	if hasRule(&r.Header, "topo-nvlink-missing") || r.Verdict != diag.ReportOK || r.Link("GPU0", "GPU1") != "NV6" || r.Link("GPU1", "GPU2") != "SYS" {
		t.Errorf("bridged pairs: %s; findings:\n%s", r.Verdict, dumpFindings(&r.Header))
	}
}
