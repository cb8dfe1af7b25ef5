// Package rulecases is the rule case table: for every rule and every
// severity it declares, a minimal change to a clean spec (or a what-if
// query, or an edit after generation) that makes the rule report it, and
// cases that must keep a rule quiet. Package rules' tests run every case
// the validator can judge through rules.Validate and rules.ApplyWaivers
// (or rules.Check), package check's tests every case through the document
// pipeline (check.Document), so a new rule's cases are rows here and
// nowhere else. Only tests import it.
//
// Adding a case is one row:
//
//	{Rule: rules.RuleX, Sev: diag.SeverityWarning, Name: "what the case is", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { ... })},
//
// eks and gke change a minimal clean spec of that provider (p is its one
// pool), EKS and GKE a clean spec with tags and a pinned device plugin;
// withPolicy adds a --policy default; query asks `gpuctl matrix check`;
// generating judges for `gpuctl generate`; edited changes the spec after
// its layers were built (a hand edit of the generated files).
package rulecases

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/spec"
	"github.com/gpuctl/gpuctl/internal/spec/spectest"
)

// AsOf is the date every case is judged at unless its input says another.
var AsOf = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// Case is one row of the table.
type Case struct {
	Name string
	Rule string
	// Sev is the severity the rule must report; with Quiet, the rule must
	// report nothing above info.
	Sev   diag.Severity
	Quiet bool
	// Path, when set, is the finding's path; Msg a substring of its message
	// or fix.
	Path, Msg string
	In        Input
}

// PoolMod changes a spec; p is its first pool.
type PoolMod func(cs *spec.ClusterSpec, p *spec.NodePool)

// Input is what a case judges: Base changed by Mod (Mod may be nil), with
// Policy as the --policy default, at AsOf (zero: the table's AsOf); or a
// what-if Query.
type Input struct {
	Base   func() *spec.ClusterSpec
	Mod    PoolMod
	Policy *spec.Policy
	AsOf   time.Time
	Query  *rules.Query
	// Unknown are the spec's unknown facts (rules.Options.Unknown), as an
	// import of Terraform whose values depend on data sources would give.
	Unknown map[string]rules.Unknown
	// Generate judges the spec for `gpuctl generate`; Edited applies Mod
	// after the spec's layers were built, as a hand edit of the generated
	// files would. Both are the document pipeline's alone.
	Generate, Edited bool
	// Unwritable: the spec has no YAML file form that gpuctl reads (a
	// string with a control character, which spec.Parse refuses where it
	// is written; goccy/go-yaml writes a map key with a newline as a block
	// scalar that reads back as a scalar), so only the validator can judge
	// it.
	Unwritable bool
}

// Spec returns the case's spec, changed by Mod; nil for a query.
func (in Input) Spec() *spec.ClusterSpec {
	if in.Base == nil {
		return nil
	}
	cs := in.Base()
	if in.Mod != nil {
		in.Mod(cs, &cs.Spec.NodePools[0])
	}
	return cs
}

// Date is the date the case is judged at.
func (in Input) Date() time.Time {
	if in.AsOf.IsZero() {
		return AsOf
	}
	return in.AsOf
}

// PipelineOnly reports whether only the document pipeline (generation and
// its guards) can produce the case's finding.
func (c Case) PipelineOnly() bool {
	switch c.Rule {
	case rules.RuleGenChartVersion, rules.RuleGenBuild, rules.RuleGenDaemonSetToleration, rules.RuleGenDaemonSetSelector, rules.RuleGenKueueResource, rules.RuleGenDevicePluginOwner, rules.RuleAcceptStageNeeds:
		return true
	}
	return c.In.Generate || c.In.Edited
}

// efaTraining makes p a p5 EFA training pool in one zone, with a disk.
func efaTraining(p *spec.NodePool) {
	p.Role, p.MachineType, p.Zones, p.DiskSizeGB = spec.RoleTraining, "p5.48xlarge", []string{"us-east-1a"}, 500
	p.EFA.Enabled = true
	p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "efa"}}
}

func eks(mod PoolMod) Input { return Input{Base: spectest.MinimalEKS, Mod: mod} }
func gke(mod PoolMod) Input { return Input{Base: spectest.MinimalGKE, Mod: mod} }

// unknown marks the facts at paths of in unknown, as the import of a value
// from a data source does.
func unknown(in Input, paths ...string) Input {
	in.Unknown = map[string]rules.Unknown{}
	for _, p := range paths {
		in.Unknown[p] = rules.Unknown{Reason: "it depends on data.example.x (main.tf:1)"}
		if p == "spec.kubernetesVersion" {
			in.Unknown[p] = rules.Unknown{Reason: "it depends on data.google_container_engine_versions.gke (main.tf:1)", Hint: "pass --kubernetes-version VERSION"}
		}
	}
	return in
}

// withPolicy checks in with pol as the --policy default.
func withPolicy(pol *spec.Policy, in Input) Input { in.Policy = pol; return in }

// generating checks in for `gpuctl generate`.
func generating(in Input) Input { in.Generate = true; return in }

// query asks rules.Check.
func query(q rules.Query) Input { return Input{Query: &q} }

// edited changes a clean EKS spec after its layers were built.
func edited(mod PoolMod) Input { return Input{Base: spectest.MinimalEKS, Mod: mod, Edited: true} }

func ptr[T any](v T) *T { return &v }

// custom gives a pool a custom AMI with a preinstalled driver.
func custom(p *spec.NodePool, driver string) {
	p.OSImage = "CUSTOM"
	p.GPU.Driver = driver
}

// Bases are the clean specs the cases change; each judges clean (info at
// most) through both pipelines.
var Bases = map[string]func() *spec.ClusterSpec{"eks": spectest.EKS, "gke": spectest.GKE, "minimal-eks": spectest.MinimalEKS, "minimal-gke": spectest.MinimalGKE}

// Cases is the table: first one case per rule and severity, then the
// cases of each rule's edges (which also hold rules quiet where they must
// be).
var Cases = append(severityCases, edgeCases...)

// severityCases: one case per rule and per severity the rule declares
// (rules.Rule.Severities); the tests fail for a rule, or a severity of a
// rule, without a row here.
var severityCases = []Case{
	// Spec shape.
	{Rule: rules.RuleSpecRequired, Sev: diag.SeverityError, Name: "region missing", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Region = "" })},
	{Rule: rules.RuleSpecRequired, Sev: diag.SeverityInfo, Name: "kubernetesVersion missing", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "" })},
	{Rule: rules.RuleSpecEnum, Sev: diag.SeverityError, Name: "role misspelt", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Role = "trainig" })},
	{Rule: rules.RuleSpecVersion, Sev: diag.SeverityError, Name: "Kubernetes version", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "v1.33-eks" })},
	{Rule: rules.RuleSpecLabel, Sev: diag.SeverityError, Name: "label key", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Labels = map[string]string{"gpu type": "l4"} })},
	{Rule: rules.RuleSpecTaint, Sev: diag.SeverityError, Name: "Terraform's effect spelling", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Taints[0].Effect = "NO_SCHEDULE" })},
	{Rule: rules.RuleSpecName, Sev: diag.SeverityError, Name: "GKE pool name", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Name = "Train_H100" })},
	{Rule: rules.RuleSpecCloudTags, Sev: diag.SeverityError, Name: "GCP label key", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Tags = map[string]string{"Cost.Center": "ml"} })},
	{Rule: rules.RuleSpecNetwork, Sev: diag.SeverityError, Name: "egress CIDR without a prefix", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Network.EgressCIDRs = []string{"10.20.0.0"} })},
	{Rule: rules.RuleSpecReference, Sev: diag.SeverityError, Name: "team pool misspelt", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Teams = []spec.Team{{Name: "ml", Pools: []string{p.Name + "x"}}}
	})},
	{Rule: rules.RuleSpecReference, Sev: diag.SeverityWarning, Name: "team pool listed twice", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Teams = []spec.Team{{Name: "ml", Pools: []string{p.Name, p.Name}}}
	})},
	{Rule: rules.RuleSpecAutoscaling, Sev: diag.SeverityError, Name: "min above max", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling = spec.Autoscaling{Min: 5, Max: 2} })},
	{Rule: rules.RuleSpecAutoscaling, Sev: diag.SeverityWarning, Name: "max above EKS's default node group quota", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling = spec.Autoscaling{Max: 600} })},
	{Rule: rules.RuleSpecRange, Sev: diag.SeverityError, Name: "GKE disk below 10 GB", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.DiskSizeGB = 5 })},
	{Rule: rules.RuleSpecFormat, Sev: diag.SeverityError, Name: "AWS Region written as its name", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Region = "US East (N. Virginia)" })},
	{Rule: rules.RuleSpecFormat, Sev: diag.SeverityWarning, Name: "maintenance window without a time range", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MaintenanceWindow = "weekends" })},
	{Rule: rules.RuleSpecProviderField, Sev: diag.SeverityError, Name: "autoUpgrade false in a release channel", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.ReleaseChannel = "REGULAR"
		p.AutoUpgrade = ptr(false)
	})},
	{Rule: rules.RuleSpecProviderField, Sev: diag.SeverityWarning, Name: "releaseChannel on EKS", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.ReleaseChannel = "REGULAR" })},
	{Rule: rules.RuleSpecProviderField, Sev: diag.SeverityInfo, Name: "maintenanceWindow on EKS", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MaintenanceWindow = "Sat 02:00-06:00 UTC" })},
	{Rule: rules.RuleDataStale, Sev: diag.SeverityInfo, Name: "checked 200 days after the data's date", In: Input{Base: spectest.MinimalEKS, AsOf: AsOf.AddDate(0, 0, 200)}},
	{Rule: rules.RuleGKEFlexStart, Sev: diag.SeverityError, Name: "queued provisioning pool with a minimum size", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity, p.Autoscaling.Min = spec.CapacityQueued, 1
		cs.Spec.Teams = []spec.Team{{Name: "ml"}}
	})},
	{Rule: rules.RuleGKEFlexStart, Sev: diag.SeverityError, Name: "flex-start pool with auto-repair on", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity, p.AutoRepair = spec.CapacityFlexStart, ptr(true)
	})},
	{Rule: rules.RuleGKEFlexStart, Sev: diag.SeverityError, Name: "flex-start on GKE 1.31", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion, p.Capacity = "1.31", spec.CapacityFlexStart
	})},
	{Rule: rules.RuleGKEFlexStart, Sev: diag.SeverityWarning, Name: "flex-start on GKE 1.32 without its build", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion, p.Capacity = "1.32", spec.CapacityFlexStart
	})},
	{Rule: rules.RuleGKEFlexStart, Sev: diag.SeverityInfo, Name: "queued provisioning pool no team uses", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Capacity = spec.CapacityQueued })},
	{Rule: rules.RuleSpecProviderField, Sev: diag.SeverityError, Name: "flex-start on EKS", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Capacity = spec.CapacityFlexStart })},
	{Rule: rules.RuleGKENodeImage, Sev: diag.SeverityError, Name: "a3-highgpu-8g on GKE 1.35 COS (COS 125)", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.35"
		p.MachineType, p.GPU.Type, p.GPU.Count, p.OSImage = "a3-highgpu-8g", "nvidia-h100-80gb", 8, "COS_CONTAINERD"
	})},
	{Rule: rules.RuleGKENodeImage, Sev: diag.SeverityWarning, Name: "a3-highgpu-8g on GKE 1.36 (COS 129, not covered)", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.36"
		p.MachineType, p.GPU.Type, p.GPU.Count, p.OSImage = "a3-highgpu-8g", "nvidia-h100-80gb", 8, ""
	})},
	{Rule: rules.RuleBeyondTable, Sev: diag.SeverityWarning, Name: "CUDA newer than the matrix", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "14.0" })},
	{Rule: rules.RuleBeyondTable, Sev: diag.SeverityWarning, Name: "GKE minor newer than GKE's driver table", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.37"
		p.GPU.Driver = "DEFAULT"
	})},
	{Rule: rules.RuleUnknownFact, Sev: diag.SeverityInfo, Name: "Ubuntu DEFAULT on a GKE minor whose driver row is COS-only", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.35"
		p.OSImage = "UBUNTU_CONTAINERD"
		p.GPU.Driver = "DEFAULT"
	})},

	// CUDA <-> driver.
	{Rule: rules.RuleCUDAUnknown, Sev: diag.SeverityError, Name: "CUDA 12.7", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "12.7" })},
	{Rule: rules.RuleCUDADriverMin, Sev: diag.SeverityError, Name: "R470 under CUDA 12.0", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "470.199.02"); cs.Spec.CUDA = "12.0" })},
	{Rule: rules.RuleCUDAMinorCompat, Sev: diag.SeverityWarning, Name: "535.54.03 under CUDA 12.2.2", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "535.54.03"); cs.Spec.CUDA = "12.2.2" })},
	{Rule: rules.RuleCUDAForwardCompat, Sev: diag.SeverityError, Name: "cuda-compat older than the images", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		custom(p, "580.173.02")
		cs.Spec.CUDA, p.CUDACompat = "13.2", "13.1"
	})},
	{Rule: rules.RuleCUDAForwardCompat, Sev: diag.SeverityWarning, Name: "cuda-compat not needed", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		custom(p, "595.91.07")
		cs.Spec.CUDA, p.CUDACompat = "13.0", "13.0"
	})},

	// GPU <-> driver <-> CUDA.
	{Rule: rules.RuleGPUUnknown, Sev: diag.SeverityError, Name: "unknown GKE accelerator type", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Type = "nvidia-rtx-9090" })},
	{Rule: rules.RuleGPUUnknown, Sev: diag.SeverityInfo, Name: "unknown GPU name on EKS", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Type = "RTX 9090" })},
	{Rule: rules.RuleGPUArchCUDA, Sev: diag.SeverityError, Name: "K80 under CUDA 12", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.GPU.Type = "n1-standard-8", "nvidia-tesla-k80"
		cs.Spec.CUDA = "12.0"
	})},
	{Rule: rules.RuleGPUArchCUDA, Sev: diag.SeverityWarning, Name: "L4 under CUDA 11.7 (PTX JIT)", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "11.7" })},
	{Rule: rules.RuleGPUArchCUDA, Sev: diag.SeverityInfo, Name: "L4 under CUDA 11.7 with workloadPTX", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "11.7"; p.WorkloadPTX = true })},
	{Rule: rules.RuleGPUDriverBranch, Sev: diag.SeverityError, Name: "G7 on the R580 AMI", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g7.12xlarge" })},
	{Rule: rules.RuleGPUOpenModules, Sev: diag.SeverityError, Name: "GH200 with proprietary modules", In: query(rules.Query{GPU: "GH200", KernelModules: "proprietary"})},
	{Rule: rules.RuleMIGUnsupported, Sev: diag.SeverityError, Name: "MIG on L4", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "1g.6gb"}
	})},
	{Rule: rules.RuleMIGProfile, Sev: diag.SeverityError, Name: "profile of another product", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-highgpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "7g.80gb"}
	})},
	{Rule: rules.RuleMIGDriverMin, Sev: diag.SeverityError, Name: "MIG on H100 with R525", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "525.60.13")
		cs.Spec.CUDA = "12.0"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "1g.10gb"}
	})},
	{Rule: rules.RuleDriverEOL, Sev: diag.SeverityWarning, Name: "R535 past EOL", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "535.309.01"); cs.Spec.CUDA = "12.2" })},
	{Rule: rules.RuleDriverNFBProd, Sev: diag.SeverityWarning, Name: "New Feature Branch", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "590.48.01") })},

	// Driver and device plugin owners.
	{Rule: rules.RuleDriverOwner, Sev: diag.SeverityError, Name: "no driver on a standard AMI", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "AL2023_x86_64_STANDARD" })},
	{Rule: rules.RuleDriverOwner, Quiet: true, Name: "a standard AMI, the GPU Operator from a module not read", In: unknown(eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "AL2023_x86_64_STANDARD" }), "spec.addons.gpuOperator.enabled")},
	{Rule: rules.RuleDriverOwner, Sev: diag.SeverityWarning, Name: "pool and Operator disagree on the driver", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage, p.GPU.Driver = "UBUNTU_CONTAINERD", "580.173.02"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true), Version: "580.95.05"}}
	})},
	{Rule: rules.RuleGKEDriverOption, Sev: diag.SeverityError, Name: "exact driver on COS", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Driver = "580.95.05" })},
	{Rule: rules.RuleGKEDriverOption, Sev: diag.SeverityError, Name: "driver unset before GKE 1.30.1-gke.1156000", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.29"
		p.GPU.Driver = ""
	})},
	{Rule: rules.RuleGKEDriverOption, Sev: diag.SeverityWarning, Name: "driver unset on a node-auto-provisioned pool, no GKE version", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = ""
		p.GPU.Driver, p.AutoProvisioned = "", true
	})},
	{Rule: rules.RuleGKEDriverOption, Sev: diag.SeverityError, Name: "INSTALLATION_DISABLED on a node-auto-provisioned pool, no Operator driver", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Driver, p.AutoProvisioned = "INSTALLATION_DISABLED", true
	})},
	{Rule: rules.RuleGKEDriverOption, Quiet: true, Name: "INSTALLATION_DISABLED on a node-auto-provisioned pool, the GPU Operator from a module not read", In: unknown(gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Driver, p.AutoProvisioned = "INSTALLATION_DISABLED", true
	}), "spec.addons.gpuOperator.enabled")},
	{Rule: rules.RuleGKEDriverOption, Quiet: true, Name: "driver unset before GKE 1.30.1-gke.1156000, the GPU Operator from a module not read", In: unknown(gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.29"
		p.GPU.Driver = ""
	}), "spec.addons.gpuOperator.enabled")},
	{Rule: rules.RuleGKEK8sSupport, Sev: diag.SeverityWarning, Name: "GKE 1.29, past standard support", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "1.29" })},
	{Rule: rules.RuleGKEK8sSupport, Sev: diag.SeverityInfo, Name: "GKE 1.33 in extended support on the Extended channel", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion, cs.Spec.ReleaseChannel = "1.33", "EXTENDED"
	})},
	{Rule: rules.RuleLabelGFDManaged, Sev: diag.SeverityWarning, Name: "GFD label by hand", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Labels = map[string]string{"nvidia.com/gpu.product": "NVIDIA-L4"}
	})},
	{Rule: rules.RuleSharingReplicas, Sev: diag.SeverityError, Name: "one replica", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "time-slicing", Replicas: 1}
	})},
	{Rule: rules.RuleSharingMPSMIG, Sev: diag.SeverityError, Name: "MPS on MIG", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mps", Replicas: 2, MIGProfile: "1g.10gb"}
	})},
	{Rule: rules.RuleSharingFields, Sev: diag.SeverityWarning, Name: "replicas without a strategy", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Sharing = spec.Sharing{Replicas: 4} })},
	{Rule: rules.RulePluginConflict, Sev: diag.SeverityError, Name: "GKE's plugin and NVIDIA's", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Provider = "helm" })},
	{Rule: rules.RulePluginConflict, Sev: diag.SeverityWarning, Name: "NVIDIA's chart selected by a label the spec cannot know, beside Bottlerocket's plugin", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
		cs.Spec.Addons.DevicePlugin.NodeSelector = map[string]string{"feature.node.kubernetes.io/pci-10de.present": "true"}
	})},
	{Rule: rules.RulePluginMissing, Sev: diag.SeverityError, Name: "AL2023 without a plugin", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{} })},
	{Rule: rules.RulePluginMissing, Quiet: true, Name: "AL2023, the plugin installed by a module not read", In: unknown(eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{} }), "spec.addons.devicePlugin.provider")},
	{Rule: rules.RuleSpecUnknown, Sev: diag.SeverityInfo, Path: "spec.addons.devicePlugin.provider", Msg: "DEVICE-PLUGIN-MISSING (pool pool)", Name: "AL2023, the plugin installed by a module not read", In: unknown(eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{} }), "spec.addons.devicePlugin.provider")},
	{Rule: rules.RuleSpecUnknown, Sev: diag.SeverityWarning, Path: "spec.kubernetesVersion", Msg: "--kubernetes-version", Name: "GKE L4 without a driver, the Kubernetes version from a data source", In: unknown(gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = ""
		p.GPU.Driver = ""
	}), "spec.kubernetesVersion")},
	{Rule: rules.RuleMachineAccel, Quiet: true, Name: "an N1 accelerator type from a variable without a value is unknown, not missing", In: unknown(gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "n1-standard-8"
		p.GPU = spec.GPU{Driver: "LATEST"}
	}), "spec.nodePools[0].gpu.type")},
	{Rule: rules.RuleSpecRequired, Quiet: true, Name: "a reservation from a computed ARN is unknown, not missing", In: unknown(eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Capacity = "reservation" }), "spec.nodePools[0].reservation")},
	{Rule: rules.RuleGKEDriverOption, Quiet: true, Name: "a GKE driver from a variable without a value is unknown, not unset", In: unknown(gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.29"
		p.GPU.Driver = ""
	}), "spec.nodePools[0].gpu.driver")},
	{Rule: rules.RuleSpecRequired, Quiet: true, Name: "a machine type from a data source is unknown, not missing", In: unknown(gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "" }), "spec.nodePools[0].machineType")},
	{Rule: rules.RulePluginProvider, Sev: diag.SeverityError, Name: "bottlerocket on GKE", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Provider = "bottlerocket" })},
	{Rule: rules.RulePluginVersion, Sev: diag.SeverityWarning, Name: "MPS on plugin 0.14.5", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Version = "0.14.5"
		p.GPU.Sharing = spec.Sharing{Strategy: "mps", Replicas: 4}
	})},

	// Machines and images.
	{Rule: rules.RuleMachineUnknown, Sev: diag.SeverityError, Name: "EKS type on GKE", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g5.xlarge" })},
	{Rule: rules.RuleMachineAccel, Sev: diag.SeverityError, Name: "N1 without an accelerator", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "n1-standard-8" })},
	{Rule: rules.RuleMachineCapacity, Sev: diag.SeverityError, Name: "spot p6e-gb200", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.OSImage, p.Capacity = "p6e-gb200.36xlarge", "AL2023_ARM_64_NVIDIA", "spot"
	})},
	{Rule: rules.RulePoolMixed, Sev: diag.SeverityError, Name: "two architectures", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.InstanceTypes = "", []string{"g5g.xlarge", "g4dn.xlarge"}
	})},
	{Rule: rules.RulePoolMixed, Sev: diag.SeverityInfo, Name: "A100 40GB and 80GB, gpu.type A100", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.InstanceTypes, p.GPU.Type = "", []string{"p4d.24xlarge", "p4de.24xlarge"}, "A100"
	})},
	{Rule: rules.RuleOperatorAL2, Sev: diag.SeverityError, Name: "the Operator's operands on AL2", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion, p.OSImage = "1.32", "AL2_x86_64_GPU"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.3.2", Driver: spec.OperatorDriver{Enabled: ptr(false)}, Toolkit: spec.OperatorToolkit{Enabled: ptr(false)}}
	})},
	{Rule: rules.RuleOperatorToolkit, Sev: diag.SeverityError, Name: "the Operator's toolkit on the AL2023 NVIDIA AMI", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(false)}}
	})},
	{Rule: rules.RulePoolMixed, Sev: diag.SeverityWarning, Name: "two GPU models", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.InstanceTypes = "", []string{"g6.xlarge", "g5.xlarge"}
	})},
	{Rule: rules.RuleEKSAMIK8s, Sev: diag.SeverityError, Name: "AL2 on 1.33", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.33"
		p.OSImage = "AL2_x86_64_GPU"
	})},
	{Rule: rules.RuleEKSReleaseK8s, Sev: diag.SeverityError, Name: "1.31 release on a 1.34 node group", Path: "spec.nodePools[0].releaseVersion", Msg: "release for Kubernetes 1.31", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.ReleaseVersion = "1.31.0-20240101"
	})},
	{Rule: rules.RuleEKSReleaseK8s, Sev: diag.SeverityError, Name: "Bottlerocket release without a 1.36 variant", Msg: "no variant for Kubernetes 1.36", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.36"
		p.OSImage, p.ReleaseVersion = "BOTTLEROCKET_x86_64_NVIDIA", "1.54.0-5043decc"
	})},
	{Rule: rules.RuleEKSReleaseUnknown, Sev: diag.SeverityError, Name: "made-up release inside the table", Msg: "its releases of 2025-12-09 are 1.34.2-20251209", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.ReleaseVersion = "1.34.1-20251209"
	})},
	{Rule: rules.RuleEKSReleaseUnknown, Sev: diag.SeverityError, Name: "release dated after the date checked at", Msg: "no such AL2023_x86_64_NVIDIA release exists yet", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.ReleaseVersion = "1.34.12-20270115"
	})},
	{Rule: rules.RuleEKSReleaseUnknown, Sev: diag.SeverityWarning, Name: "release newer than the table", Msg: "amis eks_releases, as of 2026-07-23", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.ReleaseVersion = "1.34.12-20261120"
	})},
	{Rule: rules.RuleEKSReleaseUnknown, Sev: diag.SeverityInfo, Name: "a tag without release notes", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.ReleaseVersion = "1.34.6-20260512"
	})},
	{Rule: rules.RuleEKSReleaseUnknown, Quiet: true, Name: "a release the notes list", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.ReleaseVersion = "1.34.2-20251209"
	})},
	{Rule: rules.RuleEKSReleaseDriver, Sev: diag.SeverityError, Name: "pinned driver the release does not ship", Path: "spec.nodePools[0].gpu.driver", Msg: "ships driver 580.105.08", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.ReleaseVersion, p.GPU.Driver = "1.34.2-20251209", "580.95.05"
	})},
	{Rule: rules.RuleEKSReleaseDriver, Quiet: true, Name: "pinned driver the release ships", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.ReleaseVersion, p.GPU.Driver = "1.34.2-20251209", "580.105.08"
	})},
	{Rule: rules.RuleEKSReleasePin, Sev: diag.SeverityError, Name: "pinned driver without a release", Path: "spec.nodePools[0].gpu.driver", Msg: "releases for Kubernetes 1.34 that ship driver 580.95.05: 1.34.1-20251112", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Driver = "580.95.05"
	})},
	{Rule: rules.RuleEKSReleasePin, Sev: diag.SeverityError, Name: "pinned driver no release ships", Msg: "no AL2023_x86_64_NVIDIA release the matrix knows for Kubernetes 1.34 ships driver 575.57.08", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Driver = "575.57.08"
	})},
	{Rule: rules.RuleEKSAMIArch, Sev: diag.SeverityError, Name: "x86 AMI on Graviton", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g5g.2xlarge" })},
	{Rule: rules.RuleEKSAMIEOL, Sev: diag.SeverityWarning, Name: "AL2 past support", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		p.OSImage = "AL2_x86_64_GPU"
	})},
	{Rule: rules.RuleEKSAMIGPU, Sev: diag.SeverityError, Name: "Windows AMI", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "WINDOWS_CORE_2022_x86_64" })},
	{Rule: rules.RuleEKSSingleAZ, Sev: diag.SeverityError, Name: "cluster placement group over two zones", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.PlacementGroup = "cluster"
		p.Zones = []string{"us-east-1a", "us-east-1b"}
	})},
	{Rule: rules.RuleEKSCapacityBlock, Sev: diag.SeverityError, Name: "Capacity Block with two instance types", Path: "spec.nodePools[0].instanceTypes", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.InstanceTypes = "", []string{"p5.48xlarge", "p5e.48xlarge"}
		p.Capacity, p.Reservation, p.Zones = spec.CapacityCapacityBlock, "cr-0123456789abcdef0", []string{"us-east-1a"}
	})},
	{Rule: rules.RuleEFAPlacement, Sev: diag.SeverityWarning, Name: "EFA training pool with placementGroup none", Path: "spec.nodePools[0].placementGroup", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		efaTraining(p)
		p.PlacementGroup = spec.PlacementGroupNone
	})},
	{Rule: rules.RuleEFAPlacement, Sev: diag.SeverityWarning, Name: "EFA training pool over two zones", Path: "spec.nodePools[0].zones", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		efaTraining(p)
		p.Zones = []string{"us-east-1a", "us-east-1b"}
	})},
	{Rule: rules.RuleEFAPlacement, Sev: diag.SeverityInfo, Name: "placementGroup cluster on a Capacity Block", Path: "spec.nodePools[0].placementGroup", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		efaTraining(p)
		p.Capacity, p.Reservation, p.Zones, p.PlacementGroup = spec.CapacityCapacityBlock, "cr-0123456789abcdef0", []string{"us-east-1a"}, spec.PlacementGroupCluster
	})},
	{Rule: rules.RuleEFAVPCCNI, Sev: diag.SeverityError, Name: "VPC CNI 1.18.3 with efa-only interfaces", Path: "spec.addons.vpcCni.version", Msg: "1.18.4", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		efaTraining(p)
		cs.Spec.Addons.VPCCNI.Version = "v1.18.3-eksbuild.1"
	})},
	{Rule: rules.RuleEFAVPCCNI, Sev: diag.SeverityInfo, Name: "efa-only interfaces, VPC CNI version not stated", Path: "spec.addons.vpcCni.version", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { efaTraining(p) })},
	{Rule: rules.RuleSpecVersion, Sev: diag.SeverityError, Name: "VPC CNI version that is no version", Path: "spec.addons.vpcCni.version", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.VPCCNI.Version = "latest"
	})},
	{Rule: rules.RuleDiskSize, Sev: diag.SeverityWarning, Name: "EKS training pool without diskSizeGB", Path: "spec.nodePools[0].diskSizeGB", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Role = spec.RoleTraining })},
	{Rule: rules.RuleDiskSize, Sev: diag.SeverityWarning, Name: "GKE training pool without diskSizeGB", Path: "spec.nodePools[0].diskSizeGB", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Role = spec.RoleTraining })},
	{Rule: rules.RuleLocalStorage, Sev: diag.SeverityWarning, Name: "raid0 on an EBS-only instance type", Path: "spec.nodePools[0].localStorage", Msg: "p3.2xlarge has no NVMe instance store", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.LocalStorage = "p3.2xlarge", spec.LocalStorageRAID0
	})},
	{Rule: rules.RuleLocalStorage, Sev: diag.SeverityInfo, Name: "raid0 on a GKE machine that attaches Local SSDs only when asked", Path: "spec.nodePools[0].localStorage", Msg: "g2-standard-8", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.LocalStorage = spec.LocalStorageRAID0 })},
	{Rule: rules.RuleLocalStorage, Quiet: true, Name: "raid0 on an instance type with NVMe instance store", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.LocalStorage = spec.LocalStorageRAID0 })},
	{Rule: rules.RuleLocalStorage, Quiet: true, Name: "raid0 on a GKE machine with its own Local SSDs", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType, p.LocalStorage = "a2-ultragpu-1g", spec.LocalStorageRAID0
	})},
	{Rule: rules.RuleEKSAutoscaler, Sev: diag.SeverityWarning, Name: "pool from 0 with no autoscaler named", Path: "spec.nodePools[0].autoscaling", Msg: "names no autoscaler", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.Autoscaler = "" })},
	{Rule: rules.RuleEKSAutoscaler, Sev: diag.SeverityInfo, Name: "autoscaler none on a pool with max above min", Msg: "addons.autoscaler is none", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.Autoscaler = "none"
		p.Autoscaling = spec.Autoscaling{Min: 1, Max: 3}
	})},
	{Rule: rules.RuleEKSAutoscaler, Quiet: true, Name: "a fixed-size pool needs no autoscaler", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.Autoscaler = ""
		p.Autoscaling = spec.Autoscaling{Min: 2, Max: 2}
	})},
	{Rule: rules.RuleEKSAutoscaler, Quiet: true, Name: "karpenter named", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.Autoscaler = "karpenter" })},
	{Rule: rules.RuleSpecEnum, Sev: diag.SeverityError, Name: "autoscaler not one gpuctl knows", Path: "spec.addons.autoscaler", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.Autoscaler = "keda" })},
	{Rule: rules.RuleSpecProviderField, Sev: diag.SeverityWarning, Name: "autoscaler on GKE", Path: "spec.addons.autoscaler", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.Autoscaler = "karpenter" })},
	{Rule: rules.RuleEKSK8sSupport, Sev: diag.SeverityWarning, Name: "EKS 1.31 past extended support", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "1.31" })},

	// GPU Operator.
	{Rule: rules.RuleOperatorCOS, Sev: diag.SeverityError, Name: "Operator driver on COS", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Driver = "INSTALLATION_DISABLED"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true)}}
	})},
	{Rule: rules.RuleOperatorK8s, Sev: diag.SeverityError, Name: "cluster older than the range", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0"}
	})},
	{Rule: rules.RuleOperatorK8s, Sev: diag.SeverityWarning, Name: "cluster newer than the range", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.35"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.10.1"}
	})},
	{Rule: rules.RuleOperatorGKEKit, Sev: diag.SeverityError, Name: "toolkit on GKE 1.34 without the workaround", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)}}
	})},
	{Rule: rules.RuleOperatorGKEVer, Sev: diag.SeverityError, Name: "v23.9.2 on GKE", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.29"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v23.9.2", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)}}
	})},
	{Rule: rules.RuleOperatorEOL, Sev: diag.SeverityWarning, Name: "deprecated line", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.3.3"}
	})},
	{Rule: rules.RuleOperatorDriver, Sev: diag.SeverityWarning, Name: "driver not in the release's matrix", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "AL2023_x86_64_STANDARD"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true), Version: "580.95.05"}}
	})},

	// NCCL and EFA.
	{Rule: rules.RuleNCCLIBDisable, Sev: diag.SeverityWarning, Name: "IB_DISABLE on RoCE", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a4-highgpu-8g"
		p.NCCL = spec.NCCL{Plugin: "gib", Env: map[string]string{"NCCL_IB_DISABLE": "1"}}
	})},
	{Rule: rules.RuleNCCLIBDisable, Sev: diag.SeverityInfo, Name: "IB_DISABLE on EFA", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.NCCL.Env = map[string]string{"NCCL_IB_DISABLE": "1"}
	})},
	{Rule: rules.RuleNCCLNetSocket, Sev: diag.SeverityWarning, Name: "Socket on A3 Mega", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a3-megagpu-8g"
		p.NCCL = spec.NCCL{Plugin: "tcpxo", Env: map[string]string{"NCCL_NET": "Socket"}}
	})},
	{Rule: rules.RuleNCCLNetSocket, Sev: diag.SeverityInfo, Name: "Socket without a GPU network", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_NET": "Socket"} })},
	{Rule: rules.RuleNCCLPrefix, Sev: diag.SeverityWarning, Name: "IB_HCA prefix", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_IB_HCA": "mlx5_0:1,mlx5_1:1"}
	})},
	{Rule: rules.RuleNCCLEFAPlugin, Sev: diag.SeverityWarning, Name: "EFA with another NCCL plugin named", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA.Enabled = true
		p.NCCL = spec.NCCL{Plugin: "tcpx", Env: map[string]string{"FI_PROVIDER": "efa"}}
	})},
	{Rule: rules.RuleNCCLEFAPlugin, Sev: diag.SeverityError, Name: "NCCL_NET=gIB on EKS", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_NET": "gIB"} })},
	{Rule: rules.RuleNCCLEFAPlugin, Sev: diag.SeverityInfo, Name: "FI_PROVIDER unset", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA.Enabled = true
		p.NCCL.Plugin = "aws-ofi-nccl"
	})},
	{Rule: rules.RuleNCCLGCPTransport, Sev: diag.SeverityWarning, Name: "TCPX on A3 Mega", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "a3-megagpu-8g"; p.NCCL.Plugin = "tcpx" })},
	{Rule: rules.RuleNCCLGCPTransport, Sev: diag.SeverityError, Name: "NCCL_NET forces AWS's plugin on GKE", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_NET": "AWS Libfabric"}
	})},
	{Rule: rules.RuleNCCLP2PDisable, Sev: diag.SeverityWarning, Name: "P2P disabled", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_P2P_DISABLE": "1"} })},
	{Rule: rules.RuleNCCLDebug, Sev: diag.SeverityInfo, Name: "NCCL_DEBUG=INFO", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_DEBUG": "INFO"} })},
	{Rule: rules.RuleNCCLUnknownEnv, Sev: diag.SeverityWarning, Name: "misspelt variable", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_SOCKET_IFNAM": "=eth0"}
	})},
	{Rule: rules.RuleNCCLUnknownEnv, Sev: diag.SeverityInfo, Name: "unknown variable", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_FROBNICATE_EVERYTHING": "1"}
	})},
	{Rule: rules.RuleEFAUnsupported, Sev: diag.SeverityError, Name: "EFA on g6.xlarge", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.EFA.Enabled = true })},
	{Rule: rules.RuleEFAInterfaces, Sev: diag.SeverityWarning, Name: "half the cards", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA = spec.EFA{Enabled: true, Interfaces: 16}
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "efa"}}
	})},
	{Rule: rules.RuleEFAInterfaces, Sev: diag.SeverityError, Name: "more interfaces than cards", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5en.48xlarge"
		p.EFA = spec.EFA{Enabled: true, Interfaces: 32}
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "efa"}}
	})},
	{Rule: rules.RuleEFADisabled, Sev: diag.SeverityWarning, Name: "multi-node training without EFA", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p4d.24xlarge"; p.Role = "training" })},

	// The acceptance sweep (spec.acceptance).
	{Rule: rules.RuleAcceptImageDigest, Sev: diag.SeverityWarning, Name: "sweep image by tag", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Acceptance = sweep("ghcr.io/gpuctl/gpuctl:v0.9.0", 1)
	})},
	{Rule: rules.RuleAcceptImageDigest, Sev: diag.SeverityWarning, Name: "sweep probe image by tag", Path: "spec.acceptance.images.cuda", Msg: "cuda probe image", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 1)
		cs.Spec.Acceptance.Images = map[string]string{"cuda": "mirror.example/nvidia/cuda-sample:vectoradd-cuda12.5.0"}
	})},
	{Rule: rules.RuleAcceptImageDigest, Quiet: true, Name: "sweep probe image by digest", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 1)
		cs.Spec.Acceptance.Images = map[string]string{"cuda": "mirror.example/nvidia/cuda-sample:v1@sha256:" + strings.Repeat("a", 64)}
	})},
	{Rule: rules.RuleAcceptParallel, Sev: diag.SeverityInfo, Name: "sweep parallel above the nodes", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Autoscaling.Max = 2
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 3)
	})},
	{Rule: rules.RuleAcceptPreflightPool, Sev: diag.SeverityError, Name: "preflight for a time-shared pool", Path: "spec.acceptance.preflight.pools[0]", Msg: "shared (sharing.strategy time-slicing)", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: spec.SharingTimeSlicing, Replicas: 4}
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 1)
		cs.Spec.Acceptance.Preflight = &spec.AcceptancePreflight{Pools: []string{p.Name}}
	})},
	{Rule: rules.RuleAcceptPreflightPool, Sev: diag.SeverityError, Name: "preflight for a pool without GPUs", Path: "spec.acceptance.preflight.pools[1]", Msg: "no GPUs", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cpu := spec.NodePool{Name: "cpu", MachineType: "n2-standard-8", Zones: p.Zones, Autoscaling: p.Autoscaling}
		cs.Spec.NodePools = append(cs.Spec.NodePools, cpu)
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 1)
		cs.Spec.Acceptance.Preflight = &spec.AcceptancePreflight{Pools: []string{cs.Spec.NodePools[0].Name, "cpu"}}
	})},
	{Rule: rules.RuleAcceptPreflightPool, Quiet: true, Name: "preflight for a pool of whole GPUs", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 1)
		cs.Spec.Acceptance.Preflight = &spec.AcceptancePreflight{Pools: []string{p.Name}}
	})},
	{Rule: rules.RuleAcceptStageNeeds, Sev: diag.SeverityError, Name: "sweep nccl-multi over TCPX without privilege", Path: "spec.acceptance.stages[1]", Msg: "acceptance.allowPrivileged: true", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		tcpxPool(p)
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 1)
		cs.Spec.Acceptance.Stages = []string{"kubernetes", "nccl-multi"}
	})},
	{Rule: rules.RuleAcceptStageNeeds, Quiet: true, Name: "sweep nccl-multi over TCPX with privilege", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		tcpxPool(p)
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 1)
		cs.Spec.Acceptance.Stages, cs.Spec.Acceptance.AllowPrivileged = []string{"kubernetes", "nccl-multi"}, true
	})},
	{Rule: rules.RuleAcceptStageNeeds, Sev: diag.SeverityError, Name: "sweep nccl-multi over one node", Path: "spec.acceptance.stages[0]", Msg: "at most 1 node", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Autoscaling.Max = 1
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 1)
		cs.Spec.Acceptance.Stages = []string{"nccl-multi"}
	})},
	{Rule: rules.RuleAcceptStageNeeds, Sev: diag.SeverityError, Name: "sweep framework-multi over unlike pools", Path: "spec.acceptance.stages[0]", Msg: "alike nodes", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		other := *p
		other.Name, other.MachineType, other.GPU.Type, other.GPU.Count = "l4", "g2-standard-24", "nvidia-l4", 2
		cs.Spec.NodePools = append(cs.Spec.NodePools, other)
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 1)
		cs.Spec.Acceptance.Stages = []string{"framework-multi"}
	})},
	{Rule: rules.RuleSpecRequired, Sev: diag.SeverityError, Name: "rollout gate sweep without spec.acceptance", Path: "spec.nodePools[0].rollout.gate", Msg: "no spec.acceptance", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Rollout = &spec.Rollout{Gate: spec.GateSweep}
	})},
	{Rule: rules.RuleSpecRequired, Quiet: true, Name: "rollout gate sweep with spec.acceptance", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Rollout = &spec.Rollout{Gate: spec.GateSweep}
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 1)
	})},
	{Rule: rules.RuleSpecEnum, Sev: diag.SeverityError, Name: "rollout gate not accept or sweep", Path: "spec.nodePools[0].rollout.gate", Msg: `did you mean "sweep"`, In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Rollout = &spec.Rollout{Gate: "swep"}
	})},

	// Policy: only with one (spec.policy, or --policy through Options.Policy).
	{Rule: rules.RulePolicyTaint, Sev: diag.SeverityWarning, Name: "required taint missing", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints = nil
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu=present:NoSchedule"}}
	})},
	{Rule: rules.RulePolicySpotMax, Sev: diag.SeverityWarning, Name: "spot pool without a maximum", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity, p.Autoscaling.Max = "spot", 0
		cs.Spec.Policy = &spec.Policy{MaxSpotShare: ptr(0.5)}
	})},
	{Rule: rules.RulePolicyCostTags, Sev: diag.SeverityWarning, Name: "--policy requires a tag", In: withPolicy(&spec.Policy{RequiredTags: []string{"owner"}}, eks(nil))},
	{Rule: rules.RulePolicyUpgrade, Sev: diag.SeverityWarning, Name: "training pool not held", In: gke(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(true)}
	})},

	// Waivers.
	{Rule: rules.RuleWaiverExpired, Sev: diag.SeverityWarning, Name: "expired waiver", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Waivers = []spec.Waiver{{Rule: rules.RuleDriverEOL, Reason: "migration", Expires: "2026-01-31"}}
	})},
	{Rule: rules.RuleWaiverInvalid, Sev: diag.SeverityWarning, Name: "unknown rule", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Waivers = []spec.Waiver{{Rule: "DRIVER-EOLL", Reason: "typo", Expires: "2027-01-31"}}
	})},

	// Generation.
	{Rule: rules.RuleGenDaemonSetToleration, Sev: diag.SeverityError, Name: "taint added after generation", In: edited(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints = append(p.Taints, spec.Taint{Key: "example.com/dedicated", Value: "ml", Effect: "NoExecute"})
	})},
	{Rule: rules.RuleGenDaemonSetSelector, Sev: diag.SeverityError, Name: "pool renamed after generation", In: edited(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Name = "renamed" })},
	{Rule: rules.RuleGenKueueResource, Sev: diag.SeverityError, Name: "sharing renamed after generation", In: edited(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "time-slicing", Replicas: 4, RenameByDefault: true}
	})},
	{Rule: rules.RuleGenDevicePluginOwner, Sev: diag.SeverityError, Name: "Bottlerocket after generation", In: edited(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA" })},
	{Rule: rules.RuleGenChartVersion, Sev: diag.SeverityWarning, Name: "chart version without a key list", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Version = "0.14.5" })},
	{Rule: rules.RuleGenChartVersion, Sev: diag.SeverityError, Name: "the same, for generate", In: generating(eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Version = "0.14.5" }))},
	{Rule: rules.RuleGenBuild, Sev: diag.SeverityError, Name: "reserved pool name", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Name = "default" })},
}

// edgeCases: the edges of each rule, and cases that must keep a rule quiet.
var edgeCases = []Case{
	// Spec shape.
	{Name: "provider missing", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Provider = "" }}, Rule: rules.RuleSpecRequired, Sev: diag.SeverityError, Path: "spec.provider"},
	{Name: "region missing", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Region = "" }}, Rule: rules.RuleSpecRequired, Sev: diag.SeverityError, Path: "spec.region"},
	{Name: "no machine type", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "" }}, Rule: rules.RuleSpecRequired, Sev: diag.SeverityError},
	{Name: "role misspelt", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Role = "trainig" }}, Rule: rules.RuleSpecEnum, Sev: diag.SeverityError, Msg: `did you mean "training"`},
	{Name: "unknown AMI", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "AL2023_X86_64_NVIDIA" }}, Rule: rules.RuleSpecEnum, Sev: diag.SeverityError, Msg: "AL2023_x86_64_NVIDIA"},
	{Name: "GKE image", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "cos_containerd" }}, Rule: rules.RuleSpecEnum, Sev: diag.SeverityError},
	{Name: "driver not a version", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "CUSTOM"; p.GPU.Driver = "580.x" }}, Rule: rules.RuleSpecVersion, Sev: diag.SeverityError},
	{Name: "kubernetes version", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "v1.33-eks" }}, Rule: rules.RuleSpecVersion, Sev: diag.SeverityError},
	{Name: "label key", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Labels = map[string]string{"gpu type": "l4"} }}, Rule: rules.RuleSpecLabel, Sev: diag.SeverityError, Path: `spec.nodePools[0].labels["gpu type"]`},
	{Name: "label value", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Labels = map[string]string{"gpu": "NVIDIA L4"} }}, Rule: rules.RuleSpecLabel, Sev: diag.SeverityError},
	{Name: "label good", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Labels = map[string]string{"example.com/gpu-type": "l4"}
	}}, Quiet: true, Rule: rules.RuleSpecLabel},
	{Name: "taint effect terraform spelling", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Taints[0].Effect = "NO_SCHEDULE" }}, Rule: rules.RuleSpecTaint, Sev: diag.SeverityError, Msg: "NoSchedule"},
	{Name: "egress CIDR without prefix", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Network.EgressCIDRs = []string{"10.0.0.0/16", "10.20.0.0"}
	}}, Rule: rules.RuleSpecNetwork, Sev: diag.SeverityError, Msg: "10.20.0.0"},
	{Name: "team pool misspelt", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Teams = []spec.Team{{Name: "serving", Pools: []string{p.Name + "s"}}}
	}}, Rule: rules.RuleSpecReference, Sev: diag.SeverityError, Path: "spec.teams[0].pools[0]", Msg: "did you mean"},
	{Name: "team pool known", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Teams = []spec.Team{{Name: "serving", Pools: []string{p.Name}}}
	}}, Quiet: true, Rule: rules.RuleSpecReference},
	{Name: "duplicate taint", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Taints = append(p.Taints, p.Taints[0]) }}, Rule: rules.RuleSpecTaint, Sev: diag.SeverityError},
	{Name: "GKE pool name", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Name = "Train_H100" }}, Rule: rules.RuleSpecName, Sev: diag.SeverityError},
	{Name: "EKS pool name with underscore", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Name = "Train_H100" }}, Quiet: true, Rule: rules.RuleSpecName},
	{Name: "GCP label tag", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Tags["Cost.Center"] = "ML" }}, Rule: rules.RuleSpecCloudTags, Sev: diag.SeverityError, Msg: "cost-center"},
	{Name: "AWS tag reserved prefix", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Tags["aws:team"] = "x" }}, Rule: rules.RuleSpecCloudTags, Sev: diag.SeverityError},
	{Name: "AWS tag with dots and capitals", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Tags["Cost.Center"] = "ML Platform" }}, Quiet: true, Rule: rules.RuleSpecCloudTags},
	{Name: "autoscaling min > max", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling = spec.Autoscaling{Min: 5, Max: 2} }}, Rule: rules.RuleSpecAutoscaling, Sev: diag.SeverityError},
	// Numbers bounded by the providers' limits; names in the clouds' formats
	// (the hostile inputs of issue 11: int64 max, quotes, newlines, ${...}).
	{Name: "max int64", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling.Max = 9223372036854775807 }}, Rule: rules.RuleSpecAutoscaling, Sev: diag.SeverityError, Path: "spec.nodePools[0].autoscaling.max"},
	{Name: "GKE max above 1,000 per zone", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Zones = []string{"us-central1-a"}
		p.Autoscaling.Max = 1001
	}}, Rule: rules.RuleSpecAutoscaling, Sev: diag.SeverityError, Msg: "1000 nodes per node pool zone"},
	{Name: "GKE max 2,000 over two zones", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Zones = []string{"us-central1-a", "us-central1-b"}
		p.Autoscaling.Max = 2000
	}}, Quiet: true, Rule: rules.RuleSpecAutoscaling},
	{Name: "GKE max above a cluster", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Zones = nil; p.Autoscaling.Max = 15001 }}, Rule: rules.RuleSpecAutoscaling, Sev: diag.SeverityError},
	{Name: "EKS max above the default quota", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling.Max = 451 }}, Rule: rules.RuleSpecAutoscaling, Sev: diag.SeverityWarning},
	{Name: "EKS max at the default quota", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Autoscaling.Max = 450 }}, Quiet: true, Rule: rules.RuleSpecAutoscaling},
	{Name: "GKE disk 100 TB", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.DiskSizeGB = 100000 }}, Rule: rules.RuleSpecRange, Sev: diag.SeverityError, Path: "spec.nodePools[0].diskSizeGB"},
	{Name: "EKS disk above gp3", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.DiskSizeGB = 16385 }}, Rule: rules.RuleSpecRange, Sev: diag.SeverityError},
	{Name: "EKS disk at gp3's limit", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.DiskSizeGB = 16384 }}, Quiet: true, Rule: rules.RuleSpecRange},
	{Name: "EKS rollout above 100 nodes", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Rollout = &spec.Rollout{MaxUnavailable: &spec.IntOrPercent{Value: 101}}
	}}, Rule: rules.RuleSpecRange, Sev: diag.SeverityError, Path: "spec.nodePools[0].rollout.maxUnavailable"},
	{Name: "EKS rollout 100%", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Rollout = &spec.Rollout{MaxUnavailable: &spec.IntOrPercent{Value: 100, Percent: true}}
	}}, Quiet: true, Rule: rules.RuleSpecRange},
	{Name: "negative disk", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.DiskSizeGB = -1 }}, Rule: rules.RuleSpecRange, Sev: diag.SeverityError},
	{Name: "GKE time-sharing 49 clients", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: spec.SharingTimeSlicing, Replicas: 49}
	}}, Rule: rules.RuleSpecRange, Sev: diag.SeverityError, Path: "spec.nodePools[0].gpu.sharing.replicas"},
	{Name: "GKE time-sharing 48 clients", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: spec.SharingTimeSlicing, Replicas: 48}
	}}, Quiet: true, Rule: rules.RuleSpecRange},
	{Name: "region with a newline", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Region = "us-central1\"\n${x}" }, Unwritable: true}, Rule: rules.RuleSpecFormat, Sev: diag.SeverityError, Path: "spec.region"},
	{Name: "GKE zonal location", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Region = "us-central1-a"
		p.Zones = []string{"us-central1-a"}
	}}, Quiet: true, Rule: rules.RuleSpecFormat},
	{Name: "AWS Region name", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Region = "us-east" }}, Rule: rules.RuleSpecFormat, Sev: diag.SeverityError},
	{Name: "GovCloud region", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Region = "us-gov-west-1"
		p.Zones = []string{"us-gov-west-1a"}
	}}, Quiet: true, Rule: rules.RuleSpecFormat},
	{Name: "zone of another region", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Zones = []string{"us-west-2a"} }}, Rule: rules.RuleSpecFormat, Sev: diag.SeverityError, Path: "spec.nodePools[0].zones[0]", Msg: "not in region us-east-1"},
	{Name: "zone with template", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Zones = []string{"${var.zone}"} }}, Rule: rules.RuleSpecFormat, Sev: diag.SeverityError},
	{Name: "AWS Local Zone", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Region = "us-west-2"
		p.Zones = []string{"us-west-2-lax-1a"}
	}}, Quiet: true, Rule: rules.RuleSpecFormat},
	{Name: "EC2 reservation with quotes", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Capacity = "reservation"; p.Reservation = `cr-0123"x` }}, Rule: rules.RuleSpecFormat, Sev: diag.SeverityError, Path: "spec.nodePools[0].reservation"},
	{Name: "GCE shared reservation", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity = "reservation"
		p.Reservation = "projects/other-project/reservations/l4-pool"
	}}, Quiet: true, Rule: rules.RuleSpecFormat},
	{Name: "GCE reservation with a newline", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Capacity = "reservation"; p.Reservation = "res\nx" }, Unwritable: true}, Rule: rules.RuleSpecFormat, Sev: diag.SeverityError},
	{Name: "dcgm-exporter chart version not a version", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DCGMExporter = spec.DCGMExporter{Enabled: true, Version: "4.2foo"}
	}}, Rule: rules.RuleSpecVersion, Sev: diag.SeverityError, Path: "spec.addons.dcgmExporter.version"},
	{Name: "release version not a release", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.ReleaseVersion = "latest" }}, Rule: rules.RuleSpecVersion, Sev: diag.SeverityError, Path: "spec.nodePools[0].releaseVersion"},
	{Name: "placement group with a newline", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.PlacementGroup = "pg\nx" }, Unwritable: true}, Rule: rules.RuleSpecFormat, Sev: diag.SeverityError, Path: "spec.nodePools[0].placementGroup"},
	{Name: "maintenance window with a newline", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MaintenanceWindow = "Sat 02:00-06:00 UTC\n}" }, Unwritable: true}, Rule: rules.RuleSpecFormat, Sev: diag.SeverityWarning},
	{Name: "maintenance window", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MaintenanceWindow = "Sat-Sun 22:00-24:00 Europe/Berlin"
	}}, Quiet: true, Rule: rules.RuleSpecFormat},
	{Name: "NCCL env name with '='", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_DEBUG=INFO": "1"} }}, Rule: rules.RuleSpecFormat, Sev: diag.SeverityError, Path: `spec.nodePools[0].nccl.env["NCCL_DEBUG=INFO"]`},
	{Name: "toolkit env name with a newline", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator.Toolkit.Env = map[string]string{"A\nB": "x"}
	}, Unwritable: true}, Rule: rules.RuleSpecFormat, Sev: diag.SeverityError, Path: `spec.addons.gpuOperator.toolkit.env["A\nB"]`},
	{Name: "instanceTypes on GKE", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g2-standard-8"}
	}}, Rule: rules.RuleSpecProviderField, Sev: diag.SeverityError},
	{Name: "GKE driver keyword on EKS", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Driver = "LATEST" }}, Rule: rules.RuleSpecProviderField, Sev: diag.SeverityError},
	{Name: "releaseChannel on EKS", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.ReleaseChannel = "REGULAR" }}, Rule: rules.RuleSpecProviderField, Sev: diag.SeverityWarning},

	// CUDA <-> driver (exact drivers through a custom AMI).
	{Name: "CUDA 12.7", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "12.7" }}, Rule: rules.RuleCUDAUnknown, Sev: diag.SeverityError, Path: "spec.cuda"},
	{Name: "CUDA 12.10", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "12.10" }}, Rule: rules.RuleCUDAUnknown, Sev: diag.SeverityError},
	{Name: "CUDA newer than the matrix", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "14.0" }}, Rule: rules.RuleBeyondTable, Sev: diag.SeverityWarning, Path: "spec.cuda"},
	{Name: "CUDA update not in the table", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "12.3.2" }}, Rule: rules.RuleUnknownFact, Sev: diag.SeverityInfo, Msg: "12.3 Update 1"},
	{Name: "driver below 12.x floor", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "470.199.02"); cs.Spec.CUDA = "12.0" }}, Rule: rules.RuleCUDADriverMin, Sev: diag.SeverityError},
	{Name: "minor compat, numeric compare", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "535.54.03"); cs.Spec.CUDA = "12.2.2" }}, Rule: rules.RuleCUDAMinorCompat, Sev: diag.SeverityWarning, Msg: "535.104.05"},
	{Name: "exact minimum", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "535.104.05"); cs.Spec.CUDA = "12.2.2" }}, Quiet: true, Rule: rules.RuleCUDAMinorCompat},
	{Name: "driver 1000 runs everything", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "1000.1"); cs.Spec.CUDA = "13.2" }}, Quiet: true, Rule: rules.RuleCUDADriverMin},
	{Name: "pool CUDA overrides spec CUDA", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "580.95.05"); p.CUDA = "13.1" }}, Rule: rules.RuleCUDAMinorCompat, Sev: diag.SeverityWarning, Path: "spec.nodePools[0].gpu.driver"},
	{Name: "branch-only driver above the minimum", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "12.9" }}, Quiet: true, Rule: rules.RuleCUDAMinorCompat},
	{Name: "13.4 needs R615", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "595.91.07"); cs.Spec.CUDA = "13.4" }}, Rule: rules.RuleCUDAMinorCompat, Sev: diag.SeverityWarning, Msg: "R615"},
	{Name: "13.5 needs R620", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "580.95.05"); cs.Spec.CUDA = "13.5" }}, Rule: rules.RuleCUDAMinorCompat, Sev: diag.SeverityWarning, Msg: "R620"},
	{Name: "13.5 on R620", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "620.70.06"); cs.Spec.CUDA = "13.5" }}, Quiet: true, Rule: rules.RuleCUDAMinorCompat},
	{Name: "13.4 Update 1 needs R615", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "595.91.07"); cs.Spec.CUDA = "13.4.2" }}, Rule: rules.RuleCUDAMinorCompat, Sev: diag.SeverityWarning, Msg: "13.4 Update 1"},
	{Name: "cuda-compat on a supported branch", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "580.173.02")
		cs.Spec.CUDA = "13.2"
		p.CUDACompat = "13.2"
	}}, Quiet: true, Rule: rules.RuleCUDAForwardCompat},
	{Name: "cuda-compat covers the CUDA check", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "580.173.02")
		cs.Spec.CUDA = "13.2"
		p.CUDACompat = "13.2"
	}}, Quiet: true, Rule: rules.RuleCUDAMinorCompat},
	{Name: "cuda-compat on an NFB", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "590.48.01")
		cs.Spec.CUDA = "13.2"
		p.CUDACompat = "13.2"
	}}, Rule: rules.RuleCUDAForwardCompat, Sev: diag.SeverityError, Msg: "New Feature Branch"},
	{Name: "cuda-compat on a branch the matrix does not list", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "525.147.05")
		cs.Spec.CUDA = "13.0"
		p.CUDACompat = "13.0"
	}}, Rule: rules.RuleCUDAForwardCompat, Sev: diag.SeverityError},
	{Name: "cuda-compat not needed", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		custom(p, "595.91.07")
		cs.Spec.CUDA = "13.0"
		p.CUDACompat = "13.0"
	}}, Rule: rules.RuleCUDAForwardCompat, Sev: diag.SeverityWarning, Msg: "not needed"},
	{Name: "cuda-compat older than the images", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		custom(p, "580.173.02")
		cs.Spec.CUDA = "13.2"
		p.CUDACompat = "13.1"
	}}, Rule: rules.RuleCUDAForwardCompat, Sev: diag.SeverityError},

	// GPU <-> driver <-> CUDA.
	{Name: "unknown GPU type on EKS: the instance type's GPU is judged", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Type = "RTX 9090" }}, Rule: rules.RuleGPUUnknown, Sev: diag.SeverityInfo, Msg: "L4"},
	{Name: "unknown accelerator type on GKE", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Type = "nvidia-rtx-9090" }}, Rule: rules.RuleGPUUnknown, Sev: diag.SeverityError},
	{Name: "V100 on R595", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p3.2xlarge"; custom(p, "595.91.07") }}, Rule: rules.RuleGPUDriverBranch, Sev: diag.SeverityError, Msg: "R580"},
	{Name: "V100 on R580", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p3.2xlarge"; custom(p, "580.95.05") }}, Quiet: true, Rule: rules.RuleGPUDriverBranch},
	{Name: "G7 on the R580 AMI", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g7.12xlarge" }}, Rule: rules.RuleGPUDriverBranch, Sev: diag.SeverityError, Msg: "R595"},
	{Name: "G6f on R595", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g6f.xlarge"; custom(p, "595.91.07") }}, Rule: rules.RuleGPUDriverBranch, Sev: diag.SeverityError},
	{Name: "B200 with 570.124.06", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p6-b200.48xlarge"
		custom(p, "570.124.06")
	}}, Rule: rules.RuleGPUDriverBranch, Sev: diag.SeverityError, Msg: "570.133.20"},
	{Name: "H100 with R525 is no branch error", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "525.60.13")
		cs.Spec.CUDA = "12.0"
	}}, Quiet: true, Rule: rules.RuleGPUDriverBranch},
	{Name: "H200 invents no minimum", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5e.48xlarge"
		custom(p, "535.309.01")
		cs.Spec.CUDA = "12.2"
	}}, Quiet: true, Rule: rules.RuleGPUDriverBranch},
	{Name: "H200 on R470: Hopper's floor", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5e.48xlarge"
		custom(p, "470.256.02")
		cs.Spec.CUDA = "11.4"
	}}, Rule: rules.RuleGPUDriverBranch, Sev: diag.SeverityError, Msg: "R520"},
	{Name: "p2 (K80) on the R580 AMI", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p2.xlarge"
		cs.Spec.CUDA = "11.4"
	}}, Rule: rules.RuleGPUDriverBranch, Sev: diag.SeverityError, Msg: "R470"},
	{Name: "g3 (M60) on R580", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "g3.16xlarge"
		custom(p, "580.95.05")
		cs.Spec.CUDA = "12.8"
	}}, Quiet: true, Rule: rules.RuleGPUDriverBranch},
	{Name: "g3 (M60) on R595", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "g3s.xlarge"
		custom(p, "595.91.07")
		cs.Spec.CUDA = "12.8"
	}}, Rule: rules.RuleGPUDriverBranch, Sev: diag.SeverityError, Msg: "R580"},
	{Name: "T4 on R470 is above Turing's floor", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "g4dn.xlarge"
		custom(p, "470.256.02")
		cs.Spec.CUDA = "11.4"
	}}, Quiet: true, Rule: rules.RuleGPUDriverBranch},
	{Name: "K80 with CUDA 12", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "n1-standard-8"
		p.GPU.Type = "nvidia-tesla-k80"
		cs.Spec.CUDA = "12.0"
	}}, Rule: rules.RuleGPUArchCUDA, Sev: diag.SeverityError},
	{Name: "L4 with CUDA 11.7 runs through PTX JIT", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.CUDA = "11.7" }}, Rule: rules.RuleGPUArchCUDA, Sev: diag.SeverityWarning, Msg: "11.8"},
	{Name: "B200 proprietary modules", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p6-b200.48xlarge"
		p.GPU.KernelModules = "proprietary"
	}}, Rule: rules.RuleGPUOpenModules, Sev: diag.SeverityError},
	{Name: "B200 open modules", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p6-b200.48xlarge"
		p.GPU.KernelModules = "open"
	}}, Quiet: true, Rule: rules.RuleGPUOpenModules},
	{Name: "open modules through the Operator", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p6-b200.48xlarge"
		p.OSImage = "AL2023_x86_64_STANDARD"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true), Version: "580.173.02", KernelModuleType: "proprietary"}}
	}}, Rule: rules.RuleGPUOpenModules, Sev: diag.SeverityError, Path: "spec.addons.gpuOperator.driver.kernelModuleType"},
	{Name: "MIG on L4", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "1g.6gb"}
	}}, Rule: rules.RuleMIGUnsupported, Sev: diag.SeverityError},
	{Name: "MIG profile of another product", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-highgpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "7g.80gb"}
	}}, Rule: rules.RuleMIGProfile, Sev: diag.SeverityError, Msg: "7g.40gb"},
	{Name: "MIG profile of the product", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "3g.40gb"}
	}}, Quiet: true, Rule: rules.RuleMIGProfile},
	{Name: "MIG without a profile", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig"}
	}}, Rule: rules.RuleMIGProfile, Sev: diag.SeverityError},
	{Name: "MIG driver too old", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		custom(p, "525.60.13")
		cs.Spec.CUDA = "12.0"
		p.GPU.Sharing = spec.Sharing{Strategy: "mig", MIGProfile: "1g.10gb"}
	}}, Rule: rules.RuleMIGDriverMin, Sev: diag.SeverityError, Msg: "525.85.12"},
	{Name: "R535 past EOL", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "535.309.01"); cs.Spec.CUDA = "12.2" }}, Rule: rules.RuleDriverEOL, Sev: diag.SeverityWarning, Msg: "June 2026"},
	{Name: "R580 in support", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "580.173.02") }}, Quiet: true, Rule: rules.RuleDriverEOL},
	{Name: "NFB in production", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "590.48.01") }}, Rule: rules.RuleDriverNFBProd, Sev: diag.SeverityWarning},
	{Name: "unknown branch", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { custom(p, "999.1") }}, Rule: rules.RuleUnknownFact, Sev: diag.SeverityInfo, Msg: "R999"},

	// Driver and device plugin owners.
	{Name: "two drivers on an NVIDIA AMI", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true)}}
	}}, Rule: rules.RuleDriverOwner, Sev: diag.SeverityError, Msg: "two installers of one driver"},
	{Name: "no driver on a standard AMI", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "AL2023_x86_64_STANDARD" }}, Rule: rules.RuleDriverOwner, Sev: diag.SeverityError},
	{Name: "Operator driver on a standard AMI", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "AL2023_x86_64_STANDARD"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true)}}
	}}, Quiet: true, Rule: rules.RuleDriverOwner},
	{Name: "GKE LATEST on Ubuntu", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "UBUNTU_CONTAINERD" }}, Rule: rules.RuleGKEDriverOption, Sev: diag.SeverityError},
	{Name: "GKE DEFAULT on Ubuntu", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "UBUNTU_CONTAINERD"
		p.GPU.Driver = "DEFAULT"
	}}, Quiet: true, Rule: rules.RuleGKEDriverOption},
	{Name: "GKE driver unset before 1.30.1-gke.1156000", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.30.1-gke.1155000"
		p.GPU.Driver = ""
	}}, Rule: rules.RuleGKEDriverOption, Sev: diag.SeverityError, Msg: "installs no driver before GKE 1.30.1-gke.1156000"},
	{Name: "GKE INSTALLATION_DISABLED on a pool of its own is a note", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Driver = "INSTALLATION_DISABLED" }}, Rule: rules.RuleUnknownFact, Sev: diag.SeverityInfo, Msg: "installer DaemonSet must install it"},
	{Name: "GKE INSTALLATION_DISABLED on a node-auto-provisioned pool", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Driver, p.AutoProvisioned = "INSTALLATION_DISABLED", true
	}}, Rule: rules.RuleGKEDriverOption, Sev: diag.SeverityError, Path: "spec.nodePools[0].gpu.driver", Msg: "nothing installs the driver"},
	{Name: "GKE driver unset installs DEFAULT", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Driver = "" }}, Quiet: true, Rule: rules.RuleGKEDriverOption},
	{Name: "GKE past standard support", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "1.34" }}, Rule: rules.RuleGKEK8sSupport, Sev: diag.SeverityWarning, Path: "spec.kubernetesVersion"},
	{Name: "GKE exact driver on COS", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Driver = "580.95.05" }}, Rule: rules.RuleGKEDriverOption, Sev: diag.SeverityError},
	{Name: "GKE exact driver via the Operator on Ubuntu", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "UBUNTU_CONTAINERD"
		p.GPU.Driver = "580.173.02"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true), Version: "580.173.02"},
			Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}}, Quiet: true, Rule: rules.RuleGKEDriverOption},
	{Name: "GKE plugin plus Helm plugin", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Provider = "helm" }}, Rule: rules.RulePluginConflict, Sev: diag.SeverityError},
	{Name: "GKE label without INSTALLATION_DISABLED", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "helm"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
	}}, Rule: rules.RulePluginConflict, Sev: diag.SeverityError, Path: "spec.nodePools[0].gpu.driver"},
	{Name: "GKE label and INSTALLATION_DISABLED", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "helm"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		p.GPU.Driver = "INSTALLATION_DISABLED"
	}}, Quiet: true, Rule: rules.RulePluginConflict},
	{Name: "GKE-managed pool beside a GPU Operator pool", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
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
	}}, Quiet: true, Rule: rules.RulePluginConflict},
	{Name: "GPU Operator plugin with no pool of its own", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0",
			Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}}, Rule: rules.RulePluginConflict, Sev: diag.SeverityError},
	{Name: "GKE plugin disabled, none other", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
	}}, Rule: rules.RulePluginMissing, Sev: diag.SeverityError},
	{Name: "AL2023 without plugin", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{} }}, Rule: rules.RulePluginMissing, Sev: diag.SeverityError},
	{Name: "Bottlerocket built-in plugin", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
		cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{}
	}}, Quiet: true, Rule: rules.RulePluginMissing},
	{Name: "pool override of the plugin", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
		p.DevicePlugin = &spec.DevicePlugin{Provider: "bottlerocket"}
	}}, Quiet: true, Rule: rules.RulePluginConflict},
	{Name: "bottlerocket provider on GKE", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Provider = "bottlerocket" }}, Rule: rules.RulePluginProvider, Sev: diag.SeverityError},
	{Name: "gpu-operator provider without the Operator", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator" }}, Rule: rules.RulePluginProvider, Sev: diag.SeverityError},
	{Name: "MPS with an old plugin", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Version = "0.14.5"
		p.GPU.Sharing = spec.Sharing{Strategy: "mps", Replicas: 4}
	}}, Rule: rules.RulePluginVersion, Sev: diag.SeverityWarning},
	{Name: "MPS with a current plugin", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "mps", Replicas: 4}
	}}, Quiet: true, Rule: rules.RulePluginVersion},

	// GPU Operator.
	{Name: "Operator driver on COS", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Driver = "INSTALLATION_DISABLED"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true)}}
	}}, Rule: rules.RuleOperatorCOS, Sev: diag.SeverityError},
	{Name: "Operator outside its CSP range", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.10.1"}
		cs.Spec.KubernetesVersion = "1.35"
	}}, Rule: rules.RuleOperatorK8s, Sev: diag.SeverityWarning, Msg: "range of v25.10.0"},
	{Name: "Operator inside its range", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0"}
	}}, Quiet: true, Rule: rules.RuleOperatorK8s},
	{Name: "Operator toolkit on GKE 1.33+", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)}}
	}}, Rule: rules.RuleOperatorGKEKit, Sev: diag.SeverityError},
	{Name: "Operator toolkit on GKE 1.33+ with the workaround", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)},
			Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}}, Quiet: true, Rule: rules.RuleOperatorGKEKit},
	{Name: "Operator too old for GKE", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.29"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v23.9.2", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)}}
	}}, Rule: rules.RuleOperatorGKEVer, Sev: diag.SeverityError},
	{Name: "Operator out of support", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.3.4"}
	}}, Rule: rules.RuleOperatorEOL, Sev: diag.SeverityWarning},
	{Name: "Operator deprecated line", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.3.3"}
	}}, Rule: rules.RuleOperatorEOL, Sev: diag.SeverityWarning, Msg: "deprecated"},
	{Name: "Operator driver not in its matrix", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "AL2023_x86_64_STANDARD"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(true), Version: "580.95.05"}}
	}}, Rule: rules.RuleOperatorDriver, Sev: diag.SeverityWarning},

	// GPU Operator chart defaults: driver.enabled unset is the chart's true.
	{Name: "Operator driver left at the chart default on the AL2023 NVIDIA AMI", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Toolkit: spec.OperatorToolkit{Enabled: ptr(false)}}
	}}, Rule: rules.RuleDriverOwner, Sev: diag.SeverityError, Path: "spec.addons.gpuOperator.driver.enabled", Msg: "chart default of v26.7.0 is true"},
	{Name: "Operator driver off on the AL2023 NVIDIA AMI", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(false)}, Toolkit: spec.OperatorToolkit{Enabled: ptr(false)}}
	}}, Quiet: true, Rule: rules.RuleDriverOwner},
	// A pool the platform owns is labelled out of the Operator's operands
	// when the Operator has pools of its own ...
	{Name: "Operator driver at the chart default on Bottlerocket, labelled out of the operands", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{}
		p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0"}
		op := *p
		op.Name, op.OSImage, op.DevicePlugin = "operator", "AL2023_x86_64_STANDARD", &spec.DevicePlugin{Provider: "gpu-operator"}
		cs.Spec.NodePools = append(cs.Spec.NodePools, op)
	}}, Quiet: true, Rule: rules.RuleDriverOwner},
	// ... but an Operator with no pool of its own is judged as running on
	// every pool: two drivers on the Bottlerocket NVIDIA AMI.
	{Name: "Operator driver at the chart default on Bottlerocket, the Operator's only pool", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{}
		p.OSImage = "BOTTLEROCKET_x86_64_NVIDIA"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0"}
	}}, Rule: rules.RuleDriverOwner, Sev: diag.SeverityError, Msg: "NVIDIA publishes no driver container"},
	{Name: "Operator driver at the chart default on GKE COS", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Driver = "INSTALLATION_DISABLED"
		p.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}}, Rule: rules.RuleOperatorCOS, Sev: diag.SeverityError, Msg: "chart default of v26.7.0 is true"},
	{Name: "Operator driver at the chart default next to GKE's Ubuntu driver", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.OSImage = "UBUNTU_CONTAINERD"
		p.GPU.Driver = "DEFAULT"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.3.2", Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}}, Rule: rules.RuleDriverOwner, Sev: diag.SeverityError, Path: "spec.nodePools[0].gpu.driver", Msg: "chart default of v26.3.2 is true"},
	{Name: "Operator on GKE pools GKE's plugin owns", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)},
			Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
		op := *p
		op.Name, op.OSImage, op.GPU.Driver = "operator", "UBUNTU_CONTAINERD", "INSTALLATION_DISABLED"
		op.Labels = map[string]string{"gke-no-default-nvidia-gpu-device-plugin": "true"}
		op.DevicePlugin = &spec.DevicePlugin{Provider: "helm"}
		cs.Spec.NodePools = append(cs.Spec.NodePools, op)
	}}, Quiet: true, Rule: rules.RuleOperatorCOS},
	{Name: "Operator with default values on a GKE COS pool, its only pool", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", DevicePlugin: spec.OperatorComponent{Enabled: ptr(false)},
			Toolkit: spec.OperatorToolkit{Env: map[string]string{"RUNTIME_CONFIG_SOURCE": "file"}}}
	}}, Rule: rules.RuleOperatorCOS, Sev: diag.SeverityError, Msg: "cannot install the driver"},
	{Name: "Operator on Amazon Linux 2", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		p.OSImage = "AL2_x86_64_GPU"
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v25.3.2", Driver: spec.OperatorDriver{Enabled: ptr(false)}, Toolkit: spec.OperatorToolkit{Enabled: ptr(false)}}
	}}, Rule: rules.RuleOperatorAL2, Sev: diag.SeverityError, Path: "spec.nodePools[0].osImage", Msg: "glibc 2.26"},
	{Name: "AL2 with the device plugin only", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		p.OSImage = "AL2_x86_64_GPU"
	}}, Quiet: true, Rule: rules.RuleOperatorAL2},
	{Name: "Operator toolkit at the chart default on the AL2023 NVIDIA AMI", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(false)}}
	}}, Rule: rules.RuleOperatorToolkit, Sev: diag.SeverityError, Msg: "chart default of v26.7.0 is true"},
	{Name: "Operator toolkit from a value not read on the AL2023 NVIDIA AMI", In: unknown(Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(false)}}
	}}, "spec.addons.gpuOperator.toolkit.enabled"), Quiet: true, Rule: rules.RuleOperatorToolkit},
	{Name: "Operator driver from a value not read on the AL2023 NVIDIA AMI", In: unknown(Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Toolkit: spec.OperatorToolkit{Enabled: ptr(false)}}
	}}, "spec.addons.gpuOperator.driver.enabled"), Quiet: true, Rule: rules.RuleDriverOwner},
	{Name: "Operator toolkit off on the AL2023 NVIDIA AMI", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Addons.DevicePlugin.Provider = "gpu-operator"
		cs.Spec.Addons.GPUOperator = spec.GPUOperator{Enabled: true, Version: "v26.7.0", Driver: spec.OperatorDriver{Enabled: ptr(false)}, Toolkit: spec.OperatorToolkit{Enabled: ptr(false)}}
	}}, Quiet: true, Rule: rules.RuleOperatorToolkit},

	// Sharing and labels.
	{Name: "time-slicing with 1 replica", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "time-slicing", Replicas: 1}
	}}, Rule: rules.RuleSharingReplicas, Sev: diag.SeverityError},
	{Name: "time-slicing with 2 replicas", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.GPU.Sharing = spec.Sharing{Strategy: "time-slicing", Replicas: 2}
	}}, Quiet: true, Rule: rules.RuleSharingReplicas},
	{Name: "MPS on MIG", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "mps", Replicas: 2, MIGProfile: "1g.10gb"}
	}}, Rule: rules.RuleSharingMPSMIG, Sev: diag.SeverityError},
	{Name: "time-sliced MIG", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-1g"
		p.GPU.Sharing = spec.Sharing{Strategy: "time-slicing", Replicas: 2, MIGProfile: "1g.10gb"}
	}}, Quiet: true, Rule: rules.RuleSharingMPSMIG},
	{Name: "replicas without a strategy", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Sharing = spec.Sharing{Replicas: 4} }}, Rule: rules.RuleSharingFields, Sev: diag.SeverityWarning},
	{Name: "GFD label set by hand", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Labels = map[string]string{"nvidia.com/gpu.product": "NVIDIA-L4"}
	}}, Rule: rules.RuleLabelGFDManaged, Sev: diag.SeverityWarning},
	{Name: "gpu.present may be set by hand", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Labels = map[string]string{"nvidia.com/gpu.present": "true"}
	}}, Quiet: true, Rule: rules.RuleLabelGFDManaged},

	// Machine catalogue.
	{Name: "EKS type on GKE", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g5.xlarge" }}, Rule: rules.RuleMachineUnknown, Sev: diag.SeverityError, Msg: "EKS machine type"},
	{Name: "made-up type", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p5.48xl" }}, Rule: rules.RuleMachineUnknown, Sev: diag.SeverityError, Msg: "p5.48xlarge"},
	{Name: "g2-standard-24 has 2 L4", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g2-standard-24"; p.GPU.Count = 1 }}, Rule: rules.RuleMachineAccel, Sev: diag.SeverityError, Msg: "2 x nvidia-l4"},
	{Name: "g2-standard-24 with 2 L4", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "g2-standard-24"
		p.GPU.Count = 2
		p.GPU.Type = "nvidia-l4"
	}}, Quiet: true, Rule: rules.RuleMachineAccel},
	{Name: "A3 Mega accelerator name", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a3-megagpu-8g"
		p.GPU.Type = "nvidia-h100-80gb"
	}}, Rule: rules.RuleMachineAccel, Sev: diag.SeverityError, Msg: "nvidia-h100-mega-80gb"},
	{Name: "a2-ultragpu takes nvidia-a100-80gb", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a2-ultragpu-2g"
		p.GPU.Type = "nvidia-tesla-a100"
	}}, Rule: rules.RuleMachineAccel, Sev: diag.SeverityError},
	{Name: "product name on GKE", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "a3-highgpu-8g"; p.GPU.Type = "H100" }}, Quiet: true, Rule: rules.RuleMachineAccel},
	{Name: "N1 with T4", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "n1-standard-8"
		p.GPU.Type = "nvidia-tesla-t4"
		p.GPU.Count = 2
	}}, Quiet: true, Rule: rules.RuleMachineAccel},
	{Name: "N1 with 3 T4", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "n1-standard-8"
		p.GPU.Type = "nvidia-tesla-t4"
		p.GPU.Count = 3
	}}, Rule: rules.RuleMachineAccel, Sev: diag.SeverityError},
	{Name: "N1 without an accelerator", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "n1-standard-8" }}, Rule: rules.RuleMachineAccel, Sev: diag.SeverityError},
	{Name: "EKS GPU type mismatch", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.GPU.Type = "A10G" }}, Rule: rules.RuleMachineAccel, Sev: diag.SeverityError},
	{Name: "EKS GPU family name", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p4de.24xlarge"; p.GPU.Type = "A100" }}, Quiet: true, Rule: rules.RuleMachineAccel},
	{Name: "spot p6e-gb200", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p6e-gb200.36xlarge"
		p.OSImage = "AL2023_ARM_64_NVIDIA"
		p.Capacity = "spot"
	}}, Rule: rules.RuleMachineCapacity, Sev: diag.SeverityError},
	{Name: "mixed GPU models", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g6.xlarge", "g5.xlarge"}
	}}, Rule: rules.RulePoolMixed, Sev: diag.SeverityWarning, Msg: "L4 on g6.xlarge; A10G on g5.xlarge"},
	{Name: "Karpenter-style p5 and p5e: H100 and H200", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"p5.48xlarge", "p5e.48xlarge"}
	}}, Rule: rules.RulePoolMixed, Sev: diag.SeverityWarning, Msg: "H200 on p5e.48xlarge"},
	{Name: "p4d and p4de declared as any A100", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"p4d.24xlarge", "p4de.24xlarge"}
		p.GPU.Type = "A100"
	}}, Rule: rules.RulePoolMixed, Sev: diag.SeverityInfo, Msg: "takes any A100"},
	{Name: "p4d and p4de without gpu.type", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"p4d.24xlarge", "p4de.24xlarge"}
	}}, Rule: rules.RulePoolMixed, Sev: diag.SeverityWarning, Msg: "gpu.type: A100"},
	{Name: "g6 sizes with 1, 4 and 8 GPUs", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g6.xlarge", "g6.12xlarge", "g6.48xlarge"}
	}}, Quiet: true, Rule: rules.RulePoolMixed},
	{Name: "g6 sizes, EFA off: EFA cards do not matter", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g6.xlarge", "g6.8xlarge"}
	}}, Quiet: true, Rule: rules.RulePoolMixed},
	{Name: "EFA on types with different EFA cards", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"p5.4xlarge", "p5.48xlarge"}
		p.EFA.Enabled = true
		p.NCCL.Plugin = "aws-ofi-nccl"
	}}, Rule: rules.RulePoolMixed, Sev: diag.SeverityError, Msg: "EFA card(s)"},
	{Name: "mixed EFA card counts, EFA on", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"p4d.24xlarge", "p5.48xlarge"}
		p.EFA.Enabled = true
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "efa"}}
	}}, Rule: rules.RulePoolMixed, Sev: diag.SeverityError},
	{Name: "mixed architectures", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g5g.xlarge", "g4dn.xlarge"}
	}}, Rule: rules.RulePoolMixed, Sev: diag.SeverityError},
	{Name: "same shape", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g6.xlarge", "g6.2xlarge", "g6.4xlarge"}
	}}, Quiet: true, Rule: rules.RulePoolMixed},
	{Name: "gpu.count judged per instance type", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = ""
		p.InstanceTypes = []string{"g6.xlarge", "g6.12xlarge"}
		p.GPU.Count = 1
	}}, Rule: rules.RuleMachineAccel, Sev: diag.SeverityError, Msg: "g6.12xlarge has 4 x L4, not 1"},

	// EKS AMIs and versions.
	{Name: "AL2 on 1.33", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.33"
		p.OSImage = "AL2_x86_64_GPU"
	}}, Rule: rules.RuleEKSAMIK8s, Sev: diag.SeverityError},
	{Name: "AL2 on 1.32 is only past support", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		p.OSImage = "AL2_x86_64_GPU"
	}}, Quiet: true, Rule: rules.RuleEKSAMIK8s},
	{Name: "AL2 past end of support", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.KubernetesVersion = "1.32"
		p.OSImage = "AL2_x86_64_GPU"
	}}, Rule: rules.RuleEKSAMIEOL, Sev: diag.SeverityWarning},
	{Name: "cluster placement group over two zones", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.PlacementGroup, p.Zones = "cluster", []string{"us-east-1a", "us-east-1b"}
	}}, Rule: rules.RuleEKSSingleAZ, Sev: diag.SeverityError},
	{Name: "VPC CNI 1.18.4 with efa-only interfaces", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		efaTraining(p)
		cs.Spec.Addons.VPCCNI.Version = "v1.18.4-eksbuild.1"
	}), Quiet: true, Rule: rules.RuleEFAVPCCNI},
	{Name: "old VPC CNI with efaOnly false", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		efaTraining(p)
		off := false
		p.EFA.EFAOnly = &off
		cs.Spec.Addons.VPCCNI.Version = "1.16.0"
	}), Quiet: true, Rule: rules.RuleEFAVPCCNI},
	{Name: "EFA training pool in one zone gets a placement group", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		efaTraining(p)
	}), Quiet: true, Rule: rules.RuleEFAPlacement},
	{Name: "EFA training pool on a Capacity Block needs no placement group", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		efaTraining(p)
		p.Capacity, p.Reservation, p.Zones = spec.CapacityCapacityBlock, "cr-0123456789abcdef0", []string{"us-east-1a"}
	}), Quiet: true, Rule: rules.RuleEFAPlacement},
	{Name: "training pool with diskSizeGB", In: eks(func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role, p.DiskSizeGB = spec.RoleTraining, 500
	}), Quiet: true, Rule: rules.RuleDiskSize},
	{Name: "Capacity Block in one zone", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity, p.Zones = spec.CapacityCapacityBlock, []string{"us-east-1a"}
	}}, Quiet: true, Rule: rules.RuleEKSSingleAZ},
	{Name: "x86 AMI on Graviton", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "g5g.2xlarge" }}, Rule: rules.RuleEKSAMIArch, Sev: diag.SeverityError},
	{Name: "ARM AMI on Graviton", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "g5g.2xlarge"
		p.OSImage = "AL2023_ARM_64_NVIDIA"
	}}, Quiet: true, Rule: rules.RuleEKSAMIArch},
	{Name: "Windows AMI", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.OSImage = "WINDOWS_CORE_2022_x86_64" }}, Rule: rules.RuleEKSAMIGPU, Sev: diag.SeverityError},
	{Name: "EKS 1.29, older than the matrix, past extended support", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "1.29" }}, Rule: rules.RuleEKSK8sSupport, Sev: diag.SeverityWarning, Msg: "older than 1.31, which ended extended support on 2026-11-26"},
	{Name: "EKS 1.31 past extended support", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.KubernetesVersion = "1.31" }}, Rule: rules.RuleEKSK8sSupport, Sev: diag.SeverityWarning, Msg: "ended extended support"},

	// NCCL and EFA.
	{Name: "IB_DISABLE on EFA is irrelevant", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.NCCL.Env = map[string]string{"NCCL_IB_DISABLE": "1"}
	}}, Rule: rules.RuleNCCLIBDisable, Sev: diag.SeverityInfo},
	{Name: "IB_DISABLE on RoCE", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a4-highgpu-8g"
		p.NCCL = spec.NCCL{Plugin: "gib", Env: map[string]string{"NCCL_IB_DISABLE": "1"}}
	}}, Rule: rules.RuleNCCLIBDisable, Sev: diag.SeverityWarning},
	{Name: "NCCL_NET=Socket on A3 Mega", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a3-megagpu-8g"
		p.NCCL = spec.NCCL{Plugin: "tcpxo", Env: map[string]string{"NCCL_NET": "Socket"}}
	}}, Rule: rules.RuleNCCLNetSocket, Sev: diag.SeverityWarning},
	{Name: "IB_HCA prefix", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_IB_HCA": "mlx5_0:1,mlx5_1:1"}
	}}, Rule: rules.RuleNCCLPrefix, Sev: diag.SeverityWarning, Msg: "mlx5_1"},
	{Name: "IB_HCA exact", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_IB_HCA": "=mlx5_0,mlx5_1"}
	}}, Quiet: true, Rule: rules.RuleNCCLPrefix},
	{Name: "SOCKET_IFNAME deliberate prefix", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_SOCKET_IFNAME": "^docker,lo"}
	}}, Quiet: true, Rule: rules.RuleNCCLPrefix},
	{Name: "EFA without the plugin", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA.Enabled = true
		p.NCCL.Env = map[string]string{"FI_PROVIDER": "efa"}
	}}, Rule: rules.RuleNCCLEFAPlugin, Sev: diag.SeverityInfo, Path: "spec.nodePools[0].nccl.plugin", Msg: "usual EFA training images carry"},
	{Name: "EFA with another libfabric provider", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA.Enabled = true
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "tcp"}}
	}}, Rule: rules.RuleNCCLEFAPlugin, Sev: diag.SeverityWarning},
	{Name: "EFA done right", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5.48xlarge"
		p.EFA.Enabled = true
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "efa"}}
	}}, Quiet: true, Rule: rules.RuleNCCLEFAPlugin},
	{Name: "TCPX plugin on A3 Mega", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "a3-megagpu-8g"; p.NCCL.Plugin = "tcpx" }}, Rule: rules.RuleNCCLGCPTransport, Sev: diag.SeverityWarning, Msg: "tcpxo"},
	{Name: "training on A3 High without TCPX", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "a3-highgpu-8g"
		p.Role = "training"
		p.AutoUpgrade = ptr(false)
	}}, Rule: rules.RuleNCCLGCPTransport, Sev: diag.SeverityWarning},
	{Name: "gIB on A3 Ultra", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "a3-ultragpu-8g"; p.NCCL.Plugin = "gib" }}, Quiet: true, Rule: rules.RuleNCCLGCPTransport},
	{Name: "P2P disabled", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_P2P_DISABLE": "1"} }}, Rule: rules.RuleNCCLP2PDisable, Sev: diag.SeverityWarning},
	{Name: "NCCL_DEBUG=INFO", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.NCCL.Env = map[string]string{"NCCL_DEBUG": "INFO"} }}, Rule: rules.RuleNCCLDebug, Sev: diag.SeverityInfo},
	{Name: "NCCL typo", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_SOCKET_IFNAM": "=eth0"}
	}}, Rule: rules.RuleNCCLUnknownEnv, Sev: diag.SeverityWarning, Msg: "NCCL_SOCKET_IFNAME"},
	{Name: "NCCL plugin variable", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.NCCL.Env = map[string]string{"NCCL_OFI_USE_GDRCOPY": "1"}
	}}, Quiet: true, Rule: rules.RuleNCCLUnknownEnv},
	{Name: "EFA on g6.xlarge", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.EFA.Enabled = true }}, Rule: rules.RuleEFAUnsupported, Sev: diag.SeverityError},
	{Name: "more EFA interfaces than cards", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p5en.48xlarge"
		p.EFA = spec.EFA{Enabled: true, Interfaces: 32}
		p.NCCL = spec.NCCL{Plugin: "aws-ofi-nccl", Env: map[string]string{"FI_PROVIDER": "efa"}}
	}}, Rule: rules.RuleEFAInterfaces, Sev: diag.SeverityError, Msg: "16 network cards"},
	{Name: "multi-node training without EFA", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.MachineType = "p4d.24xlarge"; p.Role = "training" }}, Rule: rules.RuleEFADisabled, Sev: diag.SeverityWarning},
	{Name: "single-node training without EFA", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MachineType = "p4d.24xlarge"
		p.Role = "training"
		p.Autoscaling.Max = 1
	}}, Quiet: true, Rule: rules.RuleEFADisabled},

	// The acceptance sweep: a digest and a parallelism within the nodes are quiet.
	{Name: "sweep image by digest", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 1)
	}}, Quiet: true, Rule: rules.RuleAcceptImageDigest},
	{Name: "sweep image by tag", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Acceptance = sweep("ghcr.io/gpuctl/gpuctl:v0.9.0", 1)
	}}, Rule: rules.RuleAcceptImageDigest, Sev: diag.SeverityWarning, Path: "spec.acceptance.image"},
	{Name: "sweep parallel within the nodes", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Autoscaling.Max = 4
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 4)
	}}, Quiet: true, Rule: rules.RuleAcceptParallel},
	{Name: "sweep parallel above the nodes", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Autoscaling.Max = 2
		cs.Spec.Acceptance = sweep(pinnedGpuctl, 3)
	}}, Rule: rules.RuleAcceptParallel, Sev: diag.SeverityInfo, Path: "spec.acceptance.parallel", Msg: "above the 2 nodes"},

	// Policy: only what the policy in force asks.
	{Name: "no policy, no GPU taint", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Taints = nil }}, Quiet: true, Rule: rules.RulePolicyTaint},
	{Name: "no policy, no tags", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Tags = nil }}, Quiet: true, Rule: rules.RulePolicyCostTags},
	{Name: "no policy, spot without max", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Capacity = "spot"; p.Autoscaling.Max = 0 }}, Quiet: true, Rule: rules.RulePolicySpotMax},
	{Name: "no policy, training pool auto-upgrades", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.Role = "training" }}, Quiet: true, Rule: rules.RulePolicyUpgrade},
	{Name: "required taint missing", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints = nil
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu=present:NoSchedule"}}
	}}, Rule: rules.RulePolicyTaint, Sev: diag.SeverityWarning, Path: "spec.nodePools[0].taints"},
	{Name: "required taint with another effect", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints[0].Effect = "PreferNoSchedule"
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu:NoSchedule"}}
	}}, Rule: rules.RulePolicyTaint, Sev: diag.SeverityWarning, Path: "spec.nodePools[0].taints[0]"},
	{Name: "required taint without a value matches any value", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu:NoSchedule"}}
	}}, Quiet: true, Rule: rules.RulePolicyTaint},
	{Name: "GKE adds the GPU taint itself", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints = nil
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu=present:NoSchedule"}}
	}}, Quiet: true, Rule: rules.RulePolicyTaint},
	{Name: "GKE: other required taints still count", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Taints = nil
		cs.Spec.Policy = &spec.Policy{RequiredTaints: []string{"nvidia.com/gpu=present:NoSchedule", "example.com/dedicated=ml:NoSchedule"}}
	}}, Rule: rules.RulePolicyTaint, Sev: diag.SeverityWarning, Msg: "example.com/dedicated"},
	{Name: "spot pool without max under a spot share", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity = "spot"
		p.Autoscaling.Max = 0
		cs.Spec.Policy = &spec.Policy{MaxSpotShare: ptr(0.5)}
	}}, Rule: rules.RulePolicySpotMax, Sev: diag.SeverityWarning, Path: "spec.nodePools[0].autoscaling.max"},
	{Name: "spot share above the maximum", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		q := *p
		q.Name, q.Capacity, q.Autoscaling.Max = "spot", "spot", 8
		cs.Spec.NodePools = append(cs.Spec.NodePools, q)
		cs.Spec.Policy = &spec.Policy{MaxSpotShare: ptr(0.5)}
	}}, Rule: rules.RulePolicySpotMax, Sev: diag.SeverityWarning, Msg: "67%"},
	{Name: "spot share within the maximum", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		q := *p
		q.Name, q.Capacity, q.Autoscaling.Max = "spot", "spot", 4
		cs.Spec.NodePools = append(cs.Spec.NodePools, q)
		cs.Spec.Policy = &spec.Policy{MaxSpotShare: ptr(0.5)}
	}}, Quiet: true, Rule: rules.RulePolicySpotMax},
	{Name: "spot share 1 allows unbounded spot", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Capacity = "spot"
		p.Autoscaling.Max = 0
		cs.Spec.Policy = &spec.Policy{MaxSpotShare: ptr(1.0)}
	}}, Quiet: true, Rule: rules.RulePolicySpotMax},
	{Name: "required tags", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		delete(cs.Spec.Tags, "team")
		cs.Spec.Policy = &spec.Policy{RequiredTags: []string{"cost-center", "team"}}
	}}, Rule: rules.RulePolicyCostTags, Sev: diag.SeverityWarning, Msg: "team"},
	{Name: "required tags present", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Policy = &spec.Policy{RequiredTags: []string{"cost-center", "team"}}
	}}, Quiet: true, Rule: rules.RulePolicyCostTags},
	{Name: "GKE training pool auto-upgrades under a hold policy", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(true)}
	}}, Rule: rules.RulePolicyUpgrade, Sev: diag.SeverityWarning},
	{Name: "hold policy false", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(false)}
	}}, Quiet: true, Rule: rules.RulePolicyUpgrade},
	{Name: "GKE training pool autoUpgrade false without a channel", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		p.AutoUpgrade = ptr(false)
		cs.Spec.ReleaseChannel = "UNSPECIFIED"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(true)}
	}}, Quiet: true, Rule: rules.RulePolicyUpgrade},
	{Name: "release channel with a maintenance window", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		p.MaintenanceWindow = "Sat 02:00-06:00 UTC"
		cs.Spec.ReleaseChannel = "REGULAR"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(true)}
	}}, Quiet: true, Rule: rules.RulePolicyUpgrade},
	{Name: "EKS training pools never auto-upgrade", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.Role = "training"
		cs.Spec.Policy = &spec.Policy{TrainingUpgradeHold: ptr(true)}
	}}, Quiet: true, Rule: rules.RulePolicyUpgrade},
	{Name: "an empty requiredTags requires no tags", In: Input{Base: spectest.EKS, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		cs.Spec.Tags = nil
		cs.Spec.Policy = &spec.Policy{RequiredTags: []string{}}
	}}, Quiet: true, Rule: rules.RulePolicyCostTags},

	// GKE upgrade settings (any pool, policy or not).
	{Name: "GKE autoUpgrade false, release channel unset (REGULAR by default)", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) { p.AutoUpgrade = ptr(false) }}, Rule: rules.RuleSpecProviderField, Sev: diag.SeverityWarning, Path: "spec.nodePools[0].autoUpgrade", Msg: "spec.releaseChannel is not set"},
	{Name: "autoUpgrade false in a release channel", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.AutoUpgrade = ptr(false)
		cs.Spec.ReleaseChannel = "REGULAR"
	}}, Rule: rules.RuleSpecProviderField, Sev: diag.SeverityError, Path: "spec.nodePools[0].autoUpgrade"},
	{Name: "two GKE maintenance windows", In: Input{Base: spectest.GKE, Mod: func(cs *spec.ClusterSpec, p *spec.NodePool) {
		p.MaintenanceWindow = "Sat 02:00-06:00 UTC"
		q := *p
		q.Name = "other"
		q.MaintenanceWindow = "Sun 02:00-06:00 UTC"
		cs.Spec.NodePools = append(cs.Spec.NodePools, q)
	}}, Rule: rules.RuleSpecProviderField, Sev: diag.SeverityWarning, Path: "spec.nodePools[1].maintenanceWindow"},
}

// Judge says what is wrong with the findings fs of case c: "" when the
// rule reported the case's severity (at Path, with Msg, where given), or,
// for a quiet case, nothing above info.
func Judge(c Case, fs []diag.Finding) string {
	var got []diag.Finding
	for _, f := range fs {
		if f.Rule == c.Rule {
			got = append(got, f)
		}
	}
	if c.Quiet {
		for _, f := range got {
			if f.Severity != diag.SeverityInfo {
				return fmt.Sprintf("unexpected %s %s at %s: %s", f.Severity, f.Rule, f.Path, f.Message)
			}
		}
		return ""
	}
	for _, f := range got {
		if f.Severity == c.Sev && (c.Path == "" || f.Path == c.Path) && strings.Contains(f.Message+" "+f.Fix, c.Msg) {
			return ""
		}
	}
	return fmt.Sprintf("want %s %s (path %q, message with %q)", c.Sev, c.Rule, c.Path, c.Msg)
}

// Uncovered lists what the table lacks: a rule without a SeverityReason,
// a severity declared twice or without its case's When and Reason, and a
// rule and severity without a case.
func Uncovered() []string {
	type key struct {
		rule string
		sev  diag.Severity
	}
	have := map[key]bool{}
	for _, c := range Cases {
		if !c.Quiet {
			have[key{c.Rule, c.Sev}] = true
		}
	}
	var out []string
	for _, r := range rules.Rules() {
		if r.SeverityReason == "" {
			out = append(out, fmt.Sprintf("%s states no SeverityReason (the severity contract's reason for %s)", r.ID, r.Severity))
		}
		seen := map[diag.Severity]bool{}
		for i, sc := range r.Severities() {
			if seen[sc.Severity] {
				out = append(out, fmt.Sprintf("%s declares %s twice", r.ID, sc.Severity))
			}
			seen[sc.Severity] = true
			if i > 0 && (sc.When == "" || sc.Reason == "") {
				out = append(out, fmt.Sprintf("%s: the %s case needs When and Reason", r.ID, sc.Severity))
			}
			if !have[key{r.ID, sc.Severity}] {
				out = append(out, fmt.Sprintf("%s %s has no case: add a row to rulecases.severityCases", r.ID, sc.Severity))
			}
		}
	}
	return out
}

// pinnedGpuctl is a gpuctl image pinned by a digest (made up: the cases
// pull nothing).
const pinnedGpuctl = "ghcr.io/gpuctl/gpuctl:v0.9.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// tcpxPool makes p an A3 High pool of four nodes with GPUDirect-TCPX,
// whose multi-node rank pods need the privileged Pod Security level.
func tcpxPool(p *spec.NodePool) {
	p.MachineType, p.GPU.Type, p.GPU.Count, p.Autoscaling.Max = "a3-highgpu-8g", "nvidia-h100-80gb", 8, 4
	p.NCCL.Plugin, p.OSImage, p.GPU.Driver = "tcpx", "UBUNTU_CONTAINERD", "DEFAULT"
}

// sweep is a valid spec.acceptance block running image at parallel.
func sweep(image string, parallel int) *spec.Acceptance {
	return &spec.Acceptance{Image: image, Schedule: "0 3 * * *", Parallel: parallel,
		KeySecret: spec.SecretKeyRef{Name: "gpuctl-accept-key", Key: "accept.key"}, Records: spec.AcceptanceRecords{ConfigMap: true}}
}
