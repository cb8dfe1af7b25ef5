package rules

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Sources of the EKS pool rules (checked 2026-12-03).
const (
	// EKS managed node groups on Capacity Blocks: the instance type goes in
	// the launch template, one type per node group.
	srcEKSCapacityBlocks = "https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html"
	// A Capacity Block's instances are placed close together in an EC2
	// UltraCluster by EC2 itself.
	srcEC2CapacityBlocks = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-blocks.html"
	srcEC2Placement      = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-strategies.html"
	// EKS managed node groups: diskSize defaults to 20 GiB (Linux and
	// Bottlerocket); with a launch template without block devices the AMI's
	// own root volume applies.
	srcEKSDiskSize = "https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html"
	// GKE node pools: diskSizeGb defaults to 100 GB.
	srcGKEDiskSize = "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig"
	// EC2 instance store: NVMe volumes of the instance types that have
	// them; EBS-only types have none.
	srcEC2InstanceStore = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/InstanceStorage.html"
	// Compute Engine Local SSDs: which machine series come with them and
	// which attach a chosen number.
	srcGKELocalSSD = "https://docs.cloud.google.com/compute/docs/disks/add-local-ssd"
)

// checkEKSPool: what an EKS node group needs of its capacity and
// placement (EKS-CAPACITY-BLOCK, EFA-PLACEMENT).
func (v *validator) checkEKSPool(pc *matrix.PoolFacts) {
	if !v.eks() {
		return
	}
	p := pc.Pool
	if types := p.MachineTypes(); p.Capacity == spec.CapacityCapacityBlock && len(types) > 1 {
		v.add(RuleEKSCapacityBlock, "", pc.Field(".instanceTypes"), fmt.Sprintf("pool %s: a Capacity Block reserves one instance type, but instanceTypes lists %d (%s): EKS takes a Capacity Block node group's instance type from its launch template, which holds one", p.Name, len(types), strings.Join(types, ", ")),
			fmt.Sprintf("Set machineType: %s (the Capacity Block's type) and remove instanceTypes.", types[0]))
	}
	v.checkPlacement(pc)
}

// checkPlacement: an EFA training pool in a placement group
// (EFA-PLACEMENT).
func (v *validator) checkPlacement(pc *matrix.PoolFacts) {
	p := pc.Pool
	switch {
	case p.Capacity == spec.CapacityCapacityBlock && p.PlacementGroup == spec.PlacementGroupCluster:
		v.add(RuleEFAPlacement, diag.SeverityInfo, pc.Field(".placementGroup"), fmt.Sprintf("pool %s: placementGroup cluster creates no group for a Capacity Block: EC2 places the block's instances close together itself", p.Name),
			"Nothing to do; remove placementGroup to say so.", srcEC2CapacityBlocks)
	case !spec.EFATraining(p) || p.Capacity == spec.CapacityCapacityBlock || spec.EKSPlacementGroup(p) != "":
	case p.PlacementGroup == spec.PlacementGroupNone:
		v.add(RuleEFAPlacement, "", pc.Field(".placementGroup"), fmt.Sprintf("pool %s: EFA training pool with placementGroup none: its instances may land far apart in the zone, with higher latency between them", p.Name),
			"Remove placementGroup (gpuctl creates a cluster placement group) or name one.")
	default:
		v.add(RuleEFAPlacement, "", pc.Field(".zones"), fmt.Sprintf("pool %s: EFA training pool in %d zones gets no placement group (a cluster placement group lives in one zone): its instances may land far apart, with higher latency between them", p.Name, len(p.Zones)),
			"Name one zone (gpuctl then creates a cluster placement group), or set placementGroup: none to say the pool needs none.")
	}
}

// checkDiskSizeSet: a GPU training pool states its boot disk size
// (POOL-DISK-SIZE).
func (v *validator) checkDiskSizeSet(pc *matrix.PoolFacts) {
	p := pc.Pool
	if !pc.Training() || p.DiskSizeGB > 0 || p.AutoProvisioned {
		return
	}
	what, src := "the AMI's root volume (20 GiB on EKS's own launch template)", srcEKSDiskSize
	if v.gke() {
		what, src = "GKE's default boot disk (100 GB)", srcGKEDiskSize
	}
	v.add(RuleDiskSize, "", pc.Field(".diskSizeGB"), fmt.Sprintf("pool %s: training pool without diskSizeGB: the nodes get %s, which training images of tens of GB, their layers being pulled and the job's scratch data soon fill", p.Name, what), "", src)
}

// checkLocalStorage: localStorage raid0 has local NVMe SSDs to RAID
// (POOL-LOCAL-STORAGE).
func (v *validator) checkLocalStorage(pc *matrix.PoolFacts) {
	p := pc.Pool
	if p.LocalStorage != spec.LocalStorageRAID0 {
		return
	}
	_, none, without := matrix.PoolLocalDisks(v.s.Provider, p)
	switch {
	case !none:
	case v.eks():
		v.add(RuleLocalStorage, "", pc.Field(".localStorage"), fmt.Sprintf("pool %s: localStorage raid0, but %s has no NVMe instance store (EBS only): nothing to RAID, and gpuctl writes no RAID0 for the pool", p.Name, strings.Join(without, ", ")), "")
	case v.gke():
		v.add(RuleLocalStorage, diag.SeverityInfo, pc.Field(".localStorage"), fmt.Sprintf("pool %s: localStorage raid0 on %s, which has Local SSDs only when the pool attaches a number of them: gpuctl writes a comment in place of ephemeral_storage_local_ssd_config", p.Name, strings.Join(without, ", ")),
			"Set ephemeral_storage_local_ssd_config { local_ssd_count = N } in the generated node pool, or remove localStorage.")
	}
}

// checkVPCCNI: the cluster's VPC CNI supports the efa-only interfaces the
// EKS pools use (EFA-VPC-CNI; a note when the spec does not state the
// version, so that it cannot be checked).
func (v *validator) checkVPCCNI() {
	if !v.eks() {
		return
	}
	var pools []string
	for i := range v.s.NodePools {
		if p := &v.s.NodePools[i]; p.EFA.Enabled && p.EFA.EFAOnlyCards() {
			pools = append(pools, p.Name)
		}
	}
	s := v.s.Addons.VPCCNI.Version
	const path = "spec.addons.vpcCni.version"
	floor, srcs := matrix.VPCCNIEFAOnlyMin()
	if s == "" {
		if len(pools) > 0 {
			v.add(RuleEFAVPCCNI, diag.SeverityInfo, path, fmt.Sprintf("pool(s) %s use efa-only interfaces, which need the VPC CNI at %s or later; the spec does not state the cluster's VPC CNI version, so it is not checked", strings.Join(pools, ", "), floor),
				"Set addons.vpcCni.version to the cluster's VPC CNI add-on version (aws eks describe-addon --addon-name vpc-cni).", srcs...)
		}
		return
	}
	got, err := matrix.ParseVersion(vpcCNICore(s))
	if err != nil {
		v.add(RuleSpecVersion, diag.SeverityError, path, fmt.Sprintf("vpcCni.version %q is not a version: %v", s, err), "Write the add-on version, e.g. \"1.19.2\" or \"v1.19.2-eksbuild.1\".")
		return
	}
	if got.Compare(floor) >= 0 || len(pools) == 0 {
		return
	}
	v.add(RuleEFAVPCCNI, "", path, fmt.Sprintf("VPC CNI %s is older than %s, the first to support the efa-only interfaces of pool(s) %s", s, floor, strings.Join(pools, ", ")),
		fmt.Sprintf("Upgrade the VPC CNI add-on to %s or later, or set efa.efaOnly: false on those pools.", floor), srcs...)
}

// vpcCNICore is VPC CNI version s without the EKS add-on's build suffix
// ("v1.19.2-eksbuild.1" -> "v1.19.2").
func vpcCNICore(s string) string {
	core, suffix, ok := strings.Cut(strings.TrimSpace(s), "-")
	if ok && strings.HasPrefix(suffix, "eksbuild.") {
		return core
	}
	return s
}
