package plan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestRolloutSweepGate: rollout-sweep.yaml is rollout-new.yaml with
// rollout.gate sweep and spec.acceptance: every checkpoint's gate is the
// sweep's (no accept command, the pool's nodes, GPUAccepted=True newer
// than the step's start, the command that starts a sweep now), Prepare
// asks for the sweep and the steps' start instead of marking the old
// nodes, and the default selector covers the pool (no warning).
func TestRolloutSweepGate(t *testing.T) {
	p := fromPlan(t, "rollout-sweep.yaml")
	r := p.Rollouts[0]
	if len(r.Steps) != 6 {
		t.Fatalf("steps = %d, want 6", len(r.Steps))
	}
	for _, s := range r.Steps {
		g := s.Gate
		if g.Kind != GateSweep || len(g.Command) != 0 || g.Selector != "cloud.google.com/gke-nodepool=train" || g.Condition != "GPUAccepted=True" {
			t.Errorf("step %d gate %+v, want the sweep's gate of the pool's nodes", s.Step, g)
		}
		if !strings.Contains(g.Pass, "after the step's start") || !strings.Contains(g.Pass, AnnotationAcceptTime) {
			t.Errorf("step %d pass %q", s.Step, g.Pass)
		}
		want := []string{"kubectl", "-n", "gpuctl-acceptance", "create", "job", "--from=cronjob/gpuctl-accept-sweep", "gpuctl-accept-sweep-STEP"}
		if d := cmp.Diff(want, g.Trigger); d != "" {
			t.Errorf("step %d trigger (-want +got):\n%s", s.Step, d)
		}
		if d := cmp.Diff(spec.DefaultAcceptanceStages, g.Stages); d != "" {
			t.Errorf("step %d stages are not the sweep's (-want +got):\n%s", s.Step, d)
		}
	}
	prep := strings.Join(r.Prepare, "\n")
	if strings.Contains(prep, "--mark") || !strings.Contains(prep, "CronJob gpuctl-accept-sweep") {
		t.Errorf("prepare %q: want the sweep, not marking", prep)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings %q", r.Warnings)
	}
	if pl := p.Environments[0].Pools[0]; pl.RolloutGate != GateSweep {
		t.Errorf("pool's rolloutGate %q", pl.RolloutGate)
	}
}

// TestRolloutSweepSelectorMisses: a sweep whose selector does not select
// the pool's nodes is a warning of the rollout; an accept gate is as it
// was (Kind accept, the marked-nodes selector).
func TestRolloutSweepSelectorMisses(t *testing.T) {
	in := RolloutInput{Provider: spec.ProviderGKE, SpecFile: "s.yaml", Pool: Pool{Name: "train", GPUsPerNode: 8, Zones: []string{"a"}, MaxNodes: 2,
		Labels: map[string]string{LabelGKENodePool: "train"}}, MaxUnavailable: spec.IntOrPercent{Value: 1},
		Gate: GateSweep, Sweep: &spec.Acceptance{Selector: "gpuctl.dev/accept-sweep=true"}, SweepSelector: "gpuctl.dev/accept-sweep=true",
		Reasons: []string{"driver"}, Effects: []Effect{{Change: "driver", Strategy: StrategySurge}}}
	r := PlanRollout(in)
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], `selector "gpuctl.dev/accept-sweep=true" does not select pool train's nodes`) {
		t.Errorf("warnings %q", r.Warnings)
	}
	in.Gate = ""
	r = PlanRollout(in)
	if g := r.Steps[0].Gate; g.Kind != GateAccept || g.Selector != "cloud.google.com/gke-nodepool=train,!gpuctl.dev/accept" || len(r.Warnings) != 0 {
		t.Errorf("accept gate %+v, warnings %q", g, r.Warnings)
	}
}

// sweptNode is a node of pool train with a GPUAccepted condition of
// status (none when ""), changed at ltt, and the accept-time annotation
// at (none when zero).
func sweptNode(name string, status corev1.ConditionStatus, reason string, ltt, at time.Time) *corev1.Node {
	n := gpuNode(name, "us-central1-a", "535.261.03", true)
	if status != "" {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeConditionType(ConditionGPUAccepted), Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(ltt)})
	}
	if !at.IsZero() {
		n.Annotations = map[string]string{AnnotationAcceptTime: at.Format(time.RFC3339)}
	}
	return n
}

// TestSweepGateLive: plan --kubeconfig --step-start on a pool with
// rollout.gate sweep reads each node's GPUAccepted condition from the
// Nodes drift lists (list calls only): True after the step's start
// passes, by its lastTransitionTime or by a newer accept-time annotation
// (the condition's time stays while its status does); True from before,
// False, Unknown and missing do not.
func TestSweepGateLive(t *testing.T) {
	doc, res := checked(t, "testdata/rollout-sweep.yaml", "")
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	before, after := start.Add(-time.Hour), start.Add(time.Hour)
	kc := fake.NewSimpleClientset(
		sweptNode("node-1", corev1.ConditionTrue, "Pass", after, after),
		sweptNode("node-2", corev1.ConditionTrue, "Pass", before, after),
		sweptNode("node-3", corev1.ConditionTrue, "Pass", before, before),
		sweptNode("node-4", corev1.ConditionFalse, "Fail", after, after),
		sweptNode("node-5", corev1.ConditionUnknown, "Inconclusive", after, after),
		sweptNode("node-6", "", "", time.Time{}, time.Time{}),
	)
	p, err := Make(context.Background(), Input{Doc: doc, Result: res, Kube: kc, AsOf: "2026-11-29", StepStart: start})
	if err != nil {
		t.Fatal(err)
	}
	validateSchema(t, p)
	for _, a := range kc.Actions() {
		if a.GetVerb() != "list" {
			t.Errorf("plan made a %s request on %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
	if len(p.SweepGates) != 1 {
		t.Fatalf("sweep gates %+v, want the pool's", p.SweepGates)
	}
	g := p.SweepGates[0]
	if g.Pool != "train" || g.Since != "2026-12-03T10:00:00Z" || !g.Covers || g.Nodes != 6 || g.Accepted != 2 || g.Passes {
		t.Errorf("gate %+v", g)
	}
	type state struct{ node, state, from string }
	var got []state
	for _, n := range g.NodeGates {
		got = append(got, state{n.Node, n.State, n.TimeFrom})
		if n.Satisfies != (n.State == SweepAccepted) || !n.Selected {
			t.Errorf("%s: %+v", n.Node, n)
		}
	}
	want := []state{{"node-1", SweepAccepted, "condition"}, {"node-2", SweepAccepted, "annotation"}, {"node-3", SweepOlder, "condition"},
		{"node-4", SweepFailed, "condition"}, {"node-5", SweepUnknown, "condition"}, {"node-6", SweepMissing, ""}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(state{})); d != "" {
		t.Errorf("node states (-want +got):\n%s", d)
	}
}

// TestCheckSweepGate: without a step start any GPUAccepted=True with a
// time passes; a node the sweep's selector does not select is named in
// the warning and the gate cannot pass; a pool without nodes does not
// pass.
func TestCheckSweepGate(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	a, b := *sweptNode("node-a", corev1.ConditionTrue, "Pass", at, time.Time{}), *sweptNode("node-b", corev1.ConditionTrue, "Pass", at, time.Time{})
	b.Labels["gpuctl.dev/accept-sweep"] = "true"
	g := CheckSweepGate("", "train", "cloud.google.com/gke-nodepool=train", time.Time{}, []corev1.Node{a, b})
	if !g.Passes || g.Accepted != 2 || g.Since != "" || !g.Covers || !strings.Contains(g.NodeGates[0].Why, "no --step-start") {
		t.Errorf("gate without a step start %+v", g)
	}
	g = CheckSweepGate("", "train", "gpuctl.dev/accept-sweep=true", time.Time{}, []corev1.Node{a, b})
	if g.Covers || g.Passes || !strings.Contains(g.Warning, "does not select 1 node(s) of pool train (node-a)") || g.NodeGates[0].Selected || !g.NodeGates[1].Selected {
		t.Errorf("gate with a narrower selector %+v", g)
	}
	if g = CheckSweepGate("", "train", "x=y", time.Time{}, nil); g.Passes || g.Nodes != 0 {
		t.Errorf("gate of no nodes %+v", g)
	}
}

// TestRolloutSweepReplacePool: a replace-pool rollout with rollout.gate
// sweep gates its canary and batch on the sweep over the new pool's nodes
// (the move and remove steps have no gate), asks in Prepare for the sweep to
// select the new pool, and warns when the spec's own selector would miss it.
func TestRolloutSweepReplacePool(t *testing.T) {
	in := RolloutInput{Provider: spec.ProviderGKE, SpecFile: "s.yaml", Pool: Pool{Name: "train", GPUsPerNode: 8, Zones: []string{"a"}, MinNodes: 3, MaxNodes: 3,
		Labels: map[string]string{LabelGKENodePool: "train", spec.LabelPool: "train"}}, MaxUnavailable: spec.IntOrPercent{Value: 1},
		Gate: GateSweep, Sweep: &spec.Acceptance{}, SweepSelector: "cloud.google.com/gke-nodepool in (train,train-next)",
		Reasons: []string{"driver"}, Effects: []Effect{{Change: "driver", Strategy: StrategyReplace}}}
	r := PlanRollout(in)
	kinds := []string{}
	for _, s := range r.Steps {
		kinds = append(kinds, s.Kind+":"+s.Gate.Kind)
		if s.Gate.Kind == GateSweep && s.Gate.Selector != "cloud.google.com/gke-nodepool=train-next" {
			t.Errorf("step %d selects %q, want the new pool's nodes", s.Step, s.Gate.Selector)
		}
	}
	if d := cmp.Diff([]string{"canary:sweep", "batch:sweep", "move:", "remove:"}, kinds); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if prep := strings.Join(r.Prepare, "\n"); !strings.Contains(prep, "selects every node of pool train-next") {
		t.Errorf("prepare %q", prep)
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, "rollout.gate sweep") {
			t.Errorf("warning %q with acceptance.selector unset", w)
		}
	}
	in.Sweep, in.SweepSelector = &spec.Acceptance{Selector: "cloud.google.com/gke-nodepool=train"}, "cloud.google.com/gke-nodepool=train"
	r = PlanRollout(in)
	if w := strings.Join(r.Warnings, "\n"); !strings.Contains(w, `does not select pool train-next's nodes`) {
		t.Errorf("warnings %q: want the new pool missed by the spec's selector", w)
	}
}

// A pool gated by the sweep is accepted by the sweep's stages, the others
// by accept's defaults; the baseline is shown only where nccl runs.
func TestPoolStagesOfSweepGate(t *testing.T) {
	s := &spec.Spec{Acceptance: &spec.Acceptance{Stages: []string{"inventory", "dcgm"}}}
	sweep := &spec.NodePool{Rollout: &spec.Rollout{Gate: spec.GateSweep}}
	if got := strings.Join(poolStages(s, sweep), ","); got != "inventory,dcgm" {
		t.Errorf("sweep gate: %s", got)
	}
	if got := strings.Join(poolStages(s, &spec.NodePool{}), ","); got != "kubernetes,inventory,topology,cuda,nccl" {
		t.Errorf("accept gate: %s", got)
	}
	if a := acceptancePlan("", "NVIDIA H100 80GB HBM3", 8, []string{"inventory"}); a.Baseline != "" {
		t.Errorf("baseline %q without the nccl stage", a.Baseline)
	}
	if a := acceptancePlan("", "NVIDIA H100 80GB HBM3", 8, []string{"nccl"}); a.Baseline == "" {
		t.Error("no baseline with the nccl stage")
	}
}

// A sweep-gated pool's images are the sweep's (spec.acceptance.images)
// over accept's defaults.
func TestSweepPoolImages(t *testing.T) {
	doc, err := spec.Parse("s.yaml", []byte(`apiVersion: gpuctl.dev/v1alpha1
kind: ClusterSpec
metadata: {name: a}
spec:
  provider: gke
  nodePools:
    - {name: p, machineType: a3-highgpu-8g, rollout: {gate: sweep}}
  acceptance:
    image: r.example/gpuctl:v1
    schedule: "@daily"
    stages: [inventory, cuda]
    images: {cuda: "r.example/cuda:12"}
    keySecret: {name: k, key: k.pem}
    records: {configMap: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := doc.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	p := resolvePool(doc, "", cs, 0, map[string]int{})
	if p.Acceptance.Images["cuda"] != "r.example/cuda:12" || p.Acceptance.Images["inventory"] == "" || strings.Join(p.Acceptance.Stages, ",") != "inventory,cuda" {
		t.Errorf("acceptance %+v", p.Acceptance)
	}
}
