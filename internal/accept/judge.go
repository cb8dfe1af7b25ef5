package accept

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// StageOutput is what one Job stage left behind: each container's log and
// exit code, and Harness, a reason the harness could not run the probe at all
// (image pull error, unschedulable, timeout, API error) or "".
type StageOutput struct {
	Logs     map[string][]byte `json:"-"`
	ExitCode map[string]int32  `json:"exitCode"`
	// Message holds the termination messages of failed containers.
	Message map[string]string `json:"message,omitempty"`
	Harness string            `json:"harness,omitempty"`
	// Cause is the cause of Harness (CauseHarness when empty).
	Cause string `json:"cause,omitempty"`
}

// Observed carries what earlier stages established about the node, for the
// later stages' SKU lookups and for the record.
type Observed struct {
	GPUProduct string            `json:"gpuProduct,omitempty"`
	GPUCount   int               `json:"gpuCount,omitempty"`
	Driver     string            `json:"driverVersion,omitempty"`
	DriverCUDA string            `json:"driverCUDA,omitempty"`
	GPUs       []probe.SMIGPU    `json:"-"`
	Topo       *probe.TopoReport `json:"-"`
	NCCL       *NCCLSummary      `json:"-"`
	Framework  *FrameworkSummary `json:"-"`
	Baseline   *Baseline         `json:"-"`
	Network    *NetworkSummary   `json:"-"`
	Findings   []diag.Finding    `json:"-"`
	Kubernetes *NodeFacts        `json:"-"`
	Images     map[string]string `json:"-"`
	// AttachedGPUs is the count nvidia-smi says are attached when its
	// output described fewer (a cut -q): the node's count for the later
	// stages, not the GPUs read.
	AttachedGPUs int `json:"-"`
}

// Judge decides one Job stage from its output. It updates obs with what the
// stage established. The returned result has no times or evidence; the
// runner fills them in.
func Judge(st Stage, out StageOutput, exp Expectations, bl *Baselines, p Parser, obs *Observed) StageResult {
	if out.Harness != "" {
		return withCause(result(st, diag.Inconclusive, "%s", out.Harness), out.Cause)
	}
	return withCause(judgeOutput(st, out, exp, bl, p, obs), "")
}

func judgeOutput(st Stage, out StageOutput, exp Expectations, bl *Baselines, p Parser, obs *Observed) StageResult {
	parsed, res, ok := parseAll(st, out, p)
	if d, _ := stageOf(st); d.observe != nil {
		d.observe(parsed, obs)
	}
	if !ok {
		if res.Verdict == diag.Fail {
			res.Reason = nameGPUs(res.Reason, obs.GPUs)
		}
		return res
	}
	return judgeStage(st, judgeInput{parsed: parsed, out: out, exp: exp, bl: bl, obs: obs})
}

// kindOf returns the output kind of a stage's container.
func kindOf(st Stage, container string) probe.Kind {
	switch container {
	case ContainerDmesg:
		return probe.KindDmesg
	case ContainerNVML:
		return probe.KindNVML
	}
	d, _ := stageOf(st)
	if k, ok := d.kinds[container]; ok {
		return k
	}
	return d.kind
}

// parseAll parses every container's log and turns the parser's verdicts
// into the stage verdict when any is not ok: fail -> FAIL, unknown or a
// parse error -> INCONCLUSIVE, a non-zero exit with an ok output ->
// INCONCLUSIVE. ok is true when every output is ok.
func parseAll(st Stage, out StageOutput, p Parser) (map[string]*Output, StageResult, bool) {
	names := make([]string, 0, len(out.Logs))
	for c := range out.Logs {
		names = append(names, c)
	}
	sort.Slice(names, func(i, j int) bool { return matrix.NaturalLess(names[i], names[j]) })
	if len(names) == 0 {
		return nil, result(st, diag.Inconclusive, "no output"), false
	}
	parsed := map[string]*Output{}
	var fails, unknowns []string
	for _, c := range names {
		o, fail, unknown := parseContainer(st, c, names, out, p)
		if o != nil {
			parsed[c] = o
		}
		if fail != "" {
			fails = append(fails, fail)
		}
		if unknown != "" {
			unknowns = append(unknowns, unknown)
		}
	}
	switch {
	case len(fails) > 0:
		return parsed, result(st, diag.Fail, "%s", strings.Join(fails, "; ")), false
	case len(unknowns) > 0:
		unknowns = append(unknowns, quietEmpties(st, names, out)...)
		return parsed, result(st, diag.Inconclusive, "%s", strings.Join(unknowns, "; ")), false
	}
	return parsed, StageResult{}, true
}

// quietEmpties names, for a stage that cannot be judged, the containers of
// names whose empty log is allowed (stageDef.quiet) and that printed
// nothing: with the other empty outputs listed, an empty nvidia-smi
// nvlink -s is said too, and that NVLink was not checked.
func quietEmpties(st Stage, names []string, out StageOutput) []string {
	var msgs []string
	for _, c := range names {
		if !quietOK(st, c) || len(strings.TrimSpace(string(judgedLog(st, c, out.Logs[c])))) > 0 {
			continue
		}
		msg := c + ": empty output"
		if c == ContainerSMINVLink {
			msg += " (nvidia-smi nvlink -s printed nothing), so NVLink was not checked"
		}
		msgs = append(msgs, msg)
	}
	return msgs
}

// parseContainer parses container c's log (names are all the stage's
// containers, for naming c in messages): its output (nil when empty or
// unparsable), and why it shows a node problem (fail) or cannot be judged
// (unknown); both "" for an ok output.
func parseContainer(st Stage, c string, names []string, out StageOutput, p Parser) (o *Output, fail, unknown string) {
	data := judgedLog(st, c, out.Logs[c])
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, "", emptyOutput(st, c, out)
	}
	o, err := p.Parse(kindOf(st, c), data)
	if err != nil {
		return nil, "", fmt.Sprintf("%s: unparsable output: %v", c, err)
	}
	switch o.Verdict {
	case diag.ReportFail:
		return o, prefixed(c, names, describe(o, diag.SeverityError, "the output shows a node problem")), ""
	case diag.ReportOK:
		if code, exited := out.ExitCode[c]; exited && code != 0 {
			return o, "", fmt.Sprintf("%s: exit code %d although the output looks complete", c, code)
		}
		return o, "", ""
	}
	return o, "", prefixed(c, names, describe(o, "", "the output cannot be judged (incomplete or garbled)"))
}

// emptyOutput says why container c's empty log cannot be judged; "" when
// the stage lets c print nothing (a GPU without NVLink prints nothing;
// judgeInventory decides with the SKU) and it did not fail.
func emptyOutput(st Stage, c string, out StageOutput) string {
	code, exited := out.ExitCode[c]
	failed := exited && code != 0
	if quietOK(st, c) && !failed {
		return ""
	}
	msg := "empty output"
	if failed {
		msg = fmt.Sprintf("exit code %d, no output", code)
		if m := out.Message[c]; m != "" {
			msg += ": " + m
		}
	}
	return fmt.Sprintf("%s: %s", c, msg)
}

func prefixed(c string, all []string, msg string) string {
	if len(all) == 1 {
		return msg
	}
	return c + ": " + msg
}

// describe joins the messages of findings of the given severity ("" for any
// non-info), or returns def.
func describe(o *Output, severity diag.Severity, def string) string {
	var msgs []string
	for _, f := range o.Findings {
		if (severity == "" && f.Severity != diag.SeverityInfo) || f.Severity == severity {
			m := f.Message
			// Name the GPU unless the message does (a bare index such as
			// "3" may occur in the message as a number of something else).
			if f.GPU != "" && !strings.Contains(m, "GPU "+f.GPU) && (len(f.GPU) < 8 || !strings.Contains(m, f.GPU)) {
				m = "GPU " + f.GPU + ": " + m
			}
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 0 {
		return def
	}
	return strings.Join(msgs, "; ")
}

func only(parsed map[string]*Output) *Output {
	for _, o := range parsed {
		if o.Kind != probe.KindDmesg {
			return o
		}
	}
	return nil
}

// inventoryQuery returns the GPU inventory of the inventory stage: the
// nvidia-smi-query container's nvidia-smi -q, the gpuctl-probe-nvml
// container's NVML report, or (evidence of other shapes) the one SMI output
// that is not -L or nvlink -s.
func inventoryQuery(parsed map[string]*Output) *Output {
	if o := parsed[ContainerSMIQuery]; o != nil {
		return o
	}
	if o := parsed[ContainerNVML]; o != nil {
		return o
	}
	for c, o := range parsed {
		if o.Kind == probe.KindNvidiaSMI && c != ContainerSMIList && c != ContainerSMINVLink {
			return o
		}
	}
	return nil
}

func judgeInventory(parsed map[string]*Output, out StageOutput, exp Expectations, bl *Baselines, obs *Observed) StageResult {
	o := inventoryQuery(parsed)
	if o == nil || o.SMI == nil {
		return result(StageInventory, diag.Inconclusive, "nvidia-smi output has no GPU inventory")
	}
	smi := o.SMI // observeInventoryStage has recorded it in obs
	persistenceOff := persistenceFindings(smi.GPUs, obs)
	nl := nvlinkOf(o, parsed, out)
	problems := inventoryProblems(smi, parsed, exp, nl.inventoryTool())
	product, n := sku(exp, obs)
	nvNote, problems, stop := judgeNVLinks(nl, bl.Lookup(product, n), problems)
	if stop != nil {
		return *stop
	}
	if len(problems) > 0 {
		return result(StageInventory, diag.Fail, "%s", strings.Join(problems, "; "))
	}
	for _, g := range smi.GPUs {
		if strings.EqualFold(g.MIGMode, "Enabled") {
			return result(StageInventory, diag.Inconclusive, "MIG is enabled on GPU %d: accept probes whole GPUs only", g.Index)
		}
	}
	r := result(StageInventory, diag.Pass, "%d x %s, driver %s (CUDA %s); ECC, retired pages and row remapping clean%s", len(smi.GPUs), obs.GPUProduct, smi.DriverVersion, smi.CUDAVersion, nvNote)
	if len(persistenceOff) > 0 {
		r.Reason += fmt.Sprintf("; persistence mode disabled on GPU %s", strings.Join(persistenceOff, ", "))
	}
	if w := diag.Count(obs.Findings, diag.SeverityWarning); w > 0 {
		r.Reason += fmt.Sprintf("; %d warning(s) recorded in gpuHealth", w)
	}
	r.Facts = map[string]string{"driverVersion": smi.DriverVersion, "cudaVersion": smi.CUDAVersion, "gpuCount": strconv.Itoa(len(smi.GPUs)), "gpuProduct": obs.GPUProduct}
	return r
}

// observeInventoryStage records the GPUs the inventory read whatever its
// verdict, so that a FAILed node's record carries its hardware (UUIDs,
// serials, bus ids, VBIOS, driver) and its subject digest names them.
func observeInventoryStage(parsed map[string]*Output, obs *Observed) {
	if o := inventoryQuery(parsed); o != nil && o.SMI != nil {
		observeInventory(o.SMI, parsed, obs)
	}
}

// nameGPUs adds the UUID and serial of each GPU whose bus id a FAIL reason
// names ("GPU 00000000:07:00.0: ..." -> "GPU 00000000:07:00.0 (UUID GPU-...,
// serial 1650...): ..."), so that the record of an RMA says which board.
func nameGPUs(reason string, gpus []probe.SMIGPU) string {
	for _, g := range gpus {
		if g.BusID == "" || g.UUID == "" || !strings.Contains(reason, g.BusID) || strings.Contains(reason, g.UUID) {
			continue
		}
		id := "UUID " + g.UUID
		if g.Serial != "" {
			id += ", serial " + g.Serial
		}
		reason = strings.Replace(reason, g.BusID, g.BusID+" ("+id+")", 1)
	}
	return reason
}

// observeInventory records what the inventory established: the driver,
// its CUDA, the GPUs (the first one's product names the node's) and every
// output's findings.
func observeInventory(smi *probe.SMIReport, parsed map[string]*Output, obs *Observed) {
	obs.Driver, obs.DriverCUDA, obs.GPUs = smi.DriverVersion, smi.CUDAVersion, smi.GPUs
	obs.GPUCount = len(smi.GPUs)
	if smi.AttachedGPUs != nil && *smi.AttachedGPUs > len(smi.GPUs) {
		obs.AttachedGPUs = *smi.AttachedGPUs
	}
	for _, c := range sortedKeys(parsed) {
		obs.Findings = append(obs.Findings, parsed[c].Findings...)
	}
	if len(smi.GPUs) > 0 {
		obs.GPUProduct = smi.GPUs[0].Name
	}
}

// persistenceFindings adds a warning to obs for every GPU with persistence
// mode off and returns their indexes.
func persistenceFindings(gpus []probe.SMIGPU, obs *Observed) []string {
	var off []string
	for _, g := range gpus {
		if p := strings.ToLower(g.PersistenceMode); p == "disabled" || p == "off" {
			id := g.BusID
			if id == "" {
				id = strconv.Itoa(g.Index)
			}
			off = append(off, strconv.Itoa(g.Index))
			obs.Findings = append(obs.Findings, diag.Finding{Rule: "persistence-disabled", Severity: diag.SeverityWarning, GPU: id,
				Message: "persistence mode is Disabled: the driver unloads between jobs (slower start, lost state); enable it with nvidia-smi -pm 1 or nvidia-persistenced"})
		}
	}
	return off
}

// inventoryProblems compares the inventory with the expectations: the
// GPU count (tool names the inventory's source), each GPU's product, the
// driver (exact or prefix, and not older than DriverMin), and the count
// nvidia-smi -L lists.
func inventoryProblems(smi *probe.SMIReport, parsed map[string]*Output, exp Expectations, tool string) []string {
	var problems []string
	if exp.GPUCount > 0 && len(smi.GPUs) != exp.GPUCount {
		problems = append(problems, fmt.Sprintf("expected %d GPUs (%s), %s shows %d", exp.GPUCount, exp.Source, tool, len(smi.GPUs)))
	}
	for _, g := range smi.GPUs {
		if exp.GPUProduct != "" && !ProductMatches(exp.GPUProduct, g.Name) {
			problems = append(problems, fmt.Sprintf("GPU %d is %q, expected %q (%s)", g.Index, g.Name, exp.GPUProduct, exp.Source))
		}
	}
	if exp.DriverVersion != "" && !driverMatches(exp.DriverVersion, smi.DriverVersion) {
		problems = append(problems, fmt.Sprintf("driver %s, expected %s (%s)", smi.DriverVersion, exp.DriverVersion, exp.Source))
	}
	if exp.DriverMin != "" && smi.DriverVersion != "" && CompareVersions(smi.DriverVersion, exp.DriverMin) < 0 {
		problems = append(problems, fmt.Sprintf("driver %s is older than %s, the oldest accepted (%s)", smi.DriverVersion, exp.DriverMin, exp.Source))
	}
	want := exp.GPUCount
	if want == 0 {
		want = len(smi.GPUs)
	}
	if l := parsed[ContainerSMIList]; l != nil && l.SMI != nil && len(l.SMI.GPUs) != want {
		problems = append(problems, fmt.Sprintf("expected %d GPUs, nvidia-smi -L lists %d", want, len(l.SMI.GPUs)))
	}
	return problems
}

// nvlinkOutput is where the inventory stage reads NVLink state: the
// nvidia-smi nvlink -s container's output, or NVML's report itself.
type nvlinkOutput struct {
	// out is nil when the container printed nothing.
	out *Output
	// ran says whether the stage ran the container (NVML always shows
	// NVLinks).
	ran  bool
	nvml bool
}

func nvlinkOf(inventory *Output, parsed map[string]*Output, out StageOutput) nvlinkOutput {
	if inventory.SMI.Format == "nvml" {
		return nvlinkOutput{out: inventory, ran: true, nvml: true}
	}
	_, ran := out.Logs[ContainerSMINVLink]
	return nvlinkOutput{out: parsed[ContainerSMINVLink], ran: ran}
}

// inventoryTool names the inventory's source in reasons.
func (nl nvlinkOutput) inventoryTool() string {
	if nl.nvml {
		return "NVML"
	}
	return "nvidia-smi"
}

// tool names the NVLink state's source in reasons.
func (nl nvlinkOutput) tool() string {
	if nl.nvml {
		return "NVML"
	}
	return "nvidia-smi nvlink -s"
}

// nvlinkSilent judges an nvidia-smi nvlink -s that printed nothing on a
// node of baseline b: INCONCLUSIVE (stop) when the SKU has NVLink, unless
// the inventory already failed (a problem found is a FAIL whatever the
// NVLink state); else a note for the PASS reason.
func nvlinkSilent(b *Baseline, hasNVLink, failed bool) (string, *StageResult) {
	switch {
	case hasNVLink && failed:
		return "", nil
	case hasNVLink:
		r := result(StageInventory, diag.Inconclusive, "nvidia-smi nvlink -s printed nothing, but %s has NVLink (%s): NVLink state not shown", b.SKU, b.GPULink)
		return "", &r
	case b == nil:
		return "; nvidia-smi nvlink -s printed nothing, so NVLink was not checked (no baseline says whether this SKU has NVLink)", nil
	}
	return fmt.Sprintf("; nvidia-smi nvlink -s printed nothing (%s has no NVLink)", b.SKU), nil
}

// judgeNVLinks adds to problems the inactive NVLinks of a SKU that has
// NVLink (b's link class NV#) and returns the note for the PASS reason, or
// stop, the stage's INCONCLUSIVE result when the NVLink state of such a
// SKU was not shown.
func judgeNVLinks(nl nvlinkOutput, b *Baseline, problems []string) (note string, _ []string, stop *StageResult) {
	if !nl.ran {
		return "", problems, nil
	}
	hasNVLink := b != nil && strings.HasPrefix(b.GPULink, "NV")
	if nl.out == nil {
		note, stop := nvlinkSilent(b, hasNVLink, len(problems) > 0)
		return note, problems, stop
	}
	if nl.out.SMI == nil {
		return "", problems, nil
	}
	links, noLinks, down := nvlinkState(nl.out.SMI.GPUs, b, hasNVLink)
	problems = append(problems, down...)
	if hasNVLink && len(noLinks) > 0 && len(problems) == 0 {
		r := result(StageInventory, diag.Inconclusive, "%s shows no NVLinks for GPU %s, but %s has NVLink (%s)", nl.tool(), strings.Join(noLinks, ", "), b.SKU, b.GPULink)
		return "", problems, &r
	}
	switch {
	case links > 0:
		return fmt.Sprintf("; %d NVLinks active", links), problems, nil
	case nl.nvml:
		return "; NVML shows no NVLinks", problems, nil
	}
	return "; nvlink -s shows no NVLinks", problems, nil
}

// nvlinkState counts the NVLinks of the GPUs, lists the GPUs with none,
// and, for a SKU with NVLink (b), says which GPUs have links down.
func nvlinkState(gpus []probe.SMIGPU, b *Baseline, hasNVLink bool) (links int, noLinks, down []string) {
	noLinks = []string{}
	for _, g := range gpus {
		inactive := inactiveLinks(g)
		links += len(g.NVLinks)
		if len(g.NVLinks) == 0 {
			noLinks = append(noLinks, strconv.Itoa(g.Index))
		}
		if len(inactive) > 0 && hasNVLink {
			down = append(down, fmt.Sprintf("GPU %d: NVLink %s inactive (%d of %d links; %s expects %s)", g.Index, strings.Join(inactive, ", "), len(inactive), len(g.NVLinks), b.SKU, b.GPULink))
		}
	}
	return links, noLinks, down
}

// inactiveLinks are the numbers of g's NVLinks that are down.
func inactiveLinks(g probe.SMIGPU) []string {
	var down []string
	for _, l := range g.NVLinks {
		if !l.Active {
			down = append(down, strconv.Itoa(l.Link))
		}
	}
	return down
}

// driverMatches reports whether observed is want or starts with want's
// components ("535" matches "535.161.08", not "5350.1").
func driverMatches(want, observed string) bool {
	return observed == want || strings.HasPrefix(observed, want+".")
}

// sku returns the product and GPU count later stages judge against: the
// inventory's, else the expectations'; a cut inventory (fewer GPUs
// described than attached) gives the attached count, so a topology matrix
// of every GPU is not judged against the GPUs the cut output kept.
func sku(exp Expectations, obs *Observed) (string, int) {
	product, n := obs.GPUProduct, max(obs.GPUCount, obs.AttachedGPUs)
	if product == "" {
		product = exp.GPUProduct
	}
	if n == 0 {
		n = exp.GPUCount
	}
	return product, n
}

func judgeTopology(parsed map[string]*Output, exp Expectations, bl *Baselines, obs *Observed) StageResult {
	o := only(parsed)
	if o == nil || o.Topo == nil {
		return result(StageTopology, diag.Inconclusive, "topo -m output has no matrix")
	}
	t := o.Topo
	obs.Topo = t
	product, n := sku(exp, obs)
	if n > 0 && len(t.GPUs) != n {
		return result(StageTopology, diag.Fail, "topo -m shows %d GPUs, expected %d", len(t.GPUs), n)
	}
	links := gpuPairLinks(t)
	classes := linkClasses(t)
	facts := map[string]string{"gpuLinks": strings.Join(classes, ","), "nics": strconv.Itoa(len(t.NICs))}
	b := bl.Lookup(product, n)
	if b == nil || b.GPULink == "" {
		r := result(StageTopology, diag.Pass, "GPU links %s recorded; no expected link class for %s x%d", strings.Join(classes, ","), product, n)
		r.Facts = facts
		return r
	}
	var wrong []string
	for _, pair := range sortedKeys(links) {
		if links[pair] != b.GPULink {
			wrong = append(wrong, fmt.Sprintf("%s is %s", pair, links[pair]))
		}
	}
	if len(wrong) > 0 {
		return result(StageTopology, diag.Fail, "expected %s between every GPU pair (%s): %s", b.GPULink, b.SKU, strings.Join(wrong, ", "))
	}
	r := result(StageTopology, diag.Pass, "all %d GPU pairs %s as expected for %s; %d NICs", len(links), b.GPULink, b.SKU, len(t.NICs))
	r.Facts = facts
	return r
}

// linkClasses are the distinct links between GPU pairs ("NV18"), sorted.
func linkClasses(t *probe.TopoReport) []string {
	seen := map[string]bool{}
	for _, c := range gpuPairLinks(t) {
		seen[c] = true
	}
	return sortedKeys(seen)
}

func judgeCUDA(parsed map[string]*Output, exp Expectations, obs *Observed) StageResult {
	_, n := sku(exp, obs)
	passed := 0
	for c, o := range parsed {
		if o.CUDA == nil || o.CUDA.Result != "PASS" {
			return result(StageCUDA, diag.Fail, "%s: the CUDA sample did not report a pass", c)
		}
		passed++
	}
	if n > 0 && passed != n {
		return result(StageCUDA, diag.Inconclusive, "CUDA sample ran on %d of %d GPUs", passed, n)
	}
	return result(StageCUDA, diag.Pass, "CUDA sample passed on %d GPU(s)", passed)
}

func judgeNCCL(parsed map[string]*Output, exp Expectations, bl *Baselines, obs *Observed) StageResult {
	o := only(parsed)
	if o == nil || o.NCCL == nil {
		return result(StageNCCL, diag.Inconclusive, "all_reduce_perf output has no result rows")
	}
	f := ncclSummary(o.NCCL)
	obs.NCCL = f
	product, n := sku(exp, obs)
	facts := map[string]string{
		"busBandwidthGBps": strconv.FormatFloat(f.BusBandwidthGBps, 'f', 2, 64),
		"largestBytes":     strconv.FormatInt(f.LargestBytes, 10),
		"wrong":            strconv.Itoa(f.Wrong),
	}
	withFacts := func(v diag.Verdict, format string, args ...any) StageResult {
		r := result(StageNCCL, v, format, args...)
		r.Facts = facts
		return r
	}
	if f.Wrong > 0 {
		return result(StageNCCL, diag.Fail, "all_reduce_perf returned wrong values in %d results", f.Wrong)
	}
	if f.Wrong < 0 {
		return result(StageNCCL, diag.Inconclusive, "all_reduce_perf ran without validation (-c 0): correctness not shown")
	}
	if ranks := o.NCCL.Ranks; n > 0 && ranks > 0 && ranks != n {
		return result(StageNCCL, diag.Inconclusive, "all_reduce_perf ran on %d ranks, the node has %d GPUs", ranks, n)
	}
	b := bl.Lookup(product, n)
	obs.Baseline = b
	if b == nil {
		return withFacts(diag.Pass, "results correct; busbw %.1f GB/s at %s not judged: no baseline for %s x%d (add one with --baselines)", f.BusBandwidthGBps, humanBytes(f.LargestBytes), product, n)
	}
	facts["baseline"] = b.SKU
	if b.NoFigure != "" {
		return withFacts(diag.Inconclusive, "results correct; busbw %.1f GB/s at %s not judged: no baseline for %s: %s", f.BusBandwidthGBps, humanBytes(f.LargestBytes), b.SKU, b.NoFigure)
	}
	if f.LargestBytes < b.MinBytes {
		return withFacts(diag.Inconclusive, "largest message %s is below %s: bandwidth not judged against %s", humanBytes(f.LargestBytes), humanBytes(b.MinBytes), b.SKU)
	}
	if f.BusBandwidthGBps < b.MinBusBandwidthGBps {
		return withFacts(diag.Fail, "busbw %.1f GB/s at %s is below the %s baseline minimum %.0f GB/s (expected %s; %s)", f.BusBandwidthGBps, humanBytes(f.LargestBytes), b.SKU, b.MinBusBandwidthGBps, b.ExpectedBusBW, strings.Join(b.Sources, ", "))
	}
	return withFacts(diag.Pass, "busbw %.1f GB/s at %s meets the %s baseline minimum %.0f GB/s; 0 wrong", f.BusBandwidthGBps, humanBytes(f.LargestBytes), b.SKU, b.MinBusBandwidthGBps)
}

func humanBytes(b int64) string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", b>>30)
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d B", b)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return matrix.NaturalLess(out[i], out[j]) })
	return out
}
