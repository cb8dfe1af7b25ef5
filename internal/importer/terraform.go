package importer

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// tfImport is one Terraform import in progress.
type tfImport struct {
	b *builder
	c *tfConfig
	e *evaluator
	// kp are the Karpenter documents of manifests and chart values read.
	kp kpSet
}

// The resource types import reads; every other resource is listed as
// skipped.
var tfReaders = map[string]func(*tfImport, *tfBlock){
	"google_container_cluster":   (*tfImport).gkeCluster,
	"google_container_node_pool": (*tfImport).gkeNodePool,
	"aws_eks_cluster":            (*tfImport).eksCluster,
	"aws_eks_node_group":         (*tfImport).eksNodeGroup,
	"helm_release":               (*tfImport).helmRelease,
	"kubectl_manifest":           (*tfImport).kubectlManifest,
	"kubernetes_manifest":        (*tfImport).kubernetesManifest,
	// read where a node group refers to them
	"aws_launch_template": nil,
	"aws_placement_group": nil,
}

func importTerraform(b *builder, paths []string, opts Options) error {
	c, err := loadTerraform(paths, opts)
	if err != nil {
		return err
	}
	if err := readTerraform(b, c); err != nil {
		return err
	}
	b.addonsOutside()
	b.driverByInstaller()
	return nil
}

// selfManagedReason is why an Auto Scaling group's nodes are not imported.
const selfManagedReason = "a self-managed node group (an EC2 Auto Scaling group that joins the cluster): gpuctl imports EKS managed node groups (aws_eks_node_group) and Karpenter NodePools, not self-managed groups"

// unreadResource is why a resource of type typ, which import does not
// read, is skipped.
func unreadResource(typ string) string {
	if typ == "aws_autoscaling_group" {
		return selfManagedReason
	}
	return "resource type gpuctl does not import"
}

// findDriverInstaller notes a resource or data source of the
// configuration that applies NVIDIA's driver installer DaemonSet for GKE
// (GoogleCloudPlatform/container-engine-accelerators nvidia-driver-installer,
// the manual install of https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#installing_drivers,
// 2026-12-02): by its name, or a url it fetches.
func (t *tfImport) findDriverInstaller() {
	for _, r := range append(append([]*tfBlock(nil), t.c.resources...), t.c.data...) {
		url, _ := t.obj(r, nil).get("url").str()
		if low := strings.ToLower(r.local() + " " + url); strings.Contains(low, "nvidia_driver_installer") || strings.Contains(low, "nvidia-driver-installer") {
			t.b.driverInstaller = r.addr()
			return
		}
	}
}

// driverByInstaller lists the driver of each GKE GPU pool that sets none
// as unknown when the configuration applies NVIDIA's installer DaemonSet:
// the driver comes from there, not from GKE.
func (b *builder) driverByInstaller() {
	if b.driverInstaller == "" || b.cs.Spec.Provider != spec.ProviderGKE {
		return
	}
	for _, pb := range b.pools {
		if pb.p.GPU.Driver == "" {
			pb.unknowns = append(pb.unknowns, Unknown{Path: ".gpu.driver", What: "the GPU driver", Origin: pb.origins[""],
				Because: []string{b.driverInstaller + ", which applies NVIDIA's driver installer DaemonSet (the driver version it installs is not read)"}})
		}
	}
}

// installsInCluster reports whether a resource of type typ installs
// something into the cluster (Helm, the kubernetes and kubectl providers).
func installsInCluster(typ string) bool {
	return strings.HasPrefix(typ, "helm_") || strings.HasPrefix(typ, "kubernetes_") || strings.HasPrefix(typ, "kubectl_")
}

// addonsOutside lists the device plugin of an EKS import as unknown when
// the configuration installs nothing into the cluster: the add-ons are
// then installed by other means (helm, Argo CD, the GPU Operator's own
// manifests), which the files read cannot tell.
func (b *builder) addonsOutside() {
	s := &b.cs.Spec
	if b.k8sAddons || s.Provider != spec.ProviderEKS || s.Addons.DevicePlugin.Provider != "" || s.Addons.GPUOperator.Enabled || len(b.pools) == 0 {
		return
	}
	for _, u := range b.unknowns {
		if strings.HasPrefix(u.Path, "spec.addons.") {
			return
		}
	}
	b.unknowns = append(b.unknowns, Unknown{Path: "spec.addons.devicePlugin.provider", What: "the device plugin", Origin: b.pools[0].origins[""],
		Because: []string{"what is installed outside the files read (they hold no helm_release, kubernetes_* or kubectl_* resource and no add-on module: the add-ons are installed by other means)"},
		Hint:    "validate a gpuctl spec that names it (addons.devicePlugin), or keep its helm_release with the node pools"})
}

// readTerraform reads the loaded configuration c into b. Errors: a cap or
// refusal of the evaluation (the first stops it), the context done.
func readTerraform(b *builder, c *tfConfig) error {
	b.files = c.files
	t := &tfImport{b: b, c: c, e: newEvaluator(c)}
	return t.read()
}

// read reads t's module (the root module or a module instance gpuctl
// follows, localmod.go) into t.b.
func (t *tfImport) read() error {
	b, c := t.b, t.c
	for _, p := range c.providers {
		t.providerBlock(p)
	}
	if err := c.budget.err(); err != nil {
		return err
	}
	// Clusters first, so that node pools find the cluster's settings.
	order := []string{"google_container_cluster", "aws_eks_cluster"}
	for _, typ := range order {
		for _, r := range c.resources {
			if r.typ == typ {
				tfReaders[typ](t, r)
			}
		}
	}
	for _, r := range c.resources {
		if err := c.budget.err(); err != nil {
			return err
		}
		read, known := tfReaders[r.typ]
		b.k8sAddons = b.k8sAddons || installsInCluster(r.typ)
		switch {
		case !known:
			b.skip(r.addr(), unreadResource(r.typ), rangeOrigin(r.rng))
		case read != nil && r.typ != order[0] && r.typ != order[1]:
			read(t, r)
		}
	}
	for _, m := range c.modules {
		t.module(m)
	}
	t.findDriverInstaller()
	t.flushKarpenter()
	t.skipUnread()
	return c.budget.err()
}

// skipUnread lists what the configuration holds that import does not
// read: other blocks, .tf.json files and data sources.
func (t *tfImport) skipUnread() {
	b, c := t.b, t.c
	for _, o := range c.other {
		what := o.mod + o.kind
		if o.typ != "" {
			what += " " + o.typ
		}
		b.skip(what, "a "+o.kind+" block: it configures no node pool", rangeOrigin(o.rng))
	}
	for _, f := range c.jsonTF {
		b.skip("JSON configuration", "a .tf.json file (Terraform's JSON configuration syntax), which gpuctl import does not read: its resources, variables and modules are not imported", Origin{File: f})
	}
	for _, d := range c.data {
		b.skip(d.addr(), "data source: read at plan time, values that depend on it are unknown", rangeOrigin(d.rng))
	}
}

// obj is block b of the configuration as an object.
func (t *tfImport) obj(b *tfBlock, scope map[string]cty.Value) *hclObj {
	return &hclObj{e: t.e, body: b.body, addr: b.addr(), at: rangeOrigin(b.rng), scope: scope}
}

// instances expands a resource's for_each over a map (each.key,
// each.value) or count; an unknown for_each is one instance of unknown
// values.
func (t *tfImport) instances(b *tfBlock) (keys []string, objs []*hclObj) {
	if fe := b.body.Attributes["for_each"]; fe != nil {
		v, why := t.e.eval(fe.Expr, nil)
		// The keys decide the instances: a map's values may be partly
		// unknown (each.value.X is then unknown where it is); a set's
		// elements are its keys.
		if !iterable(v) || (v.Type().IsSetType() && !v.IsWhollyKnown()) {
			t.b.skip(b.addr(), "for_each is unknown until Terraform applies: it depends on "+strings.Join(why, ", "), rangeOrigin(fe.Expr.Range()))
			return nil, nil
		}
		if v.LengthInt() > MaxInstances {
			t.tooManyInstances(fe.Expr, "for_each")
			return nil, nil
		}
		for it := v.ElementIterator(); it.Next(); {
			k, el := it.Element()
			ks := k.AsString()
			if k.Type() != cty.String {
				ks = el.AsString() // a set of strings: key and value are the element
			}
			o := t.obj(b, map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(ks), "value": el})})
			o.addr = fmt.Sprintf("%s[%q]", b.addr(), ks)
			o.each = t.e.child(fe.Expr, cty.StringVal(ks))
			keys, objs = append(keys, ks), append(objs, o)
		}
		return keys, objs
	}
	if ce := b.body.Attributes["count"]; ce != nil {
		v, why := t.e.eval(ce.Expr, nil)
		x := val{v: v, why: why}
		n, ok := x.int()
		if t.c.budget.err() != nil {
			return nil, nil
		}
		if !ok && hugeNumber(x) {
			n, ok = MaxInstances+1, true // past an int: past the cap too
		}
		if !ok {
			t.b.skip(b.addr(), "count is unknown until Terraform applies: it depends on "+strings.Join(why, ", "), rangeOrigin(ce.Expr.Range()))
			return nil, nil
		}
		if n > MaxInstances {
			t.tooManyInstances(ce.Expr, "count")
			return nil, nil
		}
		for i := 0; i < n; i++ {
			o := t.obj(b, map[string]cty.Value{"count": cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(int64(i))})})
			o.addr = fmt.Sprintf("%s[%d]", b.addr(), i)
			keys, objs = append(keys, fmt.Sprint(i)), append(objs, o)
		}
		return keys, objs
	}
	return []string{""}, []*hclObj{t.obj(b, nil)}
}

// hugeNumber reports whether x is a number past MaxInstances.
func hugeNumber(x val) bool {
	if !x.known() {
		return false
	}
	n, err := convert.Convert(x.v, cty.Number)
	return err == nil && !n.IsNull() && num(n) > MaxInstances
}

// tooManyInstances refuses a count or for_each (what) of more than
// MaxInstances instances, at expr.
func (t *tfImport) tooManyInstances(expr hcl.Expression, what string) {
	t.c.budget.failAt(expr.Range(), capErr("%s of more than %d instances (MaxInstances)", what, MaxInstances))
}

func (t *tfImport) providerBlock(p *tfBlock) {
	o := t.obj(p, nil)
	switch p.typ {
	case "aws", "google", "google-beta":
		t.b.strIfEmpty("spec.region", o.get("region"), &t.b.cs.Spec.Region)
	}
}

// k8sVersion is a Kubernetes version as the spec writes it: "1.33" from
// "1.33", "1.33." (a version prefix) or "1.33.5-gke.1080000" (kept whole).
var k8sVersion = regexp.MustCompile(`^v?(1\.[0-9]+)(\.[0-9]+(-gke\.[0-9]+)?)?\.?$`)

// version sets spec.kubernetesVersion from x when it holds a version;
// "latest" and other aliases are resolved by the cloud at apply time.
func (t *tfImport) version(x val) {
	s := &t.b.cs.Spec
	if s.KubernetesVersion != "" || x.absent() {
		return
	}
	if x.unknown() {
		t.b.unknown("spec.kubernetesVersion", x)
		return
	}
	v, _ := x.str()
	m := k8sVersion.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		x.why = []string{fmt.Sprintf("%q, which the cloud resolves to a version when the cluster is created", v)}
		t.b.unknown("spec.kubernetesVersion", x)
		return
	}
	s.KubernetesVersion = m[1]
	if m[3] != "" {
		s.KubernetesVersion = m[1] + m[2]
	}
	t.b.at("spec.kubernetesVersion", x.at)
}

// ---- GKE ----

func (t *tfImport) gkeCluster(r *tfBlock) {
	for _, o := range t.instancesOf(r) {
		t.b.provider(spec.ProviderGKE, o.origin())
		t.gkeClusterSettings(o)
		if ap, _ := o.get("enable_autopilot").bool(); ap {
			t.b.skip(o.name(), autopilotReason, o.origin())
			continue
		}
		for _, np := range o.blocks("node_pool") {
			t.gkePool(np, o.name()+" node_pool")
		}
		// The default pool is a GPU pool when the cluster's node_config
		// has accelerators and the pool is not removed.
		if rm, _ := o.get("remove_default_node_pool").bool(); !rm {
			if nc := first(o.blocks("node_config")); nc != nil && len(nc.blocks("guest_accelerator")) > 0 {
				t.gkePool(o, o.name())
			}
		}
	}
}

func (t *tfImport) instancesOf(r *tfBlock) []obj {
	_, os := t.instances(r)
	out := make([]obj, len(os))
	for i, o := range os {
		out[i] = o
	}
	return out
}

func (t *tfImport) gkeClusterSettings(o obj) {
	s := &t.b.cs.Spec
	t.b.clusterRead = true
	t.secondCluster(o, o.get("name"))
	t.b.strIfEmpty("spec.clusterName", o.get("name"), &s.ClusterName)
	t.gkeLocation(o.get("location"), true)
	v := o.get("min_master_version")
	if v.absent() {
		v = o.get("node_version")
	}
	t.version(v)
	if rc := first(o.blocks("release_channel")); rc != nil {
		t.b.strIfEmpty("spec.releaseChannel", rc.get("channel"), &s.ReleaseChannel)
	}
}

// secondCluster lists cluster o (its name x) when the spec already holds
// another: a spec is one cluster, so every node pool read is judged as
// that cluster's.
func (t *tfImport) secondCluster(o obj, x val) {
	have := t.b.cs.Spec.ClusterName
	name, ok := x.str()
	if have == "" || !ok || name == have {
		return
	}
	t.b.skip(o.name(), fmt.Sprintf("a second cluster (%s): a spec holds one cluster, so its node pools are judged as %s's; import each cluster's files on their own for the versions and add-ons of each", diag.OneLine(name), diag.OneLine(have)), o.origin())
}

// gkeLocation sets spec.region from a GKE location (a region, or the zone
// of a zonal cluster, which the spec's region holds as is): a cluster's
// location (cluster) is where it runs, over the provider block's default
// region; a node pool's only fills an empty one.
func (t *tfImport) gkeLocation(x val, cluster bool) {
	s := &t.b.cs.Spec
	if loc, ok := x.str(); cluster && ok && loc != "" {
		t.b.str("spec.region", x, &s.Region)
		return
	}
	t.b.strIfEmpty("spec.region", x, &s.Region)
}

func (t *tfImport) gkeNodePool(r *tfBlock) {
	for _, o := range t.instancesOf(r) {
		t.b.provider(spec.ProviderGKE, o.origin())
		s := &t.b.cs.Spec
		if s.ClusterName == "" {
			t.b.str("spec.clusterName", o.get("cluster"), &s.ClusterName)
		}
		t.gkeLocation(o.get("location"), false)
		t.gkePool(o, o.name())
	}
}

// fixedSize reads the node count of a GKE pool without autoscaling (per
// zone, as the API counts it). The spec holds autoscaling bounds only, so
// a fixed size is min = max, which generate writes as an autoscaling block
// with equal totals: said as a skip, not hidden.
func (t *tfImport) fixedSize(pb *poolB, n val, zones int, zwhy string) {
	if n.absent() {
		return
	}
	p := &pb.p
	if pb.perZone(".autoscaling.min", n, &p.Autoscaling.Min, zones, zwhy) {
		p.Autoscaling.Max = p.Autoscaling.Min
		pb.origins[".autoscaling.max"] = pb.origins[".autoscaling.min"]
		t.b.skip(n.what, fmt.Sprintf("a fixed size without autoscaling: the spec holds autoscaling bounds only, so it is imported as min = max = %d, which gpuctl generate writes as an autoscaling block with equal totals", p.Autoscaling.Min), n.at)
	}
}

// gkePool reads a google_container_node_pool, a node_pool block or the
// default pool of a cluster (o has node_config, autoscaling, management).
func (t *tfImport) gkePool(o obj, what string) {
	pb := newPool(spec.ProviderGKE, gkePoolName(o, what), o.origin())
	pb.nameUnknown(o.get("name"), o.get("name_prefix"))
	p := &pb.p
	pb.strs(".zones", o.get("node_locations"), &p.Zones)
	if strings.HasPrefix(o.name(), "google_container_node_pool.") {
		t.version(o.get("version"))
	}
	t.gkePoolSize(pb, o)
	if m := first(o.blocks("management")); m != nil {
		pb.flag(".autoRepair", m.get("auto_repair"), &p.AutoRepair)
		pb.flag(".autoUpgrade", m.get("auto_upgrade"), &p.AutoUpgrade)
	}
	if pp := first(o.blocks("placement_policy")); pp != nil {
		if ty, _ := pp.get("type").str(); ty == "COMPACT" {
			// gpuctl writes compact placement for multi-node training pools.
			p.Role = spec.RoleTraining
			pb.at(".role", pp.origin())
		}
	}
	nc := first(o.blocks("node_config"))
	if nc == nil {
		t.b.skip(what, "node pool without node_config: machine type and GPUs unknown", o.origin())
		return
	}
	gkeNodeConfig(pb, nc)
	if qp := first(o.blocks("queued_provisioning")); qp != nil && p.Capacity == spec.CapacityFlexStart {
		if on, ok := qp.get("enabled").bool(); ok && on {
			p.Capacity = spec.CapacityQueued
			pb.at(".capacity", qp.origin())
		}
	}
	accel := nc.blocks("guest_accelerator")
	if ga := first(accel); ga != nil {
		gkeAccelerator(pb, ga)
	}
	if !t.gpuPool(pb, len(accel) > 0, what, o.origin()) {
		return
	}
	if _, isCluster := o.(*hclObj); !isCluster || strings.Contains(what, "node_pool") {
		t.skipAttrs(o, gkePoolAttrs)
	}
	t.skipAttrs(nc, gkeNodeConfigAttrs)
	t.b.addPool(pb)
}

// gkePoolName is a GKE pool's name: name, else name_prefix, else the
// block's label; a cluster's own pool is default-pool.
func gkePoolName(o obj, what string) string {
	if _, isCluster := o.(*hclObj); isCluster && strings.HasPrefix(o.name(), "google_container_cluster.") && !strings.Contains(what, "node_pool") {
		return "default-pool"
	}
	name, _ := o.get("name").str()
	if name == "" {
		name, _ = o.get("name_prefix").str()
		name = strings.TrimRight(name, "-_") // the provider appends a unique suffix
	}
	if name == "" {
		name = lastLabel(o.name())
	}
	return name
}

// gkePoolSize reads a GKE pool's autoscaling (total counts, else per-zone
// counts over its zones) or its fixed size.
func (t *tfImport) gkePoolSize(pb *poolB, o obj) {
	p := &pb.p
	loc, _ := o.get("location").str()
	if loc == "" {
		loc = t.b.cs.Spec.Region
	}
	zones, zwhy := gkeZones(p.Zones, loc)
	as := first(o.blocks("autoscaling"))
	if as == nil {
		n := o.get("node_count")
		if n.absent() {
			n = o.get("initial_node_count")
		}
		t.fixedSize(pb, n, zones, zwhy)
		return
	}
	pb.at(".autoscaling", as.origin())
	if !pb.num(".autoscaling.min", as.get("total_min_node_count"), &p.Autoscaling.Min) {
		pb.perZone(".autoscaling.min", as.get("min_node_count"), &p.Autoscaling.Min, zones, zwhy)
	}
	if !pb.num(".autoscaling.max", as.get("total_max_node_count"), &p.Autoscaling.Max) {
		pb.perZone(".autoscaling.max", as.get("max_node_count"), &p.Autoscaling.Max, zones, zwhy)
	}
}

// gkeNodeConfig reads a node_config's machine, image, disk, labels, taints
// and capacity (spot, preemptible or a specific reservation).
func gkeNodeConfig(pb *poolB, nc obj) {
	p := &pb.p
	pb.str(".machineType", nc.get("machine_type"), &p.MachineType)
	pb.gkeImage(nc.get("image_type"))
	pb.num(".diskSizeGB", nc.get("disk_size_gb"), &p.DiskSizeGB)
	pb.str(".diskType", nc.get("disk_type"), &p.DiskType)
	if ls := first(nc.blocks("ephemeral_storage_local_ssd_config")); ls != nil {
		gkeLocalSSDs(pb, ls.get("local_ssd_count"))
	}
	pb.labels(".labels", nc.get("labels"), &p.Labels)
	for _, tb := range nc.blocks("taint") {
		pb.taint(tb)
	}
	if sp, ok := nc.get("spot").bool(); ok && sp {
		p.Capacity = spec.CapacitySpot
		pb.at(".capacity", nc.get("spot").at)
	} else if pe, ok := nc.get("preemptible").bool(); ok && pe {
		p.Capacity = spec.CapacitySpot
		pb.at(".capacity", nc.get("preemptible").at)
	} else if fs, ok := nc.get("flex_start").bool(); ok && fs {
		// flex-start VMs; queued_provisioning (on the pool) makes it queued.
		p.Capacity = spec.CapacityFlexStart
		pb.at(".capacity", nc.get("flex_start").at)
		return // flex-start consumes no reservation
	}
	ra := first(nc.blocks("reservation_affinity"))
	if ra == nil {
		return
	}
	if ty, _ := ra.get("consume_reservation_type").str(); ty == "SPECIFIC_RESERVATION" {
		var names []string
		if pb.strs(".reservation", ra.get("values"), &names) {
			p.Capacity, p.Reservation = spec.CapacityReservation, names[0]
			pb.at(".capacity", ra.origin())
		}
	}
}

// gkeAccelerator reads a guest_accelerator: type, count, the driver GKE
// installs (none for GPU_DRIVER_VERSION_UNSPECIFIED) and GPU sharing.
func gkeAccelerator(pb *poolB, ga obj) {
	p := &pb.p
	pb.at(".gpu", ga.origin())
	pb.str(".gpu.type", ga.get("type"), &p.GPU.Type)
	pb.num(".gpu.count", ga.get("count"), &p.GPU.Count)
	if di := first(ga.blocks("gpu_driver_installation_config")); di != nil {
		var d string
		if pb.str(".gpu.driver", di.get("gpu_driver_version"), &d) && d != "GPU_DRIVER_VERSION_UNSPECIFIED" {
			p.GPU.Driver = d
		} else {
			delete(pb.origins, ".gpu.driver")
		}
	}
	gkeGPUSharing(pb, ga)
}

// gkeGPUSharing reads a GKE guest_accelerator's gpu_partition_size (MIG) and
// gpu_sharing_config (time-slicing or MPS) into pb's gpu.sharing; the
// google provider's node_config and the cluster toolkit's gke-node-pool
// module spell them alike.
func gkeGPUSharing(pb *poolB, ga obj) {
	p := &pb.p
	var part string
	if pb.str(".gpu.sharing.migProfile", ga.get("gpu_partition_size"), &part) {
		p.GPU.Sharing = spec.Sharing{Strategy: spec.SharingMIG, MIGProfile: part}
		pb.at(".gpu.sharing.strategy", ga.get("gpu_partition_size").at)
	}
	if gs := first(ga.blocks("gpu_sharing_config")); gs != nil {
		var st string
		if pb.str(".gpu.sharing.strategy", gs.get("gpu_sharing_strategy"), &st) {
			switch st {
			case "TIME_SHARING":
				p.GPU.Sharing.Strategy = spec.SharingTimeSlicing
			case "MPS":
				p.GPU.Sharing.Strategy = spec.SharingMPS
			default:
				p.GPU.Sharing.Strategy = st
			}
		}
		pb.num(".gpu.sharing.replicas", gs.get("max_shared_clients_per_gpu"), &p.GPU.Sharing.Replicas)
	}
}

// gpuPool reports whether pb has GPUs (accelerators, a GPU machine type or
// AMI type, or a machine type import cannot know), and lists it as
// skipped otherwise.
func (t *tfImport) gpuPool(pb *poolB, accel bool, what string, at Origin) bool {
	return gpuPool(t.b, pb, accel, what, at)
}

func gpuPool(b *builder, pb *poolB, accel bool, what string, at Origin) bool {
	p := &pb.p
	if accel || strings.Contains(p.OSImage, "NVIDIA") || strings.Contains(p.OSImage, "_GPU") {
		return true
	}
	types := p.MachineTypes()
	if len(types) == 0 && eksDefaults(pb) {
		b.skip(what, "not known to be a GPU node pool: it names no instance type and no AMI type, and EKS's defaults are t3.medium on a standard AMI (an instance type from a launch template outside the files read cannot be told)", at)
		return false
	}
	if len(types) == 0 && cpuAMI(pb) {
		b.skip(what, fmt.Sprintf("not known to be a GPU node pool: its instance type is not known and its AMI type %s carries no NVIDIA driver (a GPU node group runs an _NVIDIA, _GPU or _NEURON AMI type)", p.OSImage), at)
		return false
	}
	if len(types) == 0 {
		// machine type unknown (or unset): import it, the unknowns say why
		if len(pb.unknowns) == 0 {
			b.skip(what, "not a GPU node pool as written: no machine or instance type and no accelerators (the platform's default type applies)", at)
		}
		return len(pb.unknowns) > 0
	}
	for _, mt := range types {
		if m, ok := matrix.LookupMachine(pb.provider, mt); ok && m.GPU != "" {
			return true
		}
	}
	b.skip(what, fmt.Sprintf("not a GPU node pool (%s, no accelerators)", strings.Join(types, ", ")), at)
	return false
}

// eksDefaults reports whether pb is an EKS pool that names neither an
// instance type nor an AMI type (and neither is unknown as written): EKS
// then creates t3.medium nodes on its standard AMI.
// Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html
// (instanceTypes: "t3.medium" when unset, 2026-12-02).
func eksDefaults(pb *poolB) bool {
	if pb.provider != spec.ProviderEKS || pb.p.OSImage != "" {
		return false
	}
	for _, u := range pb.unknowns {
		if u.Path == ".osImage" || u.Path == ".instanceTypes" {
			return false
		}
	}
	return true
}

// cpuAMI reports whether pb is an EKS pool whose AMI type is one of EKS's
// AMIs without an NVIDIA driver (AL2023_*_STANDARD, AL2_x86_64, AL2_ARM_64,
// BOTTLEROCKET_* without NVIDIA, WINDOWS_*): on such an AMI GPUs are not
// usable, so a group of unknown instance type is a CPU group as written.
// Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_Nodegroup.html
// (amiType values, 2026-12-02).
func cpuAMI(pb *poolB) bool {
	ami := pb.p.OSImage
	if pb.provider != spec.ProviderEKS || ami == "" || strings.Contains(ami, "NVIDIA") || strings.Contains(ami, "GPU") || strings.Contains(ami, "NEURON") || ami == "CUSTOM" {
		return false
	}
	return strings.HasSuffix(ami, "_STANDARD") || strings.HasPrefix(ami, "AL2_") || strings.HasPrefix(ami, "BOTTLEROCKET_") || strings.HasPrefix(ami, "WINDOWS_")
}

// lastLabel is NAME of TYPE.NAME or TYPE.NAME["key"] (the key).
func lastLabel(addr string) string {
	if i := strings.Index(addr, "[\""); i >= 0 && strings.HasSuffix(addr, "\"]") {
		return addr[i+2 : len(addr)-2]
	}
	if i := strings.IndexByte(addr, ' '); i >= 0 {
		addr = addr[:i]
	}
	if i := strings.LastIndexByte(addr, '.'); i >= 0 {
		addr = addr[i+1:]
	}
	// NAME[0] of a resource with count: NAME-0 (a name the clouds take)
	addr = strings.NewReplacer("[", "-", "]", "", "_", "-").Replace(addr)
	return strings.TrimSuffix(addr, "-0")
}

// ---- EKS ----

func (t *tfImport) eksCluster(r *tfBlock) {
	for _, o := range t.instancesOf(r) {
		t.b.provider(spec.ProviderEKS, o.origin())
		t.b.clusterRead = true
		t.secondCluster(o, o.get("name"))
		t.b.strIfEmpty("spec.clusterName", o.get("name"), &t.b.cs.Spec.ClusterName)
		t.version(o.get("version"))
	}
}

var eksCapacityTypes = map[string]string{"ON_DEMAND": spec.CapacityOnDemand, "SPOT": spec.CapacitySpot, "CAPACITY_BLOCK": spec.CapacityCapacityBlock}

func (t *tfImport) eksNodeGroup(r *tfBlock) {
	for _, o := range t.instancesOf(r) {
		s := &t.b.cs.Spec
		if s.ClusterName == "" {
			t.b.str("spec.clusterName", o.get("cluster_name"), &s.ClusterName)
		}
		t.version(o.get("version"))
		name, _ := o.get("node_group_name").str()
		if name == "" {
			name, _ = o.get("node_group_name_prefix").str()
			name = strings.TrimRight(name, "-_") // the provider appends a unique suffix
		}
		if name == "" {
			name = lastLabel(o.name())
		}
		pb := newPool(spec.ProviderEKS, name, o.origin())
		pb.nameUnknown(o.get("node_group_name"), o.get("node_group_name_prefix"))
		p := &pb.p
		pb.str(".osImage", o.get("ami_type"), &p.OSImage)
		pb.str(".releaseVersion", o.get("release_version"), &p.ReleaseVersion)
		t.eksInstanceTypes(pb, o.get("instance_types"))
		var ct string
		if pb.str(".capacity", o.get("capacity_type"), &ct) {
			p.Capacity = eksCapacityTypes[ct]
		}
		if sc := first(o.blocks("scaling_config")); sc != nil {
			pb.at(".autoscaling", sc.origin())
			pb.num(".autoscaling.min", sc.get("min_size"), &p.Autoscaling.Min)
			pb.num(".autoscaling.max", sc.get("max_size"), &p.Autoscaling.Max)
			t.desiredSize(sc.get("desired_size"))
		}
		pb.labels(".labels", o.get("labels"), &p.Labels)
		for _, tb := range o.blocks("taint") {
			pb.taint(tb)
		}
		pb.num(".diskSizeGB", o.get("disk_size"), &p.DiskSizeGB)
		if nr := first(o.blocks("node_repair_config")); nr != nil {
			pb.flag(".autoRepair", nr.get("enabled"), &p.AutoRepair)
		}
		if lt := first(o.blocks("launch_template")); lt != nil {
			t.eksLaunchTemplate(pb, lt)
		}
		if !t.gpuPool(pb, false, o.name(), o.origin()) {
			continue
		}
		t.skipAttrs(o, eksNodeGroupAttrs)
		t.b.addPool(pb)
	}
}

// gkeLocalSSDs reads a GKE local SSD count for ephemeral storage (node
// config's ephemeral_storage_local_ssd_config local_ssd_count, the
// module's local_ssd_ephemeral_storage_count): GKE puts the node's local
// SSDs in one RAID-0 array for ephemeral storage, localStorage raid0;
// 0 is all of them on a machine with a fixed number of local SSDs, else
// none.
// Source: https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/local-ssd (2026-12-02).
func gkeLocalSSDs(pb *poolB, n val) {
	if !pb.usable(".localStorage", n) {
		return
	}
	c, ok := n.int()
	if ok && (c > 0 || matrix.GKEFixedLocalSSDs(pb.p.MachineType)) {
		pb.p.LocalStorage = spec.LocalStorageRAID0
		pb.at(".localStorage", n.at)
	}
}

func (t *tfImport) eksInstanceTypes(pb *poolB, x val) {
	var types []string
	if !pb.strs(".instanceTypes", x, &types) {
		return
	}
	if len(types) == 1 {
		pb.p.MachineType = types[0]
		pb.origins[".machineType"] = pb.origins[".instanceTypes"]
		delete(pb.origins, ".instanceTypes")
		return
	}
	pb.p.InstanceTypes = types
}

// eksLaunchTemplate reads the launch template a node group names (an
// aws_launch_template of the files): instance type, disk, placement,
// capacity reservation and EFA interfaces.
func (t *tfImport) eksLaunchTemplate(pb *poolB, ref obj) {
	ho, ok := ref.(*hclObj)
	if !ok {
		return
	}
	var tb *tfBlock
	for _, k := range []string{"id", "name"} {
		if tr := traversalOf(ho.expr(k)); len(tr) >= 2 && tr.RootName() == "aws_launch_template" {
			tb = t.c.byAddr["aws_launch_template."+attrName(tr, 1)]
		}
	}
	if tb == nil {
		// what such a template may set: the instance type (when the group
		// names none) and the user data; the group's own values stand
		path := ".launchTemplate"
		if pb.p.MachineType == "" && len(pb.p.InstanceTypes) == 0 {
			path = ".machineType"
		}
		pb.unknowns = append(pb.unknowns, Unknown{Path: path, What: ref.name(), Because: []string{"a launch template that is not in the files read"}, Origin: ref.origin()})
		return
	}
	lt := t.obj(tb, nil)
	p := &pb.p
	if p.MachineType == "" && len(p.InstanceTypes) == 0 {
		pb.str(".machineType", lt.get("instance_type"), &p.MachineType)
	}
	for _, bd := range lt.blocks("block_device_mappings") {
		if ebs := first(bd.blocks("ebs")); ebs != nil && p.DiskSizeGB == 0 {
			pb.num(".diskSizeGB", ebs.get("volume_size"), &p.DiskSizeGB)
			pb.str(".diskType", ebs.get("volume_type"), &p.DiskType)
		}
	}
	if pl := first(lt.blocks("placement")); pl != nil {
		t.placementGroup(pb, pl.(*hclObj))
	}
	launchTemplateCapacity(pb, lt)
	launchTemplateEFA(pb, lt)
	launchTemplateUserData(pb, lt.get("user_data"))
}

// launchTemplateCapacity reads a launch template's capacity reservation
// (on on-demand capacity) and Capacity Block market.
func launchTemplateCapacity(pb *poolB, lt obj) {
	p := &pb.p
	if cr := first(lt.blocks("capacity_reservation_specification")); cr != nil {
		if tg := first(cr.blocks("capacity_reservation_target")); tg != nil && pb.str(".reservation", tg.get("capacity_reservation_id"), &p.Reservation) {
			if p.Capacity == "" || p.Capacity == spec.CapacityOnDemand {
				p.Capacity = spec.CapacityReservation
				pb.at(".capacity", tg.origin())
			}
		}
	}
	if mo := first(lt.blocks("instance_market_options")); mo != nil {
		if mt, _ := mo.get("market_type").str(); mt == "capacity-block" {
			p.Capacity = spec.CapacityCapacityBlock
			pb.at(".capacity", mo.get("market_type").at)
		}
	}
}

// launchTemplateEFA reads a launch template's EFA interfaces (at the
// first).
func launchTemplateEFA(pb *poolB, lt obj) {
	n, only := 0, 0
	var at Origin
	for _, ni := range lt.blocks("network_interfaces") {
		it, _ := ni.get("interface_type").str()
		if it != "efa" && it != "efa-only" {
			continue
		}
		if n == 0 {
			at = ni.origin()
		}
		n++
		if it == "efa-only" {
			only++
		}
	}
	if n > 0 {
		pb.p.EFA.Enabled, pb.p.EFA.Interfaces = true, n
		pb.at(".efa", at)
		pb.at(".efa.enabled", at)
		pb.at(".efa.interfaces", at)
	}
	if n > 1 {
		efaOnly := only > 0
		pb.p.EFA.EFAOnly = &efaOnly
		pb.at(".efa.efaOnly", at)
	}
}

// desiredSize lists an EKS node group's desired_size as skipped: the spec
// has no field for it (the cluster autoscaler owns it; generate writes the
// minimum and ignores later changes).
func (t *tfImport) desiredSize(x val) {
	if x.absent() {
		return
	}
	reason := "no gpuctl spec field: the cluster autoscaler owns the desired size; gpuctl generate writes autoscaling.min and ignores later changes"
	if n, ok := x.int(); ok {
		reason = fmt.Sprintf("desired_size %d: %s", n, reason)
	}
	t.b.skip(x.what, reason, x.at)
}

// placementGroup reads placement.group_name: a placement group of the
// files with the cluster strategy is "cluster" (the spec's "create one"),
// any other name is an existing group's.
func (t *tfImport) placementGroup(pb *poolB, pl *hclObj) {
	if tr := traversalOf(pl.expr("group_name")); len(tr) >= 2 && tr.RootName() == "aws_placement_group" {
		if g := t.c.byAddr["aws_placement_group."+attrName(tr, 1)]; g != nil {
			if st, _ := t.obj(g, nil).get("strategy").str(); st == "cluster" {
				pb.p.PlacementGroup = "cluster"
				pb.at(".placementGroup", pl.get("group_name").at)
				return
			}
		}
	}
	pb.str(".placementGroup", pl.get("group_name"), &pb.p.PlacementGroup)
}

func traversalOf(e hcl.Expression) hcl.Traversal {
	if st, ok := e.(*hclsyntax.ScopeTraversalExpr); ok {
		return st.Traversal
	}
	return nil
}
