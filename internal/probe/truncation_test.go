package probe

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// cutPoints are where TestTruncatedRealOutputs cuts an output: after a
// third, a half and two thirds of its lines, and in the middle of the line
// after the half.
func cutPoints(data []byte) map[string][]byte {
	var ends []int // the offset after each line's newline
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	n := len(ends)
	out := map[string][]byte{}
	if n < 3 {
		return out
	}
	for _, f := range []struct {
		name     string
		num, den int
	}{{"1/3", 1, 3}, {"1/2", 1, 2}, {"2/3", 2, 3}} {
		out[f.name+" of the lines"] = data[:ends[n*f.num/f.den-1]]
	}
	if from, to := ends[n/2-1], ends[n/2]; to-from > 2 {
		out["mid-line"] = data[:from+(to-from)/2]
	}
	return out
}

// truncationFindings are the findings that say an output is cut, or that
// what is left of it is not enough to judge by.
var truncationFindings = []string{"output-truncated", "output-fragment", "no-gpus-in-output", "not-exercised", "gpu-count-mismatch"}

// reportRecords are the data records of a report, as JSON, in order: the
// GPUs of nvidia-smi, the matrix rows of topo -m, the size rows of
// nccl-tests, the tests of dcgmi diag, the devices of a CUDA sample; nil
// for the kinds whose completeness cannot be told (logs, whose shorter copy
// is a log of fewer events, and the others).
func reportRecords(t *testing.T, r Report) []string {
	var recs []any
	switch rep := r.(type) {
	case *SMIReport:
		for _, g := range rep.GPUs {
			recs = append(recs, g)
		}
	case *TopoReport:
		names := make([]string, 0, len(rep.Matrix))
		for n := range rep.Matrix {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			recs = append(recs, []any{n, rep.Matrix[n], rep.CPUAffinity[n], rep.NUMAAffinity[n], rep.GPUNUMAID[n]})
		}
	case *NCCLReport:
		for _, row := range rep.Rows {
			recs = append(recs, row)
		}
	case *DCGMReport:
		for _, tt := range rep.Tests {
			recs = append(recs, tt)
		}
		for _, s := range rep.LinkStatus {
			recs = append(recs, s)
		}
	case *CUDAReport:
		for _, d := range rep.DeviceInfo {
			recs = append(recs, d)
		}
	default:
		return nil
	}
	out := make([]string, 0, len(recs))
	for _, rec := range recs {
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// TestTruncatedRealOutputs cuts every real output of the corpus at several
// points and reads the cut with the original's kind. A cut shows no failure
// the whole output does not, and once a cut shows one every longer cut
// does; a cut that lost data records (GPUs, matrix rows, size rows, tests)
// is never ok: it fails on what it shows or is unknown with a finding that
// says it is cut; the records it keeps, but the last (which the cut may
// have split), are the original's.
func TestTruncatedRealOutputs(t *testing.T) {
	for _, c := range corpusCases {
		data := readFile(t, source(c.file))
		orig, err := Parse(KindAuto, data)
		if err != nil {
			continue // not read as a known tool's output: a known gap of the corpus
		}
		kind := orig.Common().Kind
		origRecs := reportRecords(t, orig)
		cuts := cutPoints(data)
		names := make([]string, 0, len(cuts))
		for n := range cuts {
			names = append(names, n)
		}
		sort.Slice(names, func(a, b int) bool { return len(cuts[names[a]]) < len(cuts[names[b]]) })
		failed := ""
		for _, name := range names {
			what := fmt.Sprintf("%s cut at %s", c.file, name)
			rep, err := Parse(kind, cuts[name])
			if err != nil {
				t.Errorf("%s: %v", what, err)
				continue
			}
			h := rep.Common()
			if h.Verdict == diag.ReportFail && orig.Common().Verdict != diag.ReportFail {
				t.Errorf("%s: fails where the whole output is %s; findings:\n%s", what, orig.Common().Verdict, dumpFindings(h))
			}
			if failed != "" && h.Verdict != diag.ReportFail {
				t.Errorf("%s: %s, but the shorter cut at %s failed", what, h.Verdict, failed)
			}
			if h.Verdict == diag.ReportFail && failed == "" {
				failed = name
			}
			checkCutRecords(t, what, origRecs, rep, orig.Common().Verdict)
		}
	}
}

// checkCutRecords checks a cut's data records against the original's.
func checkCutRecords(t *testing.T, what string, orig []string, rep Report, origVerdict diag.ReportVerdict) {
	t.Helper()
	cut, h := reportRecords(t, rep), rep.Common()
	if orig == nil {
		return
	}
	for i := 0; i+1 < len(cut); i++ {
		if !slices.Contains(orig, cut[i]) {
			t.Errorf("%s: record %d is not the original's: %s", what, i, truncate(cut[i], 300))
			return
		}
	}
	switch {
	case slices.Equal(orig, cut) || h.Verdict == diag.ReportFail:
		return
	case h.Verdict == diag.ReportOK && !cutUntold(rep):
		t.Errorf("%s: ok with %d of %d records; findings:\n%s", what, len(cut), len(orig), dumpFindings(h))
	case h.Verdict == diag.ReportUnknown && origVerdict == diag.ReportOK && len(cut) > 0 && !slices.ContainsFunc(truncationFindings, func(r string) bool { return hasRule(h, r) }):
		t.Errorf("%s: unknown with %d of %d records, without a finding that the output is cut; findings:\n%s", what, len(cut), len(orig), dumpFindings(h))
	}
}

// cutUntold reports whether a cut ok report is one of the shapes whose cut
// cannot be told from a whole output at a line boundary: nvidia-smi's
// --query-gpu CSV, -L and nvlink -s print a line per GPU or link and
// nothing after the last, and a table without its Processes section ends
// with the border that also closes each GPU's block
// (table-processes-not-shown), so a table cut after a block's border is a
// whole table of fewer GPUs.
func cutUntold(rep Report) bool {
	smi, ok := rep.(*SMIReport)
	if !ok {
		return false
	}
	return hasRule(&smi.Header, "table-processes-not-shown") || slices.Contains([]string{"csv", "list", "nvlink"}, smi.Format)
}
