package rules

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// The providers' documented limits on the numbers of a pool (as of
// 2026-12-01). The APIs take these numbers as 32-bit integers, so nothing
// above math.MaxInt32 is ever accepted.
const (
	// gkeNodesPerPoolZone: "Nodes per node pool zone: 1,000" (a limit, not
	// a quota); gkeNodesPerCluster: "Nodes per cluster: 15,000".
	// Source: https://cloud.google.com/kubernetes-engine/quotas
	gkeNodesPerPoolZone = 1000
	gkeNodesPerCluster  = 15000
	// eksNodesPerNodegroup: the default quota "Nodes per managed node
	// group: 450", adjustable.
	// Source: https://docs.aws.amazon.com/eks/latest/userguide/service-quotas.html
	eksNodesPerNodegroup = 450
	// gkeMinDiskGB: "The smallest allowed disk size is 10GB" (NodeConfig
	// diskSizeGb); gceMaxDiskGB: a Persistent Disk or Hyperdisk boot disk
	// holds at most 64 TiB.
	// Sources: https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig,
	// https://cloud.google.com/compute/docs/disks/persistent-disks
	gkeMinDiskGB = 10
	gceMaxDiskGB = 65536
	// ebsGP3MaxGiB: gpuctl writes the EKS root volume as gp3, at most
	// 16 TiB. Source: https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html
	ebsGP3MaxGiB = 16384
	// gkeMaxSharedClients: GKE time-sharing and MPS share one GPU among at
	// most 48 containers (max_shared_clients_per_gpu).
	// Sources: https://cloud.google.com/kubernetes-engine/docs/concepts/timesharing-gpus,
	// https://cloud.google.com/kubernetes-engine/docs/how-to/nvidia-mps-gpus
	gkeMaxSharedClients = 48
)

const (
	srcGKEQuotas   = "https://cloud.google.com/kubernetes-engine/quotas"
	srcEKSQuotas   = "https://docs.aws.amazon.com/eks/latest/userguide/service-quotas.html"
	srcGKEDisk     = "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig"
	srcGCEDisk     = "https://cloud.google.com/compute/docs/disks/persistent-disks"
	srcEBSGP3      = "https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html"
	srcGKESharing  = "https://cloud.google.com/kubernetes-engine/docs/concepts/timesharing-gpus"
	srcGKEMPS      = "https://cloud.google.com/kubernetes-engine/docs/how-to/nvidia-mps-gpus"
	srcGCPRegions  = "https://cloud.google.com/compute/docs/regions-zones"
	srcAWSRegions  = "https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html"
	srcAWSAZs      = "https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-availability-zones.html"
	srcGCERes      = "https://cloud.google.com/compute/docs/instances/reservations-shared"
	srcGCENames    = "https://cloud.google.com/compute/docs/naming-resources"
	srcEC2CapRes   = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CapacityReservation.html"
	srcEC2PG       = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-groups.html"
	srcEKSRelease  = "https://docs.aws.amazon.com/eks/latest/APIReference/API_Nodegroup.html"
	srcK8sEnvNames = "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#environment-variables"
)

// Names as the clouds define them (as of 2026-12-01).
var (
	// GCP regions are <continent>-<area><n> (us-central1,
	// northamerica-northeast1), zones <region>-<letter> (us-central1-a).
	gcpRegion = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]{1,2}$`)
	gcpZone   = regexp.MustCompile(`^([a-z]+-[a-z]+[0-9]{1,2})-[a-z]$`)
	// AWS regions are <area>[-gov|-iso*]-<direction>-<n> (us-east-1,
	// us-gov-west-1); Availability Zones are the region and a letter
	// (us-east-1a), Local and Wavelength Zones the region and a suffix
	// (us-west-2-lax-1a).
	awsRegion = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]{1,2}$`)
	awsZone   = regexp.MustCompile(`^([a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-[0-9]{1,2})([a-z]|-[a-z0-9]+(-[a-z0-9]+)*)$`)
	// A GCE reservation is a resource name (RFC 1035, at most 63
	// characters), or projects/<project>/reservations/<name> for a
	// reservation shared from another project.
	gceReservation = regexp.MustCompile(`^(projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/reservations/)?[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)
	// EC2 capacity reservation (and Capacity Block) IDs are cr- and 17
	// hexadecimal digits (8 for the oldest).
	ec2Reservation = regexp.MustCompile(`^cr-([0-9a-f]{8}|[0-9a-f]{17})$`)
	// An EKS AMI release version is <kubernetes version>-<build date>
	// (1.33.0-20250704) for the Amazon Linux AMIs, <Bottlerocket
	// version>-<commit> (1.42.0-2fd0f8b1) for Bottlerocket.
	eksReleaseVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+-([0-9]{8}|[0-9a-f]{8})$`)
	// gpuctl's maintenance window: days (Sat, Sat-Sun, Mon,Wed or daily), a
	// 24-hour time range and an optional time zone: "Sat 02:00-06:00 UTC".
	maintenanceWindow = regexp.MustCompile(`^(daily|(Mon|Tue|Wed|Thu|Fri|Sat|Sun)([-,](Mon|Tue|Wed|Thu|Fri|Sat|Sun))*) ([01][0-9]|2[0-3]):[0-5][0-9]-([01][0-9]|2[0-4]):[0-5][0-9]( [A-Za-z][A-Za-z0-9_+/-]{0,39})?$`)
)

// checkRegion holds spec.region to the provider's region names (GKE: a
// region or a zone, the cluster's location).
func (v *validator) checkRegion() {
	r := v.s.Region
	switch {
	case r == "":
	case v.gke() && !gcpRegion.MatchString(r) && !gcpZone.MatchString(r):
		v.add(RuleSpecFormat, diag.SeverityError, "spec.region", fmt.Sprintf("region %s is not a GCP region or zone (such as us-central1 or us-central1-a)", quoteShort(r)), "Write the cluster's location as GCP names it.", srcGCPRegions)
	case v.eks() && !awsRegion.MatchString(r):
		v.add(RuleSpecFormat, diag.SeverityError, "spec.region", fmt.Sprintf("region %s is not an AWS Region code (such as us-east-1)", quoteShort(r)), "Write the Region code, not its name.", srcAWSRegions)
	}
}

// region is the region part of spec.region ("" when it is not a region name).
func (v *validator) region() string {
	r := v.s.Region
	switch {
	case v.gke() && gcpRegion.MatchString(r):
		return r
	case v.gke():
		if m := gcpZone.FindStringSubmatch(r); m != nil {
			return m[1]
		}
	case v.eks() && awsRegion.MatchString(r):
		return r
	}
	return ""
}

// checkPoolBounds holds a pool's numbers to the providers' limits.
func (v *validator) checkPoolBounds(i int) {
	p := &v.s.NodePools[i]
	base := spec.PoolPath(i)
	v.checkAutoscalingMax(p, base)
	v.checkDiskSize(p, base)
	v.checkSharingReplicas(p, base)
	if r := p.Rollout; v.eks() && r != nil && r.MaxUnavailable != nil && !r.MaxUnavailable.Percent && r.MaxUnavailable.Value > matrix.EKSMaxUnavailable {
		v.add(RuleSpecRange, diag.SeverityError, base+".rollout.maxUnavailable", fmt.Sprintf("pool %s: rollout.maxUnavailable %d is more than the %d nodes an EKS node group update takes at once", p.Name, r.MaxUnavailable.Value, matrix.EKSMaxUnavailable), fmt.Sprintf("Set at most %d, or a percentage.", matrix.EKSMaxUnavailable), matrix.SourceEKSUpdateConfig)
	}
	if c := p.GPU.Count; c > math.MaxInt32 {
		v.add(RuleSpecRange, diag.SeverityError, base+".gpu.count", fmt.Sprintf("pool %s: gpu.count %d is beyond any machine (the APIs take a 32-bit number)", p.Name, c), "Set the GPUs per node.")
	}
}

// checkAutoscalingMax: autoscaling.max within the providers' node limits
// (SPEC-AUTOSCALING).
func (v *validator) checkAutoscalingMax(p *spec.NodePool, base string) {
	path := base + ".autoscaling.max"
	max := p.Autoscaling.Max
	switch {
	case max > math.MaxInt32:
		v.add(RuleSpecAutoscaling, diag.SeverityError, path, fmt.Sprintf("pool %s: autoscaling.max %d is beyond any provider's node count (the APIs take a 32-bit number)", p.Name, max), "Set the largest node count the pool may reach.")
	case v.gke() && len(p.Zones) > 0 && max > gkeNodesPerPoolZone*len(p.Zones):
		v.add(RuleSpecAutoscaling, diag.SeverityError, path, fmt.Sprintf("pool %s: autoscaling.max %d is more than GKE's %d nodes per node pool zone allow in %d zone(s) (%d)", p.Name, max, gkeNodesPerPoolZone, len(p.Zones), gkeNodesPerPoolZone*len(p.Zones)), "Lower max, or spread the pool over more zones.", srcGKEQuotas)
	case v.gke() && max > gkeNodesPerCluster:
		v.add(RuleSpecAutoscaling, diag.SeverityError, path, fmt.Sprintf("pool %s: autoscaling.max %d is more than the %d nodes a GKE cluster may have", p.Name, max, gkeNodesPerCluster), "Lower max.", srcGKEQuotas)
	case v.eks() && max > eksNodesPerNodegroup:
		v.add(RuleSpecAutoscaling, diag.SeverityWarning, path, fmt.Sprintf("pool %s: autoscaling.max %d is above EKS's default quota of %d nodes per managed node group: creating the node group fails unless the account's quota was raised", p.Name, max, eksNodesPerNodegroup), "Lower max, or raise the quota \"Nodes per managed node group\" first.", srcEKSQuotas)
	}
}

// checkDiskSize: diskSizeGB within the provider's boot disk sizes
// (SPEC-RANGE).
func (v *validator) checkDiskSize(p *spec.NodePool, base string) {
	path := base + ".diskSizeGB"
	switch d := p.DiskSizeGB; {
	case d == 0:
	case d < 0:
		v.add(RuleSpecRange, diag.SeverityError, path, fmt.Sprintf("pool %s: diskSizeGB %d is negative", p.Name, d), "Set the boot disk size in GB, or leave it out for the provider's default.")
	case v.gke() && (d < gkeMinDiskGB || d > gceMaxDiskGB):
		v.add(RuleSpecRange, diag.SeverityError, path, fmt.Sprintf("pool %s: diskSizeGB %d is outside GKE's %d to %d GB", p.Name, d, gkeMinDiskGB, gceMaxDiskGB), "", srcGKEDisk, srcGCEDisk)
	case v.eks() && d > ebsGP3MaxGiB:
		v.add(RuleSpecRange, diag.SeverityError, path, fmt.Sprintf("pool %s: diskSizeGB %d is more than a gp3 root volume holds (%d GiB)", p.Name, d, ebsGP3MaxGiB), "", srcEBSGP3)
	}
}

// checkSharingReplicas: gpu.sharing.replicas within what GKE's sharing and
// the device plugin take (SPEC-RANGE).
func (v *validator) checkSharingReplicas(p *spec.NodePool, base string) {
	sh := p.GPU.Sharing
	path := base + ".gpu.sharing.replicas"
	switch {
	case (sh.Strategy == spec.SharingTimeSlicing || sh.Strategy == spec.SharingMPS) && v.gke() && !v.s.NVIDIAPlugin(p) && sh.Replicas > gkeMaxSharedClients:
		v.add(RuleSpecRange, diag.SeverityError, path, fmt.Sprintf("pool %s: replicas %d is more than GKE's %d containers per shared GPU", p.Name, sh.Replicas, gkeMaxSharedClients), fmt.Sprintf("Set replicas to at most %d.", gkeMaxSharedClients), srcGKESharing, srcGKEMPS)
	case sh.Replicas > math.MaxInt32:
		v.add(RuleSpecRange, diag.SeverityError, path, fmt.Sprintf("pool %s: replicas %d is beyond what the device plugin reads (a 32-bit number)", p.Name, sh.Replicas), "", srcDevicePlugin)
	}
}

// checkPoolFormats holds the pool's cloud names to the clouds' formats.
func (v *validator) checkPoolFormats(i int) {
	p := &v.s.NodePools[i]
	f := func(s string) string { return spec.PoolPath(i) + s }
	v.checkZones(p, spec.PoolPath(i))
	v.checkReservation(p, f(".reservation"))
	if rv := p.ReleaseVersion; rv != "" && v.eks() && !eksReleaseVersion.MatchString(rv) {
		v.add(RuleSpecVersion, diag.SeverityError, f(".releaseVersion"), fmt.Sprintf("pool %s: releaseVersion %s is not an EKS AMI release version (1.33.0-20250704; Bottlerocket 1.42.0-2fd0f8b1)", p.Name, quoteShort(rv)), "Copy the release version from the AMI's release notes or SSM parameter.", srcEKSRelease)
	}
	if pg := p.PlacementGroup; pg != "" && v.eks() && (len(pg) > 255 || !printableASCII(pg)) {
		v.add(RuleSpecFormat, diag.SeverityError, f(".placementGroup"), fmt.Sprintf("pool %s: placementGroup %s is not an EC2 placement group name (up to 255 ASCII characters)", p.Name, quoteShort(pg)), "", srcEC2PG)
	}
	if w := p.MaintenanceWindow; w != "" && !maintenanceWindow.MatchString(w) {
		v.add(RuleSpecFormat, diag.SeverityWarning, f(".maintenanceWindow"), fmt.Sprintf("pool %s: maintenanceWindow %s is not days and a time range such as \"Sat 02:00-06:00 UTC\"", p.Name, quoteShort(w)), "Write days (Sat, Sat-Sun, Mon,Wed or daily), HH:MM-HH:MM and a time zone.", srcGKEMaint)
	}
	v.checkEnvNames(f(".nccl.env"), p.NCCL.Env)
}

// checkZones: each zone is the cloud's zone name, in the cluster's region
// (SPEC-FORMAT).
func (v *validator) checkZones(p *spec.NodePool, base string) {
	zone, src, form := gcpZone, srcGCPRegions, "a GCP zone (such as us-central1-a)"
	switch {
	case v.eks():
		zone, src, form = awsZone, srcAWSAZs, "an AWS Availability Zone (such as us-east-1a)"
	case !v.gke():
		return
	}
	region := v.region()
	for j, z := range p.Zones {
		path := fmt.Sprintf("%s.zones[%d]", base, j)
		switch m := zone.FindStringSubmatch(z); {
		case m == nil:
			v.add(RuleSpecFormat, diag.SeverityError, path, fmt.Sprintf("pool %s: zone %s is not %s", p.Name, quoteShort(z), form), "Write the zone's name.", src)
		case region != "" && m[1] != region:
			v.add(RuleSpecFormat, diag.SeverityError, path, fmt.Sprintf("pool %s: zone %s is not in region %s", p.Name, z, region), "List zones of the cluster's region.", src)
		}
	}
}

// checkReservation: the reservation is the cloud's reservation name or ID
// (SPEC-FORMAT).
func (v *validator) checkReservation(p *spec.NodePool, path string) {
	switch r := p.Reservation; {
	case r == "":
	case v.gke() && !gceReservation.MatchString(r):
		v.add(RuleSpecFormat, diag.SeverityError, path, fmt.Sprintf("pool %s: reservation %s is not a Compute Engine reservation name (RFC 1035, at most 63 characters) or projects/<project>/reservations/<name>", p.Name, quoteShort(r)), "", srcGCENames, srcGCERes)
	case v.eks() && !ec2Reservation.MatchString(r):
		v.add(RuleSpecFormat, diag.SeverityError, path, fmt.Sprintf("pool %s: reservation %s is not an EC2 capacity reservation ID (cr- and 17 hexadecimal digits)", p.Name, quoteShort(r)), "", srcEC2CapRes)
	}
}

// checkEnvNames holds environment variable names to Kubernetes' EnvVar
// name rule ([-._a-zA-Z][-._a-zA-Z0-9]*): the API server rejects a pod or
// DaemonSet with another.
func (v *validator) checkEnvNames(path string, env map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if errs := validation.IsEnvVarName(k); len(errs) > 0 {
			v.add(RuleSpecFormat, diag.SeverityError, path+spec.Key(k), fmt.Sprintf("environment variable name %s: %s", quoteShort(k), strings.Join(errs, "; ")), "Use letters, digits, '_', '-' and '.', not starting with a digit.", srcK8sEnvNames)
		}
	}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// quoteShort quotes s for a message, cut to 64 bytes.
func quoteShort(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q...", s[:64])
	}
	return fmt.Sprintf("%q", s)
}
