package importer

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Karpenter (karpenter.sh/v1 NodePool, karpenter.k8s.aws/v1 EC2NodeClass,
// EKS Auto Mode's eks.amazonaws.com/v1 NodeClass: karpenter_automode.go):
// each NodePool that selects GPU instances is one node pool of the spec.
//
//   - addons.autoscaler is karpenter (Karpenter YAML alone; not for
//     NodePools inside Terraform, beside node groups).
//   - Instance types: node.kubernetes.io/instance-type In [...] is the
//     pool's machineType (one) or instanceTypes (several) — an EKS pool of
//     the spec may hold several types, as a Karpenter NodePool does, so a
//     NodePool is never split. Without it, the instance types are those of
//     gpuctl's matrix that match the pool's family, category, generation,
//     size, GPU name, GPU count and architecture requirements; Karpenter may
//     also launch types the matrix does not list, which is said as a skip.
//   - karpenter.sh/capacity-type: the one Karpenter prefers of those allowed
//     (reserved, then spot, then on-demand); unset is on-demand; reserved
//     capacity of reservation type capacity-block is a Capacity Block.
//   - topology.kubernetes.io/zone In: zones. Taints and template labels as
//     they are. limits nvidia.com/gpu over the GPUs per node: autoscaling.max.
//   - EC2NodeClass: amiSelectorTerms alias (al2023@, bottlerocket@, al2@) is
//     the EKS-optimized NVIDIA AMI type Karpenter picks for GPU instances;
//     an AMI chosen by id, name, tags or SSM parameter is unknown. The root
//     volume (the data volume on Bottlerocket) is diskSizeGB, efa-only
//     networkInterfaces enable EFA, placementGroupSelector.name is the
//     placement group, capacityReservationSelectorTerms the reservation.
//
// Keys with no spec field are listed as skipped, per document.

const (
	kpInstanceType = "node.kubernetes.io/instance-type"
	kpCapacityType = "karpenter.sh/capacity-type"
	kpZone         = "topology.kubernetes.io/zone"
	kpArch         = "kubernetes.io/arch"
	kpFamily       = "karpenter.k8s.aws/instance-family"
	kpCategory     = "karpenter.k8s.aws/instance-category"
	kpGeneration   = "karpenter.k8s.aws/instance-generation"
	kpSize         = "karpenter.k8s.aws/instance-size"
	kpGPUName      = "karpenter.k8s.aws/instance-gpu-name"
	kpGPUCount     = "karpenter.k8s.aws/instance-gpu-count"
	kpGPUMaker     = "karpenter.k8s.aws/instance-gpu-manufacturer"
	// kpReservationType tells the reserved capacity's kind apart: default
	// (an On-Demand Capacity Reservation) or capacity-block.
	// Source: https://karpenter.sh/docs/tasks/odcrs/ (2026-12-03).
	kpReservationType = "karpenter.k8s.aws/capacity-reservation-type"
)

// kpDoc is a Karpenter document read.
type kpDoc struct {
	kind, name string
	n          *ynode
	// unknowns are the NodePool's values unknown before Terraform
	// applies (a manifest inside Terraform), taken out of n by kpHoles.
	unknowns []Unknown
}

// importKarpenter imports the NodePools of the Karpenter YAML among paths
// (read inside opts' root, each file held to KarpenterLimits before it is
// parsed) into b. Errors: a file that cannot be read or parsed, no
// NodePool or EC2NodeClass, opts' context done.
func importKarpenter(b *builder, paths []string, opts *Options) error {
	set, err := kpDocs(b, paths, opts)
	if err != nil {
		return err
	}
	if len(set.pools) == 0 && len(set.classes) == 0 {
		return fmt.Errorf("%s: no Karpenter NodePool or EC2NodeClass", paths[0])
	}
	// NodePools do not name the cluster Karpenter runs in.
	at := Origin{File: b.files[0]}
	if len(set.pools) > 0 {
		at = set.pools[0].n.at
	}
	for _, f := range []struct{ path, what string }{{"spec.clusterName", "the cluster name"}, {"spec.region", "the region"}, {"spec.kubernetesVersion", "the Kubernetes version"}} {
		b.unknowns = append(b.unknowns, Unknown{Path: f.path, What: f.what, Origin: at,
			Because: []string{"the cluster Karpenter runs in, which a NodePool or EC2NodeClass does not name"}})
	}
	if len(set.pools) > 0 {
		// Every pool of the import is a NodePool: Karpenter scales them.
		// (NodePools inside Terraform, tfmanifest.go, sit beside node
		// groups that Karpenter does not scale: no autoscaler is set there.)
		b.cs.Spec.Addons.Autoscaler = spec.AutoscalerKarpenter
		b.at("spec.addons.autoscaler", set.pools[0].n.at)
	}
	return kpImportDocs(b, set)
}

// kpSet are the Karpenter documents of an import: NodePools in the order
// read, EC2NodeClasses and EKS Auto Mode NodeClasses by kind and name
// ("EC2NodeClass gpu", "NodeClass gpu").
type kpSet struct {
	pools   []kpDoc
	classes map[string]kpDoc
}

// class is the node class of kind and name among those read.
func (s *kpSet) class(kind, name string) (kpDoc, bool) {
	c, ok := s.classes[kind+" "+name]
	return c, ok
}

// add files the document d (a NodePool, an EC2NodeClass) into the set;
// ok is false for any other document.
func (s *kpSet) add(d *ynode) (kind string, ok bool) {
	api, kind := d.get("apiVersion").str(), d.get("kind").str()
	name := d.get("metadata").get("name").str()
	switch {
	case strings.HasPrefix(api, "karpenter.sh/") && kind == "NodePool":
		s.pools = append(s.pools, kpDoc{kind: kind, name: name, n: d, unknowns: kpHoles(d, name)})
	case strings.HasPrefix(api, "karpenter.k8s.aws/") && kind == "EC2NodeClass",
		strings.HasPrefix(api, kpAutoGroup+"/") && kind == kpAutoKind:
		if s.classes == nil {
			s.classes = map[string]kpDoc{}
		}
		s.classes[kind+" "+name] = kpDoc{kind: kind, name: name, n: d}
	default:
		return strings.TrimSpace(kind + " " + name), false
	}
	return kind, true
}

// kpLegacyReason is why a Karpenter v1alpha5 document is not read.
// Source: https://karpenter.sh/docs/upgrading/v1beta1-migration/ (v0.33
// removed v1alpha5 Provisioner and AWSNodeTemplate; 2026-12-02).
const kpLegacyReason = "a Karpenter v1alpha5 %s: an API Karpenter removed in v0.33 (its pools are NodePools and EC2NodeClasses, karpenter.sh/v1), which gpuctl does not read; migrate it to judge its GPU pools"

// kpNotRead is why document d, which is neither a NodePool nor a node
// class, is skipped: a removed Karpenter API is named, else other.
func kpNotRead(d *ynode, other string) string {
	api, kind := d.get("apiVersion").str(), d.get("kind").str()
	if strings.HasSuffix(api, "/v1alpha5") || strings.HasSuffix(api, "/v1alpha1") && kind == "AWSNodeTemplate" {
		return fmt.Sprintf(kpLegacyReason, kind)
	}
	return other
}

// kpImportDocs imports the NodePools of set into b, each with the node
// class it names; a class no GPU NodePool names is a skip.
func kpImportDocs(b *builder, set kpSet) error {
	used := map[string]bool{}
	for _, d := range set.pools {
		if err := b.alive(); err != nil {
			return err
		}
		kpPool(b, d, &set, used)
	}

	var names []string
	for n := range set.classes {
		if !used[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		b.skip(n, "no GPU NodePool of the files refers to it", set.classes[n].n.at)
	}
	return nil
}

// kpDocs reads the NodePools and the EC2NodeClasses (by name) of the
// files of paths; every other document is recorded as skipped.
func kpDocs(b *builder, paths []string, opts *Options) (kpSet, error) {
	var set kpSet
	err := eachYAMLDoc(opts, b, paths, FromKarpenter, func(_ string, d *ynode) error {
		if what, ok := set.add(d); !ok {
			if what == "" {
				what = "document"
			}
			b.skip(what, kpNotRead(d, "not a Karpenter NodePool or EC2NodeClass"), d.at)
		}
		return nil
	})
	return set, err
}

// kpReq is one requirement of a NodePool.
type kpReq struct {
	op     string
	values []string
	at     Origin
}

func (r kpReq) match(v string) bool {
	switch r.op {
	case "In":
		return contains(r.values, v)
	case "NotIn":
		return !contains(r.values, v)
	case "Exists":
		return true
	case "DoesNotExist":
		return false
	case "Gt", "Lt":
		if len(r.values) != 1 {
			return true
		}
		a, err1 := strconv.Atoi(v)
		lim, err2 := strconv.Atoi(r.values[0])
		if err1 != nil || err2 != nil {
			return false
		}
		if r.op == "Gt" {
			return a > lim
		}
		return a < lim
	}
	return true
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

var familyParts = regexp.MustCompile(`^([a-z]+)([0-9]+)`)

// kpMatches reports whether instance type m meets every requirement.
func kpMatches(m matrix.Machine, reqs map[string]kpReq) bool {
	fam, size, _ := strings.Cut(m.Name, ".")
	cat, gen := "", ""
	if p := familyParts.FindStringSubmatch(fam); p != nil {
		cat, gen = p[1], p[2]
	}
	arch := m.Arch
	if arch == "" {
		arch = "amd64"
	}
	checks := map[string]string{kpInstanceType: m.Name, kpFamily: fam, kpCategory: cat, kpGeneration: gen, kpSize: size,
		kpArch: arch, kpGPUCount: strconv.Itoa(m.GPUCount), kpGPUMaker: "nvidia"}
	for k, v := range checks {
		if r, ok := reqs[k]; ok && !r.match(v) {
			return false
		}
	}
	if r, ok := reqs[kpGPUName]; ok {
		name := strings.ToLower(m.GPU)
		base, _, _ := strings.Cut(name, "-")
		listed := contains(r.values, name) || contains(r.values, base)
		if (r.op == "In" && !listed) || (r.op == "NotIn" && listed) {
			return false
		}
	}
	return m.GPU != ""
}

// kpGPUKeys are the requirements that select GPU instances.
var kpGPUKeys = []string{kpInstanceType, kpFamily, kpCategory, kpGPUName, kpGPUCount, kpGPUMaker}

// kpPool imports the NodePool d as a node pool, with its node class
// (from set, marked in used); a NodePool that selects no GPU instances is
// recorded as skipped.
func kpPool(b *builder, d kpDoc, set *kpSet, used map[string]bool) {
	what := "NodePool " + d.name
	sp := d.n.get("spec")
	tmpl := sp.get("template")
	ts := tmpl.get("spec")
	pb := newPool(spec.ProviderEKS, d.name, d.n.at)
	p := &pb.p
	reqs := kpRequirements(ts)
	gpuSelected := kpSelectsGPU(reqs)
	types, typesAt, ok := kpInstanceTypes(b, what, d.n.at, reqs, gpuSelected)
	if !ok {
		return
	}
	switch len(types) {
	case 0:
	case 1:
		p.MachineType = types[0]
		pb.at(".machineType", typesAt)
	default:
		p.InstanceTypes = types
		pb.at(".instanceTypes", typesAt)
	}
	kpCapacity(b, pb, what, reqs)
	if r, ok := reqs[kpZone]; ok && r.op == "In" {
		p.Zones = r.values
		pb.at(".zones", r.at)
	}
	tobj := &yObj{n: ts, what: what}
	for _, t := range tobj.blocks("taints") {
		pb.taint(t)
	}
	if md := tmpl.get("metadata"); md != nil {
		pb.labels(".labels", (&yObj{n: md, what: what + " template metadata"}).get("labels"), &p.Labels)
	}
	kpNodeClassRef(b, pb, what, ts.get("nodeClassRef"), reqs, set, used)
	kpGPULimit(b, pb, what, sp)
	kpUnread(b, what+" spec", sp, "template", "limits")
	kpUnread(b, what+" template spec", ts, "requirements", "taints", "nodeClassRef")
	kpUnreadReqs(b, what, ts)
	if !gpuSelected && len(types) == 0 {
		b.skip(what, "not a GPU node pool: no requirement selects GPU instances", d.n.at)
		return
	}
	if kpCPUTypes(b, what, types, d.n.at) {
		return
	}
	pb.unknowns = append(pb.unknowns, d.unknowns...)
	if !gpuPool(b, pb, false, what, d.n.at) {
		return
	}
	b.addPool(pb)
}

// kpCPUTypes reports whether none of the instance types listed is a GPU
// instance type of gpuctl's matrix, and lists the pool as skipped then:
// the OS image of an AMI alias or of EKS Auto Mode is the NVIDIA variant
// Karpenter or Auto Mode picks for GPU instances, not a sign of one.
func kpCPUTypes(b *builder, what string, types []string, at Origin) bool {
	if len(types) == 0 {
		return false
	}
	for _, t := range types {
		if m, ok := matrix.LookupMachine(spec.ProviderEKS, t); ok && m.GPU != "" {
			return false
		}
	}
	b.skip(what, fmt.Sprintf("not a GPU node pool (%s, no accelerators)", strings.Join(types, ", ")), at)
	return true
}

// kpRequirements are the requirements of a NodePool's template spec ts,
// by key.
func kpRequirements(ts *ynode) map[string]kpReq {
	reqs := map[string]kpReq{}
	rs := ts.get("requirements")
	if rs == nil {
		return reqs
	}
	for _, r := range rs.items {
		var vals []string
		if vs := r.get("values"); vs != nil {
			for _, v := range vs.items {
				vals = append(vals, v.str())
			}
		}
		reqs[kpReqKey(r.get("key").str())] = kpReq{op: r.get("operator").str(), values: vals, at: r.at}
	}
	return reqs
}

// kpSelectsGPU reports whether a requirement selects GPU instances.
func kpSelectsGPU(reqs map[string]kpReq) bool {
	for _, k := range kpGPUKeys {
		if _, ok := reqs[k]; ok {
			return true
		}
	}
	return false
}

// kpInstanceTypes are the pool's instance types and where they are
// written: those of an instance-type In requirement, else those of
// gpuctl's matrix that match the GPU requirements (said as a skip, with
// Karpenter's default architecture, amd64, added to reqs when unset).
// ok is false when the GPU requirements match no type (recorded as a
// skip of the pool, written at at).
func kpInstanceTypes(b *builder, what string, at Origin, reqs map[string]kpReq, gpuSelected bool) (types []string, typesAt Origin, ok bool) {
	if r, ok := reqs[kpInstanceType]; ok && r.op == "In" {
		return r.values, r.at, true
	}
	if !gpuSelected {
		return nil, Origin{}, true
	}
	if _, ok := reqs[kpArch]; !ok {
		// Karpenter's default when a NodePool does not say.
		reqs[kpArch] = kpReq{op: "In", values: []string{"amd64"}}
	}
	for _, m := range matrix.Machines(spec.ProviderEKS) {
		if kpMatches(m, reqs) {
			types = append(types, m.Name)
		}
	}
	for _, k := range kpGPUKeys {
		if r, ok := reqs[k]; ok && (typesAt.File == "" || r.at.Line < typesAt.Line) {
			typesAt = r.at
		}
	}
	if len(types) == 0 {
		b.skip(what, "its requirements match no GPU instance type gpuctl's matrix lists", at)
		return nil, typesAt, false
	}
	b.skip(what+" instance types", fmt.Sprintf("derived from its requirements over the GPU instance types gpuctl's matrix lists (%d match); Karpenter may also launch types the matrix does not list", len(types)), typesAt)
	return types, typesAt, true
}

// kpCapacity reads karpenter.sh/capacity-type In: the capacity Karpenter
// prefers of those allowed (reserved, then spot, then on-demand; reserved
// with karpenter.k8s.aws/capacity-reservation-type In [capacity-block] is
// a Capacity Block); more than one allowed is said as a skip.
func kpCapacity(b *builder, pb *poolB, what string, reqs map[string]kpReq) {
	r, ok := reqs[kpCapacityType]
	if !ok || r.op != "In" {
		return
	}
	p := &pb.p
	for _, c := range []struct{ karpenter, spec string }{{"reserved", spec.CapacityReservation}, {"spot", spec.CapacitySpot}, {"on-demand", spec.CapacityOnDemand}} {
		if contains(r.values, c.karpenter) {
			p.Capacity = c.spec
			pb.at(".capacity", r.at)
			break
		}
	}
	if rt, ok := reqs[kpReservationType]; ok && p.Capacity == spec.CapacityReservation && rt.op == "In" && len(rt.values) == 1 && rt.values[0] == "capacity-block" {
		p.Capacity = spec.CapacityCapacityBlock
	}
	if len(r.values) > 1 {
		b.skip(what+" "+kpCapacityType, fmt.Sprintf("allows %s: the spec holds one capacity, imported as the one Karpenter prefers (%s)", strings.Join(r.values, ", "), p.Capacity), r.at)
	}
}

// kpNodeClassRef imports the node class the NodePool's nodeClassRef ref
// names (marked in used), with the architecture of a one-value arch
// requirement: an EKS Auto Mode NodeClass (group eks.amazonaws.com), read
// or not, or an EC2NodeClass; an EC2NodeClass not among those read leaves
// the OS image unknown.
func kpNodeClassRef(b *builder, pb *poolB, what string, ref *ynode, reqs map[string]kpReq, set *kpSet, used map[string]bool) {
	var arch string
	if r, ok := reqs[kpArch]; ok && r.op == "In" && len(r.values) == 1 {
		arch = r.values[0]
	}
	cn := ref.get("name").str()
	if cn == "" {
		return
	}
	if ref.get("group").str() == kpAutoGroup || ref.get("kind").str() == kpAutoKind {
		c, ok := set.class(kpAutoKind, cn)
		if ok {
			used[kpAutoKind+" "+cn] = true
		}
		kpAutoMode(b, pb, ref, c, ok, arch)
		return
	}
	if c, ok := set.class("EC2NodeClass", cn); ok {
		used["EC2NodeClass "+cn] = true
		kpNodeClass(b, pb, c, arch)
		return
	}
	pb.unknowns = append(pb.unknowns, Unknown{Path: ".osImage", What: what + " nodeClassRef " + cn,
		Because: []string{"EC2NodeClass " + cn + ", which is not in the files read"}, Origin: ref.at,
		Hint: "give the file or folder that holds EC2NodeClass " + cn + " too"})
}

// kpGPULimit reads limits nvidia.com/gpu over the GPUs per node of the
// pool's instance types as autoscaling.max.
func kpGPULimit(b *builder, pb *poolB, what string, sp *ynode) {
	lim := sp.get("limits").get("nvidia.com/gpu")
	if lim == nil {
		return
	}
	n, err := quantity(lim.str())
	per, ok := kpGPUsPerNode(&pb.p)
	switch {
	case err != nil:
		b.skip(what+" limits nvidia.com/gpu", err.Error(), lim.at)
	case !ok:
		b.skip(what+" limits nvidia.com/gpu", "its instance types differ in GPUs per node: no node count follows from the GPU limit", lim.at)
	default:
		pb.p.Autoscaling.Max = int(n) / per
		pb.at(".autoscaling", lim.at)
		pb.at(".autoscaling.max", lim.at)
	}
}

// kpGPUsPerNode is the GPUs per node of the pool's instance types when
// they all have the same.
func kpGPUsPerNode(p *spec.NodePool) (int, bool) {
	per := 0
	for _, t := range p.MachineTypes() {
		n, ok := matrix.GPUsPerNode(spec.ProviderEKS, t, 0)
		if !ok || n == 0 || (per != 0 && n != per) {
			return 0, false
		}
		per = n
	}
	return per, per > 0
}

// kpUnread lists the keys of n other than read as one skip.
func kpUnread(b *builder, what string, n *ynode, read ...string) {
	if n == nil || n.kind != yMap {
		return
	}
	var ks []string
	for _, k := range n.keys {
		if !contains(read, k) {
			ks = append(ks, k)
		}
	}
	if len(ks) > 0 {
		b.skip(what+" "+strings.Join(ks, ", "), "no gpuctl spec field", n.at)
	}
}

// kpAMIFamilies are the AMI types of Karpenter's alias families on GPU
// instances, by architecture.
var kpAMIFamilies = map[string]map[string]string{
	"al2023":       {"amd64": "AL2023_x86_64_NVIDIA", "arm64": "AL2023_ARM_64_NVIDIA"},
	"bottlerocket": {"amd64": "BOTTLEROCKET_x86_64_NVIDIA", "arm64": "BOTTLEROCKET_ARM_64_NVIDIA"},
	"al2":          {"amd64": "AL2_x86_64_GPU"},
}

// kpNodeClass imports the EC2NodeClass c into the pool: its AMI as the OS
// image (for arch, else the pool's first instance type's, else amd64),
// the disk, EFA, the placement group and the capacity reservation.
func kpNodeClass(b *builder, pb *poolB, c kpDoc, arch string) {
	what := "EC2NodeClass " + c.name
	sp := c.n.get("spec")
	if arch == "" {
		arch = kpPoolArch(&pb.p)
	}
	family := kpAMI(b, pb, what, sp, arch)
	kpDisk(b, pb, what, sp, family)
	if nis := sp.get("networkInterfaces"); nis != nil {
		for _, ni := range nis.items {
			if ni.get("interfaceType").str() == "efa-only" {
				pb.p.EFA.Enabled = true
				efaOnly := true
				pb.p.EFA.EFAOnly = &efaOnly
				pb.at(".efa", ni.at)
				pb.at(".efa.enabled", ni.at)
				pb.at(".efa.efaOnly", ni.at)
				break
			}
		}
	}
	kpPlacementGroup(b, pb, what, sp)
	kpReservation(pb, what, sp)
	// instanceStorePolicy RAID0: the instance store volumes in one RAID-0
	// array for the kubelet and containerd.
	// Source: https://karpenter.sh/docs/concepts/nodeclasses/#specinstancestorepolicy (2026-12-02).
	if isp := sp.get("instanceStorePolicy"); isp != nil && strings.EqualFold(isp.str(), "RAID0") {
		pb.p.LocalStorage = spec.LocalStorageRAID0
		pb.at(".localStorage", isp.at)
	}
	kpUnread(b, what+" spec", sp, "amiSelectorTerms", "amiFamily", "blockDeviceMappings", "networkInterfaces", "placementGroupSelector", "capacityReservationSelectorTerms", "instanceStorePolicy")
}

// kpPoolArch is the architecture of the pool's first instance type,
// amd64 when it has none or the matrix does not say.
func kpPoolArch(p *spec.NodePool) string {
	if ts := p.MachineTypes(); len(ts) > 0 {
		if m, ok := matrix.LookupMachine(spec.ProviderEKS, ts[0]); ok && m.Arch != "" {
			return m.Arch
		}
	}
	return "amd64"
}

// kpAMI imports the node class's AMI family (amiFamily, or the first
// amiSelectorTerms term's alias, which decides) as the EKS-optimized
// NVIDIA AMI type for arch, and returns the family ("" when a custom AMI
// leaves the OS image unknown).
func kpAMI(b *builder, pb *poolB, what string, sp *ynode, arch string) string {
	family := strings.ToLower(sp.get("amiFamily").str())
	var at Origin
	if fam := sp.get("amiFamily"); fam != nil {
		at = fam.at
	}
	// The first term decides: Karpenter takes an alias term alone.
	if terms := sp.get("amiSelectorTerms"); terms != nil && len(terms.items) > 0 {
		family, at = kpAMITerm(b, pb, what, terms.items[0])
	}
	if family == "" {
		return ""
	}
	if ami, ok := kpAMIFamilies[family][arch]; ok {
		pb.p.OSImage = ami
		pb.at(".osImage", at)
	} else {
		b.skip(what+" AMI family "+family, "an AMI family without an NVIDIA EKS-optimized variant for "+arch, at)
	}
	return family
}

// kpAMITerm reads an amiSelectorTerms term t: an alias's family and where
// it is written (a pinned version said as a skip), or "" for a custom AMI,
// which leaves the OS image unknown.
func kpAMITerm(b *builder, pb *poolB, what string, t *ynode) (string, Origin) {
	alias := t.get("alias").str()
	if alias == "" {
		pb.unknowns = append(pb.unknowns, Unknown{Path: ".osImage", What: what + " amiSelectorTerms",
			Because: []string{"a custom AMI Karpenter selects by id, name, tags or SSM parameter when it launches a node"}, Origin: t.at})
		return "", Origin{}
	}
	f, ver, _ := strings.Cut(alias, "@")
	at := t.get("alias").at
	if ver != "" && ver != "latest" {
		b.skip(what+" AMI version "+ver, "a pinned Karpenter alias version has no spec field (releaseVersion is an EKS node group's)", at)
	}
	return strings.ToLower(f), at
}

// kpDisk reads the size of the root volume (on Bottlerocket, family
// "bottlerocket", the data volume) of blockDeviceMappings as diskSizeGB.
func kpDisk(b *builder, pb *poolB, what string, sp *ynode, family string) {
	bdm := sp.get("blockDeviceMappings")
	if bdm == nil {
		return
	}
	dev := "/dev/xvda"
	if family == "bottlerocket" {
		dev = "/dev/xvdb"
	}
	var pick *ynode
	for _, m := range bdm.items {
		if rv := m.get("rootVolume"); rv != nil && rv.scalar == true {
			pick = m
			break
		}
		if m.get("deviceName").str() == dev && pick == nil {
			pick = m
		}
	}
	if vt := pick.get("ebs").get("volumeType"); vt != nil && vt.str() != "" {
		pb.p.DiskType = vt.str()
		pb.at(".diskType", vt.at)
	}
	vs := pick.get("ebs").get("volumeSize")
	if vs == nil {
		return
	}
	if n, err := quantity(vs.str()); err == nil {
		pb.p.DiskSizeGB = int(math.Ceil(n / (1 << 30)))
		pb.at(".diskSizeGB", vs.at)
	} else {
		b.skip(what+" volumeSize", err.Error(), vs.at)
	}
}

// kpPlacementGroup reads placementGroupSelector's name as the placement
// group; one selected by id is said as a skip.
func kpPlacementGroup(b *builder, pb *poolB, what string, sp *ynode) {
	pg := sp.get("placementGroupSelector")
	if pg == nil {
		return
	}
	if n := pg.get("name"); n != nil && n.str() != "" {
		pb.p.PlacementGroup = n.str()
		pb.at(".placementGroup", n.at)
	} else if id := pg.get("id"); id != nil {
		b.skip(what+" placementGroupSelector id "+id.str(), "the spec names a placement group by name", id.at)
	}
}

// kpReservation reads the first capacityReservationSelectorTerms term's
// id as the reservation (and reserved capacity, unless another is set); a
// reservation selected by tags is unknown.
func kpReservation(pb *poolB, what string, sp *ynode) {
	crs := sp.get("capacityReservationSelectorTerms")
	if crs == nil || len(crs.items) == 0 {
		return
	}
	p := &pb.p
	id := crs.items[0].get("id")
	if id == nil || id.str() == "" {
		pb.unknowns = append(pb.unknowns, Unknown{Path: ".reservation", What: what + " capacityReservationSelectorTerms",
			Because: []string{"a capacity reservation Karpenter selects by tags"}, Origin: crs.at})
		return
	}
	p.Reservation = id.str()
	pb.at(".reservation", id.at)
	if p.Capacity == "" || p.Capacity == spec.CapacityReservation {
		p.Capacity = spec.CapacityReservation
		pb.at(".capacity", id.at)
	}
}

var quantityRe = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$`)

// quantity parses a Kubernetes resource quantity ("100Gi", "16").
func quantity(s string) (float64, error) {
	m := quantityRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a quantity gpuctl reads", s)
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	mult := map[string]float64{"": 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50,
		"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}[m[2]]
	return n * mult, nil
}
