package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// Fleet is the JSON summary of one accept invocation over many nodes
// (apiVersion gpuctl.dev/v1, kind AcceptFleet).
type Fleet struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Verdicts counts the nodes by verdict ("ERROR" for tool errors).
	Verdicts map[string]int `json:"verdicts"`
	// Stages counts, per stage, the nodes by the stage's verdict.
	Stages         map[string]map[string]int `json:"stages"`
	WallSeconds    float64                   `json:"wallSeconds"`
	SlowestNode    string                    `json:"slowestNode,omitempty"`
	SlowestSeconds float64                   `json:"slowestSeconds"`
	Nodes          []FleetNode               `json:"nodes"`
	// NodesWithRegressions counts the nodes with at least one regression since their
	// previous record.
	NodesWithRegressions int `json:"nodesWithRegressions"`
	// Marking is set with --mark.
	Marking *FleetMarking `json:"marking,omitempty"`
	// Skipped are the nodes a sweep (--sweep) did not probe, and why; not
	// in Nodes nor Verdicts.
	Skipped []AcceptSkipped `json:"skipped,omitempty"`
}

// FleetMarking says whether --mark marked the nodes.
type FleetMarking struct {
	// Stopped is true when --max-unhealthy stopped the marking: no node
	// was marked.
	Stopped      bool   `json:"stopped"`
	Reason       string `json:"reason,omitempty"`
	MaxUnhealthy string `json:"maxUnhealthy,omitempty"`
}

// FleetNode is one node of the fleet summary.
type FleetNode struct {
	Node         string  `json:"node"`
	RunID        string  `json:"runID,omitempty"`
	Verdict      string  `json:"verdict"`
	Seconds      float64 `json:"seconds"`
	FirstProblem string  `json:"firstProblem,omitempty"`
	Cause        string  `json:"cause,omitempty"`
	Record       string  `json:"record,omitempty"`
	Error        string  `json:"error,omitempty"`
	// Mark is what --mark did to the node.
	Mark *AcceptMark `json:"mark,omitempty"`
	// Sweep is what --sweep did to the node besides Mark.
	Sweep *AcceptSweep `json:"sweep,omitempty"`
	// Previous is the node's previous record ("RUN-ID (VERDICT)"), empty
	// when the history had none; Regressions are what got worse since then
	// ([] when nothing did or there was no previous record).
	Previous    string       `json:"previous,omitempty"`
	Regressions []Regression `json:"regressions"`
}

// NewFleet summarises nodes; wall is the invocation's time.
func NewFleet(nodes []AcceptNode, wall time.Duration) *Fleet {
	f := &Fleet{APIVersion: "gpuctl.dev/v1", Kind: "AcceptFleet", Verdicts: map[string]int{}, Stages: map[string]map[string]int{},
		WallSeconds: wall.Seconds(), Nodes: []FleetNode{}}
	for _, n := range nodes {
		fn := FleetNode{Node: n.Node, RunID: n.RunID, Verdict: string(n.Verdict), Seconds: n.Duration.Seconds(), Record: n.Record, Mark: n.Mark, Sweep: n.Sweep,
			Previous: n.Previous, Regressions: append([]Regression{}, n.Regressions...)}
		if n.Err != nil {
			fn.Verdict, fn.Error = "ERROR", n.Err.Error()
		}
		for _, s := range n.Stages {
			if f.Stages[s.Name] == nil {
				f.Stages[s.Name] = map[string]int{}
			}
			f.Stages[s.Name][string(s.Verdict)]++
			if fn.FirstProblem == "" && (s.Verdict == diag.Fail || s.Verdict == diag.Inconclusive) {
				fn.FirstProblem, fn.Cause = fmt.Sprintf("%s: %s", s.Name, oneLine(s.Reason)), s.Cause
			}
		}
		f.Verdicts[fn.Verdict]++
		if len(fn.Regressions) > 0 {
			f.NodesWithRegressions++
		}
		if n.Duration.Seconds() > f.SlowestSeconds {
			f.SlowestNode, f.SlowestSeconds = n.Node, n.Duration.Seconds()
		}
		f.Nodes = append(f.Nodes, fn)
	}
	sort.Slice(f.Nodes, func(i, j int) bool { return f.Nodes[i].Node < f.Nodes[j].Node })
	return f
}

// FleetJSON writes the fleet summary as indented JSON.
func FleetJSON(w io.Writer, f *Fleet) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// FleetLine is the fleet's one-line total for people.
func FleetLine(f *Fleet) string {
	var parts []string
	for _, v := range []string{"PASS", "FAIL", "INCONCLUSIVE", "ERROR"} {
		if n := f.Verdicts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	s := fmt.Sprintf("fleet: %d nodes: %s in %.1fs", len(f.Nodes), strings.Join(parts, ", "), f.WallSeconds)
	if f.NodesWithRegressions > 0 {
		s += fmt.Sprintf("; %d with regressions", f.NodesWithRegressions)
	}
	if f.SlowestNode != "" {
		s += fmt.Sprintf("; slowest node %s %.1fs", f.SlowestNode, f.SlowestSeconds)
	}
	if len(f.Skipped) > 0 {
		s += fmt.Sprintf("; %d skipped (busy)", len(f.Skipped))
	}
	if f.Marking != nil && f.Marking.Stopped {
		s += "; marking stopped: " + f.Marking.Reason
	} else if f.Marking != nil {
		s += "; nodes marked"
	}
	return s
}

// Progress shows how far a fleet run is, per stage: nodes done, running and
// failed. On a terminal it redraws one status line; elsewhere it writes a
// plain line whenever a stage of a node finishes.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	total   int
	order   []string
	running map[string]int
	done    map[string]int
	failed  map[string]int
	last    time.Time
}

// NewProgress returns a progress view of total nodes over stages (in order).
func NewProgress(w io.Writer, tty bool, total int, stages []string) *Progress {
	return &Progress{w: w, tty: tty, total: total, order: stages, running: map[string]int{}, done: map[string]int{}, failed: map[string]int{}}
}

// Event records a stage of node starting (verdict "") or finishing.
func (p *Progress) Event(node, stage string, verdict diag.Verdict) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if verdict == "" {
		p.running[stage]++
		if p.tty {
			p.draw(false)
		}
		return
	}
	p.running[stage]--
	p.done[stage]++
	if verdict == diag.Fail || verdict == diag.Inconclusive {
		p.failed[stage]++
	}
	if p.tty {
		p.draw(false)
		return
	}
	fmt.Fprintf(p.w, "progress: %s %s %s (%s)\n", node, stage, verdict, p.status())
}

// Done ends the live line.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		p.draw(true)
		fmt.Fprintln(p.w)
	}
}

func (p *Progress) draw(force bool) {
	if !force && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "\r\033[K%s", p.status())
}

func (p *Progress) status() string {
	var parts []string
	for _, st := range p.order {
		if p.done[st]+p.running[st] == 0 {
			continue
		}
		s := fmt.Sprintf("%s %d/%d", st, p.done[st], p.total)
		if r := p.running[st]; r > 0 {
			s += fmt.Sprintf(" +%d running", r)
		}
		if f := p.failed[st]; f > 0 {
			s += fmt.Sprintf(" %d failed", f)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " | ")
}
