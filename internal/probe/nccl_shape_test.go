package probe

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// ncclShapeRules are the rules that judge a curve on its own shape.
var ncclShapeRules = []string{"nccl-busbw-drop", "nccl-inplace-divergence", "nccl-duplicate-size"}

// shapeRulesOf lists the shape rules among h's findings, in order.
func shapeRulesOf(h *Header) []string {
	out := []string{}
	for _, f := range h.Findings {
		for _, r := range ncclShapeRules {
			if f.Rule == r {
				out = append(out, f.Rule)
			}
		}
	}
	return out
}

// Every real nccl-tests output of the corpus and testdata is judged on its
// curve: only the collapse of NVIDIA/nccl#1453 gets a shape finding; the
// healthy curves (plateaus with noise, a 1.2x in-place dip at 2 MiB on the
// A100) get none.
func TestNCCLShapeOfRealCurves(t *testing.T) {
	n := 0
	for _, c := range corpusCases {
		if c.kind != KindNCCL {
			continue
		}
		r, err := Parse(KindAuto, readFile(t, source(c.file)))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		n++
		want := []string{}
		if strings.Contains(c.file, "busbw-collapse") {
			want = []string{"nccl-busbw-drop", "nccl-inplace-divergence"}
		}
		eqSlice(t, c.file+" shape findings", shapeRulesOf(r.Common()), want)
	}
	if n < 15 {
		t.Errorf("only %d nccl-tests outputs judged", n)
	}
}

// The collapse of NVIDIA/nccl#1453: busbw 29.50 GB/s at 32 MiB falls to
// 5.27 at 64 MiB and stays there (5.31 at 512 MiB): 5.6x below the peak,
// a fail, for both halves; the 2 MiB row's halves differ 5.6x.
func TestNCCLBusbwDropOfRealCollapse(t *testing.T) {
	r := ncclOf(parseFile(t, "testdata/nccl/allreduce-mpirun-tag-output-busbw-collapse-64m-excerpt.log"))
	f := findingFor(&r.Header, "nccl-busbw-drop", "")
	if f == nil || f.Severity != diag.SeverityError || r.Verdict != diag.ReportFail {
		t.Fatalf("%s; findings:\n%s", r.Verdict, dumpFindings(&r.Header))
	}
	for _, want := range []string{
		"out-of-place busbw 29.50 GB/s at 33554432 B, the curve's peak, against 5.31 GB/s at 536870912 B, the largest size (5.6x lower; the sharpest fall 29.50 -> 5.27 GB/s from 33554432 to 67108864 B)",
		"in-place busbw 28.14 GB/s at 33554432 B, the curve's peak, against 5.33 GB/s at 536870912 B, the largest size (5.3x lower; the sharpest fall 28.14 -> 5.27 GB/s from 33554432 to 67108864 B)",
	} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q lacks %q", f.Message, want)
		}
	}
	d := findingFor(&r.Header, "nccl-inplace-divergence", "")
	if d == nil || d.Severity != diag.SeverityWarning || !strings.Contains(d.Message, "at 1 sizes") || !strings.Contains(d.Message, "2097152 B: out-of-place 1.73, in-place 9.65 GB/s") {
		t.Errorf("divergence %+v", d)
	}
}

func parseFile(t *testing.T, path string) Report {
	t.Helper()
	r, err := Parse(KindAuto, readFile(t, source(path)))
	if err != nil {
		t.Fatal(path, err)
	}
	return r
}

// ncclBase is the healthy real curve the derived cases scale: 8 A100s,
// 8 B to 4 GiB, busbw rising to a 228-232 GB/s plateau.
const ncclBase = "nccl-tests/a100-sxm4-80gb-x8-allreduce-g8-4G.txt"

// scaleNCCLRows rewrites the result rows of a real output: each half's
// algbw and busbw are multiplied by the factor f gives for the row's size
// and half (0 out-of-place, 1 in-place) and its time divided by it, as a
// slower or faster link would print them. Other lines stay as they are.
func scaleNCCLRows(t *testing.T, data []byte, f func(size int64, half int) float64) []byte {
	t.Helper()
	return eachLineBytes(data, func(_ int, l string) string {
		tok := strings.Fields(l)
		if len(tok) != 13 || !isIntToken(tok[0]) || strings.HasPrefix(l, "#") {
			return l
		}
		size, _ := strconv.ParseInt(tok[0], 10, 64)
		for half, at := range []int{5, 9} {
			k := f(size, half)
			tm, _ := strconv.ParseFloat(tok[at], 64)
			alg, _ := strconv.ParseFloat(tok[at+1], 64)
			bus, _ := strconv.ParseFloat(tok[at+2], 64)
			tok[at], tok[at+1], tok[at+2] = fmt.Sprintf("%.1f", tm/k), fmt.Sprintf("%.2f", alg*k), fmt.Sprintf("%.2f", bus*k)
		}
		return "  " + strings.Join(tok, "  ")
	})
}

// The shape rules on curves derived from the real A100 run, each scaled
// the way one fault would show: the verdict, the shape findings and what
// the message names.
func TestNCCLShapeOfDerivedCurves(t *testing.T) {
	base := readFile(t, source(ncclBase))
	both := func(from int64, k float64) func(int64, int) float64 {
		return func(size int64, _ int) float64 {
			if size >= from {
				return k
			}
			return 1
		}
	}
	for _, c := range []struct {
		name    string
		scale   func(int64, int) float64
		verdict diag.ReportVerdict
		rules   []string
		says    string
	}{
		{"unchanged", both(0, 1), diag.ReportOK, []string{}, ""},
		{"10x down from 256 MiB: a collapse", both(256<<20, 0.1), diag.ReportFail, []string{"nccl-busbw-drop"},
			"out-of-place busbw 179.99 GB/s at 134217728 B, the curve's peak, against 23.24 GB/s at 4294967296 B, the largest size (7.7x lower; the sharpest fall 179.99 -> 19.63 GB/s from 134217728 to 268435456 B)"},
		{"3.3x down from 256 MiB: a fall", both(256<<20, 0.3), diag.ReportUnknown, []string{"nccl-busbw-drop"}, "(2.6x lower;"},
		{"1.7x down from 256 MiB: within the rule", both(256<<20, 0.6), diag.ReportOK, []string{}, ""},
		{"10x down below 1 MiB: latency-bound sizes", func(size int64, _ int) float64 {
			if size < 1<<20 {
				return 0.1
			}
			return 1
		}, diag.ReportOK, []string{}, ""},
		{"0.6x at every size from 64 MiB: a decline without a sharp step", func(size int64, _ int) float64 {
			k := 1.0
			for s := int64(64 << 20); s <= size; s *= 2 {
				k *= 0.6
			}
			return k
		}, diag.ReportFail, []string{"nccl-busbw-drop"}, "out-of-place busbw 133.71 GB/s at 33554432 B, the curve's peak, against 6.51 GB/s at 4294967296 B"},
		{"5x down at 512 MiB only: a dip the curve recovers from", func(size int64, _ int) float64 {
			if size == 512<<20 {
				return 0.2
			}
			return 1
		}, diag.ReportOK, []string{}, ""},
		{"in-place 2.5x down at 1 GiB only", func(size int64, half int) float64 {
			if size == 1<<30 && half == 1 {
				return 0.4
			}
			return 1
		}, diag.ReportOK, []string{"nccl-inplace-divergence"}, "1073741824 B: out-of-place 227.83, in-place 91.21 GB/s"},
		{"in-place 10x down from 256 MiB", func(size int64, half int) float64 {
			if size >= 256<<20 && half == 1 {
				return 0.1
			}
			return 1
		}, diag.ReportFail, []string{"nccl-busbw-drop", "nccl-inplace-divergence"}, "in-place busbw 178.98 GB/s at 134217728 B"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := scaleNCCLRows(t, base, c.scale)
			r, err := Parse(KindAuto, data)
			if err != nil {
				t.Fatal(err)
			}
			h := r.Common()
			eq(t, "verdict", h.Verdict, c.verdict)
			eqSlice(t, "shape findings", shapeRulesOf(h), c.rules)
			if c.says != "" && !strings.Contains(dumpFindings(h), c.says) {
				t.Errorf("findings do not say %q:\n%s", c.says, dumpFindings(h))
			}
			if strings.HasPrefix(c.name, "in-place 10x") && strings.Contains(findingFor(h, "nccl-busbw-drop", "").Message, "out-of-place busbw") {
				t.Errorf("the out-of-place curve did not fall: %s", dumpFindings(h))
			}
		})
	}
}

// Two runs in one input: the A100 run with its rows pasted again after its
// summary (a second run whose preamble the paste lost): nccl-duplicate-size,
// unknown. The whole run pasted twice shows two
// parameter lines: mixed-input says so, and nccl-duplicate-size does not
// say it again.
func TestNCCLDuplicateSizes(t *testing.T) {
	base := string(readFile(t, source(ncclBase)))
	var rows []string
	for _, l := range strings.Split(base, "\n") {
		if f := strings.Fields(l); len(f) == 13 && isIntToken(f[0]) {
			rows = append(rows, l)
		}
	}
	r := parseText(t, base+strings.Join(rows, "\n")+"\n")
	h := r.Common()
	f := findingFor(h, "nccl-duplicate-size", "")
	if f == nil || h.Verdict != diag.ReportUnknown || hasRule(h, "mixed-input") || !strings.Contains(f.Message, "30 result rows follow the summary lines (Out of bounds values, Avg bus bandwidth), which nccl-tests prints once, at the end of a run, and the size column starts again (8 B after 4294967296 B): the rows hold more than one run") {
		t.Errorf("rows pasted again: %s\n%s", h.Verdict, dumpFindings(h))
	}
	eq(t, "rows", len(ncclOf(r).Rows), 2*len(rows))

	twice := parseText(t, base+"\n"+base).Common()
	if !hasRule(twice, "mixed-input") || hasRule(twice, "nccl-duplicate-size") || twice.Verdict != diag.ReportUnknown {
		t.Errorf("run pasted twice: %s\n%s", twice.Verdict, dumpFindings(twice))
	}

	// One run sweeps its sizes again for each data type (-d all),
	// reduction (-o all), root or cycle (-N), before its one summary: no
	// duplicate, and each sweep is judged on its own curve: a collapse in
	// the second one (half, 10x down from 256 MiB) names that sweep.
	summary := strings.Index(base, "# Out of bounds")
	var half []string
	for _, l := range rows {
		f := strings.Fields(l)
		f[2] = "half"
		if size, _ := strconv.ParseInt(f[0], 10, 64); size >= 256<<20 {
			f[7], f[11] = "19.63", "19.63"
		}
		half = append(half, "  "+strings.Join(f, "  "))
	}
	for name, c := range map[string]struct {
		sweep []string
		rules []string
		says  string
	}{
		"-d all":       {half, []string{"nccl-busbw-drop"}, "sweep 2 (half sum): out-of-place busbw 179.99 GB/s at 134217728 B"},
		"run cycles 2": {rows, []string{}, ""},
	} {
		data := base[:summary] + strings.Join(c.sweep, "\n") + "\n" + base[summary:]
		h := parseText(t, data).Common()
		eqSlice(t, name+" shape findings", shapeRulesOf(h), c.rules)
		if !strings.Contains(dumpFindings(h), c.says) {
			t.Errorf("%s: findings do not say %q:\n%s", name, c.says, dumpFindings(h))
		}
	}
}

func parseText(t *testing.T, s string) Report {
	t.Helper()
	r, err := Parse(KindAuto, []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Result rows pasted without the preamble, the header or the summary are
// recognised as nccl-tests: with no failure they are a fragment that cannot
// judge the node (unknown, output-truncated); with wrong values (#wrong 2
// at the two largest sizes) they fail on them, with the fragment noted.
func TestNCCLRowFragments(t *testing.T) {
	base := string(readFile(t, source(ncclBase)))
	var rows, wrong []string
	for _, l := range strings.Split(base, "\n") {
		f := strings.Fields(l)
		if len(f) != 13 || !isIntToken(f[0]) {
			continue
		}
		rows = append(rows, l)
		if size, _ := strconv.ParseInt(f[0], 10, 64); size >= 2<<30 {
			f[8], f[12] = "2", "2"
			l = "  " + strings.Join(f, "  ")
		}
		wrong = append(wrong, l)
	}
	rows, wrong = rows[len(rows)-12:], wrong[len(wrong)-12:]
	for _, c := range []struct {
		name    string
		text    string
		verdict diag.ReportVerdict
		rules   []string
	}{
		{"rows", strings.Join(rows, "\n") + "\n", diag.ReportUnknown, []string{"output-truncated"}},
		{"rows with wrong values", strings.Join(wrong, "\n") + "\n", diag.ReportFail, []string{"nccl-wrong-results", "output-truncated"}},
	} {
		if k, err := Detect([]byte(c.text)); k != KindNCCL || err != nil {
			t.Errorf("%s: Detect = %q, %v", c.name, k, err)
			continue
		}
		h := parseText(t, c.text).Common()
		eq(t, c.name+" verdict", h.Verdict, c.verdict)
		for _, rule := range c.rules {
			if !hasRule(h, rule) {
				t.Errorf("%s: no %s:\n%s", c.name, rule, dumpFindings(h))
			}
		}
		if f := findingFor(h, "output-truncated", ""); f == nil || !strings.Contains(f.Message, "a fragment of an nccl-tests run") {
			t.Errorf("%s: %+v", c.name, f)
		}
	}
	if f := findingFor(parseText(t, strings.Join(wrong, "\n")).Common(), "nccl-wrong-results", ""); f == nil || !strings.Contains(f.Message, "(wrong elements 8) at 2 sizes (2147483648, 4294967296 B)") {
		t.Errorf("wrong results %+v", f)
	}
	// One row alone is not enough to tell nccl-tests.
	if k, err := Detect([]byte(rows[0] + "\n")); err == nil {
		t.Errorf("one row detected as %s", k)
	}
}

// A whole run that stops below 1 MiB measured latency only: not-exercised,
// unknown; the same run up to its own largest size is judged as before.
func TestNCCLRunBelowTheFloorIsNotExercised(t *testing.T) {
	data := readString(t, "testdata/nccl/allreduce-a100-40g-x8-superbench.log")
	var kept []string
	for _, l := range strings.Split(data, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil && n >= 1<<20 {
				continue // the rows of 1 MiB and more
			}
		}
		kept = append(kept, l)
	}
	r := ParseNCCL([]byte(strings.Join(kept, "\n")))
	if r.Verdict != diag.ReportUnknown || !hasRule(&r.Header, "not-exercised") {
		t.Errorf("a run below 1 MiB: %s, findings:\n%s", r.Verdict, dumpFindings(&r.Header))
	}
	if whole := ParseNCCL([]byte(data)); hasRule(&whole.Header, "not-exercised") {
		t.Errorf("the whole run is not-exercised:\n%s", dumpFindings(&whole.Header))
	}
}
