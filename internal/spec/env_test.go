package spec

import (
	"strings"
	"testing"
)

// envHeader is a spec whose base has one pool; the tests append an
// environment overlay at line 12.
const envHeader = `apiVersion: gpuctl.dev/v1alpha1
kind: ClusterSpec
metadata: {name: t}
spec:
  provider: gke
  tags: &tags {team: a}
  nodePools:
    - &train
      name: train
      gpu: {count: 8, driver: LATEST}
      labels: {a: "1"}
  environments:
`

// TestResolveMergesDecodedValues: overlays merge on the decoded values, so
// anchors, aliases and merge keys in an overlay behave as they do in the
// base, and strings are kept exactly (no re-serialisation that could read
// "0o17" as a number or a date as a timestamp).
func TestResolveMergesDecodedValues(t *testing.T) {
	src := envHeader + `    dev:
      tags: {<<: *tags, owner: "0o17", since: "2026-01-01"}
      nodePools:
        - <<: *train
          zones: [us-central1-b]
          autoRepair: false
        - {name: extra, machineType: g2-standard-8, zones: [us-central1-a]}
      policy: {requiredTags: [team]}
`
	doc, err := Parse("env.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	dev, err := doc.Resolve("dev")
	if err != nil {
		t.Fatal(err)
	}
	s := dev.Spec
	if s.Tags["team"] != "a" || s.Tags["owner"] != "0o17" || s.Tags["since"] != "2026-01-01" {
		t.Errorf("tags = %v", s.Tags)
	}
	if len(s.NodePools) != 2 || s.NodePools[1].Name != "extra" {
		t.Fatalf("pools = %+v", s.NodePools)
	}
	train := s.NodePools[0]
	if train.GPU.Count != 8 || train.GPU.Driver != "LATEST" || len(train.Zones) != 1 || train.Labels["a"] != "1" {
		t.Errorf("train = %+v", train)
	}
	if train.AutoRepair == nil || *train.AutoRepair {
		t.Errorf("explicit false in the overlay must override: %v", train.AutoRepair)
	}
	if s.Policy == nil || len(s.Policy.RequiredTags) != 1 {
		t.Errorf("policy = %+v", s.Policy)
	}
	// The resolved spec shares nothing with the document.
	s.NodePools[0].Labels["a"] = "changed"
	s.Tags["team"] = "changed"
	base, _ := doc.Resolve("")
	if doc.Spec.Spec.NodePools[0].Labels["a"] != "1" || base.Spec.NodePools[0].Labels["a"] != "1" || base.Spec.Tags["team"] != "a" {
		t.Errorf("resolving dev changed the base")
	}
	if len(base.Spec.Environments) != 0 || len(s.Environments) != 0 {
		t.Errorf("resolved specs keep environments")
	}
}

// TestEnvironmentErrorsPointIntoTheFile: every error about an overlay
// carries the file, line and column the user wrote, and no Go type name.
func TestEnvironmentErrorsPointIntoTheFile(t *testing.T) {
	cases := []struct {
		name, overlay, want string
	}{
		{"wrong type in pool", "    dev:\n      nodePools:\n        - name: train\n          gpu: {count: [1]}\n", "env.yaml:16:24:"},
		{"list for a map", "    dev:\n      nodePools:\n        - name: train\n          labels: [a]\n", "env.yaml:16:19:"},
		{"map for a list", "    dev:\n      nodePools:\n        - name: train\n          zones: {a: b}\n", "env.yaml:16:18:"},
		{"unknown field", "    dev:\n      nodePools:\n        - name: train\n          zone: a\n", "env.yaml:16:11:"},
		{"pool without name", "    dev:\n      nodePools:\n        - gpu: {count: 1}\n", "env.yaml:15:11:"},
		{"duplicate pool", "    dev:\n      nodePools:\n        - name: x\n        - name: x\n", "env.yaml:16:11:"},
		{"nested environments", "    dev:\n      environments: {x: {}}\n", "env.yaml:14:7:"},
		{"float count", "    dev:\n      nodePools:\n        - name: train\n          gpu: {count: 8.5}\n", "env.yaml:16:24:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("env.yaml", []byte(envHeader+c.overlay))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, c.want) {
				t.Errorf("error = %q, want prefix %q", msg, c.want)
			}
			for _, bad := range []string{"interface {}", "map[string]", "[]string", "reflect"} {
				if strings.Contains(msg, bad) {
					t.Errorf("error names a Go type (%s): %q", bad, msg)
				}
			}
		})
	}
}
