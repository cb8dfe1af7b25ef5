// Package spec is the gpuctl cluster spec (apiVersion gpuctl.dev/v1alpha1,
// kind ClusterSpec): its types, strict decoding with file:line:column errors,
// environment overlays and the position index that lets findings point at
// the field to change.
//
// The YAML field names are a contract: examples, docs and other tools depend
// on them. Fields may be added; none may be renamed.
package spec

// APIVersion and Kind identify a gpuctl cluster spec document.
const (
	APIVersion = "gpuctl.dev/v1alpha1"
	Kind       = "ClusterSpec"
)

// Provider values.
const (
	ProviderGKE = "gke"
	ProviderEKS = "eks"
)

// Device plugin providers: who advertises nvidia.com/gpu on a pool.
const (
	DevicePluginGKEManaged   = "gke-managed"  // GKE's own device plugin DaemonSet
	DevicePluginHelm         = "helm"         // NVIDIA's k8s-device-plugin chart
	DevicePluginGPUOperator  = "gpu-operator" // the GPU Operator's device plugin
	DevicePluginBottlerocket = "bottlerocket" // built into Bottlerocket NVIDIA variants
	DevicePluginNone         = "none"
)

// Sharing strategies of a pool's GPUs.
const (
	SharingNone        = "none"
	SharingTimeSlicing = "time-slicing"
	SharingMPS         = "mps"
	SharingMIG         = "mig"
)

// ClusterSpec is one cluster spec document.
type ClusterSpec struct {
	APIVersion string   `yaml:"apiVersion" json:"apiVersion"`
	Kind       string   `yaml:"kind" json:"kind"`
	Metadata   Metadata `yaml:"metadata" json:"metadata"`
	Spec       Spec     `yaml:"spec" json:"spec"`
}

// Metadata names the spec.
type Metadata struct {
	Name   string            `yaml:"name" json:"name"`
	Labels map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
}

// Spec is the body of a cluster spec. Environments overlay it: each
// environment is a partial Spec merged over the base (node pools by name).
type Spec struct {
	// Provider is gke or eks.
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty" jsonschema:"enum=gke,enum=eks"`
	Region   string `yaml:"region,omitempty" json:"region,omitempty"`
	// ClusterName is the existing cluster the node pools join.
	ClusterName string `yaml:"clusterName,omitempty" json:"clusterName,omitempty"`
	// KubernetesVersion is the control plane's minor version, e.g. "1.33".
	KubernetesVersion string `yaml:"kubernetesVersion,omitempty" json:"kubernetesVersion,omitempty"`
	// ReleaseChannel is the GKE cluster's release channel (RAPID, REGULAR,
	// STABLE, EXTENDED, or UNSPECIFIED for none). Empty means not stated:
	// GKE enrolls Standard clusters in REGULAR by default. Node auto-upgrade
	// can only be turned off without a release channel.
	ReleaseChannel string `yaml:"releaseChannel,omitempty" json:"releaseChannel,omitempty"`
	// CUDA is the CUDA toolkit version in the workload images ("12.4",
	// "12.2.2"); pools may override it.
	CUDA string `yaml:"cuda,omitempty" json:"cuda,omitempty"`
	// Tags are cost-allocation tags (GCP resource labels, AWS tags).
	Tags      map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
	Addons    Addons            `yaml:"addons,omitempty" json:"addons,omitempty"`
	NodePools []NodePool        `yaml:"nodePools,omitempty" json:"nodePools,omitempty"`
	// Environments are overlays (prod/dev/exp), each resolved and validated
	// on its own. Overlays cannot nest.
	Environments map[string]Spec `yaml:"environments,omitempty" json:"environments,omitempty"`
	// Waivers turn matching findings into info findings carrying a reason.
	Waivers []Waiver `yaml:"waivers,omitempty" json:"waivers,omitempty"`
	// Policy is the platform policy the spec's owners set: what the POLICY-*
	// rules check. Without one (and without --policy) no POLICY-* rule
	// fires. It overrides a --policy file field by field, and an
	// environment's policy overrides the spec's field by field.
	Policy *Policy `yaml:"policy,omitempty" json:"policy,omitempty"`
	// Teams are the tenants whose workloads queue for the GPUs (Kueue
	// LocalQueues in restricted namespaces). Only teams listed here get a
	// namespace, a GPU ResourceQuota and NetworkPolicies; empty: none are
	// generated (tags.team is a cost tag and makes no namespace).
	Teams []Team `yaml:"teams,omitempty" json:"teams,omitempty"`
	// Network is what the team namespaces' pods may reach beyond DNS and
	// their own training pool (the egress of the generated NetworkPolicies).
	Network Network `yaml:"network,omitempty" json:"network,omitempty"`
	// Acceptance is the in-cluster acceptance sweep that `gpuctl generate
	// acceptance` writes (a CronJob running `gpuctl accept --sweep`); nil:
	// none is generated.
	Acceptance *Acceptance `yaml:"acceptance,omitempty" json:"acceptance,omitempty" jsonschema_description:"The in-cluster acceptance sweep: a CronJob running gpuctl accept --sweep over the idle GPU nodes (gpuctl generate acceptance writes it). Unset: none."`
}

// Network is the egress the team namespaces' NetworkPolicies allow.
type Network struct {
	// WorkloadIdentity lets pods reach the node's metadata server, where
	// GKE Workload Identity and EKS IRSA / Pod Identity hand out cloud
	// credentials (GKE 169.254.169.254 and 169.254.169.252 port 988; EKS
	// the Pod Identity agent at 169.254.170.23 and the instance metadata
	// service at 169.254.169.254). The GKE addresses and ports are not
	// confirmed by a Google page gpuctl has a copy of.
	WorkloadIdentity bool `yaml:"workloadIdentity,omitempty" json:"workloadIdentity,omitempty"`
	// EgressCIDRs are the address ranges pods may reach on any port
	// (object storage, registries, a data lake), e.g. "10.20.0.0/16"; IPv4
	// or IPv6 CIDR notation.
	EgressCIDRs []string `yaml:"egressCIDRs,omitempty" json:"egressCIDRs,omitempty"`
}

// Team is a tenant of the cluster: a namespace of the same name, with
// Kueue LocalQueues onto the ClusterQueues of its pools and a GPU
// ResourceQuota.
type Team struct {
	// Name is the team and its namespace (a DNS label).
	Name string `yaml:"name" json:"name"`
	// GPUQuota caps the GPU devices the team's pods may request at once,
	// per resource name the pools advertise (whole GPUs, renamed shares,
	// MIG slices) and, where shares or slices are advertised as
	// nvidia.com/gpu, per sharing mode; 0 allows up to the pools' total.
	GPUQuota int `yaml:"gpuQuota,omitempty" json:"gpuQuota,omitempty"`
	// Pools are the node pools (by name) the team's workloads may use;
	// empty: every pool. Its Kueue LocalQueues, GPU quota, NCCL ConfigMaps
	// and NetworkPolicies cover only these pools, and its namespace's Pod
	// Security level is the one these pools' NCCL transports need (an
	// inference team kept off a GPUDirect-TCPX training pool stays
	// restricted).
	Pools []string `yaml:"pools,omitempty" json:"pools,omitempty"`
}

// Addons are the cluster-wide GPU add-ons.
type Addons struct {
	DevicePlugin DevicePlugin `yaml:"devicePlugin,omitempty" json:"devicePlugin,omitempty"`
	GPUOperator  GPUOperator  `yaml:"gpuOperator,omitempty" json:"gpuOperator,omitempty"`
	DCGMExporter DCGMExporter `yaml:"dcgmExporter,omitempty" json:"dcgmExporter,omitempty"`
	// Autoscaler is what scales the EKS node pools between
	// autoscaling.min and max: karpenter (a NodePool and EC2NodeClass per
	// pool, `gpuctl generate karpenter`, instead of managed node groups),
	// cluster-autoscaler (its discovery and scale-from-zero tags on the
	// managed node groups) or none; empty when the spec does not say.
	Autoscaler string `yaml:"autoscaler,omitempty" json:"autoscaler,omitempty" jsonschema:"enum=karpenter,enum=cluster-autoscaler,enum=none"`
	// Karpenter configures what `gpuctl generate karpenter` writes
	// (addons.autoscaler: karpenter).
	Karpenter Karpenter `yaml:"karpenter,omitempty" json:"karpenter,omitempty"`
	// VPCCNI is the Amazon VPC CNI add-on of the EKS cluster (gpuctl does
	// not install it; validate checks its version against what the pools
	// need).
	VPCCNI VPCCNI `yaml:"vpcCni,omitempty" json:"vpcCni,omitempty"`
}

// Karpenter is what the generated EC2NodeClasses need of the cluster.
type Karpenter struct {
	// NodeRole is the IAM role (name) Karpenter's nodes run as: the
	// EC2NodeClasses' role. Empty: KarpenterNodeRole-<clusterName>, the
	// role of Karpenter's getting-started guide; terraform-aws-modules/eks's
	// karpenter module names its role Karpenter-<cluster>-<suffix> unless
	// told otherwise, so give its node_iam_role_name here.
	NodeRole string `yaml:"nodeRole,omitempty" json:"nodeRole,omitempty"`
}

// VPCCNI describes the cluster's Amazon VPC CNI add-on (EKS).
type VPCCNI struct {
	// Version is the add-on version the cluster runs, e.g. "1.19.2" or the
	// EKS add-on's "v1.19.2-eksbuild.1"; empty when not stated. EFA-only
	// interfaces (efa.efaOnly) need 1.18.4 or later.
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
}

// DevicePlugin says who advertises nvidia.com/gpu.
type DevicePlugin struct {
	// Provider is gke-managed | helm | gpu-operator | bottlerocket | none.
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty" jsonschema:"enum=gke-managed,enum=helm,enum=gpu-operator,enum=bottlerocket,enum=none"`
	// Version is the NVIDIA device plugin chart version, for provider helm.
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// NodeSelector is the nodeSelector of NVIDIA's device plugin chart
	// (provider helm; read under addons.devicePlugin only): the chart's
	// DaemonSet runs only on nodes that carry all these labels, so pools
	// whose nodes lack them get no plugin from it.
	NodeSelector map[string]string `yaml:"nodeSelector,omitempty" json:"nodeSelector,omitempty"`
}

// GPUOperator configures NVIDIA's GPU Operator.
type GPUOperator struct {
	Enabled bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// Version is the chart version, e.g. "v26.7.0".
	Version      string            `yaml:"version,omitempty" json:"version,omitempty"`
	Driver       OperatorDriver    `yaml:"driver,omitempty" json:"driver,omitempty"`
	Toolkit      OperatorToolkit   `yaml:"toolkit,omitempty" json:"toolkit,omitempty"`
	DevicePlugin OperatorComponent `yaml:"devicePlugin,omitempty" json:"devicePlugin,omitempty"`
	MIGManager   OperatorComponent `yaml:"migManager,omitempty" json:"migManager,omitempty"`
	DCGMExporter OperatorComponent `yaml:"dcgmExporter,omitempty" json:"dcgmExporter,omitempty"`
	CDI          OperatorComponent `yaml:"cdi,omitempty" json:"cdi,omitempty"`
}

// OperatorDriver is the GPU Operator's driver component.
type OperatorDriver struct {
	// Enabled makes the Operator install the driver (a driver container).
	// nil when unset: the chart default applies, which is true in every
	// GPU Operator release (set false where the image or the platform
	// installs the driver).
	Enabled *bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// Version is the driver version the Operator installs, e.g. "580.173.02".
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// KernelModuleType is auto | open | proprietary.
	KernelModuleType string `yaml:"kernelModuleType,omitempty" json:"kernelModuleType,omitempty" jsonschema:"enum=auto,enum=open,enum=proprietary"`
}

// OperatorToolkit is the GPU Operator's container toolkit component.
type OperatorToolkit struct {
	// Enabled is nil when the chart default (true) applies.
	Enabled *bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// Env are extra toolkit environment variables (e.g. RUNTIME_CONFIG_SOURCE).
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
}

// OperatorComponent is an Operator component that can be switched off.
type OperatorComponent struct {
	// Enabled is nil when the chart default (true) applies.
	Enabled *bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
}

// DCGMExporter configures the DCGM exporter.
type DCGMExporter struct {
	Enabled bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// Version is the dcgm-exporter chart version, e.g. "4.8.2".
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// ServiceMonitor creates a Prometheus Operator ServiceMonitor.
	ServiceMonitor bool `yaml:"serviceMonitor,omitempty" json:"serviceMonitor,omitempty"`
}

// NodePool is one GPU node pool (GKE node pool, EKS managed node group).
type NodePool struct {
	Name string `yaml:"name" json:"name" jsonschema:"required"`
	// Role is training | inference | interactive.
	Role string `yaml:"role,omitempty" json:"role,omitempty" jsonschema:"enum=training,enum=inference,enum=interactive"`
	// MachineType is the GKE machine type or EKS instance type.
	MachineType string `yaml:"machineType,omitempty" json:"machineType,omitempty"`
	// InstanceTypes are several EKS instance types instead of MachineType.
	InstanceTypes []string `yaml:"instanceTypes,omitempty" json:"instanceTypes,omitempty"`
	Zones         []string `yaml:"zones,omitempty" json:"zones,omitempty"`
	// OSImage is the GKE image_type (COS_CONTAINERD, UBUNTU_CONTAINERD) or
	// the EKS ami_type (AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64_NVIDIA, ...).
	OSImage string `yaml:"osImage,omitempty" json:"osImage,omitempty"`
	// ReleaseVersion pins the EKS AMI release version (optional).
	ReleaseVersion string `yaml:"releaseVersion,omitempty" json:"releaseVersion,omitempty"`
	// CUDA overrides spec.cuda for the workloads of this pool.
	CUDA string `yaml:"cuda,omitempty" json:"cuda,omitempty"`
	// CUDACompat is the CUDA version of the cuda-compat package the
	// workloads load (forward compatibility), e.g. "13.0"; empty for none.
	CUDACompat string `yaml:"cudaCompat,omitempty" json:"cudaCompat,omitempty"`
	// WorkloadPTX says the workload images embed PTX that the driver can
	// JIT-compile for GPUs newer than the images' CUDA targets.
	WorkloadPTX bool `yaml:"workloadPTX,omitempty" json:"workloadPTX,omitempty"`
	GPU         GPU  `yaml:"gpu,omitempty" json:"gpu,omitempty"`
	// Capacity is on-demand | spot | reservation | capacity-block (EKS) |
	// flex-start | queued (GKE). flex-start: GKE's flex-start VMs (Dynamic
	// Workload Scheduler; nodes come when capacity is found and run at
	// most seven days). queued: flex-start with queued provisioning, whose
	// nodes come only for a ProvisioningRequest (Kueue's
	// ProvisioningRequest admission check creates them), all at once.
	Capacity string `yaml:"capacity,omitempty" json:"capacity,omitempty" jsonschema:"enum=on-demand,enum=spot,enum=reservation,enum=capacity-block,enum=flex-start,enum=queued"`
	// Reservation names the GCE reservation or EC2 capacity reservation.
	Reservation string      `yaml:"reservation,omitempty" json:"reservation,omitempty"`
	Autoscaling Autoscaling `yaml:"autoscaling,omitempty" json:"autoscaling,omitempty"`
	DiskSizeGB  int         `yaml:"diskSizeGB,omitempty" json:"diskSizeGB,omitempty"`
	// DiskType is the boot disk's type: GKE disk_type (pd-balanced, pd-ssd,
	// pd-standard, hyperdisk-balanced, ...), EKS the EBS volume_type (gp3,
	// gp2, io1, io2, ...); empty for the platform's default.
	DiskType string `yaml:"diskType,omitempty" json:"diskType,omitempty"`
	// LocalStorage is what becomes of the node's local NVMe SSDs: raid0
	// (one RAID-0 array for the container runtime and kubelet: GKE
	// ephemeral_storage_local_ssd_config, EKS nodeadm's
	// instance.localStorage.strategy RAID0) or none. Unset: raid0 on a
	// training pool whose machine comes with local NVMe SSDs (the matrix's
	// localssd table; matrix.EffectiveLocalStorage decides), else nothing.
	LocalStorage string            `yaml:"localStorage,omitempty" json:"localStorage,omitempty" jsonschema:"enum=raid0,enum=none"`
	Labels       map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Taints       []Taint           `yaml:"taints,omitempty" json:"taints,omitempty"`
	// DevicePlugin overrides addons.devicePlugin for this pool.
	DevicePlugin *DevicePlugin `yaml:"devicePlugin,omitempty" json:"devicePlugin,omitempty"`
	NCCL         NCCL          `yaml:"nccl,omitempty" json:"nccl,omitempty"`
	// EFA configures Elastic Fabric Adapter interfaces (EKS).
	EFA EFA `yaml:"efa,omitempty" json:"efa,omitempty"`
	// PlacementGroup is the EC2 placement group of an EKS pool's
	// instances: an existing group's name, "cluster" to have gpuctl create
	// one with the cluster strategy, or "none" for no group. Unset: gpuctl
	// creates a cluster group for an EFA training pool in at most one zone
	// (role training, efa.enabled), except on a Capacity Block, whose
	// instances EC2 already places together (and where "cluster" creates
	// nothing); other pools get none.
	// Source: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-blocks.html (2026-12-03).
	PlacementGroup string `yaml:"placementGroup,omitempty" json:"placementGroup,omitempty"`
	// AutoUpgrade is GKE node auto-upgrade; nil when unset.
	AutoUpgrade *bool `yaml:"autoUpgrade,omitempty" json:"autoUpgrade,omitempty"`
	// AutoRepair is node auto-repair: GKE management.auto_repair (on when
	// unset), EKS node_repair_config (off when unset); nil when unset.
	AutoRepair *bool `yaml:"autoRepair,omitempty" json:"autoRepair,omitempty"`
	// AutoProvisioned marks a GKE pool that node auto-provisioning creates
	// (not Terraform): GKE installs its driver by its own defaults for such
	// pools, and generate writes no node pool resource for it.
	AutoProvisioned bool `yaml:"autoProvisioned,omitempty" json:"autoProvisioned,omitempty"`
	// MaintenanceWindow is when upgrades may happen (on GKE it belongs to the
	// cluster), e.g. "Sat 02:00-06:00 UTC".
	MaintenanceWindow string `yaml:"maintenanceWindow,omitempty" json:"maintenanceWindow,omitempty"`
	// Rollout says how `gpuctl plan` rolls node-replacing changes through
	// the pool (maxUnavailable).
	Rollout *Rollout `yaml:"rollout,omitempty" json:"rollout,omitempty"`
}

// GPU describes the accelerators of every node of a pool.
type GPU struct {
	// Type is the GKE accelerator type (nvidia-h100-80gb) or a product name
	// (H100, A10G, L4); derived from the machine type when empty.
	Type string `yaml:"type,omitempty" json:"type,omitempty"`
	// Count is GPUs per node; derived from the machine type when 0.
	Count int `yaml:"count,omitempty" json:"count,omitempty"`
	// Driver is an exact version ("550.90.07") or, on GKE, DEFAULT | LATEST |
	// INSTALLATION_DISABLED; empty where the image ships the driver.
	Driver string `yaml:"driver,omitempty" json:"driver,omitempty"`
	// KernelModules is open | proprietary.
	KernelModules string  `yaml:"kernelModules,omitempty" json:"kernelModules,omitempty" jsonschema:"enum=open,enum=proprietary"`
	Sharing       Sharing `yaml:"sharing,omitempty" json:"sharing,omitempty"`
}

// Sharing is how the pool's GPUs are shared between pods.
type Sharing struct {
	// Strategy is none | time-slicing | mps | mig.
	Strategy string `yaml:"strategy,omitempty" json:"strategy,omitempty" jsonschema:"enum=none,enum=time-slicing,enum=mps,enum=mig"`
	// Replicas is the number of pods sharing one GPU (time-slicing, mps).
	Replicas int `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	// MIGProfile is the MIG profile (e.g. "1g.10gb") for strategy mig.
	MIGProfile string `yaml:"migProfile,omitempty" json:"migProfile,omitempty"`
	// MIGStrategy is how NVIDIA's device plugin advertises MIG devices:
	// single (default; every GPU of the node has MIGProfile, advertised as
	// nvidia.com/gpu) or mixed (advertised as nvidia.com/mig-<profile>).
	// GKE's own plugin always advertises partitions as nvidia.com/gpu.
	MIGStrategy string `yaml:"migStrategy,omitempty" json:"migStrategy,omitempty"`
	// RenameByDefault makes NVIDIA's device plugin advertise time-sliced or
	// MPS-shared GPUs as nvidia.com/gpu.shared instead of nvidia.com/gpu, so
	// that a pod asking for a whole GPU never lands on a shared one. GKE's
	// own plugin has no such option.
	RenameByDefault bool `yaml:"renameByDefault,omitempty" json:"renameByDefault,omitempty"`
}

// Autoscaling bounds the pool's node count.
type Autoscaling struct {
	Min int `yaml:"min" json:"min"`
	Max int `yaml:"max" json:"max"`
}

// Taint is a Kubernetes node taint.
type Taint struct {
	Key    string `yaml:"key" json:"key"`
	Value  string `yaml:"value,omitempty" json:"value,omitempty"`
	Effect string `yaml:"effect" json:"effect" jsonschema:"enum=NoSchedule,enum=PreferNoSchedule,enum=NoExecute"`
}

// NCCL holds the NCCL settings of the workloads on a pool.
type NCCL struct {
	// Env are NCCL_* (and FI_*) environment variables.
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// Plugin is the NCCL net plugin the images carry: aws-ofi-nccl, tcpx,
	// tcpxo, gib, or empty for none.
	Plugin string `yaml:"plugin,omitempty" json:"plugin,omitempty"`
}

// EFA configures EFA network interfaces on an EKS pool.
type EFA struct {
	Enabled bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// Interfaces is how many EFA interfaces the workloads request
	// (vpc.amazonaws.com/efa); 0 means one per network card.
	Interfaces int `yaml:"interfaces,omitempty" json:"interfaces,omitempty"`
	// EFAOnly says how the network cards after the first carry EFA: true
	// (the default when nil) puts an EFA interface with ENA on card 0 and
	// efa-only interfaces on the other cards (terraform-aws-modules/eks
	// enable_efa_only, AWS's recommended layout for P5/P6); false makes
	// every card's interface EFA with ENA.
	// Source: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html (2026-12-02).
	EFAOnly *bool `yaml:"efaOnly,omitempty" json:"efaOnly,omitempty"`
}

// EFAOnlyCards reports whether the cards after the first carry efa-only
// interfaces (EFAOnly, true when unset).
func (e EFA) EFAOnlyCards() bool { return e.EFAOnly == nil || *e.EFAOnly }

// Policy is a platform policy: each field set is one rule the node pools
// must keep; an unset field checks nothing.
type Policy struct {
	// RequiredTags are the keys spec.tags must carry with a value (GCP
	// labels, AWS tags), e.g. [cost-center, team]. POLICY-COST-TAGS.
	RequiredTags []string `yaml:"requiredTags,omitempty" json:"requiredTags,omitempty"`
	// MaxSpotShare is the largest share, 0 to 1, of the spec's GPU capacity
	// (autoscaling.max nodes times GPUs per node, over all pools) that spot
	// pools may hold; a spot pool without autoscaling.max exceeds any share
	// below 1. POLICY-SPOT-MAX.
	MaxSpotShare *float64 `yaml:"maxSpotShare,omitempty" json:"maxSpotShare,omitempty" jsonschema:"minimum=0,maximum=1"`
	// TrainingUpgradeHold requires every training pool to hold node
	// upgrades back (GKE: autoUpgrade false without a release channel, or a
	// maintenance window). POLICY-UPGRADE-HOLD.
	TrainingUpgradeHold *bool `yaml:"trainingUpgradeHold,omitempty" json:"trainingUpgradeHold,omitempty"`
	// RequiredTaints are taints every node pool must carry, written
	// key[=value]:effect, e.g. "nvidia.com/gpu=present:NoSchedule"; without
	// a value any value matches. A taint the platform adds itself counts
	// (GKE taints GPU nodes nvidia.com/gpu=present:NoSchedule).
	// POLICY-GPU-TAINT.
	RequiredTaints []string `yaml:"requiredTaints,omitempty" json:"requiredTaints,omitempty"`
}

// Waiver turns findings of Rule at Path into info findings until Expires.
type Waiver struct {
	// Rule is a rule ID (e.g. GPU-DRIVER-EOL).
	Rule string `yaml:"rule" json:"rule"`
	// Path is the finding path it applies to; a trailing "*" matches a prefix,
	// empty matches every path.
	Path   string `yaml:"path,omitempty" json:"path,omitempty"`
	Reason string `yaml:"reason" json:"reason"`
	// Expires is a date (YYYY-MM-DD) after which the waiver no longer applies.
	Expires string `yaml:"expires" json:"expires"`
}

// Origin says where a resolved spec came from, for the headers of the files
// generated from it.
type Origin struct {
	// SpecFile is the spec's file name as the header shows it.
	SpecFile string
	// Environment is the environment the spec was resolved for; "" for the
	// base spec.
	Environment string
}

// GeneratedFile is one file generated from a resolved spec (Terraform, Helm
// values, manifests). Name is relative to the environment's folder of its
// layer ("node_pools.tf", "gpu-operator.values.yaml").
type GeneratedFile struct {
	Name string
	Data []byte
}
