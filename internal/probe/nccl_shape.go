package probe

import (
	"fmt"
	"math"
	"strings"
)

// The bandwidth shape rules judge an nccl-tests run on its own curve, with
// no baseline for the GPU: the bus bandwidth (busbw, algbw scaled by the
// collective's bus factor so that it compares with the hardware's peak,
// https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md,
// checked 2026-12-03) rises with the message size while latency dominates
// and holds a plateau once the size is large. The rules look only at sizes
// of ncclShapeFloorBytes and more, and at the out-of-place and the in-place
// curve separately.
const (
	// ncclShapeFloorBytes is the smallest size the shape rules judge
	// (1 MiB): below it the time is mostly the operation's constant
	// overhead ("Time is useful with small sizes, to measure the constant
	// overhead (or latency)", PERFORMANCE.md), and real curves there are
	// noisy and steep.
	ncclShapeFloorBytes = 1 << 20
	// ncclDropWarnFactor and ncclDropFailFactor: a curve whose busbw at the
	// largest size is more than 2x below its peak at a smaller size
	// (>= 1 MiB) has collapsed and cannot vouch for the node (a warning,
	// verdict unknown); 4x or more is a node or fabric fault (a fail). The
	// healthy real outputs in testdata hold 0.97-1.0 of their peak at the
	// largest size; the collapse of NVIDIA/nccl#1453 falls 5.6x.
	ncclDropWarnFactor = 2.0
	ncclDropFailFactor = 4.0
	// ncclDivergenceFactor: at one size (>= 1 MiB) the out-of-place and
	// in-place busbw measure the same links; one more than 2x below the
	// other is a warning. The healthy real outputs differ by at most 1.2x.
	ncclDivergenceFactor = 2.0
)

// ncclPoint is one size of one half's curve: bytes and busbw in GB/s.
type ncclPoint struct {
	size int64
	bw   float64
}

// ncclHalves names the two halves of a row and reads each.
var ncclHalves = []struct {
	name string
	get  func(NCCLRow) *NCCLResult
}{
	{"out-of-place", func(r NCCLRow) *NCCLResult { return r.OutOfPlace }},
	{"in-place", func(r NCCLRow) *NCCLResult { return r.InPlace }},
}

// judgeNCCLShape applies the shape rules to a report with rows from more
// than one rank: the runs the rows hold (nccl-duplicate-size), then each
// sweep's curve (nccl-busbw-drop, nccl-inplace-divergence).
func judgeNCCLShape(r *NCCLReport, j *judge) {
	sweeps := splitNCCLSweeps(r.Rows)
	if r.rowsAfterSummary > 0 && r.paramLines <= 1 {
		// Two runs each with its parameter line are mixed-input (Parse's
		// markMixed says so); without, the rows after the first run's
		// summary tell.
		j.unusable("nccl-duplicate-size", "", "%d result rows follow the summary lines (Out of bounds values, Avg bus bandwidth), which nccl-tests prints once, at the end of a run%s: the rows hold more than one run pasted together, and the report mixes their results; give the output of one run",
			r.rowsAfterSummary, ncclRestarts(sweeps))
	}
	drops, divergent := []string{}, []string{}
	fail := false
	for i, sw := range sweeps {
		label := ""
		if len(sweeps) > 1 {
			label = fmt.Sprintf("sweep %d (%s): ", i+1, strings.TrimSpace(sw[0].Type+" "+sw[0].Redop))
		}
		for _, h := range ncclHalves {
			if msg, f, ok := ncclDrop(ncclCurve(sw, h.get)); ok {
				drops = append(drops, label+h.name+" "+msg)
				fail = fail || f
			}
		}
		divergent = append(divergent, ncclDivergent(sw, label)...)
	}
	judgeNCCLDrops(j, drops, fail)
	if len(divergent) > 0 {
		j.warn("nccl-inplace-divergence", "", "at %d sizes of 1 MiB or more one half's bus bandwidth is more than %gx below the other's (%s): both measure the same GPUs and links, so one of them was disturbed; rerun, and check for other work on the GPUs",
			len(divergent), ncclDivergenceFactor, truncate(strings.Join(divergent, "; "), 400))
	}
}

// judgeNCCLDrops reports the curves that fell (one message per sweep and
// half) as one nccl-busbw-drop finding: a fail when any fell 4x or more.
func judgeNCCLDrops(j *judge, drops []string, fail bool) {
	if len(drops) == 0 {
		return
	}
	msg := strings.Join(drops, "; ")
	if fail {
		j.fail("nccl-busbw-drop", "", "the bus bandwidth collapses at large sizes: %s; %gx or more below the curve's own peak is a node or fabric fault (a link or NIC fallen back, a failing or congested path)", msg, ncclDropFailFactor)
		return
	}
	j.unusable("nccl-busbw-drop", "", "the bus bandwidth falls at large sizes: %s; more than %gx below the curve's own peak does not show a healthy node (%gx would be a fault)", msg, ncclDropWarnFactor, ncclDropFailFactor)
}

// splitNCCLSweeps splits rows where the size falls back. nccl-tests
// measures its sizes in increasing order, from -b to -e by -f or -i, once
// per data type (-d), reduction (-o), root (-r) and cycle (-N) (TimeTest
// in src/common.cu and its callers in src/*.cu,
// https://github.com/NVIDIA/nccl-tests, checked 2026-12-03; equal sizes
// follow one another where a small size rounds down to whole elements), so
// a smaller size after a larger one starts another sweep: of the same run,
// or of another run pasted after it.
func splitNCCLSweeps(rows []NCCLRow) [][]NCCLRow {
	var sweeps [][]NCCLRow
	start := 0
	for i := 1; i < len(rows); i++ {
		if rows[i].SizeBytes < rows[i-1].SizeBytes {
			sweeps = append(sweeps, rows[start:i])
			start = i
		}
	}
	if len(rows) > start {
		sweeps = append(sweeps, rows[start:])
	}
	return sweeps
}

// ncclRestarts says where the sweeps after the first start (the first
// three); "" for one sweep.
func ncclRestarts(sweeps [][]NCCLRow) string {
	var parts []string
	for i := 1; i < len(sweeps) && i <= 3; i++ {
		prev := sweeps[i-1]
		parts = append(parts, fmt.Sprintf("%d B after %d B", sweeps[i][0].SizeBytes, prev[len(prev)-1].SizeBytes))
	}
	if len(parts) == 0 {
		return ""
	}
	return ", and the size column starts again (" + strings.Join(parts, ", ") + ")"
}

// ncclCurve returns one half's points of a sweep of sizes >= ncclShapeFloorBytes,
// with a finite busbw.
func ncclCurve(sweep []NCCLRow, get func(NCCLRow) *NCCLResult) []ncclPoint {
	var pts []ncclPoint
	for _, row := range sweep {
		res := get(row)
		if res == nil || row.SizeBytes < ncclShapeFloorBytes || math.IsNaN(res.BusBandwidthGBps) || math.IsInf(res.BusBandwidthGBps, 0) {
			continue
		}
		pts = append(pts, ncclPoint{row.SizeBytes, res.BusBandwidthGBps})
	}
	return pts
}

// ncclDrop judges one curve: ok when the busbw at its largest size is more
// than ncclDropWarnFactor below its peak; fail when ncclDropFailFactor or
// more. The message names the peak, the largest size and the sharpest fall
// between neighbouring sizes.
func ncclDrop(pts []ncclPoint) (msg string, fail, ok bool) {
	if len(pts) < 2 {
		return "", false, false
	}
	peak, tail := pts[0], pts[len(pts)-1]
	for _, p := range pts[:len(pts)-1] {
		if p.bw > peak.bw {
			peak = p
		}
	}
	if peak.bw <= 0 || tail.bw*ncclDropWarnFactor >= peak.bw {
		return "", false, false
	}
	factor := math.Inf(1)
	if tail.bw > 0 {
		factor = peak.bw / tail.bw
	}
	from, to := ncclSharpestFall(pts)
	msg = fmt.Sprintf("busbw %.2f GB/s at %d B, the curve's peak, against %.2f GB/s at %d B, the largest size (%.1fx lower; the sharpest fall %.2f -> %.2f GB/s from %d to %d B)",
		peak.bw, peak.size, tail.bw, tail.size, factor, from.bw, to.bw, from.size, to.size)
	return msg, factor >= ncclDropFailFactor, true
}

// ncclSharpestFall returns the neighbouring points with the largest ratio
// of the first's busbw to the second's.
func ncclSharpestFall(pts []ncclPoint) (from, to ncclPoint) {
	best := 0.0
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		ratio := math.Inf(1)
		if b.bw > 0 {
			ratio = a.bw / b.bw
		}
		if ratio > best {
			best, from, to = ratio, a, b
		}
	}
	return from, to
}

// ncclDivergent lists the sizes (>= 1 MiB) of a sweep where one half's busbw
// is more than ncclDivergenceFactor below the other's.
func ncclDivergent(sweep []NCCLRow, label string) []string {
	var out []string
	for _, row := range sweep {
		o, i := row.OutOfPlace, row.InPlace
		if row.SizeBytes < ncclShapeFloorBytes || o == nil || i == nil {
			continue
		}
		lo, hi := min(o.BusBandwidthGBps, i.BusBandwidthGBps), max(o.BusBandwidthGBps, i.BusBandwidthGBps)
		if hi > 0 && lo*ncclDivergenceFactor < hi {
			out = append(out, fmt.Sprintf("%s%d B: out-of-place %.2f, in-place %.2f GB/s", label, row.SizeBytes, o.BusBandwidthGBps, i.BusBandwidthGBps))
		}
	}
	return out
}
