package probe

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// fuzzSeedBytes caps a seed while fuzzing. The fuzzer minimises every input
// that finds new coverage by re-running it thousands of times; with whole
// 70 KiB outputs as seeds it spent minutes minimising and managed a few dozen
// executions. The first lines of an output carry its shape, so a seed's head
// explores as much. `go test` without -fuzz runs every seed whole.
const fuzzSeedBytes = 4 << 10

// seeds adds every corpus and testdata file to f: each parser also sees the
// other kinds' outputs.
func seeds(f *testing.F) {
	f.Helper()
	fuzzing := false
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" {
		fuzzing = true
	}
	for _, root := range []string{corpusDir, "testdata"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".source") || strings.Contains(path, "testdata/fuzz") {
				return nil
			}
			data := readFile(f, path)
			if fuzzing && len(data) > fuzzSeedBytes {
				data = data[:fuzzSeedBytes]
				if i := bytes.LastIndexByte(data, '\n'); i > 0 {
					data = data[:i+1]
				}
			}
			f.Add(data)
			return nil
		})
		if err != nil {
			f.Fatalf("fuzz seeds: %v", err)
		}
	}
}

// checkInvariants holds for every report of every input: a verdict of the
// three, findings never nil, error findings exactly when the verdict fails,
// and a JSON encoding.
func checkInvariants(t *testing.T, r Report) {
	t.Helper()
	h := r.Common()
	switch h.Verdict {
	case diag.ReportOK, diag.ReportFail, diag.ReportUnknown:
	default:
		t.Fatalf("verdict %q", h.Verdict)
	}
	if h.Findings == nil || h.FormatVersion != FormatVersion {
		t.Fatalf("header %+v", h)
	}
	hasError := false
	for _, f := range h.Findings {
		switch f.Severity {
		case diag.SeverityError:
			hasError = true
		case diag.SeverityWarning, diag.SeverityInfo:
		default:
			t.Fatalf("severity %q", f.Severity)
		}
		if f.Rule == "" || f.Message == "" {
			t.Fatalf("finding %+v", f)
		}
	}
	if hasError != (h.Verdict == diag.ReportFail) {
		t.Fatalf("verdict %s with findings %v", h.Verdict, h.Findings)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatalf("json: %v", err)
	}
}

func fuzzKind(f *testing.F, kind Kind) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(kind, data)
		if err != nil {
			return
		}
		if r.Common().Kind != kind && kind != KindAuto {
			t.Fatalf("kind %s", r.Common().Kind)
		}
		checkInvariants(t, r)
	})
}

func FuzzParseNvidiaSMI(f *testing.F)    { fuzzKind(f, KindNvidiaSMI) }
func FuzzParseTopo(f *testing.F)         { fuzzKind(f, KindTopo) }
func FuzzParseNCCL(f *testing.F)         { fuzzKind(f, KindNCCL) }
func FuzzParseCUDA(f *testing.F)         { fuzzKind(f, KindCUDA) }
func FuzzParseDCGM(f *testing.F)         { fuzzKind(f, KindDCGM) }
func FuzzParseDmesg(f *testing.F)        { fuzzKind(f, KindDmesg) }
func FuzzParseComponentLog(f *testing.F) { fuzzKind(f, KindComponentLog) }

// FuzzParseAuto checks that detection and the parser it picks agree.
func FuzzParseAuto(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := Detect(data)
		r, perr := Parse(KindAuto, data)
		if (err == nil) != (perr == nil) {
			t.Fatalf("Detect err %v, Parse err %v", err, perr)
		}
		if err != nil {
			return
		}
		if r.Common().Kind != k {
			t.Fatalf("Detect %s, report kind %s", k, r.Common().Kind)
		}
		checkInvariants(t, r)
	})
}
