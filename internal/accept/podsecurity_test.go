package accept

import (
	"testing"

	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// TestJobsMeetPodSecurity evaluates the probe pods with Kubernetes' own Pod
// Security Standards checks (k8s.io/pod-security-admission): without
// --allow-privileged the inventory, topology, cuda and nccl pods pass
// "restricted"; every pod without --allow-privileged passes "baseline"; the
// privileged probes pass only "privileged".
func TestJobsMeetPodSecurity(t *testing.T) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(level api.Level, st Stage, priv bool) (bool, []string) {
		s := testJobSpec(st)
		s.AllowPrivileged = priv
		pod := BuildJob(s).Spec.Template
		var why []string
		for _, r := range eval.EvaluatePod(api.LevelVersion{Level: level, Version: api.LatestVersion()}, &pod.ObjectMeta, &pod.Spec) {
			if !r.Allowed {
				why = append(why, r.ForbiddenReason+": "+r.ForbiddenDetail)
			}
		}
		return len(why) == 0, why
	}
	for _, st := range []Stage{StageInventory, StageTopology, StageCUDA, StageNCCL} {
		if ok, why := allowed(api.LevelRestricted, st, false); !ok {
			t.Errorf("%s: rejected by restricted: %v", st, why)
		}
	}
	for _, st := range []Stage{StageInventory, StageTopology, StageCUDA, StageNCCL, StageDCGM} {
		if ok, why := allowed(api.LevelBaseline, st, false); !ok {
			t.Errorf("%s: rejected by baseline: %v", st, why)
		}
	}
	if ok, _ := allowed(api.LevelBaseline, StageInventory, true); ok {
		t.Error("the privileged dmesg probe passes baseline; podSecurityProblem assumes it does not")
	}
	if ok, _ := allowed(api.LevelRestricted, StageDCGM, false); ok {
		t.Error("the dcgm probe passes restricted; podSecurityProblem assumes it does not")
	}
}
