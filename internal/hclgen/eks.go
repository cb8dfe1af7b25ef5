package hclgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// EKS AMI types for GPU nodes, by architecture.
// Source: https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html
var eksGPUAMIs = map[string][]string{
	"amd64": {"AL2023_x86_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA_FIPS", "AL2023_x86_64_STANDARD", "CUSTOM"},
	"arm64": {"AL2023_ARM_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA_FIPS", "AL2023_ARM_64_STANDARD", "CUSTOM"},
}

var eksCapacity = map[string]string{
	"": "ON_DEMAND", spec.CapacityOnDemand: "ON_DEMAND", spec.CapacityReservation: "ON_DEMAND",
	spec.CapacitySpot: "SPOT", spec.CapacityCapacityBlock: "CAPACITY_BLOCK",
}

func (g *gen) eks() error {
	if g.s.Addons.Autoscaler == spec.AutoscalerKarpenter {
		g.eksKarpenter()
		return nil
	}
	g.requiredProviders("aws", "hashicorp/aws", AWSProviderVersion)
	g.commonVariables()
	v := g.variables()
	variable(v, "node_role_arn", "ARN of the IAM role of the GPU nodes.", "string", cty.NilVal,
		[2]string{`can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:role/", var.node_role_arn))`, "node_role_arn must be an IAM role ARN."})
	variable(v, "subnet_ids_by_zone", "Subnets of the GPU node groups by availability zone (e.g. { \"us-east-1a\" = [\"subnet-...\"] }). Each node group gets the subnets of its pool's zones (<pool>_zones); a pool without zones gets them all.", "map(list(string))", cty.NilVal,
		[2]string{`length(var.subnet_ids_by_zone) > 0`, "subnet_ids_by_zone must name at least one zone."},
		[2]string{`alltrue([for z, ids in var.subnet_ids_by_zone : length(ids) > 0])`, "Every zone in subnet_ids_by_zone needs at least one subnet."})
	if g.anyPool(func(p *pool) bool { return p.EFA.Enabled }) {
		variable(v, "cluster_security_group_id", "The cluster security group (aws_eks_cluster.vpc_config[0].cluster_security_group_id). The EFA pools' launch templates set their interfaces' security groups, and EKS then adds no group of its own (https://docs.aws.amazon.com/eks/latest/userguide/launch-templates.html), so gpuctl puts this one first on every interface.", "string", cty.NilVal,
			[2]string{`can(regex("^sg-[0-9a-f]+$", var.cluster_security_group_id))`, "cluster_security_group_id must be a security group ID (sg-...)."})
		variable(v, "efa_security_group_ids", "More security groups of the EFA pools' network interfaces, after the cluster security group. EFA needs a group that allows all traffic to and from itself.", "list(string)", cty.NilVal,
			[2]string{`length(var.efa_security_group_ids) > 0`, "EFA pools need at least one security group that allows all traffic to and from itself."})
	}
	for _, p := range g.ps {
		if err := g.eksPool(p); err != nil {
			return err
		}
		g.flush()
	}
	o := g.outputs().AppendNewBlock("output", []string{"node_group_arns"}).Body()
	o.SetAttributeValue("description", cty.StringVal("ARNs of the GPU node groups, by spec pool name."))
	o.SetAttributeRaw("value", g.poolMapExpr(func(p *pool) string { return "aws_eks_node_group." + p.id + ".arn" }))
	g.outputs().AppendNewline()
	g.maintenanceOutput("Maintenance windows the spec asks for. EKS managed node groups are only upgraded when their AMI release or version changes: schedule those changes in these windows.")
	return nil
}

// eksPool writes pool p: its variables, its placement group and launch
// template where it needs them, and its node group.
func (g *gen) eksPool(p *pool) error {
	types := p.MachineTypes()
	if len(types) == 0 {
		return fmt.Errorf("pool %s: no machineType or instanceTypes", p.Name)
	}
	ami, err := g.eksAMIVariables(p)
	if err != nil {
		return err
	}
	g.eksCapacityVariable(p)
	zonesVar := eksZonesVar(p)
	g.eksZonesVariable(p, zonesVar)
	body := g.nodePools()
	efaCount, err := eksEFACount(p, types[0])
	if err != nil {
		return err
	}
	pg := spec.EKSPlacementGroup(p.NodePool)
	if pg == spec.PlacementGroupCluster {
		g.eksPlacementGroup(body, p)
	}
	needLT := efaCount > 0 || p.DiskSizeGB > 0 || pg != "" || eksReserved(p) || eksLocalStorageUserData(p, ami) != ""
	if needLT {
		g.eksLaunchTemplate(body, p, types[0], ami, efaCount)
	}
	if p.MaintenanceWindow != "" {
		comment(body, fmt.Sprintf("Maintenance window %q: see output maintenance_windows.", p.MaintenanceWindow))
	}
	if p.Capacity == spec.CapacityCapacityBlock {
		// A Capacity Block holds no spare instance for a rolling update's
		// new node.
		comment(body, "Capacity Block: before a change that replaces the nodes (kubernetes_version, the release, the launch template), scale the node group to 0 as AWS asks: the block has no spare instance for the update's new node. Source: "+srcEKSCapacityBlockMNG)
	}
	if err := g.eksNodeGroup(body, p, types, ami, zonesVar, needLT); err != nil {
		return err
	}
	body.AppendNewline()
	return nil
}

// srcEKSCapacityBlockMNG is AWS's guide to Capacity Blocks for managed node
// groups (launch template instance type, upgrades at desired size 0),
// checked 2026-12-03.
const srcEKSCapacityBlockMNG = "https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html"

// eksAMIVariables writes the <pool>_ami_type variable (the spec's osImage,
// else the architecture's first GPU AMI, held to the AMIs that fit the
// device plugin) and <pool>_release_version, and returns the AMI type. A
// pinned driver on an AMI that ships its own needs a pinned release.
func (g *gen) eksAMIVariables(p *pool) (string, error) {
	v := g.variables()
	amiVar := p.id + "_ami_type"
	ami := p.OSImage
	if ami == "" {
		ami = eksGPUAMIs[p.arch][0]
	}
	plugin := g.s.DevicePluginFor(p.NodePool)
	allowed := eksAllowedAMIs(p.arch, plugin)
	if ami != "CUSTOM" {
		// CUSTOM needs an image_id and the AMI's own bootstrap, which a
		// pool generated for an EKS AMI type has not: only a spec that
		// says CUSTOM gets it.
		allowed = slices.DeleteFunc(allowed, func(a string) bool { return a == "CUSTOM" })
	}
	variable(v, amiVar, fmt.Sprintf("EKS AMI type of pool %s (%s instances, device plugin: %s).", p.Name, p.arch, plugin), "string", cty.StringVal(ami),
		[2]string{fmt.Sprintf("contains([%s], var.%s)", quoteList(allowed), amiVar),
			fmt.Sprintf("Pool %s needs a GPU AMI type for %s instances that fits its device plugin (%s): one of %s.", p.Name, p.arch, plugin, strings.Join(allowed, ", "))})
	if p.ReleaseVersion == "" && isExactVersion(p.GPU.Driver) && ami != "CUSTOM" && eksAMIShipsDriver(ami) {
		return "", fmt.Errorf("pool %s pins driver %s on %s: set releaseVersion to the AMI release that ships it (EKS picks the newest release otherwise, whose driver may differ); %s", p.Name, p.GPU.Driver, ami, matrix.ReleasesShipping(ami, p.GPU.Driver, eksMinor(g.s.KubernetesVersion)))
	}
	if p.ReleaseVersion != "" {
		variable(v, p.id+"_release_version", fmt.Sprintf("AMI release version pinned for pool %s.", p.Name), "string", cty.StringVal(p.ReleaseVersion),
			[2]string{fmt.Sprintf("length(var.%s_release_version) > 0", p.id), "release_version must not be empty."})
	}
	return ami, nil
}

// eksReserved reports whether pool p runs on reserved capacity (an
// On-Demand Capacity Reservation or a Capacity Block), which its launch
// template targets.
func eksReserved(p *pool) bool {
	return p.Capacity == spec.CapacityReservation || p.Capacity == spec.CapacityCapacityBlock
}

// eksCapacityVariable writes <pool>_capacity_reservation_id for a pool on
// reserved capacity.
func (g *gen) eksCapacityVariable(p *pool) {
	if !eksReserved(p) {
		return
	}
	what := "EC2 On-Demand Capacity Reservation"
	if p.Capacity == spec.CapacityCapacityBlock {
		what = "EC2 Capacity Block for ML"
	}
	variable(g.variables(), p.id+"_capacity_reservation_id", fmt.Sprintf("%s of pool %s.", what, p.Name), "string", cty.StringVal(p.Reservation),
		[2]string{fmt.Sprintf(`can(regex("^cr-[0-9a-f]+$", var.%s_capacity_reservation_id))`, p.id), "The capacity reservation ID must look like cr-0123456789abcdef0."})
}

// eksZonesVar is the variable holding pool p's availability zones, "" for
// a pool that spans every zone of subnet_ids_by_zone.
func eksZonesVar(p *pool) string {
	if len(p.Zones) > 0 || spec.EKSSingleAZ(p.NodePool) {
		return p.id + "_zones"
	}
	return ""
}

// eksZonesVariable writes zone variable zv (eksZonesVar, none for ""): at
// least one zone, exactly one for a pool whose capacity lives in one zone
// (with no default where the spec names none).
func (g *gen) eksZonesVariable(p *pool, zv string) {
	if zv == "" {
		return
	}
	checks := [][2]string{{fmt.Sprintf("length(var.%s) > 0", zv), zv + " must name at least one availability zone."}}
	def := stringList(p.Zones)
	if spec.EKSSingleAZ(p.NodePool) {
		checks = append(checks, [2]string{fmt.Sprintf("length(var.%s) == 1", zv),
			fmt.Sprintf("Pool %s uses a %s, which lives in one availability zone: name exactly one.", p.Name, spec.EKSSingleAZReason(p.NodePool))})
		if len(p.Zones) == 0 {
			def = cty.NilVal // the spec names none: the caller must
		}
	}
	variable(g.variables(), zv, fmt.Sprintf("Availability zones of pool %s; its node group gets their subnets from subnet_ids_by_zone.", p.Name), "list(string)", def, checks...)
}

// eksEFACount is the number of EFA interfaces of pool p (instance type
// first): the spec's count, else one per network card of the instance
// type; 0 without EFA.
func eksEFACount(p *pool, first string) (int, error) {
	switch {
	case !p.EFA.Enabled:
		return 0, nil
	case p.EFA.Interfaces > 0:
		return p.EFA.Interfaces, nil
	case p.known && p.machine.NetworkCards > 0:
		return p.machine.NetworkCards, nil
	}
	return 0, fmt.Errorf("pool %s: number of network cards of %s unknown; set efa.interfaces", p.Name, first)
}

// eksPlacementGroup writes the cluster placement group of pool p.
func (g *gen) eksPlacementGroup(body *body, p *pool) {
	pg := body.AppendNewBlock("resource", []string{"aws_placement_group", p.id}).Body()
	pg.SetAttributeValue("name", cty.StringVal(g.s.ClusterName+"-"+p.Name))
	pg.SetAttributeValue("strategy", cty.StringVal("cluster"))
	if len(g.s.Tags) > 0 {
		pg.SetAttributeRaw("tags", mapTokens(g.s.PoolTags(p.NodePool)))
	}
	body.AppendNewline()
}

// eksNodeGroup writes the aws_eks_node_group of pool p (instance types
// types) on AMI type ami, in the zones of zonesVar ("" for every zone),
// with its launch template where needLT.
func (g *gen) eksNodeGroup(body *body, p *pool, types []string, ami, zonesVar string, needLT bool) error {
	r := body.AppendNewBlock("resource", []string{"aws_eks_node_group", p.id}).Body()
	r.SetAttributeTraversal("cluster_name", varRef("cluster_name"))
	r.SetAttributeValue("node_group_name", cty.StringVal(p.Name))
	r.SetAttributeTraversal("node_role_arn", varRef("node_role_arn"))
	if zonesVar != "" {
		r.SetAttributeRaw("subnet_ids", expr(fmt.Sprintf("flatten([for z in var.%s : var.subnet_ids_by_zone[z]])", zonesVar)))
	} else {
		r.SetAttributeRaw("subnet_ids", expr("flatten(values(var.subnet_ids_by_zone))"))
	}
	r.SetAttributeTraversal("ami_type", varRef(p.id+"_ami_type"))
	if g.s.KubernetesVersion != "" && ami != "CUSTOM" {
		// The node group's Kubernetes version (EKS takes no version with a
		// custom AMI: the AMI is the version).
		r.SetAttributeTraversal("version", varRef("kubernetes_version"))
	}
	if p.ReleaseVersion != "" {
		r.SetAttributeTraversal("release_version", varRef(p.id+"_release_version"))
	}
	if p.Capacity != spec.CapacityCapacityBlock {
		// A Capacity Block's instance type is the launch template's
		// (eksLaunchTemplate): EKS rejects it on the node group.
		r.SetAttributeValue("instance_types", stringList(types))
	}
	r.SetAttributeValue("capacity_type", cty.StringVal(eksCapacity[p.Capacity]))
	g.setLabels(r, "labels", p)
	if tags, notes := g.eksNodeGroupTags(p); len(tags) > 0 {
		comment(r, notes...)
		r.SetAttributeRaw("tags", mapTokens(tags))
	}
	eksScaling(r, p)
	if err := eksTaints(r, p); err != nil {
		return err
	}
	if needLT {
		lt := r.AppendNewBlock("launch_template", nil).Body()
		lt.SetAttributeTraversal("id", traversal("aws_launch_template", p.id, "id"))
		lt.SetAttributeTraversal("version", traversal("aws_launch_template", p.id, "latest_version"))
	}
	return g.eksLifecycle(r, p, zonesVar)
}

// eksScaling writes a node group's scaling_config, update_config and
// node_repair_config.
func eksScaling(r *body, p *pool) {
	sc := r.AppendNewBlock("scaling_config", nil).Body()
	sc.SetAttributeValue("desired_size", cty.NumberIntVal(int64(p.Autoscaling.Min)))
	sc.SetAttributeValue("min_size", cty.NumberIntVal(int64(p.Autoscaling.Min)))
	sc.SetAttributeValue("max_size", cty.NumberIntVal(int64(p.Autoscaling.Max)))
	// rollout.maxUnavailable: a count (at most 100, which validate holds)
	// or a percentage of the node group; one node when unset.
	uc := r.AppendNewBlock("update_config", nil).Body()
	if up := matrix.PoolUpgrade(spec.ProviderEKS, p.NodePool); up.MaxUnavailablePercent > 0 {
		uc.SetAttributeValue("max_unavailable_percentage", cty.NumberIntVal(int64(up.MaxUnavailablePercent)))
	} else {
		uc.SetAttributeValue("max_unavailable", cty.NumberIntVal(int64(up.MaxUnavailable)))
	}
	if spec.EnabledOr(p.AutoRepair, false) {
		// EKS node auto repair replaces nodes whose health checks (GPU
		// included, through the node monitoring agent) fail.
		// Source: https://docs.aws.amazon.com/eks/latest/userguide/node-health.html
		nr := r.AppendNewBlock("node_repair_config", nil).Body()
		nr.SetAttributeValue("enabled", cty.True)
	}
}

// eksTaints writes a node group's taint blocks.
func eksTaints(r *body, p *pool) error {
	for _, t := range p.Taints {
		tb := r.AppendNewBlock("taint", nil).Body()
		tb.SetAttributeValue("key", cty.StringVal(t.Key))
		if t.Value != "" {
			tb.SetAttributeValue("value", cty.StringVal(t.Value))
		}
		eff, ok := taintEffects[t.Effect]
		if !ok {
			return fmt.Errorf("pool %s: taint effect %q: want NoSchedule, PreferNoSchedule or NoExecute", p.Name, t.Effect)
		}
		tb.SetAttributeValue("effect", cty.StringVal(eff))
	}
	return nil
}

// eksLifecycle writes a node group's lifecycle: the autoscaler owns the
// desired size; every zone of zonesVar has subnets; the driver guards.
func (g *gen) eksLifecycle(r *body, p *pool, zonesVar string) error {
	lc := r.AppendNewBlock("lifecycle", nil).Body()
	// The autoscaler (addons.autoscaler) owns the desired size.
	lc.SetAttributeRaw("ignore_changes", expr("[scaling_config[0].desired_size]"))
	if zonesVar != "" {
		pre := lc.AppendNewBlock("precondition", nil).Body()
		pre.SetAttributeRaw("condition", expr(fmt.Sprintf("alltrue([for z in var.%s : contains(keys(var.subnet_ids_by_zone), z)])", zonesVar)))
		pre.SetAttributeValue("error_message", cty.StringVal(fmt.Sprintf("Every zone of pool %s (%s) needs its subnets in subnet_ids_by_zone.", p.Name, zonesVar)))
	}
	return g.driverGuard(p, lc)
}

// eksAllowedAMIs are the AMI types a pool may use: GPU AMIs of its
// architecture, Bottlerocket NVIDIA exactly when Bottlerocket's built-in
// device plugin is the pool's plugin (another plugin beside it would
// advertise the GPUs twice), STANDARD only when the GPU Operator installs
// the driver.
func eksAllowedAMIs(arch, plugin string) []string {
	var out []string
	for _, a := range eksGPUAMIs[arch] {
		bottlerocket := strings.HasPrefix(a, "BOTTLEROCKET_")
		switch {
		case plugin == spec.DevicePluginBottlerocket && !bottlerocket:
		case plugin != spec.DevicePluginBottlerocket && bottlerocket:
		case strings.HasSuffix(a, "_STANDARD") && plugin != spec.DevicePluginGPUOperator:
		default:
			out = append(out, a)
		}
	}
	return out
}

// eksLaunchTemplate writes the launch template of pool p (first instance
// type first, AMI type ami, efaCount EFA interfaces): disks, local storage,
// reserved capacity, metadata options, EFA interfaces, placement and tags.
// A Capacity Block pool's instance type is set here and not on its node
// group, as EKS requires (validate refuses several types for one block).
// Source: https://docs.aws.amazon.com/eks/latest/userguide/capacity-blocks-mng.html (2026-12-03);
// terraform-aws-modules/terraform-aws-eks modules/eks-managed-node-group/main.tf
// at bef29c4d9523523e57fe898643fde2895106b339 does the same.
func (g *gen) eksLaunchTemplate(body *body, p *pool, first, ami string, efaCount int) {
	r := body.AppendNewBlock("resource", []string{"aws_launch_template", p.id}).Body()
	r.SetAttributeValue("name_prefix", cty.StringVal(g.s.ClusterName+"-"+p.Name+"-"))
	r.SetAttributeValue("description", cty.StringVal("GPU node pool "+p.Name+", generated by gpuctl"))
	r.SetAttributeValue("update_default_version", cty.True)
	if p.Capacity == spec.CapacityCapacityBlock {
		r.SetAttributeValue("instance_type", cty.StringVal(first))
	}
	eksStorageNotes(r, p, ami)
	if p.DiskSizeGB > 0 {
		bd := r.AppendNewBlock("block_device_mappings", nil).Body()
		device := "/dev/xvda"
		if strings.HasPrefix(ami, "BOTTLEROCKET_") {
			device = "/dev/xvdb" // Bottlerocket's data volume
		}
		bd.SetAttributeValue("device_name", cty.StringVal(device))
		ebs := bd.AppendNewBlock("ebs", nil).Body()
		ebs.SetAttributeValue("volume_size", cty.NumberIntVal(int64(p.DiskSizeGB)))
		ebs.SetAttributeValue("volume_type", cty.StringVal(eksVolumeType(p)))
		ebs.SetAttributeValue("encrypted", cty.StringVal("true"))
		ebs.SetAttributeValue("delete_on_termination", cty.StringVal("true"))
	}
	switch p.Capacity {
	case spec.CapacityCapacityBlock:
		mo := r.AppendNewBlock("instance_market_options", nil).Body()
		mo.SetAttributeValue("market_type", cty.StringVal("capacity-block"))
		fallthrough
	case spec.CapacityReservation:
		cr := r.AppendNewBlock("capacity_reservation_specification", nil).Body()
		t := cr.AppendNewBlock("capacity_reservation_target", nil).Body()
		t.SetAttributeTraversal("capacity_reservation_id", varRef(p.id+"_capacity_reservation_id"))
	}
	md := r.AppendNewBlock("metadata_options", nil).Body()
	md.SetAttributeValue("http_tokens", cty.StringVal("required"))
	md.SetAttributeValue("http_put_response_hop_limit", cty.NumberIntVal(matrix.EKSIMDSHopLimit))
	// One EFA interface per network card; the first is the primary
	// interface (EFA with ENA), the others efa-only unless efa.efaOnly is
	// false.
	for i := 0; i < efaCount; i++ {
		ni := r.AppendNewBlock("network_interfaces", nil).Body()
		idx := 1
		if i == 0 {
			idx = 0
		}
		ni.SetAttributeValue("device_index", cty.NumberIntVal(int64(idx)))
		ni.SetAttributeValue("network_card_index", cty.NumberIntVal(int64(i)))
		ni.SetAttributeValue("interface_type", cty.StringVal(eksInterfaceType(p, i)))
		ni.SetAttributeValue("delete_on_termination", cty.StringVal("true"))
		ni.SetAttributeRaw("security_groups", expr("concat([var.cluster_security_group_id], var.efa_security_group_ids)"))
	}
	eksPlacement(r, p)
	if len(g.s.Tags) > 0 {
		// Node group tags stay on the node group; instances and volumes get
		// the cost tags only through the launch template.
		for _, rt := range []string{"instance", "volume"} {
			ts := r.AppendNewBlock("tag_specifications", nil).Body()
			ts.SetAttributeValue("resource_type", cty.StringVal(rt))
			ts.SetAttributeRaw("tags", mapTokens(g.s.PoolTags(p.NodePool)))
		}
	}
	body.AppendNewline()
}

// eksPlacement writes the placement block of pool p's launch template
// (spec.EKSPlacementGroup): gpuctl's cluster group or a named one; none
// for a Capacity Block without a named group, whose instances EC2 places
// together itself.
func eksPlacement(r *body, p *pool) {
	switch pg := spec.EKSPlacementGroup(p.NodePool); pg {
	case "":
		if p.Capacity == spec.CapacityCapacityBlock && p.PlacementGroup == spec.PlacementGroupCluster {
			comment(r, "placementGroup cluster: no group for a Capacity Block, whose instances EC2 places close together itself.")
		}
	case spec.PlacementGroupCluster:
		pl := r.AppendNewBlock("placement", nil).Body()
		pl.SetAttributeTraversal("group_name", traversal("aws_placement_group", p.id, "name"))
	default:
		pl := r.AppendNewBlock("placement", nil).Body()
		pl.SetAttributeValue("group_name", cty.StringVal(pg))
	}
}

// eksInterfaceType is the interface type of network card i of an EFA
// pool: efa on card 0, efa-only on the others (efa where efa.efaOnly is
// false).
// Source: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html (2026-12-02).
func eksInterfaceType(p *pool, i int) string {
	if i > 0 && p.EFA.EFAOnlyCards() {
		return "efa-only"
	}
	return "efa"
}

// eksVolumeType is the EBS volume type of the pool's root (Bottlerocket:
// data) volume: diskType, else gp3.
func eksVolumeType(p *pool) string {
	if p.DiskType != "" {
		return p.DiskType
	}
	return "gp3"
}

// eksRAID0 reports whether the pool's instance store NVMe volumes are to
// be one RAID-0 array: its effective localStorage
// (matrix.EffectiveLocalStorage: asked, or a training pool whose
// instance types have NVMe instance store; never on EBS-only types).
func eksRAID0(p *pool) bool {
	return matrix.EffectiveLocalStorage(spec.ProviderEKS, p.NodePool) == spec.LocalStorageRAID0
}

// eksNodeadmRAID0 reports whether the pool's local NVMe disks are one
// RAID-0 array set by nodeadm (an AL2023 AMI).
func eksNodeadmRAID0(p *pool, ami string) bool {
	return eksRAID0(p) && strings.HasPrefix(ami, "AL2023_")
}

// eksNodeadmRAID0UserData is the launch template user data of a pool with
// localStorage raid0: a MIME part with a nodeadm NodeConfig whose
// instance.localStorage.strategy is RAID0, which EKS merges with its own.
// Source: https://awslabs.github.io/amazon-eks-ami/nodeadm/doc/api/ and
// https://docs.aws.amazon.com/eks/latest/userguide/launch-templates.html (2026-12-02).
const eksNodeadmRAID0UserData = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n--BOUNDARY\nContent-Type: application/node.eks.aws\n\n---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  instance:\n    localStorage:\n      strategy: RAID0\n\n--BOUNDARY--\n"

// bottlerocketRAID0UserData is the launch template user data of a
// Bottlerocket pool with localStorage raid0: a bootstrap command that
// makes the instance store disks one array (apiclient ephemeral-storage
// init) and binds the container runtime's and kubelet's folders to it.
// Source: https://bottlerocket.dev/en/os/1.22.x/concepts/bootstrap-commands
// ("Configure ephemeral disks", 2026-12-02).
const bottlerocketRAID0UserData = `[settings.bootstrap-commands.k8s-ephemeral-storage]
commands = [
  ["apiclient", "ephemeral-storage", "init"],
  ["apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"],
]
essential = true
mode = "always"
`

// eksLocalStorageUserData is the user data that makes a raid0 pool's
// local disks one array on its AMI (nodeadm on AL2023, a bootstrap
// command on Bottlerocket); "" when the pool needs none or the AMI has no
// such setting gpuctl writes.
func eksLocalStorageUserData(p *pool, ami string) string {
	switch {
	case eksNodeadmRAID0(p, ami):
		return eksNodeadmRAID0UserData
	case eksRAID0(p) && strings.HasPrefix(ami, "BOTTLEROCKET_"):
		return bottlerocketRAID0UserData
	}
	return ""
}

// eksStorageNotes writes the pool's local storage (nodeadm user data) and
// says what of diskType and localStorage the launch template cannot
// write.
func eksStorageNotes(r *body, p *pool, ami string) {
	if p.DiskType != "" && p.DiskSizeGB == 0 {
		comment(r, fmt.Sprintf("diskType %s: gpuctl writes the volume type with diskSizeGB only (set diskSizeGB to write the volume).", p.DiskType))
	}
	switch ud := eksLocalStorageUserData(p, ami); {
	case ud != "":
		r.SetAttributeRaw("user_data", expr("base64encode("+quote(ud)+")"))
	case eksRAID0(p):
		comment(r, "localStorage raid0: gpuctl writes it for AL2023 (nodeadm) and Bottlerocket AMIs; set it in the AMI's own bootstrap for "+ami+".")
	}
}

// eksAMIShipsDriver reports whether an EKS AMI type ships the NVIDIA driver
// (its release then decides the driver version).
func eksAMIShipsDriver(ami string) bool {
	return strings.Contains(ami, "_NVIDIA") || strings.HasSuffix(ami, "_GPU")
}

// eksMinor is the Kubernetes minor of version s ("1.34"), "" when s is
// not a version.
func eksMinor(s string) string {
	v, err := matrix.ParseKubernetesVersion(s)
	if err != nil {
		return ""
	}
	return v.Minor().String()
}
