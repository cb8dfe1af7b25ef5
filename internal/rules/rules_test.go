package rules

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
)

func ptr[T any](v T) *T { return &v }

// eksBase is a clean EKS spec: one L4 inference pool on the AL2023 NVIDIA
// AMI with NVIDIA's Helm device plugin.
func eksBase() *spec.ClusterSpec {
	return &spec.ClusterSpec{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "t"},
		Spec: spec.Spec{Provider: "eks", Region: "us-east-1", ClusterName: "ml", KubernetesVersion: "1.34", CUDA: "12.8",
			Tags:   map[string]string{"cost-center": "c", "team": "t", "workload-type": "w"},
			Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: "helm", Version: "0.20.0"}},
			NodePools: []spec.NodePool{{Name: "pool", Role: "inference", MachineType: "g6.xlarge", OSImage: "AL2023_x86_64_NVIDIA",
				Capacity: "on-demand", Autoscaling: spec.Autoscaling{Max: 4},
				Taints: []spec.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}}}}}
}

// gkeBase is a clean GKE spec: one L4 inference pool on COS with GKE's
// driver and device plugin.
func gkeBase() *spec.ClusterSpec {
	return &spec.ClusterSpec{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "t"},
		Spec: spec.Spec{Provider: "gke", Region: "us-central1", ClusterName: "ml", KubernetesVersion: "1.35", CUDA: "12.4",
			Tags:   map[string]string{"cost-center": "c", "team": "t", "workload-type": "w"},
			Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: "gke-managed"}},
			NodePools: []spec.NodePool{{Name: "pool", Role: "inference", MachineType: "g2-standard-8", OSImage: "COS_CONTAINERD",
				GPU: spec.GPU{Driver: "LATEST"}, Capacity: "on-demand", Autoscaling: spec.Autoscaling{Max: 4},
				Taints: []spec.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}}}}}
}

type ruleCase struct {
	name string
	base func() *spec.ClusterSpec
	mod  func(cs *spec.ClusterSpec, p *spec.NodePool)
	rule string
	sev  diag.Severity // "" with bad false: the rule must not fire (above info)
	bad  bool
	path string // optional: the finding's path
	msg  string // optional: a substring of the message
}

func TestBasesAreClean(t *testing.T) {
	for name, b := range map[string]func() *spec.ClusterSpec{"eks": eksBase, "gke": gkeBase} {
		for _, f := range Validate(b(), Options{AsOf: asOf20261129}) {
			if f.Severity != diag.SeverityInfo {
				t.Errorf("%s base: %s %s %s", name, f.Rule, f.Path, f.Message)
			}
		}
	}
}

var ruleCases = []ruleCase{
	// Spec shape.
	{name: "provider missing", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Provider = "" }, rule: RuleSpecRequired, sev: diag.SeverityError, bad: true, path: "spec.provider"},
	{name: "region missing", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Region = "" }, rule: RuleSpecRequired, sev: diag.SeverityError, bad: true, path: "spec.region"},
	{name: "no machine type", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "" }, rule: RuleSpecRequired, sev: diag.SeverityError, bad: true},
	{name: "role misspelt", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Role = "trainig" }, rule: RuleSpecEnum, sev: diag.SeverityError, bad: true, msg: `did you mean "training"`},
	{name: "unknown AMI", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "AL2023_X86_64_NVIDIA" }, rule: RuleSpecEnum, sev: diag.SeverityError, bad: true, msg: "AL2023_x86_64_NVIDIA"},
	{name: "GKE image", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "cos_containerd" }, rule: RuleSpecEnum, sev: diag.SeverityError, bad: true},
	{name: "driver not a version", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "CUSTOM"; p.GPU.Driver = "580.x" }, rule: RuleSpecVersion, sev: diag.SeverityError, bad: true},
	{name: "kubernetes version", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "v1.33-eks" }, rule: RuleSpecVersion, sev: diag.SeverityError, bad: true},
	{name: "label key", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Labels = map[string]string{"gpu type": "l4"} }, rule: RuleSpecLabel, sev: diag.SeverityError, bad: true, path: `spec.nodePools[0].labels["gpu type"]`},
	{name: "label value", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Labels = map[string]string{"gpu": "NVIDIA L4"} }, rule: RuleSpecLabel, sev: diag.SeverityError, bad: true},
	{name: "label good", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Labels = map[string]string{"example.com/gpu-type": "l4"}
	}, rule: RuleSpecLabel},
	{name: "taint effect terraform spelling", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Taints[0].Effect = "NO_SCHEDULE" }, rule: RuleSpecTaint, sev: diag.SeverityError, bad: true, msg: "NoSchedule"},
	{name: "egress CIDR without prefix", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Network.EgressCIDRs = []string{"10.0.0.0/16", "10.20.0.0"}
	}, rule: RuleSpecNetwork, sev: diag.SeverityError, bad: true, msg: "10.20.0.0"},
	{name: "team pool misspelt", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Teams = []spec.Team{{Name: "serving", Pools: []string{p.Name + "s"}}}
	}, rule: RuleSpecReference, sev: diag.SeverityError, bad: true, path: "spec.teams[0].pools[0]", msg: "did you mean"},
	{name: "team pool known", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Teams = []spec.Team{{Name: "serving", Pools: []string{p.Name}}}
	}, rule: RuleSpecReference},
	{name: "duplicate taint", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Taints = append(p.Taints, p.Taints[0]) }, rule: RuleSpecTaint, sev: diag.SeverityError, bad: true},
	{name: "GKE pool name", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Name = "Train_H100" }, rule: RuleSpecName, sev: diag.SeverityError, bad: true},
	{name: "EKS pool name with underscore", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Name = "Train_H100" }, rule: RuleSpecName},
	{name: "GCP label tag", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Tags["Cost.Center"] = "ML" }, rule: RuleSpecCloudTags, sev: diag.SeverityError, bad: true, msg: "cost-center"},
	{name: "AWS tag reserved prefix", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Tags["aws:team"] = "x" }, rule: RuleSpecCloudTags, sev: diag.SeverityError, bad: true},
	{name: "AWS tag with dots and capitals", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Tags["Cost.Center"] = "ML Platform" }, rule: RuleSpecCloudTags},
	{name: "autoscaling min > max", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling = spec.Autoscaling{Min: 5, Max: 2} }, rule: RuleSpecAutoscaling, sev: diag.SeverityError, bad: true},
	// Numbers bounded by the providers' limits; names in the clouds' formats
	// (the hostile inputs of issue 11: int64 max, quotes, newlines, ${...}).
	{name: "max int64", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling.Max = 9223372036854775807 }, rule: RuleSpecAutoscaling, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].autoscaling.max"},
	{name: "GKE max above 1,000 per zone", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Zones = []string{"us-central1-a"}
		p.Autoscaling.Max = 1001
	}, rule: RuleSpecAutoscaling, sev: diag.SeverityError, bad: true, msg: "1000 nodes per node pool zone"},
	{name: "GKE max 2,000 over two zones", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Zones = []string{"us-central1-a", "us-central1-b"}
		p.Autoscaling.Max = 2000
	}, rule: RuleSpecAutoscaling},
	{name: "GKE max above a cluster", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Zones = nil; p.Autoscaling.Max = 15001 }, rule: RuleSpecAutoscaling, sev: diag.SeverityError, bad: true},
	{name: "EKS max above the default quota", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling.Max = 451 }, rule: RuleSpecAutoscaling, sev: diag.SeverityWarning, bad: true},
	{name: "EKS max at the default quota", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling.Max = 450 }, rule: RuleSpecAutoscaling},
	{name: "GKE disk 100 TB", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.DiskSizeGB = 100000 }, rule: RuleSpecRange, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].diskSizeGB"},
	{name: "EKS disk above gp3", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.DiskSizeGB = 16385 }, rule: RuleSpecRange, sev: diag.SeverityError, bad: true},
	{name: "EKS disk at gp3's limit", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.DiskSizeGB = 16384 }, rule: RuleSpecRange},
	{name: "EKS rollout above 100 nodes", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Rollout = &spec.Rollout{MaxUnavailable: &spec.IntOrPercent{Value: 101}}
	}, rule: RuleSpecRange, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].rollout.maxUnavailable"},
	{name: "EKS rollout 100%", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Rollout = &spec.Rollout{MaxUnavailable: &spec.IntOrPercent{Value: 100, Percent: true}}
	}, rule: RuleSpecRange},
	{name: "negative disk", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.DiskSizeGB = -1 }, rule: RuleSpecRange, sev: diag.SeverityError, bad: true},
	{name: "GKE time-sharing 49 clients", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: spec.SharingTimeSlicing, Replicas: 49}
	}, rule: RuleSpecRange, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].gpu.sharing.replicas"},
	{name: "GKE time-sharing 48 clients", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: spec.SharingTimeSlicing, Replicas: 48}
	}, rule: RuleSpecRange},
	{name: "region with a newline", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Region = "us-central1\"\n${x}" }, rule: RuleSpecFormat, sev: diag.SeverityError, bad: true, path: "spec.region"},
	{name: "GKE zonal location", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Region = "us-central1-a"
		p.Zones = []string{"us-central1-a"}
	}, rule: RuleSpecFormat},
	{name: "AWS Region name", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Region = "us-east" }, rule: RuleSpecFormat, sev: diag.SeverityError, bad: true},
	{name: "GovCloud region", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Region = "us-gov-west-1"
		p.Zones = []string{"us-gov-west-1a"}
	}, rule: RuleSpecFormat},
	{name: "zone of another region", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Zones = []string{"us-west-2a"} }, rule: RuleSpecFormat, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].zones[0]", msg: "not in region us-east-1"},
	{name: "zone with template", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Zones = []string{"${var.zone}"} }, rule: RuleSpecFormat, sev: diag.SeverityError, bad: true},
	{name: "AWS Local Zone", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Region = "us-west-2"
		p.Zones = []string{"us-west-2-lax-1a"}
	}, rule: RuleSpecFormat},
	{name: "EC2 reservation with quotes", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Capacity = "reservation"; p.Reservation = `cr-0123"x` }, rule: RuleSpecFormat, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].reservation"},
	{name: "GCE shared reservation", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity = "reservation"
		p.Reservation = "projects/other-project/reservations/l4-pool"
	}, rule: RuleSpecFormat},
	{name: "GCE reservation with a newline", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Capacity = "reservation"; p.Reservation = "res\nx" }, rule: RuleSpecFormat, sev: diag.SeverityError, bad: true},
	{name: "release version not a release", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.ReleaseVersion = "latest" }, rule: RuleSpecVersion, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].releaseVersion"},
	{name: "placement group with a newline", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.PlacementGroup = "pg\nx" }, rule: RuleSpecFormat, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].placementGroup"},
	{name: "maintenance window with a newline", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MaintenanceWindow = "Sat 02:00-06:00 UTC\n}" }, rule: RuleSpecFormat, sev: diag.SeverityWarning, bad: true},
	{name: "maintenance window", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MaintenanceWindow = "Sat-Sun 22:00-24:00 Europe/Berlin"
	}, rule: RuleSpecFormat},
	{name: "NCCL env name with '='", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_DEBUG=INFO": "1"} }, rule: RuleSpecFormat, sev: diag.SeverityError, bad: true, path: `spec.nodePools[0].nccl.env["NCCL_DEBUG=INFO"]`},
	{name: "toolkit env name with a newline", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator.Toolkit.Env = map[string]string{"A\nB": "x"}
	}, rule: RuleSpecFormat, sev: diag.SeverityError, bad: true, path: `spec.addons.gpuOperator.toolkit.env["A\nB"]`},
	{name: "instanceTypes on GKE", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g2-standard-8"}
	}, rule: RuleSpecProviderField, sev: diag.SeverityError, bad: true},
	{name: "GKE driver keyword on EKS", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Driver = "LATEST" }, rule: RuleSpecProviderField, sev: diag.SeverityError, bad: true},
	{name: "releaseChannel on EKS", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.ReleaseChannel = "REGULAR" }, rule: RuleSpecProviderField, sev: diag.SeverityWarning, bad: true},

	// CUDA <-> driver (exact drivers through a custom AMI).
	{name: "CUDA 12.7", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "12.7" }, rule: RuleCUDAUnknown, sev: diag.SeverityError, bad: true, path: "spec.cuda"},
	{name: "CUDA 12.10", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "12.10" }, rule: RuleCUDAUnknown, sev: diag.SeverityError, bad: true},
	{name: "CUDA newer than the matrix", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "14.0" }, rule: RuleUnknownFact, sev: diag.SeverityInfo, bad: true, path: "spec.cuda"},
	{name: "CUDA update not in the table", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "12.3.2" }, rule: RuleUnknownFact, sev: diag.SeverityInfo, bad: true, msg: "12.3 Update 1"},
	{name: "driver below 12.x floor", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "470.199.02"); cs.Spec.CUDA = "12.0" }, rule: RuleCUDADriverMin, sev: diag.SeverityError, bad: true},
	{name: "minor compat, numeric compare", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "535.54.03"); cs.Spec.CUDA = "12.2.2" }, rule: RuleCUDAMinorCompat, sev: diag.SeverityWarning, bad: true, msg: "535.104.05"},
	{name: "exact minimum", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "535.104.05"); cs.Spec.CUDA = "12.2.2" }, rule: RuleCUDAMinorCompat},
	{name: "driver 1000 runs everything", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "1000.1"); cs.Spec.CUDA = "13.2" }, rule: RuleCUDADriverMin},
	{name: "pool CUDA overrides spec CUDA", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "580.95.05"); p.CUDA = "13.1" }, rule: RuleCUDAMinorCompat, sev: diag.SeverityWarning, bad: true, path: "spec.nodePools[0].gpu.driver"},
	{name: "branch-only driver above the minimum", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "12.9" }, rule: RuleCUDAMinorCompat},
	{name: "13.4 needs R615", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "595.91.07"); cs.Spec.CUDA = "13.4" }, rule: RuleCUDAMinorCompat, sev: diag.SeverityWarning, bad: true, msg: "R615"},
	{name: "13.5 needs R620", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "580.95.05"); cs.Spec.CUDA = "13.5" }, rule: RuleCUDAMinorCompat, sev: diag.SeverityWarning, bad: true, msg: "R620"},
	{name: "13.5 on R620", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "620.70.06"); cs.Spec.CUDA = "13.5" }, rule: RuleCUDAMinorCompat},
	{name: "13.4 Update 1 needs R615", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "595.91.07"); cs.Spec.CUDA = "13.4.2" }, rule: RuleCUDAMinorCompat, sev: diag.SeverityWarning, bad: true, msg: "13.4 Update 1"},
	{name: "cuda-compat on a supported branch", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "580.173.02")
		cs.Spec.CUDA = "13.2"
		p.CUDACompat = "13.2"
	}, rule: RuleCUDAForwardCompat},
	{name: "cuda-compat covers the CUDA check", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "580.173.02")
		cs.Spec.CUDA = "13.2"
		p.CUDACompat = "13.2"
	}, rule: RuleCUDAMinorCompat},
	{name: "cuda-compat on an NFB", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "590.48.01")
		cs.Spec.CUDA = "13.2"
		p.CUDACompat = "13.2"
	}, rule: RuleCUDAForwardCompat, sev: diag.SeverityError, bad: true, msg: "New Feature Branch"},
	{name: "cuda-compat on a branch the matrix does not list", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "525.147.05")
		cs.Spec.CUDA = "13.0"
		p.CUDACompat = "13.0"
	}, rule: RuleCUDAForwardCompat, sev: diag.SeverityError, bad: true},
	{name: "cuda-compat not needed", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		custom(p, "595.91.07")
		cs.Spec.CUDA = "13.0"
		p.CUDACompat = "13.0"
	}, rule: RuleCUDAForwardCompat, sev: diag.SeverityWarning, bad: true, msg: "not needed"},
	{name: "cuda-compat older than the images", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		custom(p, "580.173.02")
		cs.Spec.CUDA = "13.2"
		p.CUDACompat = "13.1"
	}, rule: RuleCUDAForwardCompat, sev: diag.SeverityError, bad: true},

	// GPU <-> driver <-> CUDA.
	{name: "unknown GPU type on EKS: the instance type's GPU is judged", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Type = "RTX 9090" }, rule: RuleGPUUnknown, sev: diag.SeverityInfo, bad: true, msg: "L4"},
	{name: "unknown accelerator type on GKE", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Type = "nvidia-rtx-9090" }, rule: RuleGPUUnknown, sev: diag.SeverityError, bad: true},
	{name: "V100 on R595", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p3.2xlarge"; custom(p, "595.91.07") }, rule: RuleGPUDriverBranch, sev: diag.SeverityError, bad: true, msg: "R580"},
	{name: "V100 on R580", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p3.2xlarge"; custom(p, "580.95.05") }, rule: RuleGPUDriverBranch},
	{name: "G7 on the R580 AMI", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g7.12xlarge" }, rule: RuleGPUDriverBranch, sev: diag.SeverityError, bad: true, msg: "R595"},
	{name: "G6f on R595", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g6f.xlarge"; custom(p, "595.91.07") }, rule: RuleGPUDriverBranch, sev: diag.SeverityError, bad: true},
	{name: "B200 with 570.124.06", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p6-b200.48xlarge"
		custom(p, "570.124.06")
	}, rule: RuleGPUDriverBranch, sev: diag.SeverityError, bad: true, msg: "570.133.20"},
	{name: "H100 with R525 is no branch error", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "525.60.13")
		cs.Spec.CUDA = "12.0"
	}, rule: RuleGPUDriverBranch},
	{name: "H200 invents no minimum", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5e.48xlarge"
		custom(p, "535.309.01")
		cs.Spec.CUDA = "12.2"
	}, rule: RuleGPUDriverBranch},
	{name: "K80 with CUDA 12", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "n1-standard-8"
		p.GPU.Type = "nvidia-tesla-k80"
		cs.Spec.CUDA = "12.0"
	}, rule: RuleGPUArchCUDA, sev: diag.SeverityError, bad: true},
	{name: "L4 with CUDA 11.7 runs through PTX JIT", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "11.7" }, rule: RuleGPUArchCUDA, sev: diag.SeverityWarning, bad: true, msg: "11.8"},
	{name: "B200 proprietary modules", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p6-b200.48xlarge"
		p.GPU.KernelModules = "proprietary"
	}, rule: RuleGPUOpenModules, sev: diag.SeverityError, bad: true},
	{name: "B200 open modules", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p6-b200.48xlarge"
		p.GPU.KernelModules = "open"
	}, rule: RuleGPUOpenModules},
	{name: "open modules through the Operator", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p6-b200.48xlarge"
		p.OSImage = "AL2023_x86_64_STANDARD"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true), Version: "580.173.02", KernelModuleType: "proprietary"}}
	}, rule: RuleGPUOpenModules, sev: diag.SeverityError, bad: true, path: "spec.addons.gpuOperator.driver.kernelModuleType"},
	{name: "MIG on L4", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "1g.6gb"}
	}, rule: RuleMIGUnsupported, sev: diag.SeverityError, bad: true},
	{name: "MIG profile of another product", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-highgpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "7g.80gb"}
	}, rule: RuleMIGProfile, sev: diag.SeverityError, bad: true, msg: "7g.40gb"},
	{name: "MIG profile of the product", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "3g.40gb"}
	}, rule: RuleMIGProfile},
	{name: "MIG without a profile", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig"}
	}, rule: RuleMIGProfile, sev: diag.SeverityError, bad: true},
	{name: "MIG driver too old", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "525.60.13")
		cs.Spec.CUDA = "12.0"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "1g.10gb"}
	}, rule: RuleMIGDriverMin, sev: diag.SeverityError, bad: true, msg: "525.85.12"},
	{name: "R535 past EOL", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "535.309.01"); cs.Spec.CUDA = "12.2" }, rule: RuleDriverEOL, sev: diag.SeverityWarning, bad: true, msg: "June 2026"},
	{name: "R580 in support", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "580.173.02") }, rule: RuleDriverEOL},
	{name: "NFB in production", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "590.48.01") }, rule: RuleDriverNFBProd, sev: diag.SeverityWarning, bad: true},
	{name: "unknown branch", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "999.1") }, rule: RuleUnknownFact, sev: diag.SeverityInfo, bad: true, msg: "R999"},

	// Driver and device plugin owners.
	{name: "two drivers on an NVIDIA AMI", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true)}}
	}, rule: RuleDriverOwner, sev: diag.SeverityWarning, bad: true},
	{name: "no driver on a standard AMI", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "AL2023_x86_64_STANDARD" }, rule: RuleDriverOwner, sev: diag.SeverityError, bad: true},
	{name: "Operator driver on a standard AMI", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "AL2023_x86_64_STANDARD"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true)}}
	}, rule: RuleDriverOwner},
	{name: "GKE LATEST on Ubuntu", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "UBUNTU_CONTAINERD" }, rule: RuleGKEDriverOption, sev: diag.SeverityError, bad: true},
	{name: "GKE DEFAULT on Ubuntu", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "UBUNTU_CONTAINERD"
		p.GPU.Driver = "DEFAULT"
	}, rule: RuleGKEDriverOption},
	{name: "GKE driver unset before 1.30.1-gke.1156000", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.30.1-gke.1155000"
		p.GPU.Driver = ""
	}, rule: RuleGKEDriverOption, sev: diag.SeverityWarning, bad: true, msg: "installs no driver before GKE 1.30.1-gke.1156000"},
	{name: "GKE driver unset installs DEFAULT", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Driver = "" }, rule: RuleGKEDriverOption},
	{name: "GKE past standard support", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "1.34" }, rule: RuleGKEK8sSupport, sev: diag.SeverityWarning, bad: true, path: "spec.kubernetesVersion"},
	{name: "GKE exact driver on COS", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Driver = "580.95.05" }, rule: RuleGKEDriverOption, sev: diag.SeverityError, bad: true},
	{name: "GKE exact driver via the Operator on Ubuntu", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "UBUNTU_CONTAINERD"
		p.GPU.Driver = "580.173.02"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true), Version: "580.173.02"},
			Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}, rule: RuleGKEDriverOption},
	{name: "GKE plugin plus Helm plugin", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Provider = "helm" }, rule: RulePluginConflict, sev: diag.SeverityError, bad: true},
	{name: "GKE label without INSTALLATION_DISABLED", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "helm"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
	}, rule: RulePluginConflict, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].gpu.driver"},
	{name: "GKE label and INSTALLATION_DISABLED", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "helm"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		p.GPU.Driver = "INSTALLATION_DISABLED"
	}, rule: RulePluginConflict},
	{name: "GKE-managed pool beside a GPU Operator pool", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		// gpuctl labels the GKE-managed pool nvidia.com/gpu.deploy.operands=false:
		// the Operator's plugin runs on its own pool only.
		p.DevicePlugin = &spec.DevicePlugin{Provider: "gke-managed"}
		op := *p
		op.Name, op.OSImage, op.DevicePlugin = "ubuntu-operator", "UBUNTU_CONTAINERD", nil
		op.GPU.Driver = "INSTALLATION_DISABLED"
		op.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0",
			Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
		cs.Spec.NodePools = append(cs.Spec.NodePools, op)
	}, rule: RulePluginConflict},
	{name: "GPU Operator plugin with no pool of its own", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0",
			Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}, rule: RulePluginConflict, sev: diag.SeverityError, bad: true},
	{name: "GKE plugin disabled, none other", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
	}, rule: RulePluginMissing, sev: diag.SeverityError, bad: true},
	{name: "AL2023 without plugin", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{} }, rule: RulePluginMissing, sev: diag.SeverityError, bad: true},
	{name: "Bottlerocket built-in plugin", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
		cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{}
	}, rule: RulePluginMissing},
	{name: "pool override of the plugin", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
		p.DevicePlugin = &spec.DevicePlugin{Provider: "bottlerocket"}
	}, rule: RulePluginConflict},
	{name: "bottlerocket provider on GKE", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Provider = "bottlerocket" }, rule: RulePluginProvider, sev: diag.SeverityError, bad: true},
	{name: "gpu-operator provider without the Operator", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator" }, rule: RulePluginProvider, sev: diag.SeverityError, bad: true},
	{name: "MPS with an old plugin", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Version = "0.14.5"
		p.GPU.Sharing = spec.Sharing{Strategy: "mps", Replicas: 4}
	}, rule: RulePluginVersion, sev: diag.SeverityWarning, bad: true},
	{name: "MPS with a current plugin", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "mps", Replicas: 4}
	}, rule: RulePluginVersion},

	// GPU Operator.
	{name: "Operator driver on COS", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Driver = "INSTALLATION_DISABLED"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true)}}
	}, rule: RuleOperatorCOS, sev: diag.SeverityError, bad: true},
	{name: "Operator outside its CSP range", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.10.1"}
		cs.Spec.KubernetesVersion = "1.35"
	}, rule: RuleOperatorK8s, sev: diag.SeverityWarning, bad: true, msg: "range of v25.10.0"},
	{name: "Operator inside its range", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0"}
	}, rule: RuleOperatorK8s},
	{name: "Operator toolkit on GKE 1.33+", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)}}
	}, rule: RuleOperatorGKEKit, sev: diag.SeverityError, bad: true},
	{name: "Operator toolkit on GKE 1.33+ with the workaround", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)},
			Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}, rule: RuleOperatorGKEKit},
	{name: "Operator too old for GKE", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.29"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v23.9.2", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)}}
	}, rule: RuleOperatorGKEVer, sev: diag.SeverityError, bad: true},
	{name: "Operator out of support", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.3.4"}
	}, rule: RuleOperatorEOL, sev: diag.SeverityWarning, bad: true},
	{name: "Operator deprecated line", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.3.3"}
	}, rule: RuleOperatorEOL, sev: diag.SeverityWarning, bad: true, msg: "deprecated"},
	{name: "Operator driver not in its matrix", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "AL2023_x86_64_STANDARD"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true), Version: "580.95.05"}}
	}, rule: RuleOperatorDriver, sev: diag.SeverityWarning, bad: true},

	// GPU Operator chart defaults: driver.enabled unset is the chart's true.
	{name: "Operator driver left at the chart default on the AL2023 NVIDIA AMI", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Toolkit: spec.OperatorToolkit{Enabled: ptr(false)}}
	}, rule: RuleDriverOwner, sev: diag.SeverityWarning, bad: true, path: "spec.addons.gpuOperator.driver.enabled", msg: "chart default of v26.7.0 is true"},
	{name: "Operator driver off on the AL2023 NVIDIA AMI", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(false)}, Toolkit: spec.OperatorToolkit{Enabled: ptr(false)}}
	}, rule: RuleDriverOwner},
	// A pool the platform owns is labelled out of the Operator's operands
	// when the Operator has pools of its own ...
	{name: "Operator driver at the chart default on Bottlerocket, labelled out of the operands", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{}
		p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0"}
		op := *p
		op.Name, op.OSImage, op.DevicePlugin = "operator", "AL2023_x86_64_STANDARD", &spec.DevicePlugin{Provider: "gpu-operator"}
		cs.Spec.NodePools = append(cs.Spec.NodePools, op)
	}, rule: RuleDriverOwner},
	// ... but an Operator with no pool of its own is judged as running on
	// every pool: two drivers on the Bottlerocket NVIDIA AMI.
	{name: "Operator driver at the chart default on Bottlerocket, the Operator's only pool", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{}
		p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0"}
	}, rule: RuleDriverOwner, sev: diag.SeverityWarning, bad: true, msg: "detects the preinstalled driver"},
	{name: "Operator driver at the chart default on GKE COS", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Driver = "INSTALLATION_DISABLED"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}, rule: RuleOperatorCOS, sev: diag.SeverityError, bad: true, msg: "chart default of v26.7.0 is true"},
	{name: "Operator driver at the chart default next to GKE's Ubuntu driver", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "UBUNTU_CONTAINERD"
		p.GPU.Driver = "DEFAULT"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.3.2", Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}, rule: RuleDriverOwner, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].gpu.driver", msg: "chart default of v26.3.2 is true"},
	{name: "Operator on GKE pools GKE's plugin owns", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)},
			Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
		op := *p
		op.Name, op.OSImage, op.GPU.Driver = "operator", "UBUNTU_CONTAINERD", "INSTALLATION_DISABLED"
		op.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		op.DevicePlugin = &spec.DevicePlugin{Provider: "helm"}
		cs.Spec.NodePools = append(cs.Spec.NodePools, op)
	}, rule: RuleOperatorCOS},
	{name: "Operator with default values on a GKE COS pool, its only pool", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)},
			Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}, rule: RuleOperatorCOS, sev: diag.SeverityError, bad: true, msg: "cannot install the driver"},
	{name: "Operator on Amazon Linux 2", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		p.OSImage = "AL2_x86_64_GPU"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.3.2", Driver: spec.OperatorDriver{Enabled: ptr(false)}, Toolkit: spec.OperatorToolkit{Enabled: ptr(false)}}
	}, rule: RuleOperatorAL2, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].osImage", msg: "glibc 2.26"},
	{name: "AL2 with the device plugin only", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		p.OSImage = "AL2_x86_64_GPU"
	}, rule: RuleOperatorAL2},
	{name: "Operator toolkit at the chart default on the AL2023 NVIDIA AMI", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(false)}}
	}, rule: RuleOperatorToolkit, sev: diag.SeverityWarning, bad: true, msg: "chart default of v26.7.0 is true"},
	{name: "Operator toolkit off on the AL2023 NVIDIA AMI", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(false)}, Toolkit: spec.OperatorToolkit{Enabled: ptr(false)}}
	}, rule: RuleOperatorToolkit},

	// Sharing and labels.
	{name: "time-slicing with 1 replica", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "time-slicing", Replicas: 1}
	}, rule: RuleSharingReplicas, sev: diag.SeverityError, bad: true},
	{name: "time-slicing with 2 replicas", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "time-slicing", Replicas: 2}
	}, rule: RuleSharingReplicas},
	{name: "MPS on MIG", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mps", Replicas: 2, MIGProfile: "1g.10gb"}
	}, rule: RuleSharingMPSMIG, sev: diag.SeverityError, bad: true},
	{name: "time-sliced MIG", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "time-slicing", Replicas: 2, MIGProfile: "1g.10gb"}
	}, rule: RuleSharingMPSMIG},
	{name: "replicas without a strategy", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Sharing = spec.Sharing{Replicas: 4} }, rule: RuleSharingFields, sev: diag.SeverityWarning, bad: true},
	{name: "GFD label set by hand", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Labels = map[string]string{"nvidia.com/gpu.product": "NVIDIA-L4"}
	}, rule: RuleLabelGFDManaged, sev: diag.SeverityWarning, bad: true},
	{name: "gpu.present may be set by hand", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Labels = map[string]string{"nvidia.com/gpu.present": "true"}
	}, rule: RuleLabelGFDManaged},

	// Machine catalogue.
	{name: "EKS type on GKE", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g5.xlarge" }, rule: RuleMachineUnknown, sev: diag.SeverityError, bad: true, msg: "EKS machine type"},
	{name: "made-up type", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p5.48xl" }, rule: RuleMachineUnknown, sev: diag.SeverityError, bad: true, msg: "p5.48xlarge"},
	{name: "g2-standard-24 has 2 L4", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g2-standard-24"; p.GPU.Count = 1 }, rule: RuleMachineAccel, sev: diag.SeverityError, bad: true, msg: "2 x nvidia-l4"},
	{name: "g2-standard-24 with 2 L4", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "g2-standard-24"
		p.GPU.Count = 2
		p.GPU.Type = "nvidia-l4"
	}, rule: RuleMachineAccel},
	{name: "A3 Mega accelerator name", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a3-megagpu-8g"
		p.GPU.Type = "nvidia-h100-80gb"
	}, rule: RuleMachineAccel, sev: diag.SeverityError, bad: true, msg: "nvidia-h100-mega-80gb"},
	{name: "a2-ultragpu takes nvidia-a100-80gb", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-2g"
		p.GPU.Type = "nvidia-tesla-a100"
	}, rule: RuleMachineAccel, sev: diag.SeverityError, bad: true},
	{name: "product name on GKE", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "a3-highgpu-8g"; p.GPU.Type = "H100" }, rule: RuleMachineAccel},
	{name: "N1 with T4", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "n1-standard-8"
		p.GPU.Type = "nvidia-tesla-t4"
		p.GPU.Count = 2
	}, rule: RuleMachineAccel},
	{name: "N1 with 3 T4", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "n1-standard-8"
		p.GPU.Type = "nvidia-tesla-t4"
		p.GPU.Count = 3
	}, rule: RuleMachineAccel, sev: diag.SeverityError, bad: true},
	{name: "N1 without an accelerator", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "n1-standard-8" }, rule: RuleMachineAccel, sev: diag.SeverityError, bad: true},
	{name: "EKS GPU type mismatch", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Type = "A10G" }, rule: RuleMachineAccel, sev: diag.SeverityError, bad: true},
	{name: "EKS GPU family name", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p4de.24xlarge"; p.GPU.Type = "A100" }, rule: RuleMachineAccel},
	{name: "spot p6e-gb200", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p6e-gb200.36xlarge"
		p.OSImage = "AL2023_ARM_64_NVIDIA"
		p.Capacity = "spot"
	}, rule: RuleMachineCapacity, sev: diag.SeverityError, bad: true},
	{name: "mixed GPU models", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g6.xlarge", "g5.xlarge"}
	}, rule: RulePoolMixed, sev: diag.SeverityWarning, bad: true, msg: "L4 on g6.xlarge; A10G on g5.xlarge"},
	{name: "Karpenter-style p5 and p5e: H100 and H200", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"p5.48xlarge", "p5e.48xlarge"}
	}, rule: RulePoolMixed, sev: diag.SeverityWarning, bad: true, msg: "H200 on p5e.48xlarge"},
	{name: "p4d and p4de declared as any A100", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"p4d.24xlarge", "p4de.24xlarge"}
		p.GPU.Type = "A100"
	}, rule: RulePoolMixed, sev: diag.SeverityInfo, bad: true, msg: "takes any A100"},
	{name: "p4d and p4de without gpu.type", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"p4d.24xlarge", "p4de.24xlarge"}
	}, rule: RulePoolMixed, sev: diag.SeverityWarning, bad: true, msg: "gpu.type: A100"},
	{name: "g6 sizes with 1, 4 and 8 GPUs", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g6.xlarge", "g6.12xlarge", "g6.48xlarge"}
	}, rule: RulePoolMixed},
	{name: "g6 sizes, EFA off: EFA cards do not matter", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g6.xlarge", "g6.8xlarge"}
	}, rule: RulePoolMixed},
	{name: "EFA on types with different EFA cards", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"p5.4xlarge", "p5.48xlarge"}
		p.EFA.Enabled = true
		p.NCCL.Plugin = "aws-ofi-nccl"
	}, rule: RulePoolMixed, sev: diag.SeverityError, bad: true, msg: "EFA card(s)"},
	{name: "mixed EFA card counts, EFA on", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"p4d.24xlarge", "p5.48xlarge"}
		p.EFA.Enabled = true
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "efa"}}
	}, rule: RulePoolMixed, sev: diag.SeverityError, bad: true},
	{name: "mixed architectures", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g5g.xlarge", "g4dn.xlarge"}
	}, rule: RulePoolMixed, sev: diag.SeverityError, bad: true},
	{name: "same shape", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g6.xlarge", "g6.2xlarge", "g6.4xlarge"}
	}, rule: RulePoolMixed},
	{name: "gpu.count judged per instance type", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g6.xlarge", "g6.12xlarge"}
		p.GPU.Count = 1
	}, rule: RuleMachineAccel, sev: diag.SeverityError, bad: true, msg: "g6.12xlarge has 4 x L4, not 1"},

	// EKS AMIs and versions.
	{name: "AL2 on 1.33", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.33"
		p.OSImage = "AL2_x86_64_GPU"
	}, rule: RuleEKSAMIK8s, sev: diag.SeverityError, bad: true},
	{name: "AL2 on 1.32 is only past support", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		p.OSImage = "AL2_x86_64_GPU"
	}, rule: RuleEKSAMIK8s},
	{name: "AL2 past end of support", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		p.OSImage = "AL2_x86_64_GPU"
	}, rule: RuleEKSAMIEOL, sev: diag.SeverityWarning, bad: true},
	{name: "cluster placement group over two zones", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.PlacementGroup, p.Zones = "cluster", []string{"us-east-1a", "us-east-1b"}
	}, rule: RuleEKSSingleAZ, sev: diag.SeverityError, bad: true},
	{name: "Capacity Block in one zone", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity, p.Zones = spec.CapacityCapacityBlock, []string{"us-east-1a"}
	}, rule: RuleEKSSingleAZ},
	{name: "x86 AMI on Graviton", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g5g.2xlarge" }, rule: RuleEKSAMIArch, sev: diag.SeverityError, bad: true},
	{name: "ARM AMI on Graviton", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "g5g.2xlarge"
		p.OSImage = "AL2023_ARM_64_NVIDIA"
	}, rule: RuleEKSAMIArch},
	{name: "Windows AMI", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "WINDOWS_CORE_2022_x86_64" }, rule: RuleEKSAMIGPU, sev: diag.SeverityError, bad: true},
	{name: "EKS 1.29, older than the matrix, past extended support", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "1.29" }, rule: RuleEKSK8sSupport, sev: diag.SeverityWarning, bad: true, msg: "older than 1.31, which ended extended support on 2026-11-26"},
	{name: "EKS 1.31 past extended support", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "1.31" }, rule: RuleEKSK8sSupport, sev: diag.SeverityWarning, bad: true, msg: "ended extended support"},

	// NCCL and EFA.
	{name: "IB_DISABLE on EFA is irrelevant", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.NCCL.Env = map[string]string{"NCCL_IB_DISABLE": "1"}
	}, rule: RuleNCCLIBDisable, sev: diag.SeverityInfo, bad: true},
	{name: "IB_DISABLE on RoCE", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a4-highgpu-8g"
		p.NCCL = spec.NCCL{Plugin: "gib", Env: map[string]string{"NCCL_IB_DISABLE": "1"}}
	}, rule: RuleNCCLIBDisable, sev: diag.SeverityWarning, bad: true},
	{name: "NCCL_NET=Socket on A3 Mega", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a3-megagpu-8g"
		p.NCCL = spec.NCCL{Plugin: "tcpxo", Env: map[string]string{"NCCL_NET": "Socket"}}
	}, rule: RuleNCCLNetSocket, sev: diag.SeverityWarning, bad: true},
	{name: "IB_HCA prefix", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_IB_HCA": "mlx5_0:1,mlx5_1:1"}
	}, rule: RuleNCCLPrefix, sev: diag.SeverityWarning, bad: true, msg: "mlx5_1"},
	{name: "IB_HCA exact", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_IB_HCA": "=mlx5_0,mlx5_1"}
	}, rule: RuleNCCLPrefix},
	{name: "SOCKET_IFNAME deliberate prefix", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_SOCKET_IFNAME": "^docker,lo"}
	}, rule: RuleNCCLPrefix},
	{name: "EFA without the plugin", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA.Enabled = true
		p.NCCL.Env = map[string]string{"FI_PROVIDER": "efa"}
	}, rule: RuleNCCLEFAPlugin, sev: diag.SeverityInfo, bad: true, path: "spec.nodePools[0].nccl.plugin", msg: "usual EFA training images carry"},
	{name: "EFA with another libfabric provider", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA.Enabled = true
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "tcp"}}
	}, rule: RuleNCCLEFAPlugin, sev: diag.SeverityWarning, bad: true},
	{name: "EFA done right", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA.Enabled = true
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "efa"}}
	}, rule: RuleNCCLEFAPlugin},
	{name: "TCPX plugin on A3 Mega", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "a3-megagpu-8g"; p.NCCL.Plugin = "tcpx" }, rule: RuleNCCLGCPTransport, sev: diag.SeverityWarning, bad: true, msg: "tcpxo"},
	{name: "training on A3 High without TCPX", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a3-highgpu-8g"
		p.Role = "training"
		p.AutoUpgrade = ptr(false)
	}, rule: RuleNCCLGCPTransport, sev: diag.SeverityWarning, bad: true},
	{name: "gIB on A3 Ultra", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "a3-ultragpu-8g"; p.NCCL.Plugin = "gib" }, rule: RuleNCCLGCPTransport},
	{name: "P2P disabled", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_P2P_DISABLE": "1"} }, rule: RuleNCCLP2PDisable, sev: diag.SeverityWarning, bad: true},
	{name: "NCCL_DEBUG=INFO", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_DEBUG": "INFO"} }, rule: RuleNCCLDebug, sev: diag.SeverityInfo, bad: true},
	{name: "NCCL typo", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_SOCKET_IFNAM": "=eth0"}
	}, rule: RuleNCCLUnknownEnv, sev: diag.SeverityWarning, bad: true, msg: "NCCL_SOCKET_IFNAME"},
	{name: "NCCL plugin variable", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_OFI_USE_GDRCOPY": "1"}
	}, rule: RuleNCCLUnknownEnv},
	{name: "EFA on g6.xlarge", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.EFA.Enabled = true }, rule: RuleEFAUnsupported, sev: diag.SeverityError, bad: true},
	{name: "more EFA interfaces than cards", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5en.48xlarge"
		p.EFA = spec.EFA{Enabled: true, Interfaces: 32}
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "efa"}}
	}, rule: RuleEFAInterfaces, sev: diag.SeverityError, bad: true, msg: "16 network cards"},
	{name: "multi-node training without EFA", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p4d.24xlarge"; p.Role = "training" }, rule: RuleEFADisabled, sev: diag.SeverityWarning, bad: true},
	{name: "single-node training without EFA", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p4d.24xlarge"
		p.Role = "training"
		p.Autoscaling.Max = 1
	}, rule: RuleEFADisabled},

	// Policy: only what the policy in force asks.
	{name: "no policy, no GPU taint", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Taints = nil }, rule: RulePolicyTaint},
	{name: "no policy, no tags", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Tags = nil }, rule: RulePolicyCostTags},
	{name: "no policy, spot without max", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Capacity = "spot"; p.Autoscaling.Max = 0 }, rule: RulePolicySpotMax},
	{name: "no policy, training pool auto-upgrades", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Role = "training" }, rule: RulePolicyUpgrade},
	{name: "required taint missing", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints = nil
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu=present:NoSchedule"}}
	}, rule: RulePolicyTaint, sev: diag.SeverityWarning, bad: true, path: "spec.nodePools[0].taints"},
	{name: "required taint with another effect", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints[0].Effect = "PreferNoSchedule"
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu:NoSchedule"}}
	}, rule: RulePolicyTaint, sev: diag.SeverityWarning, bad: true, path: "spec.nodePools[0].taints[0]"},
	{name: "required taint without a value matches any value", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu:NoSchedule"}}
	}, rule: RulePolicyTaint},
	{name: "GKE adds the GPU taint itself", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints = nil
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu=present:NoSchedule"}}
	}, rule: RulePolicyTaint},
	{name: "GKE: other required taints still count", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints = nil
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu=present:NoSchedule", "example.com/dedicated=ml:NoSchedule"}}
	}, rule: RulePolicyTaint, sev: diag.SeverityWarning, bad: true, msg: "example.com/dedicated"},
	{name: "spot pool without max under a spot share", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity = "spot"
		p.Autoscaling.Max = 0
		cs.Spec.Policy = &spec.Policy{MaxSpotShare: ptr(0.5)}
	}, rule: RulePolicySpotMax, sev: diag.SeverityWarning, bad: true, path: "spec.nodePools[0].autoscaling.max"},
	{name: "spot share above the maximum", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		q := *p
		q.Name, q.Capacity, q.Autoscaling.Max = "spot", "spot", 8
		cs.Spec.NodePools = append(cs.Spec.NodePools, q)
		cs.Spec.Policy = &spec.Policy{MaxSpotShare: ptr(0.5)}
	}, rule: RulePolicySpotMax, sev: diag.SeverityWarning, bad: true, msg: "67%"},
	{name: "spot share within the maximum", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		q := *p
		q.Name, q.Capacity, q.Autoscaling.Max = "spot", "spot", 4
		cs.Spec.NodePools = append(cs.Spec.NodePools, q)
		cs.Spec.Policy = &spec.Policy{MaxSpotShare: ptr(0.5)}
	}, rule: RulePolicySpotMax},
	{name: "spot share 1 allows unbounded spot", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity = "spot"
		p.Autoscaling.Max = 0
		cs.Spec.Policy = &spec.Policy{MaxSpotShare: ptr(1.0)}
	}, rule: RulePolicySpotMax},
	{name: "required tags", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		delete(cs.Spec.Tags, "team")
		cs.Spec.Policy = &spec.Policy{RequiredTags: []string{"cost-center", "team"}}
	}, rule: RulePolicyCostTags, sev: diag.SeverityWarning, bad: true, msg: "team"},
	{name: "required tags present", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Policy = &spec.Policy{RequiredTags: []string{"cost-center", "team"}}
	}, rule: RulePolicyCostTags},
	{name: "GKE training pool auto-upgrades under a hold policy", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(true)}
	}, rule: RulePolicyUpgrade, sev: diag.SeverityWarning, bad: true},
	{name: "hold policy false", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(false)}
	}, rule: RulePolicyUpgrade},
	{name: "GKE training pool autoUpgrade false without a channel", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		p.AutoUpgrade = ptr(false)
		cs.Spec.ReleaseChannel = "UNSPECIFIED"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(true)}
	}, rule: RulePolicyUpgrade},
	{name: "release channel with a maintenance window", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		p.MaintenanceWindow = "Sat 02:00-06:00 UTC"
		cs.Spec.ReleaseChannel = "REGULAR"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(true)}
	}, rule: RulePolicyUpgrade},
	{name: "EKS training pools never auto-upgrade", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(true)}
	}, rule: RulePolicyUpgrade},
	{name: "an empty requiredTags requires no tags", base: eksBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Tags = nil
		cs.Spec.Policy = &spec.Policy{RequiredTags: []string{}}
	}, rule: RulePolicyCostTags},

	// GKE upgrade settings (any pool, policy or not).
	{name: "GKE autoUpgrade false, release channel unset (REGULAR by default)", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.AutoUpgrade = ptr(false) }, rule: RuleSpecProviderField, sev: diag.SeverityWarning, bad: true, path: "spec.nodePools[0].autoUpgrade", msg: "spec.releaseChannel is not set"},
	{name: "autoUpgrade false in a release channel", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.AutoUpgrade = ptr(false)
		cs.Spec.ReleaseChannel = "REGULAR"
	}, rule: RuleSpecProviderField, sev: diag.SeverityError, bad: true, path: "spec.nodePools[0].autoUpgrade"},
	{name: "two GKE maintenance windows", base: gkeBase, mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MaintenanceWindow = "Sat 02:00-06:00 UTC"
		q := *p
		q.Name = "other"
		q.MaintenanceWindow = "Sun 02:00-06:00 UTC"
		cs.Spec.NodePools = append(cs.Spec.NodePools, q)
	}, rule: RuleSpecProviderField, sev: diag.SeverityWarning, bad: true, path: "spec.nodePools[1].maintenanceWindow"},
}

// custom gives a pool a custom AMI with a preinstalled driver.
func custom(p *spec.NodePool, driver string) {
	p.OSImage = "CUSTOM"
	p.GPU.Driver = driver
}

func TestRules(t *testing.T) {
	fired := map[string]bool{}
	for _, c := range ruleCases {
		t.Run(c.name, func(t *testing.T) {
			if _, ok := LookupRule(c.rule); !ok {
				t.Fatalf("unknown rule %s", c.rule)
			}
			cs := c.base()
			c.mod(cs, &cs.Spec.NodePools[0])
			fs := Validate(cs, Options{AsOf: asOf20261129})
			var got []diag.Finding
			for _, f := range fs {
				if f.Rule == c.rule {
					got = append(got, f)
				}
				if f.Path == "" || f.Message == "" || f.Fix == "" || f.Sources == nil {
					t.Errorf("incomplete finding %+v", f)
				}
				if r, _ := LookupRule(f.Rule); !r.Emits(f.Severity) {
					t.Errorf("%s reported %s, which the rule does not declare (Severity, Also): %s", f.Rule, f.Severity, f.Message)
				}
			}
			if !c.bad {
				for _, f := range got {
					if f.Severity != diag.SeverityInfo {
						t.Errorf("unexpected %s %s at %s: %s", f.Severity, f.Rule, f.Path, f.Message)
					}
				}
				return
			}
			fired[c.rule] = true
			for _, f := range got {
				if f.Severity == c.sev && (c.path == "" || f.Path == c.path) && strings.Contains(f.Message+" "+f.Fix, c.msg) {
					return
				}
			}
			t.Errorf("want %s %s (path %q, message with %q), got:\n%s", c.sev, c.rule, c.path, c.msg, dump(fs))
		})
	}
	// Every spec rule has a failing case here or in the case table.
	for _, c := range cases {
		fired[c.rule] = true
	}
	for _, r := range Rules() {
		switch r.ID {
		case RuleWaiverExpired, RuleWaiverInvalid:
			continue // TestApplyWaivers
		case RuleGenDaemonSetToleration, RuleGenDaemonSetSelector, RuleGenKueueResource, RuleGenDevicePluginOwner:
			continue // generation-time rules: internal/helmgen TestCheckRules
		case RuleGenChartVersion, RuleGenBuild:
			continue // document pipeline: internal/check TestDocument*
		case RuleDataStale:
			continue // depends on the date checked at: TestDataStale
		}
		if !fired[r.ID] {
			t.Errorf("rule %s has no failing test case", r.ID)
		}
	}
}

func TestCheck(t *testing.T) {
	at := Options{AsOf: asOf20261129}
	for _, c := range []struct {
		q    Query
		rule string
		sev  diag.Severity
	}{
		{Query{GPU: "H100", Driver: "535.129.03", CUDA: "12.4"}, RuleCUDAMinorCompat, diag.SeverityWarning},
		{Query{GPU: "H100", Driver: "535.129.03", CUDA: "12.4"}, RuleDriverEOL, diag.SeverityWarning},
		{Query{GPU: "GH200", KernelModules: "proprietary"}, RuleGPUOpenModules, diag.SeverityError},
		{Query{GPU: "RTX 4090", Driver: "535.309.01", CUDA: "12.8", CUDACompat: "12.8"}, RuleCUDAForwardCompat, diag.SeverityError},
		{Query{GPU: "L4", MIGProfile: "1g.6gb"}, RuleMIGUnsupported, diag.SeverityError},
		{Query{GPU: "nope"}, RuleGPUUnknown, diag.SeverityError},
		{Query{Driver: "x.y"}, RuleSpecVersion, diag.SeverityError},
		{Query{CUDA: "12.7"}, RuleCUDAUnknown, diag.SeverityError},
	} {
		fs := Check(c.q, at)
		if !hasFinding(fs, c.rule, c.sev) {
			t.Errorf("Check(%+v): want %s %s, got:\n%s", c.q, c.sev, c.rule, dump(fs))
		}
	}
	if fs := Check(Query{GPU: "H100", Driver: "580.173.02", CUDA: "12.4"}, at); len(fs) != 0 {
		t.Errorf("a good combination has findings:\n%s", dump(fs))
	}
	fs := Check(Query{GPU: "H100", Driver: "535.129.03", CUDA: "12.4"}, at)
	for _, f := range fs {
		if f.Path != "driver" && f.Path != "cuda" && f.Path != "gpu" {
			t.Errorf("Check finding path %q", f.Path)
		}
	}
}

func TestValidateNil(t *testing.T) {
	if fs := Validate(nil, Options{}); fs == nil || len(fs) != 0 {
		t.Errorf("Validate(nil) = %v", fs)
	}
}

// Options.Policy is the --policy default; spec.policy overrides it field by
// field.
func TestPolicyOverride(t *testing.T) {
	cs := eksBase()
	cs.Spec.Tags, cs.Spec.NodePools[0].Taints = nil, nil
	org := &spec.Policy{RequiredTags: []string{"team"}, RequiredTaints: []string{"nvidia.com/gpu=present:NoSchedule"}}
	fs := Validate(cs, Options{AsOf: asOf20261129, Policy: org})
	if !hasFinding(fs, RulePolicyCostTags, diag.SeverityWarning) || !hasFinding(fs, RulePolicyTaint, diag.SeverityWarning) {
		t.Fatalf("org policy alone:\n%s", dump(fs))
	}
	cs.Spec.Policy = &spec.Policy{RequiredTags: []string{}}
	fs = Validate(cs, Options{AsOf: asOf20261129, Policy: org})
	if hasFinding(fs, RulePolicyCostTags, "") || !hasFinding(fs, RulePolicyTaint, diag.SeverityWarning) {
		t.Fatalf("spec.policy overriding requiredTags:\n%s", dump(fs))
	}
}

func TestRulesCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.ID] {
			t.Errorf("duplicate rule %s", r.ID)
		}
		seen[r.ID] = true
		if r.Title == "" || r.Summary == "" || r.Long == "" || r.Fix == "" {
			t.Errorf("rule %s lacks title, summary, long or fix", r.ID)
		}
		switch r.Severity {
		case diag.SeverityError, diag.SeverityWarning, diag.SeverityInfo:
		default:
			t.Errorf("rule %s severity %q", r.ID, r.Severity)
		}
	}
	if r, ok := LookupRule("cuda-driver-min"); !ok || r.ID != RuleCUDADriverMin {
		t.Error("LookupRule is not case-insensitive")
	}
	if got := NearestRules("CUDA-DRIVER-MINIMUM", 1); len(got) != 1 || got[0] != RuleCUDADriverMin {
		t.Errorf("NearestRules = %v", got)
	}
}
