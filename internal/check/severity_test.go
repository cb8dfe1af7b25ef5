package check

import (
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// The severity table: one case per rule and per severity the rule declares
// (rules.Rule.Severities), each a minimal change to a clean spec (or a
// matrix Query, or for the generation-time guards a spec changed after its
// layers were built) that makes the rule report that severity.
// TestSeverityCases walks rules.Rules(), so a new rule, or a new severity
// of an existing rule, fails it until its row is here.
//
// Adding a case is one row:
//
//	{matrix.RuleX, diag.SeverityWarning, "what the case is", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { ... })},
//
// eks and gke change a clean spec of that provider (p is its one pool);
// withPolicy adds a --policy default; query asks `gpuctl matrix check`;
// generating judges for `gpuctl generate`; edited changes the spec after
// its layers were built (a hand edit of the generated files).
var severityCases = []severityCase{
	// Spec shape.
	{rules.RuleSpecRequired, diag.SeverityError, "region missing", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Region = "" })},
	{rules.RuleSpecRequired, diag.SeverityInfo, "kubernetesVersion missing", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "" })},
	{rules.RuleSpecEnum, diag.SeverityError, "role misspelt", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Role = "trainig" })},
	{rules.RuleSpecVersion, diag.SeverityError, "Kubernetes version", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "v1.33-eks" })},
	{rules.RuleSpecLabel, diag.SeverityError, "label key", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Labels = map[string]string{"gpu type": "l4"} })},
	{rules.RuleSpecTaint, diag.SeverityError, "Terraform's effect spelling", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Taints[0].Effect = "NO_SCHEDULE" })},
	{rules.RuleSpecName, diag.SeverityError, "GKE pool name", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Name = "Train_H100" })},
	{rules.RuleSpecCloudTags, diag.SeverityError, "GCP label key", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Tags = map[string]string{"Cost.Center": "ml"} })},
	{rules.RuleSpecNetwork, diag.SeverityError, "egress CIDR without a prefix", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Network.EgressCIDRs = []string{"10.20.0.0"} })},
	{rules.RuleSpecReference, diag.SeverityError, "team pool misspelt", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Teams = []spec.Team{{Name: "ml", Pools: []string{p.Name + "x"}}}
	})},
	{rules.RuleSpecReference, diag.SeverityWarning, "team pool listed twice", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Teams = []spec.Team{{Name: "ml", Pools: []string{p.Name, p.Name}}}
	})},
	{rules.RuleSpecAutoscaling, diag.SeverityError, "min above max", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling = spec.Autoscaling{Min: 5, Max: 2} })},
	{rules.RuleSpecAutoscaling, diag.SeverityWarning, "max above EKS's default node group quota", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling = spec.Autoscaling{Max: 600} })},
	{rules.RuleSpecRange, diag.SeverityError, "GKE disk below 10 GB", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.DiskSizeGB = 5 })},
	{rules.RuleSpecFormat, diag.SeverityError, "AWS Region written as its name", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Region = "US East (N. Virginia)" })},
	{rules.RuleSpecFormat, diag.SeverityWarning, "maintenance window without a time range", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MaintenanceWindow = "weekends" })},
	{rules.RuleSpecProviderField, diag.SeverityError, "autoUpgrade false in a release channel", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.ReleaseChannel = "REGULAR"
		p.AutoUpgrade = ptr(false)
	})},
	{rules.RuleSpecProviderField, diag.SeverityWarning, "releaseChannel on EKS", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.ReleaseChannel = "REGULAR" })},
	{rules.RuleSpecProviderField, diag.SeverityInfo, "maintenanceWindow on EKS", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MaintenanceWindow = "Sat 02:00-06:00 UTC" })},
	{rules.RuleDataStale, diag.SeverityInfo, "checked 200 days after the data's date", input{run: func(t *testing.T) []diag.Finding {
		return rules.Validate(sevEKSBase(), rules.Options{AsOf: asOf.AddDate(0, 0, 200)})
	}}},
	{rules.RuleUnknownFact, diag.SeverityInfo, "CUDA newer than the matrix", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "14.0" })},

	// CUDA <-> driver.
	{rules.RuleCUDAUnknown, diag.SeverityError, "CUDA 12.7", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "12.7" })},
	{rules.RuleCUDADriverMin, diag.SeverityError, "R470 under CUDA 12.0", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "470.199.02"); cs.Spec.CUDA = "12.0" })},
	{rules.RuleCUDAMinorCompat, diag.SeverityWarning, "535.54.03 under CUDA 12.2.2", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "535.54.03"); cs.Spec.CUDA = "12.2.2" })},
	{rules.RuleCUDAForwardCompat, diag.SeverityError, "cuda-compat older than the images", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		custom(p, "580.173.02")
		cs.Spec.CUDA, p.CUDACompat = "13.2", "13.1"
	})},
	{rules.RuleCUDAForwardCompat, diag.SeverityWarning, "cuda-compat not needed", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		custom(p, "595.91.07")
		cs.Spec.CUDA, p.CUDACompat = "13.0", "13.0"
	})},

	// GPU <-> driver <-> CUDA.
	{rules.RuleGPUUnknown, diag.SeverityError, "unknown GKE accelerator type", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Type = "nvidia-rtx-9090" })},
	{rules.RuleGPUUnknown, diag.SeverityInfo, "unknown GPU name on EKS", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Type = "RTX 9090" })},
	{rules.RuleGPUArchCUDA, diag.SeverityError, "K80 under CUDA 12", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.GPU.Type = "n1-standard-8", "nvidia-tesla-k80"
		cs.Spec.CUDA = "12.0"
	})},
	{rules.RuleGPUArchCUDA, diag.SeverityWarning, "L4 under CUDA 11.7 (PTX JIT)", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "11.7" })},
	{rules.RuleGPUArchCUDA, diag.SeverityInfo, "L4 under CUDA 11.7 with workloadPTX", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "11.7"; p.WorkloadPTX = true })},
	{rules.RuleGPUDriverBranch, diag.SeverityError, "G7 on the R580 AMI", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g7.12xlarge" })},
	{rules.RuleGPUOpenModules, diag.SeverityError, "GH200 with proprietary modules", query(rules.Query{GPU: "GH200", KernelModules: "proprietary"})},
	{rules.RuleMIGUnsupported, diag.SeverityError, "MIG on L4", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "1g.6gb"}
	})},
	{rules.RuleMIGProfile, diag.SeverityError, "profile of another product", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-highgpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "7g.80gb"}
	})},
	{rules.RuleMIGDriverMin, diag.SeverityError, "MIG on H100 with R525", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "525.60.13")
		cs.Spec.CUDA = "12.0"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "1g.10gb"}
	})},
	{rules.RuleDriverEOL, diag.SeverityWarning, "R535 past EOL", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "535.309.01"); cs.Spec.CUDA = "12.2" })},
	{rules.RuleDriverNFBProd, diag.SeverityWarning, "New Feature Branch", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "590.48.01") })},

	// Driver and device plugin owners.
	{rules.RuleDriverOwner, diag.SeverityError, "no driver on a standard AMI", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "AL2023_x86_64_STANDARD" })},
	{rules.RuleDriverOwner, diag.SeverityWarning, "pool and Operator disagree on the driver", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage, p.GPU.Driver = "UBUNTU_CONTAINERD", "580.173.02"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true), Version: "580.95.05"}}
	})},
	{rules.RuleGKEDriverOption, diag.SeverityError, "exact driver on COS", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Driver = "580.95.05" })},
	{rules.RuleGKEDriverOption, diag.SeverityWarning, "driver unset before GKE 1.30.1-gke.1156000", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.29"
		p.GPU.Driver = ""
	})},
	{rules.RuleGKEK8sSupport, diag.SeverityWarning, "GKE 1.29, past standard support", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "1.29" })},
	{rules.RuleGKEK8sSupport, diag.SeverityInfo, "GKE 1.33 in extended support on the Extended channel", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion, cs.Spec.ReleaseChannel = "1.33", "EXTENDED"
	})},
	{rules.RuleLabelGFDManaged, diag.SeverityWarning, "GFD label by hand", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Labels = map[string]string{"nvidia.com/gpu.product": "NVIDIA-L4"}
	})},
	{rules.RuleSharingReplicas, diag.SeverityError, "one replica", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "time-slicing", Replicas: 1}
	})},
	{rules.RuleSharingMPSMIG, diag.SeverityError, "MPS on MIG", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mps", Replicas: 2, MIGProfile: "1g.10gb"}
	})},
	{rules.RuleSharingFields, diag.SeverityWarning, "replicas without a strategy", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Sharing = spec.Sharing{Replicas: 4} })},
	{rules.RulePluginConflict, diag.SeverityError, "GKE's plugin and NVIDIA's", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Provider = "helm" })},
	{rules.RulePluginConflict, diag.SeverityWarning, "NVIDIA's chart selected by a label the spec cannot know, beside Bottlerocket's plugin", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
		cs.Spec.Addons.DevicePlugin.NodeSelector = map[string]string{"feature.node.kubernetes.io/pci-10de.present": "true"}
	})},
	{rules.RulePluginMissing, diag.SeverityError, "AL2023 without a plugin", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{} })},
	{rules.RulePluginProvider, diag.SeverityError, "bottlerocket on GKE", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Provider = "bottlerocket" })},
	{rules.RulePluginVersion, diag.SeverityWarning, "MPS on plugin 0.14.5", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Version = "0.14.5"
		p.GPU.Sharing = spec.Sharing{Strategy: "mps", Replicas: 4}
	})},

	// Machines and images.
	{rules.RuleMachineUnknown, diag.SeverityError, "EKS type on GKE", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g5.xlarge" })},
	{rules.RuleMachineAccel, diag.SeverityError, "N1 without an accelerator", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "n1-standard-8" })},
	{rules.RuleMachineCapacity, diag.SeverityError, "spot p6e-gb200", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.OSImage, p.Capacity = "p6e-gb200.36xlarge", "AL2023_ARM_64_NVIDIA", "spot"
	})},
	{rules.RulePoolMixed, diag.SeverityError, "two architectures", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.InstanceTypes = "", []string{"g5g.xlarge", "g4dn.xlarge"}
	})},
	{rules.RulePoolMixed, diag.SeverityInfo, "A100 40GB and 80GB, gpu.type A100", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.InstanceTypes, p.GPU.Type = "", []string{"p4d.24xlarge", "p4de.24xlarge"}, "A100"
	})},
	{rules.RuleOperatorAL2, diag.SeverityError, "the Operator's operands on AL2", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion, p.OSImage = "1.32", "AL2_x86_64_GPU"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.3.2", Driver: spec.OperatorDriver{Enabled: ptr(false)}, Toolkit: spec.OperatorToolkit{Enabled: ptr(false)}}
	})},
	{rules.RuleOperatorToolkit, diag.SeverityWarning, "the Operator's toolkit on the AL2023 NVIDIA AMI", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(false)}}
	})},
	{rules.RulePoolMixed, diag.SeverityWarning, "two GPU models", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.InstanceTypes = "", []string{"g6.xlarge", "g5.xlarge"}
	})},
	{rules.RuleEKSAMIK8s, diag.SeverityError, "AL2 on 1.33", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.33"
		p.OSImage = "AL2_x86_64_GPU"
	})},
	{rules.RuleEKSAMIArch, diag.SeverityError, "x86 AMI on Graviton", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g5g.2xlarge" })},
	{rules.RuleEKSAMIEOL, diag.SeverityWarning, "AL2 past support", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		p.OSImage = "AL2_x86_64_GPU"
	})},
	{rules.RuleEKSAMIGPU, diag.SeverityError, "Windows AMI", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "WINDOWS_CORE_2022_x86_64" })},
	{rules.RuleEKSSingleAZ, diag.SeverityError, "cluster placement group over two zones", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.PlacementGroup = "cluster"
		p.Zones = []string{"us-east-1a", "us-east-1b"}
	})},
	{rules.RuleEKSK8sSupport, diag.SeverityWarning, "EKS 1.31 past extended support", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "1.31" })},

	// GPU Operator.
	{rules.RuleOperatorCOS, diag.SeverityError, "Operator driver on COS", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Driver = "INSTALLATION_DISABLED"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true)}}
	})},
	{rules.RuleOperatorK8s, diag.SeverityError, "cluster older than the range", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0"}
	})},
	{rules.RuleOperatorK8s, diag.SeverityWarning, "cluster newer than the range", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.35"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.10.1"}
	})},
	{rules.RuleOperatorGKEKit, diag.SeverityError, "toolkit on GKE 1.34 without the workaround", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)}}
	})},
	{rules.RuleOperatorGKEVer, diag.SeverityError, "v23.9.2 on GKE", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.29"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v23.9.2", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)}}
	})},
	{rules.RuleOperatorEOL, diag.SeverityWarning, "deprecated line", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.3.3"}
	})},
	{rules.RuleOperatorDriver, diag.SeverityWarning, "driver not in the release's matrix", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "AL2023_x86_64_STANDARD"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true), Version: "580.95.05"}}
	})},

	// NCCL and EFA.
	{rules.RuleNCCLIBDisable, diag.SeverityWarning, "IB_DISABLE on RoCE", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a4-highgpu-8g"
		p.NCCL = spec.NCCL{Plugin: "gib", Env: map[string]string{"NCCL_IB_DISABLE": "1"}}
	})},
	{rules.RuleNCCLIBDisable, diag.SeverityInfo, "IB_DISABLE on EFA", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.NCCL.Env = map[string]string{"NCCL_IB_DISABLE": "1"}
	})},
	{rules.RuleNCCLNetSocket, diag.SeverityWarning, "Socket on A3 Mega", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a3-megagpu-8g"
		p.NCCL = spec.NCCL{Plugin: "tcpxo", Env: map[string]string{"NCCL_NET": "Socket"}}
	})},
	{rules.RuleNCCLNetSocket, diag.SeverityInfo, "Socket without a GPU network", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_NET": "Socket"} })},
	{rules.RuleNCCLPrefix, diag.SeverityWarning, "IB_HCA prefix", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_IB_HCA": "mlx5_0:1,mlx5_1:1"}
	})},
	{rules.RuleNCCLEFAPlugin, diag.SeverityWarning, "EFA with another NCCL plugin named", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA.Enabled = true
		p.NCCL = spec.NCCL{Plugin: "tcpx", Env: map[string]string{"FI_PROVIDER": "efa"}}
	})},
	{rules.RuleNCCLEFAPlugin, diag.SeverityError, "NCCL_NET=gIB on EKS", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_NET": "gIB"} })},
	{rules.RuleNCCLEFAPlugin, diag.SeverityInfo, "FI_PROVIDER unset", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA.Enabled = true
		p.NCCL.Plugin = "aws-ofi-nccl"
	})},
	{rules.RuleNCCLGCPTransport, diag.SeverityWarning, "TCPX on A3 Mega", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "a3-megagpu-8g"; p.NCCL.Plugin = "tcpx" })},
	{rules.RuleNCCLGCPTransport, diag.SeverityError, "NCCL_NET forces AWS's plugin on GKE", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_NET": "AWS Libfabric"}
	})},
	{rules.RuleNCCLP2PDisable, diag.SeverityWarning, "P2P disabled", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_P2P_DISABLE": "1"} })},
	{rules.RuleNCCLDebug, diag.SeverityInfo, "NCCL_DEBUG=INFO", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_DEBUG": "INFO"} })},
	{rules.RuleNCCLUnknownEnv, diag.SeverityWarning, "misspelt variable", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_SOCKET_IFNAM": "=eth0"}
	})},
	{rules.RuleNCCLUnknownEnv, diag.SeverityInfo, "unknown variable", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_FROBNICATE_EVERYTHING": "1"}
	})},
	{rules.RuleEFAUnsupported, diag.SeverityError, "EFA on g6.xlarge", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.EFA.Enabled = true })},
	{rules.RuleEFAInterfaces, diag.SeverityWarning, "half the cards", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA = spec.EFA{Enabled: true, Interfaces: 16}
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "efa"}}
	})},
	{rules.RuleEFAInterfaces, diag.SeverityError, "more interfaces than cards", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5en.48xlarge"
		p.EFA = spec.EFA{Enabled: true, Interfaces: 32}
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "efa"}}
	})},
	{rules.RuleEFADisabled, diag.SeverityWarning, "multi-node training without EFA", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p4d.24xlarge"; p.Role = "training" })},

	// Policy: only with one (spec.policy, or --policy through Options.Policy).
	{rules.RulePolicyTaint, diag.SeverityWarning, "required taint missing", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints = nil
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu=present:NoSchedule"}}
	})},
	{rules.RulePolicySpotMax, diag.SeverityWarning, "spot pool without a maximum", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity, p.Autoscaling.Max = "spot", 0
		cs.Spec.Policy = &spec.Policy{MaxSpotShare: ptr(0.5)}
	})},
	{rules.RulePolicyCostTags, diag.SeverityWarning, "--policy requires a tag", withPolicy(&spec.Policy{RequiredTags: []string{"owner"}}, eks(nil))},
	{rules.RulePolicyUpgrade, diag.SeverityWarning, "training pool not held", gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(true)}
	})},

	// Waivers.
	{rules.RuleWaiverExpired, diag.SeverityWarning, "expired waiver", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Waivers = []spec.Waiver{{Rule: rules.RuleDriverEOL, Reason: "migration", Expires: "2026-01-31"}}
	})},
	{rules.RuleWaiverInvalid, diag.SeverityWarning, "unknown rule", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Waivers = []spec.Waiver{{Rule: "DRIVER-EOLL", Reason: "typo", Expires: "2027-01-31"}}
	})},

	// Generation.
	{rules.RuleGenDaemonSetToleration, diag.SeverityError, "taint added after generation", edited(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints = append(p.Taints, spec.Taint{Key: "example.com/dedicated", Value: "ml", Effect: "NoExecute"})
	})},
	{rules.RuleGenDaemonSetSelector, diag.SeverityError, "pool renamed after generation", edited(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Name = "renamed" })},
	{rules.RuleGenKueueResource, diag.SeverityError, "sharing renamed after generation", edited(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "time-slicing", Replicas: 4, RenameByDefault: true}
	})},
	{rules.RuleGenDevicePluginOwner, diag.SeverityError, "Bottlerocket after generation", edited(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA" })},
	{rules.RuleGenChartVersion, diag.SeverityWarning, "chart version without a key list", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Version = "0.14.5" })},
	{rules.RuleGenChartVersion, diag.SeverityError, "the same, for generate", generating(eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Version = "0.14.5" }))},
	{rules.RuleGenBuild, diag.SeverityError, "reserved pool name", eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Name = "default" })},
}

type severityCase struct {
	rule string
	sev  diag.Severity
	name string
	in   input
}

// input is one case's input: a base spec changed by mod and checked with
// opts, or a function for what is not a spec document.
type input struct {
	base func() *spec.ClusterSpec
	mod  poolMod
	opts Options
	run  func(t *testing.T) []diag.Finding
}

type poolMod func(cs *spec.ClusterSpec, p *spec.NodePool)

func eks(mod poolMod) input { return input{base: sevEKSBase, mod: mod} }
func gke(mod poolMod) input { return input{base: sevGKEBase, mod: mod} }

// withPolicy checks in with pol as the --policy default.
func withPolicy(pol *spec.Policy, in input) input { in.opts.Policy = pol; return in }

// generating checks in for `gpuctl generate`.
func generating(in input) input { in.opts.Generate = true; return in }

// findings checks the case's spec through Document (as of asOf).
func (in input) findings(t *testing.T) []diag.Finding {
	t.Helper()
	if in.run != nil {
		return in.run(t)
	}
	cs := in.base()
	if in.mod != nil {
		in.mod(cs, &cs.Spec.NodePools[0])
	}
	opts := in.opts
	opts.AsOf = asOf
	res, err := Document(docOf(t, cs), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res.Findings
}

// query asks rules.Check.
func query(q rules.Query) input {
	return input{run: func(t *testing.T) []diag.Finding { return rules.Check(q, rules.Options{AsOf: asOf}) }}
}

// edited builds the layers of a clean EKS spec, then changes the spec the
// layers are checked against, as a hand edit of the generated Terraform
// would.
func edited(mod poolMod) input {
	return input{run: func(t *testing.T) []diag.Finding {
		t.Helper()
		cs := sevEKSBase()
		cs.Spec.Addons.DCGMExporter.Enabled = true
		l, err := helmgen.Build(cs)
		if err != nil {
			t.Fatal(err)
		}
		if fs, err := l.Check(); err != nil || len(fs) != 0 {
			t.Fatalf("layers of the clean spec: %v\n%s", err, dump(fs))
		}
		mod(cs, &cs.Spec.NodePools[0])
		fs, err := l.Check()
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}}
}

// docOf writes cs as YAML and reads it back as a document, as a spec file.
func docOf(t *testing.T, cs *spec.ClusterSpec) *spec.Document {
	t.Helper()
	b, err := yaml.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := spec.Parse("spec.yaml", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return doc
}

func ptr[T any](v T) *T { return &v }

// custom gives a pool a custom AMI with a preinstalled driver.
func custom(p *spec.NodePool, driver string) {
	p.OSImage = "CUSTOM"
	p.GPU.Driver = driver
}

// sevEKSBase is a clean EKS spec: one L4 inference pool on the AL2023
// NVIDIA AMI with NVIDIA's Helm device plugin.
func sevEKSBase() *spec.ClusterSpec {
	return &spec.ClusterSpec{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "t"},
		Spec: spec.Spec{Provider: "eks", Region: "us-east-1", ClusterName: "ml", KubernetesVersion: "1.34", CUDA: "12.8",
			Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: "helm"}},
			NodePools: []spec.NodePool{{Name: "pool", Role: "inference", MachineType: "g6.xlarge", OSImage: "AL2023_x86_64_NVIDIA",
				Capacity: "on-demand", Autoscaling: spec.Autoscaling{Max: 4},
				Taints: []spec.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}}}}}
}

// sevGKEBase is a clean GKE spec: one L4 inference pool on COS with GKE's
// driver and device plugin, and no taint (GKE adds its GPU taint itself).
func sevGKEBase() *spec.ClusterSpec {
	return &spec.ClusterSpec{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "t"},
		Spec: spec.Spec{Provider: "gke", Region: "us-central1", ClusterName: "ml", KubernetesVersion: "1.35", CUDA: "12.4",
			NodePools: []spec.NodePool{{Name: "pool", Role: "inference", MachineType: "g2-standard-8", OSImage: "COS_CONTAINERD",
				GPU: spec.GPU{Driver: "LATEST"}, Capacity: "on-demand", Autoscaling: spec.Autoscaling{Max: 4}}}}}
}

func TestSeverityBasesAreClean(t *testing.T) {
	for name, in := range map[string]input{"eks": eks(nil), "gke": gke(nil)} {
		for _, f := range in.findings(t) {
			if f.Severity != diag.SeverityInfo {
				t.Errorf("%s base: %s %s %s: %s", name, f.Severity, f.Rule, f.Path, f.Message)
			}
		}
	}
}

func TestSeverityCases(t *testing.T) {
	type key struct {
		rule string
		sev  diag.Severity
	}
	have := map[key]bool{}
	for _, c := range severityCases {
		have[key{c.rule, c.sev}] = true
		t.Run(c.rule+"/"+string(c.sev)+"/"+c.name, func(t *testing.T) {
			r, ok := rules.LookupRule(c.rule)
			if !ok {
				t.Fatalf("unknown rule %s", c.rule)
			}
			if !r.Emits(c.sev) {
				t.Fatalf("%s does not declare severity %s (declare it in the rule's Also)", c.rule, c.sev)
			}
			fs := c.in.findings(t)
			assertDeclared(t, fs)
			for _, f := range fs {
				if f.Rule == c.rule && f.Severity == c.sev {
					return
				}
			}
			t.Errorf("want %s %s, got:\n%s", c.sev, c.rule, dump(fs))
		})
	}
	for _, r := range rules.Rules() {
		if r.SeverityReason == "" {
			t.Errorf("%s states no SeverityReason (the severity contract's reason for %s)", r.ID, r.Severity)
		}
		seen := map[diag.Severity]bool{}
		for i, sc := range r.Severities() {
			if seen[sc.Severity] {
				t.Errorf("%s declares %s twice", r.ID, sc.Severity)
			}
			seen[sc.Severity] = true
			if i > 0 && (sc.When == "" || sc.Reason == "") {
				t.Errorf("%s: the %s case needs When and Reason", r.ID, sc.Severity)
			}
			if !have[key{r.ID, sc.Severity}] {
				t.Errorf("%s %s has no case: add a row to severityCases", r.ID, sc.Severity)
			}
		}
	}
}

// assertDeclared fails for a finding whose rule does not declare its
// severity (waived findings are info by the waiver, not the rule).
func assertDeclared(t *testing.T, fs []diag.Finding) {
	t.Helper()
	for _, f := range fs {
		if f.Waiver != "" {
			continue
		}
		r, ok := rules.LookupRule(f.Rule)
		if !ok {
			t.Errorf("finding of unknown rule %s", f.Rule)
			continue
		}
		if !r.Emits(f.Severity) {
			t.Errorf("%s reported %s, which it does not declare: %s", f.Rule, f.Severity, f.Message)
		}
	}
}
