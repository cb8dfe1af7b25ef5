package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/text/encoding/unicode"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// variants are the ways a real output reaches gpuctl other than as the
// tool wrote it, each applied to the whole output.
var variants = map[string]func([]byte) []byte{
	"kubectl-prefix": func(b []byte) []byte {
		return eachLineBytes(b, func(i int, l string) string { return "[pod/gpuctl-probe-7x2kq/probe] " + l })
	},
	"kubectl-prefix-timestamps": func(b []byte) []byte {
		return eachLineBytes(b, func(i int, l string) string {
			return fmt.Sprintf("[pod/gpuctl-probe-7x2kq/probe] 2026-12-03T06:00:%02d.123456789Z %s", i%60, l)
		})
	},
	"kubectl-timestamps": func(b []byte) []byte {
		return eachLineBytes(b, func(i int, l string) string { return fmt.Sprintf("2026-12-03T06:00:%02d.5Z %s", i%60, l) })
	},
	"crlf": func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) },
	"ansi": func(b []byte) []byte {
		return eachLineBytes(b, func(i int, l string) string { return "\x1b[0;32m" + l + "\x1b[0m" })
	},
	// Open MPI's --tag-output: "[job,rank]<stream>:" before every line
	// (untag removes it for every kind).
	"mpirun-tag-output": func(b []byte) []byte {
		return eachLineBytes(b, func(i int, l string) string { return "[1,0]<stdout>:" + l })
	},
	"utf8-bom": func(b []byte) []byte { return append([]byte{0xef, 0xbb, 0xbf}, b...) },
	"utf16le-bom": func(b []byte) []byte {
		return encodeUTF16(b, unicode.LittleEndian)
	},
	"utf16be-bom": func(b []byte) []byte {
		return encodeUTF16(b, unicode.BigEndian)
	},
	// PowerShell's redirect of a Windows tool's output: UTF-16LE and CRLF.
	"powershell": func(b []byte) []byte {
		return encodeUTF16(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")), unicode.LittleEndian)
	},
}

func encodeUTF16(b []byte, e unicode.Endianness) []byte {
	out, err := unicode.UTF16(e, unicode.UseBOM).NewEncoder().Bytes(b)
	if err != nil {
		panic(err)
	}
	return out
}

func eachLineBytes(b []byte, f func(int, string) string) []byte {
	return []byte(eachLine(string(b), f))
}

// TestVariantsOfRealOutputs reads every real output of the corpus and the
// package's testdata in each variant: the kind, the verdict, the findings
// and every fact of the report are those of the output as the tool wrote it.
func TestVariantsOfRealOutputs(t *testing.T) {
	for _, c := range corpusCases {
		data := readFile(t, source(c.file))
		want := reportJSON(t, c.file, data)
		for name, variant := range variants {
			if c.kind == KindComponentLog && strings.Contains(name, "timestamps") {
				// A component log is told by its own timestamps and keeps
				// them, kubectl's too (TestComponentLogKeepsItsTimestamps).
				continue
			}
			got := reportJSON(t, c.file+" "+name, variant(data))
			if got != want {
				t.Errorf("%s, %s: the report differs from the output's:\n got %s\nwant %s", c.file, name, truncate(got, 600), truncate(want, 600))
			}
		}
	}
}

func reportJSON(t *testing.T, what string, data []byte) string {
	t.Helper()
	r, err := Parse(KindAuto, data)
	if err != nil {
		return "error: " + err.Error()
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(what, err)
	}
	return string(b)
}

// Two outputs of one kind pasted together, or two pods' logs collected
// together, are flagged mixed-input: the report mixes their facts. An ok
// output so doubled is unknown; a failing one still fails.
func TestConcatenatedOutputsAreMixedInput(t *testing.T) {
	tried := map[Kind]int{}
	for _, c := range corpusCases {
		data := readFile(t, source(c.file))
		r, err := Parse(KindAuto, data)
		if err != nil {
			continue // not read as a known tool's output (a known gap of the corpus): nothing to double
		}
		h := r.Common()
		if n, _ := outputStarts(h.Kind, data); n != 1 {
			continue // a kind (or a shape: JSON, CSV, -L) that is not counted, or already several
		}
		tried[h.Kind]++
		for name, doubled := range map[string][]byte{
			"pasted twice": append(append(append([]byte{}, data...), '\n'), data...),
			"two pods' logs": append(variants["kubectl-prefix"](data),
				eachLineBytes(data, func(i int, l string) string { return "[pod/gpuctl-probe-9k3lm/probe] " + l })...),
		} {
			got, err := Parse(KindAuto, doubled)
			if err != nil {
				t.Errorf("%s, %s: %v", c.file, name, err)
				continue
			}
			g := got.Common()
			wantVerdict := h.Verdict
			if wantVerdict == diag.ReportOK {
				wantVerdict = diag.ReportUnknown
			}
			if !hasRule(g, "mixed-input") || g.Verdict != wantVerdict || g.Kind != h.Kind {
				t.Errorf("%s, %s: %s %s, want %s %s with mixed-input; findings:\n%s", c.file, name, g.Kind, g.Verdict, h.Kind, wantVerdict, dumpFindings(g))
			}
		}
	}
	t.Logf("outputs doubled, by kind: %v", tried)
	for _, k := range []Kind{KindNvidiaSMI, KindDCGM, KindNCCL} {
		if tried[k] < 2 {
			t.Errorf("only %d %s outputs were doubled", tried[k], k)
		}
	}
}

// Two nvidia-smi tables of one node pasted together (tables without their
// Processes section, so that the second one's GPUs are read) read as twice
// the GPUs: every bus ID is flagged, with the mix.
func TestTwoSMITablesFlagDuplicateBusIDs(t *testing.T) {
	data := readString(t, "testdata/nvidia-smi/table-570-l40-x4-no-processes.txt")
	r := ParseNvidiaSMI([]byte(data + data))
	if len(r.GPUs) != 8 {
		t.Fatalf("%d GPUs, want the 8 rows of both tables", len(r.GPUs))
	}
	f := findingFor(&r.Header, "duplicate-bus-id", "")
	if f == nil || !strings.HasPrefix(f.Message, "4 bus IDs appear more than once") || r.Verdict != diag.ReportUnknown {
		t.Errorf("%s; findings:\n%s", r.Verdict, dumpFindings(&r.Header))
	}
	rep, err := Parse(KindAuto, []byte(data+data))
	if err != nil || !hasRule(rep.Common(), "mixed-input") || !hasRule(rep.Common(), "duplicate-bus-id") {
		t.Errorf("Parse: %v; findings:\n%s", err, dumpFindings(rep.Common()))
	}
}

// mpirun's rank tags are removed where they stand: at each line's start and,
// in the collapse of NVIDIA/nccl#1453, before each half of a result row
// ("-1[0]    1626.5"), so that its rows read as the same rows untagged by
// hand; NCCL's own "[0]" (the CUDA device of "host:pid:tid [0] NCCL INFO")
// stays, and an untagged output is left as it is.
func TestMPITagsAreRemoved(t *testing.T) {
	collapse := readFile(t, "testdata/nccl/allreduce-mpirun-tag-output-busbw-collapse-64m-excerpt.log")
	got, _ := normalize(collapse)
	if bytes.Contains(got, []byte("[0]")) {
		t.Errorf("tags left:\n%s", got)
	}
	byHand := bytes.ReplaceAll(collapse, []byte("[0]"), nil)
	if a, b := reportJSON(t, "collapse", collapse), reportJSON(t, "by hand", byHand); a != b {
		t.Errorf("tagged rows read\n %s\nuntagged by hand\n %s", truncate(a, 600), truncate(b, 600))
	}
	eks, _ := normalize(readFile(t, "testdata/nccl/allreduce-2node-t4-efa-eks-blueprints.log"))
	for _, want := range []string{"\n# nThread 1 nGpus 1 minBytes 1", "\ntest-nccl-efa-worker-1:21:21 [0] NCCL INFO Bootstrap : Using eth0:10.11.5.31<0>\n"} {
		if !bytes.Contains(append([]byte("\n"), eks...), []byte(want)) {
			t.Errorf("normalized EKS run lacks %q", want)
		}
	}
	if bytes.Contains(eks, []byte("<stdout>")) {
		t.Error("EKS run keeps a tag")
	}
	plain := readFile(t, "testdata/nccl/perf-h20-2node-mpirun-cuda-system-not-yet-initialized-excerpt.log")
	if got, _ := normalize(plain); !bytes.Equal(got, plain) {
		t.Errorf("untagged output changed:\n%s", got)
	}
}
