package spec

import "testing"

func TestPoolTagsRoleWins(t *testing.T) {
	s := &Spec{Tags: map[string]string{"workload-type": "training", "team": "research"}}
	infer := &NodePool{Name: "infer", Role: RoleInference}
	none := &NodePool{Name: "x"}
	if got := s.PoolTags(infer); got["workload-type"] != RoleInference || got["team"] != "research" {
		t.Errorf("inference pool tags = %v", got)
	}
	if got := s.PoolTags(none); got["workload-type"] != "training" {
		t.Errorf("a pool without a role keeps the spec's tag: %v", got)
	}
	if s.Tags["workload-type"] != "training" {
		t.Error("PoolTags changed spec.tags")
	}
	if got := (&Spec{Tags: map[string]string{"team": "a"}}).PoolTags(infer); len(got) != 1 {
		t.Errorf("a role key the spec does not set is not added: %v", got)
	}
}
