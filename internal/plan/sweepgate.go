package plan

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// What the acceptance sweep (`gpuctl accept --sweep`, the CronJob of
// `gpuctl generate acceptance`) writes on a node and the sweep gate reads:
// internal/accept's names (docs/acceptance-sweep.md).
const (
	// ConditionGPUAccepted is the Node condition of the newest verdict:
	// True on PASS, False on FAIL, Unknown on INCONCLUSIVE.
	ConditionGPUAccepted = string(accept.ConditionGPUAccepted)
	// AnnotationAcceptTime is when the newest verdict was reached (RFC 3339).
	AnnotationAcceptTime = accept.AnnotationAcceptTime
)

// Gate kinds (Gate.Kind).
const (
	GateAccept = spec.GateAccept // `gpuctl accept` of the step's nodes
	GateSweep  = spec.GateSweep  // the in-cluster sweep's GPUAccepted condition
)

// sweepPass is the Pass of a sweep gate.
const sweepPass = "every node of the step has the Node condition " + ConditionGPUAccepted + "=True whose lastTransitionTime or annotation " +
	AnnotationAcceptTime + " (the newer of the two) is after the step's start; a node with it False or Unknown, or older, stops the rollout"

// sweepKeep is a sweep gate's OnFail.Keep: the sweep has quarantined
// what failed.
const sweepKeep = "keep every node not yet replaced in service on the old configuration; the sweep has quarantined the failed node(s) within its cap " +
	"(cordon, taint gpuctl.dev/unaccepted=fail:NoSchedule, label gpuctl.dev/accept=fail) and kept their signed records; beyond the cap cordon them yourself (kubectl cordon NODE)"

// sweepGate is the gate of a step whose pool has rollout.gate sweep: no
// command to run (the CronJob accepts the nodes), the pool's nodes
// (poolSel) each with GPUAccepted=True newer than the step's start.
func sweepGate(in RolloutInput, poolSel, means string) Gate {
	g := Gate{Kind: GateSweep, Command: []string{}, Selector: poolSel, SelectorMeans: means, Stages: []string{},
		Condition: ConditionGPUAccepted + "=True", SweepSelector: in.SweepSelector, Pass: sweepPass}
	if in.Sweep != nil {
		g.Stages = append(g.Stages, in.Sweep.StagesOr()...)
		ns := in.Sweep.NamespaceOr()
		g.SweepNamespace = ns
		g.Trigger = []string{"kubectl", "-n", ns, "create", "job", "--from=cronjob/" + helmgen.SweepName, helmgen.SweepName + "-STEP"}
	}
	for _, st := range g.Stages {
		if st == "nccl" {
			g.Baseline, g.MinBusBandwidthGBps = in.Pool.Acceptance.Baseline, in.Pool.Acceptance.MinBusBandwidthGBps
		}
	}
	return g
}

// sweepMeans is what a sweep gate's selector selects.
func sweepMeans(pool string) string {
	return fmt.Sprintf("the nodes of pool %s: those the step replaced (or changed) must carry a %s condition set after the step started", pool, ConditionGPUAccepted)
}

// sweepPrepare is a sweep gate's preparation: the sweep runs over pool
// and each step's start is written down.
func sweepPrepare(in RolloutInput, pool string) string {
	ns := spec.DefaultAcceptanceNamespace
	if in.Sweep != nil {
		ns = in.Sweep.NamespaceOr()
	}
	return fmt.Sprintf("the acceptance sweep runs (CronJob %s in namespace %s, from gpuctl generate acceptance, applied and not suspended) and selects every node of pool %s; "+
		"write down each step's start (date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ): its gate holds the nodes' %s condition to it (gpuctl plan --kubeconfig --step-start TIME checks it)",
		helmgen.SweepName, ns, pool, ConditionGPUAccepted)
}

// sweepCoverWarning is a warning when the sweep's selector does not
// select the pool's nodes by the labels the spec gives them; "" when it
// does. For a replace-pool rollout (replace) the nodes are the new
// pool's: a selector left to gpuctl (acceptance.selector unset) selects
// it once the spec has it, a selector of the spec's own must.
func sweepCoverWarning(in RolloutInput, replace bool) string {
	if !in.sweep() {
		return ""
	}
	pool, set := in.Pool.Name, labels.Set(in.Pool.Labels)
	if replace {
		if in.Sweep == nil || in.Sweep.Selector == "" {
			return ""
		}
		pool = in.Pool.Name + NewPoolSuffix
		set = labels.Merge(set, labels.Set{PoolLabel(in.Provider): pool, spec.LabelPool: pool})
	}
	if ok, why := selectorCovers(in.SweepSelector, []labels.Set{set}); !ok {
		return fmt.Sprintf("rollout.gate sweep: the sweep's selector %q does not select pool %s's nodes (%s): its gates would wait for a condition the sweep never sets", in.SweepSelector, pool, why)
	}
	return ""
}

// selectorCovers reports whether selector sel selects every label set of
// nodes, and if not, why.
func selectorCovers(sel string, nodes []labels.Set) (bool, string) {
	s, err := labels.Parse(sel)
	if err != nil {
		return false, "not a label selector: " + err.Error()
	}
	for _, n := range nodes {
		if !s.Matches(n) {
			return false, "the labels " + labelsString(n) + " do not match it"
		}
	}
	return true, ""
}

func labelsString(s labels.Set) string {
	if len(s) == 0 {
		return "(none)"
	}
	return s.String()
}

// SweepGateCheck is what a pool's live nodes say against its sweep gate
// (rollout.gate sweep): for each node, whether it has GPUAccepted=True
// newer than Since, the step's start (--step-start; "" when none was
// given: then any GPUAccepted=True with a time counts).
type SweepGateCheck struct {
	Environment string `json:"environment"`
	Pool        string `json:"pool"`
	// Selector is the sweep's label selector; Covers whether it selects
	// every live node of the pool (Warning says which it does not).
	Selector string `json:"selector"`
	Covers   bool   `json:"covers"`
	Warning  string `json:"warning,omitempty"`
	Since    string `json:"since"`
	// Nodes and Accepted count the pool's live nodes and those that
	// satisfy the gate; Passes is true when every node does, there is at
	// least one and the sweep's selector selects them all.
	Nodes     int              `json:"nodes"`
	Accepted  int              `json:"accepted"`
	Passes    bool             `json:"passes"`
	NodeGates []SweepNodeState `json:"nodeStates"`
}

// States of a node's GPUAccepted condition (SweepNodeState.State).
const (
	SweepAccepted = "accepted" // True, newer than the step's start
	SweepOlder    = "older"    // True, but not newer than the step's start (or no time)
	SweepFailed   = "false"    // False: the sweep's FAIL
	SweepUnknown  = "unknown"  // Unknown: INCONCLUSIVE
	SweepMissing  = "missing"  // no GPUAccepted condition: never swept
)

// SweepNodeState is one node against a sweep gate.
type SweepNodeState struct {
	Node string `json:"node"`
	// State is one of the Sweep* states; Satisfies is State accepted.
	State     string `json:"state"`
	Satisfies bool   `json:"satisfies"`
	// Status and Reason are the condition's ("" when missing); AcceptedAt
	// is its lastTransitionTime, else the accept-time annotation (RFC 3339,
	// "" when neither), TimeFrom which of the two.
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	AcceptedAt string `json:"acceptedAt"`
	TimeFrom   string `json:"timeFrom"`
	// Selected says whether the sweep's selector selects the node.
	Selected bool   `json:"selected"`
	Why      string `json:"why"`
}

// CheckSweepGate judges nodes (pool's live nodes) against its sweep gate:
// sel is the sweep's selector, since the step's start (zero: none).
func CheckSweepGate(env, pool, sel string, since time.Time, nodes []corev1.Node) SweepGateCheck {
	c := SweepGateCheck{Environment: env, Pool: pool, Selector: sel, Covers: true, Nodes: len(nodes), NodeGates: []SweepNodeState{}}
	if !since.IsZero() {
		c.Since = since.UTC().Format(time.RFC3339)
	}
	s, err := labels.Parse(sel)
	var uncovered []string
	for i := range nodes {
		st := sweepNodeState(&nodes[i], since)
		st.Selected = err == nil && s.Matches(labels.Set(nodes[i].Labels))
		if !st.Selected {
			uncovered = append(uncovered, nodes[i].Name)
		}
		if st.Satisfies {
			c.Accepted++
		}
		c.NodeGates = append(c.NodeGates, st)
	}
	sort.Slice(c.NodeGates, func(a, b int) bool { return c.NodeGates[a].Node < c.NodeGates[b].Node })
	sort.Strings(uncovered)
	if len(uncovered) > 0 {
		c.Covers = false
		c.Warning = fmt.Sprintf("the sweep's selector %q does not select %d node(s) of pool %s (%s): the sweep never accepts them, so the gate cannot pass", sel, len(uncovered), pool, strings.Join(uncovered, ", "))
	}
	c.Passes = c.Nodes > 0 && c.Accepted == c.Nodes && c.Covers
	return c
}

// sweepNodeState is node n's GPUAccepted condition against since.
func sweepNodeState(n *corev1.Node, since time.Time) SweepNodeState {
	st := SweepNodeState{Node: n.Name, State: SweepMissing, Why: "no " + ConditionGPUAccepted + " condition: the sweep has not accepted the node"}
	var cond *corev1.NodeCondition
	for i := range n.Status.Conditions {
		if string(n.Status.Conditions[i].Type) == ConditionGPUAccepted {
			cond = &n.Status.Conditions[i]
		}
	}
	if cond == nil {
		return st
	}
	st.Status, st.Reason = string(cond.Status), cond.Reason
	at, from := acceptedAt(n, cond)
	if !at.IsZero() {
		st.AcceptedAt, st.TimeFrom = at.UTC().Format(time.RFC3339), from
	}
	switch cond.Status {
	case corev1.ConditionFalse:
		st.State, st.Why = SweepFailed, "the sweep's newest verdict is FAIL ("+orPlaceholder(cond.Reason, "no reason")+")"
	case corev1.ConditionTrue:
		st.State, st.Satisfies, st.Why = judgeTrue(at, since)
	default:
		st.State, st.Why = SweepUnknown, "the sweep's newest verdict is INCONCLUSIVE ("+orPlaceholder(cond.Reason, "no reason")+")"
	}
	return st
}

// judgeTrue is a GPUAccepted=True reached at against the step's start.
func judgeTrue(at, since time.Time) (string, bool, string) {
	switch {
	case at.IsZero():
		return SweepOlder, false, "GPUAccepted=True without a lastTransitionTime or " + AnnotationAcceptTime + ": its age cannot be told"
	case since.IsZero():
		return SweepAccepted, true, "GPUAccepted=True since " + at.UTC().Format(time.RFC3339) + " (no --step-start: not held to a step's start)"
	case at.After(since):
		return SweepAccepted, true, "GPUAccepted=True since " + at.UTC().Format(time.RFC3339) + ", after the step's start"
	}
	return SweepOlder, false, "GPUAccepted=True since " + at.UTC().Format(time.RFC3339) + ", not after the step's start " + since.UTC().Format(time.RFC3339) + ": accepted before the step changed it"
}

// acceptedAt is when cond (the node's GPUAccepted) last changed, and
// where that was read: its lastTransitionTime ("condition") or the
// accept-time annotation ("annotation"), the newer of the two; zero when
// neither. The condition's time moves only with its status, so a node
// accepted True again keeps its first time there; the annotation, written
// at each verdict, is then the newer one.
func acceptedAt(n *corev1.Node, cond *corev1.NodeCondition) (time.Time, string) {
	at, from := cond.LastTransitionTime.Time, "condition"
	if a, err := time.Parse(time.RFC3339, n.Annotations[AnnotationAcceptTime]); err == nil && a.After(at) {
		at, from = a, "annotation"
	}
	return at, from
}
