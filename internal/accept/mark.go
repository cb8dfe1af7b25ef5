package accept

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// What `accept --mark` puts on a node.
const (
	// LabelAccept is the node's acceptance state: pass, fail or inconclusive.
	LabelAccept = "gpuctl.dev/accept"
	// AnnotationAcceptRecord is the JSON MarkRecordRef of the record behind
	// the label.
	AnnotationAcceptRecord = "gpuctl.dev/accept-record"
	// AnnotationAcceptAdded lists, comma-separated, what gpuctl added to the
	// node on a FAIL ("taint", "cordon"): a later PASS removes only those.
	AnnotationAcceptAdded = "gpuctl.dev/accept-added"
	// TaintUnaccepted is the NoSchedule taint of --taint-on-fail.
	TaintUnaccepted = "gpuctl.dev/unaccepted"
	// EventNamespace is where the node's Events go (cluster-scoped objects'
	// events live in "default", where kubectl describe node finds them).
	EventNamespace = "default"

	addedTaint  = "taint"
	addedCordon = "cordon"
)

// MarkOptions are the isolation steps of a FAIL.
type MarkOptions struct {
	TaintOnFail, CordonOnFail bool
	// Sweep (accept --sweep) also sets the annotations AnnotationAcceptVerdict,
	// AnnotationAcceptTime and AnnotationRecordDigest, on a FAIL that is
	// quarantined AnnotationQuarantineReason (QuarantineReason), removes that
	// annotation on a PASS, and creates an Event for the quarantine and for
	// the return besides the verdict's.
	Sweep bool
	// QuarantineReason is the quarantine-reason annotation of a FAIL that is
	// quarantined (with TaintOnFail or CordonOnFail); "" keeps the node's.
	QuarantineReason string
}

// MarkRecordRef is the value of the accept-record annotation.
type MarkRecordRef struct {
	RunID   string       `json:"runID"`
	Verdict diag.Verdict `json:"verdict"`
	// Digest is "sha256:HEX" of the record file.
	Digest string    `json:"digest"`
	Time   time.Time `json:"time"`
}

// Marked is what Mark did to a node.
type Marked struct {
	Node  string `json:"node"`
	Label string `json:"label"`
	// Added and Removed are the taint and cordon gpuctl put on or took off
	// in this run.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Event is the name of the Event created on the node.
	Event string `json:"event"`
	// Events are the names of the quarantine and return Events (MarkOptions.Sweep).
	Events []string `json:"events,omitempty"`
}

// MarkPermissions are what --mark needs.
func MarkPermissions() []Permission {
	return []Permission{
		{Verb: "patch", Resource: "nodes", Why: "mark the nodes (--mark)"},
		{Verb: "create", Resource: "events", Namespace: EventNamespace, Why: "record the verdict as an Event on the node (--mark)"},
	}
}

// MarkReason is an Event's message: the verdict and the first failing or
// inconclusive stage's reason.
func MarkReason(v diag.Verdict, stages []StageResult) string {
	msg := string(v)
	for _, s := range stages {
		if s.Verdict == diag.Fail || s.Verdict == diag.Inconclusive {
			msg += ": " + string(s.Name) + ": " + strings.Join(strings.Fields(s.Reason), " ")
			break
		}
	}
	if len(msg) > 1000 {
		msg = msg[:999] + "…"
	}
	return msg
}

// Mark labels and annotates node with the verdict of the record ref,
// isolates it on a FAIL as opt asks (taint, cordon) and, on a PASS, undoes
// only the isolation gpuctl added earlier (the accept-added annotation); then
// it creates an Event on the node with message. The node is patched with a
// strategic merge patch guarded by its resourceVersion (retried on a
// conflict).
func Mark(ctx context.Context, c kubernetes.Interface, node string, ref MarkRecordRef, message string, opt MarkOptions) (*Marked, error) {
	var m *Marked
	var n *corev1.Node
	for attempt := 0; ; attempt++ {
		var err error
		if n, err = c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil {
			return nil, fmt.Errorf("reading node %s: %w", node, err)
		}
		var patch []byte
		if m, patch, err = markPatch(n, ref, opt); err != nil {
			return nil, err
		}
		_, err = c.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "gpuctl"})
		if apierrors.IsConflict(err) && attempt < 4 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("patching node %s: %w", node, err)
		}
		break
	}
	ev := markEvent(n, ref, message)
	if _, err := c.CoreV1().Events(EventNamespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return m, fmt.Errorf("creating the Event on node %s: %w", node, err)
	}
	m.Event = ev.Name
	if opt.Sweep {
		for _, ev := range isolationEvents(n, ref, m, opt.QuarantineReason) {
			if _, err := c.CoreV1().Events(EventNamespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
				return m, fmt.Errorf("creating the Event on node %s: %w", node, err)
			}
			m.Events = append(m.Events, ev.Name)
		}
	}
	return m, nil
}

// markPatch computes what Mark does to n and the patch that does it.
func markPatch(n *corev1.Node, ref MarkRecordRef, opt MarkOptions) (*Marked, []byte, error) {
	m := &Marked{Node: n.Name, Label: markLabel(n, ref.Verdict, opt)}
	c := nodeChange{taints: append([]corev1.Taint(nil), n.Spec.Taints...), unschedulable: n.Spec.Unschedulable, added: addedByGpuctl(n)}
	switch ref.Verdict {
	case diag.Fail:
		c.fail(m, opt)
	case diag.Pass:
		c.pass(m)
	}
	refJSON, err := json.Marshal(ref)
	if err != nil {
		return nil, nil, err
	}
	taints := c.taints
	if taints == nil {
		taints = []corev1.Taint{}
	}
	annotations := map[string]any{AnnotationAcceptRecord: string(refJSON), AnnotationAcceptAdded: c.addedAnnotation()}
	if opt.Sweep {
		sweepAnnotations(annotations, ref, opt.QuarantineReason)
	}
	patch := map[string]any{
		"metadata": map[string]any{
			"resourceVersion": n.ResourceVersion,
			"labels":          map[string]any{LabelAccept: m.Label},
			"annotations":     annotations,
		},
		// NodeSpec.taints has no merge key: the patch replaces the list,
		// which the resourceVersion guards.
		"spec": map[string]any{"taints": taints, "unschedulable": c.unschedulable},
	}
	b, err := json.Marshal(patch)
	return m, b, err
}

// markLabel is the LabelAccept value of verdict v: the verdict in lower
// case, except that a sweep's INCONCLUSIVE on a node gpuctl quarantined
// keeps the node's label (the quarantine stays as it is).
func markLabel(n *corev1.Node, v diag.Verdict, opt MarkOptions) string {
	if opt.Sweep && v == diag.Inconclusive && IsQuarantined(n) && n.Labels[LabelAccept] != "" {
		return n.Labels[LabelAccept]
	}
	return strings.ToLower(string(v))
}

// nodeChange is what Mark makes of a node: its taints, whether it is
// cordoned, and what gpuctl added to it (addedTaint, addedCordon).
type nodeChange struct {
	taints        []corev1.Taint
	unschedulable bool
	added         map[string]bool
}

// addedByGpuctl reads what an earlier Mark added to n (AnnotationAcceptAdded).
func addedByGpuctl(n *corev1.Node) map[string]bool {
	added := map[string]bool{}
	for _, a := range strings.Split(n.Annotations[AnnotationAcceptAdded], ",") {
		if a = strings.TrimSpace(a); a != "" {
			added[a] = true
		}
	}
	return added
}

// fail taints (--taint-on-fail) and cordons (--cordon-on-fail) the node
// unless it already is, noting in m what was added.
func (c *nodeChange) fail(m *Marked, opt MarkOptions) {
	if opt.TaintOnFail && !containsTaint(c.taints, TaintUnaccepted) {
		c.taints = append(c.taints, corev1.Taint{Key: TaintUnaccepted, Value: m.Label, Effect: corev1.TaintEffectNoSchedule})
		c.added[addedTaint] = true
		m.Added = append(m.Added, addedTaint)
	}
	if opt.CordonOnFail && !c.unschedulable {
		c.unschedulable = true
		c.added[addedCordon] = true
		m.Added = append(m.Added, addedCordon)
	}
}

// pass removes the taint and the cordon that gpuctl added (and only
// those), noting in m what was removed.
func (c *nodeChange) pass(m *Marked) {
	if c.added[addedTaint] && containsTaint(c.taints, TaintUnaccepted) {
		var kept []corev1.Taint
		for _, t := range c.taints {
			if t.Key != TaintUnaccepted {
				kept = append(kept, t)
			}
		}
		c.taints = kept
		m.Removed = append(m.Removed, addedTaint)
	}
	if c.added[addedCordon] && c.unschedulable {
		c.unschedulable = false
		m.Removed = append(m.Removed, addedCordon)
	}
	c.added = map[string]bool{}
}

// addedAnnotation is the AnnotationAcceptAdded value of the patch: what
// gpuctl added and is still there, sorted and comma-separated; nil (the
// annotation removed) for nothing.
func (c *nodeChange) addedAnnotation() any {
	gone := map[string]bool{addedTaint: !containsTaint(c.taints, TaintUnaccepted), addedCordon: !c.unschedulable}
	var list []string
	for a := range c.added {
		if !gone[a] {
			list = append(list, a)
		}
	}
	if len(list) == 0 {
		return nil
	}
	sort.Strings(list)
	return strings.Join(list, ",")
}

func containsTaint(ts []corev1.Taint, key string) bool {
	for _, t := range ts {
		if t.Key == key {
			return true
		}
	}
	return false
}

// markEvent is the Event Mark creates on node n.
func markEvent(n *corev1.Node, ref MarkRecordRef, message string) *corev1.Event {
	reason, typ := "AcceptPassed", corev1.EventTypeNormal
	switch ref.Verdict {
	case diag.Fail:
		reason, typ = "AcceptFailed", corev1.EventTypeWarning
	case diag.Inconclusive:
		reason, typ = "AcceptInconclusive", corev1.EventTypeWarning
	}
	t := metav1.NewTime(ref.Time)
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name + ".gpuctl-" + ref.RunID, Namespace: EventNamespace,
			Labels: map[string]string{LabelManagedBy: ManagedBy, LabelRunID: ref.RunID}},
		InvolvedObject:      corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID},
		Reason:              reason,
		Message:             message,
		Type:                typ,
		Source:              corev1.EventSource{Component: "gpuctl-accept"},
		ReportingController: "gpuctl.dev/accept",
		ReportingInstance:   "gpuctl",
		Action:              "Accept",
		FirstTimestamp:      t,
		LastTimestamp:       t,
		EventTime:           metav1.NewMicroTime(ref.Time),
		Count:               1,
	}
}

// MaxUnhealthy is --max-unhealthy: at most N nodes, or P percent of the
// selection, that are not PASS (FAIL, INCONCLUSIVE or a tool error) before
// marking stops.
type MaxUnhealthy struct {
	set     bool
	n       int
	percent bool
	raw     string
}

// ParseMaxUnhealthy reads "N" or "P%" ("" for no limit).
func ParseMaxUnhealthy(s string) (MaxUnhealthy, error) {
	if s == "" {
		return MaxUnhealthy{}, nil
	}
	num, pct := strings.CutSuffix(s, "%")
	v, err := strconv.Atoi(num)
	if err != nil || v < 0 || (pct && v > 100) {
		return MaxUnhealthy{}, fmt.Errorf("--max-unhealthy %q: want a count N or a percentage P%% (0-100)", s)
	}
	return MaxUnhealthy{set: true, n: v, percent: pct, raw: s}, nil
}

// Exceeded reports whether unhealthy of total nodes is more than the limit.
func (m MaxUnhealthy) Exceeded(unhealthy, total int) bool {
	if !m.set {
		return false
	}
	if m.percent {
		return unhealthy*100 > m.n*total
	}
	return unhealthy > m.n
}

func (m MaxUnhealthy) String() string { return m.raw }
