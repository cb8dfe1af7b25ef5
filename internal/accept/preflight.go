package accept

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// PreflightStages are the stages `gpuctl preflight` runs inside a job's own
// pod, in order: the quick node-local ones that need no Kubernetes API.
var PreflightStages = []Stage{StageInventory, StageTopology, StageCUDA}

// PreflightFormatVersion is the formatVersion of a PreflightReport.
const PreflightFormatVersion = "1"

// PreflightReport is the outcome of a preflight: each stage's verdict,
// reason and the findings of its outputs, and the worst verdict. It is a
// gate, not a record: nothing in it is signed.
type PreflightReport struct {
	FormatVersion string         `json:"formatVersion"`
	Kind          string         `json:"kind"`
	Verdict       diag.Verdict   `json:"verdict"`
	Expectations  Expectations   `json:"expectations"`
	Stages        []PreflightRow `json:"stages"`
}

// PreflightRow is one stage of a PreflightReport: the stage's result as
// accept judges it and the findings of the outputs it read ([] when none).
type PreflightRow struct {
	Name     Stage             `json:"name"`
	Verdict  diag.Verdict      `json:"verdict"`
	Reason   string            `json:"reason"`
	Cause    string            `json:"cause,omitempty"`
	Facts    map[string]string `json:"facts,omitempty"`
	Findings []diag.Finding    `json:"findings"`
}

// Preflight judges a preflight's stages one after another with accept's
// judges (Judge), so that what one stage established (the GPUs the
// inventory read) is what the next is judged with.
type Preflight struct {
	exp    Expectations
	bl     *Baselines
	parser Parser
	obs    Observed
	rows   []PreflightRow
}

// NewPreflight returns a preflight judged against exp with the baselines bl
// (their GPU link classes) and parser p.
func NewPreflight(exp Expectations, bl *Baselines, p Parser) *Preflight {
	return &Preflight{exp: exp, bl: bl, parser: p}
}

// Judge decides stage st from out (container -> log, as the stage's Job
// containers are named: ContainerSMIQuery or ContainerNVML and
// ContainerSMINVLink for the inventory, ContainerSMITopo, CUDAContainer(i))
// and adds it to the report.
func (pf *Preflight) Judge(st Stage, out StageOutput) StageResult {
	r := Judge(st, out, pf.exp, pf.bl, pf.parser, &pf.obs)
	pf.rows = append(pf.rows, PreflightRow{Name: st, Verdict: r.Verdict, Reason: r.Reason, Cause: r.Cause, Facts: r.Facts, Findings: pf.findings(st, out)})
	return r
}

// Skip adds stage st as SKIPPED with reason.
func (pf *Preflight) Skip(st Stage, reason string) {
	pf.rows = append(pf.rows, PreflightRow{Name: st, Verdict: diag.Skipped, Reason: reason, Findings: []diag.Finding{}})
}

// GPUs is the number of GPUs the CUDA stage should run on: what the
// inventory read, else the expected count; 0 when neither says.
func (pf *Preflight) GPUs() int {
	_, n := sku(pf.exp, &pf.obs)
	return n
}

// Report returns the report of the stages judged so far; its verdict is the
// worst of theirs (diag.Worst: INCONCLUSIVE when nothing was judged).
func (pf *Preflight) Report() PreflightReport {
	vs := make([]diag.Verdict, 0, len(pf.rows))
	for _, r := range pf.rows {
		vs = append(vs, r.Verdict)
	}
	rows := append([]PreflightRow{}, pf.rows...)
	return PreflightReport{FormatVersion: PreflightFormatVersion, Kind: "preflight", Verdict: diag.Worst(vs...), Expectations: pf.exp, Stages: rows}
}

// findings are the non-info findings of every output of out, in container
// order, each naming its container when the stage has several.
func (pf *Preflight) findings(st Stage, out StageOutput) []diag.Finding {
	fs := []diag.Finding{}
	names := sortedKeys(out.Logs)
	for _, c := range names {
		data := judgedLog(st, c, out.Logs[c])
		if len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		o, err := pf.parser.Parse(kindOf(st, c), data)
		if err != nil || o == nil {
			continue
		}
		for _, f := range o.Findings {
			if f.Severity == diag.SeverityInfo {
				continue
			}
			if len(names) > 1 {
				f.Message = prefixed(c, names, f.Message)
			}
			fs = append(fs, f)
		}
	}
	return fs
}

// CUDAContainer is the name of the cuda stage's container (its log) that
// runs the sample on GPU i.
func CUDAContainer(i int) string { return containerVecAdd + strconv.Itoa(i) }

// WithGPULink returns a copy of b whose Lookup answers every GPU product and
// count with link as the GPU link class between every GPU pair ("NV18"):
// the SKU's own baseline with link in place, or, for a SKU without one, a
// baseline named source that carries no NCCL figure. The topology stage
// then expects link on every pair, and the inventory stage every NVLink
// active when link is an NVLink class (NV#).
func (b *Baselines) WithGPULink(link, source string) *Baselines {
	c := &Baselines{}
	if b != nil {
		*c = *b
	}
	c.gpuLink, c.gpuLinkSource = link, source
	return c
}

// linkOverride is Lookup's answer when WithGPULink set a link class: found
// (the SKU's own baseline, or nil) with the link in place.
func (b *Baselines) linkOverride(found *Baseline) *Baseline {
	var out Baseline
	if found != nil {
		out = *found
	} else {
		out = Baseline{SKU: b.gpuLinkSource, NoFigure: fmt.Sprintf("only the GPU link class was given (%s)", b.gpuLinkSource)}
	}
	out.GPULink = b.gpuLink
	return &out
}

// VisibleDevices is what NVIDIA_VISIBLE_DEVICES gives a container: a
// comma-separated list of GPU UUIDs or indexes, "all", "none" (no GPU,
// driver capabilities only), or "void"/empty (the runtime exposes nothing).
// Source: NVIDIA Container Toolkit, "Specialized Configurations with
// Docker", Environment variables (OCI spec), GPU Enumeration,
// https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
// (read 2026-12-03).
type VisibleDevices struct {
	// Value is the variable as read ("" when unset).
	Value string
	// None: the container was given no GPU ("none", "void" or empty).
	None bool
	// IDs are the listed GPUs (indexes or UUIDs); nil for all of them
	// (unset, "all", or a path: the device plugin's volume-mounts strategy
	// lists the GPUs in files, not in the variable).
	IDs []string
}

// ParseVisibleDevices reads NVIDIA_VISIBLE_DEVICES; set is false when the
// variable is unset (a host, or a runtime that exposes GPUs by CDI: every
// GPU the tools see is the container's).
func ParseVisibleDevices(value string, set bool) VisibleDevices {
	v := VisibleDevices{Value: value}
	t := strings.TrimSpace(value)
	switch {
	case !set || t == "all" || strings.HasPrefix(t, "/"):
	case t == "" || t == "none" || t == "void":
		v.None = true
	default:
		for _, id := range strings.Split(t, ",") {
			if id = strings.TrimSpace(id); id != "" {
				v.IDs = append(v.IDs, id)
			}
		}
	}
	return v
}

// uuids are the listed GPU UUIDs, nil when the list holds an index (the
// container's indexes are its own, not the host's the list uses).
func (v VisibleDevices) uuids() map[string]bool {
	out := map[string]bool{}
	for _, id := range v.IDs {
		if !strings.HasPrefix(id, "GPU-") {
			return nil
		}
		out[id] = true
	}
	return out
}

// OnlyGiven returns r with only the GPUs the list names by UUID (and their
// unanswered queries), attachedGPUs their count: a privileged container
// sees every GPU of the node, and only the pod's are checked. A list of
// indexes, or none, returns r unchanged: the runtime numbers a container's
// GPUs from 0, so its indexes cannot be matched, and it shows the
// container only its GPUs.
func (v VisibleDevices) OnlyGiven(r *probe.NVMLReport) *probe.NVMLReport {
	ids := v.uuids()
	if len(ids) == 0 || r == nil {
		return r
	}
	c := *r
	c.GPUs = nil
	kept := map[string]bool{"": true}
	for _, g := range r.GPUs {
		if ids[g.UUID] {
			c.GPUs = append(c.GPUs, g)
			kept[strconv.Itoa(g.Index)] = true
		}
	}
	c.Unavailable = nil
	for _, u := range r.Unavailable {
		if kept[u.GPU] {
			c.Unavailable = append(c.Unavailable, u)
		}
	}
	n := len(c.GPUs)
	c.AttachedGPUs = &n
	return &c
}
