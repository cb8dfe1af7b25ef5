package accept

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// What `accept --sweep` puts on a node besides --mark's label and
// annotations.
const (
	// ConditionGPUAccepted is the Node condition of the newest verdict:
	// True on PASS, False on FAIL, Unknown on INCONCLUSIVE, with reason
	// Pass, Fail or Inconclusive and the record's digest in its message.
	ConditionGPUAccepted corev1.NodeConditionType = "GPUAccepted"
	// AnnotationAcceptVerdict is the newest verdict (PASS, FAIL, INCONCLUSIVE).
	AnnotationAcceptVerdict = "gpuctl.dev/accept-verdict"
	// AnnotationAcceptTime is when the newest verdict was reached (RFC 3339, UTC).
	AnnotationAcceptTime = "gpuctl.dev/accept-time"
	// AnnotationRecordDigest is "sha256:HEX" of the newest record file.
	AnnotationRecordDigest = "gpuctl.dev/record-digest"
	// AnnotationQuarantineReason is why gpuctl quarantined the node (the
	// FAIL's first problem); a PASS removes it.
	AnnotationQuarantineReason = "gpuctl.dev/quarantine-reason"

	// RecordConfigMapKey is the key of the record in the records ConfigMap.
	RecordConfigMapKey = "record.dsse.json"
	// MaxRecordConfigMapBytes is the largest record --records-configmap
	// stores: 900 KiB, under the 1 MiB a ConfigMap may hold
	// (https://kubernetes.io/docs/concepts/configuration/configmap/, "The
	// data stored in a ConfigMap cannot exceed 1 MiB", checked 2026-12-03)
	// with room for the object's metadata.
	MaxRecordConfigMapBytes = 900 << 10
	// AnnotationRecordNode names the node of a records ConfigMap (label
	// values are too short for every node name).
	AnnotationRecordNode = "gpuctl.dev/node"

	conditionMessageMax = 1024
)

// ErrRecordTooLarge is returned by StoreRecordConfigMap for a record over
// MaxRecordConfigMapBytes.
var ErrRecordTooLarge = errors.New("record too large for a ConfigMap")

// SweepPermissions are what --sweep needs on top of the Job stages': --mark's
// (nodes patch, events create in EventNamespace), nodes/status patch for the
// GPUAccepted condition, pods list cluster-wide to find the GPUs' holders
// and, with configMap (--records-configmap), configmaps get, create and
// update in namespace ns.
func SweepPermissions(ns string, configMap bool) []Permission {
	perms := append(MarkPermissions(),
		Permission{Verb: "patch", Resource: "nodes", Subresource: "status", Why: "set the node's GPUAccepted condition (--sweep)"},
		Permission{Verb: "list", Resource: "pods", Why: "skip nodes where other pods hold GPUs (--sweep)"})
	if configMap {
		for _, v := range []string{"get", "create", "update"} {
			perms = append(perms, Permission{Verb: v, Resource: "configmaps", Namespace: ns, Why: "keep each node's newest record (--records-configmap)"})
		}
	}
	return perms
}

// BusyNodes returns, for each of nodes where a pod not managed by gpuctl
// holds GPUs and has not finished, why the sweep skips it: "busy: pod
// NS/NAME holds N GPUs" (the first such pod by name, and how many more).
// It lists the pods of every namespace once.
func BusyNodes(ctx context.Context, c kubernetes.Interface, nodes []string) (map[string]string, error) {
	var pods *corev1.PodList
	sel := fields.AndSelectors(fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed))).String()
	err := retry(ctx, func(ctx context.Context) error {
		var err error
		pods, err = c.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: sel})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the pods that hold GPUs: %s", apiProblem(err, "list", "pods", "(all)"))
	}
	want := map[string]bool{}
	for _, n := range nodes {
		want[n] = true
	}
	return busyReasons(pods.Items, want), nil
}

// busyReasons is BusyNodes on a list of pods, for the nodes in want.
func busyReasons(pods []corev1.Pod, want map[string]bool) map[string]string {
	holders := map[string][]string{}
	for i := range pods {
		p := &pods[i]
		if !want[p.Spec.NodeName] || p.Labels[LabelManagedBy] == ManagedBy ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if g := podGPUs(p); g > 0 {
			holders[p.Spec.NodeName] = append(holders[p.Spec.NodeName], fmt.Sprintf("pod %s/%s holds %d GPUs", p.Namespace, p.Name, g))
		}
	}
	out := map[string]string{}
	for node, hs := range holders {
		sort.Strings(hs)
		out[node] = "busy: " + hs[0]
		if len(hs) > 1 {
			out[node] += fmt.Sprintf(" (and %d more pods)", len(hs)-1)
		}
	}
	return out
}

// IsQuarantined reports whether n carries gpuctl's TaintUnaccepted.
func IsQuarantined(n *corev1.Node) bool { return containsTaint(n.Spec.Taints, TaintUnaccepted) }

// QuarantineCap counts the quarantined nodes of a sweep's selection against
// --max-unhealthy: N nodes, or P percent of the selection rounded up (busy
// nodes included: the cap bounds how much of the pool is out of
// scheduling).
//
// A percentage rounds up, so that a non-zero one lets a small pool
// quarantine one node (10% of 4 nodes is 1, not 0), as a
// PodDisruptionBudget's maxUnavailable percentage is "rounded up to the
// nearest integer" (https://kubernetes.io/docs/tasks/run-application/configure-pdb/,
// 2026-12-03). --mark's rule (MaxUnhealthy.Exceeded: stop marking when more
// than P percent are not PASS) is another question and keeps its exact
// comparison.
type QuarantineCap struct {
	limit       MaxUnhealthy
	most        int // the most nodes quarantined at once; -1: no limit
	total, held int
}

// NewQuarantineCap starts the count with held nodes quarantined (those
// that stay quarantined after this sweep) of a selection of total.
func NewQuarantineCap(limit MaxUnhealthy, total, held int) *QuarantineCap {
	return &QuarantineCap{limit: limit, most: quarantineMax(limit, total), total: total, held: held}
}

// quarantineMax is how many of total nodes limit lets be quarantined: N,
// or ceil(P*total/100); -1 when limit is unset.
func quarantineMax(limit MaxUnhealthy, total int) int {
	switch {
	case !limit.set:
		return -1
	case limit.percent:
		return (limit.n*total + 99) / 100
	}
	return limit.n
}

// Max is the most nodes the cap lets be quarantined at once (the count,
// or the percentage of the selection rounded up); -1 without a limit.
func (q *QuarantineCap) Max() int { return q.most }

// Admit reports whether one more node may be quarantined, and counts it if so.
func (q *QuarantineCap) Admit() bool {
	if q.most >= 0 && q.held+1 > q.most {
		return false
	}
	q.held++
	return true
}

// Full says why a FAILed node is not quarantined.
func (q *QuarantineCap) Full() string {
	limit := q.limit.String()
	if q.limit.percent {
		limit += fmt.Sprintf(" (%d of %d nodes, rounded up)", q.most, q.total)
	}
	return fmt.Sprintf("%d of %d nodes are quarantined, --max-unhealthy %s: not quarantined (nothing new is)", q.held, q.total, limit)
}

// sweepAnnotations adds to a the sweep's annotations of ref (verdict, time,
// digest) and sets (a quarantined FAIL) or removes (a PASS) the quarantine
// reason.
func sweepAnnotations(a map[string]any, ref MarkRecordRef, reason string) {
	a[AnnotationAcceptVerdict] = string(ref.Verdict)
	a[AnnotationAcceptTime] = ref.Time.UTC().Format(time.RFC3339)
	a[AnnotationRecordDigest] = ref.Digest
	switch {
	case ref.Verdict == diag.Fail && reason != "":
		a[AnnotationQuarantineReason] = reason
	case ref.Verdict == diag.Pass:
		a[AnnotationQuarantineReason] = nil
	}
}

// isolationEvents are the Events of what Mark added (a quarantine) and
// removed (a return) on n.
func isolationEvents(n *corev1.Node, ref MarkRecordRef, m *Marked, reason string) []*corev1.Event {
	var evs []*corev1.Event
	if len(m.Added) > 0 {
		ev := markEvent(n, ref, fmt.Sprintf("gpuctl quarantined the node (added %s): %s", strings.Join(m.Added, ","), reason))
		ev.Name += "-quarantine"
		ev.Reason, ev.Type, ev.Action = "GPUQuarantined", corev1.EventTypeWarning, "Quarantine"
		evs = append(evs, ev)
	}
	if len(m.Removed) > 0 {
		ev := markEvent(n, ref, fmt.Sprintf("gpuctl returned the node after a PASS (removed %s, which gpuctl had added)", strings.Join(m.Removed, ",")))
		ev.Name += "-return"
		ev.Reason, ev.Type, ev.Action = "GPUReturned", corev1.EventTypeNormal, "Return"
		evs = append(evs, ev)
	}
	return evs
}

// AcceptedCondition is the GPUAccepted condition of ref with message (the
// first problem, MarkReason) and the record's digest, on a node whose
// current conditions are conds: lastTransitionTime is ref.Time when the
// status changes, else the current one's.
func AcceptedCondition(conds []corev1.NodeCondition, ref MarkRecordRef, message string) corev1.NodeCondition {
	status, reason := corev1.ConditionUnknown, "Inconclusive"
	switch ref.Verdict {
	case diag.Pass:
		status, reason = corev1.ConditionTrue, "Pass"
	case diag.Fail:
		status, reason = corev1.ConditionFalse, "Fail"
	}
	suffix := "; record " + ref.Digest
	if len(message)+len(suffix) > conditionMessageMax {
		message = message[:conditionMessageMax-len(suffix)-len("…")] + "…"
	}
	t := metav1.NewTime(ref.Time.UTC().Truncate(time.Second))
	c := corev1.NodeCondition{Type: ConditionGPUAccepted, Status: status, Reason: reason, Message: message + suffix, LastHeartbeatTime: t, LastTransitionTime: t}
	for _, old := range conds {
		if old.Type == ConditionGPUAccepted && old.Status == status {
			c.LastTransitionTime = old.LastTransitionTime
		}
	}
	return c
}

// SetAcceptedCondition sets node's GPUAccepted condition (AcceptedCondition)
// with a strategic merge patch of nodes/status (conditions merge by type:
// the others stay as they are) and returns it.
func SetAcceptedCondition(ctx context.Context, c kubernetes.Interface, node string, ref MarkRecordRef, message string) (*corev1.NodeCondition, error) {
	n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading node %s: %w", node, err)
	}
	cond := AcceptedCondition(n.Status.Conditions, ref, message)
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}})
	if err != nil {
		return nil, err
	}
	err = retry(ctx, func(ctx context.Context) error {
		_, err := c.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "gpuctl"}, "status")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("setting condition %s on node %s: %w", ConditionGPUAccepted, node, err)
	}
	return &cond, nil
}

// RecordConfigMapName is the records ConfigMap of node: gpuctl-record-NODE
// (a node name too long for it is cut and ends in 8 hex digits of its
// sha256).
func RecordConfigMapName(node string) string {
	name := "gpuctl-record-" + node
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(node))
	return strings.TrimRight(name[:244], "-.") + "-" + hex.EncodeToString(sum[:4])
}

// StoreRecordConfigMap keeps data, node's newest signed record, under
// RecordConfigMapKey in ConfigMap RecordConfigMapName(node) of namespace ns
// (created, or updated when gpuctl made it) and returns the ConfigMap's
// name. A record over MaxRecordConfigMapBytes is an error wrapping
// ErrRecordTooLarge; so is a ConfigMap of that name gpuctl did not make.
func StoreRecordConfigMap(ctx context.Context, c kubernetes.Interface, ns, node string, data []byte, ref MarkRecordRef) (string, error) {
	name := RecordConfigMapName(node)
	if len(data) > MaxRecordConfigMapBytes {
		return name, fmt.Errorf("node %s: the record is %d bytes, more than the %d (900 KiB) a ConfigMap holds here: %w (it is in the evidence directory, and on stdout with -o json)",
			node, len(data), MaxRecordConfigMapBytes, ErrRecordTooLarge)
	}
	cms := c.CoreV1().ConfigMaps(ns)
	for attempt := 0; ; attempt++ {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = cms.Create(ctx, recordConfigMap(&corev1.ConfigMap{}, ns, name, node, data, ref), metav1.CreateOptions{FieldManager: "gpuctl"})
		} else if err == nil {
			if cm.Labels[LabelManagedBy] != ManagedBy {
				return name, fmt.Errorf("ConfigMap %s/%s exists and is not gpuctl's (no %s=%s): not overwritten", ns, name, LabelManagedBy, ManagedBy)
			}
			_, err = cms.Update(ctx, recordConfigMap(cm, ns, name, node, data, ref), metav1.UpdateOptions{FieldManager: "gpuctl"})
		}
		if (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && attempt < 4 {
			continue
		}
		if err != nil {
			return name, fmt.Errorf("storing the record of node %s in ConfigMap %s/%s: %w", node, ns, name, err)
		}
		return name, nil
	}
}

// recordConfigMap fills cm (new or read) with the record of node.
func recordConfigMap(cm *corev1.ConfigMap, ns, name, node string, data []byte, ref MarkRecordRef) *corev1.ConfigMap {
	cm.Name, cm.Namespace = name, ns
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Labels[LabelManagedBy] = ManagedBy
	cm.Annotations[AnnotationRecordNode] = node
	cm.Annotations[AnnotationRecordDigest] = ref.Digest
	cm.Annotations[AnnotationAcceptVerdict] = string(ref.Verdict)
	cm.Annotations[AnnotationAcceptTime] = ref.Time.UTC().Format(time.RFC3339)
	cm.Data = map[string]string{RecordConfigMapKey: string(data)}
	cm.BinaryData = nil
	return cm
}
