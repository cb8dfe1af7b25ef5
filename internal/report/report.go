// Package report builds what `gpuctl report` shows from acceptance records:
// per node the verdict of the run and of each stage, the GPUs and their
// health findings, the NCCL bus bandwidth by message size against the
// baseline, the topology matrix with each link's class and the evidence
// files with their digests; for several records a fleet table. It decodes
// records only through internal/record's readers (record.Verify with a key,
// record.Decode without), returns a plain model and never prints: the HTML
// is internal/cli/render's.
package report

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
)

// Input is one record file as read: its path (as given) and bytes.
type Input struct {
	Path string
	Data []byte
}

// Report is the model of one report page.
type Report struct {
	// KeyChecked says whether signatures were verified (a key was given);
	// without a key records are decoded unverified and the page says so.
	KeyChecked bool
	Nodes      []Node
	// Fleet counts the nodes per stated verdict (whatever their trust);
	// Unverified the records a key was given for that did not verify,
	// refused ones included (they have no predicate).
	Fleet      map[diag.Verdict]int
	Unverified int
	// Refused counts the records that are not acceptance records or that
	// decoders would read differently (record.ErrRecordFormat); they are
	// nodes with the reason in Problems and no predicate.
	Refused int
	// Mismatched counts the records read without a key whose subject does
	// not name the predicate's node (their Problems say so).
	Mismatched int
	// Disagreeing counts the records whose stated verdict is not the one
	// their stages give (Node.Disagreement says how).
	Disagreeing int
}

// Trust is how far a record's content can be trusted, as the page marks
// it (data-trust).
type Trust string

// The trusts of a record.
const (
	// TrustVerified: signed, and the signature, payload and subject
	// verified with the given key (Node.KeyID names it).
	TrustVerified Trust = "verified"
	// TrustUnverified: signed but not verified (no key was given, or the
	// key did not verify it), or refused before its signature was looked
	// at.
	TrustUnverified Trust = "unverified"
	// TrustUnsigned: an in-toto Statement or an envelope without a
	// signature: anyone could have written it.
	TrustUnsigned Trust = "unsigned"
)

// Node is one record: one node's acceptance run.
type Node struct {
	Record string
	// Trust is what the page marks the record with; Signed says that it
	// holds a signature (verified or not).
	Trust  Trust
	Signed bool
	// Verified is true when a key was given and every check held;
	// Problems are verify's problems otherwise; without a key, a subject
	// that does not name the predicate's node; for a refused record, why.
	Verified bool
	Refused  bool
	Problems []string
	KeyID    string
	// Predicate is nil when the record did not verify: an unverified
	// payload is not shown.
	HasPredicate bool
	// StagesVerdict is the verdict the stages give (diag.Worst of theirs);
	// Disagreement says how it differs from the stated Verdict ("" when
	// they agree).
	StagesVerdict diag.Verdict
	Disagreement  string

	Name, RunID  string
	Verdict      diag.Verdict
	Started      time.Time
	Duration     time.Duration
	Rejudged     bool
	Pool         string
	InstanceType string
	GPUProduct   string
	GPUCount     int
	Driver, CUDA string
	Gpuctl       string
	Stages       []StageOutcome
	GPUs         []GPU
	NodeFindings []diag.Finding // GPU health findings not tied to one GPU of the record
	NCCL         *NCCL
	Topology     *Topology
	// Regressions are what got worse since the node's previous record
	// ("KIND: MESSAGE", the record's order; empty without a previous
	// record or when nothing did): the fleet table shows how many and
	// the first, the node's section all of them.
	Regressions []string
	Previous    string
	// FirstProblem is the first FAIL or INCONCLUSIVE stage ("STAGE:
	// REASON"); a regression is not a problem of a stage (a node whose
	// busbw fell 20 % but stays above the baseline PASSes).
	FirstProblem string
	// NCCLMulti is the nccl-multi stage's outcome; nil when the record has
	// no such stage.
	NCCLMulti     *Multi
	EvidenceFiles int
	// System is what the record says of the node's software and the
	// rest of the practice's record template (fillSystem).
	System
}

// System is the node's software (the Node's status.nodeInfo and the GPU
// pods on it), its RDMA NICs, the dcgmi diag run level (0: the stage did
// not run or the record predates it), the baselines the judged figures
// were held to, and the evidence bundle's URI ("" without one).
type System struct {
	OSImage, Kernel, ContainerRuntime, Kubelet string
	DevicePlugin, GPUOperator                  string
	DCGMLevel                                  int
	NICs                                       []record.NetworkDevice
	Baselines                                  []record.BaselineMet
	EvidenceURI                                string
}

// Multi is a fleet stage's outcome for one node (nccl-multi: all_reduce
// across nodes): its verdict, cause and reason, and what the stage's facts
// say of the node's groups (records written before gpuctl kept them have
// none: zero values). BusBandwidthGBps is the lowest busbw (GB/s) the
// node's groups measured (0: none measured), at LargestBytes, in Group
// over Transport; Groups are the node's groups, Peers the other nodes of
// them (empty when the record counts them only) and Nodes how many nodes
// they hold, the node included (0: not recorded).
type Multi struct {
	Verdict          diag.Verdict
	Cause, Reason    string
	BusBandwidthGBps float64
	LargestBytes     int64
	Group, Transport string
	Groups, Peers    []string
	Nodes            int
}

// StageOutcome is one stage's outcome and its evidence.
type StageOutcome struct {
	Name     string
	Verdict  diag.Verdict
	Cause    string
	Reason   string
	Duration time.Duration
	Evidence []record.Evidence
}

// GPU is one GPU of the record with its health findings.
type GPU struct {
	Index                               int
	BusID, UUID, Serial, VBIOS, InfoROM string
	Findings                            []diag.Finding
	Worst                               diag.Severity // "" when none
}

// NCCL is the nccl stage's measurement. Points are one per message size,
// ascending; empty for a record written before the predicate had rows
// (RowsRecorded false).
type NCCL struct {
	Verdict          diag.Verdict
	BusBandwidthGBps float64
	LargestBytes     int64
	RowsRecorded     bool
	Points           []Point
	// MinGBps is the baseline's minimum busbw at the largest size and
	// ExpectedGBps the informative figure (0 when none); SKU and the
	// algorithms name them.
	Baseline *Baseline
}

// Baseline is the baseline the nccl stage was judged against.
type Baseline struct {
	SKU          string
	MinGBps      float64
	MinAlgo      string
	ExpectedGBps float64
	ExpectedAlgo string
	MinBytes     int64
	Sources      []string
	Origin       string
	ExpectedText string
}

// Point is one message size: the better busbw of its two halves (as the
// nccl stage judges the largest size) and both halves as recorded.
type Point struct {
	SizeBytes        int64
	BusBandwidthGBps float64
	OutOfPlace       *record.NCCLMeasurement
	InPlace          *record.NCCLMeasurement
}

// Topology is the topo -m matrix with a class per cell.
type Topology struct {
	Devices  []string
	NICNames map[string]string
	Cells    [][]Cell
}

// Cell is one link of the matrix.
type Cell struct {
	Link  string
	Class LinkClass
}

// LinkClass groups nvidia-smi's link legend by how close two devices are.
type LinkClass string

// The classes, closest first (nvidia-smi topo -m's legend).
const (
	LinkSelf   LinkClass = "self"   // X
	LinkNVLink LinkClass = "nvlink" // NV#: a bonded set of NVLinks
	LinkPCIe   LinkClass = "pcie"   // PIX, PXB: PCIe switches only
	LinkHost   LinkClass = "host"   // PHB: a PCIe host bridge
	LinkNUMA   LinkClass = "numa"   // NODE: host bridges within one NUMA node
	LinkSystem LinkClass = "system" // SYS: across NUMA nodes (SMP interconnect)
	LinkOther  LinkClass = "other"  // anything else ("", "N/A", SOC...)
)

// ClassOf returns the class of a topo -m link value.
func ClassOf(link string) LinkClass {
	switch {
	case link == "X":
		return LinkSelf
	case strings.HasPrefix(link, "NV"):
		return LinkNVLink
	case link == "PIX" || link == "PXB":
		return LinkPCIe
	case link == "PHB":
		return LinkHost
	case link == "NODE":
		return LinkNUMA
	case link == "SYS":
		return LinkSystem
	}
	return LinkOther
}

// ErrNoRecords is Build without inputs.
var ErrNoRecords = errors.New("no records")

// Build decodes every input, verifying it with verifier when that is not
// nil (record.Verify: signature, payload, subject), and returns the report
// in input order. A record that cannot be decoded (record.ErrRecordFormat:
// not an acceptance record, or JSON that decoders read differently) is a
// refused Node with the reason in Problems; a record that decodes but does
// not verify is a Node with Problems and no predicate. Build checks ctx
// before each record and returns its error (wrapped) once it is done.
func Build(ctx context.Context, inputs []Input, verifier dsse.Verifier) (*Report, error) {
	if len(inputs) == 0 {
		return nil, ErrNoRecords
	}
	r := &Report{KeyChecked: verifier != nil, Fleet: map[diag.Verdict]int{}}
	read, err := readAll(ctx, inputs, verifier)
	if err != nil {
		return nil, err
	}
	for i, in := range inputs {
		if err := r.add(in, read[i]); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readResult is one input as node read it.
type readResult struct {
	n          Node
	p          *record.Predicate
	mismatched bool
	err        error
}

// readAll reads every input with node, on as many goroutines as the
// machine has CPUs (records are independent; decoding and verifying them
// is most of report's time: about 2 ms a record), in the inputs' order.
// Errors: ctx's, once it is done.
func readAll(ctx context.Context, inputs []Input, verifier dsse.Verifier) ([]readResult, error) {
	out := make([]readResult, len(inputs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(inputs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				n, p, mismatched, err := node(ctx, inputs[i], verifier)
				out[i] = readResult{n, p, mismatched, err}
			}
		}()
	}
	var err error
	for i := range inputs {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("reading records: %w", err)
	}
	return out, nil
}

// add counts one input's result into the report. Errors: a record that
// could not be read for another reason than its format.
func (r *Report) add(in Input, res readResult) error {
	n, p, err := res.n, res.p, res.err
	switch {
	case errors.Is(err, record.ErrRecordFormat):
		n = Node{Record: in.Path, Trust: TrustUnverified, Refused: true, Problems: []string{strings.TrimPrefix(err.Error(), in.Path+": ")}}
		r.Refused++
	case err != nil:
		return fmt.Errorf("%s: %w", in.Path, err)
	}
	if res.mismatched {
		r.Mismatched++
	}
	if p == nil {
		if r.KeyChecked {
			r.Unverified++
		}
		r.Nodes = append(r.Nodes, n)
		return nil
	}
	fill(&n, p)
	if n.Disagreement != "" {
		r.Disagreeing++
	}
	r.Fleet[n.Verdict]++
	r.Nodes = append(r.Nodes, n)
	return nil
}

// node reads one input: verified with verifier, else decoded unverified.
// The predicate is nil for a record that did not verify; mismatched says
// an unverified record's subject names another node than its predicate.
func node(ctx context.Context, in Input, verifier dsse.Verifier) (n Node, p *record.Predicate, mismatched bool, err error) {
	n = Node{Record: in.Path}
	if verifier != nil {
		v, err := record.Verify(ctx, in.Data, verifier, "")
		if err != nil {
			return n, nil, false, err
		}
		n.Signed, n.Verified, n.Problems, n.KeyID = v.Signed, v.OK(), append([]string{}, v.Problems...), v.KeyID
		n.Trust = trustOf(n.Signed, n.Verified)
		if !v.OK() {
			return n, nil, false, nil // shown only as what failed
		}
		return n, v.Predicate, false, nil
	}
	h, err := record.Decode(in.Path, in.Data)
	if err != nil {
		return n, nil, false, err
	}
	n.Signed = h.Signed
	n.Trust = trustOf(n.Signed, false)
	// Unsigned, a record's parts may still disagree: the subject names one
	// node, the predicate another (verify refuses that).
	if want := record.SubjectName(h.Predicate.Node.Name); h.SubjectName != want {
		n.Problems = append(n.Problems, fmt.Sprintf("subject %q does not name the predicate's node (%s)", h.SubjectName, want))
		mismatched = true
	}
	return n, h.Predicate, mismatched, nil
}

// trustOf is the trust of a record that holds a signature (signed) and
// verified with the given key (verified).
func trustOf(signed, verified bool) Trust {
	switch {
	case verified:
		return TrustVerified
	case signed:
		return TrustUnverified
	}
	return TrustUnsigned
}

// disagreement says how the verdict the stages give differs from the
// stated one; "" when they agree.
func disagreement(stated, stages diag.Verdict, results []StageOutcome) string {
	if stated == stages {
		return ""
	}
	var worst []string
	for _, s := range results {
		if s.Verdict == stages {
			worst = append(worst, s.Name)
		}
	}
	by := "no stage ran"
	if len(worst) > 0 {
		by = strings.Join(worst, ", ") + " " + string(stages)
	}
	return fmt.Sprintf("the record says %s, but its stages give %s (%s)", stated, stages, by)
}

func fill(n *Node, p *record.Predicate) {
	n.HasPredicate = true
	n.Name, n.RunID, n.Verdict, n.Started = p.Node.Name, p.RunID, p.Verdict, p.Started
	if !p.Finished.IsZero() && p.Finished.After(p.Started) {
		n.Duration = p.Finished.Sub(p.Started)
	}
	n.Rejudged = p.Rejudged != nil
	n.Pool, n.InstanceType = p.Node.Pool, p.Node.InstanceType
	n.GPUProduct, n.GPUCount = p.Hardware.GPUProduct, p.Hardware.GPUCount
	n.Driver, n.CUDA, n.Gpuctl = p.Driver.Version, p.Driver.CUDA, p.Gpuctl.Version
	for _, s := range p.Stages {
		st := StageOutcome{Name: string(s.Name), Verdict: s.Verdict, Cause: s.Cause, Reason: s.Reason, Evidence: append([]record.Evidence{}, s.Evidence...)}
		if !s.Finished.IsZero() && s.Finished.After(s.Started) {
			st.Duration = s.Finished.Sub(s.Started)
		}
		n.EvidenceFiles += len(s.Evidence)
		if s.Name == stageNCCLMulti {
			n.NCCLMulti = multiOf(s)
		}
		if n.FirstProblem == "" && (s.Verdict == diag.Fail || s.Verdict == diag.Inconclusive) {
			n.FirstProblem = string(s.Name) + ": " + s.Reason
		}
		n.Stages = append(n.Stages, st)
	}
	vs := make([]diag.Verdict, len(n.Stages))
	for i, st := range n.Stages {
		vs[i] = st.Verdict
	}
	n.StagesVerdict = diag.Worst(vs...)
	n.Disagreement = disagreement(n.Verdict, n.StagesVerdict, n.Stages)
	n.System = systemOf(p)
	n.GPUs, n.NodeFindings = gpus(p)
	n.NCCL = ncclOf(p.NCCL)
	n.Topology = topologyOf(p.Topology)
	for _, g := range p.Regressions {
		n.Regressions = append(n.Regressions, g.Kind+": "+g.Message)
	}
	if pr := p.Previous; pr != nil {
		n.Previous = fmt.Sprintf("%s (%s)", pr.RunID, pr.Verdict)
	}
}

// stageNCCLMulti is the name of accept's nccl-multi stage in a record
// (accept.StageNCCLMulti; report reads records only, not accept).
const stageNCCLMulti record.Stage = "nccl-multi"

// multiOf is a fleet stage's result as the report shows it; facts that do
// not parse are left at their zero value.
func multiOf(s record.StageResult) *Multi {
	f := s.Facts
	m := &Multi{Verdict: s.Verdict, Cause: s.Cause, Reason: s.Reason, Group: f[record.FactMultiBusBWGroup], Transport: f[record.FactMultiTransport],
		Groups: splitList(f[record.FactMultiGroups]), Peers: splitList(f[record.FactMultiPeers])}
	m.BusBandwidthGBps, _ = strconv.ParseFloat(f[record.FactMultiBusBW], 64)
	m.LargestBytes, _ = strconv.ParseInt(f[record.FactMultiLargest], 10, 64)
	m.Nodes, _ = strconv.Atoi(f[record.FactMultiNodes])
	return m
}

// splitList is a comma-separated fact's items; nil for "".
func splitList(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// gpus pairs the hardware arrays (per GPU in nvidia-smi's order) with the
// health findings by bus ID; findings of no listed GPU are the node's.
func gpus(p *record.Predicate) ([]GPU, []diag.Finding) {
	h := p.Hardware
	count := max(len(h.UUIDs), len(h.BusIDs))
	at := func(s []string, i int) string {
		if i < len(s) {
			return s[i]
		}
		return ""
	}
	out := make([]GPU, count)
	byBus := map[string]int{}
	for i := range out {
		out[i] = GPU{Index: i, BusID: at(h.BusIDs, i), UUID: at(h.UUIDs, i), Serial: at(h.Serials, i), VBIOS: at(h.VBIOS, i), InfoROM: at(h.InfoROM, i)}
		if b := normBus(out[i].BusID); b != "" {
			byBus[b] = i
		}
	}
	var node []diag.Finding
	for _, f := range p.GPUHealth {
		i, ok := byBus[normBus(f.GPU)]
		if !ok {
			node = append(node, f)
			continue
		}
		g := &out[i]
		g.Findings = append(g.Findings, f)
		if sevRank(f.Severity) > sevRank(g.Worst) {
			g.Worst = f.Severity
		}
	}
	return out, node
}

// normBus is a PCI bus ID in one form: lowercase, with the 8-digit domain
// ("00000000:19:00.0"; nvidia-smi prints 4 or 8 digits).
func normBus(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	if id == "" {
		return ""
	}
	if dom, rest, ok := strings.Cut(id, ":"); ok && strings.Count(id, ":") == 2 && len(dom) < 8 {
		id = strings.Repeat("0", 8-len(dom)) + dom + ":" + rest
	}
	return id
}

func ncclOf(r *record.NCCLSummary) *NCCL {
	if r == nil {
		return nil
	}
	n := &NCCL{Verdict: r.Verdict, BusBandwidthGBps: r.BusBandwidthGBps, LargestBytes: r.LargestBytes, RowsRecorded: r.Rows != nil, Points: Points(r.Rows)}
	if b := r.Baseline; b != nil {
		n.Baseline = &Baseline{SKU: b.SKU, MinGBps: b.MinBusBandwidthGBps, MinAlgo: b.MinAlgo, ExpectedGBps: b.ExpectedBusBandwidthGBps,
			ExpectedAlgo: b.ExpectedAlgo, MinBytes: b.MinBytes, Sources: append([]string{}, b.Sources...), Origin: r.BaselineOrigin, ExpectedText: b.ExpectedBusBW}
	}
	return n
}

// Points are the curve of a record's nccl rows: one point per message
// size, ascending, with the better busbw of its two halves (as the nccl
// stage judges the largest size). A size printed twice is shown once, as
// its last row (the row the stage judges at the largest size).
func Points(rows []record.NCCLRow) []Point {
	var pts []Point
	bySize := map[int64]int{}
	for _, row := range rows {
		pt := Point{SizeBytes: row.SizeBytes, OutOfPlace: row.OutOfPlace, InPlace: row.InPlace}
		for _, m := range []*record.NCCLMeasurement{row.OutOfPlace, row.InPlace} {
			if m != nil && m.BusBandwidthGBps > pt.BusBandwidthGBps {
				pt.BusBandwidthGBps = m.BusBandwidthGBps
			}
		}
		if i, ok := bySize[row.SizeBytes]; ok {
			pts[i] = pt
			continue
		}
		bySize[row.SizeBytes] = len(pts)
		pts = append(pts, pt)
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].SizeBytes < pts[j].SizeBytes })
	return pts
}

// topologyOf is nil without a matrix: no devices, or no link in any
// cell (a record whose topology stage listed devices but parsed no matrix).
func topologyOf(t *record.Topology) *Topology {
	if t == nil || len(t.Devices) == 0 || !slices.ContainsFunc(t.Matrix, func(row []string) bool {
		return slices.ContainsFunc(row, func(link string) bool { return strings.TrimSpace(link) != "" })
	}) {
		return nil
	}
	out := &Topology{Devices: append([]string{}, t.Devices...), NICNames: t.NICNames, Cells: make([][]Cell, len(t.Devices))}
	for i := range t.Devices {
		out.Cells[i] = make([]Cell, len(t.Devices))
		for j := range t.Devices {
			link := ""
			if i < len(t.Matrix) && j < len(t.Matrix[i]) {
				link = t.Matrix[i][j]
			}
			out.Cells[i][j] = Cell{Link: link, Class: ClassOf(link)}
		}
	}
	return out
}

func sevRank(s diag.Severity) int {
	switch s {
	case diag.SeverityError:
		return 3
	case diag.SeverityWarning:
		return 2
	case diag.SeverityInfo:
		return 1
	}
	return 0
}

// systemOf is the node's System as record p holds it.
func systemOf(p *record.Predicate) System {
	s := System{OSImage: p.Node.OSImage, Kernel: p.Node.KernelVersion, ContainerRuntime: p.Node.ContainerRuntime, Kubelet: p.Node.Kubelet,
		DevicePlugin: p.Node.DevicePlugin, GPUOperator: p.Node.GPUOperator, Baselines: append([]record.BaselineMet{}, p.BaselinesMet...)}
	if p.DCGM != nil {
		s.DCGMLevel = p.DCGM.Level
	}
	if p.Network != nil {
		s.NICs = append([]record.NetworkDevice{}, p.Network.Devices...)
	}
	if p.EvidenceBundle != nil {
		s.EvidenceURI = p.EvidenceBundle.URI
	}
	return s
}
