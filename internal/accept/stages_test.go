package accept

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/spec"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// TestStageTableComplete enumerates the stage table and checks that each
// entry says everything its kind of stage needs: a new stage that misses a
// field fails here, not in a cluster.
func TestStageTableComplete(t *testing.T) {
	seen := map[Stage]bool{}
	for _, d := range stageTable {
		st := d.name
		if st == "" || seen[st] {
			t.Fatalf("stage %q: empty or listed twice", st)
		}
		seen[st] = true
		if d.summary == "" || StageDescription(st) != d.summary {
			t.Errorf("%s: no summary", st)
		}
		if d.podSecurityPrivileged < d.podSecurity {
			t.Errorf("%s: needs less with --allow-privileged than without", st)
		}
		switch {
		case d.fleet:
			if d.run != nil || d.containers != nil || d.byDefault {
				t.Errorf("%s: a fleet stage runs through RunMulti only, and is opt-in", st)
			}
		case d.evidence:
			if d.run == nil || d.containers == nil || d.judge != nil || d.byDefault {
				t.Errorf("%s: an evidence stage runs its own Job, judges nothing and is opt-in", st)
			}
		case d.containers != nil:
			if d.run == nil || d.judge == nil || d.kind == "" {
				t.Errorf("%s: a Job stage needs run, judge and kind", st)
			}
		default: // the API-only stage
			if d.run == nil || d.judge != nil || d.kind != "" || d.podSecurity != psNone || d.quiet != nil || d.probeImage {
				t.Errorf("%s: an API-only stage has a run and nothing of a Job", st)
			}
		}
		if got := len(DefaultImages(st)) > 0; got != RunsImage(st) {
			t.Errorf("%s: default images %v, runs an image %v (data/images.yaml)", st, got, RunsImage(st))
		}
		if RunsImage(st) && d.podSecurity == psNone {
			t.Errorf("%s: runs pods but names no Pod Security level", st)
		}
		if d.containers == nil {
			continue
		}
		for _, priv := range []bool{false, true} {
			s := testJobSpec(st)
			s.AllowPrivileged = priv
			var names []string
			for _, c := range allContainers(BuildJob(s).Spec.Template.Spec) {
				names = append(names, c.Name)
			}
			for _, q := range d.quiet {
				if !slices.Contains(names, q) {
					t.Errorf("%s: quiet container %s is not in the pod (%v)", st, q, names)
				}
			}
		}
	}
	if len(AllStages)+len(FleetStages) != len(stageTable) {
		t.Errorf("AllStages %v and FleetStages %v do not cover the table", AllStages, FleetStages)
	}
	if AllStages[0] != StageKubernetes {
		t.Errorf("AllStages %v: the kubernetes stage reads the node the others need, so it comes first", AllStages)
	}
}

// TestStagePodSecurityLevels holds each stage's Pod Security levels in the
// table to Kubernetes' own checks: its pods pass the level it names and not
// the one below.
func TestStagePodSecurityLevels(t *testing.T) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	levels := map[podSecurityLevel]api.Level{psRestricted: api.LevelRestricted, psBaseline: api.LevelBaseline, psPrivileged: api.LevelPrivileged}
	admits := func(l podSecurityLevel, pod corev1.PodTemplateSpec) bool {
		for _, r := range eval.EvaluatePod(api.LevelVersion{Level: levels[l], Version: api.LatestVersion()}, &pod.ObjectMeta, &pod.Spec) {
			if !r.Allowed {
				return false
			}
		}
		return true
	}
	for _, d := range stageTable {
		for _, priv := range []bool{false, true} {
			var pod corev1.PodTemplateSpec
			switch {
			case d.containers != nil:
				s := testJobSpec(d.name)
				s.AllowPrivileged = priv
				pod = BuildJob(s).Spec.Template
			case d.fleet:
				// Without --allow-privileged the rank pods have no fabric that
				// needs more than restricted (RunMulti refuses one); with it,
				// the GPUDirect-TCPXO pods are the most a fleet stage creates.
				ms := MultiSpec{RunID: "r1-m0", Namespace: "gpuctl", Nodes: []string{"n1", "n2"}, GPUsPerNode: 8}
				if priv {
					ms.Fabric = testFabric(t, spec.ProviderGKE, "a3-megagpu-8g")
				}
				job, _ := BuildMultiNode(ms)
				pod = job.Spec.Template
			default:
				continue
			}
			need := d.podSecurity
			if priv {
				need = d.podSecurityPrivileged
			}
			if !admits(need, pod) {
				t.Errorf("%s (privileged %v): rejected by %s, the level the table names", d.name, priv, levels[need])
			}
			if need > psRestricted && admits(need-1, pod) {
				t.Errorf("%s (privileged %v): admitted by %s, below the level the table names", d.name, priv, levels[need-1])
			}
		}
	}
}

// testFabric is the fabric pod of machine with its GPU networks (vpc1..) or
// EFA interfaces as the matrix gives them.
func testFabric(t *testing.T, provider, machine string) fabric.Pod {
	t.Helper()
	need := fabric.NeedsOf(provider, machine)
	var nets []fabric.Network
	for i := range need.Networks {
		nets = append(nets, fabric.Network{Interface: fmt.Sprintf("eth%d", i+1), Object: fmt.Sprintf("vpc%d", i+1)})
	}
	p, err := fabric.Build(fabric.Params{Provider: provider, Machine: machine, GPUs: 8, EFA: need.EFA, Networks: nets, HugePages: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
