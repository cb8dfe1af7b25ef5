package plan

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xeipuuv/gojsonschema"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

var asOf = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func checked(t *testing.T, file, env string) (*spec.Document, *check.Result) {
	t.Helper()
	doc, err := spec.Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Document(doc, check.Options{Env: env, AsOf: asOf, Generate: true})
	if err != nil {
		t.Fatal(err)
	}
	return doc, res
}

// schemaFile is the hand-written JSON Schema of a plan document the tests
// hold plans to; data/plan.schema.json, what `gpuctl schema plan` prints,
// must be the same file (TestSchemaIsTestdataCopy).
const schemaFile = "testdata/plan.schema.json"

// validateSchema holds a plan's JSON to the hand-written schema in testdata.
func validateSchema(t *testing.T, p *Plan) []byte {
	t.Helper()
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gojsonschema.Validate(gojsonschema.NewBytesLoader(schema), gojsonschema.NewBytesLoader(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Errors() {
		t.Errorf("plan JSON does not match testdata schema: %s", e)
	}
	return append(b, '\n')
}

// TestSchemaIsTestdataCopy: the embedded schema `gpuctl schema plan`
// prints is byte for byte the one the tests validate plans against.
func TestSchemaIsTestdataCopy(t *testing.T) {
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(Schema)); d != "" {
		t.Errorf("data/plan.schema.json differs from %s (copy one onto the other) (-testdata +embedded):\n%s", schemaFile, d)
	}
}

// fromPlan is the plan of testdata/NEW against testdata/rollout-old.yaml.
func fromPlan(t *testing.T, newFile string) *Plan {
	t.Helper()
	doc, res := checked(t, "testdata/"+newFile, "")
	old, oldRes := checked(t, "testdata/rollout-old.yaml", "")
	p, err := Make(context.Background(), Input{Doc: doc, Result: res, From: old, FromResult: oldRes, AsOf: "2026-11-29"})
	if err != nil {
		t.Fatal(err)
	}
	validateSchema(t, p)
	if len(p.Rollouts) != 1 {
		t.Fatalf("rollouts = %d, want 1", len(p.Rollouts))
	}
	return p
}

// TestRolloutRespectsLimits: a node image change of a 12-node training
// pool across 3 zones with rollout.maxUnavailable 2 is GKE's surge upgrade
// in place (image_type updates in place): checkpoints of 2 nodes (no surge
// node for training), 10 of 12 nodes in service during each, gates that
// select the nodes not marked since Prepare marked the old ones.
func TestRolloutRespectsLimits(t *testing.T) {
	p := fromPlan(t, "rollout-new.yaml")
	r := p.Rollouts[0]
	if r.Strategy != StrategySurge || len(r.Effects) != 1 || !strings.Contains(r.Effects[0].Change, "image_type: UBUNTU_CONTAINERD -> COS_CONTAINERD") {
		t.Fatalf("strategy %s, effects %+v: want one surge-upgrade of image_type", r.Strategy, r.Effects)
	}
	if r.Nodes != 12 || r.MaxUnavailable != 2 || len(r.Zones) != 3 {
		t.Fatalf("nodes %d, maxUnavailable %d, zones %d; want 12, 2, 3", r.Nodes, r.MaxUnavailable, len(r.Zones))
	}
	total := 0
	for _, s := range r.Steps {
		if s.Nodes > r.MaxUnavailable {
			t.Errorf("step %d takes %d nodes, more than maxUnavailable %d", s.Step, s.Nodes, r.MaxUnavailable)
		}
		if s.Kind != StepBatch || s.Controlled || s.Zone != "" {
			t.Errorf("step %d: kind %s, controlled %v, zone %q: want an uncontrolled pool-wide checkpoint (GKE picks nodes and zones)", s.Step, s.Kind, s.Controlled, s.Zone)
		}
		if s.CapacityNodes != 12-s.Nodes || s.CapacityGPUs != 8*(12-s.Nodes) {
			t.Errorf("step %d: capacity %d nodes / %d GPUs for %d out", s.Step, s.CapacityNodes, s.CapacityGPUs, s.Nodes)
		}
		if want := "cloud.google.com/gke-nodepool=train,!gpuctl.dev/accept"; s.Gate.Selector != want || s.Gate.Command[1] != "accept" ||
			s.Gate.Command[2] != "-l" || s.Gate.Command[3] != want || s.Gate.Command[len(s.Gate.Command)-1] != "--mark" {
			t.Errorf("step %d gate %v: want accept -l %s ... --mark", s.Step, s.Gate, want)
		}
		total += s.Nodes
	}
	if total != 12 || len(r.Steps) != 6 {
		t.Errorf("%d steps replace %d nodes, want 6 steps of 2, 12 nodes", len(r.Steps), total)
	}
	if r.MaxSurge != 0 || !strings.Contains(r.Mechanism, "max_surge 0, max_unavailable 2") || !strings.Contains(r.Mechanism, "not steps gpuctl or the pipeline controls") {
		t.Errorf("mechanism %q", r.Mechanism)
	}
	// The selector is quoted for a shell (it holds a !), the cheapest
	// stage marks, against the old spec the old nodes run.
	if len(r.Prepare) != 1 || !strings.Contains(r.Prepare[0], "gpuctl accept -l cloud.google.com/gke-nodepool=train --spec testdata/rollout-old.yaml --pool train --stages kubernetes --mark") {
		t.Errorf("prepare %q", r.Prepare)
	}
	if got := ShellJoin(r.Steps[0].Gate.Command); !strings.Contains(got, "-l 'cloud.google.com/gke-nodepool=train,!gpuctl.dev/accept'") {
		t.Errorf("gate line %q: the selector is not quoted", got)
	}
	if len(r.OnFail.Rollback) < 3 || !strings.Contains(r.OnFail.Rollback[2], "gcloud container node-pools rollback train --cluster ml --location us-central1") {
		t.Errorf("rollback %q: want gcloud with the spec's cluster and location", r.OnFail.Rollback)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings %q", r.Warnings)
	}
	if !p.Summary.Changes || p.Summary.SpecChanges != 1 {
		t.Errorf("summary %+v", p.Summary)
	}
}

// TestRolloutReplacePool: a driver change of a GKE pool changes
// gpu_driver_installation_config, which forces a new pool: applied as it
// is, all 12 nodes go at once. The rollout says so and adds a new pool
// beside the old one: a canary node, the rest, the move, the removal; the
// old pool's 12 nodes serve throughout.
func TestRolloutReplacePool(t *testing.T) {
	p := planOf(t, "testdata/rollout-driver.yaml", "testdata/rollout-new.yaml")
	if len(p.Rollouts) != 1 {
		t.Fatalf("rollouts %d (findings %v), want 1", len(p.Rollouts), p.Findings)
	}
	r := p.Rollouts[0]
	if r.Strategy != StrategyReplace || !strings.Contains(r.Mechanism, "destroys pool train") {
		t.Fatalf("strategy %s, mechanism %q: want replace-pool", r.Strategy, r.Mechanism)
	}
	if len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], "capacity drops to 0 of 12 node(s)") {
		t.Errorf("warnings %q", r.Warnings)
	}
	type got struct {
		Kind          string
		Nodes, Serves int
		Gate          string
	}
	var steps []got
	for _, s := range r.Steps {
		if !s.Controlled {
			t.Errorf("step %d is not controlled: each step's action starts it", s.Step)
		}
		steps = append(steps, got{s.Kind, s.Nodes, s.CapacityNodes, s.Gate.Selector})
	}
	sel := "cloud.google.com/gke-nodepool=train-next,!gpuctl.dev/accept"
	want := []got{{"canary", 1, 12, sel}, {"batch", 11, 12, sel}, {"move", 12, 12, ""}, {"remove", 12, 12, ""}}
	if d := cmp.Diff(want, steps); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if !strings.Contains(r.Steps[2].Action, "kubectl cordon -l cloud.google.com/gke-nodepool=train") {
		t.Errorf("move %q", r.Steps[2].Action)
	}
}

// TestRolloutVersionCommand: a kubernetesVersion change of an
// auto-upgrading GKE pool does nothing on apply (the Terraform ignores the
// version): the rollout starts GKE's upgrade with gcloud, with the spec's
// cluster, location and version, after the control plane.
func TestRolloutVersionCommand(t *testing.T) {
	r := fromPlan(t, "rollout-k8s.yaml").Rollouts[0]
	if r.Strategy != StrategyCommand {
		t.Fatalf("strategy %s, effects %+v", r.Strategy, r.Effects)
	}
	if want := []string{"gcloud container clusters upgrade ml --node-pool train --cluster-version 1.34 --location us-central1"}; !cmp.Equal(r.Start, want) {
		t.Errorf("start %q, want %q", r.Start, want)
	}
	if len(r.Prepare) != 2 || !strings.Contains(r.Prepare[1], "gcloud container clusters upgrade ml --master --cluster-version 1.34 --location us-central1") {
		t.Errorf("prepare %q", r.Prepare)
	}
}

// planOf is the plan of newFile against oldFile (paths from the package).
func planOf(t *testing.T, newFile, oldFile string) *Plan {
	t.Helper()
	doc, res := checked(t, newFile, "")
	old, oldRes := checked(t, oldFile, "")
	p, err := Make(context.Background(), Input{Doc: doc, Result: res, From: old, FromResult: oldRes, AsOf: "2026-11-29"})
	if err != nil {
		t.Fatal(err)
	}
	validateSchema(t, p)
	return p
}

// TestChangesWithoutRollout: pools the old spec does not have are added,
// not rolled (no canary, no batches); a switch of provider is reported
// and rolls nothing; a Kubernetes downgrade gets a warning.
func TestChangesWithoutRollout(t *testing.T) {
	p := planOf(t, "../../examples/gke-h100-l4.yaml", "testdata/rollout-old.yaml")
	if len(p.Rollouts) != 0 {
		t.Errorf("rollouts %+v: want none for pools the old spec lacks", p.Rollouts)
	}
	adds := 0
	for _, c := range p.SpecChanges {
		if c.Environment == "" && c.Action == ActionAdd {
			adds++
		}
	}
	if adds != 2 {
		t.Errorf("spec changes %+v: want the base spec's 2 pools added", p.SpecChanges)
	}

	p = planOf(t, "../../examples/eks-inference.yaml", "testdata/rollout-old.yaml")
	if len(p.Rollouts) != 0 || len(p.SpecChanges) == 0 || p.SpecChanges[0].Fields[0].Field != "spec.provider" {
		t.Errorf("provider switch: rollouts %d, changes %+v", len(p.Rollouts), p.SpecChanges)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "spec.provider gke -> eks") {
		t.Errorf("warnings %q", p.Warnings)
	}

	p = planOf(t, "testdata/rollout-old.yaml", "testdata/rollout-k8s.yaml")
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "1.34 -> 1.33 is a downgrade") {
		t.Errorf("downgrade warnings %q", p.Warnings)
	}
}

// TestErrorsNoRollout: a spec with an error finding gets its findings
// only: no spec changes, no rollout, and the plan reports changes (exit 3).
func TestErrorsNoRollout(t *testing.T) {
	p := planOf(t, "../../examples/gke-a100-as-written.yaml", "testdata/rollout-old.yaml")
	if len(p.Findings) == 0 || len(p.Rollouts) != 0 || len(p.SpecChanges) != 0 || !p.Summary.Changes {
		t.Errorf("findings %d, rollouts %d, spec changes %d, changes %v: want findings only", len(p.Findings), len(p.Rollouts), len(p.SpecChanges), p.Summary.Changes)
	}
}

// TestRolloutSmallPool: a 1-node training pool (no surge node) has no
// capacity while its node is replaced, and a maxUnavailable above the
// pool's size is clamped to it, both with a warning.
func TestRolloutSmallPool(t *testing.T) {
	pool := Pool{Name: "p", GPUsPerNode: 8, MaxNodes: 1, Acceptance: acceptancePlan("", "", 0, poolStages(&spec.Spec{}, &spec.NodePool{}))}
	sp := &spec.NodePool{Role: spec.RoleTraining, Autoscaling: spec.Autoscaling{Max: 1}, Rollout: &spec.Rollout{MaxUnavailable: &spec.IntOrPercent{Value: 3}}}
	r := PlanRollout(RolloutInput{Provider: "eks", Pool: pool, MaxUnavailable: *sp.Rollout.MaxUnavailable, Upgrade: matrix.PoolUpgrade("eks", sp),
		Reasons: []string{"x"}, Effects: []Effect{{"release_version: a -> b", StrategySurge, "in place"}}})
	if r.MaxUnavailable != 1 || len(r.Steps) != 1 || r.Steps[0].CapacityNodes != 0 {
		t.Fatalf("maxUnavailable %d, steps %+v", r.MaxUnavailable, r.Steps)
	}
	joined := strings.Join(r.Warnings, "; ")
	for _, w := range []string{"maxUnavailable 3 is more than the pool's 1 node(s)", "capacity drops to 0 nodes during step 1"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings %q lack %q", joined, w)
		}
	}
}

// TestPoolEffects: what each covered change does on each provider, as the
// providers' schemas say (ForceNew or an in-place update).
func TestPoolEffects(t *testing.T) {
	cs := func(provider, k8s string, p spec.NodePool) *spec.ClusterSpec {
		return &spec.ClusterSpec{Spec: spec.Spec{Provider: provider, KubernetesVersion: k8s, NodePools: []spec.NodePool{p}}}
	}
	f := false
	for _, c := range []struct {
		name     string
		old, new *spec.ClusterSpec
		want     []string
	}{
		{"gke driver", cs("gke", "1.33", spec.NodePool{GPU: spec.GPU{Driver: "DEFAULT"}}), cs("gke", "1.33", spec.NodePool{GPU: spec.GPU{Driver: "LATEST"}}), []string{StrategyReplace}},
		{"gke unset driver, same installation", cs("gke", "1.33", spec.NodePool{}), cs("gke", "1.33", spec.NodePool{GPU: spec.GPU{Driver: "DEFAULT"}}), nil},
		{"gke image", cs("gke", "1.33", spec.NodePool{OSImage: "UBUNTU_CONTAINERD"}), cs("gke", "1.33", spec.NodePool{OSImage: "COS_CONTAINERD"}), []string{StrategySurge}},
		{"gke version, auto-upgrade", cs("gke", "1.33", spec.NodePool{}), cs("gke", "1.34", spec.NodePool{}), []string{StrategyCommand}},
		{"gke version, no auto-upgrade", cs("gke", "1.33", spec.NodePool{AutoUpgrade: &f}), cs("gke", "1.34", spec.NodePool{AutoUpgrade: &f}), []string{StrategySurge}},
		{"eks ami type", cs("eks", "1.33", spec.NodePool{OSImage: "AL2023_x86_64_NVIDIA"}), cs("eks", "1.33", spec.NodePool{OSImage: "BOTTLEROCKET_x86_64_NVIDIA"}), []string{StrategyReplace}},
		{"eks release", cs("eks", "1.33", spec.NodePool{ReleaseVersion: "1.33.0-20250101"}), cs("eks", "1.33", spec.NodePool{ReleaseVersion: "1.33.0-20250201"}), []string{StrategySurge}},
		{"eks version", cs("eks", "1.33", spec.NodePool{}), cs("eks", "1.34", spec.NodePool{}), []string{StrategySurge}},
	} {
		var got []string
		for _, e := range PoolEffects(c.old, 0, c.new, 0) {
			got = append(got, e.Strategy)
		}
		if !cmp.Equal(got, c.want) {
			t.Errorf("%s: strategies %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRolloutPercent(t *testing.T) {
	pool := Pool{Name: "p", GPUsPerNode: 8, MaxNodes: 12, Zones: []string{"a", "b", "c"}, Acceptance: acceptancePlan("", "", 0, poolStages(&spec.Spec{}, &spec.NodePool{}))}
	sp := &spec.NodePool{Rollout: &spec.Rollout{MaxUnavailable: &spec.IntOrPercent{Value: 25, Percent: true}}}
	r := PlanRollout(RolloutInput{Provider: "eks", Pool: pool, MaxUnavailable: *sp.Rollout.MaxUnavailable, Upgrade: matrix.PoolUpgrade("eks", sp), Reasons: []string{"x"}})
	if r.MaxUnavailable != 3 {
		t.Fatalf("25%% of 12 = %d, want 3", r.MaxUnavailable)
	}
	got := []int{}
	for _, s := range r.Steps {
		got = append(got, s.Nodes)
	}
	// EKS replaces 3 at a time over the whole group, in its own order.
	if want := []int{3, 3, 3, 3}; !cmp.Equal(got, want) {
		t.Errorf("step sizes %v, want %v", got, want)
	}
	if !strings.HasPrefix(r.Steps[0].Gate.Selector, LabelEKSNodeGroup+"=p,") {
		t.Errorf("EKS selector %q", r.Steps[0].Gate.Selector)
	}
}

// TestRolloutGKESurge: an inference pool on GKE keeps its surge node with
// rollout.maxUnavailable 2, so GKE replaces 3 nodes at a time (upgrade
// settings max_surge 1, max_unavailable 2) and at most 2 are out of
// service; without the field one surge node and none out of service.
func TestRolloutGKESurge(t *testing.T) {
	pool := Pool{Name: "infer", GPUsPerNode: 2, MaxNodes: 8, Zones: []string{"a", "b"}, Acceptance: acceptancePlan("", "", 0, poolStages(&spec.Spec{}, &spec.NodePool{}))}
	sp := &spec.NodePool{Role: spec.RoleInference, Autoscaling: spec.Autoscaling{Max: 8}, Rollout: &spec.Rollout{MaxUnavailable: &spec.IntOrPercent{Value: 2}}}
	r := PlanRollout(RolloutInput{Provider: "gke", Pool: pool, MaxUnavailable: *sp.Rollout.MaxUnavailable, Upgrade: matrix.PoolUpgrade("gke", sp), Reasons: []string{"x"}})
	type got struct{ Nodes, InService int }
	var steps []got
	for _, s := range r.Steps {
		steps = append(steps, got{s.Nodes, s.CapacityNodes})
	}
	// 3 at a time (1 surge node, 2 out of service), then the last 2 (the
	// surge node and 1 out).
	if want := []got{{3, 6}, {3, 6}, {2, 7}}; !cmp.Equal(steps, want) || r.MaxSurge != 1 || r.MaxUnavailable != 2 {
		t.Errorf("steps %v (surge %d, unavailable %d), want %v (1, 2)", steps, r.MaxSurge, r.MaxUnavailable, want)
	}
	sp.Rollout = nil
	r = PlanRollout(RolloutInput{Provider: "gke", Pool: pool, MaxUnavailable: maxUnavailable(sp), Upgrade: matrix.PoolUpgrade("gke", sp), Reasons: []string{"x"}})
	for _, s := range r.Steps {
		if s.Nodes != 1 || s.CapacityNodes != 8 {
			t.Errorf("default inference step %+v: want one node, all 8 in service", s)
		}
	}
	if len(r.Steps) != 8 || r.MaxUnavailable != 0 {
		t.Errorf("%d steps, maxUnavailable %d; want 8, 0", len(r.Steps), r.MaxUnavailable)
	}
}

func gpuNode(name, zone, driver string, taint bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		LabelGKENodePool: "train", LabelZone: zone, "node.kubernetes.io/instance-type": "a3-highgpu-8g",
		"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8",
		"nvidia.com/cuda.driver-version.full": driver, "nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "8",
	}}}
	n.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.33.5-gke.1080000", OSImage: "Ubuntu 22.04.5 LTS"}
	if taint {
		n.Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}
	}
	return n
}

func pluginPod(name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: map[string]string{"k8s-app": "nvidia-gpu-device-plugin"}},
		Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

// TestDrift: three nodes as GFD labels them; node-2 runs another driver,
// lacks the spec's taint and has a second device plugin pod. Drift finds
// exactly those and makes list calls only.
func TestDrift(t *testing.T) {
	doc, res := checked(t, "testdata/rollout-old.yaml", "")
	kc := fake.NewSimpleClientset(
		gpuNode("node-1", "us-central1-a", "535.261.03", true),
		gpuNode("node-2", "us-central1-b", "550.90.07", false),
		gpuNode("node-3", "us-central1-c", "535.261.03", true),
		pluginPod("dp-1", "node-1"), pluginPod("dp-2", "node-2"), pluginPod("dp-2b", "node-2"), pluginPod("dp-3", "node-3"),
	)
	p, err := Make(context.Background(), Input{Doc: doc, Result: res, Kube: kc, AsOf: "2026-11-29"})
	if err != nil {
		t.Fatal(err)
	}
	validateSchema(t, p)
	type hit struct{ node, field string }
	var got []hit
	for _, d := range p.Drift {
		for _, f := range d.Fields {
			if f.State == StateDrift {
				got = append(got, hit{d.Node, f.Field})
				if !strings.HasPrefix(f.At, "testdata/rollout-old.yaml:") || strings.HasPrefix(f.At, "testdata/rollout-old.yaml:0") {
					t.Errorf("%s %s: at %q, want the spec's file:line:column", d.Node, f.Field, f.At)
				}
			}
			if f.State == StateUnknown {
				t.Errorf("%s %s: unknown (observed %q)", d.Node, f.Field, f.Observed)
			}
		}
	}
	want := []hit{{"node-2", "driver"}, {"node-2", "taints[0]"}, {"node-2", "devicePlugin"}}
	if !cmp.Equal(got, want, cmp.AllowUnexported(hit{})) {
		t.Errorf("drift %v, want %v", got, want)
	}
	if p.Summary.NodesChecked != 3 || p.Summary.NodesDrifted != 1 || !p.Summary.Changes {
		t.Errorf("summary %+v", p.Summary)
	}
	for _, a := range kc.Actions() {
		if a.GetVerb() != "list" {
			t.Errorf("plan made a %s request on %s; drift must only read", a.GetVerb(), a.GetResource().Resource)
		}
	}
	// The drifted driver makes a rollout of the pool on its live nodes.
	if len(p.Rollouts) != 1 || p.Rollouts[0].NodesFrom != "cluster" || p.Rollouts[0].Nodes != 3 {
		t.Fatalf("rollouts %+v", p.Rollouts)
	}
	// GKE picks the nodes it replaces (2 at a time: maxUnavailable 2, no
	// surge), so the gate selects the unmarked ones rather than naming any.
	if s := p.Rollouts[0].Steps[0]; s.Kind != StepBatch || s.Nodes != 2 || s.CapacityNodes != 1 || len(s.NodeNames) != 0 || s.Gate.Command[3] != "cloud.google.com/gke-nodepool=train,!gpuctl.dev/accept" {
		t.Errorf("first checkpoint %+v", s)
	}
}

// TestDriftCUDAAndAcceptance: the CUDA version GFD says the driver runs
// against the spec's cuda, and the verdict accept --mark left: node-2's
// driver runs CUDA 12.0 (the spec needs 12.2), node-3 was marked fail;
// node-1 (12.2, pass) has no drift.
func TestDriftCUDAAndAcceptance(t *testing.T) {
	doc, res := checked(t, "testdata/drift-cuda.yaml", "")
	node := func(name, zone, cudaMinor, verdict string) *corev1.Node {
		n := gpuNode(name, zone, "535.261.03", true)
		n.Labels["nvidia.com/cuda.runtime-version.minor"] = cudaMinor
		if verdict != "" {
			n.Labels["gpuctl.dev/accept"] = verdict
		}
		return n
	}
	kc := fake.NewSimpleClientset(
		node("node-1", "us-central1-a", "2", "pass"),
		node("node-2", "us-central1-b", "0", ""),
		node("node-3", "us-central1-c", "2", "fail"),
		pluginPod("dp-1", "node-1"), pluginPod("dp-2", "node-2"), pluginPod("dp-3", "node-3"),
	)
	p, err := Make(context.Background(), Input{Doc: doc, Result: res, Kube: kc, AsOf: "2026-11-29"})
	if err != nil {
		t.Fatal(err)
	}
	validateSchema(t, p)
	var got []string
	for _, d := range p.Drift {
		for _, f := range d.Fields {
			switch {
			case f.State == StateDrift:
				got = append(got, d.Node+" "+f.Field+" "+f.Observed+" at "+f.At)
			case f.State == StateUnknown:
				t.Errorf("%s %s: unknown (observed %q)", d.Node, f.Field, f.Observed)
			case f.Field == "acceptance" && d.Node != "node-1":
				t.Errorf("%s: acceptance judged without the label", d.Node)
			}
		}
	}
	// The cuda expectation is spec.cuda (line 11), the acceptance one the pool (line 13).
	want := []string{"node-2 cuda 12.0 at testdata/drift-cuda.yaml:11:3", "node-3 acceptance fail at testdata/drift-cuda.yaml:13:7"}
	if !cmp.Equal(got, want) {
		t.Errorf("drift %q, want %q", got, want)
	}
	// Neither is a node-replacing change: no rollout.
	if len(p.Rollouts) != 0 || p.Summary.NodesDrifted != 2 || !p.Summary.Changes {
		t.Errorf("rollouts %d, summary %+v", len(p.Rollouts), p.Summary)
	}
}

func TestDriftMissingPool(t *testing.T) {
	doc, res := checked(t, "testdata/rollout-old.yaml", "")
	p, err := Make(context.Background(), Input{Doc: doc, Result: res, Kube: fake.NewSimpleClientset(), AsOf: "2026-11-29"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Drift) != 1 || !p.Drift[0].Drifted || p.Drift[0].Fields[0].Field != "nodes" {
		t.Errorf("drift %+v, want the pool's missing nodes", p.Drift)
	}
}

func TestCompareFiles(t *testing.T) {
	want := []check.File{
		{Path: "terraform/base/node_pools.tf", Data: []byte("resource \"google_container_node_pool\" \"a\" {\n  name = \"a\"\n}\n\nresource \"google_container_node_pool\" \"b\" {\n  name = \"b2\"\n}\n")},
		{Path: "manifests/base/kueue.yaml", Data: []byte("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: gpu\n")},
		{Path: "helm/base/nvidia-device-plugin.values.yaml", Data: []byte("a: 1\n")},
	}
	old := fstest.MapFS{
		"terraform/base/node_pools.tf":               {Data: []byte("resource \"google_container_node_pool\" \"b\" {\n  name = \"b\"\n}\n\nvariable \"x\" {\n}\n")},
		"helm/base/nvidia-device-plugin.values.yaml": {Data: []byte("a: 1\n")},
		"helm/base/gpu-operator.values.yaml":         {Data: []byte("driver:\n  enabled: false\n")},
		// A file of the team's own beside the generated ones: not listed,
		// so not gpuctl's to remove.
		"terraform/base/backend.tf": {Data: []byte("terraform {\n  backend \"gcs\" {}\n}\n")},
		check.ManifestName:          {Data: []byte("# Files written by gpuctl generate\nhelm/base/gpu-operator.values.yaml\nhelm/base/nvidia-device-plugin.values.yaml\nterraform/base/node_pools.tf\n")},
	}
	got, err := CompareFiles(want, old, "")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Path, Action string
		Objects      []ObjectChange
	}
	var rows []row
	for _, f := range got {
		rows = append(rows, row{f.Path, f.Action, f.Objects})
	}
	wantRows := []row{
		{"helm/base/gpu-operator.values.yaml", ActionRemove, []ObjectChange{{"values.driver", ActionRemove}}},
		{"manifests/base/kueue.yaml", ActionAdd, []ObjectChange{{"ClusterQueue/gpu", ActionAdd}}},
		{"terraform/base/node_pools.tf", ActionChange, []ObjectChange{
			{"resource.google_container_node_pool.a", ActionAdd}, {"resource.google_container_node_pool.b", ActionChange}, {"variable.x", ActionRemove}}},
	}
	if d := cmp.Diff(wantRows, rows); d != "" {
		t.Errorf("changes (-want +got):\n%s", d)
	}
	// The longest common subsequence keeps the closing braces and the blank
	// line between the blocks; removals come before additions.
	wantDiff := `--- a/terraform/base/node_pools.tf
+++ b/terraform/base/node_pools.tf
@@ -1,6 +1,7 @@
-resource "google_container_node_pool" "b" {
-  name = "b"
+resource "google_container_node_pool" "a" {
+  name = "a"
 }
 
-variable "x" {
+resource "google_container_node_pool" "b" {
+  name = "b2"
 }
`
	if d := cmp.Diff(wantDiff, got[2].Diff); d != "" {
		t.Errorf("diff (-want +got):\n%s", d)
	}
}

// TestCompareFilesRemoved: files the manifest lists in folders this run
// writes nothing into any more are removed too: an environment taken out
// of the spec (all its folders), an add-on whose folder held only its
// file. A file the manifest does not list (the team's backend.tf in the
// removed environment's folder) is never reported; with --env prod only
// prod's folders are the run's.
func TestCompareFilesRemoved(t *testing.T) {
	want := []check.File{{Path: "terraform/base/node_pools.tf", Data: []byte("x\n")}}
	old := fstest.MapFS{
		"terraform/base/node_pools.tf":       {Data: []byte("x\n")},
		"terraform/prod/node_pools.tf":       {Data: []byte("y\n")},
		"terraform/prod/backend.tf":          {Data: []byte("terraform {}\n")},
		"helm/base/gpu-operator.values.yaml": {Data: []byte("a: 1\n")},
		"elsewhere/notes.txt":                {Data: []byte("n\n")},
		check.ManifestName:                   {Data: []byte("helm/base/gpu-operator.values.yaml\nterraform/base/node_pools.tf\nterraform/prod/node_pools.tf\nelsewhere/notes.txt\n")},
	}
	paths := func(env string) []string {
		got, err := CompareFiles(want, old, env)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range got {
			out = append(out, f.Action+" "+f.Path)
		}
		return out
	}
	if d := cmp.Diff([]string{"remove helm/base/gpu-operator.values.yaml", "remove terraform/prod/node_pools.tf"}, paths("")); d != "" {
		t.Errorf("every environment (-want +got):\n%s", d)
	}
	if got := paths("staging"); len(got) != 0 {
		t.Errorf("--env staging: %v, want nothing (the listed files are other runs')", got)
	}
}

func TestUnifiedDiffHunks(t *testing.T) {
	var a, b []string
	for i := 1; i <= 20; i++ {
		a = append(a, "l"+string(rune('a'+i)))
	}
	b = append(b, a...)
	b[1], b[17] = "X", "Y"
	got := UnifiedDiff("a", "b", strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n")
	if n := strings.Count(got, "@@ -"); n != 2 {
		t.Errorf("%d hunks, want 2 (changes 16 lines apart):\n%s", n, got)
	}
	if !strings.Contains(got, "@@ -1,5 +1,5 @@") || !strings.Contains(got, "@@ -15,6 +15,6 @@") {
		t.Errorf("hunk ranges:\n%s", got)
	}
}
