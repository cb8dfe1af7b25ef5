package accept

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// frameworkFixture reads a real CPU run of data/framework.py (internal/probe's
// testdata/framework, see its .source notes).
func frameworkFixture(t *testing.T, name string) []byte {
	t.Helper()
	return probeFixture(t, "framework", "cpu-gloo-2ranks-torch-1.13-"+name+".log")
}

// onGPUs is a CPU run's output as a 2-GPU node's would read: the device
// names and the backend changed, nothing else (no GPU ran it here).
func onGPUs(data []byte) []byte {
	s := strings.ReplaceAll(string(data), `"device": "cpu"`, `"device": "cuda"`)
	return []byte(strings.ReplaceAll(s, `"backend": "gloo"`, `"backend": "nccl"`))
}

// setCheck replaces the values of check name's line in data (the summary
// then says it failed), as a run whose check failed prints it.
func setCheck(t *testing.T, data []byte, name string, values map[string]any) []byte {
	t.Helper()
	ls := strings.Split(string(data), "\n")
	for i, l := range ls {
		at := strings.Index(l, "GPUCTL-FRAMEWORK ")
		if at < 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l[at+len("GPUCTL-FRAMEWORK "):]), &m); err != nil {
			t.Fatal(err)
		}
		switch {
		case m["check"] == name:
			m["ok"], m["values"] = false, values
		case m["record"] == "summary":
			m["ok"], m["failed"] = false, []string{name}
		default:
			continue
		}
		b, _ := json.Marshal(m)
		ls[i] = l[:at] + "GPUCTL-FRAMEWORK " + string(b)
	}
	return []byte(strings.Join(ls, "\n"))
}

func TestJudgeFramework(t *testing.T) {
	two := Expectations{Source: "test", GPUCount: 2}
	ok := onGPUs(frameworkFixture(t, "ok"))
	for _, tc := range []struct {
		name    string
		log     []byte
		exp     Expectations
		verdict diag.Verdict
		cause   string
		reason  []string
	}{
		{"every check ok", ok, two, diag.Pass, CauseNode, []string{"torch 1.13.0a0", "on 2 GPUs", "matmul max rel err", "<= 0.0001", "training loss", "<= 0.1", "checkpoint 24 tensors bit-equal", "all-reduce 0 wrong of 65536"}},
		{"checkpoint mismatch", onGPUs(frameworkFixture(t, "corrupt-checkpoint")), two, diag.Fail, CauseNode, []string{"framework check checkpoint failed", "mismatched 1 (threshold 0)", "firstMismatch model.net.0.weight"}},
		{"loss not falling", setCheck(t, ok, "training", map[string]any{"initialLoss": 0.46, "finalLoss": 0.41, "lossRatio": 0.891, "steps": 200}), two, diag.Fail, CauseNode, []string{"framework check training failed", "lossRatio 0.891 (threshold 0.1)", "initialLoss 0.46"}},
		{"wrong matmul", setCheck(t, ok, "matmul", map[string]any{"maxRelErr": 0.37, "n": 2048}), two, diag.Fail, CauseNode, []string{"framework check matmul failed", "maxRelErr 0.37 (threshold 0.0001)"}},
		{"wrong all-reduce", setCheck(t, ok, "all-reduce", map[string]any{"wrong": 4096, "elements": 65536, "world": 2}), two, diag.Fail, CauseNode, []string{"all-reduce failed", "wrong 4096 (threshold 0), elements 65536"}},
		{"NaN in inference", setCheck(t, ok, "inference", map[string]any{"finite": false, "identical": false}), two, diag.Fail, CauseNode, []string{"inference failed", "finite false (threshold true)"}},
		{"truncated output", onGPUs(frameworkFixture(t, "truncated-after-training")), two, diag.Inconclusive, CauseHarness, []string{"before the summary line"}},
		{"one rank per GPU", ok, Expectations{Source: "test", GPUCount: 8}, diag.Inconclusive, CauseHarness, []string{"ran on 2 ranks, the node has 8 GPUs"}},
		{"ran on the CPU", frameworkFixture(t, "ok"), two, diag.Inconclusive, CauseHarness, []string{"ran on cpu, not on the GPUs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obs Observed
			r := Judge(StageFramework, out(ContainerFramework, tc.log), tc.exp, DefaultBaselines(), ProbeParser(), &obs)
			if r.Verdict != tc.verdict || r.Cause != tc.cause {
				t.Fatalf("%s (%s): %s; want %s (%s)", r.Verdict, r.Cause, r.Reason, tc.verdict, tc.cause)
			}
			for _, want := range tc.reason {
				if !strings.Contains(r.Reason, want) {
					t.Errorf("reason %q does not say %q", r.Reason, want)
				}
			}
		})
	}
}

// TestRecordFramework: the record keeps every check, its numbers and
// thresholds, for a FAIL too (the parser decides it before the judge).
func TestRecordFramework(t *testing.T) {
	var obs Observed
	r := Judge(StageFramework, out(ContainerFramework, onGPUs(frameworkFixture(t, "corrupt-checkpoint"))), Expectations{GPUCount: 2}, nil, ProbeParser(), &obs)
	var p Predicate
	recordFramework(&p, r, &runState{obs: obs})
	f := p.Framework
	if f == nil || f.Verdict != diag.Fail || f.Reason != r.Reason || f.Torch != "1.13.0a0" || f.World != 2 || len(f.Checks) != 5 {
		t.Fatalf("framework summary %+v", f)
	}
	ck := f.Checks[3]
	if ck.Name != "checkpoint" || ck.OK || ck.Measurements["mismatched"] != 1 || ck.Measurements["tensors"] != 24 || ck.Thresholds["mismatched"] != 0 {
		t.Errorf("checkpoint %+v", ck)
	}
	if tr := f.Checks[2]; !tr.OK || tr.Measurements["msPerStep"] <= 0 || tr.Measurements["stepsPerSecond"] <= 0 || tr.Measurements["ddp"] != 1 {
		t.Errorf("training %+v", tr)
	}
	want := map[string]float64{"matmul.maxRelErr": 1e-4, "all-reduce.wrong": 0, "training.maxLossRatio": 0.1, "checkpoint.mismatched": 0, "checkpoint.lossEqual": 1, "inference.finite": 1, "inference.identical": 1}
	for k, v := range want {
		if got, ok := p.Thresholds.Framework[k]; !ok || got != v {
			t.Errorf("thresholds[%s] = %v, %v; want %v", k, got, ok, v)
		}
	}
	b, _ := json.Marshal(p.Framework)
	if strings.Contains(string(b), "null") {
		t.Errorf("null in %s", b)
	}
}

// TestBuildJobFramework: one pod pinned to the node, every GPU in its one
// container, restricted (nobody, no privilege, every capability dropped,
// RuntimeDefault seccomp), a memory /dev/shm, and the embedded script run
// under torchrun with one process per GPU.
func TestBuildJobFramework(t *testing.T) {
	s := testJobSpec(StageFramework)
	j := BuildJob(s)
	ps := j.Spec.Template.Spec
	if ps.NodeName != "gpu-node-1" || len(ps.Containers) != 1 || ps.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Fatalf("pod %+v", ps)
	}
	c := ps.Containers[0]
	q := c.Resources.Limits[ResourceGPU]
	sc := c.SecurityContext
	if c.Name != ContainerFramework || c.Image != "nvcr.io/nvidia/pytorch:23.10-py3" || q.Value() != 8 {
		t.Errorf("container %s %s gpus %d", c.Name, c.Image, q.Value())
	}
	if *sc.Privileged || *sc.AllowPrivilegeEscalation || !*sc.RunAsNonRoot || *sc.RunAsUser != nonRootUID || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("security context %+v", sc)
	}
	if len(ps.Volumes) != 1 || ps.Volumes[0].EmptyDir == nil || ps.Volumes[0].EmptyDir.Medium != corev1.StorageMediumMemory || len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/dev/shm" {
		t.Errorf("volumes %+v mounts %+v", ps.Volumes, c.VolumeMounts)
	}
	cmd := strings.Join(c.Command, " ")
	if !strings.Contains(cmd, frameworkScript) || !strings.Contains(cmd, "torchrun --standalone --nnodes=1 --nproc_per_node=8 /tmp/gpuctl-framework.py --device cuda") {
		t.Errorf("command %.300s", cmd)
	}
	if podSecurityNeeded(false, []Stage{StageFramework}) != psRestricted || podSecurityNeeded(true, []Stage{StageFramework}) != psBaseline {
		t.Error("framework must fit the restricted Pod Security Standard")
	}
}
