package helmgen

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// preflightTemplates are the preflight snippets Manifests writes for cs,
// by file name.
func preflightTemplates(t *testing.T, cs *spec.ClusterSpec) map[string]corev1.PodTemplateSpec {
	t.Helper()
	files, err := Manifests(cs, Options{SpecFile: "s.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.PodTemplateSpec{}
	for _, f := range files {
		if !strings.HasSuffix(f.Name, PreflightFileSuffix) {
			continue
		}
		var tpl corev1.PodTemplateSpec
		if err := yaml.UnmarshalStrict(f.Data, &tpl); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		out[f.Name] = tpl
	}
	return out
}

// TestPreflightSnippet: the example's pool gets an init container running
// gpuctl preflight in spec.acceptance.image with the pool's expectations,
// asking for exactly the GPUs the training container has (the pod holds
// the larger of the two, not their sum).
func TestPreflightSnippet(t *testing.T) {
	cs := sweepExample(t)
	tpls := preflightTemplates(t, cs)
	tpl, ok := tpls["workload/train-h100-preflight.yaml"]
	if !ok || len(tpls) != 1 {
		t.Fatalf("snippets %v", tpls)
	}
	if len(tpl.Spec.InitContainers) != 1 || len(tpl.Spec.Containers) != 1 {
		t.Fatalf("containers %+v", tpl.Spec)
	}
	init, training := tpl.Spec.InitContainers[0], tpl.Spec.Containers[0]
	if init.Image != cs.Spec.Acceptance.Image || init.Command[0] != SweepBinary {
		t.Errorf("image %q command %v", init.Image, init.Command)
	}
	if got := strings.Join(init.Args, " "); got != "preflight --gpus 8 --product nvidia-h100-80gb --evidence-dir "+PreflightEvidenceDir {
		t.Errorf("args %q", got)
	}
	gpu := corev1.ResourceName(gpuResource)
	if il, tl := init.Resources.Limits[gpu], training.Resources.Limits[gpu]; il.Value() != 8 || il.Cmp(tl) != 0 {
		t.Errorf("init container %s GPUs, training container %s", il.String(), tl.String())
	}
	if tpl.Spec.NodeSelector[spec.LabelPool] != "train-h100" || len(tpl.Spec.Tolerations) != 1 || tpl.Spec.Tolerations[0].Key != "nvidia.com/gpu" {
		t.Errorf("placement %v %v", tpl.Spec.NodeSelector, tpl.Spec.Tolerations)
	}
}

// TestPreflightPools: no pools listed is every pool with whole GPUs; a
// listed pool that is not there, has no GPUs or shares them is an error.
func TestPreflightPools(t *testing.T) {
	base := sweepExample(t)
	with := func(edit func(s *spec.Spec)) *spec.ClusterSpec {
		cs := *base
		cs.Spec.NodePools = append([]spec.NodePool{}, base.Spec.NodePools...)
		a := *base.Spec.Acceptance
		cs.Spec.Acceptance = &a
		shared := cs.Spec.NodePools[0]
		shared.Name, shared.GPU.Sharing = "shared-h100", spec.Sharing{Strategy: "time-slicing", Replicas: 2}
		cs.Spec.NodePools = append(cs.Spec.NodePools, shared)
		edit(&cs.Spec)
		return &cs
	}
	all := preflightTemplates(t, with(func(s *spec.Spec) { s.Acceptance.Preflight = &spec.AcceptancePreflight{} }))
	if _, ok := all["workload/train-h100-preflight.yaml"]; !ok || len(all) != 1 {
		t.Errorf("every whole-GPU pool: %v", all)
	}
	if none := preflightTemplates(t, with(func(s *spec.Spec) { s.Acceptance.Preflight = nil })); len(none) != 0 {
		t.Errorf("no spec.acceptance.preflight: %v", none)
	}
	for _, tc := range []struct{ pools, want string }{
		{"nope", `acceptance.preflight.pools: no node pool "nope"`},
		{"shared-h100", "pool shared-h100 shares its GPUs (sharing.strategy time-slicing)"},
	} {
		cs := with(func(s *spec.Spec) { s.Acceptance.Preflight = &spec.AcceptancePreflight{Pools: []string{tc.pools}} })
		if _, err := Manifests(cs, Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.pools, err, tc.want)
		}
	}
}
