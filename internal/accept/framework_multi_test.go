package accept

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/spec"
	corev1 "k8s.io/api/core/v1"
)

// twoNodeRun is the real two-node CPU run of data/framework.py (probe's
// testdata/framework, cpu-gloo-2nodes-*; one process per "node"), each
// node's log as a rank pod prints it; onGPUs renames its device and backend
// as a GPU run's read.
func twoNodeRun(t *testing.T, kind string, gpu bool) MultiGroupResult {
	t.Helper()
	g := MultiGroupResult{Group: "r-f0", Nodes: []string{"node-0", "node-1"}}
	for i, n := range g.Nodes {
		log := probeFixture(t, "framework", "cpu-gloo-2nodes-torch-1.13-"+kind+"-node"+string(rune('0'+i))+".log")
		if gpu {
			log = onGPUs(log)
		}
		g.Ranks = append(g.Ranks, MultiRank{Index: i, Node: n, Log: log})
	}
	return g
}

// TestJudgeFrameworkGroup: the checks across two nodes PASS when every rank
// pod's result is ok on the GPUs of both nodes; a checkpoint that does not
// come back bit-equal is FAIL (cause node); the CPU run itself, a group of
// the wrong size and a fabric whose network the output does not name are
// INCONCLUSIVE.
func TestJudgeFrameworkGroup(t *testing.T) {
	p := ProbeParser()
	if r := JudgeFrameworkGroup(twoNodeRun(t, "ok", true), 1, p, fabric.Pod{}); r.Verdict != diag.Pass || !strings.Contains(r.Reason, "on 2 nodes x 1 GPUs (node-0, node-1)") {
		t.Errorf("ok: %s %q", r.Verdict, r.Reason)
	}
	if r := JudgeFrameworkGroup(twoNodeRun(t, "corrupt-checkpoint", true), 1, p, fabric.Pod{}); r.Verdict != diag.Fail || r.Cause != CauseNode || !strings.Contains(r.Reason, "checkpoint") {
		t.Errorf("corrupt checkpoint: %s %s %q", r.Verdict, r.Cause, r.Reason)
	}
	if r := JudgeFrameworkGroup(twoNodeRun(t, "ok", false), 1, p, fabric.Pod{}); r.Verdict != diag.Inconclusive || !strings.Contains(r.Reason, "ran on cpu") {
		t.Errorf("cpu: %s %q", r.Verdict, r.Reason)
	}
	if r := JudgeFrameworkGroup(twoNodeRun(t, "ok", true), 8, p, fabric.Pod{}); r.Verdict != diag.Inconclusive || !strings.Contains(r.Reason, "the group has 16 (2 nodes x 8 GPUs)") {
		t.Errorf("world: %s %q", r.Verdict, r.Reason)
	}
	efa := testFabric(t, spec.ProviderEKS, "p5.48xlarge")
	if r := JudgeFrameworkGroup(twoNodeRun(t, "ok", true), 1, p, efa); r.Verdict != diag.Inconclusive || r.Cause != CauseCluster || !strings.Contains(r.Reason, "names no NCCL network") {
		t.Errorf("fabric without a network line: %s %q", r.Verdict, r.Reason)
	}
}

// TestFrameworkMultiPlan: framework-multi plans the nccl-multi stage's
// groups with the checks' script: its own Job names, container and command,
// and the same fabric-aware pods.
func TestFrameworkMultiPlan(t *testing.T) {
	mp, err := PlanMulti(MultiRun{Stage: StageFrameworkMulti, RunID: "r1", Namespace: testNS,
		Nodes: []*corev1.Node{fabricNode("a", spec.ProviderEKS, "p5.48xlarge", 32), fabricNode("b", spec.ProviderEKS, "p5.48xlarge", 32)}})
	if err != nil || mp.Problem != "" {
		t.Fatalf("plan: %v %q", err, mp.Problem)
	}
	job, svc := BuildMultiNode(mp.Rounds[0][0])
	c := job.Spec.Template.Spec.Containers[0]
	if job.Name != "gpuctl-framework-multi-r1-f0" || svc.Name != job.Name || c.Name != ContainerFrameworkMulti || job.Labels[LabelStage] != string(StageFrameworkMulti) {
		t.Errorf("names: job %s svc %s container %s labels %v", job.Name, svc.Name, c.Name, job.Labels)
	}
	if !strings.Contains(c.Command[2], "/tmp/gpuctl-framework.py --device cuda") || !strings.Contains(c.Command[2], `--node_rank="${JOB_COMPLETION_INDEX:-$GPUCTL_NODE_RANK}"`) {
		t.Errorf("command: %.300s", c.Command[2])
	}
	if q := c.Resources.Limits[fabric.ResourceEFA]; q.Value() != 32 {
		t.Errorf("efa: %v", c.Resources.Limits)
	}
}
