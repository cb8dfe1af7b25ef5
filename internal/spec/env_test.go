package spec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// TestDeepCopySharesNothing: a copy of a spec with every field set is
// equal to it and shares no map, slice or pointer with it.
func TestDeepCopySharesNothing(t *testing.T) {
	var cs ClusterSpec
	fill(reflect.ValueOf(&cs).Elem(), 0)
	cp := deepCopy(reflect.ValueOf(cs)).Interface().(ClusterSpec)
	if !cmp.Equal(cs, cp) {
		t.Fatalf("copy differs: %s", cmp.Diff(cs, cp))
	}
	if len(cs.Spec.NodePools) == 0 || cs.Spec.NodePools[0].Rollout == nil || cs.Spec.Environments == nil {
		t.Fatal("fill left fields unset")
	}
	// Change every value reachable from the copy; the original keeps its own.
	fill(reflect.ValueOf(&cp).Elem(), 1)
	var again ClusterSpec
	fill(reflect.ValueOf(&again).Elem(), 0)
	if !cmp.Equal(cs, again) {
		t.Errorf("changing the copy changed the original: %s", cmp.Diff(again, cs))
	}
}

// fill sets every field reachable from v, in place where v already holds
// maps, slices and pointers, to values derived from seed.
func fill(v reflect.Value, seed int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i), seed+i)
		}
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), seed)
	case reflect.Slice:
		if v.IsNil() {
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		}
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), seed+i)
		}
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
			for _, k := range []string{"a", "b"} {
				e := reflect.New(v.Type().Elem()).Elem()
				if v.Type().Elem().Kind() != reflect.Struct || v.Type().Elem() != reflect.TypeOf(Spec{}) {
					fill(e, seed)
				} else {
					e.FieldByName("Region").SetString(k)
					e.FieldByName("Tags").Set(reflect.ValueOf(map[string]string{"x": "y"}))
				}
				v.SetMapIndex(reflect.ValueOf(k), e)
			}
			return
		}
		for it := v.MapRange(); it.Next(); {
			if e := it.Value(); e.Kind() == reflect.Map {
				fill(e, seed) // a nested map is changed in place
			}
		}
		for _, k := range v.MapKeys() {
			if v.Type().Elem().Kind() == reflect.String {
				v.SetMapIndex(k, reflect.ValueOf(fmt.Sprintf("v%d", seed)))
			}
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", seed))
	case reflect.Int:
		v.SetInt(int64(seed + 1))
	case reflect.Bool:
		v.SetBool(seed%2 == 0)
	case reflect.Float64:
		v.SetFloat(float64(seed) + 0.5)
	}
}
