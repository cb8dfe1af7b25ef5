package importer

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/safefs"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Cluster-toolkit blueprints (gcluster): a blueprint YAML has vars and
// deployment_groups of modules; each module's settings are the inputs of a
// Terraform module of the toolkit, an input it does not set is taken from
// the var of the same name, else the module's default. Import reads the
// gke-cluster and gke-node-pool modules (and the NCCL installer manifests
// of kubectl-apply) with the defaults of their variables.tf; every other
// module is listed as skipped.
//
// Settings are resolved as gcluster resolves them: $(vars.NAME) is the
// var's value (the var's line is the value's origin), a string with
// several $(...) is a template, the inside of $(...) is an HCL expression
// over vars with Terraform's pure functions; $(MODULE_ID.OUTPUT) is known
// only after deployment, and so is ((...)), a Terraform expression the
// toolkit passes through. A var without a value is unknown.

// Module sources import reads, as the tail of the source path.
const (
	bpGKECluster  = "scheduler/gke-cluster"
	bpGKENodePool = "compute/gke-node-pool"
	bpKubectl     = "management/kubectl-apply"
)

// bpNodePoolDefaults and bpClusterDefaults are gke-node-pool's and
// gke-cluster's defaults for the inputs import reads (moddefaults.yaml).
var (
	bpNodePoolDefaults = blueprintDefaults(bpGKENodePool, false)
	bpClusterDefaults  = blueprintDefaults(bpGKECluster, true)
)

// blueprint is one blueprint being imported.
type blueprint struct {
	b    *builder
	file string
	dir  string
	vars map[string]*ynode
	// resolved caches vars as resolved; resolving marks a cycle.
	resolved  map[string]*ynode
	resolving map[string]bool
	modules   map[string]bool
	funcs     map[string]function.Function
	sb        *sandbox // the functions' sandbox and the budget
	// opts are the import's (its root and context); spent counts the
	// values resolved (MaxBlueprintValues), sizes what each var resolved
	// to counts, spent again wherever it is referred to.
	opts  *Options
	spent int
	sizes map[string]int
}

// Limits of resolving a blueprint's settings, each refused with the
// file:line of the value that passes it.
const (
	// MaxBlueprintValues is the most values (mappings, lists and scalars)
	// the settings of a blueprint resolve to, a var counted in full
	// wherever it is referred to: vars that refer to each other ten times
	// a level would otherwise grow a billion values from a few lines. A
	// large blueprint resolves to a few thousand.
	MaxBlueprintValues = 1_000_000
	// MaxBlueprintTemplateBytes is the longest string a $(...) template
	// writes, in bytes (a blueprint string is at most
	// MaxBlueprintStringBytes; templates add the values written into it).
	MaxBlueprintTemplateBytes = 1 << 20
	// MaxBlueprintVarDepth is how deep vars may refer to each other.
	MaxBlueprintVarDepth = 32
	// MaxBlueprintNodePools is the most node pools one gke-node-pool
	// module makes (num_node_pools); multi-slice blueprints make tens.
	MaxBlueprintNodePools = 1_000
)

// bpModule is a module of the blueprint with its settings resolved.
type bpModule struct {
	id, source string
	at         Origin
	settings   *ynode
	use        []string
	read       map[string]bool
}

// importBlueprint imports the blueprint among paths (with its deployment
// files, whose vars override the blueprint's, and the --var values, which
// override both) into b. Errors: no blueprint or two, a malformed --var,
// a --var-file, a setting that does not resolve.
func importBlueprint(b *builder, paths []string, opts Options) error {
	bp := &blueprint{b: b, vars: map[string]*ynode{}, resolved: map[string]*ynode{}, resolving: map[string]bool{}, modules: map[string]bool{},
		opts: &opts, sizes: map[string]int{}}
	root, deployVars, err := bp.read(paths)
	if err != nil {
		return err
	}
	for _, v := range append([]*ynode{root.get("vars")}, deployVars...) {
		bp.setVars(v)
	}
	if err := bp.setCommandLineVars(opts.Vars); err != nil {
		return err
	}
	if len(opts.VarFiles) > 0 {
		return fmt.Errorf("--var-file: Terraform .tfvars files do not apply to a blueprint; pass its deployment file as a second PATH")
	}
	bp.sb = newSandbox(opts, bp.dir, newBudget(opts.ctx))
	bp.funcs = blueprintFunctions(bp.sb)
	b.provider(spec.ProviderGKE, root.at)
	if n := root.get("blueprint_name"); n != nil {
		b.at("metadata.name", n.at)
	}
	groups := root.get("deployment_groups")
	if groups == nil || groups.kind != ySeq {
		return fmt.Errorf("%s:%d: deployment_groups is not a list", bp.file, root.at.Line)
	}
	mods, err := bp.readModules(groups)
	if err != nil {
		return err
	}
	return bp.importModules(mods)
}

// read reads the YAML files of paths: the blueprint (the document with
// deployment_groups), and the vars of the others (the deployment files of
// gcluster deploy -d), in the order given.
func (bp *blueprint) read(paths []string) (root *ynode, deployVars []*ynode, err error) {
	err = eachYAMLDoc(bp.opts, bp.b, paths, FromBlueprint, func(p string, d *ynode) error {
		if d.kind != yMap {
			return fmt.Errorf("%s:%d: a blueprint is a YAML mapping", p, d.at.Line)
		}
		if d.get("deployment_groups") != nil {
			if root != nil {
				return fmt.Errorf("%s:%d: a second blueprint; import one blueprint (with its deployment files) at a time", p, d.at.Line)
			}
			root, bp.file, bp.dir = d, p, filepath.Dir(p)
		}
		if v := d.get("vars"); v != nil && v.kind == yMap && d != root {
			deployVars = append(deployVars, v)
		}
		return nil
	})
	if err == nil && root == nil {
		err = fmt.Errorf("%s: no deployment_groups: not a cluster-toolkit blueprint", paths[0])
	}
	return root, deployVars, err
}

// setVars sets the vars of the mapping v over those set before.
func (bp *blueprint) setVars(v *ynode) {
	if v == nil || v.kind != yMap {
		return
	}
	for _, k := range v.keys {
		bp.vars[k] = v.kv[k]
	}
}

// setCommandLineVars sets the --var name=value pairs over the files' vars:
// a value is read as YAML, else taken as a string. Errors: a pair without
// a name.
func (bp *blueprint) setCommandLineVars(pairs []string) error {
	for _, kv := range pairs {
		name, raw, ok := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return fmt.Errorf("--var %q: want name=value", kv)
		}
		docs, err := yamlDocs("--var "+name, []byte(raw), BlueprintLimits)
		n := &ynode{kind: yScalar, scalar: raw}
		if err == nil && len(docs) == 1 {
			n = docs[0]
		}
		setOrigin(n, Origin{File: "--var " + name})
		bp.vars[name] = n
	}
	return nil
}

// blueprintFunctions are the functions of a setting's $(...) expression:
// Terraform's pure functions and file functions of sandbox sb (inside the
// root, relative to the blueprint's folder, counted into its budget) and
// the toolkit's ghpc_stage.
func blueprintFunctions(sb *sandbox) map[string]function.Function {
	funcs := sb.funcs
	funcs["ghpc_stage"] = function.New(&function.Spec{
		// gcluster copies the file into the deployment folder; the path
		// names the file all the same.
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl:   func(args []cty.Value, _ cty.Type) (cty.Value, error) { return args[0], nil },
	})
	return funcs
}

// terraformGroups are the modules lists of the Terraform deployment
// groups; the others are recorded as skipped.
func (bp *blueprint) terraformGroups(groups *ynode) []*ynode {
	var out []*ynode
	for _, g := range groups.items {
		if k := g.get("kind").str(); k != "" && k != "terraform" {
			bp.b.skip("deployment group "+g.get("group").str(), "a "+k+" group: gpuctl reads Terraform groups", g.at)
			continue
		}
		if ms := g.get("modules"); ms != nil {
			out = append(out, ms)
		}
	}
	return out
}

// readModules reads the modules of the Terraform deployment groups with
// their settings resolved; every module's id is known first, so that a
// setting can tell $(MODULE_ID.OUTPUT) from a var.
func (bp *blueprint) readModules(groups *ynode) ([]*bpModule, error) {
	lists := bp.terraformGroups(groups)
	for _, ms := range lists {
		for _, m := range ms.items {
			if id := m.get("id").str(); id != "" {
				bp.modules[id] = true
			}
		}
	}
	var mods []*bpModule
	for _, ms := range lists {
		for _, m := range ms.items {
			if err := bp.b.alive(); err != nil {
				return nil, err
			}
			bm, err := bp.readModule(m)
			if err != nil {
				return nil, err
			}
			mods = append(mods, bm)
		}
	}
	return mods, nil
}

// readModule reads one module of a deployment group.
func (bp *blueprint) readModule(m *ynode) (*bpModule, error) {
	bm := &bpModule{id: m.get("id").str(), source: m.get("source").str(), at: m.at, read: map[string]bool{}}
	if u := m.get("use"); u != nil {
		for _, it := range u.items {
			bm.use = append(bm.use, it.str())
		}
	}
	s, err := bp.resolve(m.get("settings"), 0)
	if err != nil {
		return nil, err
	}
	bm.settings = s
	return bm, nil
}

// importModules imports the cluster, then the node pools and the
// manifests; every other module is recorded as skipped. Errors: a module
// that makes more than MaxBlueprintNodePools pools, the import's context
// done.
func (bp *blueprint) importModules(mods []*bpModule) error {
	// The cluster first, so that node pools find its settings.
	for _, m := range mods {
		if bpKind(m.source) == bpGKECluster {
			bp.cluster(m)
		}
	}
	for _, m := range mods {
		if err := bp.b.alive(); err != nil {
			return err
		}
		switch bpKind(m.source) {
		case bpGKECluster:
		case bpGKENodePool:
			if err := bp.nodePool(m); err != nil {
				return err
			}
		case bpKubectl:
			bp.kubectl(m, mods)
		default:
			bp.b.skip("module "+m.id, "module gpuctl does not import ("+m.source+"; it reads "+bpGKECluster+" and "+bpGKENodePool+")", m.at)
		}
	}
	return nil
}

// eachYAMLDoc reads the YAML files paths name (a folder: its files that hold
// from) inside opts' root, each held to the limits of from before it is
// parsed, records each in b.files and calls fn on its documents in order,
// one file at a time; the first error stops it, and so does opts' context.
func eachYAMLDoc(opts *Options, b *builder, paths []string, from string, fn func(file string, d *ynode) error) error {
	files, err := expandYAML(opts, paths, from)
	if err != nil {
		return err
	}
	for _, p := range files {
		data, err := opts.readPath(p, kindOf(from))
		if err != nil {
			return err
		}
		docs, err := yamlDocs(p, data, yamlLimits(from))
		if err != nil {
			return err
		}
		b.files = append(b.files, p)
		for _, d := range docs {
			if err := opts.alive(); err != nil {
				return err
			}
			if err := fn(p, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// expandYAML lists the YAML files of a folder path that hold from (a
// blueprint's folder: its deployment files too), read inside opts' root;
// files stay as given. Errors: a folder that cannot be listed, a YAML file
// of it that cannot be read (a FIFO, a device, a link out of the root).
func expandYAML(opts *Options, paths []string, from string) ([]string, error) {
	var out []string
	for _, p := range paths {
		isDir, err := opts.isDir(p)
		if err != nil || !isDir {
			out = append(out, p) // a file, or what reading it reports
			continue
		}
		files, err := opts.list(p, ".yaml", ".yml")
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			data, err := opts.readPath(f, kindOf(from))
			if err != nil {
				return nil, err
			}
			if got := detectYAML(data); got == from || (from == "" && got != "") ||
				(from == FromBlueprint && got == "" && hasTopKey(data, "vars")) {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

func hasTopKey(data []byte, key string) bool {
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, key+":") {
			return true
		}
	}
	return false
}

// bpKind is the module a source names ("compute/gke-node-pool"), from
// "modules/compute/gke-node-pool", "community/modules/...", or a git URL
// with "//modules/...?ref=".
func bpKind(source string) string {
	s, _, _ := strings.Cut(source, "?")
	s = strings.TrimSuffix(s, "/")
	parts := strings.Split(s, "/")
	if len(parts) < 2 {
		return s
	}
	return parts[len(parts)-2] + "/" + parts[len(parts)-1]
}

func setOrigin(n *ynode, at Origin) {
	n.at = at
	for _, c := range n.kv {
		setOrigin(c, at)
	}
	for _, c := range n.items {
		setOrigin(c, at)
	}
}

// setting is input key of m: its setting, else the var of that name
// (gcluster passes vars to inputs of the same name), else the module's
// default (at the module's line); absent when none.
func (bp *blueprint) setting(m *bpModule, key string, defaults map[string]any) val {
	m.read[key] = true
	what := "module " + m.id + " " + key
	if s := m.settings.get(key); s != nil {
		return val{v: ctyOf(s), what: what, at: s.at, why: whyUnknown(s)}
	}
	if _, ok := bp.vars[key]; ok {
		n, err := bp.varNode(key, Origin{}, 0)
		if err == nil {
			return val{v: ctyOf(n), what: what + " (vars." + key + ")", at: n.at, why: whyUnknown(n)}
		}
	}
	if d, ok := defaults[key]; ok {
		return val{v: ctyOf(&ynode{kind: yScalar, scalar: d}), what: what + " (module default)", at: m.at}
	}
	return val{what: what, at: m.at}
}

// settingObj is a mapping setting as an obj (nil when not a mapping).
func (m *bpModule) obj(key string) obj {
	m.read[key] = true
	s := m.settings.get(key)
	if s == nil {
		return nil
	}
	if isUnknownNode(s) {
		return &unknownObj{what: "module " + m.id + " " + key, at: s.at, why: whyUnknown(s)}
	}
	if s.kind != yMap {
		return nil
	}
	return &yObj{n: s, what: "module " + m.id + " " + key}
}

func (m *bpModule) objs(key string) []obj {
	m.read[key] = true
	return (&yObj{n: m.settings, what: "module " + m.id}).blocks(key)
}

// unread lists the settings of m import did not read, as one skip.
func (bp *blueprint) unread(m *bpModule) {
	var ks []string
	for _, k := range m.settings.keys {
		if !m.read[k] {
			ks = append(ks, k)
		}
	}
	if len(ks) > 0 {
		bp.b.skip("module "+m.id+" settings "+strings.Join(ks, ", "), "settings with no gpuctl spec field", m.at)
	}
}

func (bp *blueprint) cluster(m *bpModule) {
	b, s := bp.b, &bp.b.cs.Spec
	prefix, _ := bp.setting(m, "prefix_with_deployment_name", bpClusterDefaults).bool()
	dep := bp.setting(m, "deployment_name", nil)
	suffix := bp.setting(m, "name_suffix", bpClusterDefaults)
	d, _ := dep.str()
	sf, _ := suffix.str()
	name, at := sf, suffix.at
	switch {
	case prefix && dep.unknown():
		b.unknown("spec.clusterName", dep)
		name = ""
	case prefix && sf != "":
		name, at = d+"-"+sf, dep.at
	case prefix:
		name, at = d, dep.at
	}
	if name != "" && s.ClusterName == "" {
		s.ClusterName = name
		b.at("spec.clusterName", at)
	}
	zone := bp.setting(m, "zone", nil)
	if ty, _ := bp.setting(m, "cluster_availability_type", nil).str(); ty == "ZONAL" {
		b.strIfEmpty("spec.region", zone, &s.Region)
	}
	b.strIfEmpty("spec.region", bp.setting(m, "region", nil), &s.Region)
	v := bp.setting(m, "min_master_version", nil)
	if v.absent() {
		v = bp.setting(m, "version_prefix", bpClusterDefaults)
	}
	(&tfImport{b: b}).version(v)
	b.strIfEmpty("spec.releaseChannel", bp.setting(m, "release_channel", bpClusterDefaults), &s.ReleaseChannel)
	for _, k := range []string{"project_id", "network_id", "subnetwork_self_link"} {
		m.read[k] = true
	}
	bp.unread(m)
}

// nodePool reads a gke-node-pool module as its main.tf writes the
// google_container_node_pool: name, GPUs with the driver DEFAULT unless
// set, the nvidia.com/gpu taint it adds to GPU pools, static node count or
// autoscaling totals, reservation affinity, compact placement. Errors:
// num_node_pools over MaxBlueprintNodePools.
func (bp *blueprint) nodePool(m *bpModule) error {
	d := bpNodePoolDefaults
	mt := bp.setting(m, "machine_type", d)
	name, unnamed := bp.poolName(m, mt)
	count := 1
	np := bp.setting(m, "num_node_pools", d)
	if n, ok := np.int(); ok && n > 1 {
		count = n
	}
	if count > MaxBlueprintNodePools {
		return fmt.Errorf("%s:%d: module %s num_node_pools is over %d, the most node pools gpuctl imports from one module", np.at.File, np.at.Line, shownName(m.id), MaxBlueprintNodePools)
	}
	for i := 0; i < count; i++ {
		n := name
		if count > 1 {
			n = fmt.Sprintf("%s-%d", name, i)
		}
		bp.nodePoolInstance(m, n, mt, unnamed)
	}
	for _, k := range []string{"project_id", "cluster_id", "internal_ghpc_module_id", "service_account_email", "labels"} {
		m.read[k] = true
	}
	bp.unread(m)
	return nil
}

var notModuleID = regexp.MustCompile(`[^a-z0-9-]`)

// poolName is a gke-node-pool module's pool name as its main.tf makes it:
// coalesce(var.name, join("-", [var.machine_type, local.module_unique_id]))
// (coalesce skips null and ""; the unique id is the module id, lower case,
// without characters other than a-z, 0-9 and "-"). When the name derives
// from a machine type that is not known (a var left blank for the user to
// fill), the pool is named by the module id alone and unknown says why
// the real name is not.
func (bp *blueprint) poolName(m *bpModule, mt val) (string, val) {
	nv := bp.setting(m, "name", nil)
	id := notModuleID.ReplaceAllString(strings.ToLower(m.id), "")
	if nv.unknown() {
		return id, nv
	}
	if name, _ := nv.str(); name != "" {
		return name, val{}
	}
	if mt.unknown() {
		return id, val{v: cty.UnknownVal(cty.String), what: "module " + m.id + " name (MACHINE_TYPE-" + id + ", from machine_type)", at: mt.at, why: mt.why}
	}
	t, _ := mt.str()
	return t + "-" + id, val{}
}

// nodePoolInstance imports one node pool of a gke-node-pool module (a
// module makes num_node_pools of them), named name, of machine type mt;
// unnamed is the unknown real name when name stands in for it.
func (bp *blueprint) nodePoolInstance(m *bpModule, name string, mt, unnamed val) {
	d := bpNodePoolDefaults
	pb := newPool(spec.ProviderGKE, name, m.at)
	// gke-node-pool gives A3/A4 machines their Local SSDs as ephemeral
	// storage by default (local_ssd_count_ephemeral_storage), as gpuctl's
	// default does. Source: cluster-toolkit modules/compute/gke-node-pool/disk_definitions.tf
	// at 1047080375afbb44da4b596be314634e7486af4a (2026-12-03).
	pb.disksByDefault = true
	if unnamed.unknown() {
		pb.unknown(".name", unnamed)
	}
	p := &pb.p
	pb.str(".machineType", mt, &p.MachineType)
	pb.strs(".zones", bp.setting(m, "zones", nil), &p.Zones)
	pb.gkeImage(bp.setting(m, "image_type", d))
	pb.num(".diskSizeGB", bp.setting(m, "disk_size_gb", d), &p.DiskSizeGB)
	pb.labels(".labels", bp.setting(m, "kubernetes_labels", nil), &p.Labels)
	pb.flag(".autoRepair", bp.setting(m, "auto_repair", d), &p.AutoRepair)
	pb.flag(".autoUpgrade", bp.setting(m, "auto_upgrade", d), &p.AutoUpgrade)
	bp.poolAutoscaling(m, pb)
	bp.poolCapacity(m, pb)
	if pp := m.obj("placement_policy"); pp != nil {
		if ty, _ := pp.get("type").str(); ty == "COMPACT" {
			p.Role = spec.RoleTraining
			pb.at(".role", pp.get("type").at)
		}
	}
	for _, tb := range m.objs("taints") {
		pb.taint(tb)
	}
	accel := m.objs("guest_accelerator")
	if ga := first(accel); ga != nil {
		poolGPU(m, pb, ga)
	}
	bp.poolFlexStart(m, pb)
	if !gpuPool(bp.b, pb, len(accel) > 0, "module "+m.id, m.at) {
		return
	}
	bp.b.addPool(pb)
}

// poolFlexStart reads enable_flex_start (capacity flex-start) and, with
// it, enable_queued_provisioning (capacity queued). Queued provisioning
// without flex-start is the older DWS mode, which GKE's node pools now
// create as flex-start with queued provisioning: it is imported as queued.
// Source: https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest (2026-12-03)
func (bp *blueprint) poolFlexStart(m *bpModule, pb *poolB) {
	p := &pb.p
	fs, qp := bp.setting(m, "enable_flex_start", nil), bp.setting(m, "enable_queued_provisioning", nil)
	if on, _ := qp.bool(); on {
		p.Capacity, p.Reservation = spec.CapacityQueued, ""
		pb.at(".capacity", qp.at)
		return
	}
	if on, _ := fs.bool(); on {
		p.Capacity, p.Reservation = spec.CapacityFlexStart, ""
		pb.at(".capacity", fs.at)
	}
}

// poolAutoscaling reads a pool's size: static_node_count (min = max),
// else the per-zone autoscaling limits, else the total ones (defaults).
func (bp *blueprint) poolAutoscaling(m *bpModule, pb *poolB) {
	p := &pb.p
	if st := bp.setting(m, "static_node_count", nil); !st.absent() {
		if pb.num(".autoscaling.min", st, &p.Autoscaling.Min) {
			pb.num(".autoscaling.max", st, &p.Autoscaling.Max)
			pb.at(".autoscaling", st.at)
		}
		return
	}
	zmin, zmax := bp.setting(m, "autoscaling_min_node_count", nil), bp.setting(m, "autoscaling_max_node_count", nil)
	if zmin.absent() && zmax.absent() {
		zmin, zmax = bp.setting(m, "autoscaling_total_min_nodes", bpNodePoolDefaults), bp.setting(m, "autoscaling_total_max_nodes", bpNodePoolDefaults)
	}
	pb.num(".autoscaling.min", zmin, &p.Autoscaling.Min)
	pb.num(".autoscaling.max", zmax, &p.Autoscaling.Max)
	pb.at(".autoscaling", zmax.at)
}

// poolCapacity reads spot and a specific reservation (which wins).
func (bp *blueprint) poolCapacity(m *bpModule, pb *poolB) {
	p := &pb.p
	if sp, ok := bp.setting(m, "spot", bpNodePoolDefaults).bool(); ok && sp {
		p.Capacity = spec.CapacitySpot
		pb.at(".capacity", bp.setting(m, "spot", bpNodePoolDefaults).at)
	}
	ra := m.obj("reservation_affinity")
	if ra == nil {
		return
	}
	ty := ra.get("consume_reservation_type")
	if t, _ := ty.str(); t != "SPECIFIC_RESERVATION" {
		return
	}
	if r := first(ra.blocks("specific_reservations")); r != nil && pb.str(".reservation", r.get("name"), &p.Reservation) {
		p.Capacity = spec.CapacityReservation
		pb.at(".capacity", ty.at)
	}
}

// poolGPU reads the pool's guest_accelerator block ga: type, count, the
// driver (the module's default "DEFAULT"), sharing, and the GPU taint the
// module adds.
func poolGPU(m *bpModule, pb *poolB, ga obj) {
	p := &pb.p
	pb.at(".gpu", ga.origin())
	pb.str(".gpu.type", ga.get("type"), &p.GPU.Type)
	if c := ga.get("count"); c.known() {
		if n, _ := c.int(); n > 0 {
			pb.num(".gpu.count", c, &p.GPU.Count)
		}
	} else {
		pb.num(".gpu.count", c, &p.GPU.Count)
	}
	// The module's type gives gpu_driver_installation_config the
	// default { gpu_driver_version = "DEFAULT" }.
	p.GPU.Driver = "DEFAULT"
	pb.at(".gpu.driver", ga.origin())
	if di := first(ga.blocks("gpu_driver_installation_config")); di != nil {
		pb.str(".gpu.driver", di.get("gpu_driver_version"), &p.GPU.Driver)
	}
	gkeGPUSharing(pb, ga)
	// main.tf adds this taint to every pool with GPUs.
	pb.taint(&yObj{n: &ynode{kind: yMap, at: ga.origin(), keys: []string{"key", "value", "effect"}, kv: map[string]*ynode{
		"key":    {kind: yScalar, at: ga.origin(), scalar: "nvidia.com/gpu"},
		"value":  {kind: yScalar, at: ga.origin(), scalar: "present"},
		"effect": {kind: yScalar, at: ga.origin(), scalar: "NO_SCHEDULE"},
	}}, what: "module " + m.id + " GPU taint"})
}

// kubectl reads the NCCL installer manifests a kubectl-apply module
// applies (the toolkit's nccl-tcpx / nccl-tcpxo installers) as the NCCL
// plugin of the GPU pools of that accelerator type.
func (bp *blueprint) kubectl(m *bpModule, mods []*bpModule) {
	found := false
	for _, am := range m.objs("apply_manifests") {
		src := am.get("source")
		s, _ := src.str()
		base := strings.ToLower(filepath.Base(s))
		plugin := ""
		switch {
		case strings.Contains(base, "tcpxo"):
			plugin = "tcpxo"
		case strings.Contains(base, "tcpx"):
			plugin = "tcpx"
		default:
			continue
		}
		found = true
		accel := ""
		if tv := first(am.blocks("template_vars")); tv != nil {
			accel, _ = tv.get("accelerator_type").str()
		}
		for _, pb := range bp.b.pools {
			if pb.p.NCCL.Plugin == "" && (accel == "" || pb.p.GPU.Type == accel) {
				pb.p.NCCL.Plugin = plugin
				pb.at(".nccl.plugin", src.at)
			}
		}
	}
	if !found {
		bp.b.skip("module "+m.id, "kubectl-apply without an NCCL installer manifest gpuctl knows (nccl-tcpx, nccl-tcpxo)", m.at)
		return
	}
	bp.unread(m)
}

// resolve copies n with its $(...) and ((...)) expressions resolved.
func (bp *blueprint) resolve(n *ynode, depth int) (*ynode, error) {
	if n == nil {
		return &ynode{kind: yMap, kv: map[string]*ynode{}}, nil
	}
	if depth > MaxBlueprintVarDepth {
		return nil, fmt.Errorf("%s:%d: vars refer to each other more than %d deep", n.at.File, n.at.Line, MaxBlueprintVarDepth)
	}
	if err := bp.spend(1, n.at); err != nil {
		return nil, err
	}
	switch n.kind {
	case yMap:
		out := &ynode{kind: yMap, at: n.at, keys: n.keys, kv: map[string]*ynode{}}
		for _, k := range n.keys {
			c, err := bp.resolve(n.kv[k], depth)
			if err != nil {
				return nil, err
			}
			out.kv[k] = c
		}
		return out, nil
	case ySeq:
		out := &ynode{kind: ySeq, at: n.at}
		for _, it := range n.items {
			c, err := bp.resolve(it, depth)
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, c)
		}
		return out, nil
	}
	if s, ok := n.scalar.(string); ok {
		return bp.resolveString(n, s, depth)
	}
	return n, nil
}

// resolveString resolves the string s of the scalar n: ((...)) is
// unknown, a string that is one $(...) is its value (vars.NAME the var's
// node), one with several or with text around them a template.
func (bp *blueprint) resolveString(n *ynode, s string, depth int) (*ynode, error) {
	if strings.HasPrefix(s, "((") && strings.HasSuffix(s, "))") {
		return &ynode{kind: yScalar, at: n.at, scalar: unknownScalar{why: []string{s + ", a Terraform expression evaluated when the deployment is applied"}}}, nil
	}
	parts, err := splitExprs(s)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", n.at.File, n.at.Line, err)
	}
	if len(parts) == 1 && !parts[0].expr {
		if parts[0].text == s {
			return n, nil
		}
		return &ynode{kind: yScalar, at: n.at, scalar: parts[0].text}, nil
	}
	if len(parts) == 1 {
		// The whole value is one expression: vars.NAME is the var's node,
		// with its structure and lines.
		if name, ok := plainVarRef(parts[0].text); ok {
			return bp.varNode(name, n.at, depth+1)
		}
		v, err := bp.evalExpr(parts[0].text, n.at, depth)
		if err != nil {
			return nil, err
		}
		return v, bp.spendNode(v, n.at)
	}
	return bp.template(n, parts, depth)
}

// spend counts k values resolved at at against MaxBlueprintValues, and
// stops when the import's context is done. Errors: the limit passed, the
// context done.
func (bp *blueprint) spend(k int, at Origin) error {
	bp.spent += k
	if bp.spent > MaxBlueprintValues {
		return fmt.Errorf("%s:%d: the blueprint's settings resolve to more than %d values (vars are counted wherever they are referred to); vars that refer to each other many times over grow without end", at.File, at.Line, MaxBlueprintValues)
	}
	if bp.spent>>10 != (bp.spent-k)>>10 {
		return bp.b.alive() // every 1024 values
	}
	return nil
}

// spendNode spends the values of n (an expression's value), counted as
// far as the limit.
func (bp *blueprint) spendNode(n *ynode, at Origin) error {
	return bp.spend(nodeCount(n, MaxBlueprintValues-bp.spent+1), at)
}

// nodeCount is the number of values of n (a shared node counted wherever
// it is), at most max.
func nodeCount(n *ynode, max int) int {
	if n == nil || max <= 0 {
		return 0
	}
	c := 1
	for _, k := range n.keys {
		c += nodeCount(n.kv[k], max-c)
	}
	for _, it := range n.items {
		c += nodeCount(it, max-c)
	}
	return min(c, max)
}

// template is the string of the parts of n with each expression's value
// written in; unknown when one of them is. Errors: an expression whose
// value is not a scalar.
func (bp *blueprint) template(n *ynode, parts []exprPart, depth int) (*ynode, error) {
	var sb strings.Builder
	for _, p := range parts {
		if !p.expr {
			sb.WriteString(p.text)
			continue
		}
		v, err := bp.evalExpr(p.text, n.at, depth)
		if err != nil {
			return nil, err
		}
		if isUnknownNode(v) {
			return &ynode{kind: yScalar, at: n.at, scalar: v.scalar}, nil
		}
		if v.kind != yScalar || v.scalar == nil {
			return nil, fmt.Errorf("%s:%d: a $(...) written into a string is a %s, not a string, number or bool", n.at.File, n.at.Line, v.kindName())
		}
		sb.WriteString(fmt.Sprint(v.scalar))
		if sb.Len() > MaxBlueprintTemplateBytes {
			return nil, fmt.Errorf("%s:%d: a string with $(...) grows longer than %s", n.at.File, n.at.Line, safefs.Size(MaxBlueprintTemplateBytes))
		}
		if err := bp.spend(1, n.at); err != nil {
			return nil, err
		}
	}
	return &ynode{kind: yScalar, at: n.at, scalar: sb.String()}, nil
}

var varRef = regexp.MustCompile(`^\s*vars\.([A-Za-z_][A-Za-z0-9_-]*)\s*$`)

func plainVarRef(s string) (string, bool) {
	m := varRef.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// varsHint says which vars the blueprint defines, the nearest to name
// first when it is a likely typo: "; did you mean zones? (vars: a, b)".
func (bp *blueprint) varsHint(name string) string {
	names := make([]string, 0, len(bp.vars))
	for n := range bp.vars {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "; the blueprint defines no vars"
	}
	sort.Strings(names)
	list := names
	if len(list) > 12 {
		list = append(list[:12:12], fmt.Sprintf("and %d more", len(names)-12))
	}
	shown := make([]string, len(list))
	for i, n := range list {
		shown[i] = shownName(n)
	}
	list = shown
	hint := "; the blueprint defines vars " + strings.Join(list, ", ")
	if best := spec.NearestFold(name, names); best != "" {
		hint = "; did you mean " + shownName(best) + "?" + strings.Replace(hint, "; the", " (the", 1) + ")"
	}
	return hint
}

// varNode is var name resolved; a var without a value is unknown. at is
// where it is referred to, for errors.
//
// A var resolved before is not resolved again, but its values are counted
// again (MaxBlueprintValues): each reference writes them out once more.
func (bp *blueprint) varNode(name string, at Origin, depth int) (*ynode, error) {
	if r, ok := bp.resolved[name]; ok {
		return r, bp.spend(bp.sizes[name], at)
	}
	v, ok := bp.vars[name]
	if !ok {
		return nil, fmt.Errorf("%s:%d: vars.%s: the blueprint has no var %q%s", at.File, at.Line, shownName(name), shownName(name), bp.varsHint(name))
	}
	if bp.resolving[name] {
		return nil, fmt.Errorf("%s:%d: vars.%s refers to itself", v.at.File, v.at.Line, shownName(name))
	}
	if why := placeholderVar(name, v); why != "" {
		u := &ynode{kind: yScalar, at: v.at, scalar: unknownScalar{why: []string{"vars." + name + ", which " + why + " (set it in the deployment file or with --var)"}}}
		bp.resolved[name], bp.sizes[name] = u, 1
		return u, bp.spend(1, at)
	}
	bp.resolving[name] = true
	before := bp.spent
	r, err := bp.resolve(v, depth)
	bp.resolving[name] = false
	if err != nil {
		return nil, err
	}
	bp.resolved[name], bp.sizes[name] = r, bp.spent-before
	return r, nil
}

// Placeholders the toolkit's example deployment files leave for the user:
// "<your project ID>", and COMPUTE_REGION-style words in vars whose real
// values are lower case (a region, a zone, a name, a project, a
// reservation), where an upper-case word can be nothing else.
var (
	anglePlaceholder = regexp.MustCompile(`^<[^<>]+>$`)
	capsPlaceholder  = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)
	lowerCaseVar     = regexp.MustCompile(`^(region|zones?|deployment_name|project(_id)?|.*_name|.*reservation.*)$`)
)

// placeholderVar says why var name (its node v) has no value yet: none
// written ("has no value"), or a placeholder to fill in; "" when it has
// one.
func placeholderVar(name string, v *ynode) string {
	if v.kind != yScalar {
		return ""
	}
	if v.scalar == nil {
		return "has no value"
	}
	s, ok := v.scalar.(string)
	switch {
	case !ok:
		return ""
	case anglePlaceholder.MatchString(s), capsPlaceholder.MatchString(s) && lowerCaseVar.MatchString(name):
		return "holds a placeholder to fill in"
	}
	return ""
}

// shownName is a name from a blueprint as a message quotes it: on one
// line, at most 80 bytes.
func shownName(s string) string {
	s = diag.OneLine(s)
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// evalExpr evaluates the inside of $(...): an HCL expression over vars
// and module outputs (unknown) with Terraform's pure functions, its
// nesting scanned before it is parsed and its evaluation counted into the
// budget. Errors: syntax, a reference that is neither a var nor a module,
// a cap or a refusal of the sandbox (at the expression), an error of HCL
// (its summary, never a value).
func (bp *blueprint) evalExpr(src string, at Origin, depth int) (*ynode, error) {
	start := hcl.Pos{Line: at.Line, Column: at.Column, Byte: 0}
	shown := diag.OneLine(src)
	if err := scanNesting(bp.sb.b, []byte(src), at.File, start, scanExpression); err != nil {
		return nil, err
	}
	e, d := hclsyntax.ParseExpression([]byte(src), at.File, start)
	if d.HasErrors() {
		return nil, fmt.Errorf("%s:%d: $(%s): %s", at.File, at.Line, shown, firstError(d))
	}
	instrument(e)
	ctx, why, err := bp.exprContext(e, src, at, depth)
	if err != nil {
		return nil, err
	}
	v, d := e.Value(ctx)
	if b := bp.sb.b; b.err() != nil {
		b.place(d, e.Range())
		return nil, b.err()
	}
	if d.HasErrors() {
		if len(why) > 0 {
			return &ynode{kind: yScalar, at: at, scalar: unknownScalar{why: why}}, nil
		}
		return nil, fmt.Errorf("%s:%d: $(%s): %s", at.File, at.Line, shown, firstError(d))
	}
	if size, err := measure(v); err != nil {
		return nil, bp.sb.b.failAt(e.Range(), err)
	} else if err := bp.sb.b.add(size.steps()); err != nil {
		bp.sb.b.place(nil, e.Range())
		return nil, err
	}
	if !v.IsWhollyKnown() {
		return &ynode{kind: yScalar, at: at, scalar: unknownScalar{why: why}}, nil
	}
	return ynodeOf(v, at), nil
}

// ynodeOf is a known cty value as a ynode written at at.
func ynodeOf(v cty.Value, at Origin) *ynode {
	if v.IsNull() {
		return &ynode{kind: yScalar, at: at}
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return &ynode{kind: yScalar, at: at, scalar: v.AsString()}
	case t == cty.Bool:
		return &ynode{kind: yScalar, at: at, scalar: v.True()}
	case t == cty.Number:
		if i, acc := v.AsBigFloat().Int64(); acc == 0 {
			return &ynode{kind: yScalar, at: at, scalar: i}
		}
		f, _ := v.AsBigFloat().Float64()
		return &ynode{kind: yScalar, at: at, scalar: f}
	case t.IsObjectType() || t.IsMapType():
		out := &ynode{kind: yMap, at: at, kv: map[string]*ynode{}}
		ks := sortedKeys(v)
		sort.Strings(ks)
		for _, k := range ks {
			c, _ := childValue(v, k)
			out.keys = append(out.keys, k)
			out.kv[k] = ynodeOf(c, at)
		}
		return out
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		out := &ynode{kind: ySeq, at: at}
		for _, e := range v.AsValueSlice() {
			out.items = append(out.items, ynodeOf(e, at))
		}
		return out
	}
	return &ynode{kind: yScalar, at: at, scalar: v.GoString()}
}

// exprPart is literal text or the inside of one $(...).
type exprPart struct {
	text string
	expr bool
}

// splitExprs splits s at its $(...) expressions (\$( is a literal "$(").
// Errors: a $( without its closing parenthesis.
func splitExprs(s string) ([]exprPart, error) {
	var parts []exprPart
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && strings.HasPrefix(s[i+1:], "$(") {
			lit.WriteString("$(")
			i += 2
			continue
		}
		if !strings.HasPrefix(s[i:], "$(") {
			lit.WriteByte(s[i])
			continue
		}
		end := closingParen(s, i+1)
		if end < 0 {
			return nil, fmt.Errorf("the $( at byte %d of the string has no closing parenthesis", i+1)
		}
		if lit.Len() > 0 {
			parts = append(parts, exprPart{text: lit.String()})
			lit.Reset()
		}
		parts = append(parts, exprPart{text: s[i+2 : end], expr: true})
		i = end
	}
	if lit.Len() > 0 || len(parts) == 0 {
		parts = append(parts, exprPart{text: lit.String()})
	}
	return parts, nil
}

// closingParen is the index of the ')' that closes the '(' at s[i],
// outside double-quoted strings (with their \ escapes); -1 when none does.
func closingParen(s string, i int) int {
	depth, quote := 0, false
	for j := i; j < len(s); j++ {
		switch c := s[j]; {
		case quote && c == '\\':
			j++
		case c == '"':
			quote = !quote
		case quote:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}
