package hclgen

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestGKEUnsetDriver: an unset gpu.driver is written as what GKE installs
// by default for the cluster's version, the same answer validate judges,
// and a node auto-provisioning pool gets no node pool resource.
func TestGKEUnsetDriver(t *testing.T) {
	for _, c := range []struct {
		k8s  string
		want string
	}{
		{"1.33", "DEFAULT"},
		{"1.30.1-gke.1156000", "DEFAULT"},
		{"1.30", "DEFAULT"}, // the minor at its newest patch
		{"1.30.1-gke.1155000", "INSTALLATION_DISABLED"},
		{"1.29", "INSTALLATION_DISABLED"},
		{"", "GPU_DRIVER_VERSION_UNSPECIFIED"},
	} {
		cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "g"}, Spec: spec.Spec{
			Provider: spec.ProviderGKE, ClusterName: "c", Region: "r", KubernetesVersion: c.k8s,
			NodePools: []spec.NodePool{
				{Name: "l4", MachineType: "g2-standard-8", OSImage: "COS_CONTAINERD", Autoscaling: spec.Autoscaling{Max: 1}},
				{Name: "nap", MachineType: "g2-standard-8", OSImage: "COS_CONTAINERD", AutoProvisioned: true, Autoscaling: spec.Autoscaling{Max: 1}},
			},
		}}
		files, err := Generate(cs, Options{SpecFile: "s.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		text := map[string]string{}
		for _, f := range files {
			text[f.Name] = string(f.Data)
		}
		g := parseGuards(t, cs)
		if got := g.defaults["l4_gpu_driver_version"].AsString(); got != c.want {
			t.Errorf("kubernetesVersion %q: unset driver written as %s, want %s", c.k8s, got, c.want)
		}
		if got := g.eval(t, g.validations["l4_gpu_driver_version"], map[string]string{"l4_gpu_driver_version": c.want}); !got {
			t.Errorf("kubernetesVersion %q: %s fails its own validation", c.k8s, c.want)
		}
		if c.want != "GPU_DRIVER_VERSION_UNSPECIFIED" && g.eval(t, g.validations["l4_gpu_driver_version"], map[string]string{"l4_gpu_driver_version": "GPU_DRIVER_VERSION_UNSPECIFIED"}) {
			t.Errorf("kubernetesVersion %q: GPU_DRIVER_VERSION_UNSPECIFIED passes although the version is known", c.k8s)
		}
		if want := matrix.GKEUnsetDriver(c.k8s, false); want != "" && want != c.want {
			t.Errorf("matrix says %s", want)
		}
		nodePools := text["terraform/node_pools.tf"]
		for name, data := range text {
			if strings.HasSuffix(name, "node_pools.tf") {
				nodePools = data
			}
		}
		if strings.Contains(nodePools, `"nap"`) || !strings.Contains(nodePools, "node auto-provisioning") {
			t.Errorf("the auto-provisioned pool:\n%s", nodePools)
		}
	}
	// NAP pools install the default only from 1.32.2-gke.1297000.
	if got := matrix.GKEUnsetDriver("1.32.2-gke.1296999", true); got != "INSTALLATION_DISABLED" {
		t.Errorf("NAP before 1.32.2-gke.1297000: %s", got)
	}
	if got := matrix.GKEUnsetDriver("1.32.2-gke.1297000", true); got != "DEFAULT" {
		t.Errorf("NAP at 1.32.2-gke.1297000: %s", got)
	}
}
