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
	// Networks are the NCCL network plugins the ranks used, from NCCL's
	// "NCCL INFO Using network NAME" lines (printed with NCCL_DEBUG=INFO),
	// distinct, in order of first appearance: "Socket", "IB", "AWS
	// Libfabric", "FasTrak", "gIB", "GPUDirectTCPX_v7". Empty without
	// NCCL_DEBUG=INFO. Source: the NCCL logs in
	// https://docs.cloud.google.com/ai-hypercomputer/docs/nccl/overview
	// ("NCCL INFO Using network gIB") and aws-ia/terraform-aws-eks-blueprints
	// examples/elastic-fabric-adapter/README.md ("Using network AWS Libfabric").
	Networks []string `json:"networks"`
	// OFIProviders are the libfabric providers aws-ofi-nccl selected ("NET/OFI
	// Selected Provider is efa"): "efa" on EFA, "tcp" or "sockets" when it
	// fell back; distinct, in order.
	OFIProviders []string `json:"ofiProviders"`

	// redopBlank: the header has a redop column that the rows leave blank
	// (alltoall before nccl-tests 2.13).
	redopBlank bool
	// paramLines counts the "nThread ... nGpus ..." lines (one per run);
	// tableHeader tells whether the table's column header was read;
	// rowsAfterSummary counts the result rows that follow a summary line
	// (nccl-tests prints those once, at the end of a run).
	paramLines       int
	tableHeader      bool
	summarySeen      bool
	rowsAfterSummary int
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
	reNCCLParams   = regexp.MustCompile(`nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)`)
	reNCCLVersion  = regexp.MustCompile(`nccl-tests version\s+(\S+)(?:\s+nccl-headers=(\d+))?(?:\s+nccl-library=(\d+))?`)
	reNCCLCompiled = regexp.MustCompile(`NCCL Tests compiled with NCCL\s+(\S+)`)
	reNCCLLibVer   = regexp.MustCompile(`NCCL version\s+(\S+)`)
	reNCCLColl     = regexp.MustCompile(`Collective test (?:starting|concluded):\s*(\S+)`)
	reNCCLRank     = regexp.MustCompile(`^#\s+Rank\s+(\d+)(?:\s+Group\s+(\d+))?(?:\s+Pid\s+(\d+))?\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*?)\s*$`)
	reNCCLOOB      = regexp.MustCompile(`#\s*Out of bounds values\s*:\s*(\d+)`)
	reNCCLNet      = regexp.MustCompile(`NCCL INFO Using network (\S.*?)\s*$`)
	reNCCLOFI      = regexp.MustCompile(`NET/OFI Selected [Pp]rovider is ([A-Za-z0-9_;-]+)`)
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
	nr := ncclTextReader{r: r, j: j, rankSeen: map[int]bool{}}
	for _, l := range lines(data) {
		if t := strings.TrimSpace(l); t != "" {
			nr.line(t)
		}
	}
	r.Ranks = len(nr.rankSeen)
}

// ncclTextReader reads nccl-tests' text output line by line: the header
// block (parameters, versions, ranks), the table (its "#" header and its
// rows), and the footer (out of bounds, average bus bandwidth, warnings and
// failures).
type ncclTextReader struct {
	r *NCCLReport
	j *judge
	// header holds the column names of the table's header line.
	header   []string
	rankSeen map[int]bool
}

// ncclLineRule is a kind of line of the header block or footer: its
// pattern and its reader, which returns false to leave a matched line to
// the rules after it.
type ncclLineRule struct {
	re   *regexp.Regexp
	read func(nr *ncclTextReader, m []string) bool
}

// ncclLineRules are tried in order on the lines that are no data row.
var ncclLineRules = []ncclLineRule{
	{reNCCLParams, (*ncclTextReader).params},
	{reNCCLVersion, (*ncclTextReader).testsVersion},
	{reNCCLCompiled, (*ncclTextReader).compiledWith},
	{reNCCLColl, (*ncclTextReader).collective},
	{reNCCLRank, (*ncclTextReader).rank},
	{reNCCLOOB, (*ncclTextReader).outOfBounds},
	{reNCCLAvg, (*ncclTextReader).avgBusBandwidth},
	{reNCCLNet, (*ncclTextReader).network},
	{reNCCLOFI, (*ncclTextReader).ofiProvider},
}

// maxNCCLNetworks bounds the distinct networks and providers kept.
const maxNCCLNetworks = 16

// network reads "NCCL INFO Using network NAME".
func (nr *ncclTextReader) network(m []string) bool {
	if !slices.Contains(nr.r.Networks, m[1]) && len(nr.r.Networks) < maxNCCLNetworks {
		nr.r.Networks = append(nr.r.Networks, m[1])
	}
	return true
}

// ofiProvider reads "NET/OFI Selected Provider is NAME".
func (nr *ncclTextReader) ofiProvider(m []string) bool {
	if !slices.Contains(nr.r.OFIProviders, m[1]) && len(nr.r.OFIProviders) < maxNCCLNetworks {
		nr.r.OFIProviders = append(nr.r.OFIProviders, m[1])
	}
	return true
}

func (nr *ncclTextReader) line(t string) {
	// Most lines are data rows: try them first.
	if t[0] >= '0' && t[0] <= '9' && nr.dataRow(strings.Fields(t)) {
		return
	}
	if !strings.Contains(t, "nThread") && !strings.HasPrefix(t, "#") && !strings.Contains(t, "NCCL") && !hasFailureWord(t) {
		return
	}
	for _, rule := range ncclLineRules {
		if m := rule.re.FindStringSubmatch(t); m != nil && rule.read(nr, m) {
			return
		}
	}
	nr.other(t)
}

// dataRow reads a row of the table; false when fields are not one.
func (nr *ncclTextReader) dataRow(fields []string) bool {
	row, ok := parseNCCLRow(fields, nr.header)
	if !ok {
		return false
	}
	if len(fields) == len(nr.header)-1 && slices.Contains(nr.header, "redop") {
		nr.r.redopBlank = true
	}
	if nr.r.summarySeen {
		nr.r.rowsAfterSummary++
	}
	if nr.j.room(len(nr.r.Rows), "rows") {
		nr.r.Rows = append(nr.r.Rows, row)
	}
	return true
}

// params reads "nThread 1 nGpus 8 minBytes ... maxBytes ..."; the first
// such line counts.
func (nr *ncclTextReader) params(m []string) bool {
	nr.r.paramLines++
	if nr.r.NThreads != nil {
		return false
	}
	nr.r.NThreads, nr.r.NGPUs = parseIntPtr(m[1]), parseIntPtr(m[2])
	nr.r.MinBytes, nr.r.MaxBytes = parseInt64Ptr(m[3]), parseInt64Ptr(m[4])
	return true
}

func (nr *ncclTextReader) testsVersion(m []string) bool {
	nr.r.TestsVersion = m[1]
	if m[3] != "" {
		nr.r.NCCLVersion = ncclVersionCode(m[3])
	}
	return true
}

func (nr *ncclTextReader) compiledWith(m []string) bool {
	nr.r.NCCLVersion = m[1]
	return true
}

func (nr *ncclTextReader) collective(m []string) bool {
	nr.r.Collective = m[1]
	return true
}

func (nr *ncclTextReader) rank(m []string) bool {
	rk := NCCLRank{Group: parseIntPtr(m[2]), PID: parseIntPtr(m[3]), Host: m[4], BusID: m[6], Name: m[7]}
	rk.Rank, _ = strconv.Atoi(m[1])
	rk.Device, _ = strconv.Atoi(m[5])
	if nr.j.room(len(nr.r.Devices), "ranks") {
		nr.r.Devices = append(nr.r.Devices, rk)
	}
	nr.rankSeen[rk.Rank] = true
	return true
}

func (nr *ncclTextReader) outOfBounds(m []string) bool {
	nr.r.summarySeen = true
	nr.r.OutOfBounds = parseIntPtr(m[1])
	return true
}

func (nr *ncclTextReader) avgBusBandwidth(m []string) bool {
	nr.r.summarySeen = true
	nr.r.AvgBusBandwidthGBps = parseFloatPtr(m[1])
	return true
}

// other reads the lines no rule took: the table's header among the "#"
// comments, NCCL's warnings and version, and failure lines.
func (nr *ncclTextReader) other(t string) {
	r := nr.r
	switch {
	case strings.HasPrefix(t, "#"):
		if tok := strings.Fields(strings.TrimPrefix(t, "#")); containsAll(tok, "algbw", "busbw") {
			nr.tableHeader(tok)
		}
	case strings.Contains(t, "NCCL WARN"):
		if len(r.Warnings) < 50 {
			r.Warnings = append(r.Warnings, truncate(t, 300))
		}
	case strings.Contains(t, "NCCL INFO"):
	case r.NCCLVersion == "" && strings.HasPrefix(t, "NCCL version") && reNCCLLibVer.MatchString(t):
		r.NCCLVersion = reNCCLLibVer.FindStringSubmatch(t)[1]
	case hasFailureWord(t):
		if len(r.Errors) < 50 {
			r.Errors = append(r.Errors, truncate(t, 300))
		}
	}
}

// tableHeader takes the table's column names and its validation column.
func (nr *ncclTextReader) tableHeader(tok []string) {
	nr.header = tok
	nr.r.tableHeader = true
	nr.r.ValidationColumn = ""
	for _, h := range tok {
		if h == "#wrong" || h == "error" || h == "res" {
			nr.r.ValidationColumn = h
			return
		}
	}
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
	header, ok := ncclRowColumns(tok, header)
	if !ok {
		return row, false
	}
	row.SizeBytes, _ = strconv.ParseInt(tok[0], 10, 64)
	row.Count, _ = strconv.ParseInt(tok[1], 10, 64)
	row.Type = tok[2]
	if len(header) == len(tok) || (len(header) > 0 && len(tok) > len(header) && len(header) >= 8) {
		if row.readByHeader(tok, header) {
			return row, true
		}
	}
	return row, row.readFromEnds(tok)
}

// ncclRowColumns returns the header's columns for a row of tok, without
// redop where the row leaves that cell blank; false for a row cut short.
func ncclRowColumns(tok, header []string) ([]string, bool) {
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
		return nil, false
	}
	return header, true
}

// readByHeader reads the row's cells by the header's column names; false
// when no column is a time, which starts each half of the row.
func (row *NCCLRow) readByHeader(tok, header []string) bool {
	var results []*NCCLResult
	for i, h := range header[:min(len(header), len(tok))] {
		v := tok[i]
		switch h {
		case "redop", "op":
			row.Redop = v
		case "root":
			row.Root = parseIntPtr(v)
		case "time", "cputime":
			results = append(results, &NCCLResult{TimeUs: parseFloatOr0(v)})
		default:
			if len(results) > 0 {
				results[len(results)-1].set(h, v)
			}
		}
	}
	if len(results) == 0 {
		return false
	}
	row.OutOfPlace = results[0]
	if len(results) > 1 {
		row.InPlace = results[1]
	}
	return true
}

// set reads the cell of a half's column (algbw, busbw or the validation
// column); other columns are ignored.
func (res *NCCLResult) set(column, v string) {
	switch column {
	case "algbw":
		res.AlgbwGBps = parseFloatOr0(v)
	case "busbw":
		res.BusBandwidthGBps = parseFloatOr0(v)
	case "#wrong", "error", "res":
		res.Wrong = parseFloatPtr(v)
	}
}

// readFromEnds reads the cells after size, count and type without a
// header: at most two of redop and root, then one or two halves of time,
// algbw, busbw and the validation value (which may be "N/A").
func (row *NCCLRow) readFromEnds(tok []string) bool {
	n := len(tok)
	perf := 8
	if n < 3+8 {
		perf = 4
	}
	mid := tok[3 : n-perf]
	if len(mid) > 2 {
		return false
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
			return false
		}
	}
	row.OutOfPlace = ncclHalf(p[:4])
	if perf == 8 {
		row.InPlace = ncclHalf(p[4:])
	}
	return true
}

// ncclHalf reads time, algbw, busbw and the validation value.
func ncclHalf(p []string) *NCCLResult {
	return &NCCLResult{TimeUs: parseFloatOr0(p[0]), AlgbwGBps: parseFloatOr0(p[1]), BusBandwidthGBps: parseFloatOr0(p[2]), Wrong: parseFloatPtr(p[3])}
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
	i := slices.IndexFunc(r.Rows, func(row NCCLRow) bool { return row.Count > 0 })
	if i < 0 {
		return ""
	}
	row := r.Rows[i]
	ts, ok := ncclTypeSize[row.Type]
	if !ok {
		return ""
	}
	ratio := row.SizeBytes / (row.Count * ts)
	perRank := ratio > 1 && r.Ranks > 1 && ratio == int64(r.Ranks)
	hasRedop := row.Redop != "" && row.Redop != "none"
	switch {
	case row.Root != nil && *row.Root >= 0 && hasRedop:
		return "reduce_perf"
	case row.Root != nil && *row.Root >= 0:
		return "broadcast_perf"
	case !hasRedop:
		return unreducedCollective(perRank, r.redopBlank)
	case ratio == 1:
		return "all_reduce_perf"
	case perRank:
		return "reduce_scatter_perf"
	}
	return ""
}

// unreducedCollective tells the rootless collectives without a reduction
// apart: both move n*count elements; alltoall leaves a redop column blank
// (all_gather prints no redop column then).
func unreducedCollective(perRank, redopBlank bool) string {
	switch {
	case !perRank:
		return ""
	case redopBlank:
		return "alltoall_perf"
	}
	return "all_gather_perf"
}

// judgeNCCL applies the rules to an nccl-tests report.
func judgeNCCL(r *NCCLReport, j *judge) {
	for _, e := range r.Errors {
		judgeNCCLError(j, e)
	}
	judgeNCCLCompleteness(r, j)
	if len(r.Rows) == 0 {
		judgeNCCLNoRows(r, j)
		return
	}
	judgeNCCLValidation(r, j)
	single := r.singleRank()
	if single {
		j.unusable("nccl-single-rank", "", "the collective ran on a single rank: bus bandwidth 0 is not a measurement of the GPUs or the fabric")
	} else {
		judgeNCCLShape(r, j)
		judgeNCCLCoverage(r, j)
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

// judgeNCCLCompleteness flags a text output that is not a whole run: a
// fragment (no parameter line, no table header and no summary lines: a
// paste of rows or of the failure at a run's end), or rows that end before
// the summary. A run that failed stops before its summary, so that alone
// is no truncation; a fragment without rows or failure is judged by
// judgeNCCLNoRows.
func judgeNCCLCompleteness(r *NCCLReport, j *judge) {
	if r.Format != "text" {
		return
	}
	summary := r.AvgBusBandwidthGBps != nil || r.OutOfBounds != nil
	switch {
	case !summary && r.paramLines == 0 && !r.tableHeader && (len(r.Rows) > 0 || len(r.Errors) > 0):
		j.unusable("output-truncated", "", "the output is a fragment of an nccl-tests run: it has neither the parameter line (nThread N nGpus N ...) nor the table's header nor the summary lines; what it shows is judged, the rest of the run is not known")
	case len(r.Rows) > 0 && !summary && len(r.Errors) == 0:
		j.unusable("output-truncated", "", "the output ends without the summary lines (Out of bounds values, Avg bus bandwidth)")
	}
}

// judgeNCCLCoverage makes a whole run whose largest size is below the
// bandwidth floor (1 MiB, ncclShapeFloorBytes) no pass: such sizes measure
// the collective's constant overhead (latency), not the links' bandwidth
// (nccl-tests doc/PERFORMANCE.md), so the run exercised the GPUs' links and
// the fabric at no size where a fault would show. A cut output is already
// unknown for being cut.
func judgeNCCLCoverage(r *NCCLReport, j *judge) {
	if r.LargestSizeBytes == nil || *r.LargestSizeBytes >= ncclShapeFloorBytes || j.has("output-truncated") {
		return
	}
	j.unusable("not-exercised", "", "the largest message size is %d B, below 1 MiB: those sizes measure the collective's latency, not the bandwidth of the GPUs' links or the fabric; run up to the baseline's size (all_reduce_perf -e 8G)", *r.LargestSizeBytes)
}

// judgeNCCLNoRows judges a text output without result rows that reported no
// failure: not nccl-tests at all, or a test that stopped early.
func judgeNCCLNoRows(r *NCCLReport, j *judge) {
	switch {
	case len(r.Errors) > 0 || r.Format != "text":
	case r.NThreads == nil && len(r.Devices) == 0:
		j.unusable("not-nccl-tests", "", "the input is not nccl-tests output")
	default:
		j.unusable("nccl-no-results", "", "the output has no result rows: the test did not run to the end")
		j.unusable("not-exercised", "", "no message size was measured: the collective never moved data between the GPUs, so neither their links nor the fabric were exercised")
	}
}

// judgeNCCLValidation judges the rows' validation values and the out of
// bounds count.
func judgeNCCLValidation(r *NCCLReport, j *judge) {
	wrongSizes, wrongTotal, validated := r.wrongResults()
	if len(wrongSizes) > 0 {
		j.fail("nccl-wrong-results", "", "the collective returned wrong values (%s %g) at %d sizes (%s B): data corruption on the GPUs or the fabric", r.validationWord(), wrongTotal, len(wrongSizes), strings.Join(wrongSizes, ", "))
	}
	if r.OutOfBounds != nil && *r.OutOfBounds > 0 {
		j.fail("nccl-out-of-bounds", "", "%d out-of-bounds values: results failed validation", *r.OutOfBounds)
	}
	if !validated {
		j.warn("nccl-not-validated", "", "validation was off (-c 0): the results were not checked for correctness")
	}
}

// wrongResults returns the sizes (in bytes, as text, in row order) with a
// wrong validation value, the total of wrong elements ("#wrong") or the
// largest error ("error", "res"), and whether any half was validated.
func (r *NCCLReport) wrongResults() (sizes []string, total float64, validated bool) {
	counts := r.ValidationColumn == "#wrong" || r.ValidationColumn == ""
	for _, row := range r.Rows {
		for _, res := range []*NCCLResult{row.OutOfPlace, row.InPlace} {
			if res == nil || res.Wrong == nil {
				continue
			}
			validated = true
			if *res.Wrong > 0 { // not NaN
				total = addWrong(total, *res.Wrong, counts)
				if s := strconv.FormatInt(row.SizeBytes, 10); len(sizes) == 0 || sizes[len(sizes)-1] != s {
					sizes = append(sizes, s)
				}
			}
		}
	}
	return sizes, total, validated
}

// addWrong adds a validation value to the total: a count of wrong elements
// adds up, a largest error is the largest.
func addWrong(total, v float64, counts bool) float64 {
	if counts {
		return total + v
	}
	return max(total, v)
}

// singleRank reports whether the collective ran on one rank: one rank
// listed, or a peak bus bandwidth of 0 with an algorithm bandwidth above 0
// (one rank moves data but no bus traffic).
func (r *NCCLReport) singleRank() bool {
	if r.Ranks == 1 {
		return true
	}
	if r.PeakBusBandwidthGBps == nil || *r.PeakBusBandwidthGBps != 0 {
		return false
	}
	return slices.ContainsFunc(r.Rows, func(row NCCLRow) bool { return row.OutOfPlace != nil && row.OutOfPlace.AlgbwGBps > 0 })
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
	case strings.Contains(low, "cuda failure") && strings.Contains(low, "system not yet initialized"):
		// cudaErrorSystemNotReady (802): the system is not ready for CUDA
		// work; on NVSwitch systems Fabric Manager is not running or does
		// not match the driver. The node cannot run CUDA at all.
		// Sources: https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html
		// (cudaErrorSystemNotReady), NVIDIA/nccl-tests#264 (2026-12-03).
		j.fail("nccl-cuda-error", "", "CUDA cannot initialise on the node (cudaErrorSystemNotReady: on NVSwitch systems Fabric Manager is not running or does not match the driver): %s", e)
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
