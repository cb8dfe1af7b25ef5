package importer

import (
	"net/url"
	"regexp"
	"strings"

	version "github.com/hashicorp/go-version"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// Google's cloud-foundation-fabric GKE modules, called by a git source
// (git::https://github.com/GoogleCloudPlatform/cloud-foundation-fabric.git//modules/gke-nodepool?ref=v30.0.0)
// or a github.com one. Their inputs, as read here, are those of
// modules/gke-nodepool/variables.tf and main.tf and
// modules/gke-cluster-standard/variables.tf and main.tf of
// https://github.com/GoogleCloudPlatform/cloud-foundation-fabric at
// v30.0.0 (commit fa58c22562401c879e4efcd10cf0bedc6ebdded5) and at the
// newest tag, v57.0.0 (commit e70658563e38197eebc8e5399b7f0be828c4dab1);
// checked 2026-12-02.

// fabricRepo is the repository, as a source names it without scheme.
const fabricRepo = "github.com/googlecloudplatform/cloud-foundation-fabric"

// fabricNewest is the newest tag read: a call without a release ref (the
// default branch, a branch or a commit) is read as it defines the inputs.
const fabricNewest = "v57.0.0"

// fabricSource is the submodule (gke-nodepool) and the ref of a module
// source in the cloud-foundation-fabric repository; ok is false for
// another source.
func fabricSource(src string) (sub, ref string, ok bool) {
	s := strings.TrimPrefix(src, "git::")
	for _, p := range []string{"https://", "http://", "ssh://", "git@"} {
		s = strings.TrimPrefix(s, p)
	}
	s = strings.Replace(s, "github.com:", "github.com/", 1)
	repo, rest, found := strings.Cut(s, "//")
	if !found {
		return "", "", false
	}
	repo = strings.TrimSuffix(strings.TrimSuffix(repo, "/"), ".git")
	if strings.ToLower(repo) != fabricRepo {
		return "", "", false
	}
	path, query, _ := strings.Cut(rest, "?")
	if q, err := url.ParseQuery(query); err == nil {
		ref = q.Get("ref")
	}
	sub = strings.TrimPrefix(strings.Trim(path, "/"), "modules/")
	return sub, ref, true
}

// fabricModule reads module call m of source src when it is one of
// cloud-foundation-fabric's GKE modules gpuctl reads (gke-nodepool,
// gke-cluster-standard, gke-cluster-autopilot), each instance of its
// count or for_each; it returns false for another source or submodule.
func (t *tfImport) fabricModule(m *tfBlock, src string) bool {
	sub, ref, ok := fabricSource(src)
	if !ok {
		return false
	}
	var read func(*hclObj, string)
	switch sub {
	case "gke-nodepool":
		read = t.fabricNodepool
	case "gke-cluster-standard":
		read = t.fabricCluster
	case "gke-cluster-autopilot":
		read = t.fabricAutopilot
	default:
		return false
	}
	t.fabricRefNote(m, ref)
	skips := len(t.b.skipped)
	_, objs := t.instances(m)
	if len(objs) == 0 && len(t.b.skipped) == skips && t.c.budget.err() == nil {
		t.b.skip(m.addr(), "count or for_each makes no instance of it: it creates nothing", rangeOrigin(m.rng))
	}
	for _, o := range objs {
		read(o, ref)
	}
	return true
}

// fabricRelease is the release of ref (v30.0.0), nil for no ref, a branch
// or a commit.
func fabricRelease(ref string) *version.Version {
	if !fabricTag.MatchString(ref) {
		return nil
	}
	v, err := version.NewVersion(ref)
	if err != nil {
		return nil
	}
	return v
}

var fabricTag = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+$`)

// fabricBefore reports whether ref is a release before v (a ref that is no
// release reads as the newest).
func fabricBefore(ref, v string) bool {
	r := fabricRelease(ref)
	return r != nil && r.LessThan(version.Must(version.NewVersion(v)))
}

// fabricRefNote lists, for a call whose ref is no release tag, that its
// inputs were read as the newest tag read defines them.
func (t *tfImport) fabricRefNote(m *tfBlock, ref string) {
	if fabricRelease(ref) != nil {
		return
	}
	why := "the source names no ref (the repository's default branch)"
	if ref != "" {
		why = "the source's ref is not a release tag"
	}
	t.b.skip(m.addr()+" source", why+": its inputs were read as cloud-foundation-fabric "+fabricNewest+" defines them", rangeOrigin(m.rng))
}

// fabricCluster reads modules/gke-cluster-standard: name, location,
// min_master_version and release_channel (a string; null, its default,
// is GKE's own). The module removes the default node pool
// (remove_default_node_pool = true at v30.0.0, default_nodepool.remove_pool
// at v57.0.0), so it holds no pool.
func (t *tfImport) fabricCluster(o *hclObj, _ string) {
	t.b.clusterRead = true
	t.b.provider(spec.ProviderGKE, o.origin())
	s := &t.b.cs.Spec
	t.b.strIfEmpty("spec.clusterName", o.get("name"), &s.ClusterName)
	t.b.strIfEmpty("spec.region", o.get("location"), &s.Region)
	t.version(o.get("min_master_version"))
	t.b.strIfEmpty("spec.releaseChannel", o.get("release_channel"), &s.ReleaseChannel)
}

// fabricAutopilot lists a modules/gke-cluster-autopilot instance as an
// Autopilot cluster (no node pool to import), with its name and location.
func (t *tfImport) fabricAutopilot(o *hclObj, _ string) {
	t.b.provider(spec.ProviderGKE, o.origin())
	s := &t.b.cs.Spec
	t.b.strIfEmpty("spec.clusterName", o.get("name"), &s.ClusterName)
	t.b.strIfEmpty("spec.region", o.get("location"), &s.Region)
	t.b.skip(o.name(), autopilotReason, o.origin())
}

// fabricNodepool reads one instance of modules/gke-nodepool at ref: the
// cluster it joins, and the pool from node_config, nodepool_config,
// node_count, node_locations, labels, taints and reservation_affinity.
func (t *tfImport) fabricNodepool(o *hclObj, ref string) {
	t.b.provider(spec.ProviderGKE, o.origin())
	s := &t.b.cs.Spec
	if s.ClusterName == "" {
		t.b.str("spec.clusterName", o.get("cluster_name"), &s.ClusterName)
	}
	t.b.strIfEmpty("spec.region", o.get("location"), &s.Region)
	t.version(o.get("gke_version"))
	name, _ := o.get("name").str()
	if name == "" {
		name = lastLabel(o.name())
	}
	pb := newPool(spec.ProviderGKE, name, o.origin())
	at := o.origin()
	at.Note = "cloud-foundation-fabric modules/gke-nodepool " + fabricRefShown(ref)
	pb.origins[".name"] = at
	ncRaw := subObj(t.e, o, "node_config")
	nc := withDefaults(orEmpty(ncRaw, o.name()+" node_config", o.origin()), fabricNodeDefaults(o, ncRaw, ref))
	fabricNodeConfig(pb, nc)
	accel := t.fabricAccelerator(pb, ncRaw)
	pb.strs(".zones", o.get("node_locations"), &pb.p.Zones)
	pc := subObj(t.e, o, "nodepool_config")
	t.fabricSize(o, pb, pc)
	t.fabricManagement(pb, pc)
	t.fabricLabels(o, pb, ref)
	t.fabricTaints(o, pb)
	fabricReservation(pb, subObj(t.e, o, "reservation_affinity"))
	if !t.gpuPool(pb, accel, o.name(), o.origin()) {
		return
	}
	t.skipAttrs(o, fabricPoolAttrs)
	t.skipAttrs(ncRaw, fabricNodeConfigAttrs)
	t.skipAttrs(pc, fabricNodepoolConfigAttrs)
	t.b.addPool(pb)
}

// fabricRefShown is ref as the pool's origin note names it.
func fabricRefShown(ref string) string {
	if ref == "" {
		return "(no ref)"
	}
	if len(ref) > 64 || !fabricSafeRef.MatchString(ref) {
		return "(a ref)"
	}
	return "ref " + ref
}

var fabricSafeRef = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)

// fabricNodeDefaults are the module's defaults of node_config that reach
// the API: disk_type "pd-balanced", the variable's default (the whole
// node_config, before v36.0.0: a call's own node_config leaves disk_type
// null, GKE's default) and, from v36.0.0 (commit
// 2552146e69ece5de166fc0f2f283348c91008503), optional(string,
// "pd-balanced") within it.
func fabricNodeDefaults(o *hclObj, nc obj, ref string) obj {
	if nc != nil && fabricBefore(ref, "36.0.0") {
		return nil
	}
	return &defaultsObj{values: map[string]any{"disk_type": "pd-balanced"}, what: "cloud-foundation-fabric modules/gke-nodepool", at: o.origin()}
}

// orEmpty is o, or an object with no keys (named what) when o is nil.
func orEmpty(o obj, what string, at Origin) obj {
	if o != nil {
		return o
	}
	return &defaultsObj{what: what, at: at}
}

// subObj is the object value of attribute key of o (a module call or one
// of its object values); nil when it is absent.
func subObj(e *evaluator, o obj, key string) obj {
	switch v := o.(type) {
	case *hclObj:
		return objOf(e, v.get(key), v.expr(key), v.scope)
	case *valObj:
		return objOf(e, v.get(key), v.sub(key), v.scope)
	case *unknownObj:
		return &unknownObj{what: v.what + "." + key, at: v.at, why: v.why}
	}
	return nil
}

// fabricNodeConfig reads node_config's machine, image, boot disk (boot_disk
// over disk_size_gb and disk_type, from v57.0.0's main.tf try()), local
// SSDs for ephemeral storage and capacity (spot, unless preemptible: the
// module's spot = spot == true && preemptible != true).
func fabricNodeConfig(pb *poolB, nc obj) {
	p := &pb.p
	pb.str(".machineType", nc.get("machine_type"), &p.MachineType)
	pb.gkeImage(nc.get("image_type"))
	bd := first(nc.blocks("boot_disk"))
	if bd == nil {
		bd = &defaultsObj{}
	}
	pb.num(".diskSizeGB", either(bd.get("size_gb"), nc.get("disk_size_gb")), &p.DiskSizeGB)
	pb.str(".diskType", either(bd.get("type"), nc.get("disk_type")), &p.DiskType)
	gkeLocalSSDs(pb, either(nc.get("ephemeral_storage_local_ssd_count"), nc.get("ephemeral_ssd_count")))
	if pe, ok := nc.get("preemptible").bool(); ok && pe {
		p.Capacity = spec.CapacitySpot
		pb.at(".capacity", nc.get("preemptible").at)
	} else if sp, ok := nc.get("spot").bool(); ok && sp {
		p.Capacity = spec.CapacitySpot
		pb.at(".capacity", nc.get("spot").at)
	} else if fs, ok := nc.get("flex_start").bool(); ok && fs {
		p.Capacity = spec.CapacityFlexStart
		pb.at(".capacity", nc.get("flex_start").at)
	}
}

// either is x, else (x absent) y: the module's try(a, b) of two inputs
// of which a call sets one.
func either(x, y val) val {
	if x.absent() {
		return y
	}
	return x
}

// fabricAccelerator reads node_config.guest_accelerator {type, count,
// gpu_driver {version, partition_size, max_shared_clients_per_gpu}}: the
// driver GKE installs (none for GPU_DRIVER_VERSION_UNSPECIFIED), a MIG
// partition, and time-sharing (the module writes TIME_SHARING whenever
// max_shared_clients_per_gpu is set). It returns whether the pool has one.
func (t *tfImport) fabricAccelerator(pb *poolB, nc obj) bool {
	if nc == nil {
		return false
	}
	ga := subObj(t.e, nc, "guest_accelerator")
	if ga == nil {
		return false
	}
	p := &pb.p
	pb.at(".gpu", ga.origin())
	accel := pb.str(".gpu.type", ga.get("type"), &p.GPU.Type)
	pb.num(".gpu.count", ga.get("count"), &p.GPU.Count)
	gd := subObj(t.e, ga, "gpu_driver")
	if gd == nil {
		return accel || !ga.get("type").absent()
	}
	if pb.str(".gpu.driver", gd.get("version"), &p.GPU.Driver) && p.GPU.Driver == "GPU_DRIVER_VERSION_UNSPECIFIED" {
		p.GPU.Driver = ""
		delete(pb.origins, ".gpu.driver")
	}
	var part string
	if pb.str(".gpu.sharing.migProfile", gd.get("partition_size"), &part) {
		p.GPU.Sharing = spec.Sharing{Strategy: spec.SharingMIG, MIGProfile: part}
	}
	if pb.num(".gpu.sharing.replicas", gd.get("max_shared_clients_per_gpu"), &p.GPU.Sharing.Replicas) {
		p.GPU.Sharing.Strategy = spec.SharingTimeSlicing
		pb.at(".gpu.sharing.strategy", gd.get("max_shared_clients_per_gpu").at)
	}
	return accel || !ga.get("type").absent()
}

// fabricSize reads the pool's size: nodepool_config.autoscaling's
// min_node_count and max_node_count (totals with use_total_nodes, else per
// zone), or without autoscaling node_count's current, else initial (per
// zone; the variable's default is {initial = 1}).
func (t *tfImport) fabricSize(o *hclObj, pb *poolB, pc obj) {
	p := &pb.p
	loc, _ := o.get("location").str()
	zones, zwhy := gkeZones(p.Zones, loc)
	var as obj
	if pc != nil {
		as = subObj(t.e, pc, "autoscaling")
	}
	if as == nil {
		nco := withDefaults(orEmpty(subObj(t.e, o, "node_count"), o.name()+" node_count", o.origin()),
			&defaultsObj{values: map[string]any{"initial": 1}, what: "cloud-foundation-fabric modules/gke-nodepool", at: o.origin()})
		n := nco.get("current")
		if n.absent() {
			n = nco.get("initial")
		}
		t.fixedSize(pb, n, zones, zwhy)
		return
	}
	pb.at(".autoscaling", as.origin())
	if total, _ := as.get("use_total_nodes").bool(); total {
		pb.num(".autoscaling.min", as.get("min_node_count"), &p.Autoscaling.Min)
		pb.num(".autoscaling.max", as.get("max_node_count"), &p.Autoscaling.Max)
		return
	}
	pb.perZone(".autoscaling.min", as.get("min_node_count"), &p.Autoscaling.Min, zones, zwhy)
	pb.perZone(".autoscaling.max", as.get("max_node_count"), &p.Autoscaling.Max, zones, zwhy)
}

// fabricManagement reads nodepool_config's management {auto_repair,
// auto_upgrade} and placement_policy {type} (from v57.0.0's variables.tf;
// v30.0.0 has none): COMPACT is a training pool's placement.
func (t *tfImport) fabricManagement(pb *poolB, pc obj) {
	if pc == nil {
		return
	}
	p := &pb.p
	if m := subObj(t.e, pc, "management"); m != nil {
		pb.flag(".autoRepair", m.get("auto_repair"), &p.AutoRepair)
		pb.flag(".autoUpgrade", m.get("auto_upgrade"), &p.AutoUpgrade)
	}
	if pp := subObj(t.e, pc, "placement_policy"); pp != nil {
		if ty, _ := pp.get("type").str(); ty == "COMPACT" {
			p.Role = spec.RoleTraining
			pb.at(".role", pp.origin())
		}
	}
}

// fabricLabels reads the Kubernetes labels of the nodes: k8s_labels from
// v32.0.0 (commit 250ea851fd74ba8ab935f566f0015ea95886cbb5), whose labels
// are the VMs' resource labels; labels before it.
func (t *tfImport) fabricLabels(o *hclObj, pb *poolB, ref string) {
	if fabricBefore(ref, "32.0.0") {
		pb.labels(".labels", o.get("labels"), &pb.p.Labels)
		return
	}
	pb.labels(".labels", o.get("k8s_labels"), &pb.p.Labels)
}

// fabricTaints reads taints, a map of {value, effect} by the taint's key.
func (t *tfImport) fabricTaints(o *hclObj, pb *poolB) {
	x, expr := t.attrObj(o, "taints")
	keys, objs := mapObjsIn(t.e, x, expr, o.scope)
	if x.unknown() && len(keys) == 0 {
		pb.unknown(".taints", x)
		return
	}
	for i, k := range keys {
		pb.taint(keyedObj{obj: objs[i], key: k})
	}
}

// keyedObj is an item of a map with its key as the attribute "key".
type keyedObj struct {
	obj
	key string
}

func (k keyedObj) get(key string) val {
	if key == "key" {
		return val{v: cty.StringVal(k.key), what: k.name(), at: k.origin()}
	}
	return k.obj.get(key)
}

// fabricReservation reads reservation_affinity: a specific reservation's
// first value.
func fabricReservation(pb *poolB, ra obj) {
	if ra == nil {
		return
	}
	p := &pb.p
	if ty, _ := ra.get("consume_reservation_type").str(); ty == "SPECIFIC_RESERVATION" {
		var names []string
		if pb.strs(".reservation", ra.get("values"), &names) && len(names) > 0 {
			p.Capacity, p.Reservation = spec.CapacityReservation, names[0]
			pb.at(".capacity", ra.origin())
		}
	}
}

// fabricPoolAttrs are gke-nodepool's inputs import reads (the cluster's
// name and location, the node version and the pool's own).
var fabricPoolAttrs = poolAttrs{
	read: setOf("name", "cluster_name", "location", "gke_version", "node_config", "nodepool_config", "node_count",
		"node_locations", "labels", "k8s_labels", "taints", "reservation_affinity"),
	skip: fabricSkips,
}

// fabricNodeConfigAttrs are the keys of gke-nodepool's node_config import
// reads.
var fabricNodeConfigAttrs = poolAttrs{
	read: setOf("machine_type", "image_type", "boot_disk", "disk_size_gb", "disk_type", "ephemeral_ssd_count",
		"ephemeral_storage_local_ssd_count", "guest_accelerator", "spot", "preemptible", "flex_start"),
	skip: fabricSkips,
}

// fabricNodepoolConfigAttrs are the keys of gke-nodepool's nodepool_config
// import reads.
var fabricNodepoolConfigAttrs = poolAttrs{read: setOf("autoscaling", "management", "placement_policy"), skip: fabricSkips}

// fabricSkips are the reasons for gke-nodepool's inputs without a spec
// field, over the google provider's (gkeSkips).
var fabricSkips = func() map[string]string {
	m := map[string]string{
		"project_id":            "no spec field (the Google Cloud project)",
		"cluster_id":            "no spec field (the cluster's id: import reads cluster_name)",
		"pod_range":             "no spec field (pod ranges and additional networks)",
		"sole_tenant_nodegroup": "no spec field (sole-tenant node group)",
		"resource_manager_tags": "no spec field (cloud resource tags)",
		"gke_version":           "not an input of gke-nodepool's node_config (it is one of the module's own inputs): Terraform drops it",
	}
	for k, v := range gkeSkips {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	return m
}()

// moduleSkipReason is why a module call of source src is not imported: it
// names the source (when it reads as a plain module address) and the
// modules gpuctl reads.
func moduleSkipReason(src string) string {
	what := moduleNotImported
	if src != "" && len(src) <= 200 && fabricSafeSource.MatchString(src) {
		what += " (" + src + ")"
	}
	return what + ": it reads " + moduleEKS + ", " + moduleGKE + ", cloud-foundation-fabric's modules/gke-nodepool and modules/gke-cluster-standard, and local modules"
}

const moduleNotImported = "module gpuctl does not import"

// skipShown is a skipped item as the no-pool error lists it: a module
// gpuctl does not import with its source ("module.x (git::...)").
func skipShown(s Skipped) string {
	r, ok := strings.CutPrefix(s.Reason, moduleNotImported+" (")
	if !ok {
		return s.What
	}
	if i := strings.IndexAny(r, ");"); i > 0 {
		return s.What + " (" + r[:i] + ")"
	}
	return s.What
}

// fabricSafeSource is a module source of the characters addresses use.
var fabricSafeSource = regexp.MustCompile(`^[A-Za-z0-9._:/@?=&+~-]+$`)
