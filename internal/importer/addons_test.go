package importer

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/rules"
)

// unknownOpts are res's unknown values as check.Options.Unknown takes
// them, as validate passes them.
func unknownOpts(res *Result) map[string]rules.Unknown {
	out := map[string]rules.Unknown{}
	for path, f := range res.UnknownFacts() {
		out[path] = rules.Unknown(f) // the same fields: a field added to one must be added to the other
	}
	return out
}

// TestAddonModules: an add-on module that installs NVIDIA's add-ons leaves
// them unknown; one switched off, or a module that names none, does not.
func TestAddonModules(t *testing.T) {
	for _, c := range []struct {
		name, module string
		want         []string // unknown paths
	}{
		{"data addons, device plugin on before the module had the input", `module "eks_data_addons" {
  source  = "aws-ia/eks-data-addons/aws"
  version = "1.30.0"
  enable_nvidia_device_plugin = true
}`, []string{pathDevicePlugin}},
		{"data addons, both from a variable without a value", `variable "gpu" { type = bool }
module "data" {
  source = "registry.terraform.io/aws-ia/eks-data-addons/aws"
  enable_nvidia_device_plugin = var.gpu
  enable_nvidia_gpu_operator  = var.gpu
}`, []string{pathDevicePlugin, pathGPUOperator}},
		{"data addons, off", `module "eks_data_addons" {
  source = "aws-ia/eks-data-addons/aws"
  enable_nvidia_device_plugin = false
  enable_nvidia_triton_server = true
}`, nil},
		{"blueprints addons, gpu-operator in helm_releases", `module "addons" {
  source = "aws-ia/eks-blueprints-addons/aws"
  helm_releases = {
    gpu-operator = { chart = "gpu-operator", repository = "https://helm.ngc.nvidia.com/nvidia" }
  }
}`, []string{pathGPUOperator}}, // an unknown Operator leaves its device plugin unknown too (the rules)
		{"blueprints addons without NVIDIA", `module "addons" {
  source = "aws-ia/eks-blueprints-addons/aws"
  enable_metrics_server = true
}`, nil},
		{"a wrapper named for the plugin", `module "nvidia_device_plugin" {
  source = "git::https://example.com/addons.git//plugin"
}`, []string{pathDevicePlugin}},
		{"a wrapper with the switch off", `module "gpu_addons" {
  source = "git::https://example.com/addons.git"
  enable_device_plugin = false
}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := importWithL4Group(t, c.module)
			var got []string
			for _, u := range res.Unknowns {
				if strings.HasPrefix(u.Path, "spec.addons.") {
					got = append(got, u.Path)
					if !strings.Contains(res.Why(u), "not read") {
						t.Errorf("reason does not say the module is not read: %s", res.Why(u))
					}
				}
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("unknown add-ons %v, want %v", got, c.want)
			}
		})
	}
}

// TestAddonModuleCharts: an add-on module's NVIDIA input known to be true
// imports the chart it installs, with the call's helm config over the
// module's defaults for its version; a part that cannot be known stays
// unknown, the rest known.
func TestAddonModuleCharts(t *testing.T) {
	for _, c := range []struct {
		name, module string
		want         string   // addons as "provider version nodeSelector | operator version driver"
		unknown      []string // unknown paths under spec.addons
		skip         string   // a skip that must be listed
	}{
		{"device plugin, module defaults, no version constraint", `module "a" {
  source = "aws-ia/eks-data-addons/aws"
  enable_nvidia_device_plugin = true
}`, "helm 0.14.4 map[] |   ", nil, "no version constraint"},
		{"device plugin from a negated variable with a default, version and selector", `variable "op" { default = false }
module "a" {
  source  = "aws-ia/eks-data-addons/aws"
  version = "1.36.0"
  enable_nvidia_device_plugin = !(var.op)
  nvidia_device_plugin_helm_config = {
    version = "v0.16.1"
    values = [<<-EOT
      nodeSelector:
        accelerator: nvidia
    EOT
    , "nodeSelector: {other: x}"]
  }
}`, "helm 0.16.1 map[accelerator:nvidia] |   ", nil, "reads only the first 1 item(s) of values"},
		{"device plugin values from a variable without a value", `variable "plugin_values" { type = string }
module "a" {
  source  = "aws-ia/eks-data-addons/aws"
  version = "~> 1.37"
  enable_nvidia_device_plugin = true
  nvidia_device_plugin_helm_config = { values = [var.plugin_values] }
}`, "helm 0.14.4 map[] |   ", []string{"spec.addons.devicePlugin.nodeSelector"}, ""},
		{"GPU Operator, helm config from a variable without a value", `variable "cfg" {}
module "a" {
  source  = "aws-ia/eks-data-addons/aws"
  version = "1.36.0"
  enable_nvidia_gpu_operator = true
  nvidia_gpu_operator_helm_config = var.cfg
}`, "gpu-operator  map[] | true  ", []string{"spec.addons.gpuOperator.cdi.enabled", "spec.addons.gpuOperator.dcgmExporter.enabled",
			"spec.addons.gpuOperator.devicePlugin.enabled", "spec.addons.gpuOperator.driver.enabled", "spec.addons.gpuOperator.driver.kernelModuleType",
			"spec.addons.gpuOperator.driver.version", "spec.addons.gpuOperator.migManager.enabled", "spec.addons.gpuOperator.toolkit.enabled", "spec.addons.gpuOperator.version"}, ""},
		{"GPU Operator, the default of the call's version", `module "a" {
  source  = "aws-ia/eks-data-addons/aws"
  version = "1.33.0"
  enable_nvidia_gpu_operator = true
  nvidia_gpu_operator_helm_config = { values = ["driver: {enabled: false}"] }
}`, "gpu-operator  map[] | true v23.3.2 false", nil, ""},
		{"GPU Operator, newest release", `module "a" {
  source  = "aws-ia/eks-data-addons/aws"
  version = ">= 1.37.2"
  enable_nvidia_gpu_operator = true
}`, "gpu-operator  map[] | true v25.3.0 ", nil, ""},
		{"off", `module "a" {
  source  = "aws-ia/eks-data-addons/aws"
  enable_nvidia_gpu_operator = false
  enable_nvidia_device_plugin = false
}`, "  map[] |   ", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := importWithL4Group(t, c.module)
			a := res.Spec.Spec.Addons
			driver := ""
			if a.GPUOperator.Driver.Enabled != nil {
				driver = fmt.Sprint(*a.GPUOperator.Driver.Enabled)
			}
			op := ""
			if a.GPUOperator.Enabled {
				op = "true"
			}
			got := fmt.Sprintf("%s %s %v | %s %s %s", a.DevicePlugin.Provider, a.DevicePlugin.Version, a.DevicePlugin.NodeSelector, op, a.GPUOperator.Version, driver)
			if got != c.want {
				t.Errorf("addons %q, want %q", got, c.want)
			}
			var unk []string
			for _, u := range res.Unknowns {
				if strings.HasPrefix(u.Path, "spec.addons.") {
					unk = append(unk, u.Path)
				}
			}
			if strings.Join(unk, ",") != strings.Join(c.unknown, ",") {
				t.Errorf("unknown %v, want %v", unk, c.unknown)
			}
			if c.skip != "" && !slices.ContainsFunc(res.Skipped, func(s Skipped) bool { return strings.Contains(s.Reason, c.skip) }) {
				t.Errorf("no skip saying %q in %+v", c.skip, res.Skipped)
			}
		})
	}
}

// TestUnknownFactsHints: the hint names the variable a value depends on,
// and the Kubernetes version's flag where the source gives no hint.
func TestUnknownFactsHints(t *testing.T) {
	res := &Result{Unknowns: []Unknown{
		{Path: "spec.nodePools[0].gpu.driver", What: "x", Because: []string{"var.gpu_driver_version, which is not declared"}},
		{Path: "spec.kubernetesVersion", What: "y", Because: []string{"data.google_container_engine_versions.gke, a data source"}},
		{Path: "spec.kubernetesVersion", What: "z", Because: []string{"data.other.v"}},
	}}
	f := res.UnknownFacts()
	if got := f["spec.nodePools[0].gpu.driver"].Hint; got != "pass --var gpu_driver_version=VALUE or --var-file FILE" {
		t.Errorf("driver hint %q", got)
	}
	k := f["spec.kubernetesVersion"]
	if k.Hint != "pass --kubernetes-version VERSION" || !strings.Contains(k.Reason, "data.google_container_engine_versions.gke") || !strings.Contains(k.Reason, "data.other.v") {
		t.Errorf("kubernetesVersion %+v", k)
	}
}

// l4Group is an EKS GPU node group for the module calls under test to sit
// beside.
const l4Group = `
resource "aws_eks_node_group" "l4" {
  cluster_name    = "ml"
  node_group_name = "l4"
  instance_types  = ["g6.xlarge"]
  ami_type        = "AL2023_x86_64_NVIDIA"
  scaling_config {
    min_size     = 0
    max_size     = 1
    desired_size = 0
  }
}
`

// importWithL4Group imports module (Terraform) beside l4Group from a
// folder of its own.
func importWithL4Group(t *testing.T, module string) *Result {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, map[string]string{"main.tf": module + l4Group})
	res, err := Import([]string{dir}, Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
