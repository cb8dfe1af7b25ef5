package accept

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// save writes v as indented JSON evidence.
func (s *runState) save(name string, v any) (Evidence, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return Evidence{}, err
	}
	return s.saveBytes(name, append(data, '\n'))
}

func (s *runState) saveBytes(name string, data []byte) (Evidence, error) {
	if err := os.WriteFile(filepath.Join(s.plan.EvidenceDir, name), data, 0o644); err != nil {
		return Evidence{}, err
	}
	return evidenceOf(name, data), nil
}

// saveOutput writes a Job stage's logs ("STAGE.CONTAINER.log") and status
// ("STAGE.status.json").
func (s *runState) saveOutput(st Stage, out StageOutput) ([]Evidence, error) {
	var ev []Evidence
	for _, c := range sortedKeys(out.Logs) {
		e, err := s.saveBytes(fmt.Sprintf("%s.%s.log", st, c), out.Logs[c])
		if err != nil {
			return nil, fmt.Errorf("saving evidence: %w", err)
		}
		ev = append(ev, e)
	}
	e, err := s.save(fmt.Sprintf("%s.status.json", st), out)
	if err != nil {
		return nil, fmt.Errorf("saving evidence: %w", err)
	}
	return append(ev, e), nil
}

// nodeEvidence keeps what the kubernetes stage judges: metadata, spec and
// status of the node, without managed fields.
func nodeEvidence(n *corev1.Node) *corev1.Node {
	c := n.DeepCopy()
	c.ManagedFields = nil
	c.Status.Images = nil
	return c
}

// podSummary is the kubernetes stage's evidence about one pod on the node:
// enough to judge, without the pod's environment (which may hold secrets).
type podSummary struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	Phase     corev1.PodPhase   `json:"phase"`
	Images    []string          `json:"images"`
	GPUs      int64             `json:"gpus"`
}

func podsEvidence(pods []corev1.Pod) []podSummary {
	out := []podSummary{}
	for i := range pods {
		p := &pods[i]
		ps := podSummary{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels, Phase: p.Status.Phase, GPUs: podGPUs(p), Images: []string{}}
		for _, c := range p.Spec.Containers {
			ps.Images = append(ps.Images, c.Image)
		}
		out = append(out, ps)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name })
	return out
}

// podsFromEvidence turns saved summaries back into pods for JudgeKubernetes.
func podsFromEvidence(sums []podSummary) []corev1.Pod {
	var pods []corev1.Pod
	for _, s := range sums {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: s.Labels}, Status: corev1.PodStatus{Phase: s.Phase}}
		for i, img := range s.Images {
			c := corev1.Container{Name: fmt.Sprint(i), Image: img}
			if i == 0 && s.GPUs > 0 {
				c.Resources.Limits = corev1.ResourceList{ResourceGPU: *resourceQuantity(s.GPUs)}
			}
			p.Spec.Containers = append(p.Spec.Containers, c)
		}
		pods = append(pods, p)
	}
	return pods
}

// RunFile is run.json in the evidence directory: what an offline re-judge
// needs besides the evidence files.
type RunFile struct {
	FormatVersion string            `json:"formatVersion"`
	Node          string            `json:"node"`
	RunID         string            `json:"runID"`
	Namespace     string            `json:"namespace"`
	Stages        []StageResult     `json:"stages"`
	Expectations  Expectations      `json:"expectations"`
	ExpectFixed   bool              `json:"expectationsFromSpec"`
	Images        map[string]string `json:"images"`
	Thresholds    Thresholds        `json:"thresholds"`
	Force         bool              `json:"force"`
	Continue      bool              `json:"continue"`
	Started       time.Time         `json:"started"`
	Finished      time.Time         `json:"finished"`
}

func (s *runState) writeRunFile() error {
	rf := RunFile{FormatVersion: "1", Node: s.plan.Node, RunID: s.plan.RunID, Namespace: s.plan.Namespace,
		Stages: s.results, Expectations: s.exp, ExpectFixed: s.plan.Expect != nil, Images: imageRefs(s.images),
		Thresholds: thresholds(s.plan), Force: s.plan.Force, Continue: s.plan.Continue, Started: s.started, Finished: s.finished}
	if _, err := s.save("run.json", rf); err != nil {
		return fmt.Errorf("saving run.json: %w", err)
	}
	return nil
}

func imageRefs(m map[Stage]Image) map[string]string {
	out := map[string]string{}
	for st, img := range m {
		out[string(st)] = img.Ref
	}
	return out
}

func thresholds(p Plan) Thresholds {
	t := Thresholds{StageTimeoutSeconds: int64(p.StageTimeout / time.Second), RunTimeoutSeconds: int64(p.RunTimeout / time.Second),
		NCCLMaxBytes: p.NCCLMaxBytes, DCGMLevel: p.DCGMLevel}
	if t.NCCLMaxBytes == "" {
		t.NCCLMaxBytes = "8G"
	}
	if p.Baselines != nil {
		t.Baselines, t.BaselinesAsOf = p.Baselines.Origin, p.Baselines.AsOf
	}
	return t
}

// runVerdict returns the run's verdict: the Worst of its stages' verdicts,
// but for evidence stages (diagnostics), which say whether they captured,
// not what the node is.
func runVerdict(results []StageResult) diag.Verdict {
	vs := make([]diag.Verdict, 0, len(results))
	for _, r := range results {
		if d, _ := stageOf(r.Name); !d.evidence {
			vs = append(vs, r.Verdict)
		}
	}
	return diag.Worst(vs...)
}

// BuildPredicate assembles the record's predicate from a run.
func BuildPredicate(s *runState) *Predicate {
	p := &Predicate{
		FormatVersion: PredicateFormatVersion, RunID: s.plan.RunID, Verdict: runVerdict(s.results),
		Started: s.started, Finished: s.finished, Expectations: s.exp, Thresholds: thresholds(s.plan),
		Images: imageRefs(s.images), Stages: s.results, Gpuctl: Tool{Version: s.plan.Version},
		GPUHealth: []diag.Finding{}, Hardware: Hardware{UUIDs: []string{}, Serials: []string{}, VBIOS: []string{}, InfoROM: []string{}, BusIDs: []string{}},
		Interconnect: Interconnect{PCIe: []string{}, GPULinks: []string{}, NICs: []string{}, NUMA: map[string]string{}, CPUAffinity: map[string]string{}},
	}
	if s.facts != nil {
		p.Node = *s.facts
	} else {
		p.Node = NodeFacts{Name: s.plan.Node}
	}
	if s.plan.Expect != nil && s.plan.Expect.Source != "" && p.Node.Pool == "" {
		p.Node.Pool = poolFromSource(s.plan.Expect.Source)
	}
	p.Hardware.GPUProduct, p.Hardware.GPUCount = s.obs.GPUProduct, len(s.obs.GPUs)
	addGPUs(p, s.obs.GPUs)
	p.Driver = DriverInfo{Version: s.obs.Driver, CUDA: s.obs.DriverCUDA}
	for _, f := range s.obs.Findings {
		if f.Severity != diag.SeverityInfo {
			p.GPUHealth = append(p.GPUHealth, f)
		}
	}
	if t := s.obs.Topo; t != nil {
		addTopology(p, t)
	}
	for _, r := range s.results {
		if d, _ := stageOf(r.Name); d.record != nil && r.Verdict != diag.Skipped {
			d.record(p, r, s)
		}
	}
	p.BaselinesMet = baselinesMet(p)
	return p
}

// addGPUs puts each GPU's identity (UUID, serial, VBIOS, InfoROM, bus id)
// into the record's hardware and its PCIe link into the interconnect.
func addGPUs(p *Predicate, gpus []probe.SMIGPU) {
	for _, g := range gpus {
		p.Hardware.UUIDs = append(p.Hardware.UUIDs, g.UUID)
		p.Hardware.Serials = append(p.Hardware.Serials, g.Serial)
		p.Hardware.VBIOS = append(p.Hardware.VBIOS, g.VBIOS)
		p.Hardware.InfoROM = append(p.Hardware.InfoROM, g.InfoROMImage)
		p.Hardware.BusIDs = append(p.Hardware.BusIDs, g.BusID)
		if l := pcieLink(g); l != "" {
			p.Interconnect.PCIe = append(p.Interconnect.PCIe, l)
		}
	}
}

// addTopology puts the topology stage's matrix, GPU link classes, NICs and
// NUMA and CPU affinities into the record.
func addTopology(p *Predicate, t *probe.TopoReport) {
	p.Interconnect.GPULinks = linkClasses(t)
	p.Topology = topologyOf(t)
	p.Interconnect.NICs = append(p.Interconnect.NICs, nicLabels(t)...)
	maps.Copy(p.Interconnect.NUMA, t.NUMAAffinity)
	maps.Copy(p.Interconnect.CPUAffinity, t.CPUAffinity)
}

func poolFromSource(src string) string {
	if i := strings.Index(src, "pool "); i >= 0 {
		return strings.TrimRight(strings.Fields(src[i+5:])[0], ")")
	}
	return ""
}
