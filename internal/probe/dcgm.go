package probe

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DCGMReport is the result of `dcgmi diag -r N`, from its text table or its
// JSON (-j). DCGM documents the tests in its user guide ("Diagnostics").
type DCGMReport struct {
	Header
	// Format: "text" or "json".
	Format        string `json:"format"`
	Version       string `json:"version"`
	DriverVersion string `json:"driverVersion"`
	// DeviceIDs are the PCI device IDs DCGM detected ("2330" for H100 SXM).
	DeviceIDs []string   `json:"deviceIds"`
	Tests     []DCGMTest `json:"tests"`
	// Result is the overall result: "PASS", "FAIL", or "" when no test ran.
	Result string `json:"result"`
	// RuntimeError is the error DCGM 4 reports instead of results
	// ("DCGM Diagnostic"."runtime_error"), "" when none.
	RuntimeError string `json:"runtimeError,omitempty"`
	// LinkStatus is `dcgmi nvlink --link-status` where the input holds it
	// (pasted with or instead of the diag table); absent when not shown.
	LinkStatus []DCGMLinkStatus `json:"linkStatus,omitempty"`
}

// DCGMTest is one diagnostic test.
type DCGMTest struct {
	// Category: Deployment, Integration, Hardware, Stress, Custom ...
	Category string `json:"category"`
	// Name is "" for a test whose own row is not in the output (an excerpt
	// that starts at the test's Error note).
	Name string `json:"name"`
	// Result is PASS, FAIL, WARN or SKIP.
	Result string `json:"result"`
	// Detail is the result cell as printed ("Fail - All").
	Detail     string          `json:"detail"`
	GPUResults []DCGMGPUResult `json:"gpuResults"`
	// Warnings and Info are the texts DCGM attached to the test, with
	// wrapped cells joined back together.
	Warnings []string `json:"warnings"`
	Info     []string `json:"info"`
}

// DCGMGPUResult is a per-GPU result of the JSON output; GPUIDs is the
// "gpu_ids" value, a list ("0,1,2") or a single ID.
type DCGMGPUResult struct {
	GPUIDs string `json:"gpuIds"`
	Status string `json:"status"`
}

var reDCGMSection = regexp.MustCompile(`^[|+]-+\s+(\S.*?)\s+-+[+|]`)

// ParseDCGM reads dcgmi diag output, text or JSON.
func ParseDCGM(data []byte) *DCGMReport {
	r := &DCGMReport{Format: "text"}
	j := newJudge(&r.Header, KindDCGM)
	if i := bytes.IndexByte(data, '{'); i >= 0 && (bytes.Contains(data, []byte("test_categories")) || bytes.Contains(data, []byte(`"DCGM Diagnostic"`))) {
		r.Format = "json"
		if err := parseDCGMJSON(r, data[i:]); err != nil {
			j.unusable("output-truncated", "", "the dcgmi JSON is malformed or truncated: %v", err)
		}
		if i > 0 {
			if pre := strings.TrimSpace(string(data[:i])); pre != "" {
				j.info("dcgm-preamble", "", "text before the JSON was skipped: %q", truncate(pre, 120))
			}
		}
	} else {
		parseDCGMText(r, j, data)
	}
	judgeDCGM(r, j)
	j.done()
	fillNil(r)
	return r
}

func dcgmResultWord(cell string) string {
	t := strings.ToLower(strings.TrimSpace(cell))
	switch {
	case strings.HasPrefix(t, "pass"):
		return "PASS"
	case strings.HasPrefix(t, "fail"):
		return "FAIL"
	case strings.HasPrefix(t, "warn"):
		return "WARN"
	case strings.HasPrefix(t, "skip"):
		return "SKIP"
	}
	return ""
}

func parseDCGMText(r *DCGMReport, j *judge, data []byte) {
	dr := dcgmTextReader{r: r, j: j, sep: -1, end: -1}
	for _, l := range takeDCGMLinkStatus(r, lines(data)) {
		dr.line(strings.TrimRight(l, " \t"))
	}
	dr.flush()
	if (len(r.Tests) > 0 || dr.inTable) && !dr.closed {
		j.unusable("output-truncated", "", "the diagnostic table is not closed: the output is truncated")
	}
}

// dcgmTextReader reads dcgmi diag's text table line by line: "+---" rules,
// "|----- Category -----|" section rows and "| name | result |" rows.
type dcgmTextReader struct {
	r *DCGMReport
	j *judge
	// sep is the column of the cell separator and end that of the last
	// "|", both from the first rule; -1 before it.
	sep, end int
	category string
	// inTable: a rule was seen; closed: the last row read was a rule
	// after the first.
	inTable, closed bool
	cur             *DCGMTest
	// An Info or Warning cell wraps over several rows; its text is built up
	// in buf and added to target when the next row starts something else.
	buf    strings.Builder
	target *[]string
}

func (dr *dcgmTextReader) flush() {
	if dr.target != nil {
		*dr.target = append(*dr.target, strings.TrimSpace(dr.buf.String()))
	}
	dr.buf.Reset()
	dr.target = nil
}

func (dr *dcgmTextReader) line(t string) {
	m := reDCGMSection.FindStringSubmatch(t)
	border := m == nil && strings.HasPrefix(t, "+---")
	if (border || m != nil) && dr.sep < 0 {
		// The first rule gives the column of the cell separator.
		if k := strings.Index(t[1:], "+"); k >= 0 {
			dr.sep, dr.end = k+1, len(t)-1
		}
	}
	switch {
	case border:
		dr.closed = dr.inTable
		dr.inTable = true
	case m != nil:
		dr.flush()
		dr.category, dr.cur = m[1], nil
		dr.closed = false
	case strings.HasPrefix(t, "|") && dr.sep >= 0 && !strings.HasPrefix(t, "|="):
		dr.closed = false
		dr.row(dr.cells(t))
	}
}

// cells splits a row into its name cell and the text of its result cell:
// after "| " and within the cell's width, which is what wrapped cells are
// cut to.
func (dr *dcgmTextReader) cells(t string) (name, chunk string) {
	if len(t) > dr.sep {
		name = strings.TrimSpace(t[1:dr.sep])
	}
	if width := dr.end - dr.sep - 4; len(t) > dr.sep+2 && width > 0 {
		chunk = t[dr.sep+2 : min(len(t), dr.sep+2+width)]
	}
	return name, chunk
}

func (dr *dcgmTextReader) row(name, chunk string) {
	if name != "" {
		dr.flush()
	}
	switch {
	case name == "" && dr.target != nil:
		if dr.buf.Len() < 1<<16 {
			dr.buf.WriteString(chunk)
		}
	case name == "Diagnostic" && dcgmResultWord(chunk) == "":
		// the table's own header row
	case dr.category == "Metadata":
		dr.metadata(name, strings.TrimSpace(chunk))
	case name == "Info" || name == "Warning" || name == "Error":
		dr.note(name, chunk)
	case name != "" && dr.j.room(len(dr.r.Tests), "tests"):
		dr.r.Tests = append(dr.r.Tests, DCGMTest{Category: dr.category, Name: name, Result: dcgmResultWord(chunk), Detail: strings.TrimSpace(chunk)})
		dr.cur = &dr.r.Tests[len(dr.r.Tests)-1]
	}
}

// metadata reads a row of the Metadata section.
func (dr *dcgmTextReader) metadata(name, v string) {
	switch name {
	case "DCGM Version":
		dr.r.Version = v
	case "Driver Version Detected":
		dr.r.DriverVersion = v
	case "GPU Device IDs Detected":
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				dr.r.DeviceIDs = append(dr.r.DeviceIDs, id)
			}
		}
	}
}

// note starts an Info, Warning or Error note of the current test.
func (dr *dcgmTextReader) note(name, chunk string) {
	if dr.cur == nil && name == "Error" && dr.j.room(len(dr.r.Tests), "tests") {
		// An excerpt that starts below a test's own row. dcgmi
		// prints an Error note only under a test that reported an
		// error (Diag.cpp, HelperDisplayDeploymentResult), so the
		// test is kept, unnamed, as failed.
		dr.r.Tests = append(dr.r.Tests, DCGMTest{Category: dr.category, Result: "FAIL"})
		dr.cur = &dr.r.Tests[len(dr.r.Tests)-1]
	}
	if dr.cur == nil {
		return // an Info or Warning note with no test above it: nothing to attach it to
	}
	dr.target = &dr.cur.Warnings
	if name == "Info" {
		dr.target = &dr.cur.Info
	}
	dr.buf.WriteString(chunk)
}

// dcgmJSONText reads a value that DCGM writes as a string, a number, a list
// of either, or an object with a "warning"/"message" text.
func dcgmJSONText(raw json.RawMessage) []string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return []string{n.String()}
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		var out []string
		for _, e := range list {
			out = append(out, dcgmJSONText(e)...)
		}
		return out
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for _, k := range []string{"warning", "message", "info", "error"} {
			if v, ok := obj[k]; ok {
				return dcgmJSONText(v)
			}
		}
	}
	return nil
}

// dcgmJSONDiag is the diagnostic object of dcgmi diag -j: "DCGM GPU
// Diagnostic" (DCGM 3) or "DCGM Diagnostic" (DCGM 4, whose tests report
// per entity and whose object may hold a runtime_error instead). The keys
// of DCGM 4 are those of its schema,
// https://github.com/NVIDIA/DCGM/blob/v4.6.0/testing/python3/dcgm_diag_schema.json
type dcgmJSONDiag struct {
	TestCategories []*struct {
		Category string          `json:"category"`
		Tests    []*dcgmJSONTest `json:"tests"`
	} `json:"test_categories"`
	Version      json.RawMessage `json:"version"`
	RuntimeError json.RawMessage `json:"runtime_error"`
}

// dcgmJSONRoot is the top of dcgmi diag -j: the diagnostic, and in DCGM 3
// the driver and device IDs, in DCGM 4 metadata and entity_groups.
type dcgmJSONRoot struct {
	Diag3     json.RawMessage `json:"DCGM GPU Diagnostic"`
	Diag4     json.RawMessage `json:"DCGM Diagnostic"`
	Driver    json.RawMessage `json:"Driver Version Detected"`
	DeviceIDs json.RawMessage `json:"GPU Device IDs"`
	Metadata  struct {
		Version json.RawMessage `json:"version"`
		Driver  json.RawMessage `json:"Driver Version Detected"`
	} `json:"metadata"`
	EntityGroups []struct {
		Group    string `json:"entity_group"`
		Entities []struct {
			DeviceID json.RawMessage `json:"device_id"`
		} `json:"entities"`
	} `json:"entity_groups"`
}

type dcgmJSONTest struct {
	Name    string            `json:"name"`
	Results []*dcgmJSONResult `json:"results"`
	// Summary is DCGM 4's result of the whole test.
	Summary *struct {
		Status string          `json:"status"`
		Info   json.RawMessage `json:"info"`
	} `json:"test_summary"`
}

// dcgmJSONResult is one result of a test: for GPUs gpu_ids or gpu_id
// (DCGM 3), for an entity entity_group and entity_id (DCGM 4).
type dcgmJSONResult struct {
	GPUIDs      json.RawMessage `json:"gpu_ids"`
	GPUID       json.RawMessage `json:"gpu_id"`
	EntityGroup string          `json:"entity_group"`
	EntityID    json.RawMessage `json:"entity_id"`
	Status      string          `json:"status"`
	Warnings    json.RawMessage `json:"warnings"`
	Info        json.RawMessage `json:"info"`
}

func parseDCGMJSON(r *DCGMReport, data []byte) error {
	var root dcgmJSONRoot
	if err := json.Unmarshal(data, &root); err != nil {
		return err
	}
	body := root.Diag3
	if body == nil {
		body = root.Diag4
	}
	if body == nil {
		body = data
	}
	var diag dcgmJSONDiag
	if err := json.Unmarshal(body, &diag); err != nil {
		return err
	}
	r.Version = firstText(diag.Version, root.Metadata.Version)
	r.DriverVersion = firstText(root.Driver, root.Metadata.Driver)
	r.RuntimeError = firstText(diag.RuntimeError)
	r.DeviceIDs = append(r.DeviceIDs, dcgmJSONText(root.DeviceIDs)...)
	for _, g := range root.EntityGroups {
		for _, e := range g.Entities {
			if g.Group == "GPU" {
				r.DeviceIDs = append(r.DeviceIDs, dcgmJSONText(e.DeviceID)...)
			}
		}
	}
	for _, c := range diag.TestCategories {
		if c == nil {
			continue
		}
		for _, t := range c.Tests {
			if t == nil {
				continue
			}
			if len(r.Tests) >= maxRecords {
				return nil
			}
			r.Tests = append(r.Tests, t.test(c.Category))
		}
	}
	return nil
}

// firstText is the first text of the first value that has one ("" for
// none).
func firstText(raws ...json.RawMessage) string {
	for _, raw := range raws {
		if v := dcgmJSONText(raw); len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// ids names the GPUs (or, in DCGM 4, the entity: "CPU 0" for an entity of
// another group) a result is for.
func (res *dcgmJSONResult) ids() string {
	ids := dcgmJSONText(res.GPUIDs)
	if len(ids) == 0 {
		ids = dcgmJSONText(res.GPUID)
	}
	if len(ids) == 0 {
		ids = dcgmJSONText(res.EntityID)
		if g := res.EntityGroup; g != "" && g != "GPU" && len(ids) > 0 {
			ids = []string{g + " " + ids[0]}
		}
	}
	return strings.Join(ids, ",")
}

// test reads one test of a category: its result is the worst of its
// per-GPU (per-entity) results and, in DCGM 4, of its summary.
func (t *dcgmJSONTest) test(category string) DCGMTest {
	test := DCGMTest{Category: category, Name: t.Name}
	worst := ""
	for _, res := range t.Results {
		if res == nil {
			continue
		}
		st := strings.ToUpper(strings.TrimSpace(res.Status))
		test.GPUResults = append(test.GPUResults, DCGMGPUResult{GPUIDs: res.ids(), Status: st})
		test.Warnings = append(test.Warnings, dcgmJSONText(res.Warnings)...)
		test.Info = append(test.Info, dcgmJSONText(res.Info)...)
		worst = worseDCGM(worst, dcgmResultWord(st))
	}
	if s := t.Summary; s != nil {
		worst = worseDCGM(worst, dcgmResultWord(s.Status))
		test.Info = append(test.Info, dcgmJSONText(s.Info)...)
	}
	test.Result = worst
	test.Detail = strings.ToLower(worst)
	if len(test.GPUResults) > 0 {
		test.Detail = strconv.Itoa(len(test.GPUResults)) + " results"
	}
	return test
}

var dcgmResultRank = map[string]int{"": 0, "SKIP": 1, "PASS": 2, "WARN": 3, "FAIL": 4}

// worseDCGM orders results FAIL > WARN > PASS > SKIP > "".
func worseDCGM(a, b string) string {
	if dcgmResultRank[b] > dcgmResultRank[a] {
		return b
	}
	return a
}

// dcgmEnvironmentTests are deployment checks whose failure is about where
// dcgmi ran (its environment variables, its permissions, other processes on
// the GPUs) rather than the node's GPUs.
var dcgmEnvironmentTests = map[string]bool{
	"Environment Variables": true, "Environmental Variables": true,
	"Permissions and OS Blocks": true, "Permissions and OS-related Blocks": true,
	"Graphics Processes": true,
}

// judgeDCGMRun reports why dcgmi's output cannot be judged as a run
// (DCGM 4's runtime_error, no tests at all); done says nothing is left to
// judge.
func judgeDCGMRun(r *DCGMReport, j *judge) (done bool) {
	if r.RuntimeError != "" {
		j.unusable("dcgm-runtime-error", "", "dcgmi diag did not run its tests: %s", truncate(r.RuntimeError, 240))
	}
	if len(r.Tests) == 0 && r.RuntimeError == "" && len(r.LinkStatus) == 0 {
		j.unusable("not-dcgm", "", "no dcgmi diag results found")
	}
	return len(r.Tests) == 0
}

func judgeDCGM(r *DCGMReport, j *judge) {
	judgeDCGMLinks(r, j)
	if judgeDCGMRun(r, j) {
		return
	}
	ran := 0
	for _, t := range r.Tests {
		detail := ""
		if len(t.Warnings) > 0 {
			detail = ": " + truncate(t.Warnings[0], 240)
		}
		name := t.Category + "/" + t.Name
		if t.Name == "" {
			name = "a " + t.Category + " test (its own row is not in the output)"
		}
		switch t.Result {
		case "FAIL":
			r.Result = "FAIL"
			if dcgmEnvironmentTests[t.Name] {
				j.unusable("dcgm-environment", "", "%s failed, a check of dcgmi's environment rather than the GPUs%s", name, detail)
			} else {
				j.fail("dcgm-test-failed", dcgmFailedGPU(t), "%s failed%s", name, detail)
			}
		case "WARN":
			j.warn("dcgm-test-warning", "", "%s warned%s", name, detail)
		}
		if t.Result == "PASS" || t.Result == "FAIL" || t.Result == "WARN" {
			ran++
		}
		for _, in := range t.Info {
			j.info("dcgm-info", "", "%s: %s", name, truncate(in, 240))
		}
	}
	if r.Result == "" && ran > 0 {
		r.Result = "PASS"
	}
	if ran == 0 {
		j.unusable("dcgm-all-skipped", "", "every diagnostic test was skipped")
		return
	}
	judgeDCGMCoverage(r, j)
}

// dcgmExercises tells whether a test of category exercises the GPUs: the
// Integration (PCIe/NVLink), Hardware (memory, diagnostic, pulse), Stress
// and Custom (a test named with -r) plugins do; Deployment (DCGM 4's
// "software") checks only the node's software and configuration (DCGM user
// guide, "Run Levels and Tests",
// https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html,
// checked 2026-12-03).
func dcgmExercises(category string) bool {
	switch strings.ToLower(strings.TrimSpace(category)) {
	case "deployment", "metadata", "":
		return false
	}
	return true
}

// judgeDCGMCoverage reports a run in which no test that exercises the GPUs
// ran (only Deployment checks passed, the rest skipped or absent): the
// GPUs were not tested, so the run is no pass (not-exercised). A complete
// table is needed: a truncated one says output-truncated already.
func judgeDCGMCoverage(r *DCGMReport, j *judge) {
	var skipped []string
	for _, t := range r.Tests {
		if !dcgmExercises(t.Category) {
			continue
		}
		if t.Result != "SKIP" && t.Result != "" {
			return
		}
		if name := t.Category + "/" + t.Name; !slices.Contains(skipped, name) {
			skipped = append(skipped, name)
		}
	}
	if j.has("output-truncated") {
		return
	}
	what := "the run had no Integration, Hardware or Stress test"
	if len(skipped) > 0 {
		what = "every Integration, Hardware and Stress test was skipped (" + strings.Join(skipped, ", ") + ")"
	}
	j.unusable("not-exercised", "", "only the Deployment (software) checks ran; %s: the GPUs' PCIe and NVLink, memory and compute were not exercised, so this run is no pass", what)
}

var (
	reDCGMNoteGPU  = regexp.MustCompile(`\bGPU (\d+)\b`)
	reDCGMFailGPUs = regexp.MustCompile(`(?i)^fail - gpus?: ([\d, ]+)$`)
)

// dcgmFailedGPU is the one GPU a failed test names, in its result cell
// ("Fail - GPU: 0") or in its notes ("GPU 3 has uncorrectable memory
// errors ..."); "" when it names none or several.
func dcgmFailedGPU(t DCGMTest) string {
	ids := map[string]bool{}
	if m := reDCGMFailGPUs.FindStringSubmatch(t.Detail); m != nil {
		for _, id := range strings.Split(m[1], ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids[id] = true
			}
		}
	} else {
		for _, w := range t.Warnings {
			for _, m := range reDCGMNoteGPU.FindAllStringSubmatch(w, -1) {
				ids[m[1]] = true
			}
		}
	}
	if len(ids) != 1 {
		return ""
	}
	for id := range ids {
		return id
	}
	return ""
}
