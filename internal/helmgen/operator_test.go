package helmgen

import (
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// operatorValuesOf returns the generated gpu-operator values, or nil when the
// spec installs no GPU Operator.
func operatorValuesOf(t *testing.T, cs *spec.ClusterSpec) map[string]any {
	t.Helper()
	return chartValuesOf(t, cs, ChartGPUOperator)
}

// chartValuesOf returns the generated values of chart, or nil.
func chartValuesOf(t *testing.T, cs *spec.ClusterSpec, chart string) map[string]any {
	t.Helper()
	files, err := Values(cs, Options{SpecFile: "x.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name != chart+".values.yaml" {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal(f.Data, &m); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		return m
	}
	return nil
}

func toolkitEnv(m map[string]any) map[string]string {
	out := map[string]string{}
	list, _ := dig(m, "toolkit", "env").([]any)
	for _, e := range list {
		if em, ok := e.(map[string]any); ok {
			n, _ := em["name"].(string)
			v, _ := em["value"].(string)
			out[n] = v
		}
	}
	return out
}

// TestOperatorValuesGKE: on GKE, with Google's installer owning the driver,
// the Operator installs no driver, finds it under /home/kubernetes/bin/nvidia
// and runs the toolkit there with CDI; GKE-managed pools of the same cluster
// are labelled out of the Operator's operands.
// Source: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/google-gke.html
func TestOperatorValuesGKE(t *testing.T) {
	seen := map[string]bool{}
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		if ex.Spec.Spec.Provider != spec.ProviderGKE || !ex.Spec.Spec.Addons.GPUOperator.Enabled || matrix.OperatorSwitches(&ex.Spec.Spec).Driver {
			continue
		}
		t.Run(ex.Dir, func(t *testing.T) {
			seen[ex.Name] = true
			m := operatorValuesOf(t, ex.Spec)
			if m == nil {
				t.Fatal("no gpu-operator values")
			}
			checks := []struct {
				path []string
				want any
			}{
				{[]string{"driver", "enabled"}, false},
				{[]string{"hostPaths", "driverInstallDir"}, "/home/kubernetes/bin/nvidia"},
				{[]string{"toolkit", "enabled"}, true},
				{[]string{"toolkit", "installDir"}, "/home/kubernetes/bin/nvidia"},
				{[]string{"cdi", "enabled"}, true},
				{[]string{"devicePlugin", "enabled"}, true},
				{[]string{"devicePlugin", "config", "name"}, OperatorDevicePluginConfigMap},
			}
			for _, c := range checks {
				if got := dig(m, c.path...); got != c.want {
					t.Errorf("%s = %v, want %v", strings.Join(c.path, "."), got, c.want)
				}
			}
			if dig(m, "driver", "version") != nil {
				t.Errorf("driver.version set with the driver disabled")
			}
			if env := toolkitEnv(m); env["RUNTIME_CONFIG_SOURCE"] != "file" {
				t.Errorf("toolkit.env RUNTIME_CONFIG_SOURCE = %q, want file (GKE 1.33+)", env["RUNTIME_CONFIG_SOURCE"])
			}
			s := &ex.Spec.Spec
			data, _ := dig(m, "devicePlugin", "config", "data").(map[string]any)
			dcgm := chartValuesOf(t, ex.Spec, ChartDCGMExporter)
			dcgmSel, _ := dig(dcgm, "nodeSelector").(map[string]any)
			for i := range s.NodePools {
				p := &s.NodePools[i]
				labels := s.NodeLabels(p)
				if s.Addons.DCGMExporter.Enabled {
					// Exactly one DCGM exporter per GPU pool: the Operator's
					// where its operands run, the chart's elsewhere.
					n := 0
					if dig(m, "dcgmExporter", "enabled") == true && labels[spec.LabelOperatorDeployOperands] != "false" {
						n++
					}
					if dcgm != nil {
						sel := true
						for k, v := range dcgmSel {
							sel = sel && labels[k] == v
						}
						if sel {
							n++
						}
					}
					if n != 1 {
						t.Errorf("pool %s: %d DCGM exporters, want 1", p.Name, n)
					}
				}
				switch s.DevicePluginFor(p) {
				case spec.DevicePluginGPUOperator:
					if labels[spec.LabelGKENoDefaultPlugin] != "true" {
						t.Errorf("pool %s: NVIDIA's plugin without %s=true", p.Name, spec.LabelGKENoDefaultPlugin)
					}
					if _, ok := data[p.Name]; !ok {
						t.Errorf("pool %s: no device plugin config %q", p.Name, p.Name)
					}
				case spec.DevicePluginGKEManaged:
					if labels[spec.LabelOperatorDeployOperands] != "false" {
						t.Errorf("pool %s: GKE owns its GPU stack, but the Operator's operands are not switched off (%s)", p.Name, spec.LabelOperatorDeployOperands)
					}
					if _, ok := data[p.Name]; ok {
						t.Errorf("pool %s: GKE-managed pool has an Operator device plugin config", p.Name)
					}
				}
			}
		})
	}
	if !seen["gke-operator-mig"] {
		t.Error("example gke-operator-mig did not reach the GKE GPU Operator checks")
	}
}

// TestOperatorValuesEKS: unset switches are written as the chart's defaults;
// switched off (the AL2023 NVIDIA AMIs ship the driver and the container
// toolkit) the Operator installs neither; on EKS it needs no GKE paths.
func TestOperatorValuesEKS(t *testing.T) {
	doc, err := spec.Load(filepath.Join("..", "..", "examples", "eks-p5-training-efa.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := doc.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{Provider: spec.DevicePluginGPUOperator}
	// Left unset, driver and toolkit are the chart's defaults (on), written
	// out: the values say what validate judges (DRIVER-OWNER and
	// OPERATOR-TOOLKIT-PREINSTALLED on this AMI).
	cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0"}
	m := operatorValuesOf(t, cs)
	if m == nil {
		t.Fatal("no gpu-operator values")
	}
	for _, path := range [][]string{{"driver", "enabled"}, {"toolkit", "enabled"}, {"migManager", "enabled"}} {
		if got := dig(m, path...); got != true {
			t.Errorf("unset: %s = %v, want true (the chart default of v26.7.0)", strings.Join(path, "."), got)
		}
	}
	// Switched off, as on the NVIDIA AMIs that ship driver and toolkit.
	cs.Spec.Addons.GPUOperator.Driver.Enabled = ptr(false)
	cs.Spec.Addons.GPUOperator.Toolkit.Enabled = ptr(false)
	m = operatorValuesOf(t, cs)
	for _, path := range [][]string{{"driver", "enabled"}, {"toolkit", "enabled"}} {
		if got := dig(m, path...); got != false {
			t.Errorf("%s = %v, want false (the AMI ships it)", strings.Join(path, "."), got)
		}
	}
	for _, path := range [][]string{{"hostPaths"}, {"toolkit", "installDir"}} {
		if got := dig(m, path...); got != nil {
			t.Errorf("%s = %v on EKS, want unset", strings.Join(path, "."), got)
		}
	}
	if got := dig(m, "devicePlugin", "enabled"); got != true {
		t.Errorf("devicePlugin.enabled = %v, want true", got)
	}
}
