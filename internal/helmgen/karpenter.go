package helmgen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Karpenter v1: the objects `gpuctl generate karpenter` writes for an EKS
// spec whose addons.autoscaler is karpenter, one NodePool (karpenter.sh/v1)
// and one EC2NodeClass (karpenter.k8s.aws/v1) per GPU pool, both named
// after the pool. The fields are those of the CRDs of
// aws/karpenter-provider-aws v1.14.1 (commit
// bde00654cd316fddb3dccfba3f5ac07039865429, pkg/apis/crds/, copied under
// testdata/reference/crds; TestCustomResourcesMatchCRDs holds every object
// to them), and what the importer reads back (internal/importer/karpenter.go).
// Sources (checked 2026-12-03): https://karpenter.sh/docs/concepts/nodepools/,
// https://karpenter.sh/docs/concepts/nodeclasses/ and
// https://karpenter.sh/docs/tasks/odcrs/ (the v1.14.1 tag's
// website/content/en/docs/).
const (
	KarpenterAPIVersion      = "karpenter.sh/v1"
	KarpenterAWSAPIVersion   = "karpenter.k8s.aws/v1"
	karpenterAWSGroup        = "karpenter.k8s.aws"
	karpenterDiscoveryTag    = "karpenter.sh/discovery"
	karpenterCapacityType    = "karpenter.sh/capacity-type"
	karpenterReservationType = "karpenter.k8s.aws/capacity-reservation-type"
	// karpenterNodeRolePrefix + the cluster name is the node IAM role of
	// Karpenter's getting-started guide (KarpenterNodeRole-${CLUSTER_NAME}).
	// Source: https://karpenter.sh/docs/getting-started/getting-started-with-karpenter/
	// (the v1.14.1 tag's step12-add-nodepool.sh; 2026-12-03).
	karpenterNodeRolePrefix = "KarpenterNodeRole-"
)

// karpenterCapacity is a pool's capacity as Karpenter's capacity type and,
// for reserved capacity, the reservation type (Karpenter models On-Demand
// Capacity Reservations and Capacity Blocks as capacity type reserved,
// told apart by karpenter.k8s.aws/capacity-reservation-type: default or
// capacity-block).
var karpenterCapacity = map[string][2]string{
	"":                         {"on-demand", ""},
	spec.CapacityOnDemand:      {"on-demand", ""},
	spec.CapacitySpot:          {"spot", ""},
	spec.CapacityReservation:   {"reserved", "default"},
	spec.CapacityCapacityBlock: {"reserved", "capacity-block"},
}

// karpenterAMIAlias is the amiSelectorTerms alias family of an EKS AMI
// type: Karpenter's al2023 and bottlerocket aliases pick the NVIDIA
// variant of the EKS-optimized AMI for GPU instance types.
var karpenterAMIAlias = map[string]string{
	"AL2023_x86_64_NVIDIA": "al2023", "AL2023_ARM_64_NVIDIA": "al2023",
	"BOTTLEROCKET_x86_64_NVIDIA": "bottlerocket", "BOTTLEROCKET_ARM_64_NVIDIA": "bottlerocket",
}

// kpNodePool is a karpenter.sh/v1 NodePool as gpuctl writes it.
type kpNodePool struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   kpObjectName   `json:"metadata"`
	Spec       kpNodePoolSpec `json:"spec"`
}

// kpObjectName is the metadata of a cluster-scoped object gpuctl writes.
type kpObjectName struct {
	Name string `json:"name"`
}

// kpNodePoolSpec is a NodePool's spec: its node template and its limits
// (resource quantities, "32" GPUs).
type kpNodePoolSpec struct {
	Template   kpNodeClaimTemplate `json:"template"`
	Disruption *kpDisruption       `json:"disruption,omitempty"`
	Limits     map[string]string   `json:"limits,omitempty"`
}

// kpDisruption is when Karpenter may remove a NodePool's nodes to
// consolidate: WhenEmpty (only nodes without pods) or
// WhenEmptyOrUnderutilized (Karpenter's default, which also moves running
// pods off underutilized nodes); consolidateAfter "0s" is Karpenter's
// default. Source: https://karpenter.sh/docs/concepts/disruption/ (2026-12-03).
type kpDisruption struct {
	ConsolidationPolicy string `json:"consolidationPolicy"`
	ConsolidateAfter    string `json:"consolidateAfter"`
}

// kpNodeClaimTemplate is the template of the nodes a NodePool launches.
type kpNodeClaimTemplate struct {
	Metadata struct {
		Labels map[string]string `json:"labels,omitempty"`
	} `json:"metadata"`
	Spec kpNodeClaimSpec `json:"spec"`
}

// kpNodeClaimSpec is what a NodePool's nodes are: their node class, the
// requirements the instances meet and their taints.
type kpNodeClaimSpec struct {
	NodeClassRef kpNodeClassRef  `json:"nodeClassRef"`
	Requirements []kpRequirement `json:"requirements"`
	Taints       []kpTaint       `json:"taints,omitempty"`
}

// kpNodeClassRef names the EC2NodeClass of a NodePool.
type kpNodeClassRef struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
}

// kpRequirement is one node selector requirement of a NodePool.
type kpRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

// kpTaint is a node taint of a NodePool's template.
type kpTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// kpEC2NodeClass is a karpenter.k8s.aws/v1 EC2NodeClass as gpuctl writes it.
type kpEC2NodeClass struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Metadata   kpObjectName       `json:"metadata"`
	Spec       kpEC2NodeClassSpec `json:"spec"`
}

// kpEC2NodeClassSpec is the AWS side of a pool's nodes.
type kpEC2NodeClassSpec struct {
	Role                             string                 `json:"role"`
	AMISelectorTerms                 []kpAMITerm            `json:"amiSelectorTerms"`
	SubnetSelectorTerms              []kpTagTerm            `json:"subnetSelectorTerms"`
	SecurityGroupSelectorTerms       []kpTagTerm            `json:"securityGroupSelectorTerms"`
	BlockDeviceMappings              []kpBlockDeviceMapping `json:"blockDeviceMappings,omitempty"`
	InstanceStorePolicy              string                 `json:"instanceStorePolicy,omitempty"`
	NetworkInterfaces                []kpNetworkInterface   `json:"networkInterfaces,omitempty"`
	PlacementGroupSelector           *kpPlacementGroupTerm  `json:"placementGroupSelector,omitempty"`
	CapacityReservationSelectorTerms []kpReservationTerm    `json:"capacityReservationSelectorTerms,omitempty"`
	Tags                             map[string]string      `json:"tags,omitempty"`
	MetadataOptions                  *kpMetadataOptions     `json:"metadataOptions,omitempty"`
}

// kpMetadataOptions are the nodes' instance metadata options.
type kpMetadataOptions struct {
	HTTPEndpoint            string `json:"httpEndpoint"`
	HTTPProtocolIPv6        string `json:"httpProtocolIPv6"`
	HTTPPutResponseHopLimit int    `json:"httpPutResponseHopLimit"`
	HTTPTokens              string `json:"httpTokens"`
}

// kpAMITerm selects the AMI by alias (family@version).
type kpAMITerm struct {
	Alias string `json:"alias"`
}

// kpTagTerm selects subnets or security groups by tags.
type kpTagTerm struct {
	Tags map[string]string `json:"tags"`
}

// kpBlockDeviceMapping is one EBS volume of the nodes; VolumeSize is a
// quantity ("200Gi").
type kpBlockDeviceMapping struct {
	DeviceName string `json:"deviceName"`
	RootVolume bool   `json:"rootVolume,omitempty"`
	EBS        kpEBS  `json:"ebs"`
}

// kpEBS is a volume's EBS settings.
type kpEBS struct {
	VolumeSize          string `json:"volumeSize"`
	VolumeType          string `json:"volumeType"`
	Encrypted           bool   `json:"encrypted"`
	DeleteOnTermination bool   `json:"deleteOnTermination"`
}

// kpNetworkInterface is one network interface of the nodes: interfaceType
// interface (ENA) or efa-only.
type kpNetworkInterface struct {
	NetworkCardIndex int    `json:"networkCardIndex"`
	DeviceIndex      int    `json:"deviceIndex"`
	InterfaceType    string `json:"interfaceType"`
}

// kpPlacementGroupTerm selects the placement group by name.
type kpPlacementGroupTerm struct {
	Name string `json:"name"`
}

// kpReservationTerm selects a capacity reservation (or Capacity Block) by ID.
type kpReservationTerm struct {
	ID string `json:"id"`
}

// KarpenterPlacementGroup is the placement group the EC2NodeClass of pool
// p selects: the pool's group as the managed node groups' launch templates
// have it (spec.EKSPlacementGroup: none for "none" and Capacity Blocks, a
// cluster group by default for an EFA training pool in one zone), for a
// cluster group the one gpuctl's Terraform creates (<cluster>-<pool>); ""
// for none.
func KarpenterPlacementGroup(s *spec.Spec, p *spec.NodePool) string {
	switch pg := spec.EKSPlacementGroup(p); pg {
	case "":
		return ""
	case spec.PlacementGroupCluster:
		return s.ClusterName + "-" + p.Name
	default:
		return pg
	}
}

// Karpenter returns karpenter.yaml: a NodePool and an EC2NodeClass per
// pool of an EKS spec whose addons.autoscaler is karpenter; no file for
// another spec. Errors: those of buildKarpenter.
func Karpenter(cs *spec.ClusterSpec, opts Options) ([]File, error) {
	objs, err := buildKarpenter(cs)
	if err != nil {
		return nil, err
	}
	return karpenterFiles(cs, objs, opts)
}

// UsesKarpenter reports whether the spec's pools are Karpenter's: an EKS
// spec with addons.autoscaler karpenter.
func UsesKarpenter(s *spec.Spec) bool {
	return s.Provider == spec.ProviderEKS && s.Addons.Autoscaler == spec.AutoscalerKarpenter
}

// buildKarpenter builds the NodePools and EC2NodeClasses of cs (none
// unless UsesKarpenter). Errors: a pool without an instance type or on an
// AMI type Karpenter has no alias for.
func buildKarpenter(cs *spec.ClusterSpec) ([]any, error) {
	s := &cs.Spec
	if !UsesKarpenter(s) {
		return nil, nil
	}
	var objs []any
	for i := range s.NodePools {
		np, nc, err := karpenterPool(s, &s.NodePools[i])
		if err != nil {
			return nil, err
		}
		objs = append(objs, np, nc)
	}
	return objs, nil
}

// karpenterFiles is Karpenter on built objects.
func karpenterFiles(cs *spec.ClusterSpec, objs []any, opts Options) ([]File, error) {
	if len(objs) == 0 {
		return nil, nil
	}
	data, err := multiDoc(objs)
	if err != nil {
		return nil, err
	}
	return []File{{Name: "karpenter.yaml", Data: append(header(cs, opts, karpenterNotes(&cs.Spec)...), data...)}}, nil
}

// karpenterNodeRole is the EC2NodeClasses' IAM role: addons.karpenter.nodeRole,
// else KarpenterNodeRole-<clusterName>.
func karpenterNodeRole(s *spec.Spec) string {
	if r := s.Addons.Karpenter.NodeRole; r != "" {
		return r
	}
	return karpenterNodeRolePrefix + s.ClusterName
}

// karpenterNotes is karpenter.yaml's header.
func karpenterNotes(s *spec.Spec) []string {
	notes := []string{
		"Karpenter v1 (" + KarpenterAPIVersion + " NodePool, " + KarpenterAWSAPIVersion + " EC2NodeClass), one of each per GPU pool, checked against",
		"the CRDs of aws/karpenter-provider-aws v1.14.1. The Terraform writes no managed node group for these pools.",
		"Each EC2NodeClass selects its subnets and security groups by the tag " + karpenterDiscoveryTag + ": " + s.ClusterName + " (put it on the",
		"cluster's node subnets and node security group) and runs its nodes as IAM role " + karpenterNodeRole(s) + " (addons.karpenter.nodeRole; unset,",
		"the node role of Karpenter's getting-started guide, KarpenterNodeRole-<cluster>). Source: https://karpenter.sh/docs/concepts/nodeclasses/",
		"limits nvidia.com/gpu = autoscaling.max x GPUs per node: Karpenter launches no node past it.",
		"Disruption: training pools consolidate only empty nodes (WhenEmpty). Karpenter still replaces a node that drifts (a new AMI",
		"behind the @latest alias) or expires (expireAfter, 720h by default); a job's pods that must not be interrupted carry the",
		"annotation karpenter.sh/do-not-disrupt: \"true\". Source: https://karpenter.sh/docs/concepts/disruption/",
	}
	if karpenterAny(s, func(p *spec.NodePool) bool { return p.EFA.Enabled }) {
		notes = append(notes,
			"EFA: efaOnly pools list their interfaces (ENA on card 0, efa-only on every card). Without networkInterfaces Karpenter adds",
			"one EFA interface per network card only to a node launched for a pod that requests vpc.amazonaws.com/efa (launchtemplate.go,",
			"generateNetworkInterfaces, https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/launchtemplate/launchtemplate.go). Either way the pods' vpc.amazonaws.com/efa is advertised by the EFA device plugin",
			"(helm/<env>/aws-efa-k8s-device-plugin.values.yaml), which Karpenter does not install, and EFA needs a security group",
			"that allows all traffic to and from itself among those the discovery tag selects. Source: https://karpenter.sh/docs/concepts/nodeclasses/#specnetworkinterfaces")
	}
	if karpenterAny(s, func(p *spec.NodePool) bool { return karpenterCapacity[p.Capacity][0] == "reserved" }) {
		notes = append(notes,
			"Reserved capacity (capacity-type reserved; capacity-reservation-type default for a reservation, capacity-block for a",
			"Capacity Block) needs Karpenter's ReservedCapacity feature gate. Source: https://karpenter.sh/docs/tasks/odcrs/")
	}
	for _, p := range s.NodePools {
		if p.ReleaseVersion != "" {
			// Karpenter's alias versions (al2023@v20250101) are not the
			// node group's release versions; gpuctl does not map one to
			// the other.
			notes = append(notes, fmt.Sprintf("Pool %s: releaseVersion %s is a managed node group setting and is not written: the AMI alias is @latest; pin the alias version by hand.", p.Name, p.ReleaseVersion))
		}
	}
	if karpenterAny(s, func(p *spec.NodePool) bool { return p.PlacementGroup == "cluster" }) {
		notes = append(notes, "placementGroup cluster: the EC2NodeClass selects the placement group <cluster>-<pool> that the Terraform creates.")
	}
	return notes
}

// karpenterAny reports whether a pool of s has ok.
func karpenterAny(s *spec.Spec, ok func(*spec.NodePool) bool) bool {
	for i := range s.NodePools {
		if ok(&s.NodePools[i]) {
			return true
		}
	}
	return false
}

// karpenterPool builds the NodePool and EC2NodeClass of pool p.
func karpenterPool(s *spec.Spec, p *spec.NodePool) (kpNodePool, kpEC2NodeClass, error) {
	types := p.MachineTypes()
	if len(types) == 0 {
		return kpNodePool{}, kpEC2NodeClass{}, fmt.Errorf("pool %s: no machineType or instanceTypes", p.Name)
	}
	nc, err := karpenterNodeClass(s, p)
	if err != nil {
		return kpNodePool{}, kpEC2NodeClass{}, err
	}
	name := objectName(p.Name)
	np := kpNodePool{APIVersion: KarpenterAPIVersion, Kind: "NodePool", Metadata: kpObjectName{Name: name}}
	np.Spec.Template.Metadata.Labels = s.NodeLabels(p)
	ts := &np.Spec.Template.Spec
	ts.NodeClassRef = kpNodeClassRef{Group: karpenterAWSGroup, Kind: "EC2NodeClass", Name: name}
	ts.Requirements = karpenterRequirements(p, types)
	for _, t := range p.Taints {
		ts.Taints = append(ts.Taints, kpTaint(t))
	}
	if p.Role == spec.RoleTraining {
		// A training job's pods are not moved to fill nodes better: an
		// evicted rank stops the whole job.
		np.Spec.Disruption = &kpDisruption{ConsolidationPolicy: "WhenEmpty", ConsolidateAfter: "0s"}
	}
	if gpus, ok := matrix.PoolGPUsPerNode(s.Provider, p); ok && gpus > 0 && p.Autoscaling.Max > 0 {
		np.Spec.Limits = map[string]string{ResourceGPU: strconv.Itoa(p.Autoscaling.Max * gpus)}
	}
	return np, nc, nil
}

// karpenterRequirements are the requirements of pool p's NodePool: its
// instance types, its capacity type (and reservation type), its zones.
func karpenterRequirements(p *spec.NodePool, types []string) []kpRequirement {
	c := karpenterCapacity[p.Capacity]
	reqs := []kpRequirement{
		{Key: "node.kubernetes.io/instance-type", Operator: "In", Values: types},
		{Key: karpenterCapacityType, Operator: "In", Values: []string{c[0]}},
	}
	if c[1] != "" {
		reqs = append(reqs, kpRequirement{Key: karpenterReservationType, Operator: "In", Values: []string{c[1]}})
	}
	if len(p.Zones) > 0 {
		reqs = append(reqs, kpRequirement{Key: "topology.kubernetes.io/zone", Operator: "In", Values: p.Zones})
	}
	return reqs
}

// karpenterNodeClass builds the EC2NodeClass of pool p. Errors: an AMI
// type Karpenter has no alias for.
func karpenterNodeClass(s *spec.Spec, p *spec.NodePool) (kpEC2NodeClass, error) {
	ami := p.OSImage
	if ami == "" {
		ami = "AL2023_x86_64_NVIDIA"
		if m, ok := matrix.LookupMachine(spec.ProviderEKS, p.MachineTypes()[0]); ok && m.Arch == "arm64" {
			ami = "AL2023_ARM_64_NVIDIA"
		}
	}
	family, ok := karpenterAMIAlias[ami]
	if !ok {
		return kpEC2NodeClass{}, fmt.Errorf("pool %s: osImage %s: Karpenter's AMI aliases cover the AL2023 and Bottlerocket NVIDIA AMIs only (%s)", p.Name, ami, strings.Join(karpenterAMITypes(), ", "))
	}
	discovery := []kpTagTerm{{Tags: map[string]string{karpenterDiscoveryTag: s.ClusterName}}}
	nc := kpEC2NodeClass{APIVersion: KarpenterAWSAPIVersion, Kind: "EC2NodeClass", Metadata: kpObjectName{Name: objectName(p.Name)},
		Spec: kpEC2NodeClassSpec{
			Role:                       karpenterNodeRole(s),
			AMISelectorTerms:           []kpAMITerm{{Alias: family + "@latest"}},
			SubnetSelectorTerms:        discovery,
			SecurityGroupSelectorTerms: discovery,
			BlockDeviceMappings:        karpenterDisks(p, family),
			NetworkInterfaces:          karpenterInterfaces(p),
			Tags:                       s.PoolTags(p),
			// The launch templates' metadata options (matrix.EKSIMDSHopLimit).
			MetadataOptions: &kpMetadataOptions{HTTPEndpoint: "enabled", HTTPProtocolIPv6: "disabled", HTTPPutResponseHopLimit: matrix.EKSIMDSHopLimit, HTTPTokens: "required"},
		}}
	// instanceStorePolicy RAID0: Karpenter makes the instance store one
	// RAID-0 array for the kubelet and containerd (nodeadm on AL2023,
	// bootstrap commands on Bottlerocket 1.22+), for the pool's effective
	// localStorage (asked, or a training pool whose instance types have
	// NVMe instance store).
	if matrix.EffectiveLocalStorage(spec.ProviderEKS, p) == spec.LocalStorageRAID0 {
		nc.Spec.InstanceStorePolicy = "RAID0"
	}
	if pg := KarpenterPlacementGroup(s, p); pg != "" {
		nc.Spec.PlacementGroupSelector = &kpPlacementGroupTerm{Name: pg}
	}
	if p.Reservation != "" && karpenterCapacity[p.Capacity][0] == "reserved" {
		nc.Spec.CapacityReservationSelectorTerms = []kpReservationTerm{{ID: p.Reservation}}
	}
	return nc, nil
}

// karpenterAMITypes are the AMI types karpenterAMIAlias covers, sorted.
func karpenterAMITypes() []string {
	return []string{"AL2023_ARM_64_NVIDIA", "AL2023_x86_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA"}
}

// karpenterDisks are the volumes of pool p's nodes on AMI family family:
// nil without diskSizeGB (Karpenter's defaults); else the root volume
// (/dev/xvda) of diskSizeGB, or on Bottlerocket its 4 GiB OS volume and
// the data volume (/dev/xvdb, images and logs) of diskSizeGB — a mapping
// list replaces Karpenter's defaults, so Bottlerocket's OS volume is
// written as Karpenter's default has it.
func karpenterDisks(p *spec.NodePool, family string) []kpBlockDeviceMapping {
	if p.DiskSizeGB <= 0 {
		return nil
	}
	vt := p.DiskType
	if vt == "" {
		vt = "gp3"
	}
	size := kpEBS{VolumeSize: strconv.Itoa(p.DiskSizeGB) + "Gi", VolumeType: vt, Encrypted: true, DeleteOnTermination: true}
	if family == "bottlerocket" {
		return []kpBlockDeviceMapping{
			{DeviceName: "/dev/xvda", EBS: kpEBS{VolumeSize: "4Gi", VolumeType: "gp3", Encrypted: true, DeleteOnTermination: true}},
			{DeviceName: "/dev/xvdb", EBS: size},
		}
	}
	return []kpBlockDeviceMapping{{DeviceName: "/dev/xvda", RootVolume: true, EBS: size}}
}

// karpenterInterfaces are the network interfaces of an EFA pool whose
// cards carry efa-only interfaces (efa.efaOnly, true when unset): ENA on
// card 0 (the primary interface Karpenter requires), then an efa-only
// interface on every card (device 1 on card 0, 0 on the others), one per
// network card or efa.interfaces of them. nil otherwise: Karpenter then
// adds one interface of type efa per network card, and only for a node
// claim that requests vpc.amazonaws.com/efa.
// Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/launchtemplate/launchtemplate.go
// (generateNetworkInterfaces) and the EC2NodeClass CRD's interfaceType
// enum (interface, efa-only) and CEL rules (a primary interface on card 0
// device 0, at most one efa-only interface per card); 2026-12-03.
func karpenterInterfaces(p *spec.NodePool) []kpNetworkInterface {
	if !p.EFA.Enabled || !p.EFA.EFAOnlyCards() {
		return nil
	}
	n, _ := matrix.PoolEFAInterfaces(spec.ProviderEKS, p) // as the launch templates and Kueue's EFA quota count them
	if n == 0 {
		return nil
	}
	out := []kpNetworkInterface{{NetworkCardIndex: 0, DeviceIndex: 0, InterfaceType: "interface"}}
	for card := 0; card < n; card++ {
		dev := 0
		if card == 0 {
			dev = 1
		}
		out = append(out, kpNetworkInterface{NetworkCardIndex: card, DeviceIndex: dev, InterfaceType: "efa-only"})
	}
	return out
}
