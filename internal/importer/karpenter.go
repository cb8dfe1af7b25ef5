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

// Karpenter (karpenter.sh/v1 NodePool, karpenter.k8s.aws/v1 EC2NodeClass):
// each NodePool that selects GPU instances is one node pool of the spec.
//
//   - Instance types: node.kubernetes.io/instance-type In [...] is the
//     pool's machineType (one) or instanceTypes (several) — an EKS pool of
//     the spec may hold several types, as a Karpenter NodePool does, so a
//     NodePool is never split. Without it, the instance types are those of
//     gpuctl's matrix that match the pool's family, category, generation,
//     size, GPU name, GPU count and architecture requirements; Karpenter may
//     also launch types the matrix does not list, which is said as a skip.
//   - karpenter.sh/capacity-type: the one Karpenter prefers of those allowed
//     (reserved, then spot, then on-demand); unset is on-demand.
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
)

// kpDoc is a Karpenter document read.
type kpDoc struct {
	kind, name string
	n          *ynode
}

func importKarpenter(b *builder, paths []string) error {
	var pools []kpDoc
	classes := map[string]kpDoc{}
	err := eachYAMLDoc(b, paths, FromKarpenter, func(_ string, d *ynode) error {
		api, kind := d.get("apiVersion").str(), d.get("kind").str()
		name := d.get("metadata").get("name").str()
		switch {
		case strings.HasPrefix(api, "karpenter.sh/") && kind == "NodePool":
			pools = append(pools, kpDoc{kind, name, d})
		case strings.HasPrefix(api, "karpenter.k8s.aws/") && kind == "EC2NodeClass":
			classes[name] = kpDoc{kind, name, d}
		default:
			what := kind
			if what == "" {
				what = "document"
			}
			b.skip(strings.TrimSpace(what+" "+name), "not a Karpenter NodePool or EC2NodeClass", d.at)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(pools) == 0 && len(classes) == 0 {
		return fmt.Errorf("%s: no Karpenter NodePool or EC2NodeClass", paths[0])
	}
	// NodePools do not name the cluster Karpenter runs in.
	at := Origin{File: b.files[0]}
	if len(pools) > 0 {
		at = pools[0].n.at
	}
	for _, f := range []struct{ path, what string }{{"spec.clusterName", "the cluster name"}, {"spec.region", "the region"}, {"spec.kubernetesVersion", "the Kubernetes version"}} {
		b.unknowns = append(b.unknowns, Unknown{Path: f.path, What: f.what, Origin: at,
			Because: []string{"the cluster Karpenter runs in, which a NodePool or EC2NodeClass does not name"}})
	}
	used := map[string]bool{}
	for _, d := range pools {
		kpPool(b, d, classes, used)
	}
	var names []string
	for n := range classes {
		if !used[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		b.skip("EC2NodeClass "+n, "no GPU NodePool of the files refers to it", classes[n].n.at)
	}
	return nil
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

func kpPool(b *builder, d kpDoc, classes map[string]kpDoc, used map[string]bool) {
	what := "NodePool " + d.name
	sp := d.n.get("spec")
	tmpl := sp.get("template")
	ts := tmpl.get("spec")
	pb := newPool(spec.ProviderEKS, d.name, d.n.at)
	p := &pb.p
	reqs := map[string]kpReq{}
	if rs := ts.get("requirements"); rs != nil {
		for _, r := range rs.items {
			var vals []string
			if vs := r.get("values"); vs != nil {
				for _, v := range vs.items {
					vals = append(vals, v.str())
				}
			}
			reqs[r.get("key").str()] = kpReq{op: r.get("operator").str(), values: vals, at: r.at}
		}
	}
	gpuSelected := false
	for _, k := range kpGPUKeys {
		if _, ok := reqs[k]; ok {
			gpuSelected = true
		}
	}
	var types []string
	var typesAt Origin
	if r, ok := reqs[kpInstanceType]; ok && r.op == "In" {
		types, typesAt = r.values, r.at
	} else if gpuSelected {
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
			b.skip(what, "its requirements match no GPU instance type gpuctl's matrix lists", d.n.at)
			return
		}
		b.skip(what+" instance types", fmt.Sprintf("derived from its requirements over the GPU instance types gpuctl's matrix lists (%d match); Karpenter may also launch types the matrix does not list", len(types)), typesAt)
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
	if r, ok := reqs[kpCapacityType]; ok && r.op == "In" {
		for _, c := range []struct{ karpenter, spec string }{{"reserved", spec.CapacityReservation}, {"spot", spec.CapacitySpot}, {"on-demand", spec.CapacityOnDemand}} {
			if contains(r.values, c.karpenter) {
				p.Capacity = c.spec
				pb.at(".capacity", r.at)
				break
			}
		}
		if len(r.values) > 1 {
			b.skip(what+" "+kpCapacityType, fmt.Sprintf("allows %s: the spec holds one capacity, imported as the one Karpenter prefers (%s)", strings.Join(r.values, ", "), p.Capacity), r.at)
		}
	}
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
	// The EC2NodeClass.
	ref := ts.get("nodeClassRef")
	var ncArch string
	if r, ok := reqs[kpArch]; ok && r.op == "In" && len(r.values) == 1 {
		ncArch = r.values[0]
	}
	if cn := ref.get("name").str(); cn != "" {
		if c, ok := classes[cn]; ok {
			used[cn] = true
			kpNodeClass(b, pb, c, ncArch)
		} else {
			pb.unknowns = append(pb.unknowns, Unknown{Path: ".osImage", What: what + " nodeClassRef " + cn,
				Because: []string{"EC2NodeClass " + cn + ", which is not in the files read"}, Origin: ref.at})
		}
	}
	// limits: nvidia.com/gpu over GPUs per node.
	if lim := sp.get("limits").get("nvidia.com/gpu"); lim != nil {
		n, err := quantity(lim.str())
		per, ok := kpGPUsPerNode(p)
		switch {
		case err != nil:
			b.skip(what+" limits nvidia.com/gpu", err.Error(), lim.at)
		case !ok:
			b.skip(what+" limits nvidia.com/gpu", "its instance types differ in GPUs per node: no node count follows from the GPU limit", lim.at)
		default:
			p.Autoscaling.Max = int(n) / per
			pb.at(".autoscaling", lim.at)
			pb.at(".autoscaling.max", lim.at)
		}
	}
	kpUnread(b, what+" spec", sp, "template", "limits")
	kpUnread(b, what+" template spec", ts, "requirements", "taints", "nodeClassRef")
	if !gpuSelected && len(types) == 0 {
		b.skip(what, "not a GPU node pool: no requirement selects GPU instances", d.n.at)
		return
	}
	if !gpuPool(b, pb, false, what, d.n.at) {
		return
	}
	b.addPool(pb)
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

func kpNodeClass(b *builder, pb *poolB, c kpDoc, arch string) {
	what := "EC2NodeClass " + c.name
	sp := c.n.get("spec")
	p := &pb.p
	if arch == "" {
		arch = "amd64"
		if ts := p.MachineTypes(); len(ts) > 0 {
			if m, ok := matrix.LookupMachine(spec.ProviderEKS, ts[0]); ok && m.Arch != "" {
				arch = m.Arch
			}
		}
	}
	family := strings.ToLower(sp.get("amiFamily").str())
	famAt := sp.get("amiFamily")
	var at Origin
	if famAt != nil {
		at = famAt.at
	}
	// The first term decides: Karpenter takes an alias term alone.
	if terms := sp.get("amiSelectorTerms"); terms != nil && len(terms.items) > 0 {
		t := terms.items[0]
		if alias := t.get("alias").str(); alias == "" {
			pb.unknowns = append(pb.unknowns, Unknown{Path: ".osImage", What: what + " amiSelectorTerms",
				Because: []string{"a custom AMI Karpenter selects by id, name, tags or SSM parameter when it launches a node"}, Origin: t.at})
			family = ""
		} else {
			f, ver, _ := strings.Cut(alias, "@")
			family, at = strings.ToLower(f), t.get("alias").at
			if ver != "" && ver != "latest" {
				b.skip(what+" AMI version "+ver, "a pinned Karpenter alias version has no spec field (releaseVersion is an EKS node group's)", at)
			}
		}
	}
	if family != "" {
		if ami, ok := kpAMIFamilies[family][arch]; ok {
			p.OSImage = ami
			pb.at(".osImage", at)
		} else {
			b.skip(what+" AMI family "+family, "an AMI family without an NVIDIA EKS-optimized variant for "+arch, at)
		}
	}
	// Disk: the root volume, on Bottlerocket the data volume.
	dev := "/dev/xvda"
	if family == "bottlerocket" {
		dev = "/dev/xvdb"
	}
	if bdm := sp.get("blockDeviceMappings"); bdm != nil {
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
		if pick != nil {
			if vs := pick.get("ebs").get("volumeSize"); vs != nil {
				if n, err := quantity(vs.str()); err == nil {
					p.DiskSizeGB = int(math.Ceil(n / (1 << 30)))
					pb.at(".diskSizeGB", vs.at)
				} else {
					b.skip(what+" volumeSize", err.Error(), vs.at)
				}
			}
		}
	}
	if nis := sp.get("networkInterfaces"); nis != nil {
		for _, ni := range nis.items {
			if ni.get("interfaceType").str() == "efa-only" {
				p.EFA.Enabled = true
				pb.at(".efa", ni.at)
				pb.at(".efa.enabled", ni.at)
				break
			}
		}
	}
	if pg := sp.get("placementGroupSelector"); pg != nil {
		if n := pg.get("name"); n != nil && n.str() != "" {
			p.PlacementGroup = n.str()
			pb.at(".placementGroup", n.at)
		} else if id := pg.get("id"); id != nil {
			b.skip(what+" placementGroupSelector id "+id.str(), "the spec names a placement group by name", id.at)
		}
	}
	if crs := sp.get("capacityReservationSelectorTerms"); crs != nil && len(crs.items) > 0 {
		if id := crs.items[0].get("id"); id != nil && id.str() != "" {
			p.Reservation = id.str()
			pb.at(".reservation", id.at)
			if p.Capacity == "" || p.Capacity == spec.CapacityReservation {
				p.Capacity = spec.CapacityReservation
				pb.at(".capacity", id.at)
			}
		} else {
			pb.unknowns = append(pb.unknowns, Unknown{Path: ".reservation", What: what + " capacityReservationSelectorTerms",
				Because: []string{"a capacity reservation Karpenter selects by tags"}, Origin: crs.at})
		}
	}
	kpUnread(b, what+" spec", sp, "amiSelectorTerms", "amiFamily", "blockDeviceMappings", "networkInterfaces", "placementGroupSelector", "capacityReservationSelectorTerms")
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
