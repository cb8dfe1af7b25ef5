package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// The framework checks' output (gpuctl accept's framework stage runs
// internal/accept/data/framework.py, written for gpuctl, under torchrun):
// one line per check and a summary line, each FrameworkLinePrefix followed by
// one JSON object whose "formatVersion" is FrameworkFormat and whose
// "record" is "check" or "summary". Other lines (torchrun's own log, Python
// warnings) are skipped, and torchrun's "[default0]:" tee prefix before the
// marker is allowed.
const (
	FrameworkLinePrefix = "GPUCTL-FRAMEWORK "
	FrameworkFormat     = "gpuctl-framework/v1"
)

// FrameworkReport is the framework checks' result: the torch that ran them,
// on what, and each check. Durations are milliseconds.
type FrameworkReport struct {
	Header
	// Summary is true when the summary line was read (the script finished).
	Summary bool `json:"summary"`
	// OK is the summary's own verdict (every check ok).
	OK      bool   `json:"ok"`
	Torch   string `json:"torch"`
	CUDA    string `json:"cuda"`
	Device  string `json:"device"`
	Backend string `json:"backend"`
	// World is the number of ranks, LocalWorld the ranks per node, Nodes
	// the distinct hosts.
	World      int      `json:"world"`
	LocalWorld int      `json:"localWorld"`
	Nodes      int      `json:"nodes"`
	GPUs       []string `json:"gpus"`
	DurationMs float64  `json:"durationMs"`
	// Listed are the checks the summary names, Failed those it says failed.
	Listed []string         `json:"listed"`
	Failed []string         `json:"failedChecks"`
	Checks []FrameworkCheck `json:"checks"`
}

// FrameworkCheck is one check: its verdict over every rank, the rank it
// reports on (the first failing one, else rank 0) with that rank's
// measurements and the thresholds it was held to, and every rank's own
// result. Values and thresholds are numbers, booleans or strings (a
// non-finite number is the string "nan", "inf" or "-inf").
type FrameworkCheck struct {
	Name       string          `json:"name"`
	OK         bool            `json:"ok"`
	Device     string          `json:"device"`
	Node       string          `json:"node"`
	Rank       int             `json:"rank"`
	DurationMs float64         `json:"durationMs"`
	Values     map[string]any  `json:"values"`
	Thresholds map[string]any  `json:"thresholds"`
	Error      *FrameworkError `json:"error"`
	Ranks      []FrameworkRank `json:"ranks"`
}

// FrameworkRank is one rank's result of a check.
type FrameworkRank struct {
	Rank       int             `json:"rank"`
	Node       string          `json:"node"`
	Device     string          `json:"device"`
	OK         bool            `json:"ok"`
	DurationMs float64         `json:"durationMs"`
	Values     map[string]any  `json:"values"`
	Error      *FrameworkError `json:"error"`
}

// FrameworkError is the Python exception a check raised: its class and a
// one-line message.
type FrameworkError struct {
	Class   string `json:"class"`
	Message string `json:"message"`
}

// frameworkLine is one JSON line as printed.
type frameworkLine struct {
	FormatVersion string          `json:"formatVersion"`
	Record        string          `json:"record"`
	Check         string          `json:"check"`
	OK            *bool           `json:"ok"`
	Device        string          `json:"device"`
	Node          string          `json:"node"`
	Rank          int             `json:"rank"`
	DurationMs    float64         `json:"durationMs"`
	Values        map[string]any  `json:"values"`
	Thresholds    map[string]any  `json:"thresholds"`
	Error         *FrameworkError `json:"error"`
	Ranks         []FrameworkRank `json:"ranks"`
	// The summary's fields.
	Checks     []string `json:"checks"`
	Failed     []string `json:"failed"`
	Torch      string   `json:"torch"`
	CUDA       string   `json:"cuda"`
	Backend    string   `json:"backend"`
	World      int      `json:"world"`
	LocalWorld int      `json:"localWorld"`
	Nodes      int      `json:"nodes"`
	GPUs       []string `json:"gpus"`
}

// frameworkHarnessErrors are exception classes that say the script and the
// image's torch do not fit (an API missing or changed), not that the node
// computed wrongly: the check cannot judge the node.
var frameworkHarnessErrors = map[string]bool{
	"ImportError": true, "ModuleNotFoundError": true, "AttributeError": true,
	"NameError": true, "TypeError": true, "SyntaxError": true,
}

// ParseFramework reads the framework checks' output. A failed check is a
// node problem (an error finding naming the check and its numbers), unless
// it failed with an exception of frameworkHarnessErrors; a missing summary
// line (the script did not finish), a line of another format version, a
// JSON line that does not decode, or no framework line at all make the
// verdict unknown.
func ParseFramework(data []byte) *FrameworkReport {
	r := &FrameworkReport{}
	j := newJudge(&r.Header, KindFramework)
	fr := frameworkReader{r: r, j: j}
	for _, l := range lines(data) {
		fr.line(l)
	}
	judgeFramework(r, j, fr.seen)
	j.done()
	fillNil(r)
	return r
}

// frameworkReader reads the output line by line.
type frameworkReader struct {
	r *FrameworkReport
	j *judge
	// seen counts the framework lines read, whether usable or not.
	seen int
}

func (fr *frameworkReader) line(l string) {
	i := strings.Index(l, FrameworkLinePrefix)
	if i < 0 {
		return
	}
	fr.seen++
	var fl frameworkLine
	// The first JSON value after the marker; what follows it on the line
	// is another stream's text run into it (stdout and stderr share a log).
	dec := json.NewDecoder(strings.NewReader(l[i+len(FrameworkLinePrefix):]))
	if err := dec.Decode(&fl); err != nil {
		fr.j.unusable("output-garbled", "", "a %s line is not JSON (truncated or garbled): %v", strings.TrimSpace(FrameworkLinePrefix), err)
		return
	}
	if fl.FormatVersion != FrameworkFormat {
		fr.j.unusable("framework-format-unknown", "", "a line of format %q, which gpuctl does not read (want %q)", fl.FormatVersion, FrameworkFormat)
		return
	}
	switch {
	case fl.Record == "check" && fl.Check != "" && fl.OK != nil:
		fr.check(fl)
	case fl.Record == "summary" && fl.OK != nil:
		fr.summary(fl)
	default:
		fr.j.unusable("output-garbled", "", "a %s line with record %q lacks its check name or ok", FrameworkFormat, fl.Record)
	}
}

func (fr *frameworkReader) check(fl frameworkLine) {
	if !fr.j.room(len(fr.r.Checks), "checks") {
		return
	}
	fr.r.Checks = append(fr.r.Checks, FrameworkCheck{Name: fl.Check, OK: *fl.OK, Device: fl.Device, Node: fl.Node, Rank: fl.Rank,
		DurationMs: fl.DurationMs, Values: fl.Values, Thresholds: fl.Thresholds, Error: fl.Error, Ranks: fl.Ranks})
}

func (fr *frameworkReader) summary(fl frameworkLine) {
	r := fr.r
	if r.Summary {
		fr.j.unusable("output-garbled", "", "two summary lines: the output of two runs")
		return
	}
	r.Summary, r.OK, r.Torch, r.CUDA, r.Device, r.Backend = true, *fl.OK, fl.Torch, fl.CUDA, fl.Device, fl.Backend
	r.World, r.LocalWorld, r.Nodes, r.GPUs, r.DurationMs = fl.World, fl.LocalWorld, fl.Nodes, fl.GPUs, fl.DurationMs
	r.Listed, r.Failed = fl.Checks, fl.Failed
}

// Check returns the check named name, or nil.
func (r *FrameworkReport) Check(name string) *FrameworkCheck {
	for i := range r.Checks {
		if r.Checks[i].Name == name {
			return &r.Checks[i]
		}
	}
	return nil
}

func judgeFramework(r *FrameworkReport, j *judge, seen int) {
	if seen == 0 {
		j.unusable("not-framework-output", "", "no %s line: the framework checks did not run (or this is another tool's output)", strings.TrimSpace(FrameworkLinePrefix))
		return
	}
	for _, c := range r.Checks {
		judgeFrameworkCheck(j, c)
	}
	if !r.Summary {
		j.unusable("output-truncated", "", "the output ends before the summary line (%d checks read): the script did not finish", len(r.Checks))
		return
	}
	judgeFrameworkSummary(r, j)
	judgeFrameworkNumbers(r, j)
}

// Thresholds gpuctl holds the framework checks to, whatever the script
// says of itself (the same as data/framework.py's): matmul's max relative
// error against the float64 reference (TF32 off), the training loss's
// final/initial ratio. All-reduce and checkpoint must be exact, inference
// finite and repeatable.
const (
	FrameworkMaxRelErr    = 1e-4
	FrameworkMaxLossRatio = 0.1
)

// frameworkRequired are the checks a whole run has.
var frameworkRequired = []string{"matmul", "all-reduce", "training", "checkpoint", "inference"}

// judgeFrameworkNumbers holds a run that says ok to its numbers: every
// required check is there, and each one's measurements meet gpuctl's
// thresholds (a script or image that says ok on numbers that do not is
// caught, and so is an edited log).
func judgeFrameworkNumbers(r *FrameworkReport, j *judge) {
	for _, name := range frameworkRequired {
		c := r.Check(name)
		if c == nil {
			j.unusable("output-truncated", "", "the output has no %s check: a run of gpuctl's framework checks has %s", name, strings.Join(frameworkRequired, ", "))
			continue
		}
		if !c.OK {
			continue
		}
		if why := frameworkNumbersProblem(*c); why != "" {
			j.fail("framework-"+name+"-failed", "", "framework check %s says ok, but %s", name, why)
		}
	}
}

// frameworkTrainingProblem: the loss ratio within gpuctl's threshold, and
// DDP's ranks ending with identical parameters (older outputs lack the
// measurement).
func frameworkTrainingProblem(c FrameworkCheck, ratio float64) string {
	if !(ratio <= FrameworkMaxLossRatio) {
		return fmt.Sprintf("the loss ratio %g is not <= %g", ratio, FrameworkMaxLossRatio)
	}
	if d, ok := c.Number("paramsMaxDiff"); ok && d != 0 {
		return fmt.Sprintf("the ranks' parameters differ by up to %g after DDP training: the gradient all-reduce did not synchronise them", d)
	}
	return ""
}

// frameworkNumbersProblem says how check c's measurements miss gpuctl's
// thresholds ("" when they meet them).
func frameworkNumbersProblem(c FrameworkCheck) string {
	num := func(k string) float64 {
		v, ok := c.Number(k)
		if !ok {
			return math.NaN()
		}
		return v
	}
	switch c.Name {
	case "matmul":
		if e := num("maxRelErr"); !(e <= FrameworkMaxRelErr) {
			return fmt.Sprintf("max relative error %g is not <= %g", e, FrameworkMaxRelErr)
		}
	case "all-reduce":
		if w := num("wrong"); w != 0 {
			return fmt.Sprintf("%g elements are wrong", w)
		}
	case "training":
		return frameworkTrainingProblem(c, num("lossRatio"))
	case "checkpoint":
		if m, a, b := num("mismatched"), num("lossOriginal"), num("lossRestored"); m != 0 || a != b {
			return fmt.Sprintf("%g tensors differ after the restore, loss %g vs %g", m, a, b)
		}
	case "inference":
		if c.Values["finite"] != true || c.Values["identical"] != true {
			return fmt.Sprintf("finite %v, identical %v", c.Values["finite"], c.Values["identical"])
		}
	}
	return ""
}

// judgeFrameworkSummary holds the summary to the check lines: it lists
// each of them, and its verdict is theirs.
func judgeFrameworkSummary(r *FrameworkReport, j *judge) {
	var names, failed []string
	for _, c := range r.Checks {
		names = append(names, c.Name)
		if !c.OK {
			failed = append(failed, c.Name)
		}
	}
	if strings.Join(names, ",") != strings.Join(r.Listed, ",") {
		j.unusable("output-truncated", "", "the summary lists checks %s, the output has %s", strings.Join(r.Listed, ", "), strings.Join(names, ", "))
	}
	if r.OK != (len(failed) == 0) || strings.Join(failed, ",") != strings.Join(r.Failed, ",") {
		j.unusable("output-garbled", "", "the summary's verdict (failed: %s) contradicts the check lines (failed: %s)", strings.Join(r.Failed, ", "), strings.Join(failed, ", "))
	}
}

func judgeFrameworkCheck(j *judge, c FrameworkCheck) {
	if c.OK {
		return
	}
	where := fmt.Sprintf("on %s (rank %d, node %s)", c.Device, c.Rank, c.Node)
	if c.Device == "" {
		where = "before any check (setup)"
	}
	if c.Error != nil {
		msg := fmt.Sprintf("framework check %s failed %s: %s: %s", c.Name, where, c.Error.Class, c.Error.Message)
		if frameworkHarnessErrors[c.Error.Class] {
			j.unusable("framework-check-error", "", "%s (the image's torch does not fit the script)", msg)
			return
		}
		j.fail("framework-"+c.Name+"-failed", "", "%s", msg)
		return
	}
	j.fail("framework-"+c.Name+"-failed", "", "framework check %s failed %s: %s", c.Name, where, frameworkFacts(c))
}

// frameworkFactKeys are the measurements a check's failure quotes, each
// with the threshold key it is held to ("" for none).
var frameworkFactKeys = map[string][][2]string{
	"matmul":     {{"maxRelErr", "maxRelErr"}, {"n", ""}, {"elementwiseSum", ""}, {"elementwiseWant", ""}},
	"all-reduce": {{"wrong", "wrong"}, {"elements", ""}, {"world", ""}},
	"training":   {{"lossRatio", "maxLossRatio"}, {"initialLoss", ""}, {"finalLoss", ""}, {"steps", ""}},
	"checkpoint": {{"mismatched", "mismatched"}, {"tensors", ""}, {"firstMismatch", ""}, {"lossOriginal", ""}, {"lossRestored", ""}},
	"inference":  {{"finite", "finite"}, {"identical", "identical"}},
}

// frameworkFacts names a failed check's numbers and thresholds
// ("maxRelErr 0.31 (threshold 0.0001), n 2048"); for a check gpuctl does
// not know, every value in key order.
func frameworkFacts(c FrameworkCheck) string {
	keys, known := frameworkFactKeys[c.Name]
	if !known {
		for k := range c.Values {
			keys = append(keys, [2]string{k, ""})
		}
		sort.Slice(keys, func(a, b int) bool { return keys[a][0] < keys[b][0] })
	}
	var parts []string
	for _, k := range keys {
		v, ok := c.Values[k[0]]
		if !ok || v == "" {
			continue
		}
		p := k[0] + " " + frameworkValue(v)
		if t, ok := c.Thresholds[k[1]]; ok && k[1] != "" {
			p += " (threshold " + frameworkValue(t) + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "no measurements"
	}
	return strings.Join(parts, ", ")
}

// frameworkValue prints a JSON value of a check: numbers in %g.
func frameworkValue(v any) string {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return fmt.Sprintf("%d", int64(x))
		}
		return fmt.Sprintf("%.4g", x)
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(bytes.TrimSpace(b))
}

// Number returns the numeric value key of a check's values; false when it
// is absent or not a number.
func (c FrameworkCheck) Number(key string) (float64, bool) {
	f, ok := c.Values[key].(float64)
	return f, ok
}

// ThresholdNumber returns the numeric threshold key; false when absent or
// not a number.
func (c FrameworkCheck) ThresholdNumber(key string) (float64, bool) {
	f, ok := c.Thresholds[key].(float64)
	return f, ok
}
