package importer

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// sink records where each field it sets came from, and the unknown values
// it could not set. Paths are spec paths, relative to the pool for a
// pool's sink (".gpu.type").
type sink struct {
	origins  map[string]Origin
	unknowns []Unknown
}

func newSink() sink { return sink{origins: map[string]Origin{}} }

func (s *sink) unknown(path string, x val) {
	s.unknowns = append(s.unknowns, Unknown{Path: path, What: x.what, Because: x.why, Origin: x.at})
}

// usable reports whether x can set a field: present and known; an unknown
// value is recorded.
func (s *sink) usable(path string, x val) bool {
	if x.absent() {
		return false
	}
	if x.unknown() {
		s.unknown(path, x)
		return false
	}
	return true
}

func (s *sink) str(path string, x val, dst *string) bool {
	if !s.usable(path, x) {
		return false
	}
	v, ok := x.str()
	if !ok || !s.writable(path, x, v) {
		return false
	}
	*dst = v
	s.origins[path] = x.at
	return true
}

// strIfEmpty sets dst only where nothing set it yet.
func (s *sink) strIfEmpty(path string, x val, dst *string) bool {
	if *dst != "" {
		return false
	}
	return s.str(path, x, dst)
}

func (s *sink) num(path string, x val, dst *int) bool {
	if !s.usable(path, x) {
		return false
	}
	v, ok := x.int()
	if !ok {
		// a known value that is not a whole number (1.5, "abc", 1e30) is
		// left out, and said so, instead of dropped without a word
		s.unknowns = append(s.unknowns, Unknown{Path: path, What: x.what, Origin: x.at,
			Because: []string{"a value that is not a whole number a spec can hold"}})
		return false
	}
	*dst = v
	s.origins[path] = x.at
	return true
}

func (s *sink) flag(path string, x val, dst **bool) bool {
	if !s.usable(path, x) {
		return false
	}
	v, ok := x.bool()
	if !ok {
		return false
	}
	*dst = &v
	s.origins[path] = x.at
	return true
}

func (s *sink) strs(path string, x val, dst *[]string) bool {
	if !s.usable(path, x) {
		return false
	}
	v, ok := x.strs()
	if !ok || len(v) == 0 || !s.writable(path, x, strings.Join(v, "")) {
		return false
	}
	*dst = v
	s.origins[path] = x.at
	return true
}

// labels merges the string map x into dst, each key at its own origin.
func (s *sink) labels(path string, x val, dst *map[string]string) bool {
	if !s.usable(path, x) {
		return false
	}
	m, ok := x.strmap()
	if !ok || len(m) == 0 {
		return false
	}
	if *dst == nil {
		*dst = map[string]string{}
	}
	for k, v := range m {
		if !s.writable(path+spec.Key(k), x, k+v) {
			continue
		}
		(*dst)[k] = v
		s.origins[path+spec.Key(k)] = x.at
	}
	if _, ok := s.origins[path]; !ok {
		s.origins[path] = x.at
	}
	return true
}

// writable reports whether text (a value, or a key and its value) can be
// written into a spec: a line break or other control character cannot (a
// spec refuses them, and they would break the comment lines import writes),
// so the value is left out and listed with the reason, at its origin.
func (s *sink) writable(path string, x val, text string) bool {
	if !strings.ContainsFunc(text, spec.ControlRune) {
		return true
	}
	s.unknowns = append(s.unknowns, Unknown{Path: path, What: x.what, Origin: x.at,
		Because: []string{"a value with a line break or another control character, which a spec cannot hold"}})
	return false
}

func (s *sink) at(path string, o Origin) {
	if o.File != "" {
		s.origins[path] = o
	}
}

// gkeZones is how many zones a GKE pool runs in: its node locations, else
// one when its location is a zone; 0 with the reason when the files do not
// say (a regional location: GKE picks the region's default zones).
func gkeZones(zones []string, location string) (int, string) {
	switch {
	case len(zones) > 0:
		return len(zones), ""
	case gkeZone.MatchString(location):
		return 1, ""
	case location == "":
		return 0, "the zones the pool runs in: neither node_locations nor the location is known"
	}
	return 0, fmt.Sprintf("the zones the pool runs in: node_locations is not set and %s is a region, whose default zones GKE picks (set node_locations, or give total_min/total_max counts)", location)
}

var gkeZone = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+-[a-z]$`)

// perZone sets dst from x, a GKE node count per zone (min_node_count,
// node_count, the module's min_count): the spec's autoscaling bounds are
// totals, so it is x times the pool's zones, said in the origin's note.
// With the zones unknown (zones 0, why the reason) the total is unknown.
func (pb *poolB) perZone(path string, x val, dst *int, zones int, why string) bool {
	if !pb.usable(path, x) {
		return false
	}
	v, ok := x.int()
	if !ok {
		return false
	}
	attr := x.what
	if i := strings.LastIndexByte(attr, ' '); i >= 0 {
		attr = attr[i+1:]
	}
	if zones == 0 && v == 0 {
		zones = 1 // zero per zone is zero in all
	}
	if zones == 0 {
		pb.unknowns = append(pb.unknowns, Unknown{Path: path, What: fmt.Sprintf("%s (%d per zone) as a total", x.what, v), Because: []string{why}, Origin: x.at})
		return false
	}
	*dst = v * zones
	o := x.at
	if o.Note != "" { // a module default: say so, and which value it is
		attr = o.Note
	}
	o.Note = fmt.Sprintf("%s %d per zone x %d zone(s)", attr, v, zones)
	pb.origins[path] = o
	return true
}

// poolB is a node pool being imported.
type poolB struct {
	sink
	p spec.NodePool
	// provider is gke or eks.
	provider string
	// disksByDefault says the source gives the pool's local NVMe SSDs to
	// the node without being told (cluster-toolkit's gke-node-pool module
	// on A3/A4); elsewhere a pool that does not set them up has none.
	disksByDefault bool
}

func newPool(provider, name string, at Origin) *poolB {
	pb := &poolB{sink: newSink(), provider: provider}
	pb.p.Name = name
	pb.origins[""] = at
	pb.origins[".name"] = at
	return pb
}

// gkeImage reads a GKE image_type into osImage in GKE's own spelling: the
// google provider compares image_type without case (DiffSuppressFunc
// tpgresource.CaseDiffSuppress in google/services/container/node_config.go
// of https://github.com/hashicorp/terraform-provider-google, commit
// 00b984c6987304290117e54f87cdfd38f2be0685; checked 2026-12-02), so
// "cos_containerd" is COS_CONTAINERD, said in the origin's note.
func (pb *poolB) gkeImage(x val) {
	p := &pb.p
	if !pb.str(".osImage", x, &p.OSImage) || p.OSImage == strings.ToUpper(p.OSImage) {
		return
	}
	p.OSImage = strings.ToUpper(p.OSImage)
	o := pb.origins[".osImage"]
	o.Note = "image_type upper-cased (GKE image types are case-insensitive)"
	pb.origins[".osImage"] = o
}

// nameUnknown lists the pool's name as unknown when the first of names
// that is set is unknown (the pool then carries the name import stood in
// for it, which the rules do not judge).
func (pb *poolB) nameUnknown(names ...val) {
	for _, x := range names {
		switch {
		case x.unknown():
			// no Hint: the general one names the variable it depends on
			pb.unknowns = append(pb.unknowns, Unknown{Path: ".name", What: x.what + " (the pool is imported as " + pb.p.Name + ")", Because: x.why, Origin: x.at})
			return
		case !x.absent():
			return
		}
	}
}

// taint adds a taint read from o (key, value, effect; effect as the
// Terraform providers or Kubernetes spell it).
func (pb *poolB) taint(o obj) {
	var t spec.Taint
	i := len(pb.p.Taints)
	base := fmt.Sprintf(".taints[%d]", i)
	sub := newSink()
	sub.str(base+".key", o.get("key"), &t.Key)
	sub.str(base+".value", o.get("value"), &t.Value)
	sub.str(base+".effect", o.get("effect"), &t.Effect)
	if t.Key == "" {
		pb.unknowns = append(pb.unknowns, sub.unknowns...)
		return
	}
	t.Effect = taintEffect(t.Effect)
	pb.p.Taints = append(pb.p.Taints, t)
	for k, v := range sub.origins {
		pb.origins[k] = v
	}
	pb.unknowns = append(pb.unknowns, sub.unknowns...)
	pb.origins[base] = o.origin()
	if _, ok := pb.origins[".taints"]; !ok {
		pb.origins[".taints"] = o.origin()
	}
}

// taintEffect maps the APIs' NO_SCHEDULE to Kubernetes' NoSchedule.
func taintEffect(e string) string {
	switch strings.ToUpper(strings.ReplaceAll(e, "_", "")) {
	case "NOSCHEDULE":
		return "NoSchedule"
	case "PREFERNOSCHEDULE":
		return "PreferNoSchedule"
	case "NOEXECUTE":
		return "NoExecute"
	}
	return e
}

// builder collects the spec of one import.
type builder struct {
	sink
	from    string
	cs      spec.ClusterSpec
	pools   []*poolB
	skipped []Skipped
	files   []string
	// k8sAddons: the configuration installs something into the cluster
	// (a helm_release, a kubernetes_* or kubectl_* resource, a module
	// gpuctl does not read).
	k8sAddons bool
	// clusterRead: a cluster resource or module call was read (else the
	// node pools join a cluster the files do not create).
	clusterRead bool
	// driverInstaller is the address of a resource or data source that
	// applies NVIDIA's driver installer DaemonSet on GKE ("" for none).
	driverInstaller string
	// ctx is the import's context: a long loop of a reader stops when it
	// is done (alive).
	ctx context.Context
}

// alive is nil while the import's context is not done, else an error
// wrapping the context's error; readers call it in their loops over files,
// documents, blocks and modules.
func (b *builder) alive() error { return stopped(b.ctx) }

func newBuilder(from string) *builder {
	b := &builder{sink: newSink(), from: from}
	b.cs.APIVersion, b.cs.Kind = spec.APIVersion, spec.Kind
	return b
}

func (b *builder) skip(what, reason string, at Origin) {
	b.skipped = append(b.skipped, Skipped{What: what, Reason: reason, Origin: at})
}

// provider sets spec.provider once; a second provider is a skip.
func (b *builder) provider(p string, at Origin) bool {
	switch b.cs.Spec.Provider {
	case "":
		b.cs.Spec.Provider = p
		b.at("spec.provider", at)
		return true
	case p:
		return true
	}
	return false
}

func (b *builder) addPool(pb *poolB) {
	if !b.provider(pb.provider, pb.origins[""]) {
		b.skip("node pool "+pb.p.Name, fmt.Sprintf("a %s pool in a %s spec: one spec holds one provider's pools", pb.provider, b.cs.Spec.Provider), pb.origins[""])
		return
	}
	b.pools = append(b.pools, pb)
}

// addPools adds the pools found to the spec in order, a repeated name
// numbered (-2, -3...), with their origins and unknowns under their spec
// paths.
func (b *builder) addPools() {
	s := &b.cs.Spec
	seen := map[string]int{}
	for i, pb := range b.pools {
		n := pb.p.Name
		if seen[n] > 0 {
			pb.p.Name = fmt.Sprintf("%s-%d", n, seen[n]+1)
			b.skip(n, fmt.Sprintf("pool %d named %s in the files read (the name is taken: in one cluster, one would replace the other): imported as %s", seen[n]+1, diag.OneLine(n), pb.p.Name), pb.origins[""])
		}
		seen[n]++
		keepNoLocalDisks(s.Provider, pb)
		s.NodePools = append(s.NodePools, pb.p)
		base := spec.PoolPath(i)
		for rel, o := range pb.origins {
			b.origins[base+rel] = o
		}
		for _, u := range pb.unknowns {
			u.Path = base + u.Path
			if _, ok := b.origins[u.Path]; !ok {
				b.origins[u.Path] = u.Origin // findings on the field point at what it depends on
			}
			b.unknowns = append(b.unknowns, u)
		}
	}
}

// keepNoLocalDisks writes localStorage: none on a pool whose source sets
// up no local NVMe SSDs (no ephemeral_storage_local_ssd_config, nodeadm
// RAID0 or instanceStorePolicy) where gpuctl would otherwise give them to
// it (a training pool on a machine that has them: spec's default), so
// that generate from the import keeps the nodes as they are instead of
// replacing them.
func keepNoLocalDisks(provider string, pb *poolB) {
	p := &pb.p
	if pb.disksByDefault || p.LocalStorage != "" || matrix.EffectiveLocalStorage(provider, p) != spec.LocalStorageRAID0 {
		return
	}
	p.LocalStorage = spec.LocalStorageNone
	pb.origins[".localStorage"] = pb.origins[""]
}

// specName is the imported spec's metadata.name: name (--name), else the
// cluster's name, else the first path's base name, as an object name;
// "imported" where nothing is left.
func specName(name, clusterName string, paths []string) string {
	if name == "" {
		name = clusterName
	}
	if name == "" && len(paths) > 0 {
		name = strings.TrimSuffix(filepath.Base(filepath.Clean(paths[0])), filepath.Ext(paths[0]))
	}
	if name = objectName(name); name == "" {
		return "imported"
	}
	return name
}

// objectName is name in lower case with every run of other characters
// than letters, digits and "-" as one "-", trimmed of "-".
func objectName(name string) string {
	return strings.Trim(notName.ReplaceAllString(strings.ToLower(name), "-"), "-")
}

var notName = regexp.MustCompile(`[^a-z0-9-]+`)

// finish assembles the spec: pools in the order found, names made unique,
// origins under their spec paths.
func (b *builder) finish(name string, paths []string) *Result {
	s := &b.cs.Spec
	b.addPools()
	for _, u := range b.unknowns {
		if _, ok := b.origins[u.Path]; !ok && u.Origin.File != "" {
			b.origins[u.Path] = u.Origin // findings on the field point at what it depends on
		}
	}
	if len(s.NodePools) > 0 {
		if _, ok := b.origins["spec.nodePools"]; !ok {
			b.origins["spec.nodePools"] = b.origins[spec.PoolPath(0)]
		}
	}
	b.cs.Metadata.Name = specName(name, s.ClusterName, paths)
	if o, ok := b.origins["spec.clusterName"]; ok && s.ClusterName != "" && b.cs.Metadata.Name == objectName(s.ClusterName) {
		b.origins["metadata.name"] = o
	}
	if o, ok := b.origins[spec.PoolPath(0)]; ok {
		b.origins["spec"] = o
	}
	sortOrigins(b.unknowns, func(u Unknown) Origin { return u.Origin })
	sortOrigins(b.skipped, func(s Skipped) Origin { return s.Origin })
	return &Result{Spec: &b.cs, From: b.from, Files: b.files, Origins: b.origins, Unknowns: b.unknowns, Skipped: b.skipped}
}
