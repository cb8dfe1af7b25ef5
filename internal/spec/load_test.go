package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadBadInput: every unreadable spec gives one *Error with a position
// where the problem has one, and a message a user can act on; never a panic.
func TestLoadBadInput(t *testing.T) {
	cases := []struct {
		file       string
		line, col  int // 0: no position expected
		wantSubstr []string
	}{
		{"empty.yaml", 0, 0, []string{"file is empty"}},
		{"blank.yaml", 0, 0, []string{"holds no YAML document"}},
		{"not-yaml.yaml", 4, 1, []string{"must be specified"}},
		{"scalar.yaml", 1, 1, []string{"expected a mapping"}},
		{"wrong-apiversion.yaml", 1, 13, []string{`unsupported apiVersion "gpuctl.dev/v1beta9"`, "gpuctl.dev/v1alpha1"}},
		{"eksctl-config.yaml", 1, 13, []string{"an eksctl ClusterConfig", "not eksctl configs", "Karpenter YAML"}},
		{"wrong-kind.yaml", 2, 7, []string{`unsupported kind "NodePool"`, "ClusterSpec"}},
		{"unknown-field.yaml", 8, 7, []string{`unknown field "machinType"`, `did you mean "machineType"?`, "spec.nodePools[0].machinType"}},
		{"wrong-type.yaml", 9, 16, []string{"wrong type: want an integer", `"eight"`, "spec.nodePools[0].gpu.count"}},
		{"duplicate-pool.yaml", 9, 7, []string{`duplicate node pool name "a"`, "first defined on line 7", "spec.nodePools[2].name"}},
		{"float-version.yaml", 5, 22, []string{"1.30 is read as the number 1.3", `quote it: "1.30"`}},
		{"env-unknown-field.yaml", 9, 17, []string{`unknown field "drivr"`, `did you mean "driver"?`, "spec.environments.dev.nodePools[0].gpu.drivr"}},
		{"rollout-percent.yaml", 9, 25, []string{`percentage "150%" must be between 1% and 100%`, "spec.nodePools[0].rollout.maxUnavailable"}},
		{"env-rollout-word.yaml", 9, 37, []string{`"two" is neither a number of nodes`, "spec.environments.dev.nodePools[0].rollout.maxUnavailable"}},
		{"two-docs.yaml", 5, 0, []string{"more than one YAML document"}},
		{"duplicate-key.yaml", 5, 0, []string{"duplicate", "a"}},
		{"alias-bomb.yaml", 0, 0, []string{"YAML aliases expand to more than 500000 nodes"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", "bad", c.file)
			_, err := Load(path, nil)
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("Load(%s) = %v, want *spec.Error", c.file, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path) {
				t.Errorf("error %q does not start with the file name", msg)
			}
			if c.line > 0 && se.Line != c.line {
				t.Errorf("line = %d, want %d (%s)", se.Line, c.line, msg)
			}
			if c.col > 0 && se.Column != c.col {
				t.Errorf("column = %d, want %d (%s)", se.Column, c.col, msg)
			}
			for _, s := range c.wantSubstr {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q lacks %q", msg, s)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans several lines: %q", msg)
			}
		})
	}
}

func TestLoadTooLarge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.yaml")
	big := "apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: t}\n# " + strings.Repeat("x", 10<<20) + "\n"
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, nil)
	if err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Fatalf("Load(10 MB) = %v, want a size error", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "no-such.yaml"), nil)
	if err == nil || !strings.Contains(err.Error(), "cannot read spec") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadStdin(t *testing.T) {
	in := strings.NewReader("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: from-stdin}\nspec: {provider: eks}\n")
	doc, err := Load("-", in)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Spec.Metadata.Name != "from-stdin" || doc.Spec.Spec.Provider != "eks" {
		t.Fatalf("decoded %+v", doc.Spec)
	}
}

const envSpec = `apiVersion: gpuctl.dev/v1alpha1
kind: ClusterSpec
metadata: {name: t}
spec:
  provider: gke
  kubernetesVersion: "1.33"
  tags: {team: a}
  nodePools:
    - name: train
      machineType: a3-highgpu-8g
      gpu: {count: 8, driver: LATEST}
      autoscaling: {min: 1, max: 4}
    - name: infer
      machineType: g2-standard-24
  environments:
    dev:
      kubernetesVersion: "1.34"
      tags: {owner: b}
      nodePools:
        - name: train
          autoscaling: {min: 0}
          gpu: {driver: DEFAULT}
        - name: scratch
          machineType: g2-standard-4
`

func TestResolveEnvironment(t *testing.T) {
	doc, err := Parse("env.yaml", []byte(envSpec))
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Environments(); len(got) != 1 || got[0] != "dev" {
		t.Fatalf("Environments() = %v", got)
	}
	dev, err := doc.Resolve("dev")
	if err != nil {
		t.Fatal(err)
	}
	s := dev.Spec
	if s.KubernetesVersion != "1.34" || s.Provider != "gke" {
		t.Errorf("scalars not merged: %+v", s)
	}
	if s.Tags["team"] != "a" || s.Tags["owner"] != "b" {
		t.Errorf("tags not merged key by key: %v", s.Tags)
	}
	if len(s.NodePools) != 3 {
		t.Fatalf("pools = %d, want 3 (two merged by name, one added)", len(s.NodePools))
	}
	train := s.NodePools[0]
	if train.GPU.Driver != "DEFAULT" || train.GPU.Count != 8 || train.MachineType != "a3-highgpu-8g" {
		t.Errorf("train pool not merged: %+v", train.GPU)
	}
	if train.Autoscaling.Min != 0 || train.Autoscaling.Max != 4 {
		t.Errorf("explicit 0 in overlay must override: %+v", train.Autoscaling)
	}
	if s.NodePools[2].Name != "scratch" {
		t.Errorf("overlay-only pool missing: %+v", s.NodePools[2])
	}
	if len(s.Environments) != 0 {
		t.Errorf("resolved spec keeps environments")
	}
	base, _ := doc.Resolve("")
	if base.Spec.NodePools[0].GPU.Driver != "LATEST" {
		t.Errorf("base changed by resolving dev")
	}
	if _, err := doc.Resolve("prod"); err == nil || !strings.Contains(err.Error(), "known: dev") {
		t.Errorf("unknown env error = %v", err)
	}
}

func TestLocate(t *testing.T) {
	doc, err := Parse("env.yaml", []byte(envSpec))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		env, path, wantPath string
		line, col           int
	}{
		{"", "spec.nodePools[0].gpu.driver", "spec.nodePools[0].gpu.driver", 11, 23},
		{"dev", "spec.nodePools[0].gpu.driver", "spec.environments.dev.nodePools[0].gpu.driver", 22, 17},
		{"dev", "spec.nodePools[0].machineType", "spec.nodePools[0].machineType", 10, 7},
		{"dev", "spec.nodePools[2].machineType", "spec.environments.dev.nodePools[1].machineType", 24, 11},
		{"dev", "spec.kubernetesVersion", "spec.environments.dev.kubernetesVersion", 17, 7},
		{"", `spec.tags["team"]`, `spec.tags["team"]`, 7, 10},
		// not written: nearest written parent
		{"", "spec.nodePools[1].gpu.driver", "spec.nodePools[1].gpu.driver", 13, 7},
	}
	for _, c := range cases {
		p, l, col := doc.Locate(c.env, c.path)
		if p != c.wantPath || l != c.line || col != c.col {
			t.Errorf("Locate(%q, %q) = %s %d:%d, want %s %d:%d", c.env, c.path, p, l, col, c.wantPath, c.line, c.col)
		}
	}
}

func TestKeyQuoting(t *testing.T) {
	if got := Key("nvidia.com/gpu.product"); got != `["nvidia.com/gpu.product"]` {
		t.Errorf("Key = %s", got)
	}
	doc, err := Parse("l.yaml", []byte("apiVersion: gpuctl.dev/v1alpha1\nkind: ClusterSpec\nmetadata: {name: t}\nspec:\n  nodePools:\n    - name: a\n      labels:\n        nvidia.com/gpu.product: A10G\n"))
	if err != nil {
		t.Fatal(err)
	}
	l, c, ok := doc.Position(`spec.nodePools[0].labels["nvidia.com/gpu.product"]`)
	if !ok || l != 8 || c != 9 {
		t.Errorf("Position = %d:%d ok=%v, want 8:9", l, c, ok)
	}
}

func TestExamplesLoad(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, f := range files {
		doc, err := Load(f, nil)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, e := range doc.Environments() {
			if _, err := doc.Resolve(e); err != nil {
				t.Errorf("%s env %s: %v", f, e, err)
			}
		}
	}
}
