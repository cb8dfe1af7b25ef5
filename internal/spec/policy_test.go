package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTaint(t *testing.T) {
	for in, want := range map[string]Taint{
		"nvidia.com/gpu=present:NoSchedule": {Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"},
		"nvidia.com/gpu:NoExecute":          {Key: "nvidia.com/gpu", Effect: "NoExecute"},
		"dedicated=:PreferNoSchedule":       {Key: "dedicated", Effect: "PreferNoSchedule"},
	} {
		got, err := ParseTaint(in)
		if err != nil || got != want {
			t.Errorf("ParseTaint(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"nvidia.com/gpu=present", "nvidia.com/gpu:NO_SCHEDULE", ":NoSchedule", "a=b=c:NoSchedule", "a:b:NoSchedule"} {
		if _, err := ParseTaint(in); err == nil {
			t.Errorf("ParseTaint(%q) accepted", in)
		}
	}
}

func TestMergePolicy(t *testing.T) {
	share, hold := 0.5, true
	org := &Policy{RequiredTags: []string{"cost-center", "team"}, MaxSpotShare: &share, RequiredTaints: []string{"nvidia.com/gpu:NoSchedule"}}
	if MergePolicy(nil, nil) != nil {
		t.Error("no policy merged into one")
	}
	if got := MergePolicy(org, nil); !cmp.Equal(got, org) {
		t.Errorf("org only: %s", cmp.Diff(org, got))
	}
	// Field by field: own's tags (even an empty list) and hold replace
	// org's; org's share and taints stay.
	got := MergePolicy(org, &Policy{RequiredTags: []string{}, TrainingUpgradeHold: &hold})
	want := &Policy{RequiredTags: []string{}, MaxSpotShare: &share, TrainingUpgradeHold: &hold, RequiredTaints: org.RequiredTaints}
	if !cmp.Equal(got, want) {
		t.Errorf("merge: %s", cmp.Diff(want, got))
	}
	if len(org.RequiredTags) != 2 {
		t.Error("MergePolicy changed org")
	}
}

// A spec's `requiredTags: []` is a list written (it clears the --policy
// file's tags), not a field left out.
func TestPolicyEmptyListIsSet(t *testing.T) {
	doc, err := Parse("s.yaml", []byte("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: a}\nspec:\n  policy: {requiredTags: []}\n  environments:\n    dev: {policy: {maxSpotShare: 0.25}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := doc.Spec.Spec.Policy; p == nil || p.RequiredTags == nil || len(p.RequiredTags) != 0 {
		t.Fatalf("policy = %+v", p)
	}
	dev, err := doc.Resolve("dev")
	if err != nil {
		t.Fatal(err)
	}
	if p := dev.Spec.Policy; p == nil || p.RequiredTags == nil || p.MaxSpotShare == nil || *p.MaxSpotShare != 0.25 {
		t.Fatalf("dev policy = %+v", p)
	}
}

func TestLoadPolicy(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ps, err := LoadPolicy(write("ok.yaml", "policy:\n  requiredTags: [team]\n  trainingUpgradeHold: true\n"))
	if err != nil || ps.Policy == nil || !cmp.Equal(ps.Policy.RequiredTags, []string{"team"}) || ps.Policy.TrainingUpgradeHold == nil || ps.Policy.MaxSpotShare != nil {
		t.Fatalf("LoadPolicy = %+v, %v", ps, err)
	}
	for text, want := range map[string]string{
		"policy:\n  maxSpotShare: -0.1\n":           "2:3: policy.maxSpotShare: maxSpotShare -0.1 is not a share",
		"policy:\n  requiredTaints: [gpu]\n":        "2:20: policy.requiredTaints[0]: taint \"gpu\" is not key[=value]:effect",
		"policy:\n  requiredTags: [team, \"\"]\n":   "policy.requiredTags[1]: requiredTags has an empty key",
		"policy:\n  trainingUpgradeHold: \"yes\"\n": "wrong type",
		"requiredTags: [team]\n":                    `unknown field "requiredTags"`,
		"":                                          "policy file is empty",
	} {
		_, err := LoadPolicy(write("bad.yaml", text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadPolicy(%q) = %v, want %q", text, err, want)
		}
	}
}
