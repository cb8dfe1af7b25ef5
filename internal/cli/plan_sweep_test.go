package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// sweepSpec is a spec whose pool train has rollout.gate sweep.
const sweepSpec = "../plan/testdata/rollout-sweep.yaml"

// TestPlanSweepGateCluster: plan --kubeconfig --step-start on a pool with
// rollout.gate sweep shows each node against the gate in a "sweep gate"
// table and counts them on the summary line: node-1 accepted after the
// step's start passes, node-2 never swept does not.
func TestPlanSweepGateCluster(t *testing.T) {
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	accepted := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"cloud.google.com/gke-nodepool": "train"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: "GPUAccepted", Status: corev1.ConditionTrue, Reason: "Pass", LastTransitionTime: metav1.NewTime(start.Add(time.Hour))}}}}
	unswept := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-2", Labels: map[string]string{"cloud.google.com/gke-nodepool": "train"}}}
	streams, _, out, errOut := TestStreams()
	code := RunWithFactory(context.Background(), []string{"plan", sweepSpec, "--kubeconfig", "kc", "--step-start", "2026-12-03T10:00:00Z", "--as-of", "2026-11-29"},
		streams, fakeFactory(fake.NewSimpleClientset(accepted, unswept)))
	if code != ExitCheckFailed { // the nodes drift from the spec (no GFD labels)
		t.Errorf("exit %d, want %d; stderr:\n%s", code, ExitCheckFailed, errOut)
	}
	got := out.String()
	for _, want := range []string{
		"ENV\tPOOL\tNODE\tGPUACCEPTED\tSINCE\tPASSES\tWHY",
		"base\ttrain\tnode-1\taccepted\t2026-12-03T11:00:00Z\ttrue\tGPUAccepted=True since 2026-12-03T11:00:00Z, after the step's start",
		"base\ttrain\tnode-2\tmissing\t-\tfalse\tno GPUAccepted condition",
		"sweep gate of train: 1 of 2 node(s) accepted",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// TestPlanStepStartUsage: --step-start needs a cluster and an RFC 3339
// time (exit 2, the flag named).
func TestPlanStepStartUsage(t *testing.T) {
	for _, c := range []struct{ args []string }{
		{[]string{"plan", sweepSpec, "--step-start", "2026-12-03T10:00:00Z"}},
		{[]string{"plan", sweepSpec, "--kubeconfig", "kc", "--step-start", "yesterday"}},
	} {
		streams, _, _, errOut := TestStreams()
		if code := RunWithFactory(context.Background(), c.args, streams, fakeFactory(fake.NewSimpleClientset())); code != ExitUsage || !strings.Contains(errOut.String(), "--step-start") {
			t.Errorf("%v: exit %d, stderr %q; want %d naming --step-start", c.args, code, errOut, ExitUsage)
		}
	}
}
