package accept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// unmarkAnnotations are the node annotations `accept --mark` and `--sweep`
// set, in the order Unmark reports them.
var unmarkAnnotations = []string{AnnotationAcceptRecord, AnnotationAcceptAdded, AnnotationAcceptVerdict,
	AnnotationAcceptTime, AnnotationRecordDigest, AnnotationQuarantineReason}

// What Unmarked.Removed and Kept name besides "label KEY" and
// "annotation KEY".
const (
	// UnmarkedCordon is the cordon gpuctl added (AnnotationAcceptAdded lists it).
	UnmarkedCordon = "cordon"
	// UnmarkedTaint is gpuctl's TaintUnaccepted.
	UnmarkedTaint = "taint " + TaintUnaccepted
	// UnmarkedCondition is the node's GPUAccepted condition.
	UnmarkedCondition = "condition " + string(ConditionGPUAccepted)
)

// Unmarked is what Unmark removed from a node (what PlanUnmark would).
type Unmarked struct {
	Node string
	// Removed names each removed thing, in this order: "label
	// gpuctl.dev/accept", "annotation KEY" for each of gpuctl's
	// annotations, UnmarkedTaint, UnmarkedCordon, UnmarkedCondition; empty
	// for a node that carried nothing of gpuctl's.
	Removed []string
	// Kept names what stays on the node because gpuctl did not add it:
	// UnmarkedTaint or UnmarkedCordon, when AnnotationAcceptAdded does not
	// list it.
	Kept []string
	// Event is the name of the Event that says what was removed ("" when
	// nothing was).
	Event string
}

// UnmarkPermissions are what --unmark needs: get and patch the nodes, patch
// nodes/status (the GPUAccepted condition), create the Event in
// EventNamespace.
func UnmarkPermissions() []Permission {
	return []Permission{
		{Verb: "get", Resource: "nodes", Why: "read what gpuctl put on the node (--unmark)"},
		{Verb: "patch", Resource: "nodes", Why: "remove gpuctl's label, annotations, taint and cordon (--unmark)"},
		{Verb: "patch", Resource: "nodes", Subresource: "status", Why: "remove the node's GPUAccepted condition (--unmark)"},
		{Verb: "create", Resource: "events", Namespace: EventNamespace, Why: "say on the node what was removed (--unmark)"},
	}
}

// unmarkChange is what Unmark does to a node: the patch of its metadata and
// spec (nil for none) and what it removes (removed, in Unmarked.Removed's
// order) and keeps; whether the condition goes.
type unmarkChange struct {
	patch         map[string]any
	removed, kept []string
	condition     bool
}

// PlanUnmark returns what Unmark would remove from n, changing nothing.
func PlanUnmark(n *corev1.Node) *Unmarked {
	ch := unmarkChanges(n)
	u := &Unmarked{Node: n.Name, Removed: append([]string{}, ch.removed...), Kept: ch.kept}
	if ch.condition {
		u.Removed = append(u.Removed, UnmarkedCondition)
	}
	return u
}

// unmarkChanges computes what Unmark removes from n: gpuctl's label and
// annotations, its taint and the cordon only where AnnotationAcceptAdded
// lists them, and the GPUAccepted condition.
func unmarkChanges(n *corev1.Node) unmarkChange {
	var ch unmarkChange
	labels, annotations := map[string]any{}, map[string]any{}
	if _, ok := n.Labels[LabelAccept]; ok {
		labels[LabelAccept] = nil
		ch.removed = append(ch.removed, "label "+LabelAccept)
	}
	for _, a := range unmarkAnnotations {
		if _, ok := n.Annotations[a]; ok {
			annotations[a] = nil
			ch.removed = append(ch.removed, "annotation "+a)
		}
	}
	spec := ch.unisolate(n)
	if len(ch.removed) > 0 {
		// NodeSpec.taints has no merge key: the patch replaces the list,
		// which the resourceVersion guards.
		ch.patch = map[string]any{
			"metadata": map[string]any{"resourceVersion": n.ResourceVersion, "labels": labels, "annotations": annotations},
			"spec":     spec,
		}
	}
	for _, c := range n.Status.Conditions {
		ch.condition = ch.condition || c.Type == ConditionGPUAccepted
	}
	return ch
}

// unisolate returns the spec fields that take off the taint and the cordon
// gpuctl added to n (AnnotationAcceptAdded), and notes in ch what goes and
// what stays because gpuctl did not add it.
func (ch *unmarkChange) unisolate(n *corev1.Node) map[string]any {
	added := addedByGpuctl(n)
	spec := map[string]any{}
	switch {
	case containsTaint(n.Spec.Taints, TaintUnaccepted) && added[addedTaint]:
		kept := []corev1.Taint{}
		for _, t := range n.Spec.Taints {
			if t.Key != TaintUnaccepted {
				kept = append(kept, t)
			}
		}
		spec["taints"] = kept
		ch.removed = append(ch.removed, UnmarkedTaint)
	case containsTaint(n.Spec.Taints, TaintUnaccepted):
		ch.kept = append(ch.kept, UnmarkedTaint)
	}
	switch {
	case n.Spec.Unschedulable && added[addedCordon]:
		spec["unschedulable"] = false
		ch.removed = append(ch.removed, UnmarkedCordon)
	case n.Spec.Unschedulable:
		ch.kept = append(ch.kept, UnmarkedCordon)
	}
	return spec
}

// conditionDeletePatch deletes the GPUAccepted condition from nodes/status:
// a strategic merge patch (NodeStatus.conditions merge by type, so the
// directive deletes that one condition and leaves the others as they are).
var conditionDeletePatch = []byte(`{"status":{"conditions":[{"type":"` + string(ConditionGPUAccepted) + `","$patch":"delete"}]}}`)

// Unmark removes from node what gpuctl put on it (PlanUnmark: its label and
// annotations, the taint and cordon it added, the GPUAccepted condition) and
// nothing else, then creates an Event on the node (namespace EventNamespace,
// reason GPUUnmarked, named after runID, at now) saying what was removed. A
// node that carries nothing of gpuctl's is not changed and gets no Event.
// The node is patched with a strategic merge patch guarded by its
// resourceVersion (retried on a conflict), its condition with one of
// nodes/status. On an error the returned Unmarked (nil when the node could
// not be read) lists what was removed, and the Event says so.
func Unmark(ctx context.Context, c kubernetes.Interface, node, runID string, now time.Time) (*Unmarked, error) {
	ch, n, err := patchUnmark(ctx, c, node)
	if ch == nil {
		return nil, err
	}
	u := &Unmarked{Node: node, Removed: []string{}, Kept: ch.kept}
	if err != nil {
		return u, err
	}
	u.Removed = append(u.Removed, ch.removed...)
	var condErr error
	if ch.condition {
		condErr = retry(ctx, func(ctx context.Context) error {
			_, err := c.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, conditionDeletePatch, metav1.PatchOptions{FieldManager: "gpuctl"}, "status")
			return err
		})
		if condErr != nil {
			condErr = fmt.Errorf("removing condition %s from node %s: %w", ConditionGPUAccepted, node, condErr)
		} else {
			u.Removed = append(u.Removed, UnmarkedCondition)
		}
	}
	if len(u.Removed) == 0 {
		return u, condErr
	}
	// What was removed gets its Event even when the condition could not go.
	ev := unmarkEvent(n, u, runID, now)
	if err := createOnce(ctx, func(ctx context.Context) error {
		_, err := c.CoreV1().Events(EventNamespace).Create(ctx, ev, metav1.CreateOptions{})
		return err
	}); err != nil {
		return u, errors.Join(condErr, fmt.Errorf("creating the Event on node %s: %w", node, err))
	}
	u.Event = ev.Name
	return u, condErr
}

// patchUnmark reads node and patches its metadata and spec as
// unmarkChanges says (nothing when there is nothing to remove there),
// retrying on a conflict, and returns the change and the node as read (the
// change nil when the node could not be read).
func patchUnmark(ctx context.Context, c kubernetes.Interface, node string) (*unmarkChange, *corev1.Node, error) {
	for attempt := 0; ; attempt++ {
		n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("reading node %s: %w", node, err)
		}
		ch := unmarkChanges(n)
		if ch.patch == nil {
			return &ch, n, nil
		}
		patch, err := json.Marshal(ch.patch)
		if err != nil {
			return nil, nil, err
		}
		_, err = c.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "gpuctl"})
		if apierrors.IsConflict(err) && attempt < 4 {
			continue
		}
		if err != nil {
			return &ch, n, fmt.Errorf("patching node %s: %w", node, err)
		}
		return &ch, n, nil
	}
}

// unmarkEvent is the Event that says what Unmark removed from n (and kept).
func unmarkEvent(n *corev1.Node, u *Unmarked, runID string, now time.Time) *corev1.Event {
	msg := "gpuctl accept --unmark removed what gpuctl had put on the node: " + strings.Join(u.Removed, ", ")
	if len(u.Kept) > 0 {
		msg += "; kept (gpuctl did not add it): " + strings.Join(u.Kept, ", ")
	}
	ev := markEvent(n, MarkRecordRef{RunID: runID, Time: now}, msg)
	ev.Name += "-unmark"
	ev.Reason, ev.Type, ev.Action = "GPUUnmarked", corev1.EventTypeNormal, "Unmark"
	return ev
}
