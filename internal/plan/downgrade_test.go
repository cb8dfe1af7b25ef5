package plan

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

func TestDowngrade(t *testing.T) {
	cases := []struct {
		field, old, new string
		want            bool
	}{
		{"gpu.driver", `"580.159.03"`, `"580.95.05"`, true},
		{"gpu.driver", `"580.95.05"`, `"580.159.03"`, false},
		{"gpu.driver", `"580.95.05"`, `"570.195.03"`, true},
		{"gpu.driver", `"580"`, `"570.195.03"`, true},
		{"gpu.driver", `"580.95.05"`, `"580"`, false}, // same branch: not told
		{"gpu.driver", `"DEFAULT"`, `"LATEST"`, false},
		{"driver (resolved)", `"ami 580.159.03"`, `"ami 580.95.05"`, true},
		{"driver (resolved)", `"gke R580"`, `"gke R535"`, true},
		{"spec.addons.gpuOperator.driver.version", `"580.95.05"`, `"570.172.08"`, true},
		{"releaseVersion", `"1.34.9-20260714"`, `"1.34.2-20251209"`, true},
		{"releaseVersion", `"1.34.2-20251209"`, `"1.34.9-20260714"`, false},
		{"releaseVersion", `"1.54.0-5043decc"`, `"1.49.0-abcdef12"`, true},
		{"releaseVersion", `""`, `"1.34.2-20251209"`, false},
		{"osImage", `"580.95.05"`, `"570.1.1"`, false},
	}
	for _, c := range cases {
		if got := downgrade(c.field, c.old, c.new); got != c.want {
			t.Errorf("%s %s -> %s: downgrade %v, want %v", c.field, c.old, c.new, got, c.want)
		}
	}
}

// TestChangedPoolNamesDowngrade: plan's field changes of an EKS pool whose
// driver and release go back carry Downgrade, and the rollout's reasons
// say so.
func TestChangedPoolNamesDowngrade(t *testing.T) {
	cs := func(provider, k8s string, p spec.NodePool) *spec.ClusterSpec {
		p.Name, p.MachineType, p.OSImage = "gpu", "g6.xlarge", "AL2023_x86_64_NVIDIA"
		return &spec.ClusterSpec{Spec: spec.Spec{Provider: provider, KubernetesVersion: k8s, NodePools: []spec.NodePool{p}}}
	}
	o := cs("eks", "1.34", spec.NodePool{ReleaseVersion: "1.34.9-20260714", GPU: spec.GPU{Driver: "580.159.03"}})
	n := cs("eks", "1.34", spec.NodePool{ReleaseVersion: "1.34.2-20251209", GPU: spec.GPU{Driver: "580.105.08"}})
	pc, changed := changedPool(envPair{old: o, new: n}, 0, 0)
	if !changed {
		t.Fatal("no change")
	}
	got := map[string]bool{}
	for _, f := range pc.Fields {
		got[f.Field] = f.Downgrade
	}
	if !got["gpu.driver"] || !got["releaseVersion"] {
		t.Errorf("fields %+v: want gpu.driver and releaseVersion downgrades", pc.Fields)
	}
	rs := reasons([]PoolChange{pc}, "", pc.Pool)
	found := false
	for _, r := range rs {
		found = found || strings.HasSuffix(r, "(downgrade)")
	}
	if !found {
		t.Errorf("reasons %q: none names the downgrade", rs)
	}
}
