package importer

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/rules"
)

// unknownOpts are res's unknown values as check.Options.Unknown takes
// them, as validate passes them.
func unknownOpts(res *Result) map[string]rules.Unknown {
	out := map[string]rules.Unknown{}
	for path, f := range res.UnknownFacts() {
		out[path] = rules.Unknown{Reason: f.Reason, Hint: f.Hint, PlatformDefault: f.PlatformDefault}
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
		{"data addons, device plugin on", `module "eks_data_addons" {
  source = "aws-ia/eks-data-addons/aws"
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
			dir := t.TempDir()
			write(t, dir, map[string]string{"main.tf": c.module + `
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
`})
			res, err := Import([]string{dir}, Options{Root: dir})
			if err != nil {
				t.Fatal(err)
			}
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
