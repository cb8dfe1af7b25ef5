package rules

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
)

// Rule describes one check: a stable ID (findings carry it, waivers and
// `gpuctl explain` name it), its usual severity, and the long form that
// `gpuctl explain RULE` prints.
type Rule struct {
	// ID is stable across releases, e.g. "CUDA-DRIVER-MIN".
	ID    string
	Title string
	// Severity is the rule's usual severity, graded by the severity contract
	// (see the package doc and ContractLine); SeverityReason says in one line
	// which clause of the contract applies and why. Also lists the other
	// severities the rule reports, each for its case.
	Severity       diag.Severity
	SeverityReason string
	Also           []SeverityCase
	// Summary is one line; Long explains the problem, why it matters and
	// how gpuctl decides; Fix says what to change.
	Summary string
	Long    string
	Fix     string
	// Sources are the URLs of the facts behind the rule.
	Sources []string
}

// SeverityCase is one severity a rule reports: for which case, and the
// severity contract's reason.
type SeverityCase struct {
	Severity diag.Severity
	// When is the case; "" for the rule's usual one.
	When   string
	Reason string
}

// Severities returns every severity the rule reports, its usual one first.
func (r Rule) Severities() []SeverityCase {
	out := []SeverityCase{{Severity: r.Severity, Reason: r.SeverityReason}}
	return append(out, r.Also...)
}

// Emits reports whether the rule reports findings of severity sev.
func (r Rule) Emits(sev diag.Severity) bool {
	for _, c := range r.Severities() {
		if c.Severity == sev {
			return true
		}
	}
	return false
}

// ContractLine is the severity contract's definition of sev, in one line.
func ContractLine(sev diag.Severity) string {
	switch sev {
	case diag.SeverityError:
		return "the pool will not come up, its GPUs will not be usable, or the vendor declares the combination unsupported (with the source); a name or version that does not exist counts as not coming up"
	case diag.SeverityWarning:
		return "it works today, but is deprecated, past support, or risky"
	case diag.SeverityInfo:
		return "a note: nothing to fix, or a fact gpuctl cannot judge"
	}
	return ""
}

// Source URLs shared by several rules.
const (
	srcCUDANotes     = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"
	srcMinorCompat   = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
	srcForwardCompat = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"
	srcArchMatrix    = "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html"
	srcCUDA13Notes   = "https://docs.nvidia.com/cuda/archive/13.0.0/cuda-toolkit-release-notes/index.html"
	srcDriverSupport = "https://docs.nvidia.com/datacenter/tesla/drivers/620/supported-drivers-and-cuda-toolkit-versions.html"
	srcDriverLife    = "https://docs.nvidia.com/datacenter/tesla/drivers/driver-lifecycle.html"
	srcMIGGPUs       = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-gpus.html"
	srcMIGProfiles   = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html"
	srcMIGDeploy     = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/620/deployment-considerations.html"
	srcOpenModules   = "https://download.nvidia.com/XFree86/Linux-x86_64/580.65.06/README/kernel_open.html"
	srcOperatorPlat  = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/platform-support.html"
	// The GPU Operator's driver pod detects a driver preinstalled on the
	// node and exits (as of 2026-12-01): NVIDIA's getting-started page,
	// "Pre-installed NVIDIA GPU drivers" (cloud-native-docs PR #103), and the
	// k8s-driver-manager's log line quoted in gpu-operator issue #381.
	srcOperatorPreinstalled    = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html#pre-installed-nvidia-gpu-drivers"
	srcOperatorPreinstalledLog = "https://github.com/NVIDIA/gpu-operator/issues/381"
	srcOperatorGKE             = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/google-gke.html"
	srcOperatorLife            = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/life-cycle-policy.html"
	srcOperatorNotes           = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/release-notes.html"
	srcGKEOperator             = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-operator"
	srcGKEGPUs                 = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus"
	srcGKEDriverEnum           = "https://cloud.google.com/ruby/docs/reference/google-cloud-container-v1/latest/Google-Cloud-Container-V1-GPUDriverInstallationConfig-GPUDriverVersion"
	srcGKEChannels             = "https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels"
	srcGKEMaint                = "https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions"
	srcGCEGPUs                 = "https://cloud.google.com/compute/docs/gpus"
	srcGCEAccel                = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"
	srcGCPLabels               = "https://cloud.google.com/compute/docs/labeling-resources#requirements"
	srcEC2Accel                = "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html"
	srcEKSAMIs                 = "https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html"
	srcEKSPlugin               = "https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html"
	srcEKSAL2                  = "https://github.com/awslabs/amazon-eks-ami/issues/2545"
	srcEKSVersions             = "https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html"
	srcEKSNodegroup            = "https://docs.aws.amazon.com/eks/latest/APIReference/API_Nodegroup.html"
	srcEKSManagedUpg           = "https://docs.aws.amazon.com/eks/latest/userguide/update-managed-node-group.html"
	srcAWSTags                 = "https://docs.aws.amazon.com/eks/latest/userguide/eks-using-tags.html"
	srcEFANCCL                 = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start-nccl.html"
	srcAWSOFINCCL              = "https://github.com/aws/aws-ofi-nccl"
	srcDevicePlugin            = "https://github.com/NVIDIA/k8s-device-plugin/blob/main/README.md"
	srcDevicePluginCL          = "https://github.com/NVIDIA/k8s-device-plugin/blob/main/CHANGELOG.md"
	srcGFDLabels               = "https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gfd_labels.md"
	srcNCCLEnv                 = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
	srcTCPX                    = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx"
	srcTCPXO                   = "https://docs.cloud.google.com/ai-hypercomputer/docs/nccl/test-gke-custom-a3-mega-high"
	srcGIB                     = "https://github.com/GoogleCloudPlatform/cluster-toolkit/discussions/3478"
	srcK8sLabels               = "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set"
	srcK8sNetworkPolicy        = "https://kubernetes.io/docs/concepts/services-networking/network-policies/#networkpolicy-resource"
	srcK8sTaints               = "https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/"
	srcK8sImages               = "https://kubernetes.io/docs/concepts/containers/images/#image-names"
	srcPodSecurity             = "https://kubernetes.io/docs/concepts/security/pod-security-standards/"
	srcGKEPoolName             = "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools"
	// The GPU Operator on EKS NVIDIA AMIs (2026-12-02): NVIDIA ships no
	// Amazon Linux driver container (#686), closed AL2023 support as off its
	// roadmap (#1492, 2026-09-11), and a user's AL2023 pools failed with the
	// Operator's driver on until driver.enabled=false and
	// toolkit.enabled=false (aws-samples/comfyui-on-eks#26).
	srcOperatorNoAmazonLinux = "https://github.com/NVIDIA/gpu-operator/issues/686"
	srcOperatorNoAL2023      = "https://github.com/NVIDIA/gpu-operator/issues/1492"
	srcOperatorAL2023Fail    = "https://github.com/aws-samples/comfyui-on-eks/issues/26"
)

// Rule IDs. Findings, waivers and `gpuctl explain` use these strings.
const (
	RuleSpecRequired      = "SPEC-REQUIRED"
	RuleSpecEnum          = "SPEC-ENUM"
	RuleSpecVersion       = "SPEC-VERSION"
	RuleSpecLabel         = "SPEC-LABEL"
	RuleSpecTaint         = "SPEC-TAINT"
	RuleSpecName          = "SPEC-NAME"
	RuleSpecCloudTags     = "SPEC-CLOUD-TAGS"
	RuleSpecAutoscaling   = "SPEC-AUTOSCALING"
	RuleSpecProviderField = "SPEC-PROVIDER-FIELD"
	RuleSpecNetwork       = "SPEC-NETWORK"
	RuleSpecRange         = "SPEC-RANGE"
	RuleSpecFormat        = "SPEC-FORMAT"
	RuleSpecReference     = "SPEC-REFERENCE"
	RuleSpecUnknown       = "SPEC-UNKNOWN"

	// Cross-layer rules that `gpuctl generate` checks on what it generates.
	RuleGenDaemonSetToleration = "GEN-DAEMONSET-TOLERATION"
	RuleGenDaemonSetSelector   = "GEN-DAEMONSET-SELECTOR"
	RuleGenKueueResource       = "GEN-KUEUE-RESOURCE"
	RuleGenDevicePluginOwner   = "GEN-DEVICE-PLUGIN-OWNER"
	RuleGenChartVersion        = "GEN-CHART-VERSION"
	RuleGenBuild               = "GEN-BUILD"
	RuleUnknownFact            = "MATRIX-UNKNOWN-FACT"
	RuleDataStale              = "MATRIX-DATA-STALE"
	RuleBeyondTable            = "MATRIX-BEYOND-TABLE"

	RuleCUDAUnknown       = "CUDA-UNKNOWN-VERSION"
	RuleCUDADriverMin     = "CUDA-DRIVER-MIN"
	RuleCUDAMinorCompat   = "CUDA-MINOR-COMPAT"
	RuleCUDAForwardCompat = "CUDA-FORWARD-COMPAT"

	RuleGPUUnknown        = "GPU-UNKNOWN"
	RuleGPUArchCUDA       = "GPU-ARCH-CUDA"
	RuleGPUDriverBranch   = "GPU-DRIVER-BRANCH"
	RuleGPUOpenModules    = "GPU-OPEN-MODULES"
	RuleMIGUnsupported    = "MIG-UNSUPPORTED"
	RuleMIGProfile        = "MIG-PROFILE"
	RuleMIGDriverMin      = "MIG-DRIVER-MIN"
	RuleDriverEOL         = "DRIVER-EOL"
	RuleDriverNFBProd     = "DRIVER-NFB-PROD"
	RuleDriverOwner       = "DRIVER-OWNER"
	RuleGKEDriverOption   = "GKE-DRIVER-OPTION"
	RuleGKENodeImage      = "GKE-NODE-IMAGE"
	RuleGKEFlexStart      = "GKE-FLEX-START"
	RuleLabelGFDManaged   = "LABEL-GFD-MANAGED"
	RuleSharingReplicas   = "SHARING-REPLICAS"
	RuleSharingMPSMIG     = "SHARING-MPS-MIG"
	RuleSharingFields     = "SHARING-FIELDS"
	RuleMachineUnknown    = "MACHINE-UNKNOWN"
	RuleMachineAccel      = "MACHINE-ACCELERATOR"
	RuleMachineCapacity   = "MACHINE-CAPACITY"
	RulePoolMixed         = "POOL-MIXED-INSTANCES"
	RuleEKSAMIK8s         = "EKS-AMI-K8S"
	RuleEKSAMIArch        = "EKS-AMI-ARCH"
	RuleEKSAMIEOL         = "EKS-AMI-EOL"
	RuleEKSAMIGPU         = "EKS-AMI-GPU"
	RuleEKSReleaseK8s     = "EKS-RELEASE-K8S"
	RuleEKSReleaseUnknown = "EKS-RELEASE-UNKNOWN"
	RuleEKSReleaseDriver  = "EKS-RELEASE-DRIVER"
	RuleEKSReleasePin     = "EKS-RELEASE-PIN"
	RuleEKSK8sSupport     = "EKS-K8S-SUPPORT"
	RuleEKSSingleAZ       = "EKS-SINGLE-AZ"
	RuleEKSCapacityBlock  = "EKS-CAPACITY-BLOCK"
	RuleEFAPlacement      = "EFA-PLACEMENT"
	RuleEFAVPCCNI         = "EFA-VPC-CNI"
	RuleDiskSize          = "POOL-DISK-SIZE"
	RuleLocalStorage      = "POOL-LOCAL-STORAGE"
	RuleEKSAutoscaler     = "EKS-AUTOSCALER"
	RuleGKEK8sSupport     = "GKE-K8S-SUPPORT"
	RulePluginConflict    = "DEVICE-PLUGIN-CONFLICT"
	RulePluginMissing     = "DEVICE-PLUGIN-MISSING"
	RulePluginProvider    = "DEVICE-PLUGIN-PROVIDER"
	RulePluginVersion     = "DEVICE-PLUGIN-VERSION"
	RuleOperatorCOS       = "OPERATOR-DRIVER-COS"
	RuleOperatorK8s       = "OPERATOR-K8S-RANGE"
	RuleOperatorGKEKit    = "OPERATOR-GKE-TOOLKIT"
	RuleOperatorGKEVer    = "OPERATOR-GKE-VERSION"
	RuleOperatorEOL       = "OPERATOR-EOL"
	RuleOperatorDriver    = "OPERATOR-DRIVER-VERSION"
	RuleOperatorAL2       = "OPERATOR-AL2"
	RuleOperatorToolkit   = "OPERATOR-TOOLKIT-PREINSTALLED"
	RuleNCCLIBDisable     = "NCCL-IB-DISABLE-RDMA"
	RuleNCCLNetSocket     = "NCCL-NET-SOCKET"
	RuleNCCLPrefix        = "NCCL-PREFIX-MATCH"
	RuleNCCLEFAPlugin     = "NCCL-EFA-PLUGIN"
	RuleNCCLGCPTransport  = "NCCL-GCP-TRANSPORT"
	RuleNCCLP2PDisable    = "NCCL-P2P-DISABLE"
	RuleNCCLDebug         = "NCCL-DEBUG"
	RuleNCCLUnknownEnv    = "NCCL-UNKNOWN-ENV"
	RuleEFAUnsupported    = "EFA-UNSUPPORTED"
	RuleEFAInterfaces     = "EFA-INTERFACES"
	RuleEFADisabled       = "EFA-DISABLED"
	RulePolicyTaint       = "POLICY-GPU-TAINT"
	RulePolicySpotMax     = "POLICY-SPOT-MAX"
	RulePolicyCostTags    = "POLICY-COST-TAGS"
	RulePolicyUpgrade     = "POLICY-UPGRADE-HOLD"
	RuleAcceptImageDigest = "ACCEPT-IMAGE-DIGEST"
	RuleAcceptParallel    = "ACCEPT-PARALLEL"
	// RuleAcceptPreflightPool: acceptance.preflight.pools names a pool
	// without whole GPUs.
	RuleAcceptPreflightPool = "ACCEPT-PREFLIGHT-POOL"
	// RuleAcceptStageNeeds: a sweep stage the CronJob cannot run as
	// spec.acceptance stands (helmgen's cross-check reports it).
	RuleAcceptStageNeeds = "ACCEPT-STAGE-NEEDS"
	RuleWaiverExpired    = "WAIVER-EXPIRED"
	RuleWaiverInvalid    = "WAIVER-INVALID"
)

var rules = []Rule{
	{ID: RuleSpecRequired, Title: "Required field missing", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the pool cannot be created or generated without the field.",
		Also: []SeverityCase{
			{Severity: diag.SeverityInfo, When: "kubernetesVersion, or an EKS pool's osImage, is missing", Reason: "a note: the pool comes up; only the checks that need the field are skipped."},
		},
		Summary: "A field gpuctl needs to judge or generate the pool is missing.",
		Long: `Some fields have no sensible default: the provider, the region and cluster the pools join, and
each pool's machine type (machineType on GKE, machineType or instanceTypes on EKS, not both). A
reservation pool also needs the reservation's name. Missing values that only limit what gpuctl can
check (kubernetesVersion, an EKS pool's osImage) are notes (info): the pool comes up without them.`,
		Fix: "Add the field; `gpuctl schema` lists every field and examples/ has complete specs."},
	{ID: RuleSpecUnknown, Title: "Value unknown before apply", Severity: diag.SeverityInfo,
		SeverityReason: "a note: the value exists but gpuctl could not read it, so the checks that need it were neither passed nor failed.",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "the unknown value decides whether the pools come up: the Kubernetes version, a machine type, an OS image", Reason: "risky: the GPU checks that hang on it were skipped, so a broken pool would pass unseen."},
		},
		Summary: "A value the checks need is unknown until Terraform applies (or the blueprint is deployed), so they were not judged.",
		Long: `A fact has three states: known, absent, and unknown. An imported value that depends on a data
source, on a variable without a value, or on a module gpuctl does not read (an add-on module that
installs the device plugin or the GPU Operator, such as aws-ia/eks-data-addons) is unknown: it will
exist once the configuration is applied, but gpuctl cannot say what it is. No rule reports an error or
a warning from an unknown value; instead this rule lists, per unknown fact, the checks that could not
be judged without it. When the fact decides whether the GPU nodes come up (the Kubernetes version, a
machine type, an OS image) it is a warning, since every driver and compatibility check that needs it
was skipped: give the value (--kubernetes-version, --var NAME=VALUE, --var-file) to have them judged.`,
		Fix: "Give the value: --kubernetes-version VERSION, --var NAME=VALUE or --var-file FILE."},
	{ID: RuleSpecEnum, Title: "Value not allowed", Severity: diag.SeverityError,
		SeverityReason: "won't come up as written: the provider's API, Terraform or the chart rejects the value.",
		Summary:        "A field holds a value outside its allowed set.",
		Long: `Fields such as provider (gke | eks), role (training | inference | interactive), capacity
(on-demand | spot | reservation | capacity-block | flex-start | queued), gpu.sharing.strategy (none | time-slicing | mps |
mig), gpu.kernelModules (open | proprietary), devicePlugin.provider (gke-managed | helm | gpu-operator |
bottlerocket | none), nccl.plugin (aws-ofi-nccl | tcpx | tcpxo | gib), the GKE image type
(COS_CONTAINERD | UBUNTU_CONTAINERD), the EKS AMI type (the EKS API enum) and the GKE release channel
take a fixed set of values. A misspelt value would otherwise be passed to Terraform or Helm and fail
at apply time, or silently select a default.`,
		Fix:     "Use one of the listed values (the message names the closest).",
		Sources: []string{srcEKSNodegroup, srcGKEDriverEnum}},
	{ID: RuleSpecVersion, Title: "Version does not parse", Severity: diag.SeverityError,
		SeverityReason: "won't come up as written: the generated Terraform's validation and the providers reject a version that does not parse.",
		Summary:        "A version string is not a dotted numeric version.",
		Long: `Driver, CUDA, Kubernetes and chart versions are compared numerically component by component
(535.104.05 > 535.54.03; 1000 > 580), never as strings. A value such as "580.x", "latest" or
"12.4-cudnn" cannot be compared, so every rule that needs it is skipped. Write the exact version:
"580.95.05", "12.4", "1.33", "v26.7.0".`,
		Fix: "Write an exact dotted version."},
	{ID: RuleSpecLabel, Title: "Invalid Kubernetes label", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the API server rejects the label.",
		Summary:        "A node label key or value is not a valid Kubernetes label.",
		Long: `Label keys are an optional DNS-subdomain prefix and a name of at most 63 characters
([A-Za-z0-9] at both ends, '-', '_' and '.' inside); values are at most 63 characters of the same set,
or empty. The API server rejects invalid labels, so the node pool would fail to create or its nodes
fail to register. gpuctl checks them with k8s.io/apimachinery's validation, the same code the API server
runs.`,
		Fix:     "Rename the key or value to fit the Kubernetes label syntax.",
		Sources: []string{srcK8sLabels}},
	{ID: RuleSpecTaint, Title: "Invalid taint", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the API rejects the taint.",
		Summary:        "A taint has an invalid key, value or effect, or appears twice.",
		Long: `A taint key follows the label-key syntax, a value the label-value syntax, and the effect is
NoSchedule, PreferNoSchedule or NoExecute (the spec uses the Kubernetes spelling; gpuctl writes
NO_SCHEDULE etc. into Terraform itself). The same key and effect twice is rejected by the API.`,
		Fix:     "Use a valid key and value and one of NoSchedule, PreferNoSchedule, NoExecute.",
		Sources: []string{srcK8sTaints}},
	{ID: RuleSpecName, Title: "Invalid name", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the provider rejects the name (the pool, cluster reference or team namespace is not created).",
		Summary:        "A node pool or cluster name breaks the provider's naming rules.",
		Long: `GKE node pool names are RFC 1035 labels (lower-case letters, digits, '-', starting with a
letter, at most 63 characters, like every Compute Engine resource name); GKE cluster names the same, at
most 40 characters. EKS node group names are 1-63 characters of letters,
digits, '-' and '_', starting with a letter or digit; cluster names up to 100. The metadata name is a DNS
subdomain. Names that break these rules fail at creation.`,
		Fix:     "Rename to fit the provider's rule given in the message.",
		Sources: []string{srcGKEPoolName, srcEKSNodegroup}},
	{ID: RuleSpecCloudTags, Title: "Invalid cloud labels/tags", Severity: diag.SeverityError,
		SeverityReason: "won't come up: GCP or AWS rejects the labels or tags of the pool.",
		Summary:        "spec.tags break GCP label or AWS tag constraints.",
		Long: `spec.tags become GCP resource labels on GKE and AWS tags on EKS. GCP label keys are 1-63
characters of lower-case letters, digits, '_' and '-', starting with a lower-case letter; values are up to
63 characters of the same set; at most 64 labels. AWS tag keys are 1-128 characters, values up to 256, of
letters, digits, spaces and + - = . _ : / @; keys must not start with "aws:"; at most 50 tags.`,
		Fix:     "Rename the tag (GCP: lower case, no dots or slashes).",
		Sources: []string{srcGCPLabels, srcAWSTags}},
	{ID: RuleSpecAutoscaling, Title: "Invalid autoscaling bounds", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the provider rejects the bounds.",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "max above EKS's default, adjustable quota of nodes per managed node group", Reason: "risky: creation fails unless the account's quota was raised, which gpuctl cannot see."},
		},
		Summary: "autoscaling.min is negative or larger than max, or max is beyond the provider's node limit.",
		Long: `The autoscaler needs 0 <= min <= max. (max 0 with min 0 means "not set": no bound; see POLICY-SPOT-MAX.)
GKE allows at most 1,000 nodes per node pool and zone and 15,000 nodes per cluster (limits, not quotas):
max above 1,000 times the pool's zones, or above 15,000, is an error. EKS's quota of nodes per managed
node group is 450 by default and adjustable: more is a warning. No API takes a count beyond a 32-bit
integer.`,
		Fix:     "Set 0 <= min <= max within the provider's limits.",
		Sources: []string{srcGKEQuotas, srcEKSQuotas}},
	{ID: RuleSpecRange, Title: "Number outside the provider's range", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the provider rejects the number (disk size, shared clients per GPU).",
		Summary:        "A disk size, sharing replica count or GPU count is outside what the provider accepts.",
		Long: `GKE node boot disks are 10 GB to 64 TiB (65,536 GB); gpuctl writes EKS root volumes as gp3, at most
16 TiB (16,384 GiB). GKE's own time-sharing and MPS share a GPU among at most 48 containers. Counts
beyond a 32-bit integer reach no API. A negative disk size is refused. An EKS node group update takes at
most 100 nodes out of service at once: a larger rollout.maxUnavailable is refused.`,
		Fix:     "Set the number within the range the message gives.",
		Sources: []string{srcGKEDisk, srcGCEDisk, srcEBSGP3, srcGKESharing, srcGKEMPS, matrix.SourceEKSUpdateConfig}},
	{ID: RuleSpecFormat, Title: "Value not in the provider's format", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the cloud or the Kubernetes API rejects the name (region, zone, reservation, placement group, environment variable).",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "a maintenance window that is not days and a time range", Reason: "risky: nothing rejects it (gpuctl only passes it on), but the cluster's owners cannot apply it."},
		},
		Summary: "A region, zone, reservation, placement group, maintenance window or environment variable name has a form the provider does not accept.",
		Long: `Regions and zones are written as the clouds name them: GCP regions such as us-central1 and zones
such as us-central1-a (spec.region on GKE may be either: the cluster's location); AWS Region codes such
as us-east-1 and zones such as us-east-1a or a Local Zone such as us-west-2-lax-1a. A pool's zones must
be in the spec's region. GCE reservations are resource names (RFC 1035, at most 63 characters) or
projects/<project>/reservations/<name>; EC2 capacity reservations are cr- and 17 hexadecimal digits.
EC2 placement group names are up to 255 ASCII characters. NCCL and GPU Operator toolkit environment
variable names follow Kubernetes' EnvVar rule [-._a-zA-Z][-._a-zA-Z0-9]*. A maintenance window is
days, a 24-hour time range and a time zone ("Sat 02:00-06:00 UTC").`,
		Fix:     "Write the value in the form the message gives.",
		Sources: []string{srcGCPRegions, srcAWSRegions, srcAWSAZs, srcGCENames, srcGCERes, srcEC2CapRes, srcEC2PG, srcK8sEnvNames}},
	{ID: RuleSpecNetwork, Title: "Invalid egress CIDR", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the API rejects the team namespaces' NetworkPolicy whose ipBlock is not a CIDR.",
		Summary:        "An entry of spec.network.egressCIDRs is not an IPv4 or IPv6 CIDR.",
		Long: `spec.network.egressCIDRs become the ipBlock peers of the team namespaces' allow-egress-cidrs
NetworkPolicy; Kubernetes accepts only CIDR notation there ("10.20.0.0/16", "2001:db8::/32").`,
		Fix:     "Write each entry as ADDRESS/PREFIX.",
		Sources: []string{srcK8sNetworkPolicy}},
	{ID: RuleSpecReference, Title: "Unknown node pool reference", Severity: diag.SeverityError,
		SeverityReason: "won't come up as written: the name refers to no node pool, so the team gets no queue, quota or policy for the pool it meant (a name that does not exist counts as not coming up).",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "a team lists the same pool twice", Reason: "risky: harmless today, but often a second pool's name mistyped as the first's."},
		},
		Summary: "spec.teams[].pools names a node pool the spec does not have.",
		Long: `spec.teams[].pools are the node pools a team's workloads may use: generate writes the team's Kueue
LocalQueues, GPU quota, NCCL ConfigMaps and NetworkPolicies for those pools only, and sets its namespace's
Pod Security level from their NCCL transports. Each entry must be the name of a pool of spec.nodePools (in an
environment, of the pools as the environment resolves them); a misspelt name would silently keep the team
off the pool it meant.`,
		Fix: "Write the pool's name as spec.nodePools[].name has it (the message suggests the closest), or remove the entry."},
	{ID: RuleSpecProviderField, Title: "Field does not apply to this provider", Severity: diag.SeverityError,
		SeverityReason: "won't come up as written: the provider has no such setting, or rejects it (autoUpgrade: false in a GKE release channel).",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "the field has no effect, or may be rejected, and the spec's expectation leaves the pool at risk (autoUpgrade: true or releaseChannel on EKS, autoUpgrade: false with the GKE release channel unstated, two GKE maintenance windows)", Reason: "risky: it works today, but not the way the spec says."},
			{Severity: diag.SeverityInfo, When: "maintenanceWindow on EKS", Reason: "a note: the setting does nothing there."},
		},
		Summary: "A field is set that the provider does not have, or that has no effect there.",
		Long: `Some fields exist on one provider only: instanceTypes, efa, placementGroup and releaseVersion
are EKS; releaseChannel, autoUpgrade and the GKE driver options (DEFAULT, LATEST, INSTALLATION_DISABLED)
are GKE; capacity-block is EKS, capacity flex-start and queued are GKE. A field the provider cannot express or rejects is an error (gpuctl
would have to drop it): autoUpgrade: false on a GKE cluster in a release channel, where GKE keeps node
auto-upgrade on and rejects the setting. A field that is without effect while the spec counts on it is
a warning: autoUpgrade: true or releaseChannel on EKS (managed node groups never auto-upgrade),
autoUpgrade: false with spec.releaseChannel unstated (GKE enrolls Standard clusters in REGULAR by
default), a second maintenance window on GKE (one per cluster). maintenanceWindow on EKS is a note.`,
		Fix: "Remove the field, or move the pool to the provider that has it."},
	{ID: RuleUnknownFact, Title: "Fact not in the matrix", Severity: diag.SeverityInfo,
		SeverityReason: "a note: gpuctl lacks the fact, so it neither passes nor fails the check.",
		Summary:        "A check needs a fact the matrix does not have, so it was not judged.",
		Long: `gpuctl's matrix holds sourced facts only. Where a rule needs one it lacks — the driver behind GKE's
DEFAULT or LATEST for a GKE version, a CUDA release newer than the matrix, the driver a custom AMI ships,
a GPU Operator version it has not captured — it says so as an info finding instead of guessing. The check
is neither passed nor failed.`,
		Fix: "Pin the value the check needs (an exact driver, a known version), or accept the note."},
	{ID: RuleBeyondTable, Title: "Value beyond the matrix's table", Severity: diag.SeverityWarning,
		SeverityReason: "risky: the spec is newer than what the matrix knows, so the core checks for it were not made.",
		Summary:        "A spec value lies beyond the range of the table that would judge it.",
		Long: `A value newer than the newest row of the table that judges it — a GKE minor past GKE's GPU driver
table, a Kubernetes version past the EKS AMIs the matrix knows, a CUDA release past its toolkit table — means
the matrix is older than the cluster. Unlike a gap inside a table (MATRIX-UNKNOWN-FACT, an info note), this
leaves the core driver and CUDA checks unmade for exactly the versions users move to, so it is a warning
that names the table and its date.`,
		Fix: "Update gpuctl to a release whose matrix covers the version, or pin the value the check needs (an exact driver)."},
	{ID: RuleDataStale, Title: "Embedded data is old", Severity: diag.SeverityInfo,
		SeverityReason: "a note: nothing about the cluster is wrong, only the matrix may be behind it.",
		Summary:        "The version matrix built into gpuctl is more than 120 days older than the date checked at.",
		Long: `Every fact gpuctl judges by is embedded with the date it was true (as_of); the newest of those dates is
the date of the data. When the date checked at (--as-of, GPUCTL_AS_OF, or today) is more than 120 days
later, releases, end-of-life dates and defaults since then are unknown to this gpuctl: a new CUDA, driver
branch, GPU Operator or Kubernetes version is reported as unknown, and lifecycle verdicts may be stale.
validate and matrix say so once as an info note; it never fails a check, so --strict CI does not break
because of the calendar. gpuctl matrix prints the same note. Each table is dated too, by its newest
row's as_of, so one old table is not hidden by newer ones: before the whole data is stale, validate
(and gpuctl matrix drivers) add one info note naming each table older than 120 days with its date,
and gpuctl matrix tables lists every table with its date and age.`,
		Fix: "Upgrade gpuctl to a release with newer data, or judge as of an earlier date with --as-of."},

	{ID: RuleCUDAUnknown, Title: "CUDA version does not exist", Severity: diag.SeverityError,
		SeverityReason: "does not exist: no image is built with a CUDA release that never existed, so nothing real matches the spec.",
		Summary:        "The CUDA toolkit version was never released.",
		Long: `Some versions people write never existed: there is no CUDA 12.7 (12.6 Update 3 was followed by 12.8
GA; R565 drivers print "CUDA Version: 12.7" in nvidia-smi, which is a driver capability, not a toolkit),
and no 11.9 or 12.10. Versions are matched against the release table: "X.Y" is X.Y GA and "X.Y.Z" the
release NVIDIA numbered so (12.2.2 is 12.2 Update 2, 11.0.2 is 11.0 GA). A version newer than the matrix
is an info finding (MATRIX-UNKNOWN-FACT), not this error.`,
		Fix:     "Use the CUDA version the images are actually built with (e.g. 12.6 or 12.8).",
		Sources: []string{srcCUDANotes}},
	{ID: RuleCUDADriverMin, Title: "Driver too old for the CUDA major version", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable: below the family floor the CUDA runtime refuses to start.",
		Summary:        "The driver is below the CUDA major family's minor-version-compatibility floor.",
		Long: `Each CUDA toolkit needs a minimum driver for full support, and every toolkit of a major family runs
(with limits) on drivers at or above the family floor: {minorCompatFloors}. Below the floor the CUDA runtime refuses to start ("CUDA driver version is insufficient for
CUDA runtime version"). Only the cuda-compat package (forward compatibility, data-center GPUs) lifts that,
and only on LTSB/PB branches still in support. Versions compare numerically: "470" vs "525" happens to
work as strings, "470" vs "1000" does not.`,
		Fix:     "Upgrade the driver to at least the toolkit's minimum (the message names it), or build the images with an older CUDA.",
		Sources: []string{srcCUDANotes, srcMinorCompat}},
	{ID: RuleCUDAMinorCompat, Title: "CUDA runs only under minor-version compatibility", Severity: diag.SeverityWarning,
		SeverityReason: "risky: it runs under minor-version compatibility, but PTX JIT of the newer PTX and APIs that need a newer driver fail.",
		Summary:        "The driver is above the family floor but below the toolkit's minimum.",
		Long: `Between the family floor and the toolkit's own minimum driver, CUDA applications run under
minor-version compatibility with a limited feature set: PTX JIT does not work for the newer toolkit's PTX
(Triton kernels, torch.compile, NVRTC without nvJitLink, and any image that ships only PTX for the GPU),
and APIs that need the newer driver fail with cudaErrorCallRequiresNewerDriver. That is a warning, not a
pass: many training and inference stacks JIT-compile at run time. In strict mode (--strict) it fails the
check.`,
		Fix:     "Upgrade the driver to the toolkit's minimum, or build the images with the CUDA version the driver supports natively.",
		Sources: []string{srcMinorCompat, srcCUDANotes}},
	{ID: RuleCUDAForwardCompat, Title: "cuda-compat (forward compatibility) misused", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable, or vendor-unsupported: the package does not load on this GPU or driver branch, is older than the images, or NVIDIA does not support forward compatibility on a New Feature Branch.",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "the driver branch is past end of life, or runs the CUDA version natively (the package is not needed)", Reason: "past support, or risky: it may run, and nobody fixes it when it does not."},
		},
		Summary: "The cuda-compat package does not apply to this GPU, driver or CUDA version.",
		Long: `The cuda-compat-X-Y package brings a newer user-mode CUDA driver to an older kernel driver. It works
only on NVIDIA data-center GPUs (and select NGC-Server-Ready RTX SKUs), not GeForce (error 804,
CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE); only on the kernel driver branches the compatibility matrix
lists for that package (e.g. cuda-compat-13-0 on R535 and R570); and NVIDIA supports it only on LTSB and
production branches that are in support: a New Feature Branch is not a supported target (an error,
by the vendor's word); an EOL branch is past support (a warning: it may work, nobody fixes it when it
does not). On a driver that runs the CUDA version natively no package is published or needed (a
warning). LD_LIBRARY_PATH must point at
/usr/local/cuda-X.Y/compat.`,
		Fix:     "Use a supported LTSB/PB driver branch listed for the package, or upgrade the driver so it runs the CUDA version natively.",
		Sources: []string{srcForwardCompat, srcDriverSupport}},

	{ID: RuleGPUUnknown, Title: "Unknown GPU", Severity: diag.SeverityError,
		SeverityReason: "does not exist: GKE's API rejects an accelerator type it does not know (and `gpuctl matrix check` has no GPU to answer about).",
		Also: []SeverityCase{
			{Severity: diag.SeverityInfo, When: "on EKS, where the instance type fixes the GPU", Reason: "a note: gpuctl judges the instance type's GPU; it only does not know the name."},
		},
		Summary: "gpu.type names no GPU product or accelerator type the matrix knows.",
		Long: `gpu.type is a GKE accelerator type (nvidia-h100-80gb, nvidia-l4) or a product name (H100, A10G, L4,
"NVIDIA H100 80GB HBM3"). An unknown name cannot be checked against the machine type, driver or CUDA, and on
GKE it is passed to the API as the accelerator type, which rejects it (an error). On EKS the instance
type fixes the GPU and gpuctl judges that one, so an unknown name there is a note.`,
		Fix:     "Use a known accelerator type or product name (`gpuctl matrix gpus` lists them), or leave it empty to derive it from the machine type.",
		Sources: []string{srcGCEGPUs}},
	{ID: RuleGPUArchCUDA, Title: "CUDA version does not target the GPU's architecture", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable: the toolkit dropped the GPU's architecture, so the images carry no code that runs on it.",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "the GPU is newer than the toolkit", Reason: "risky: the images run only if they embed PTX the driver JIT-compiles (slower start, no architecture-specific kernels)."},
			{Severity: diag.SeverityInfo, When: "the GPU is newer than the toolkit and workloadPTX: true", Reason: "a note: the images say they embed JIT-able PTX."},
		},
		Summary: "The workload's CUDA version dropped the GPU's architecture, or predates it.",
		Long: `Toolkits drop old architectures and learn new ones. CUDA 12.0 removed Kepler (K80: build with 11.x);
CUDA 13.0 removed offline compilation and library support for Maxwell, Pascal and Volta (P4, P100, V100:
build with <= 12.9): an error. A GPU newer than the toolkit has no machine code in the images:
Blackwell (B200, GB200, RTX PRO 6000) is first targeted by CUDA 12.8, B300 by 12.9, Hopper and Ada by
11.8. Such images run through PTX JIT (framework builds embed PTX for their newest architecture; not
sm_90a-specific kernels), with a slower start and no architecture-specific kernels: a warning. Say so
with workloadPTX: true and gpuctl reports a note instead.`,
		Fix:     "Build the images with a CUDA version that targets the GPU (the message gives the range).",
		Sources: []string{srcArchMatrix, srcCUDA13Notes, srcCUDANotes}},
	{ID: RuleGPUDriverBranch, Title: "Driver branch does not support the GPU", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable, vendor-unsupported: NVIDIA's (or AWS's) support matrix puts the GPU outside the driver branch.",
		Summary:        "The driver is older than the GPU's first supported branch or newer than its last.",
		Long: `Each GPU needs a minimum driver, and old architectures have a last branch (a 595 driver does not support
V100 — AWS says so for P3/P3dn — nor G6f's fractional L4). From gpuctl's GPU data: {gpuDriverRanges}.
Where NVIDIA documents no minimum for a product, none is invented. The EKS-optimized NVIDIA AMIs ship R580,
so a GPU that needs a newer branch needs a custom AMI.`,
		Fix:     "Pick a driver branch inside the GPU's supported range (the message names it).",
		Sources: []string{srcArchMatrix, srcOperatorPlat, srcMIGDeploy, "https://github.com/awslabs/amazon-eks-ami/blob/main/doc/usage/g7-ami.md"}},
	{ID: RuleGPUOpenModules, Title: "GPU needs the open kernel modules", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable: the proprietary kernel modules do not load on the GPU.",
		Summary:        "Proprietary kernel modules were chosen for a GPU only the open modules support.",
		Long: `Blackwell GPUs (B200, GB200, B300, GB300, RTX PRO Blackwell) and GH200 are supported only by the
open GPU kernel modules; the proprietary modules do not load on them. With the GPU Operator set
driver.kernelModuleType to open (or auto); with a preinstalled driver install the -open flavour.`,
		Fix:     "Set gpu.kernelModules: open (and the GPU Operator's driver.kernelModuleType: open or auto).",
		Sources: []string{srcOpenModules, srcOperatorPlat}},
	{ID: RuleMIGUnsupported, Title: "GPU does not support MIG", Severity: diag.SeverityError,
		SeverityReason: "vendor-unsupported: the GPU has no MIG, so the MIG manager cannot partition it.",
		Summary:        "MIG was requested on a GPU without Multi-Instance GPU support.",
		Long: `MIG needs compute capability >= 8.0 and a MIG-capable product; from gpuctl's GPU data: {migGPUs}. Other
GPUs ({nonMIGGPUs}) have no MIG; share them with time-slicing or MPS instead.`,
		Fix:     "Use time-slicing or MPS, or a MIG-capable GPU.",
		Sources: []string{srcMIGGPUs}},
	{ID: RuleMIGProfile, Title: "MIG profile not valid for the GPU", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable as configured: the MIG manager fails to apply a profile the GPU does not offer.",
		Summary:        "The MIG profile is missing or not one the GPU offers.",
		Long: `MIG profile names encode compute slices and memory of the specific product; from gpuctl's GPU data:
{migProfileRanges}. A profile of another product does not exist on the GPU and the MIG manager fails to
apply it.`,
		Fix:     "Use one of the profiles the message lists.",
		Sources: []string{srcMIGProfiles}},
	{ID: RuleMIGDriverMin, Title: "Driver too old for MIG on this GPU", Severity: diag.SeverityError,
		SeverityReason: "vendor-unsupported: NVIDIA documents a minimum driver for MIG on the GPU.",
		Summary:        "The driver is below the GPU's documented MIG minimum.",
		Long:           `MIG on each product needs a minimum driver; from gpuctl's GPU data: {migMinDrivers}.`,
		Fix:            "Upgrade the driver to the MIG minimum or later.",
		Sources:        []string{srcMIGDeploy}},
	{ID: RuleDriverEOL, Title: "Driver branch past end of life", Severity: diag.SeverityWarning,
		SeverityReason: "past support: the branch gets no more security or bug fixes.",
		Summary:        "The driver branch is past NVIDIA's end of life at the evaluation date.",
		Long: `Production (PB, ~1 year) and long-term (LTSB, ~3 years) branches get security and bug fixes until
their end of life; after that, none. From gpuctl's driver data: {driverEOLs}. The date used is
--as-of (today by default), so the same spec can pass today and warn next year.`,
		Fix:     "Move to a branch in support (the message lists the ones that fit the GPU).",
		Sources: []string{srcDriverSupport, srcDriverLife}},
	{ID: RuleDriverNFBProd, Title: "New Feature Branch driver", Severity: diag.SeverityWarning,
		SeverityReason: "risky: a short-lived branch without long-term fixes, not meant for production.",
		Summary:        "The driver is from a New Feature Branch, which is not meant for production.",
		Long: `New Feature Branches (R545, R555, R560, R565, R575, R590, R610, R615) are for early adopters of new
features and hardware: short-lived, without long-term fixes, and not supported targets for forward
compatibility. Production pools should run an LTSB or PB driver.`,
		Fix:     "Use an LTSB or PB branch (R580, R595, R620).",
		Sources: []string{srcDriverLife, srcDriverSupport}},
	{ID: RuleDriverOwner, Title: "No one, or two, install the driver", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable, or vendor-unsupported: two drivers fight over the kernel module, nothing installs one, or the Operator's driver runs where NVIDIA publishes no driver for the OS.",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "the pool's gpu.driver disagrees with the GPU Operator's driver.version, or the Operator's driver is on over a custom AMI with a preinstalled driver", Reason: "risky: the driver checks judge a driver the nodes do not run, or the Operator's driver pod detects the preinstalled driver and exits, leaving two owners."},
		},
		Summary: "Nothing in the spec installs the GPU driver, or two things do.",
		Long: `Exactly one component must own the driver on a node: the image (EKS AL2023/Bottlerocket NVIDIA AMIs, a
custom AMI), GKE (DEFAULT/LATEST), or the GPU Operator's driver container (driver.enabled: true, on images
without a driver). driver.enabled left unset is the chart's default, which is true in every GPU Operator
release: the Operator then installs a driver whether or not the spec says so, except on pools gpuctl labels
out of its operands (nvidia.com/gpu.deploy.operands=false, where the platform's device plugin owns the pool
and the Operator has pools of its own). On GKE two owners fight over the kernel module (an error: NVIDIA's
GKE guide requires driver.enabled=false there); none leaves the GPU unusable (an error).

Decision (2026-12-02), the Operator's driver over an EKS NVIDIA AMI (AL2023_*_NVIDIA, BOTTLEROCKET_*_NVIDIA, AL2_x86_64_GPU)
is an error, no longer a warning: two installers of one driver, and vendor-unsupported. AWS's accelerated
AMI page says these AMIs ship the NVIDIA kernel modules and driver
(https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html); NVIDIA publishes no driver
container for Amazon Linux and points to the AMI's driver (https://github.com/NVIDIA/gpu-operator/issues/686),
and closed AL2023 support as not on its roadmap (https://github.com/NVIDIA/gpu-operator/issues/1492,
2026-09-11); users fail with exactly this setup, fixed with driver.enabled=false and toolkit.enabled=false
(https://github.com/aws-samples/comfyui-on-eks/issues/26). The earlier reading, that the driver pod
detects the preinstalled driver and exits, holds on a custom AMI with a supported OS, which stays a
warning. A pool whose gpu.driver disagrees with the Operator's driver.version is a warning: the checks
judge a driver the nodes do not run. On GKE with INSTALLATION_DISABLED and no Operator driver, Google's
installer DaemonSet must run: gpuctl notes that it cannot see it (GKE-DRIVER-OPTION grades the
node-auto-provisioned case). Where the driver or the Operator is unknown, nothing is graded.`,
		Fix:     "Keep one driver owner: GPU Operator driver.enabled only on images without a driver; driver.enabled: false and toolkit.enabled: false on EKS NVIDIA AMIs.",
		Sources: []string{srcOperatorGKE, srcEKSAMIs, srcOperatorNoAmazonLinux, srcOperatorNoAL2023, srcOperatorAL2023Fail, srcOperatorPreinstalled, srcOperatorPreinstalledLog}},
	{ID: RuleGKEFlexStart, Title: "Flex-start or queued provisioning pool GKE would reject", Severity: diag.SeverityError,
		SeverityReason: "won't come up: GKE rejects a flex-start or queued provisioning node pool with auto-repair on, a reservation to consume, (queued) a minimum size, or on a GKE version before 1.32.2-gke.1652000.",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "kubernetesVersion 1.32 without the GKE build (flex-start for GPUs came with 1.32.2-gke.1652000)", Reason: "risky: an earlier 1.32 build rejects the pool."},
			{Severity: diag.SeverityInfo, When: "a queued provisioning pool that no team in spec.teams may use", Reason: "a note: its nodes come only for ProvisioningRequests, which no generated LocalQueue makes."},
		},
		Summary: "A capacity: flex-start or capacity: queued pool sets what GKE's flex-start VMs do not allow.",
		Long: `Flex-start VMs (Dynamic Workload Scheduler) come when GKE finds capacity and run at most seven days. GKE's
guide creates their node pools with --flex-start, --reservation-affinity=none and --no-enable-autorepair;
queued provisioning adds --enable-queued-provisioning, autoscaling from --num-nodes=0 and location policy ANY:
such a pool has no nodes until a ProvisioningRequest asks for them, and then gets all of them at once.
cluster-toolkit's gke-node-pool module refuses the same combinations in its preconditions. gpuctl writes
flex_start, queued_provisioning, NO_RESERVATION, auto_repair false and location policy ANY for these pools; the
spec must not ask for auto-repair, a reservation, or (queued) a minimum size, and flex-start for GPUs needs
GKE 1.32.2-gke.1652000 or later. For queued pools gpuctl's Kueue
ClusterQueue runs the ProvisioningRequest admission check (queued-provisioning.gke.io) on the pool's flavor,
so workloads submitted through a team's LocalQueue get their nodes provisioned.`,
		Fix:     "Remove autoRepair and reservation from the pool; for capacity: queued set autoscaling.min: 0.",
		Sources: []string{srcGKEFlexStartConcepts, srcGKEFlexStart, srcGKEQueued, srcGKENodePoolModule}},
	{ID: RuleGKENodeImage, Title: "Machine type not supported on the pool's COS milestone", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the machine type is reported to fail on the COS milestone GKE gives this minor's nodes.",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "the milestone is newer than the machine type's known-good ones and no source covers it", Reason: "risky: the machine type is documented up to an older milestone only."},
		},
		Summary: "A GKE machine type that works only up to a Container-Optimized OS milestone, on a GKE minor whose nodes run a newer one.",
		Long: `GKE picks the Container-Optimized OS milestone by GKE minor (1.33: COS 121; 1.34 and 1.35: COS 125; 1.36:
COS 129, from GKE's release notes), so upgrading the cluster upgrades the node OS with it. Google's COS 125
release notes say Milestone 125 "has known performance and functional issues on a3-highgpu-(1|2|4|8)g machine
types" and recommend staying on Milestone 121; cluster-toolkit's A3 High tests failed while provisioning on
GKE 1.35 and were pinned to 1.33 (GoogleCloudPlatform/cluster-toolkit#5673). Such a pool passes every other
check and fails in the cloud. Ubuntu pools are not affected by this rule.`,
		Fix: "Keep the pool's nodes on a GKE minor with a supported COS milestone (a maintenance exclusion holds node upgrades), or use another machine type."},
	{ID: RuleGKEDriverOption, Title: "GKE cannot install this driver", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable, or won't come up: GKE cannot install the driver asked for, installs none and nothing else does, or rejects the option (LATEST on Ubuntu).",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "gpu.driver is unset on a node-auto-provisioned pool whose GKE version is not given", Reason: "risky: node auto-provisioning installed no driver by default before 1.32.2-gke.1297000, so the nodes may come up without a usable GPU."},
		},
		Summary: "The pool's gpu.driver is not something GKE can install on its image, or nothing installs a driver.",
		Long: `GKE installs the driver through gpu_driver_installation_config.gpu_driver_version: DEFAULT (COS and
Ubuntu), LATEST (COS only), or INSTALLATION_DISABLED. It cannot pin an exact version such as 535.129.03:
on COS the only other route is Google's installer DaemonSet, and on Ubuntu the GPU Operator's driver
container (driver.enabled: true with INSTALLATION_DISABLED).

Re-graded to error by consequence (2026-12-02), where nothing installs a driver and the GPUs are unusable:
gpu.driver unset before GKE 1.30.1-gke.1156000 (node auto-provisioning: 1.32.2-gke.1297000), where the API
default (GPU_DRIVER_VERSION_UNSPECIFIED) installs no driver, with no GPU Operator driver (was a warning; L4
nodes on 1.27 never became allocatable); and INSTALLATION_DISABLED on a node-auto-provisioned pool with no
GPU Operator driver (was a note). INSTALLATION_DISABLED on a pool of its own stays a note: Google's
installer DaemonSet, applied outside the spec, may install the driver. A driver gpuctl cannot read (an
unknown, e.g. a configuration that applies the installer DaemonSet) is never an error.`,
		Fix:     "Use DEFAULT or LATEST (COS), DEFAULT (Ubuntu), or INSTALLATION_DISABLED with an installer that honours the exact version.",
		Sources: []string{srcGKEDriverEnum, srcGKEGPUs, srcOperatorGKE}},
	{ID: RuleLabelGFDManaged, Title: "Hand-set GPU Feature Discovery label", Severity: diag.SeverityWarning,
		SeverityReason: "risky: GPU Feature Discovery overwrites the label, and it is wrong wherever the nodes differ from what was typed.",
		Summary:        "A node label that GPU Feature Discovery writes is set by hand.",
		Long: `Labels such as nvidia.com/gpu.product, nvidia.com/gpu.count, nvidia.com/gpu.memory and
nvidia.com/cuda.driver.major are written by GPU Feature Discovery from what it detects on the node. Set by
hand in the node pool, they are overwritten where GFD runs and wrong wherever the hardware differs from
what was typed (another instance type in the pool, MIG or sharing renaming the product). Schedule on them;
do not set them. Use your own key (e.g. gpu-type: a10g) for a static label.`,
		Fix:     "Remove the label and let GFD set it, or use a key outside nvidia.com/.",
		Sources: []string{srcGFDLabels}},
	{ID: RuleSharingReplicas, Title: "Sharing needs at least 2 replicas", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable: the device plugin fails to start with fewer than 2 replicas.",
		Summary:        "time-slicing or MPS is set with fewer than 2 replicas.",
		Long: `The NVIDIA device plugin requires replicas >= 2 for time-slicing and MPS (1 would be no sharing) and
fails to start on the node otherwise. GKE's time-sharing and MPS likewise need max_shared_clients_per_gpu
>= 2.`,
		Fix:     "Set gpu.sharing.replicas to 2 or more, or strategy: none.",
		Sources: []string{srcDevicePlugin}},
	{ID: RuleSharingMPSMIG, Title: "MPS cannot share MIG devices", Severity: diag.SeverityError,
		SeverityReason: "vendor-unsupported: the device plugin does not support MPS on MIG devices.",
		Summary:        "MPS was combined with a MIG profile.",
		Long: `Time-slicing and MPS are mutually exclusive, and one sharing method applies to all GPUs of a node
(the spec's single strategy field enforces both). MPS shares only full GPUs: the device plugin does not
support MPS on MIG-enabled devices. Time-slicing MIG instances is supported.`,
		Fix:     "Drop migProfile, or use time-slicing (or plain MIG) instead of MPS.",
		Sources: []string{srcDevicePlugin}},
	{ID: RuleSharingFields, Title: "Sharing fields without effect", Severity: diag.SeverityWarning,
		SeverityReason: "risky: the GPUs are not shared the way the field suggests.",
		Summary:        "replicas or migProfile is set where the strategy ignores it.",
		Long:           `replicas applies to time-slicing and MPS, migProfile to mig (and time-sliced MIG). Set elsewhere they are ignored, which usually means the strategy is not what was intended.`,
		Fix:            "Set the strategy that uses the field, or remove the field."},
	{ID: RuleMachineUnknown, Title: "Unknown machine type", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the provider rejects a machine type that does not exist (or carries no GPU).",
		Summary:        "The machine or instance type is not a GPU type the catalogue knows.",
		Long: `The catalogue lists GKE machine types with GPUs (N1 with attached GPUs and the accelerator-optimized
A2, A3, A4, A4X, G2, G4 series) and EKS GPU instance types (g4dn ... p6). A type outside it is either
misspelt, a made-up name (n1-standard-8-a100 does not exist: A100s come only with a2-* types), a type
without GPUs, or one of the other provider. The message lists the nearest known names.`,
		Fix:     "Use a known GPU machine type (`gpuctl matrix machines` lists them).",
		Sources: []string{srcGCEGPUs, srcGCEAccel, srcEC2Accel}},
	{ID: RuleMachineAccel, Title: "Machine type and GPU do not match", Severity: diag.SeverityError,
		SeverityReason: "won't come up, or GPUs not usable as specified: GKE's API rejects the accelerator, and the generated quotas and labels describe GPUs the nodes do not have.",
		Summary:        "gpu.type or gpu.count disagrees with what the machine type has.",
		Long: `GKE accelerator-optimized machine types come with a fixed GPU model and count (a2-highgpu-1g: 1
nvidia-tesla-a100; a2-ultragpu-*: nvidia-a100-80gb; a3-megagpu-8g: 8 nvidia-h100-mega-80gb;
g2-standard-24: 2 nvidia-l4), and the API rejects a guest accelerator that differs. N1 takes only attached
T4, P4, V100 or P100 (not A100, H100, L4) in the listed counts. EKS instance types fix model and count
too (g5.xlarge: 1 A10G; p4d: 8 A100 40GB; p4de: 8 A100 80GB). K80 is past end of support on Compute
Engine.`,
		Fix:     "Use the machine type that carries the GPU, or correct gpu.type/gpu.count (or leave them empty to derive them).",
		Sources: []string{srcGCEGPUs, srcGCEAccel, srcEC2Accel}},
	{ID: RuleMachineCapacity, Title: "Capacity type not offered", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the capacity type is not offered for the machine type.",
		Summary:        "The capacity type is not offered for the machine type.",
		Long:           `Some GPU types are not sold as Spot: p6e-gb200 comes only as part of a GB200 NVL72 UltraServer (capacity blocks).`,
		Fix:            "Use on-demand, a reservation or a capacity block.",
		Sources:        []string{srcEC2Accel}},
	{ID: RulePoolMixed, Title: "Instance types of one pool differ", Severity: diag.SeverityError,
		SeverityReason: "won't come up on every type: one node group cannot fit instance types of different CPU architectures, or, with EFA on, different EFA card counts.",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "the instance types carry different GPU models", Reason: "risky: the pool comes up, but jobs sized for one GPU model land on another."},
			{Severity: diag.SeverityInfo, When: "the GPU models differ but gpu.type names the family they share", Reason: "a note: the spec says any model of the family will do."},
		},
		Summary: "A pool's instance types carry different GPU models, CPU architectures or (with EFA) EFA cards.",
		Long: `A pool may list several instance types (an EKS managed node group's instanceTypes, as Karpenter
NodePools do): gpuctl judges them by their GPUs. One GPU model across the list is fine, whatever the GPUs
per node (g6.xlarge with g6.12xlarge, p5.4xlarge with p5.48xlarge); each type is judged on its own against
gpu.count. Different GPU models (p5 H100 with p5e H200, p4d A100 40GB with p4de A100 80GB, g5 with g6)
are a warning: workloads land on either, so jobs sized for 80 GB OOM on 40 GB nodes and NCCL topology and
CUDA targets differ. Where gpu.type names the family the models share ("A100"), the spec says any of them
will do, and gpuctl only notes it (info). Two things are errors because the pool cannot launch as
written: instance types of different CPU architectures (one node group has one AMI type, built for one
architecture), and, with EFA enabled, instance types with different EFA cards (the launch template's EFA
interface list fits one card count).`,
		Fix:     "Split the pool: one pool per GPU model (per architecture, per EFA card count with EFA), or set gpu.type to the shared family.",
		Sources: []string{srcEC2Accel, "https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html"}},
	{ID: RuleEKSAMIK8s, Title: "No AMI for this Kubernetes version", Severity: diag.SeverityError,
		SeverityReason: "won't come up: no AMI of the type exists for the Kubernetes version.",
		Summary:        "The EKS AMI type is not published for the cluster's Kubernetes version.",
		Long: `Amazon Linux 2 EKS AMIs (AL2_x86_64_GPU and friends) reached end of support on 2025-11-26; the final
release covered Kubernetes 1.29-1.32 and no AL2 AMIs exist for 1.33 or later. From 1.30 new managed node
groups default to AL2023. Use AL2023_x86_64_NVIDIA or BOTTLEROCKET_x86_64_NVIDIA. Outside the ranges the
matrix knows for other AMIs, gpuctl says it cannot judge.`,
		Fix:     "Use AL2023_x86_64_NVIDIA (install a device plugin) or BOTTLEROCKET_x86_64_NVIDIA.",
		Sources: []string{srcEKSAL2, "https://awslabs.github.io/amazon-eks-ami/"}},
	{ID: RuleEKSAMIArch, Title: "AMI architecture does not match the instance", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the instance does not boot an AMI of the other architecture.",
		Summary:        "An x86_64 AMI on an arm64 instance type, or the other way round.",
		Long:           `g5g (Graviton + T4G), p6e-gb200 and GB300 instances are arm64; they need the *_ARM_64_* AMI types. Other GPU instance types are x86_64.`,
		Fix:            "Use the AMI type of the instance's architecture.",
		Sources:        []string{srcEKSAMIs, srcEC2Accel}},
	{ID: RuleEKSAMIEOL, Title: "AMI type past end of support", Severity: diag.SeverityWarning,
		SeverityReason: "past support: the AMI type gets no more security patches, drivers or Kubernetes versions.",
		Summary:        "The EKS AMI type no longer receives updates.",
		Long:           `Amazon Linux 2 EKS AMIs reached end of support on 2025-11-26 (final release v20251209): no security patches, drivers or Kubernetes versions after that.`,
		Fix:            "Migrate to AL2023_x86_64_NVIDIA or Bottlerocket NVIDIA.",
		Sources:        []string{srcEKSAL2}},
	{ID: RuleEKSAMIGPU, Title: "AMI cannot run NVIDIA GPUs", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable: the AMI type has no NVIDIA support.",
		Summary:        "The AMI type has no NVIDIA support (Windows, Neuron).",
		Long:           `Windows and Neuron AMI types do not support NVIDIA GPUs in EKS managed node groups. Standard AL2023/Bottlerocket AMIs have no driver: they need the GPU Operator's driver (see DRIVER-OWNER).`,
		Fix:            "Use an NVIDIA AMI type (AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64_NVIDIA) or a standard AMI with the GPU Operator's driver.",
		Sources:        []string{srcEKSAMIs, srcEKSNodegroup}},
	{ID: RuleEKSReleaseK8s, Title: "AMI release of another Kubernetes version", Severity: diag.SeverityError,
		SeverityReason: "won't come up: EKS refuses a managed node group release of another Kubernetes version.",
		Summary:        "releaseVersion is a release for another Kubernetes minor than kubernetesVersion, or a Bottlerocket release without a variant for it.",
		Long: `An AL2023 or AL2 release version starts with the Kubernetes version it is built for
(1.34.2-20251209 is the v20251209 release for Kubernetes 1.34). A managed node group's releaseVersion must be
a release of the node group's Kubernetes version: EKS's CreateNodegroup and UpdateNodegroupVersion take the
version and the AMI release version together, and the AMI of another minor carries another kubelet. A
Bottlerocket release (<OS version>-<commit>) is built as one variant per Kubernetes minor
(aws-k8s-1.34-nvidia); gpuctl checks that the release has the variant of the cluster's minor, from
data/amis.yaml.`,
		Fix:     "Use a release of the cluster's Kubernetes version (gpuctl matrix amis --kubernetes 1.34), or leave releaseVersion out for the newest.",
		Sources: []string{srcEKSUpdateNodegroup, srcEKSNodegroup, srcEKSAMIReleases}},
	{ID: RuleEKSReleaseUnknown, Title: "AMI release the matrix does not know", Severity: diag.SeverityError,
		SeverityReason: "won't come up: a release inside the table's range that the release notes do not list does not exist, nor does one dated after the date checked at.",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "the release is newer than the table's newest (and not dated after the date checked at)", Reason: "risky: the matrix is older than the release, so its driver and Kubernetes version cannot be judged."},
			{Severity: diag.SeverityInfo, When: "the release is older than the table, a tag without release notes, or a Bottlerocket patch the table has no page for", Reason: "a note: it may exist."},
		},
		Summary: "releaseVersion names an AMI release that data/amis.yaml does not list.",
		Long: `data/amis.yaml lists the releases of the NVIDIA AMI types: AL2023_x86_64_NVIDIA and AL2023_ARM_64_NVIDIA
from v20250620 to v20260714, AL2_x86_64_GPU to its final release v20251209 (from awslabs/amazon-eks-ami's
release notes), and Bottlerocket 1.40.0 to 1.57.0 (from bottlerocket.dev's GPU driver pages). A release
whose date lies inside that range and that the notes do not list (a made-up date, a wrong Kubernetes patch,
a release the notes mark abandoned) is an error; the finding names the releases of that date. A release newer
than the table is a warning naming the table and its date: the matrix is older. A date with a tag but no
release notes, or a Bottlerocket patch release the website has no page for, is a note.`,
		Fix:     "Copy the release version from the AMI's release notes (gpuctl matrix amis lists those the matrix knows).",
		Sources: []string{srcEKSAMIReleases, srcBottlerocketGPU}},
	{ID: RuleEKSReleaseDriver, Title: "Pinned driver differs from the AMI release's", Severity: diag.SeverityError,
		SeverityReason: "won't come up as asked: the AMI release decides the driver, and it is not the pinned one.",
		Summary:        "gpu.driver pins a driver the pool's AMI release does not ship.",
		Long: `The EKS NVIDIA AMIs ship the NVIDIA driver: the release (releaseVersion) decides which. A gpu.driver that
differs from the release's driver (data/amis.yaml) is not what the nodes run. The finding names the newest
releases that ship the pinned driver.`,
		Fix:     "Pin a release that ships the driver, or set gpu.driver to the release's.",
		Sources: []string{srcEKSAMIReleases, srcBottlerocketGPU}},
	{ID: RuleEKSReleasePin, Title: "Pinned driver without a pinned AMI release", Severity: diag.SeverityError,
		SeverityReason: "won't come up as asked: without releaseVersion EKS takes the newest AMI release, whose driver may not be the pinned one; gpuctl generate refuses it.",
		Summary:        "gpu.driver pins a version on an AMI type that ships its own driver, and releaseVersion is not set.",
		Long: `On an AMI type that ships the driver (AL2023 NVIDIA, AL2 GPU, Bottlerocket NVIDIA) the AMI release decides
the driver. A pinned gpu.driver needs releaseVersion set to a release that ships it; the finding names the
newest three releases of the AMI type that do (for the cluster's Kubernetes version), or says none the matrix
knows does.`,
		Fix:     "Set releaseVersion to a release that ships the driver, or leave gpu.driver out.",
		Sources: []string{srcEKSNodegroup, srcEKSAMIReleases}},
	{ID: RuleEKSSingleAZ, Title: "Placement group or Capacity Block pool over several zones", Severity: diag.SeverityError,
		SeverityReason: "won't come up as asked: a cluster placement group and a Capacity Block live in one availability zone, and nodes launched in another zone fail or land outside them.",
		Summary:        "An EKS pool with a placement group or a Capacity Block names more than one zone.",
		Long: `A cluster placement group packs instances into one availability zone, and a Capacity Block is reserved in one zone.
gpuctl gives each EKS node group the subnets of its zones (subnet_ids_by_zone): a pool with either must name at most one
zone, so its node group gets that zone's subnets only; without zones the generated <pool>_zones variable has no
default and takes exactly one.`,
		Fix:     "Set zones to the one availability zone of the placement group or Capacity Block.",
		Sources: []string{"https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-strategies.html", "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-using.html"}},
	{ID: RuleEKSCapacityBlock, Title: "Capacity Block pool with several instance types", Severity: diag.SeverityError,
		SeverityReason: "won't come up: EKS takes a Capacity Block node group's instance type from its launch template, which holds one, and rejects the create request otherwise.",
		Summary:        "An EKS pool on a Capacity Block lists more than one instance type.",
		Long: `A Capacity Block for ML reserves instances of one type in one zone. EKS managed node groups on a Capacity Block
(capacityType CAPACITY_BLOCK) need the instance type in the launch template and none on the node group; gpuctl writes
the launch template's instance_type and no instance_types, as terraform-aws-modules/eks does. A pool with several
instanceTypes cannot be written that way.`,
		Fix:     "Set machineType to the Capacity Block's instance type and remove instanceTypes.",
		Sources: []string{srcEKSCapacityBlocks}},
	{ID: RuleEFAPlacement, Title: "EFA training pool without a placement group", Severity: diag.SeverityWarning,
		SeverityReason: "risky: the pool works, but its instances may land far apart in the zone, with higher latency between them for NCCL.",
		Also: []SeverityCase{
			{Severity: diag.SeverityInfo, When: "placementGroup cluster on a Capacity Block", Reason: "a note: gpuctl creates no group there, since EC2 places the block's instances together itself."},
		},
		Summary: "An EKS training pool on EFA ends up in no placement group.",
		Long: `A cluster placement group packs instances close together in one zone, for the low latency that NCCL over EFA
wants between nodes. gpuctl creates one for an EFA training pool (role training, efa.enabled) whose placementGroup
is unset, when the pool has at most one zone; placementGroup names an existing group, "cluster" asks for one, and
"none" for none. A pool in several zones, or with "none", gets no group: this warning says so. Capacity Blocks get
no group gpuctl creates (EC2 places a block's instances close together in an UltraCluster), and "cluster" there is
a note.`,
		Fix:     "Name one zone (gpuctl creates a cluster placement group), name an existing group, or keep placementGroup: none.",
		Sources: []string{srcEC2Placement, srcEC2CapacityBlocks}},
	{ID: RuleEFAVPCCNI, Title: "VPC CNI too old for efa-only interfaces", Severity: diag.SeverityError,
		SeverityReason: "won't come up as asked: a VPC CNI older than the first release that knows efa-only interfaces does not handle the nodes' efa-only cards.",
		Also: []SeverityCase{
			{Severity: diag.SeverityInfo, When: "EKS pools use efa-only interfaces and addons.vpcCni.version is not set", Reason: "a note: the version cannot be checked."},
		},
		Summary: "addons.vpcCni.version is older than the VPC CNI that efa-only interfaces need.",
		Long: `EFA pools get an EFA interface with ENA on network card 0 and efa-only interfaces on the other cards
(efa.efaOnly, true when unset), which take no IP address of the subnet. They need the Amazon VPC CNI at 1.18.4 or
later (the matrix's vpc_cni table). When addons.vpcCni.version states the cluster's version (the EKS add-on's
"v1.19.2-eksbuild.1" form is read too) and an EKS pool uses efa-only interfaces, an older version is an error.`,
		Fix: "Upgrade the VPC CNI add-on, or set efa.efaOnly: false on the EFA pools."},
	{ID: RuleDiskSize, Title: "Training pool without a boot disk size", Severity: diag.SeverityWarning,
		SeverityReason: "risky: the pool comes up, but on the platform's default boot disk, which training images and their pulls soon fill.",
		Summary:        "A GPU training pool does not set diskSizeGB.",
		Long: `Without diskSizeGB the nodes get the platform's default boot disk: on EKS the AMI's root volume (EKS's own launch
template makes it 20 GiB), on GKE 100 GB. Training images (CUDA, NCCL, the framework) are tens of GB, and the
container runtime keeps the layers of the images it pulls on that disk: nodes run out of disk and evict pods. One
rule for both providers; node pools that GKE's auto-provisioning creates are not judged.`,
		Fix:     "Set diskSizeGB (e.g. 500 for training images and their scratch data).",
		Sources: []string{srcEKSDiskSize, srcGKEDiskSize}},
	{ID: RuleLocalStorage, Title: "localStorage raid0 with no local NVMe to RAID", Severity: diag.SeverityWarning,
		SeverityReason: "risky: the pool comes up, but without the RAID-0 array it asks for: images and emptyDirs stay on the root volume.",
		Also: []SeverityCase{
			{Severity: diag.SeverityInfo, When: "a GKE machine type that takes Local SSDs only when asked", Reason: "a note: gpuctl does not know how many Local SSDs to attach, and writes a comment in their place."},
		},
		Summary: "localStorage raid0 on a pool whose machine type has no local NVMe SSDs of its own.",
		Long: `localStorage raid0 makes the node's local NVMe SSDs one RAID-0 array for the kubelet and the container
runtime (GKE ephemeral_storage_local_ssd_config, EKS nodeadm's or Karpenter's RAID0 of the instance store). Unset, it
is on for a training pool whose machine comes with them (the matrix's localssd table: GKE A2 Ultra, A3, A4, A4X; the
EC2 instance types with NVMe instance store). On an EKS pool with an instance type that has EBS only (g5g, p3) there is
nothing to RAID: gpuctl writes no RAID0 and this warning names the types. On a GKE machine type that takes Local SSDs
only when the pool attaches a number of them (N1, A2 Standard, G2, G4), gpuctl writes a comment instead of a count:
a note.`,
		Fix:     "Remove localStorage (or set none), or pick an instance type with NVMe instance store.",
		Sources: []string{srcEC2InstanceStore, srcGKELocalSSD}},
	{ID: RuleEKSAutoscaler, Title: "EKS pool that nothing scales", Severity: diag.SeverityWarning,
		SeverityReason: "risky: the pool comes up, but stays at autoscaling.min nodes (0: no GPU node at all) whatever the pending pods ask for.",
		Also: []SeverityCase{
			{Severity: diag.SeverityInfo, When: "addons.autoscaler is none", Reason: "a note: the spec says nothing scales the pool, which stays at autoscaling.min."},
		},
		Summary: "An EKS pool can scale (autoscaling.min 0, or max above min) and spec.addons.autoscaler names no autoscaler.",
		Long: `An EKS managed node group keeps the desired size it is given; the node group's min and max are bounds
for something else to scale within. gpuctl writes desired_size = autoscaling.min and leaves later changes
to the autoscaler (ignore_changes), so without one a pool with min 0 never gets a node. EKS documents two
autoscalers: Karpenter (addons.autoscaler: karpenter; gpuctl generate karpenter writes a NodePool and an
EC2NodeClass per pool and the Terraform no node group for it) and the Kubernetes Cluster Autoscaler
(addons.autoscaler: cluster-autoscaler; the node groups carry its auto-discovery tags and, for scaling from
zero, the node-template tags of their labels, taints and nvidia.com/gpu). addons.autoscaler: none says
that the pools are meant to stay at their size (a note).`,
		Fix:     "Set spec.addons.autoscaler: karpenter or cluster-autoscaler (and install it), or none when the pools are sized by hand.",
		Sources: []string{srcEKSAutoscaling, srcKarpenterNodePools, srcCAAWS}},
	{ID: RuleEKSK8sSupport, Title: "EKS Kubernetes version out of standard support", Severity: diag.SeverityWarning,
		SeverityReason: "past support: extended support costs extra, and after it AWS upgrades the control plane itself.",
		Summary:        "The EKS version is in (paid) extended support or past it.",
		Long: `EKS versions get 14 months of standard support, then 12 months of extended support at extra cost;
after that AWS upgrades the control plane automatically. Node AMIs and add-ons follow.`,
		Fix:     "Plan the upgrade to a version in standard support.",
		Sources: []string{srcEKSVersions}},
	{ID: RuleGKEK8sSupport, Title: "GKE version out of standard support", Severity: diag.SeverityWarning,
		SeverityReason: "past support: the cluster works today, but GKE upgrades it on its own schedule (or the matrix is older than the cluster).",
		Also: []SeverityCase{
			{Severity: diag.SeverityInfo, When: "the minor is past standard support but in extended support on the Extended channel", Reason: "a note: the user chose paid extended support for this minor."},
		},
		Summary: "The GKE minor version is past standard support, past extended support, or newer than the matrix.",
		Long: `GKE supports a minor version for about 14 months after it reaches the Regular channel (standard
support); from 1.27 on the Extended channel adds paid extended support, up to 24 months after Regular
availability. Past the end of standard support GKE upgrades the control plane and the nodes of clusters not on
the Extended channel automatically, whatever node auto-upgrade says; past extended support it upgrades those
too. The cluster still works today, so these are warnings. A minor newer than the matrix's copy of GKE's release
schedule is also a warning: the matrix is older than the cluster, and GKE's driver for it cannot be judged.
Versions may be written "1.33", "v1.33.5" or "1.33.5-gke.1080000"; they compare numerically.`,
		Fix:     "Upgrade the cluster to a GKE version in standard support, or enroll it in the Extended channel.",
		Sources: []string{"https://cloud.google.com/kubernetes-engine/docs/release-schedule", "https://cloud.google.com/kubernetes-engine/versioning"}},
	{ID: RulePluginConflict, Title: "Two device plugins advertise nvidia.com/gpu", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable: two device plugins race to register nvidia.com/gpu (on GKE, NVIDIA documents its plugin only with INSTALLATION_DISABLED).",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "whether NVIDIA's chart runs on the pool depends on nodeSelector labels the spec cannot know", Reason: "risky: the two plugins may race, but the spec cannot tell."},
		},
		Summary: "More than one NVIDIA device plugin runs on the pool's nodes.",
		Long: `Exactly one component may advertise nvidia.com/gpu on a node. GKE runs its own device plugin
DaemonSet on GPU nodes with GKE-managed drivers; Bottlerocket NVIDIA AMIs have one built in; the GPU
Operator deploys one unless devicePlugin.enabled is false (when some pools name gpu-operator as their
provider, gpuctl labels the other pools' nodes out of it: nvidia.com/gpu.deploy.operands=false, or
nvidia.com/gpu.deploy.device-plugin=false under the Helm chart); the Helm chart deploys another. On GKE
the platform's own plugin counts: a GKE pool needs no devicePlugin setting. Two plugins
race to register the resource, double-count or flap allocatable GPUs, and ignore each other's sharing
config (so time-slicing set on one does nothing). On GKE, NVIDIA's plugin needs the pool label
gke-no-default-nvidia-gpu-device-plugin=true AND gpu-driver-version INSTALLATION_DISABLED.`,
		Fix:     "Keep one plugin: GKE's (gke-managed) or NVIDIA's with the label and INSTALLATION_DISABLED; on Bottlerocket the built-in one; GPU Operator devicePlugin.enabled: false when another plugin owns the node.",
		Sources: []string{srcOperatorGKE, srcEKSPlugin, "https://docs.nvidia.com/aicr/integrator-guide/gke-gpu-setup"}},
	{ID: RulePluginMissing, Title: "No device plugin", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable: nothing advertises nvidia.com/gpu, so no pod can request them.",
		Summary:        "Nothing advertises nvidia.com/gpu on the pool's nodes.",
		Long: `Without a device plugin pods cannot request nvidia.com/gpu and the GPUs sit idle. EKS AL2023 NVIDIA
(and AL2 GPU) AMIs ship the driver and container toolkit but not the device plugin: install NVIDIA's
chart or the GPU Operator (driver.enabled: false). GKE runs its own device plugin on GPU nodes, so the
rule does not fire there unless gke-no-default-nvidia-gpu-device-plugin=true turns GKE's plugin off and
nothing else runs.`,
		Fix:     "Set devicePlugin.provider to helm or gpu-operator (EKS AL2023), bottlerocket, or gke-managed.",
		Sources: []string{srcEKSPlugin, srcOperatorGKE}},
	{ID: RulePluginProvider, Title: "Device plugin provider does not fit the platform", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable: the named device plugin does not exist where the pool runs.",
		Summary:        "The device plugin provider is not available where the pool runs.",
		Long: `gke-managed exists only on GKE, bottlerocket only on Bottlerocket NVIDIA AMIs, and gpu-operator needs
addons.gpuOperator.enabled: true.`,
		Fix: "Choose the provider that exists on the pool's platform."},
	{ID: RulePluginVersion, Title: "Device plugin version lacks a feature", Severity: diag.SeverityWarning,
		SeverityReason: "risky: the plugin runs and advertises whole GPUs, but ignores the sharing the pool asks for.",
		Summary:        "The NVIDIA device plugin version does not support what the pool asks of it.",
		Long:           `MPS sharing arrived in k8s-device-plugin v0.15.0; older versions ignore the MPS config and advertise whole GPUs (a warning: the pool works, unshared). Versions the matrix does not know are noted, not judged.`,
		Fix:            "Use device plugin v0.15.0 or later (v0.20.0 as of 2026-08).",
		Sources:        []string{srcDevicePluginCL}},
	{ID: RuleOperatorCOS, Title: "GPU Operator cannot install drivers on COS", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable, vendor-unsupported: the GPU Operator cannot install drivers on COS.",
		Summary:        "The GPU Operator's driver container is enabled on a COS pool.",
		Long: `On GKE's Container-Optimized OS the GPU Operator cannot build or load the driver. Use the Google driver
(gpu_driver_version DEFAULT/LATEST, or INSTALLATION_DISABLED with Google's installer DaemonSet) and run
the Operator with driver.enabled: false, hostPaths.driverInstallDir and toolkit.installDir set to
/home/kubernetes/bin/nvidia; or move the pool to UBUNTU_CONTAINERD.`,
		Fix:     "Set addons.gpuOperator.driver.enabled: false, or use UBUNTU_CONTAINERD.",
		Sources: []string{srcOperatorGKE, "https://docs.nvidia.com/aicr/integrator-guide/gke-gpu-setup"}},
	{ID: RuleOperatorAL2, Title: "GPU Operator on Amazon Linux 2", Severity: diag.SeverityError,
		SeverityReason: "GPUs unusable and vendor-unsupported: the Operator's validator cannot run on AL2's glibc, so the node never passes validation.",
		Summary:        "The GPU Operator's operands run on Amazon Linux 2 nodes, which the Operator does not support.",
		Long: `The GPU Operator's validator and container toolkit run binaries against the host's glibc and need
glibc 2.27 or later; Amazon Linux 2 has 2.26, so the validator pods fail with "GLIBC_2.27 not found" and the
node's GPUs never pass validation, whatever driver.enabled says. AWS's answer is not to run the Operator on
AL2: the AL2 GPU AMI ships the driver and container toolkit, and only NVIDIA's device plugin is needed.`,
		Fix:     "Use NVIDIA's device plugin chart on AL2 GPU pools (devicePlugin.provider: helm) and no GPU Operator there, or move the pools to AL2023_x86_64_NVIDIA.",
		Sources: []string{"https://github.com/awslabs/amazon-eks-ami/issues/1892", "https://github.com/NVIDIA/gpu-operator/issues/755"}},
	{ID: RuleOperatorToolkit, Title: "GPU Operator installs a second container toolkit", Severity: diag.SeverityError,
		SeverityReason: "vendor-unsupported, two installers: NVIDIA does not support the Operator's operands on Amazon Linux or Bottlerocket, and its toolkit rewrites the runtime configuration the AMI's toolkit owns.",
		Summary:        "The GPU Operator's container toolkit runs on an image that already ships the NVIDIA Container Toolkit.",
		Long: `EKS NVIDIA AMIs (AL2023 NVIDIA, AL2 GPU, Bottlerocket NVIDIA) install the NVIDIA Container Toolkit and
configure containerd for it. The GPU Operator's toolkit is on by default (toolkit.enabled is true in every
chart release) and rewrites the runtime configuration; NVIDIA's chart options say to set it false where the
runtime is pre-installed.

Decision (2026-12-02): an error, no longer a warning (two installers fight over one runtime configuration,
on an OS the vendor does not support). NVIDIA publishes no Amazon Linux driver container
(https://github.com/NVIDIA/gpu-operator/issues/686) and closed AL2023 support as not on its roadmap
(https://github.com/NVIDIA/gpu-operator/issues/1492, 2026-09-11); AWS's accelerated AMI page lists the
driver and toolkit as part of the AMI (https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html);
users on AL2023 with the Operator's driver and toolkit on failed, and it was fixed with driver.enabled=false
and toolkit.enabled=false (https://github.com/aws-samples/comfyui-on-eks/issues/26). When the Operator is
unknown (a module gpuctl does not read), nothing is graded.`,
		Fix:     "Set addons.gpuOperator.toolkit.enabled: false (and driver.enabled: false) on images that ship the toolkit.",
		Sources: []string{"https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html#common-chart-customization-options", srcEKSAMIs, srcOperatorNoAmazonLinux, srcOperatorNoAL2023, srcOperatorAL2023Fail}},
	{ID: RuleOperatorK8s, Title: "GPU Operator not validated on this Kubernetes version", Severity: diag.SeverityError,
		SeverityReason: "vendor-unsupported: the cluster is older than the release's validated Kubernetes minimum.",
		Also: []SeverityCase{
			{Severity: diag.SeverityWarning, When: "the cluster is newer than the release's validated range", Reason: "risky: NVIDIA has not validated the release on it yet."},
		},
		Summary: "The Kubernetes version is outside the GPU Operator release's validated range.",
		Long: `Each GPU Operator release is validated on a Kubernetes range, and on EKS/GKE on a CSP range (v26.7.0:
1.33-1.36; v26.3.x: 1.32-1.35/1.36; v25.10.0: 1.30-1.34). A cluster older than the range is not
supported (an error); one newer than the range is not validated yet (a warning: the Operator may work,
but CRD and API changes have broken older releases on newer clusters).`,
		Fix:     "Use a GPU Operator release validated for the cluster's version.",
		Sources: []string{srcOperatorPlat}},
	{ID: RuleOperatorGKEKit, Title: "GKE 1.33+ needs RUNTIME_CONFIG_SOURCE=file", Severity: diag.SeverityError,
		SeverityReason: "won't come up: NVIDIA's known issue, the toolkit breaks containerd's config on GKE 1.33+ without the workaround.",
		Summary:        "The GPU Operator's toolkit misconfigures containerd on GKE 1.33+ without a workaround.",
		Long: `Known issue: on GKE 1.33 and later the NVIDIA Container Toolkit deployed by the GPU Operator writes a
broken containerd config.toml unless the toolkit container gets the environment variable
RUNTIME_CONFIG_SOURCE=file. A broken containerd config stops the node's containers: an error.`,
		Fix:     "Set addons.gpuOperator.toolkit.env.RUNTIME_CONFIG_SOURCE: file.",
		Sources: []string{srcOperatorNotes, srcGKEOperator}},
	{ID: RuleOperatorGKEVer, Title: "GPU Operator too old for GKE", Severity: diag.SeverityError,
		SeverityReason: "vendor-unsupported: Google supports the GPU Operator on GKE from v24.6.0.",
		Summary:        "GPU Operator releases before v24.6.0 are not supported on GKE.",
		Long:           `Google supports the GPU Operator on GKE from v24.6.0; older releases are unsupported there (an error).`,
		Fix:            "Use GPU Operator v24.6.0 or later.",
		Sources:        []string{srcGKEOperator}},
	{ID: RuleOperatorEOL, Title: "GPU Operator release out of support", Severity: diag.SeverityWarning,
		SeverityReason: "deprecated or past support: the release line gets critical fixes only, or none.",
		Summary:        "The GPU Operator release line is deprecated or past end of support.",
		Long: `GPU Operator versions are YY.MM.PP. A new major deprecates the previous one (critical fixes only) and
ends support for older ones; upgrades are supported within a major or to the next one. As of 2026-08:
26.6/26.7 supported, 26.3 deprecated, 25.10 and older out of support. Deprecated and out of support are
both warnings.`,
		Fix:     "Upgrade the GPU Operator (one major at a time).",
		Sources: []string{srcOperatorLife}},
	{ID: RuleOperatorDriver, Title: "Driver not in the GPU Operator's component matrix", Severity: diag.SeverityWarning,
		SeverityReason: "risky: the release was not validated with the driver, which may have no driver container image.",
		Summary:        "The GPU Operator installs a driver version its release does not list.",
		Long:           `Each GPU Operator release lists the driver versions it was validated with (v26.7.0: 610.57.04, 595.91.07, 580.173.02, 535.309.01). Other versions may lack a driver container image or precompiled modules.`,
		Fix:            "Use a driver version the release lists.",
		Sources:        []string{"https://github.com/NVIDIA/cloud-native-docs/blob/main/gpu-operator/life-cycle-policy.rst"}},
	{ID: RuleNCCLIBDisable, Title: "NCCL_IB_DISABLE=1 turns off RDMA", Severity: diag.SeverityWarning,
		SeverityReason: "risky: on a RoCE machine NCCL falls back to TCP sockets; slow, but it runs.",
		Also: []SeverityCase{
			{Severity: diag.SeverityInfo, When: "the machine has no IB verbs NIC (EFA, TCPX/TCPXO, or none)", Reason: "a note: the setting does nothing there."},
		},
		Summary: "NCCL_IB_DISABLE=1 disables the IB verbs transport that RoCE also uses.",
		Long: `RoCE is carried by NCCL's IB verbs transport, so NCCL_IB_DISABLE=1 disables RoCE as well as
InfiniBand and NCCL falls back to TCP sockets: on GCP A3 Ultra, A4 and A4X (GPUDirect RDMA over RoCE) that
throws away the RDMA network (a warning: jobs run, over TCP). It does not "select RoCE". On AWS EFA and GCP
TCPX/TCPXO, which do not use IB verbs, and on machines without an RDMA NIC it does nothing (a note).`,
		Fix:     "Remove NCCL_IB_DISABLE; use NCCL_IB_HCA ('=mlx5_0,...') to pick NICs.",
		Sources: []string{srcNCCLEnv + "#nccl-ib-disable", srcGIB}},
	{ID: RuleNCCLNetSocket, Title: "NCCL_NET=Socket forces TCP", Severity: diag.SeverityWarning,
		SeverityReason: "risky: NCCL bypasses the machine's GPU network for TCP sockets; slow, but it runs.",
		Also: []SeverityCase{
			{Severity: diag.SeverityInfo, When: "the machine type has no GPU network", Reason: "a note: it changes nothing there today."},
		},
		Summary: "NCCL_NET=Socket forces the TCP socket transport.",
		Long: `NCCL_NET selects the network module by name; Socket forces TCP sockets and bypasses IB/RoCE and every
net plugin (aws-ofi-nccl for EFA, GPUDirect-TCPX/TCPXO, gIB). On a machine with a GPU network jobs run
over TCP (a warning); elsewhere it changes nothing today, and silently disables RDMA when the pool moves
to an RDMA-capable type (a note).`,
		Fix:     "Remove NCCL_NET and let NCCL pick, or name the fabric's plugin.",
		Sources: []string{srcNCCLEnv + "#nccl-net"}},
	{ID: RuleNCCLPrefix, Title: "NCCL interface filter matches by prefix", Severity: diag.SeverityWarning,
		SeverityReason: "risky: the filter silently selects NICs it was not meant to.",
		Summary:        "NCCL_SOCKET_IFNAME / NCCL_IB_HCA entries are prefixes unless written with '='.",
		Long: `NCCL reads NCCL_SOCKET_IFNAME and NCCL_IB_HCA as comma-separated name PREFIXES: 'eth1' also selects
eth10 and eth11, 'mlx5_1' also mlx5_10 ... mlx5_19. On 8- and 16-NIC machines that silently adds NICs on
the wrong NUMA node or network. Prefix the list with '=' for exact names ('=eth0', '=mlx5_0,mlx5_1');
entries without a trailing digit ('eth', 'enp') are deliberate prefixes and pass.`,
		Fix:     "Write '=NAME' for exact matches.",
		Sources: []string{srcNCCLEnv + "#nccl-socket-ifname", srcNCCLEnv + "#nccl-ib-hca"}},
	{ID: RuleNCCLEFAPlugin, Title: "EFA needs aws-ofi-nccl and FI_PROVIDER=efa", Severity: diag.SeverityWarning,
		SeverityReason: "risky: with another NCCL plugin or libfabric provider named, NCCL runs over TCP instead of EFA.",
		Also: []SeverityCase{
			{Severity: diag.SeverityError, When: "NCCL_NET=gIB on EKS", Reason: "GPUs not usable for NCCL: a forced network that does not exist stops NCCL's initialisation."},
			{Severity: diag.SeverityInfo, When: "nccl.plugin or FI_PROVIDER is unset with EFA on", Reason: "a note: the spec does not say which images run (the usual EFA training images carry aws-ofi-nccl), or the plugin picks the provider."},
		},
		Summary: "EFA is requested but NCCL cannot use it.",
		Long: `NCCL uses EFA only through the aws-ofi-nccl net plugin with libfabric's EFA provider (FI_PROVIDER=efa).
Without the plugin NCCL falls back to TCP over the ENA interface — a fraction of the 400-3200 Gbps the
instance has. The usual EFA training images (AWS Deep Learning Containers, NGC with the EFA installer)
ship the plugin, so a spec that does not name it may only not say so: a note. Another plugin named with EFA
on is a warning, and so is a FI_PROVIDER other than efa, which selects another libfabric provider; an unset
one leaves the choice to the plugin (a note).
NCCL_NET=gIB forces GCP's plugin, which does not exist on EKS: NCCL fails to initialise (an error).`,
		Fix:     "Set nccl.plugin: aws-ofi-nccl (images with the plugin) and nccl.env.FI_PROVIDER: efa.",
		Sources: []string{srcEFANCCL, srcAWSOFINCCL}},
	{ID: RuleNCCLGCPTransport, Title: "Wrong GPU network plugin for the GCP machine", Severity: diag.SeverityWarning,
		SeverityReason: "risky: with the wrong plugin, or none, NCCL runs over the primary NIC with TCP; slow, but it runs.",
		Also: []SeverityCase{
			{Severity: diag.SeverityError, When: "NCCL_NET forces a network the machine does not have (AWS's EFA plugin on GKE, gIB off the RDMA machine types)", Reason: "GPUs not usable for NCCL: a forced network that does not exist stops NCCL's initialisation."},
		},
		Summary: "The NCCL plugin does not match the machine's GPU network.",
		Long: `GCP's GPU networks need their own NCCL plugins: A3 High and A3 Edge use GPUDirect-TCPX (tcpx plugin +
RxDM sidecar), A3 Mega GPUDirect-TCPXO (tcpxo, FasTrak), A3 Ultra, A4 and A4X GPUDirect RDMA over RoCE (gIB).
A plugin that cannot drive the machine's network fails its initialisation and NCCL falls back to its
own transports (TCP over the primary NIC), as it does for a training pool without one: a warning. An
NCCL_NET that forces a network the machine does not have stops NCCL's initialisation: an error.`,
		Fix:     "Use nccl.plugin tcpx (a3-highgpu-8g, a3-edgegpu-8g), tcpxo (a3-megagpu-8g) or gib (a3-ultragpu-8g, a4, a4x).",
		Sources: []string{srcTCPX, srcTCPXO, srcGIB}},
	{ID: RuleNCCLP2PDisable, Title: "NCCL_P2P_DISABLE=1 disables NVLink", Severity: diag.SeverityWarning,
		SeverityReason: "risky: intra-node all-reduce bandwidth collapses; it runs.",
		Summary:        "NCCL_P2P_DISABLE=1 removes the intra-node NVLink/PCIe P2P path.",
		Long:           `NCCL_P2P_DISABLE=1 turns off the P2P transport between GPUs of a node; on NVLink/NVSwitch machines all-reduce bandwidth collapses (an 8x H100 SXM node drops from hundreds of GB/s to host-memory speeds). It is a debugging switch.`,
		Fix:            "Remove NCCL_P2P_DISABLE.",
		Sources:        []string{srcNCCLEnv + "#nccl-p2p-disable"}},
	{ID: RuleNCCLDebug, Title: "NCCL debugging variable kept", Severity: diag.SeverityInfo,
		SeverityReason: "a note: a debugging setting that slows start-up and floods logs.",
		Summary:        "NCCL_DEBUG=INFO/TRACE is set for the pool's workloads.",
		Long:           `NCCL documents its debugging variables as not for production: verbose logging slows start-up and floods logs. Use them while diagnosing, then remove them.`,
		Fix:            "Remove NCCL_DEBUG or set it to WARN.",
		Sources:        []string{srcNCCLEnv}},
	{ID: RuleNCCLUnknownEnv, Title: "Unknown NCCL variable", Severity: diag.SeverityWarning,
		SeverityReason: "risky: NCCL silently ignores a misspelt variable.",
		Also: []SeverityCase{
			{Severity: diag.SeverityInfo, When: "the name is close to no NCCL variable", Reason: "a note: gpuctl does not know the variable."},
		},
		Summary: "An NCCL_* variable that NCCL does not read.",
		Long: `NCCL ignores variables it does not know, so a misspelt one silently does nothing: NCCL_NET_IFNAME is
not an NCCL variable (NCCL_SOCKET_IFNAME is). Known misspellings are warnings; other unknown names are
notes (plugins read NCCL_OFI_*, NCCL_GPUDIRECTTCPX_*, NCCL_FASTRAK_* ..., which pass).`,
		Fix:     "Use the variable NCCL documents (the message suggests one).",
		Sources: []string{srcNCCLEnv}},
	{ID: RuleEFAUnsupported, Title: "EFA not available", Severity: diag.SeverityError,
		SeverityReason: "won't come up: the instance does not launch with EFA interfaces.",
		Summary:        "EFA is enabled on an instance type without EFA support.",
		Long:           `Only some instance types support EFA (g4dn.8xlarge+, g5.8xlarge+, p4d, p5, p6 ...). Requesting EFA interfaces on others fails at launch.`,
		Fix:            "Disable efa or use an EFA-capable instance type.",
		Sources:        []string{srcEC2Accel}},
	{ID: RuleEFAInterfaces, Title: "EFA interfaces do not match network cards", Severity: diag.SeverityWarning,
		SeverityReason: "risky: part of the instance's EFA bandwidth stays unused.",
		Also: []SeverityCase{
			{Severity: diag.SeverityError, When: "more interfaces than the instance has network cards", Reason: "won't come up: the instance does not launch."},
		},
		Summary: "The pool requests fewer (or more) EFA interfaces than the instance has network cards.",
		Long: `EFA bandwidth scales with interfaces: one per network card. p5.48xlarge and p5e have 32 cards, p5en 16,
p6-b200 8, p4d/p4de 4. Requesting 16 on a p5.48xlarge leaves half of its 3200 Gbps unused (warning); more
than the cards is an error. interfaces: 0 means one per card.`,
		Fix:     "Set efa.interfaces to the instance's network-card count, or 0.",
		Sources: []string{srcEC2Accel, "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html"}},
	{ID: RuleEFADisabled, Title: "Multi-node training without EFA", Severity: diag.SeverityWarning,
		SeverityReason: "risky: NCCL between nodes runs over TCP on ENA, a fraction of the EFA bandwidth.",
		Summary:        "A training pool on an EFA-capable instance type does not enable EFA.",
		Long:           `Without EFA, NCCL traffic between nodes runs over TCP on the ENA interface (100-200 Gbps at best) instead of 400-3200 Gbps of EFA with GPUDirect RDMA. For multi-node training on p4d/p5/p6 that is most of the interconnect.`,
		Fix:            "Set efa.enabled: true with nccl.plugin: aws-ofi-nccl, or cap the pool at one node.",
		Sources:        []string{srcEFANCCL}},
	{ID: RuleAcceptImageDigest, Title: "Acceptance sweep image pinned by tag", Severity: diag.SeverityWarning,
		SeverityReason: "risky: a tag can be moved to another image, so the nodes may be judged by a gpuctl nobody reviewed.",
		Summary:        "spec.acceptance.image, or a probe image of spec.acceptance.images, names a tag but no digest.",
		Long: `The acceptance sweep's CronJob runs gpuctl with the permissions to cordon, taint and label GPU nodes and
to sign acceptance records with the team's key. An image named by tag alone (ghcr.io/OWNER/gpuctl:v0.9.0)
is whatever the registry serves under that tag at each run: a tag can be pushed again, so a later run may
use another gpuctl than the one reviewed. The probe images of spec.acceptance.images (a mirror's copies of the
stages' images) judge the nodes the same way: a moved tag changes what a PASS means. A digest
(@sha256:...) names exactly one image.`,
		Fix:     "Pin the image by digest: image: REPO:TAG@sha256:HEX (docker buildx imagetools inspect, crane digest or podman inspect print it).",
		Sources: []string{srcK8sImages}},
	{ID: RuleAcceptParallel, Title: "Acceptance sweep parallelism above the pools' nodes", Severity: diag.SeverityInfo,
		SeverityReason: "a note: the sweep never runs more nodes at once than it selects, so the setting has no effect beyond that.",
		Summary:        "spec.acceptance.parallel is above the largest node count of the spec's GPU pools.",
		Long: `The sweep accepts at most parallel nodes at the same time, and never more than it selected. With
parallel above the sum of the pools' autoscaling.max, the extra is never used; a sweep that does run that
many nodes at once takes that many GPU nodes out of scheduling while it probes them (idle ones only).`,
		Fix: "Set acceptance.parallel to at most the nodes the sweep selects, or leave it (no effect)."},
	{ID: RuleAcceptStageNeeds, Title: "Acceptance sweep stage it cannot run", Severity: diag.SeverityError,
		SeverityReason: "won't work: gpuctl accept would create nothing for the stage and report it INCONCLUSIVE on every node, every night.",
		Summary:        "spec.acceptance.stages names a fleet stage (nccl-multi, framework-multi) that the sweep's nodes or permissions cannot run.",
		Long: `The node stages run on any GPU node: dcgm and diagnostics need the baseline Pod Security level and the
sweep's namespace is labelled with it, and without acceptance.allowPrivileged inventory and diagnostics
only leave out the kernel log. The fleet stages run NCCL (or the framework checks) across the nodes the
sweep selects, and need two alike nodes (same machine type and GPU count: the spec's GPU pools when
acceptance.selector is unset) and, on a GPU fabric whose rank pods need the privileged Pod Security level
(GPUDirect-TCPX and -TCPXO: host paths and NET_ADMIN for the receive-path sidecar; GPUDirect RDMA: host
paths), gpuctl accept --allow-privileged, which the CronJob passes only with acceptance.allowPrivileged:
true. Without them accept says the stage "would create nothing and be INCONCLUSIVE".`,
		Fix:     "Set acceptance.allowPrivileged: true, set acceptance.selector to one pool's nodes, or remove the fleet stage from acceptance.stages.",
		Sources: []string{srcPodSecurity}},
	{ID: RuleAcceptPreflightPool, Title: "Preflight for a pool without whole GPUs", Severity: diag.SeverityError,
		SeverityReason: "won't work: the preflight init container would fail or judge GPUs the pod does not own, so gpuctl generate cannot write its snippet.",
		Summary:        "spec.acceptance.preflight.pools names a pool whose GPUs are shared (time-slicing, MPS, MIG) or that has no GPUs.",
		Long: `gpuctl preflight runs accept's node-local stages (inventory, topology, cuda) in the job's own pod, on the
GPUs the pod was given, and holds them to the pool's expectations: the GPU count and product, the
driver. A pool that shares its GPUs (sharing.strategy time-slicing, mps or mig) hands a pod a share of a
GPU, or a MIG slice, that the whole-GPU checks cannot judge; a pool without GPUs has nothing to check.
Leaving acceptance.preflight.pools empty gives every pool with whole GPUs the init container and skips
the others.`,
		Fix: "Remove the pool from acceptance.preflight.pools, or give it whole GPUs (sharing.strategy: none)."},
	{ID: RulePolicyTaint, Title: "Pool lacks a taint the policy requires", Severity: diag.SeverityWarning,
		SeverityReason: "the user's own policy (spec.policy, --policy): the pool works but breaks a rule its owners set.",
		Summary:        "A node pool does not carry a taint that policy.requiredTaints names.",
		Long: `Fires only when the policy in force (spec.policy over a --policy file) lists requiredTaints, written
key[=value]:effect: every pool must carry each of them with that key and effect (and value, when the
policy names one). A common policy is nvidia.com/gpu=present:NoSchedule, so that only pods that request
GPUs (the ExtendedResourceToleration admission plugin adds the toleration to them) land on machines that
cost tens of dollars an hour. A taint the platform adds itself counts as present: GKE taints the nodes
of a GPU pool added to a cluster that already runs a non-GPU pool with nvidia.com/gpu=present:NoSchedule,
and the pools of a spec always join an existing cluster (spec.clusterName), so on GKE that taint is never
missing. EKS adds none.`,
		Fix:     "Add the taint to the pool's taints, or change the policy.",
		Sources: []string{srcGKEGPUs, srcK8sTaints}},
	{ID: RulePolicySpotMax, Title: "Spot share above the policy's maximum", Severity: diag.SeverityWarning,
		SeverityReason: "the user's own policy (spec.policy, --policy): the pools work but break a rule their owners set.",
		Summary:        "Spot pools hold more of the GPU capacity than policy.maxSpotShare allows.",
		Long: `Fires only when the policy in force sets maxSpotShare (0 to 1). The GPU capacity of a pool is its
autoscaling.max times its GPUs per node; the spot pools' share of the spec's total must not exceed
maxSpotShare. A spot pool without autoscaling.max has no bound, so it exceeds every share below 1.`,
		Fix: "Lower the spot pools' autoscaling.max, raise on-demand or reserved capacity, or change the policy."},
	{ID: RulePolicyCostTags, Title: "Tags the policy requires are missing", Severity: diag.SeverityWarning,
		SeverityReason: "the user's own policy (spec.policy, --policy): the pools work but break a rule their owners set.",
		Summary:        "spec.tags lack keys that policy.requiredTags names.",
		Long: `Fires only when the policy in force lists requiredTags: spec.tags (GCP labels, AWS tags on every node
pool) must carry each key with a value, e.g. cost-center, team and workload-type, so that GPU spend can be
allocated from day one.`,
		Fix:     "Add the missing tags to spec.tags.",
		Sources: []string{"https://cloud.google.com/kubernetes-engine/docs/how-to/cost-allocations", "https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/cost-alloc-tags.html"}},
	{ID: RulePolicyUpgrade, Title: "Training pool upgrades not held", Severity: diag.SeverityWarning,
		SeverityReason: "the user's own policy (spec.policy, --policy): the pool works but breaks a rule its owners set.",
		Summary:        "A training pool can be upgraded (drained) in the middle of a run, and the policy asks for a hold.",
		Long: `Fires only when the policy in force sets trainingUpgradeHold: true. A node upgrade drains and recreates
nodes; a week-long training job on them dies. On GKE a training pool holds upgrades with autoUpgrade:
false, which works only on clusters without a release channel (with one, GKE rejects it:
SPEC-PROVIDER-FIELD), or with a maintenance window or exclusion, which on GKE is a cluster setting (one
window per cluster). EKS managed node groups never auto-upgrade, so they hold by default and the rule
does not fire there.`,
		Fix:     "GKE without a channel: autoUpgrade: false; with a channel: maintenanceWindow (cluster-wide) plus exclusions.",
		Sources: []string{srcGKEChannels, srcGKEMaint, srcEKSManagedUpg}},
	{ID: RuleWaiverExpired, Title: "Waiver expired", Severity: diag.SeverityWarning,
		SeverityReason: "past its date: the findings the waiver covered count again.",
		Summary:        "A waiver is past its expiry date and no longer applies.",
		Long:           `Waivers turn matching findings into info until their expires date (inclusive). After it, the findings count again and this warning points at the waiver to renew or remove.`,
		Fix:            "Fix the finding and remove the waiver, or extend expires with a reason."},
	{ID: RuleWaiverInvalid, Title: "Waiver invalid", Severity: diag.SeverityWarning,
		SeverityReason: "risky: the waiver the spec relies on waives nothing.",
		Summary:        "A waiver names an unknown rule or has a bad or missing expiry date.",
		Long:           `A waiver needs a rule ID gpuctl knows, a reason, and expires as YYYY-MM-DD. An invalid waiver waives nothing.`,
		Fix:            "Correct the rule ID (see `gpuctl explain`) or the date."},
	{ID: RuleGenDaemonSetToleration, Title: "GPU DaemonSet does not tolerate its pool", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable: the DaemonSet schedules no pod on the pool.",
		Summary:        "A generated GPU DaemonSet (device plugin, GPU Operator operands, DCGM exporter) would not tolerate a pool's taints.",
		Long: `` + "`gpuctl generate`" + ` checks the Helm values it writes against the taints the Terraform puts on each pool. A
DaemonSet that does not tolerate a pool's taint schedules no pod there while the release reports success
(the DCGM exporter chart's defaults tolerate only control-plane taints).`,
		Fix:     "Generate every layer from the same spec; do not edit generated tolerations by hand.",
		Sources: []string{"https://github.com/NVIDIA/dcgm-exporter/issues/731"}},
	{ID: RuleGenDaemonSetSelector, Title: "GPU DaemonSet does not select its pool", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable: the DaemonSet schedules no pod on the pool.",
		Summary:        "A generated GPU DaemonSet's node selector or affinity would not match the labels of a pool it must run on.",
		Long:           "`gpuctl generate` evaluates each generated nodeSelector and required node affinity against the node labels of every pool the DaemonSet serves.",
		Fix:            "Generate every layer from the same spec; do not edit generated labels or selectors by hand.",
		Sources:        []string{srcK8sLabels}},
	{ID: RuleGenKueueResource, Title: "Kueue quota on a resource nobody advertises", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable through Kueue: it admits no workload against the quota.",
		Summary:        "A Kueue ClusterQueue flavor quotas a resource name the pool's device plugin does not advertise.",
		Long: `Kueue admits a workload only against the resources its ClusterQueue covers. The device plugin advertises
nvidia.com/gpu, nvidia.com/gpu.shared (time-slicing or MPS with renameByDefault) or nvidia.com/mig-<profile>
(mixed MIG strategy); a quota on any other name never admits anything.`,
		Fix:     "Generate the manifests from the same spec as the Helm values.",
		Sources: []string{"https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/", srcDevicePluginCL}},
	{ID: RuleGenDevicePluginOwner, Title: "Not exactly one device plugin per pool", Severity: diag.SeverityError,
		SeverityReason: "GPUs not usable: no device plugin, or two, on the pool.",
		Summary:        "A pool would have no device plugin, or two that both advertise its GPUs.",
		Long: `Each GPU pool needs exactly one device plugin: GKE's own (unless the pool carries
gke-no-default-nvidia-gpu-device-plugin=true), Bottlerocket NVIDIA's built-in one, NVIDIA's Helm chart (selected
by node affinity) or the GPU Operator's (unless the node opts out with nvidia.com/gpu.deploy.device-plugin=false).
Two plugins advertise the same GPUs twice; none leaves the GPUs invisible to the scheduler.`,
		Fix:     "Set addons.devicePlugin (or the pool's devicePlugin) to the one plugin that fits the pool's image.",
		Sources: []string{"https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/google-gke.html", "https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html"}},
	{ID: RuleGenChartVersion, Title: "Chart version gpuctl cannot write values for", Severity: diag.SeverityWarning,
		SeverityReason: "in validate, a note that matters: the chart works, but `gpuctl generate` cannot write its values and refuses the spec.",
		Also: []SeverityCase{
			{Severity: diag.SeverityError, When: "in `gpuctl generate`", Reason: "nothing can be written for the spec."},
		},
		Summary: "A Helm chart version the spec pins has no values-key list in gpuctl, so `gpuctl generate` cannot write its values.",
		Long: `gpuctl writes only values keys that exist in the pinned chart version, from a key list per chart
version read from the chart's repository at that tag. For a version without a list gpuctl cannot tell
which keys the chart reads (keys are renamed and dropped between releases, and Helm ignores unknown keys
silently), so ` + "`gpuctl validate`" + ` warns and ` + "`gpuctl generate`" + ` refuses the spec (an error there, which
a waiver does not lift). The finding names the versions gpuctl can write.`,
		Fix: "Pin one of the versions the finding names, or leave the version out for the newest.",
		Sources: []string{"https://github.com/NVIDIA/k8s-device-plugin/tree/main/deployments/helm/nvidia-device-plugin",
			"https://github.com/NVIDIA/gpu-operator/tree/main/deployments/gpu-operator",
			"https://github.com/NVIDIA/dcgm-exporter/tree/main/deployment"}},
	{ID: RuleGenBuild, Title: "Generators cannot implement the spec", Severity: diag.SeverityError,
		SeverityReason: "nothing can be generated: the spec cannot be implemented as written.",
		Summary:        "The Helm values or in-cluster objects of the spec cannot be built (the message says why).",
		Long: `After the matrix rules pass, gpuctl builds the Helm values and the Kueue and team objects of each
environment and cross-checks them. Some specs pass every rule but cannot be written: two pools whose names
map to the same Kubernetes name, a pool named like the device plugin's default config, GPU Operator pools
that need two MIG strategies. ` + "`gpuctl generate`" + ` refuses such a spec (a waiver does not lift it).`,
		Fix: "Change the spec as the message says."},
}

var ruleIndex = func() map[string]Rule {
	m := make(map[string]Rule, len(rules))
	for _, r := range rules {
		m[r.ID] = r
	}
	return m
}()

// factsInProse fills the placeholders of rule texts with the facts from the
// embedded data, so that the prose never restates a number of its own.
func factsInProse(r Rule) Rule {
	if !strings.Contains(r.Long, "{") {
		return r
	}
	return proseReplacer().Replace(r)
}

// proseReplacer builds, once, the replacements of the prose placeholders
// from the embedded data.
var proseReplacer = sync.OnceValue(func() *placeholders {
	floors, _, _ := matrix.MinorCompatFloors()
	var fs []string
	for _, f := range floors {
		fs = append(fs, fmt.Sprintf("%d.x >= %s", f.Major, f.Floor))
	}
	var ranges, mig, nonMIG, profiles, migDrivers []string
	for _, g := range matrix.GPUs() {
		var r []string
		switch {
		case g.MinDriver != "":
			r = append(r, ">= "+g.MinDriver)
		case g.MinDriverBranch > 0:
			r = append(r, fmt.Sprintf("R%d or later", g.MinDriverBranch))
		}
		if g.LastDriverBranch > 0 {
			r = append(r, fmt.Sprintf("last branch R%d", g.LastDriverBranch))
		}
		if len(r) > 0 {
			ranges = append(ranges, g.ID+" "+strings.Join(r, ", "))
		}
		if !g.MIG {
			nonMIG = append(nonMIG, g.ID)
			continue
		}
		mig = append(mig, g.ID)
		if n := len(g.MIGProfiles); n > 0 {
			profiles = append(profiles, fmt.Sprintf("%s %s ... %s", g.ID, g.MIGProfiles[0], g.MIGProfiles[n-1]))
		}
		if g.MIGMinDriver != "" {
			migDrivers = append(migDrivers, g.ID+" "+g.MIGMinDriver)
		}
	}
	var eols []string
	for _, b := range matrix.DriverBranches() {
		if b.EOL != "" && b.Type != "" && b.Type != "NFB" {
			eols = append(eols, fmt.Sprintf("R%d (%s) to %s", b.Branch, b.Type, b.EOL))
		}
	}
	return &placeholders{strings.NewReplacer(
		"{minorCompatFloors}", strings.Join(fs, ", "),
		"{gpuDriverRanges}", strings.Join(ranges, "; "),
		"{migGPUs}", strings.Join(mig, ", "),
		"{nonMIGGPUs}", strings.Join(nonMIG, ", "),
		"{migProfileRanges}", strings.Join(profiles, "; "),
		"{migMinDrivers}", strings.Join(migDrivers, ", "),
		"{driverEOLs}", strings.Join(eols, ", "),
	)}
})

// placeholders replaces the fact placeholders of a rule's Long text.
type placeholders struct{ r *strings.Replacer }

// Replace returns r with its Long text's placeholders filled in.
func (p *placeholders) Replace(r Rule) Rule {
	r.Long = p.r.Replace(r.Long)
	return r
}

// Rules returns every rule, sorted by ID.
func Rules() []Rule {
	out := append([]Rule(nil), rules...)
	for i := range out {
		out[i] = factsInProse(out[i])
		out[i].Sources = append([]string{}, out[i].Sources...)
		out[i].Also = append([]SeverityCase(nil), out[i].Also...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// LookupRule returns the rule with ID id (case-insensitive).
func LookupRule(id string) (Rule, bool) {
	r, ok := ruleIndex[normalizeRuleID(id)]
	if ok {
		r = factsInProse(r)
		r.Sources = append([]string{}, r.Sources...)
		r.Also = append([]SeverityCase(nil), r.Also...)
	}
	return r, ok
}

// NearestRules returns up to n rule IDs closest to id, for "did you mean".
func NearestRules(id string, n int) []string {
	ids := make([]string, 0, len(rules))
	for _, r := range rules {
		ids = append(ids, r.ID)
	}
	return matrix.Nearest(normalizeRuleID(id), ids, n)
}

func normalizeRuleID(id string) string {
	b := []byte(id)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c == '_':
			b[i] = '-'
		}
	}
	return string(b)
}
