package spec

import (
	"slices"
	"strings"
)

// Derived values that both generators (Terraform and Helm) need, so that the
// two layers agree on who does what on each pool.

// Roles of a node pool.
const (
	RoleTraining    = "training"
	RoleInference   = "inference"
	RoleInteractive = "interactive"
)

// Capacity values of a node pool.
const (
	CapacityOnDemand      = "on-demand"
	CapacitySpot          = "spot"
	CapacityReservation   = "reservation"
	CapacityCapacityBlock = "capacity-block"
	// CapacityFlexStart and CapacityQueued are GKE's flex-start VMs and
	// flex-start with queued provisioning (Dynamic Workload Scheduler).
	// Source: https://cloud.google.com/kubernetes-engine/docs/concepts/dws (2026-12-03)
	CapacityFlexStart = "flex-start"
	CapacityQueued    = "queued"

	// LocalStorageRAID0 and LocalStorageNone are nodePools[].localStorage.
	LocalStorageRAID0 = "raid0"
	LocalStorageNone  = "none"
)

// GKEQueuedTaint is the taint GKE puts on the nodes of a queued
// provisioning pool itself (gpuctl writes no taint for it): only pods that
// tolerate it, such as those Kueue admits on the pool's flavor, run there.
// Source: https://github.com/GoogleCloudPlatform/cluster-toolkit/blob/1047080375afbb44da4b596be314634e7486af4a/modules/compute/gke-node-pool/variables.tf
// ("enable_queued_provisioning ... adds the cloud.google.com/gke-queued
// taint to the node pool"; main.tf: "GKE automatically applies the taint"),
// checked 2026-12-03.
var GKEQueuedTaint = Taint{Key: "cloud.google.com/gke-queued", Value: "true", Effect: "NoSchedule"}

// NodeTaints are the taints the pool's nodes carry: Taints, and for a
// queued provisioning pool the one GKE adds (GKEQueuedTaint) where Taints
// lacks it. The result is a new slice; Taints is not changed.
func (p *NodePool) NodeTaints() []Taint {
	out := append([]Taint(nil), p.Taints...)
	if p.Capacity != CapacityQueued {
		return out
	}
	for _, t := range out {
		if t.Key == GKEQueuedTaint.Key && t.Effect == GKEQueuedTaint.Effect {
			return out
		}
	}
	return append(out, GKEQueuedTaint)
}

// FlexStart reports whether the pool's nodes are flex-start VMs: capacity
// flex-start, or queued (flex-start with queued provisioning).
func (p *NodePool) FlexStart() bool {
	return p.Capacity == CapacityFlexStart || p.Capacity == CapacityQueued
}

// Autoscalers of addons.autoscaler.
const (
	AutoscalerKarpenter         = "karpenter"
	AutoscalerClusterAutoscaler = "cluster-autoscaler"
	AutoscalerNone              = "none"
)

// MIG strategies of NVIDIA's device plugin (flags.migStrategy).
const (
	MIGStrategySingle = "single" // every GPU of a node has the same profile, advertised as nvidia.com/gpu
	MIGStrategyMixed  = "mixed"  // each profile is advertised as nvidia.com/mig-<profile>
)

// DevicePluginFor returns who advertises GPUs on pool p: the pool's override,
// else addons.devicePlugin.provider, else the platform default (GKE: its own
// plugin; EKS: Bottlerocket NVIDIA images ship one, otherwise the GPU
// Operator's when it is enabled, otherwise NVIDIA's Helm chart).
func (s *Spec) DevicePluginFor(p *NodePool) string {
	if p.DevicePlugin != nil && p.DevicePlugin.Provider != "" {
		return p.DevicePlugin.Provider
	}
	if s.Addons.DevicePlugin.Provider != "" {
		return s.Addons.DevicePlugin.Provider
	}
	switch {
	case s.Provider == ProviderGKE:
		return DevicePluginGKEManaged
	case strings.HasPrefix(p.OSImage, "BOTTLEROCKET_"):
		return DevicePluginBottlerocket
	case s.Addons.GPUOperator.Enabled:
		return DevicePluginGPUOperator
	}
	return DevicePluginHelm
}

// NVIDIAPlugin reports whether NVIDIA's own device plugin (the Helm chart or
// the GPU Operator's) advertises the GPUs of pool p, and so reads the
// per-node config selected by the nvidia.com/device-plugin.config label.
func (s *Spec) NVIDIAPlugin(p *NodePool) bool {
	dp := s.DevicePluginFor(p)
	return dp == DevicePluginHelm || dp == DevicePluginGPUOperator
}

// SharingStrategy returns the pool's sharing strategy, "none" when unset.
func (p *NodePool) SharingStrategy() string {
	if p.GPU.Sharing.Strategy == "" {
		return SharingNone
	}
	return p.GPU.Sharing.Strategy
}

// MIGStrategy returns the pool's MIG strategy for NVIDIA's plugin: the
// sharing.migStrategy written in the spec, else single; "none" when the pool
// does not use MIG.
func (p *NodePool) MIGStrategy() string {
	if p.SharingStrategy() != SharingMIG {
		return "none"
	}
	if p.GPU.Sharing.MIGStrategy != "" {
		return p.GPU.Sharing.MIGStrategy
	}
	return MIGStrategySingle
}

// CUDAVersion returns the CUDA version of the pool's workloads: the pool's
// own, else the spec's.
func (s *Spec) CUDAVersion(p *NodePool) string {
	if p.CUDA != "" {
		return p.CUDA
	}
	return s.CUDA
}

// MachineTypes returns the pool's machine types: machineType, or
// instanceTypes on EKS.
func (p *NodePool) MachineTypes() []string {
	if len(p.InstanceTypes) > 0 {
		return p.InstanceTypes
	}
	if p.MachineType != "" {
		return []string{p.MachineType}
	}
	return nil
}

// Node labels gpuctl puts on every GPU pool it generates, so that the
// Terraform, Helm and Kueue layers select the same nodes.
const (
	// LabelPool names the gpuctl node pool of a node.
	LabelPool = "gpuctl.dev/pool"
	// LabelDevicePluginConfig selects the named config of NVIDIA's device
	// plugin for a node (the chart's config.map key, one per pool).
	LabelDevicePluginConfig = "nvidia.com/device-plugin.config"
	// LabelGKENoDefaultPlugin turns off GKE's own device plugin on a node.
	LabelGKENoDefaultPlugin = "gke-no-default-nvidia-gpu-device-plugin"
	// LabelMIGConfig selects the GPU Operator MIG manager's partitioning.
	LabelMIGConfig = "nvidia.com/mig.config"
)

// NodeLabels returns the Kubernetes labels of pool p's nodes: the pool's own
// labels plus the ones gpuctl adds (LabelPool always; the device plugin
// config selector where NVIDIA's plugin runs; GKE's opt-out of its own
// plugin; the MIG manager's config where the GPU Operator partitions GPUs).
func (s *Spec) NodeLabels(p *NodePool) map[string]string {
	out := make(map[string]string, len(p.Labels)+4)
	for k, v := range p.Labels {
		out[k] = v
	}
	out[LabelPool] = p.Name
	out[LabelGPU] = "true"
	if s.NVIDIAPlugin(p) {
		out[LabelDevicePluginConfig] = p.Name
		if s.Provider == ProviderGKE {
			out[LabelGKENoDefaultPlugin] = "true"
		}
		// migManager.enabled unset: the chart default, true in every GPU
		// Operator release (matrix's operator data; a matrix test holds it).
		if p.SharingStrategy() == SharingMIG && s.Addons.GPUOperator.Enabled && EnabledOr(s.Addons.GPUOperator.MIGManager.Enabled, true) {
			out[LabelMIGConfig] = "all-" + p.GPU.Sharing.MIGProfile
		}
	}
	if s.Addons.GPUOperator.Enabled {
		switch s.DevicePluginFor(p) {
		case DevicePluginGPUOperator:
		case DevicePluginHelm:
			// The Operator may install the driver here, but NVIDIA's chart
			// owns the device plugin.
			out[LabelOperatorDeployDevicePlugin] = "false"
		default:
			// The platform owns the GPU stack of this pool.
			out[LabelOperatorDeployOperands] = "false"
		}
	}
	return out
}

// GPU Operator node labels that switch its operands off on a node.
// Source: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html#common-chart-customization-options
const (
	LabelOperatorDeployOperands     = "nvidia.com/gpu.deploy.operands"
	LabelOperatorDeployDevicePlugin = "nvidia.com/gpu.deploy.device-plugin"
)

// LabelGPU marks every GPU node gpuctl generates ("true"), for node
// selectors that must match all GPU pools (DCGM exporter).
const LabelGPU = "gpuctl.dev/gpu"

// Uses reports whether team t's workloads may use the pool named pool:
// every pool when t.Pools is empty, else the pools it lists.
func (t Team) Uses(pool string) bool {
	return len(t.Pools) == 0 || slices.Contains(t.Pools, pool)
}

// EnabledOr returns *b, or def when the spec leaves the switch unset.
func EnabledOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// Words of nodePools[].placementGroup that name no existing group.
const (
	// PlacementGroupCluster makes gpuctl create a placement group with the
	// cluster strategy for the pool.
	PlacementGroupCluster = "cluster"
	// PlacementGroupNone puts the pool in no placement group.
	PlacementGroupNone = "none"
)

// EKSPlacementGroup returns the placement group of EKS pool p's launch
// template: "" for none, PlacementGroupCluster for one gpuctl creates, else
// the name of an existing group. placementGroup "none" is none; a Capacity
// Block gets no group gpuctl creates, since EC2 places a block's instances
// close together in an UltraCluster itself (a named group is kept); an
// unset placementGroup on an EFA training pool (role training, efa.enabled)
// in at most one zone is PlacementGroupCluster, since a cluster group lives
// in one zone.
// Source: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-blocks.html
// and https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-strategies.html (2026-12-03).
func EKSPlacementGroup(p *NodePool) string {
	switch pg := p.PlacementGroup; {
	case pg == PlacementGroupNone:
		return ""
	case p.Capacity == CapacityCapacityBlock && (pg == "" || pg == PlacementGroupCluster):
		return ""
	case pg != "":
		return pg
	case EFATraining(p) && len(p.Zones) <= 1:
		return PlacementGroupCluster
	}
	return ""
}

// EFATraining reports whether p is a training pool on EFA (role training,
// efa.enabled): the pools whose NCCL traffic crosses nodes over EFA.
func EFATraining(p *NodePool) bool {
	return p.Role == RoleTraining && p.EFA.Enabled
}

// EKSSingleAZ reports whether EKS pool p must live in one availability zone:
// it uses a placement group (EKSPlacementGroup: gpuctl's cluster one or a
// named one) or a Capacity Block.
func EKSSingleAZ(p *NodePool) bool {
	return EKSPlacementGroup(p) != "" || p.Capacity == CapacityCapacityBlock
}

// EKSSingleAZReason names what ties p to one zone, for messages.
func EKSSingleAZReason(p *NodePool) string {
	if p.Capacity == CapacityCapacityBlock {
		return "Capacity Block"
	}
	return "placement group"
}

// RoleTagKeys are the tag keys that say what a pool's nodes are for. They
// are reserved for the pool's role: where spec.tags sets one, each pool
// with a role carries its role there instead (so the inference pool of a
// spec tagged workload-type=training is tagged workload-type=inference).
var RoleTagKeys = []string{"workload-type", "workload_type", "role"}

// PoolTags returns the cost-allocation tags (GCP resource labels, AWS tags)
// of pool p: spec.tags, with the role-like keys (RoleTagKeys) that spec.tags
// sets replaced by the pool's role where it has one.
func (s *Spec) PoolTags(p *NodePool) map[string]string {
	if len(s.Tags) == 0 {
		return nil
	}
	out := make(map[string]string, len(s.Tags))
	for k, v := range s.Tags {
		out[k] = v
	}
	if p.Role == "" {
		return out
	}
	for _, k := range RoleTagKeys {
		if _, ok := out[k]; ok {
			out[k] = p.Role
		}
	}
	return out
}
