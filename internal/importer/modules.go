package importer

import (
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// Registry modules import reads, by their source without the registry
// host and submodule path.
const (
	moduleEKS = "terraform-aws-modules/eks/aws"
	moduleGKE = "terraform-google-modules/kubernetes-engine/google"
)

// module reads a module call of a module gpuctl knows or a local module
// (localmod.go); others are skipped.
func (t *tfImport) module(m *tfBlock) {
	o := t.obj(m, nil)

	src, _ := o.get("source").str()
	src = strings.TrimPrefix(src, "registry.terraform.io/")
	base, _, _ := strings.Cut(src, "//")
	switch {
	case base == moduleEKS:
		t.eksModule(o)
	case base == moduleGKE:
		t.gkeModule(o)
	case t.fabricModule(m, src):
		// cloud-foundation-fabric's gke-nodepool or gke-cluster-standard (fabric.go)
	case isLocalSource(src):
		t.followModule(m)
	case t.addonsKarpenter(o, base):
		// read for its Karpenter resources, and the NVIDIA add-ons it
		// installs (addons.go)
		t.addonModule(m, o, src)
	case t.addonModule(m, o, src):
		t.b.skip(m.addr(), "read for the NVIDIA add-ons it installs only: its other inputs install add-ons gpuctl does not import", rangeOrigin(m.rng))
	default:
		t.b.skip(m.addr(), moduleSkipReason(src), rangeOrigin(m.rng))
	}
}

// attrObj is a module argument as an object whose keys are located in its
// syntax.
func (t *tfImport) attrObj(o *hclObj, key string) (val, hcl.Expression) {
	return o.get(key), o.expr(key)
}

// eksModule reads terraform-aws-modules/eks/aws: the cluster (name and
// cluster_name, kubernetes_version and cluster_version across v20/v21)
// and eks_managed_node_groups, each over eks_managed_node_group_defaults.
func (t *tfImport) eksModule(o *hclObj) {
	t.b.provider(spec.ProviderEKS, o.origin())
	t.b.clusterRead = true
	s := &t.b.cs.Spec
	for _, k := range []string{"name", "cluster_name"} {
		t.b.strIfEmpty("spec.clusterName", o.get(k), &s.ClusterName)
	}
	for _, k := range []string{"kubernetes_version", "cluster_version"} {
		t.version(o.get(k))
	}
	var defaults obj
	if dv, de := t.attrObj(o, "eks_managed_node_group_defaults"); !dv.absent() {
		defaults = objOf(t.e, dv, de, o.scope)
		t.skipAttrs(defaults, eksModuleGroupAttrs)
	}
	groups, ge := t.attrObj(o, "eks_managed_node_groups")
	if groups.unknown() && keysOf(groups) == nil && syntaxKeys(t.e, ge) == nil {
		t.b.skip(o.name()+" eks_managed_node_groups", "unknown until Terraform applies: it depends on "+strings.Join(groups.why, ", "), groups.at)
		return
	}
	keys, objs := mapObjs(t.e, groups, ge)
	dpool := t.poolDefaults(o)
	for i, k := range keys {
		g := objs[i]
		if defaults != nil {
			g = &mergedObj{layers: []obj{objs[i], defaults}}
		}
		g = withDefaults(g, dpool)
		pb := t.eksModuleGroup(k, g)
		if !t.gpuPool(pb, false, o.name()+" eks_managed_node_groups."+k, g.origin()) {
			continue
		}
		t.eksModuleEFA(pb, g, eksModuleVersionOf(o))
		t.skipAttrs(objs[i], eksModuleGroupAttrs)
		t.b.addPool(pb)
	}
	t.eksSelfManaged(o)
}

// eksSelfManaged lists each of a module call's self_managed_node_groups
// as skipped: an Auto Scaling group of the module's own launch template,
// not an EKS managed node group, which is what a spec's EKS pool is.
func (t *tfImport) eksSelfManaged(o *hclObj) {
	groups, ge := t.attrObj(o, "self_managed_node_groups")
	keys, objs := mapObjsIn(t.e, groups, ge, o.scope)
	for i, k := range keys {
		t.b.skip(o.name()+" self_managed_node_groups."+k, "a self-managed node group (an Auto Scaling group the module launches): gpuctl imports EKS managed node groups, so its GPU settings are not checked", objs[i].origin())
	}
}

// eksModuleGroup reads one of eks_managed_node_groups (key k, over the
// defaults): its name (else the key), AMI, release, instance and capacity
// types, size, labels, taints, disk, local storage and the node group's
// options (its EFA, which depends on the module's release, eksModule
// reads).
func (t *tfImport) eksModuleGroup(k string, g obj) *poolB {
	name, _ := g.get("name").str()
	if name == "" {
		name = k
	}
	pb := newPool(spec.ProviderEKS, name, g.origin())
	p := &pb.p
	pb.str(".osImage", g.get("ami_type"), &p.OSImage)
	if !pb.str(".releaseVersion", g.get("ami_release_version"), &p.ReleaseVersion) {
		pb.str(".releaseVersion", g.get("release_version"), &p.ReleaseVersion)
	}
	t.eksInstanceTypes(pb, g.get("instance_types"))
	var ct string
	if pb.str(".capacity", g.get("capacity_type"), &ct) {
		p.Capacity = eksCapacityTypes[ct]
	}
	pb.num(".autoscaling.min", g.get("min_size"), &p.Autoscaling.Min)
	pb.num(".autoscaling.max", g.get("max_size"), &p.Autoscaling.Max)
	t.desiredSize(g.get("desired_size"))
	pb.labels(".labels", g.get("labels"), &p.Labels)
	t.eksModuleTaints(pb, g)
	if !pb.num(".diskSizeGB", g.get("disk_size"), &p.DiskSizeGB) {
		eksModuleDisk(pb, g)
	}
	eksModuleOptions(pb, g)
	nodeadmLocalStorage(t.e, pb, g.get("cloudinit_pre_nodeadm"))
	return pb
}

// eksModuleTaints reads a node group's taints: a map of {key, value,
// effect} (v20+), or a list.
func (t *tfImport) eksModuleTaints(pb *poolB, g obj) {
	tv := g.get("taints")
	if !tv.known() || !(tv.v.Type().IsObjectType() || tv.v.Type().IsMapType()) {
		for _, to := range g.blocks("taints") {
			pb.taint(to)
		}
		return
	}
	_, ts := mapObjs(t.e, tv, subExpr(g, "taints"))
	for _, to := range ts {
		pb.taint(to)
	}
}

// subExpr is the syntax of g's value at key where g is a value of the
// configuration (an item of a map, or the layer of a merge that holds the
// key); nil when there is none.
func subExpr(g obj, key string) hcl.Expression {
	switch o := g.(type) {
	case *valObj:
		return o.sub(key)
	case *mergedObj:
		for _, l := range o.layers {
			if !l.get(key).absent() {
				return subExpr(l, key)
			}
		}
	}
	return nil
}

// eksModuleDisk reads the disk size from the first EBS volume of a node
// group's block_device_mappings.
func eksModuleDisk(pb *poolB, g obj) {
	p := &pb.p
	for _, bd := range g.blocks("block_device_mappings") {
		for _, dev := range bdmDevices(bd) {
			if ebs := first(dev.blocks("ebs")); ebs != nil && p.DiskSizeGB == 0 {
				pb.num(".diskSizeGB", ebs.get("volume_size"), &p.DiskSizeGB)
				pb.str(".diskType", ebs.get("volume_type"), &p.DiskType)
			}
		}
	}
}

// eksModuleOptions reads a node group's EFA support, placement group,
// capacity reservation and node repair.
func eksModuleOptions(pb *poolB, g obj) {
	p := &pb.p
	if pg, ok := g.get("create_placement_group").bool(); ok && pg {
		p.PlacementGroup = "cluster"
		pb.at(".placementGroup", g.get("create_placement_group").at)
	}
	eksModuleReservation(pb, g)
	if nr := first(g.blocks("node_repair_config")); nr != nil {
		pb.flag(".autoRepair", nr.get("enabled"), &p.AutoRepair)
	}
}

// eksModuleReservation reads a node group's capacity reservation target
// (a reservation's id, or a resource group of reservations: its ARN) and
// its instance_market_options capacity-block market.
func eksModuleReservation(pb *poolB, g obj) {
	p := &pb.p
	if mo := first(g.blocks("instance_market_options")); mo != nil {
		if mt, _ := mo.get("market_type").str(); mt == "capacity-block" {
			p.Capacity = spec.CapacityCapacityBlock
			pb.at(".capacity", mo.get("market_type").at)
		}
	}
	cr := first(g.blocks("capacity_reservation_specification"))
	if cr == nil {
		return
	}
	tg := first(cr.blocks("capacity_reservation_target"))
	if tg == nil {
		return
	}
	id := tg.get("capacity_reservation_id")
	if id.absent() {
		id = tg.get("capacity_reservation_resource_group_arn")
	}
	if id.absent() {
		return
	}
	if p.Capacity != spec.CapacityCapacityBlock {
		p.Capacity = spec.CapacityReservation
		pb.at(".capacity", id.at)
	}
	pb.str(".reservation", id, &p.Reservation)
}

// bdmDevices are the devices of block_device_mappings: a map of devices
// (the module's form) or the device itself.
func bdmDevices(bd obj) []obj {
	vo, ok := bd.(*valObj)
	if !ok || !vo.x.known() {
		return []obj{bd}
	}
	if _, hasEBS := childValue(vo.x.v, "ebs"); hasEBS {
		return []obj{bd}
	}
	_, objs := mapObjs(vo.e, vo.x, vo.expr)
	return objs
}

// moduleZones are the zones the Google module's pools run in when they
// set no node_locations: the module's zones input (the cluster's node
// locations), else none (GKE's default zones of the region).
func moduleZones(o *hclObj, pool []string) []string {
	if len(pool) > 0 {
		return pool
	}
	zs, _ := o.get("zones").strs()
	return zs
}

// gkeModule reads terraform-google-modules/kubernetes-engine/google (and
// its submodules): the cluster and node_pools, with node_pools_labels and
// node_pools_taints ("all" and the pool's own). The module's defaults that
// reach the API (moddefaults.yaml, by the call's version) stand under
// what the call sets: the release channel, a pool's machine and image
// type, disk, repair and autoscaling bounds.
// autopilotReason is why an Autopilot cluster has no node pool to import.
// Source: https://cloud.google.com/kubernetes-engine/docs/how-to/autopilot-gpus (2026-12-02).
const autopilotReason = "an Autopilot cluster: GKE creates its GPU nodes from the workloads' nodeSelectors (cloud.google.com/gke-accelerator), so there is no node pool to import; gpuctl judges node pools (Standard clusters, node auto-provisioning)"

func (t *tfImport) gkeModule(o *hclObj) {
	t.b.provider(spec.ProviderGKE, o.origin())
	t.b.clusterRead = true
	src, _ := o.get("source").str()
	dpool, dcluster := t.moduleDefaultsFor(o, src)
	c := withDefaults(o, dcluster)
	s := &t.b.cs.Spec
	t.b.strIfEmpty("spec.clusterName", o.get("name"), &s.ClusterName)
	t.b.strIfEmpty("spec.region", o.get("region"), &s.Region)
	t.version(o.get("kubernetes_version"))
	t.b.strIfEmpty("spec.releaseChannel", c.get("release_channel"), &s.ReleaseChannel)
	if strings.Contains(src, "autopilot") {
		t.b.skip(o.name(), autopilotReason, o.origin())
		return
	}
	lt := t.modulePoolSettings(o)
	pools, pe := t.attrObj(o, "node_pools")
	for _, np := range valObjs(t.e, pools, pe) {
		name, _ := np.get("name").str()
		if name == "" {
			name = "pool"
		}
		np = withDefaults(np, dpool)
		pb := newPool(spec.ProviderGKE, name, np.origin())
		accel := t.gkeModulePool(o, pb, np)
		for _, lv := range lt.labelsFor(name) {
			pb.labels(".labels", lv, &pb.p.Labels)
		}
		for _, to := range lt.taintsFor(name) {
			pb.taint(to)
		}
		if !t.gpuPool(pb, accel, o.name()+" node_pools "+name, np.origin()) {
			continue
		}
		t.skipAttrs(np, gkeModulePoolAttrs)
		t.b.addPool(pb)
	}
}

// modulePools are the Google module's node_pools_labels and
// node_pools_taints by key ("all" or a pool's name).
type modulePools struct {
	e            *evaluator
	lkeys, tkeys []string
	lobjs, tobjs []obj
}

// modulePoolSettings reads node_pools_labels and node_pools_taints of
// module o.
func (t *tfImport) modulePoolSettings(o *hclObj) modulePools {
	labels, le := t.attrObj(o, "node_pools_labels")
	taints, te := t.attrObj(o, "node_pools_taints")
	m := modulePools{e: t.e}
	m.lkeys, m.lobjs = mapObjs(t.e, labels, le)
	m.tkeys, m.tobjs = mapObjs(t.e, taints, te)
	return m
}

// labelsFor are the label maps of pool name: "all"'s and its own.
func (m modulePools) labelsFor(name string) []val {
	var out []val
	for i, k := range m.lkeys {
		if k == "all" || k == name {
			vo := m.lobjs[i].(*valObj)
			out = append(out, vo.x)
		}
	}
	return out
}

// taintsFor are the taints of pool name: "all"'s and its own.
func (m modulePools) taintsFor(name string) []obj {
	var out []obj
	for i, k := range m.tkeys {
		if k == "all" || k == name {
			vo := m.tobjs[i].(*valObj)
			out = append(out, valObjs(m.e, vo.x, vo.expr)...)
		}
	}
	return out
}

// gkeModulePool reads one of the Google module's node_pools (np) into pb:
// machine, zones, image, disk, size, management, capacity, placement and
// GPUs; it returns whether the pool names an accelerator type.
func (t *tfImport) gkeModulePool(o *hclObj, pb *poolB, np obj) bool {
	p := &pb.p
	pb.str(".machineType", np.get("machine_type"), &p.MachineType)
	var locs string
	if pb.str(".zones", np.get("node_locations"), &locs) {
		for _, z := range strings.Split(locs, ",") {
			if z = strings.TrimSpace(z); z != "" {
				p.Zones = append(p.Zones, z)
			}
		}
	}
	pb.gkeImage(np.get("image_type"))
	pb.num(".diskSizeGB", np.get("disk_size_gb"), &p.DiskSizeGB)
	pb.str(".diskType", np.get("disk_type"), &p.DiskType)
	t.gkeModuleSize(o, pb, np)
	pb.flag(".autoRepair", np.get("auto_repair"), &p.AutoRepair)
	pb.flag(".autoUpgrade", np.get("auto_upgrade"), &p.AutoUpgrade)
	if sp, ok := np.get("spot").bool(); ok && sp {
		p.Capacity = spec.CapacitySpot
		pb.at(".capacity", np.get("spot").at)
	} else if pe, ok := np.get("preemptible").bool(); ok && pe {
		p.Capacity = spec.CapacitySpot
		pb.at(".capacity", np.get("preemptible").at)
	}
	if pp, _ := np.get("placement_policy").str(); pp == "COMPACT" {
		p.Role = spec.RoleTraining
		pb.at(".role", np.get("placement_policy").at)
	}
	gkeLocalSSDs(pb, np.get("local_ssd_ephemeral_storage_count"))
	return gkeModuleGPU(pb, np)
}

// gkeModuleSize reads a module pool's size: node_count per zone without
// autoscaling, else the total counts or the per-zone counts (the module's
// defaults, under the pool, where unset).
func (t *tfImport) gkeModuleSize(o *hclObj, pb *poolB, np obj) {
	p := &pb.p
	zones, zwhy := gkeZones(moduleZones(o, p.Zones), t.b.cs.Spec.Region)
	if as, ok := np.get("autoscaling").bool(); ok && !as {
		t.fixedSize(pb, np.get("node_count"), zones, zwhy)
		return
	}
	moduleCount(pb, np, ".autoscaling.min", "total_min_count", "min_count", &p.Autoscaling.Min, zones, zwhy)
	moduleCount(pb, np, ".autoscaling.max", "total_max_count", "max_count", &p.Autoscaling.Max, zones, zwhy)
}

// moduleCount reads one autoscaling bound of a module pool into dst (spec
// field): its total argument, else its per-zone argument count over zones
// (zwhy: why they are unknown).
func moduleCount(pb *poolB, np obj, field, total, count string, dst *int, zones int, zwhy string) {
	if pb.num(field, np.get(total), dst) {
		return
	}
	if x := np.get(count); !x.absent() {
		pb.perZone(field, x, dst, zones, zwhy)
	}
}

// gkeModuleSharing are GKE's GPU sharing strategies as the spec names them.
var gkeModuleSharing = map[string]string{"TIME_SHARING": spec.SharingTimeSlicing, "MPS": spec.SharingMPS}

// gkeModuleGPU reads a module pool's accelerator, driver, MIG partition and
// GPU sharing; it returns whether the pool names an accelerator type.
func gkeModuleGPU(pb *poolB, np obj) bool {
	p := &pb.p
	accel := pb.str(".gpu.type", np.get("accelerator_type"), &p.GPU.Type)
	pb.num(".gpu.count", np.get("accelerator_count"), &p.GPU.Count)
	pb.str(".gpu.driver", np.get("gpu_driver_version"), &p.GPU.Driver)
	var part string
	if pb.str(".gpu.sharing.migProfile", np.get("gpu_partition_size"), &part) {
		p.GPU.Sharing = spec.Sharing{Strategy: spec.SharingMIG, MIGProfile: part}
	}
	var st string
	if pb.str(".gpu.sharing.strategy", np.get("gpu_sharing_strategy"), &st) {
		if strategy, ok := gkeModuleSharing[st]; ok {
			p.GPU.Sharing.Strategy = strategy
		}
		pb.num(".gpu.sharing.replicas", np.get("max_shared_clients_per_gpu"), &p.GPU.Sharing.Replicas)
	}
	return accel
}
