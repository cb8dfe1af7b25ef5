package probe

import (
	"bytes"
	"encoding/json"
	"regexp"
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
	if i := bytes.IndexByte(data, '{'); i >= 0 && bytes.Contains(data, []byte("test_categories")) {
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
	sep, end := -1, -1
	category := ""
	closed := false
	inTable := false
	var cur *DCGMTest
	// An Info or Warning cell wraps over several rows; its text is built up
	// in buf and added to target when the next row starts something else.
	var buf strings.Builder
	var target *[]string
	flush := func() {
		if target != nil {
			*target = append(*target, strings.TrimSpace(buf.String()))
		}
		buf.Reset()
		target = nil
	}
	for _, l := range lines(data) {
		t := strings.TrimRight(l, " \t")
		m := reDCGMSection.FindStringSubmatch(t)
		border := m == nil && strings.HasPrefix(t, "+---")
		if (border || m != nil) && sep < 0 {
			// The first rule gives the column of the cell separator.
			if k := strings.Index(t[1:], "+"); k >= 0 {
				sep, end = k+1, len(t)-1
			}
		}
		if border {
			if inTable {
				closed = true
			}
			inTable = true
			continue
		}
		if m != nil {
			flush()
			category, cur = m[1], nil
			closed = false
			continue
		}
		if !strings.HasPrefix(t, "|") || sep < 0 || strings.HasPrefix(t, "|=") {
			continue
		}
		closed = false
		name := ""
		if len(t) > sep {
			name = strings.TrimSpace(t[1:min(sep, len(t))])
		}
		// The result cell's text: after "| " and within the cell's width,
		// which is what wrapped cells are cut to.
		chunk := ""
		if width := end - sep - 4; len(t) > sep+2 && width > 0 {
			chunk = t[sep+2 : min(len(t), sep+2+width)]
		}
		if name != "" {
			flush()
		}
		switch {
		case name == "" && target != nil:
			if buf.Len() < 1<<16 {
				buf.WriteString(chunk)
			}
		case name == "Diagnostic" && dcgmResultWord(chunk) == "":
			// the table's own header row
		case category == "Metadata":
			v := strings.TrimSpace(chunk)
			switch name {
			case "DCGM Version":
				r.Version = v
			case "Driver Version Detected":
				r.DriverVersion = v
			case "GPU Device IDs Detected":
				for _, id := range strings.Split(v, ",") {
					if id = strings.TrimSpace(id); id != "" {
						r.DeviceIDs = append(r.DeviceIDs, id)
					}
				}
			}
		case name == "Info" || name == "Warning" || name == "Error":
			if cur == nil && name == "Error" && j.room(len(r.Tests), "tests") {
				// An excerpt that starts below a test's own row. dcgmi
				// prints an Error note only under a test that reported an
				// error (Diag.cpp, HelperDisplayDeploymentResult), so the
				// test is kept, unnamed, as failed.
				r.Tests = append(r.Tests, DCGMTest{Category: category, Result: "FAIL"})
				cur = &r.Tests[len(r.Tests)-1]
			}
			if cur == nil {
				break // an Info or Warning note with no test above it: nothing to attach it to
			}
			target = &cur.Warnings
			if name == "Info" {
				target = &cur.Info
			}
			buf.WriteString(chunk)
		case name != "" && j.room(len(r.Tests), "tests"):
			r.Tests = append(r.Tests, DCGMTest{Category: category, Name: name, Result: dcgmResultWord(chunk), Detail: strings.TrimSpace(chunk)})
			cur = &r.Tests[len(r.Tests)-1]
		}
	}
	flush()
	if len(r.Tests) > 0 && !closed {
		j.unusable("output-truncated", "", "the diagnostic table is not closed: the output is truncated")
	}
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

type dcgmJSONDiag struct {
	TestCategories []*struct {
		Category string `json:"category"`
		Tests    []*struct {
			Name    string `json:"name"`
			Results []*struct {
				GPUIDs   json.RawMessage `json:"gpu_ids"`
				GPUID    json.RawMessage `json:"gpu_id"`
				Status   string          `json:"status"`
				Warnings json.RawMessage `json:"warnings"`
				Info     json.RawMessage `json:"info"`
			} `json:"results"`
		} `json:"tests"`
	} `json:"test_categories"`
	Version json.RawMessage `json:"version"`
}

func parseDCGMJSON(r *DCGMReport, data []byte) error {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(data, &root); err != nil {
		return err
	}
	var diag dcgmJSONDiag
	body, ok := root["DCGM GPU Diagnostic"]
	if !ok {
		body, ok = root["DCGM Diagnostic"]
	}
	if !ok {
		body = data
	}
	if err := json.Unmarshal(body, &diag); err != nil {
		return err
	}
	if v := dcgmJSONText(diag.Version); len(v) > 0 {
		r.Version = v[0]
	}
	if v := dcgmJSONText(root["Driver Version Detected"]); len(v) > 0 {
		r.DriverVersion = v[0]
	}
	r.DeviceIDs = append(r.DeviceIDs, dcgmJSONText(root["GPU Device IDs"])...)
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
			test := DCGMTest{Category: c.Category, Name: t.Name}
			worst := ""
			for _, res := range t.Results {
				if res == nil {
					continue
				}
				ids := dcgmJSONText(res.GPUIDs)
				if len(ids) == 0 {
					ids = dcgmJSONText(res.GPUID)
				}
				st := strings.ToUpper(strings.TrimSpace(res.Status))
				test.GPUResults = append(test.GPUResults, DCGMGPUResult{GPUIDs: strings.Join(ids, ","), Status: st})
				test.Warnings = append(test.Warnings, dcgmJSONText(res.Warnings)...)
				test.Info = append(test.Info, dcgmJSONText(res.Info)...)
				worst = worseDCGM(worst, dcgmResultWord(st))
			}
			test.Result = worst
			test.Detail = strings.ToLower(worst)
			if len(test.GPUResults) > 0 {
				test.Detail = strconv.Itoa(len(test.GPUResults)) + " results"
			}
			r.Tests = append(r.Tests, test)
		}
	}
	return nil
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

func judgeDCGM(r *DCGMReport, j *judge) {
	if len(r.Tests) == 0 {
		j.unusable("not-dcgm", "", "no dcgmi diag results found")
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
	}
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
