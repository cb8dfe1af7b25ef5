package probe

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// NCCLReport is the output of an nccl-tests binary (all_reduce_perf,
// all_gather_perf, ...), read from its text table or from the JSON file it
// writes with -J. Bandwidths are in GB/s (10^9 bytes per second) and times in
// µs, as nccl-tests prints them; busbw is algbw scaled by the collective's
// bus factor (nccl-tests doc/PERFORMANCE.md).
type NCCLReport struct {
	Header
	// Format: "text" or "json".
	Format string `json:"format"`
	// Collective is the test binary, e.g. "all_reduce_perf". Older outputs
	// do not print it; then it is inferred from the columns and the
	// size/count ratio and CollectiveInferred is true ("" if that fails).
	Collective         string `json:"collective"`
	CollectiveInferred bool   `json:"collectiveInferred"`
	// TestsVersion is the nccl-tests version; NCCLVersion the NCCL library's
	// ("2.30.7", or as NCCL printed it, "2.9.6+cuda11.2").
	TestsVersion string `json:"testsVersion,omitempty"`
	NCCLVersion  string `json:"ncclVersion,omitempty"`
	// NThreads and NGPUs are the per-process -t and -g; MinBytes and
	// MaxBytes the -b and -e sizes.
	NThreads *int   `json:"nThreads"`
	NGPUs    *int   `json:"nGpus"`
	MinBytes *int64 `json:"minBytes"`
	MaxBytes *int64 `json:"maxBytes"`
	// Ranks is the number of distinct ranks listed under "Using devices".
	Ranks   int        `json:"ranks"`
	Devices []NCCLRank `json:"rankInfo"`
	// ValidationColumn is the header of the correctness column: "#wrong"
	// (count of wrong elements, 2020 and later), "error" (largest error,
	// 2019) or "res" (NCCL 1.x).
	ValidationColumn string    `json:"validationColumn"`
	Rows             []NCCLRow `json:"rows"`
	// AvgBusBandwidthGBps is the "# Avg bus bandwidth" line; nil when absent.
	AvgBusBandwidthGBps *float64 `json:"avgBusbwGBps"`
	// OutOfBounds is the "# Out of bounds values" count; nil when absent.
	OutOfBounds *int `json:"outOfBounds"`
	// LargestSizeBytes and BusBandwidthAtLargestSizeGBps describe the last row of
	// the largest message size: the better of its out-of-place and in-place
	// bus bandwidths. PeakBusBandwidthGBps is the best bus bandwidth of any row.
	LargestSizeBytes              *int64   `json:"largestSizeBytes"`
	BusBandwidthAtLargestSizeGBps *float64 `json:"busbwAtLargestSizeGBps"`
	PeakBusBandwidthGBps          *float64 `json:"peakBusbwGBps"`
	// Errors are the failure lines (NCCL/CUDA failures, MPI aborts);
	// Warnings the "NCCL WARN" lines.
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`

	// redopBlank: the header has a redop column that the rows leave blank
	// (alltoall before nccl-tests 2.13).
	redopBlank bool
}

// NCCLRank is one "#  Rank N Group G Pid P on HOST device D [BUS] NAME" line.
type NCCLRank struct {
	Rank   int    `json:"rank"`
	Group  *int   `json:"group"`
	PID    *int   `json:"pid"`
	Host   string `json:"host"`
	Device int    `json:"device"`
	BusID  string `json:"busId"`
	Name   string `json:"name"`
}

// NCCLRow is one message size.
type NCCLRow struct {
	SizeBytes int64  `json:"sizeBytes"`
	Count     int64  `json:"count"`
	Type      string `json:"type"`
	// Redop is the reduction ("sum", "none"); "" when the layout has no
	// redop column.
	Redop string `json:"redop"`
	// Root is the root rank (-1 for rootless collectives); nil when the
	// layout has no root column.
	Root       *int        `json:"root"`
	OutOfPlace *NCCLResult `json:"outOfPlace"`
	InPlace    *NCCLResult `json:"inPlace"`
}

// NCCLResult is one half (out-of-place or in-place) of a row.
type NCCLResult struct {
	TimeUs           float64 `json:"timeUs"`
	AlgbwGBps        float64 `json:"algbwGBps"`
	BusBandwidthGBps float64 `json:"busbwGBps"`
	// Wrong is the validation value: the number of wrong elements for
	// "#wrong", the largest error for "error"/"res". Nil when validation was
	// off (printed "N/A").
	Wrong *float64 `json:"wrong"`
}

// BusBandwidthAtLargestSize returns the out-of-place and in-place bus bandwidth
// (GB/s) at the largest message size; ok is false without rows.
func (r *NCCLReport) BusBandwidthAtLargestSize() (outOfPlace, inPlace float64, ok bool) {
	row := r.largestRow()
	if row == nil {
		return 0, 0, false
	}
	if row.OutOfPlace != nil {
		outOfPlace = row.OutOfPlace.BusBandwidthGBps
	}
	if row.InPlace != nil {
		inPlace = row.InPlace.BusBandwidthGBps
	}
	return outOfPlace, inPlace, true
}

func (r *NCCLReport) largestRow() *NCCLRow {
	var best *NCCLRow
	for i := range r.Rows {
		if best == nil || r.Rows[i].SizeBytes >= best.SizeBytes {
			best = &r.Rows[i]
		}
	}
	return best
}

var (
	reNCCLTag      = regexp.MustCompile(`^\[\d+(?:,\d+)?\](?:<std(?:out|err)>)?:?\s?`)
	reNCCLParams   = regexp.MustCompile(`nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)`)
	reNCCLVersion  = regexp.MustCompile(`nccl-tests version\s+(\S+)(?:\s+nccl-headers=(\d+))?(?:\s+nccl-library=(\d+))?`)
	reNCCLCompiled = regexp.MustCompile(`NCCL Tests compiled with NCCL\s+(\S+)`)
	reNCCLLibVer   = regexp.MustCompile(`NCCL version\s+(\S+)`)
	reNCCLColl     = regexp.MustCompile(`Collective test (?:starting|concluded):\s*(\S+)`)
	reNCCLRank     = regexp.MustCompile(`^#\s+Rank\s+(\d+)(?:\s+Group\s+(\d+))?(?:\s+Pid\s+(\d+))?\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*?)\s*$`)
	reNCCLOOB      = regexp.MustCompile(`#\s*Out of bounds values\s*:\s*(\d+)`)
	reNCCLAvg      = regexp.MustCompile(`#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+|nan|inf)`)
	reNCCLFileColl = regexp.MustCompile(`\b([a-z_]+)\.cu:\d+`)
)

// ParseNCCL reads nccl-tests output, text or -J JSON.
func ParseNCCL(data []byte) *NCCLReport {
	r := &NCCLReport{Format: "text"}
	j := newJudge(&r.Header, KindNCCL)
	if looksLikeNCCLJSON(data) {
		r.Format = "json"
		if err := parseNCCLJSON(r, j, data); err != nil {
			j.unusable("output-truncated", "", "the nccl-tests JSON is malformed or truncated: %v", err)
		}
	} else {
		parseNCCLText(r, j, data)
	}
	finishNCCL(r)
	judgeNCCL(r, j)
	j.done()
	fillNil(r)
	return r
}

func parseNCCLText(r *NCCLReport, j *judge, data []byte) {
	var header []string
	rankSeen := map[int]bool{}
	for _, raw := range lines(data) {
		l := raw
		if strings.HasPrefix(l, "[") {
			l = reNCCLTag.ReplaceAllString(raw, "")
		}
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if t[0] >= '0' && t[0] <= '9' {
			// Most lines are data rows: try them first.
			fields := strings.Fields(t)
			if row, ok := parseNCCLRow(fields, header); ok {
				if len(fields) == len(header)-1 && slices.Contains(header, "redop") {
					r.redopBlank = true
				}
				if j.room(len(r.Rows), "rows") {
					r.Rows = append(r.Rows, row)
				}
				continue
			}
		}
		if !strings.Contains(t, "nThread") && !strings.HasPrefix(t, "#") && !strings.Contains(t, "NCCL") && !hasFailureWord(t) {
			continue
		}
		if m := reNCCLParams.FindStringSubmatch(t); m != nil && r.NThreads == nil {
			r.NThreads, r.NGPUs = parseIntPtr(m[1]), parseIntPtr(m[2])
			r.MinBytes, r.MaxBytes = parseInt64Ptr(m[3]), parseInt64Ptr(m[4])
			continue
		}
		if m := reNCCLVersion.FindStringSubmatch(t); m != nil {
			r.TestsVersion = m[1]
			if m[3] != "" {
				r.NCCLVersion = ncclVersionCode(m[3])
			}
			continue
		}
		if m := reNCCLCompiled.FindStringSubmatch(t); m != nil {
			r.NCCLVersion = m[1]
			continue
		}
		if m := reNCCLColl.FindStringSubmatch(t); m != nil {
			r.Collective = m[1]
			continue
		}
		if m := reNCCLRank.FindStringSubmatch(t); m != nil {
			rk := NCCLRank{Group: parseIntPtr(m[2]), PID: parseIntPtr(m[3]), Host: m[4], BusID: m[6], Name: m[7]}
			rk.Rank, _ = strconv.Atoi(m[1])
			rk.Device, _ = strconv.Atoi(m[5])
			if j.room(len(r.Devices), "ranks") {
				r.Devices = append(r.Devices, rk)
			}
			rankSeen[rk.Rank] = true
			continue
		}
		if m := reNCCLOOB.FindStringSubmatch(t); m != nil {
			r.OutOfBounds = parseIntPtr(m[1])
			continue
		}
		if m := reNCCLAvg.FindStringSubmatch(t); m != nil {
			r.AvgBusBandwidthGBps = parseFloatPtr(m[1])
			continue
		}
		if strings.HasPrefix(t, "#") {
			tok := strings.Fields(strings.TrimPrefix(t, "#"))
			if containsAll(tok, "algbw", "busbw") {
				header = tok
				r.ValidationColumn = ""
				for _, h := range tok {
					if h == "#wrong" || h == "error" || h == "res" {
						r.ValidationColumn = h
						break
					}
				}
			}
			continue
		}
		if strings.Contains(t, "NCCL WARN") {
			if len(r.Warnings) < 50 {
				r.Warnings = append(r.Warnings, truncate(t, 300))
			}
			continue
		}
		if strings.Contains(t, "NCCL INFO") {
			continue
		}
		if m := reNCCLLibVer.FindStringSubmatch(t); m != nil && r.NCCLVersion == "" && strings.HasPrefix(t, "NCCL version") {
			r.NCCLVersion = m[1]
			continue
		}
		if hasFailureWord(t) {
			if len(r.Errors) < 50 {
				r.Errors = append(r.Errors, truncate(t, 300))
			}
			continue
		}
	}
	r.Ranks = len(rankSeen)
}

func containsAll(tok []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(tok, w) {
			return false
		}
	}
	return true
}

// ncclVersionCode turns NCCL_VERSION_CODE into a version: 23007 -> 2.30.7
// (2.9 and later: major*10000+minor*100+patch), 2708 -> 2.7.8 (older:
// major*1000+minor*100+patch).
func ncclVersionCode(s string) string {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return s
	}
	if n >= 20900 {
		return fmt.Sprintf("%d.%d.%d", n/10000, (n%10000)/100, n%100)
	}
	return fmt.Sprintf("%d.%d.%d", n/1000, (n%1000)/100, n%100)
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// parseNCCLRow maps a data row's tokens to the header's columns. Without a
// usable header it reads the row from both ends: size, count and type first,
// then two groups of time, algbw, busbw and the validation value last.
func parseNCCLRow(tok []string, header []string) (NCCLRow, bool) {
	var row NCCLRow
	if len(tok) < 7 || !isIntToken(tok[0]) || !isIntToken(tok[1]) || isNumber(tok[2]) {
		return row, false
	}
	if r := slices.Index(header, "redop"); r >= 0 && len(tok) == len(header)-1 && r < len(tok) && isNumber(tok[r]) {
		// alltoall and the other collectives without a reduction leave
		// the redop cell blank under a header that has it (nccl-tests
		// before 2.13): the row has one value fewer.
		header = slices.Delete(slices.Clone(header), r, r+1)
	}
	if len(header) >= 8 && len(tok) < len(header) {
		// Fewer values than the header has columns: a row cut short (a
		// truncated paste). Reading it from both ends would shift the
		// columns and turn a time into a #wrong count.
		return row, false
	}
	row.SizeBytes, _ = strconv.ParseInt(tok[0], 10, 64)
	row.Count, _ = strconv.ParseInt(tok[1], 10, 64)
	row.Type = tok[2]
	if len(header) == len(tok) || (len(header) > 0 && len(tok) > len(header) && len(header) >= 8) {
		var results []*NCCLResult
		var cur *NCCLResult
		got := 0
		for i, h := range header {
			if i >= len(tok) {
				break
			}
			v := tok[i]
			switch h {
			case "redop", "op":
				row.Redop = v
			case "root":
				row.Root = parseIntPtr(v)
			case "time", "cputime":
				cur = &NCCLResult{}
				results = append(results, cur)
				cur.TimeUs = parseFloatOr0(v)
				got++
			case "algbw":
				if cur != nil {
					cur.AlgbwGBps = parseFloatOr0(v)
				}
			case "busbw":
				if cur != nil {
					cur.BusBandwidthGBps = parseFloatOr0(v)
				}
			case "#wrong", "error", "res":
				if cur != nil {
					cur.Wrong = parseFloatPtr(v)
				}
			}
		}
		if got >= 1 {
			row.OutOfPlace = results[0]
			if len(results) > 1 {
				row.InPlace = results[1]
			}
			return row, true
		}
	}
	// Read from both ends.
	n := len(tok)
	perf := 8
	if n < 3+8 {
		perf = 4
	}
	mid := tok[3 : n-perf]
	if len(mid) > 2 {
		return row, false
	}
	for _, m := range mid {
		if isIntToken(m) {
			row.Root = parseIntPtr(m)
		} else {
			row.Redop = m
		}
	}
	p := tok[n-perf:]
	for i, v := range p {
		if i%4 != 3 && !isNumber(v) {
			return row, false
		}
	}
	half := func(p []string) *NCCLResult {
		return &NCCLResult{TimeUs: parseFloatOr0(p[0]), AlgbwGBps: parseFloatOr0(p[1]), BusBandwidthGBps: parseFloatOr0(p[2]), Wrong: parseFloatPtr(p[3])}
	}
	row.OutOfPlace = half(p[:4])
	if perf == 8 {
		row.InPlace = half(p[4:])
	}
	return row, true
}

func isIntToken(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func parseFloatOr0(s string) float64 {
	if f := parseFloatPtr(s); f != nil {
		return *f
	}
	return 0
}

// finishNCCL derives the summary fields and the collective.
func finishNCCL(r *NCCLReport) {
	if row := r.largestRow(); row != nil {
		r.LargestSizeBytes = ptr(row.SizeBytes)
		oop, ip, _ := r.BusBandwidthAtLargestSize()
		r.BusBandwidthAtLargestSizeGBps = ptr(max(oop, ip))
	}
	for _, row := range r.Rows {
		for _, res := range []*NCCLResult{row.OutOfPlace, row.InPlace} {
			if res != nil && (r.PeakBusBandwidthGBps == nil || res.BusBandwidthGBps > *r.PeakBusBandwidthGBps) {
				r.PeakBusBandwidthGBps = ptr(res.BusBandwidthGBps)
			}
		}
	}
	if r.Collective == "" {
		for _, e := range r.Errors {
			if m := reNCCLFileColl.FindStringSubmatch(e); m != nil && m[1] != "common" {
				r.Collective, r.CollectiveInferred = m[1]+"_perf", true
				return
			}
		}
		if c := inferCollective(r); c != "" {
			r.Collective, r.CollectiveInferred = c, true
		}
	}
}

var ncclTypeSize = map[string]int64{
	"int8": 1, "char": 1, "uint8": 1, "f8e4m3": 1, "f8e5m2": 1,
	"half": 2, "float16": 2, "bfloat16": 2,
	"int32": 4, "int": 4, "uint32": 4, "float": 4, "float32": 4,
	"int64": 8, "uint64": 8, "double": 8, "float64": 8,
}

// inferCollective guesses the collective of an output that does not name
// it, from the columns it has and the ratio of bytes to elements: reducing
// and gathering collectives over n ranks move n*count elements
// (reduce_scatter, all_gather), all_reduce moves count.
func inferCollective(r *NCCLReport) string {
	var row *NCCLRow
	for i := range r.Rows {
		if r.Rows[i].Count > 0 {
			row = &r.Rows[i]
			break
		}
	}
	if row == nil {
		return ""
	}
	ts, ok := ncclTypeSize[row.Type]
	if !ok {
		return ""
	}
	ratio := row.SizeBytes / (row.Count * ts)
	perRank := ratio > 1 && r.Ranks > 1 && ratio == int64(r.Ranks)
	hasRedop := row.Redop != "" && row.Redop != "none"
	switch {
	case row.Root != nil && *row.Root >= 0:
		if hasRedop {
			return "reduce_perf"
		}
		return "broadcast_perf"
	case hasRedop && ratio == 1:
		return "all_reduce_perf"
	case hasRedop && perRank:
		return "reduce_scatter_perf"
	case !hasRedop && perRank && r.redopBlank:
		// Rootless, no reduction, n*count elements, and a redop column
		// left blank: alltoall (all_gather prints no redop column then).
		return "alltoall_perf"
	case !hasRedop && perRank:
		return "all_gather_perf"
	}
	return ""
}

// judgeNCCL applies the rules to an nccl-tests report.
func judgeNCCL(r *NCCLReport, j *judge) {
	for _, e := range r.Errors {
		judgeNCCLError(j, e)
	}
	if len(r.Rows) == 0 {
		if len(r.Errors) == 0 && r.Format == "text" {
			if r.NThreads == nil && len(r.Devices) == 0 {
				j.unusable("not-nccl-tests", "", "the input is not nccl-tests output")
			} else {
				j.unusable("nccl-no-results", "", "the output has no result rows: the test did not run to the end")
			}
		}
		return
	}
	if r.AvgBusBandwidthGBps == nil && r.OutOfBounds == nil && len(r.Errors) == 0 {
		j.unusable("output-truncated", "", "the output ends without the summary lines (Out of bounds values, Avg bus bandwidth)")
	}
	var wrongSizes []string
	var wrongTotal float64
	validated := false
	for _, row := range r.Rows {
		for _, res := range []*NCCLResult{row.OutOfPlace, row.InPlace} {
			if res == nil || res.Wrong == nil {
				continue
			}
			validated = true
			if *res.Wrong > 0 {
				if r.ValidationColumn == "#wrong" || r.ValidationColumn == "" {
					wrongTotal += *res.Wrong
				} else {
					wrongTotal = max(wrongTotal, *res.Wrong)
				}
				s := strconv.FormatInt(row.SizeBytes, 10)
				if len(wrongSizes) == 0 || wrongSizes[len(wrongSizes)-1] != s {
					wrongSizes = append(wrongSizes, s)
				}
			}
		}
	}
	if len(wrongSizes) > 0 {
		j.fail("nccl-wrong-results", "", "the collective returned wrong values (%s %g) at %d sizes (%s B): data corruption on the GPUs or the fabric", r.validationWord(), wrongTotal, len(wrongSizes), strings.Join(wrongSizes, ", "))
	}
	if r.OutOfBounds != nil && *r.OutOfBounds > 0 {
		j.fail("nccl-out-of-bounds", "", "%d out-of-bounds values: results failed validation", *r.OutOfBounds)
	}
	if !validated {
		j.warn("nccl-not-validated", "", "validation was off (-c 0): the results were not checked for correctness")
	}
	single := r.Ranks == 1
	if !single && r.PeakBusBandwidthGBps != nil && *r.PeakBusBandwidthGBps == 0 {
		for _, row := range r.Rows {
			if row.OutOfPlace != nil && row.OutOfPlace.AlgbwGBps > 0 {
				single = true
				break
			}
		}
	}
	if single {
		j.unusable("nccl-single-rank", "", "the collective ran on a single rank: bus bandwidth 0 is not a measurement of the GPUs or the fabric")
	}
	if r.Collective == "" {
		why := "its size/count ratio and columns fit no single collective"
		if single {
			// nccl-tests (src/*.cu, TimeTest calls): with one rank every
			// rootless collective moves its count once and prints busbw 0;
			// alltoall left the redop cell blank before it printed "none",
			// and hypercube still does.
			why = "with one rank alltoall, all_gather and hypercube print the same columns, the same counts and a bus bandwidth of 0"
		}
		j.info("nccl-collective-unknown", "", "the output does not name its collective (no \"# Collective test starting\" line), and it cannot be told from the table: %s; keep that line in the output to compare with a baseline", why)
	}
	if bw := r.BusBandwidthAtLargestSizeGBps; bw != nil && !single {
		j.info("nccl-busbw", "", "bus bandwidth %.2f GB/s at %d B over %d ranks (average %s GB/s)", *bw, *r.LargestSizeBytes, r.Ranks, fmtFloatPtr(r.AvgBusBandwidthGBps))
	}
}

func (r *NCCLReport) validationWord() string {
	if r.ValidationColumn == "#wrong" || r.ValidationColumn == "" {
		return "wrong elements"
	}
	return "max error"
}

func fmtFloatPtr(f *float64) string {
	if f == nil {
		return "?"
	}
	return strconv.FormatFloat(*f, 'f', -1, 64)
}

// judgeNCCLError classifies a failure line: CUDA errors on the GPUs are node
// problems; NCCL's "unhandled system error" (shared memory, sockets), usage
// errors and a peer's exit are the environment's.
func judgeNCCLError(j *judge, e string) {
	low := strings.ToLower(e)
	switch {
	case strings.Contains(low, "unhandled cuda error"):
		j.fail("nccl-cuda-error", "", "NCCL hit a CUDA error on the GPUs: %s", e)
	case strings.Contains(low, "cuda failure") && (strings.Contains(low, "out of memory") || strings.Contains(low, "busy or unavailable")):
		j.unusable("nccl-environment-error", "", "a CUDA resource error (GPUs in use by others?): %s", e)
	case strings.Contains(low, "cuda failure") && (strings.Contains(low, "ecc") || strings.Contains(low, "launch failure") || strings.Contains(low, "illegal") || strings.Contains(low, "hardware")):
		j.fail("nccl-cuda-error", "", "a CUDA failure on the GPUs: %s", e)
	case strings.Contains(low, "unhandled system error"):
		j.unusable("nccl-system-error", "", "NCCL hit a system error (shared memory, sockets, file descriptors; in a container check --ipc=host and /dev/shm), which says nothing about the GPUs: %s", e)
	case strings.Contains(low, "invalid usage"), strings.Contains(low, "invalid argument"), strings.Contains(low, "invalid number of gpus"):
		j.unusable("nccl-usage-error", "", "the test was started wrongly: %s", e)
	case strings.Contains(low, "remote process exited"), strings.Contains(low, "network error"), strings.Contains(low, "remote error"):
		j.unusable("nccl-remote-error", "", "a peer process or the network failed: %s", e)
	default:
		j.unusable("nccl-error", "", "the test failed: %s", e)
	}
}

// failureWords mark the lines that report a failure: nccl-tests' own
// ("NCCL failure", "Test CUDA failure", "Invalid number of GPUs") and the
// MPI launcher's.
var failureWords = []string{"NCCL failure", "NCCL error", "CUDA failure", "Test failure", "Invalid number of GPUs", "mpirun noticed", "exited on signal", "Segmentation fault", "core dumped"}

func hasFailureWord(t string) bool {
	for _, w := range failureWords {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}
