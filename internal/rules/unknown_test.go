package rules

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
	"github.com/gpuctl/gpuctl/internal/spec/spectest"
)

// gkeL4NoDriver is a GKE L4 pool with gpu.driver unset and no Kubernetes
// version: whether GKE installs a driver depends on the version.
func gkeL4NoDriver() *spec.ClusterSpec {
	cs := spectest.MinimalGKE()
	cs.Spec.KubernetesVersion = ""
	cs.Spec.NodePools[0].GPU.Driver = ""
	return cs
}

func TestUnknownKubernetesVersionIsNotAbsent(t *testing.T) {
	// absent: a note that the checks are skipped, no warning
	absent := ValidateReport(gkeL4NoDriver(), Options{AsOf: asOf20261129})
	if len(absent.NotJudged) != 0 {
		t.Errorf("absent version: NotJudged %+v", absent.NotJudged)
	}
	if f, ok := findAt(absent.Findings, RuleSpecRequired, "spec.kubernetesVersion"); !ok || f.Severity != diag.SeverityInfo {
		t.Errorf("absent version: want info SPEC-REQUIRED, got %+v", absent.Findings)
	}
	// unknown: no error, a warning naming the fact, its reason, the flag
	// and the checks not judged
	unk := map[string]Unknown{"spec.kubernetesVersion": {Reason: "it depends on data.google_container_engine_versions.gke (main.tf:9)", Hint: "pass --kubernetes-version VERSION"}}
	rep := ValidateReport(gkeL4NoDriver(), Options{AsOf: asOf20261129, Unknown: unk})
	for _, f := range rep.Findings {
		if f.Severity == diag.SeverityError {
			t.Errorf("error from an unknown value: %s %s", f.Rule, f.Message)
		}
		if f.Rule == RuleSpecRequired && f.Path == "spec.kubernetesVersion" {
			t.Errorf("unknown version reported missing: %s", f.Message)
		}
	}
	f, ok := findAt(rep.Findings, RuleSpecUnknown, "spec.kubernetesVersion")
	if !ok || f.Severity != diag.SeverityWarning {
		t.Fatalf("want a SPEC-UNKNOWN warning, got %+v", rep.Findings)
	}
	for _, want := range []string{"the Kubernetes version is unknown", "data.google_container_engine_versions.gke", "GKE-DRIVER-OPTION (whether GKE installs a driver) (pool pool)", "GKE-K8S-SUPPORT"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if !strings.Contains(f.Fix, "--kubernetes-version") {
		t.Errorf("fix lacks the flag: %s", f.Fix)
	}
	if len(rep.NotJudged) != 1 || !rep.NotJudged[0].Deciding || len(rep.NotJudged[0].Checks) != 2 {
		t.Errorf("NotJudged %+v", rep.NotJudged)
	}
}

func TestUnknownDevicePluginIsNotMissing(t *testing.T) {
	cs := spectest.MinimalEKS()
	cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{}
	if _, ok := findAt(Validate(cs, Options{AsOf: asOf20261129}), RulePluginMissing, "spec.addons.devicePlugin.provider"); !ok {
		t.Fatal("absent device plugin: want DEVICE-PLUGIN-MISSING")
	}
	why := "module.eks_data_addons (aws-ia/eks-data-addons/aws) sets enable_nvidia_device_plugin and is not read"
	rep := ValidateReport(cs, Options{AsOf: asOf20261129, Unknown: map[string]Unknown{"spec.addons.devicePlugin.provider": {Reason: why}}})
	if f, ok := findAt(rep.Findings, RulePluginMissing, ""); ok {
		t.Errorf("DEVICE-PLUGIN-MISSING from an unknown plugin: %s", f.Message)
	}
	f, ok := findAt(rep.Findings, RuleSpecUnknown, "spec.addons.devicePlugin.provider")
	if !ok || f.Severity != diag.SeverityInfo || !strings.Contains(f.Message, why) || !strings.Contains(f.Message, "could not") && !strings.Contains(f.Message, "not judged") {
		t.Errorf("want an info saying what was not judged and why, got %+v", rep.Findings)
	}
}

func TestUnknownUnderAParentPath(t *testing.T) {
	cs := spectest.MinimalGKE()
	cs.Spec.NodePools[0].MachineType = ""
	rep := ValidateReport(cs, Options{AsOf: asOf20261129, Unknown: map[string]Unknown{"spec.nodePools[0]": {Reason: "a launch template not read"}}})
	if f, ok := findAt(rep.Findings, RuleSpecRequired, "spec.nodePools[0].machineType"); ok {
		t.Errorf("unknown machine type reported missing: %s", f.Message)
	}
	if len(rep.NotJudged) != 1 || rep.NotJudged[0].Path != "spec.nodePools[0].machineType" || !rep.NotJudged[0].Deciding {
		t.Errorf("NotJudged %+v", rep.NotJudged)
	}
}

// findRule is the first finding of rule (at path, unless path is "").
func findAt(fs []diag.Finding, rule, path string) (diag.Finding, bool) {
	for _, f := range fs {
		if f.Rule == rule && (path == "" || f.Path == path) {
			return f, true
		}
	}
	return diag.Finding{}, false
}

// TestUnknownPluginSelectorIsNotConflict: NVIDIA's chart on a Bottlerocket
// pool conflicts with the AMI's own plugin; with its nodeSelector unknown
// (values Terraform reads from a file outside the root) the conflict is
// not judged, and no error is reported.
func TestUnknownPluginSelectorIsNotConflict(t *testing.T) {
	cs := spectest.MinimalEKS()
	cs.Spec.NodePools[0].OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
	cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{Provider: spec.DevicePluginHelm}
	if f, ok := findAt(Validate(cs, Options{AsOf: asOf20261129}), RulePluginConflict, ""); !ok || f.Severity != diag.SeverityError {
		t.Fatalf("known selector: want a DEVICE-PLUGIN-CONFLICT error, got %+v", f)
	}
	why := "module.data_addons nvidia_device_plugin_helm_config values depends on a file outside the root"
	rep := ValidateReport(cs, Options{AsOf: asOf20261129, Unknown: map[string]Unknown{"spec.addons.devicePlugin.nodeSelector": {Reason: why}}})
	if f, ok := findAt(rep.Findings, RulePluginConflict, ""); ok {
		t.Errorf("DEVICE-PLUGIN-CONFLICT from an unknown nodeSelector: %s", f.Message)
	}
	if len(rep.NotJudged) != 1 || rep.NotJudged[0].Path != "spec.addons.devicePlugin.nodeSelector" || !strings.Contains(rep.NotJudged[0].Checks[0], RulePluginConflict) {
		t.Errorf("NotJudged %+v", rep.NotJudged)
	}
}

// TestUnknownOperatorPluginIsNotConflict: the GPU Operator's plugin on a
// Bottlerocket pool conflicts with the AMI's own; with the Operator's
// devicePlugin.enabled unknown the conflict is not judged.
func TestUnknownOperatorPluginIsNotConflict(t *testing.T) {
	cs := spectest.MinimalEKS()
	cs.Spec.NodePools[0].OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
	cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{Provider: spec.DevicePluginGPUOperator}
	cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.3.0"}
	if _, ok := findAt(Validate(cs, Options{AsOf: asOf20261129}), RulePluginConflict, ""); !ok {
		t.Fatal("known: want DEVICE-PLUGIN-CONFLICT")
	}
	unk := map[string]Unknown{"spec.addons.gpuOperator.devicePlugin.enabled": {Reason: "the Operator's values depend on var.cfg"}}
	rep := ValidateReport(cs, Options{AsOf: asOf20261129, Unknown: unk})
	if f, ok := findAt(rep.Findings, RulePluginConflict, ""); ok {
		t.Errorf("DEVICE-PLUGIN-CONFLICT from an unknown value: %s", f.Message)
	}
	if _, ok := findAt(rep.Findings, RuleSpecUnknown, "spec.addons.gpuOperator.devicePlugin.enabled"); !ok {
		t.Errorf("want a SPEC-UNKNOWN naming the value, got %+v", rep.Findings)
	}
}
