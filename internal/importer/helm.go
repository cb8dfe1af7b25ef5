package importer

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	version "github.com/hashicorp/go-version"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/safefs"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// NVIDIA's charts import reads from helm_release resources.
const (
	chartGPUOperator  = "gpu-operator"
	chartDevicePlugin = "nvidia-device-plugin"
	chartDCGMExporter = "dcgm-exporter"
)

// helmValue is one chart value with where it was set.
type helmValue struct {
	v  any
	at Origin
}

// helmRelease reads a helm_release of one of NVIDIA's charts into addons.
func (t *tfImport) helmRelease(r *tfBlock) {
	for _, o := range t.instancesOf(r) {
		chart, _ := o.get("chart").str()
		// "nvidia/gpu-operator", an OCI URL or a path: the chart is the
		// last element.
		base := chartBase(chart)
		switch base {
		case chartKarpenterResources:
			if ho, ok := o.(*hclObj); ok {
				t.karpenterChart(kpRelease{what: o.name(), at: o.origin(), chart: chart}, ho.expr("values"), func(e hcl.Expression) (cty.Value, []string) { return t.e.eval(e, ho.scope) })
			}
			continue
		case chartGPUOperator, chartDevicePlugin, chartDCGMExporter:
		default:
			what := "a chart that is not one of NVIDIA's GPU charts (gpu-operator, nvidia-device-plugin, dcgm-exporter)"
			if chart == "" {
				what = "chart unknown"
			}
			t.b.skip(o.name(), what, o.origin())
			continue
		}
		vals, _ := t.releaseValues(base, o, 0)
		version := o.get("version")
		t.addon(base, o, version, vals)
	}
}

// releaseValues are the values of release o of chart base, by dotted
// key: its values (the first max items, all when max is 0) under its set
// and set_string blocks. unknown lists what the values not read depend on.
func (t *tfImport) releaseValues(base string, o obj, max int) (vals map[string]helmValue, unknown []string) {
	vals, unknown = t.helmValues(o, max)
	for _, sb := range append(o.blocks("set"), o.blocks("set_string")...) {
		n, _ := sb.get("name").str()
		v := sb.get("value")
		if n == "" {
			continue
		}
		if v.unknown() {
			if path, ok := helmKeys[base][strings.ReplaceAll(n, `\.`, ".")]; ok {
				t.b.unknowns = append(t.b.unknowns, Unknown{Path: path, What: o.name() + " set " + n, Because: v.why, Origin: v.at})
			} else {
				t.b.skip(o.name()+" set "+n, "no gpuctl spec field (and its value is unknown until Terraform applies: it depends on "+strings.Join(v.why, ", ")+")", v.at)
			}
			continue
		}
		s, _ := v.str()
		vals[strings.ReplaceAll(n, `\.`, ".")] = helmValue{v: s, at: v.at}
	}
	return vals, unknown
}

// helmValues are the values of release o (the first max items, all when
// max is 0), by dotted key; values that are unknown or not YAML are
// skips, and unknown lists what the unknown ones depend on.
func (t *tfImport) helmValues(o obj, max int) (vals map[string]helmValue, unknown []string) {
	vals = map[string]helmValue{}
	var valuesExpr hcl.Expression
	switch ho := o.(type) {
	case *hclObj:
		valuesExpr = ho.expr("values")
	case *valObj:
		valuesExpr = ho.sub("values")
	}
	for i, vo := range valObjs(t.e, o.get("values"), valuesExpr) {
		if max > 0 && i >= max {
			t.b.skip(fmt.Sprintf("%s values[%d]", o.name(), i), fmt.Sprintf("the module reads only the first %d item(s) of values", max), vo.origin())
			continue
		}
		vo, ok := vo.(*valObj)
		if !ok {
			t.b.skip(o.name()+" values", "values unknown until Terraform applies", o.origin())
			unknown = append(unknown, o.name()+" values")
			continue
		}
		s, ok := vo.x.str()
		if !ok {
			if vo.x.unknown() {
				t.b.skip(o.name()+" values", "values unknown until Terraform applies: it depends on "+strings.Join(vo.x.why, ", "), vo.x.at)
				unknown = append(unknown, vo.x.why...)
			}
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			t.b.skip(o.name()+" values", "values are not YAML: "+err.Error(), vo.x.at)
			continue
		}
		flatten("", m, vo.x.at, vals)
	}
	return vals, unknown
}

// flatten writes the leaves of a values tree as dotted keys.
func flatten(prefix string, m map[string]any, at Origin, out map[string]helmValue) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			flatten(key, sub, at, out)
			if len(sub) == 0 {
				out[key] = helmValue{v: sub, at: at}
			}
			continue
		}
		out[key] = helmValue{v: v, at: at}
	}
}

// boolValue is a chart value as a bool ("true", true).
func boolValue(h helmValue) (bool, bool) {
	switch v := h.v.(type) {
	case bool:
		return v, true
	case string:
		switch strings.ToLower(v) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// helmKeys are the chart values import reads, by chart: value key to the
// spec path it sets.
var helmKeys = map[string]map[string]string{
	chartGPUOperator: {
		"driver.enabled":          "spec.addons.gpuOperator.driver.enabled",
		"driver.version":          "spec.addons.gpuOperator.driver.version",
		"driver.kernelModuleType": "spec.addons.gpuOperator.driver.kernelModuleType",
		"toolkit.enabled":         "spec.addons.gpuOperator.toolkit.enabled",
		"devicePlugin.enabled":    "spec.addons.gpuOperator.devicePlugin.enabled",
		"migManager.enabled":      "spec.addons.gpuOperator.migManager.enabled",
		"dcgmExporter.enabled":    "spec.addons.gpuOperator.dcgmExporter.enabled",
		"cdi.enabled":             "spec.addons.gpuOperator.cdi.enabled",
	},
	chartDCGMExporter: {"serviceMonitor.enabled": "spec.addons.dcgmExporter.serviceMonitor"},
}

// helmKeyRead reports whether import reads chart value key of chart.
func helmKeyRead(chart, key string) bool {
	if _, ok := helmKeys[chart][key]; ok {
		return true
	}
	switch chart {
	case chartGPUOperator:
		return key == "toolkit.env" || strings.HasPrefix(key, "toolkit.env[")
	case chartDevicePlugin:
		return strings.HasPrefix(key, "nodeSelector.")
	}
	return false
}

// unreadValues lists as skipped the chart values of a release that no
// spec field holds.
func (t *tfImport) unreadValues(chart string, o obj, vals map[string]helmValue) {
	var keys []string
	for k := range vals {
		if !helmKeyRead(chart, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	sort.Strings(keys)
	at := vals[keys[0]].at
	t.b.skip(o.name()+" values "+strings.Join(keys, ", "), "no gpuctl spec field: gpuctl generate writes its own values for the chart", at)
}

func (t *tfImport) addon(chart string, o obj, version val, vals map[string]helmValue) {
	b := t.b
	a := &b.cs.Spec.Addons
	t.unreadValues(chart, o, vals)
	setBool := func(path, key string, dst **bool) {
		if h, ok := vals[key]; ok {
			if v, ok := boolValue(h); ok {
				*dst = &v
				b.at(path, h.at)
			}
		}
	}
	setStr := func(path, key string, dst *string) {
		if h, ok := vals[key]; ok && h.v != nil {
			*dst = fmt.Sprint(h.v)
			b.at(path, h.at)
		}
	}
	// enable turns on the addon at path, an addon with enabled and version
	// fields, from the chart's release.
	enable := func(path string, enabled *bool, ver *string) {
		*enabled = true
		b.at(path, o.origin())
		b.at(path+".enabled", o.origin())
		b.str(path+".version", version, ver)
	}
	switch chart {
	case chartGPUOperator:
		g := &a.GPUOperator
		enable("spec.addons.gpuOperator", &g.Enabled, &g.Version)
		setBool("spec.addons.gpuOperator.driver.enabled", "driver.enabled", &g.Driver.Enabled)
		setStr("spec.addons.gpuOperator.driver.version", "driver.version", &g.Driver.Version)
		setStr("spec.addons.gpuOperator.driver.kernelModuleType", "driver.kernelModuleType", &g.Driver.KernelModuleType)
		setBool("spec.addons.gpuOperator.toolkit.enabled", "toolkit.enabled", &g.Toolkit.Enabled)
		setBool("spec.addons.gpuOperator.devicePlugin.enabled", "devicePlugin.enabled", &g.DevicePlugin.Enabled)
		setBool("spec.addons.gpuOperator.migManager.enabled", "migManager.enabled", &g.MIGManager.Enabled)
		setBool("spec.addons.gpuOperator.dcgmExporter.enabled", "dcgmExporter.enabled", &g.DCGMExporter.Enabled)
		setBool("spec.addons.gpuOperator.cdi.enabled", "cdi.enabled", &g.CDI.Enabled)
		if env := toolkitEnv(vals); len(env) > 0 {
			g.Toolkit.Env = env
			b.at("spec.addons.gpuOperator.toolkit.env", vals["toolkit.env"].at)
		}
		if spec.EnabledOr(g.DevicePlugin.Enabled, true) && a.DevicePlugin.Provider == "" {
			// The Operator runs NVIDIA's device plugin unless told not to.
			a.DevicePlugin.Provider = spec.DevicePluginGPUOperator
			b.at("spec.addons.devicePlugin.provider", o.origin())
		}
	case chartDevicePlugin:
		d := &a.DevicePlugin
		d.Provider = spec.DevicePluginHelm
		b.at("spec.addons.devicePlugin", o.origin())
		b.at("spec.addons.devicePlugin.provider", o.origin())
		if b.str("spec.addons.devicePlugin.version", version, &d.Version) {
			d.Version = strings.TrimPrefix(d.Version, "v")
		}
		sel := map[string]string{}
		var at Origin
		for k, h := range vals {
			if rest, ok := strings.CutPrefix(k, "nodeSelector."); ok {
				sel[rest] = fmt.Sprint(h.v)
				at = h.at
			}
		}
		if len(sel) > 0 {
			d.NodeSelector = sel
			b.at("spec.addons.devicePlugin.nodeSelector", at)
		}
	case chartDCGMExporter:
		d := &a.DCGMExporter
		enable("spec.addons.dcgmExporter", &d.Enabled, &d.Version)
		var sm *bool
		setBool("spec.addons.dcgmExporter.serviceMonitor", "serviceMonitor.enabled", &sm)
		d.ServiceMonitor = spec.EnabledOr(sm, false)
	}
}

// toolkitEnv reads toolkit.env, a list of {name, value} in the chart.
func toolkitEnv(vals map[string]helmValue) map[string]string {
	h, ok := vals["toolkit.env"]
	if !ok {
		// set blocks write toolkit.env[0].name / .value
		out := map[string]string{}
		var idx []string
		for k := range vals {
			if strings.HasPrefix(k, "toolkit.env[") && strings.HasSuffix(k, "].name") {
				idx = append(idx, strings.TrimSuffix(k, ".name"))
			}
		}
		sort.Strings(idx)
		for _, i := range idx {
			out[fmt.Sprint(vals[i+".name"].v)] = fmt.Sprint(vals[i+".value"].v)
		}
		return out
	}
	list, ok := h.v.([]any)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out[fmt.Sprint(m["name"])] = fmt.Sprint(m["value"])
		}
	}
	return out
}

// The karpenter-resources chart of aws-ia/terraform-aws-eks-data-addons
// renders one EC2NodeClass and one NodePool, both named after the value
// name, from its values (helm-charts/karpenter-resources, values.yaml and
// templates/node-class.yaml, node-pool.yaml,
// https://github.com/aws-ia/terraform-aws-eks-data-addons, read
// 2026-12-02): nodePool.labels (a list of maps) over the labels NodePool
// and NodeGroupType = name, nodePool.taints and requirements, nodeClassRef
// name; ec2NodeClass amiFamily, amiSelectorTerms, karpenterRole as role,
// blockDeviceMappings, instanceStorePolicy, userData. The chart writes
// limits cpu and memory only, so a GPU limit in the values does not reach
// the NodePool. The module installs it from karpenter_resources_helm_config
// (karpenter-resources.tf) when enable_karpenter_resources is true;
// eks-blueprints-addons' helm_releases and a helm_release install a copy
// of it by its path, whose own values.yaml gives the defaults when it is
// in the files read. Its defaults by module version are kpChartDefaults.
const (
	chartKarpenterResources = "karpenter-resources"
	moduleDataAddons        = "aws-ia/eks-data-addons/aws"
	moduleBlueprintsAddons  = "aws-ia/eks-blueprints-addons/aws"
	kpChartDefault          = "the karpenter-resources chart's default"
)

// kpChartRow is the karpenter-resources chart's defaults from a module
// version on.
type kpChartRow struct {
	from, source string
	// api is the NodePool's API group version the chart writes; amiFamily
	// and amiAlias the EC2NodeClass defaults; familyOnly says the chart
	// writes amiSelectorTerms only without amiFamily.
	api, amiFamily, amiAlias string
	familyOnly               bool
}

// kpChartDefaults are the chart's defaults, newest first: v1.34.0 (commit
// eab6319d759fb8ac657e646ecb90763e718d91c1, "Default to Bottlerocket" and
// Karpenter v1) and v1.33.0 (commit
// 9dc6d069eb9148764c3931fc5cc4516721dd2103, v1beta1, amiFamily AL2); both
// default blockDeviceMappings to /dev/xvda 100Gi gp3.
var kpChartDefaults = []kpChartRow{
	{from: "1.34.0", source: "aws-ia/terraform-aws-eks-data-addons v1.34.0+ helm-charts/karpenter-resources/values.yaml", api: "v1", amiAlias: "bottlerocket@latest"},
	{from: "0.0.0", source: "aws-ia/terraform-aws-eks-data-addons v1.33.x and before helm-charts/karpenter-resources/values.yaml", api: "v1beta1", amiFamily: "AL2", familyOnly: true},
}

// kpChartVersion is the defaults row a version constraint of the
// eks-data-addons module picks: the row of the newest version it allows
// (the newest row when it allows any, or is unknown).
func kpChartVersion(constraint string) kpChartRow {
	bounds := make([]string, len(kpChartDefaults))
	for i, row := range kpChartDefaults {
		bounds[i] = row.from
	}
	v, ok := newestAllowed(constraint, bounds)
	if !ok {
		return kpChartDefaults[0]
	}
	for _, row := range kpChartDefaults {
		if !v.LessThan(version.Must(version.NewVersion(row.from))) {
			return row
		}
	}
	return kpChartDefaults[len(kpChartDefaults)-1]
}

// values is the row's default values at def.
func (r kpChartRow) values(def Origin) *ynode {
	nc := ymap(def, "amiFamily", r.amiFamily)
	if r.amiAlias != "" {
		nc = ymap(def, "amiSelectorTerms", &ynode{kind: ySeq, at: def, items: []*ynode{ymap(def, "alias", r.amiAlias)}})
	}
	ebs := ymap(def, "volumeSize", "100Gi", "volumeType", "gp3")
	nc = mergeValues(nc, ymap(def, "blockDeviceMappings", &ynode{kind: ySeq, at: def, items: []*ynode{ymap(def, "deviceName", "/dev/xvda", "ebs", ebs)}}))
	return ymap(def, "name", "default", "ec2NodeClass", nc)
}

// chartBase is the chart of a chart argument: the last element of a name,
// an OCI URL or a path.
func chartBase(chart string) string {
	return chart[strings.LastIndex(chart, "/")+1:]
}

// addonsKarpenter reads the karpenter-resources releases of a call of
// eks-data-addons (karpenter_resources_helm_config) or eks-blueprints-addons
// (helm_releases); false when it installs none.
func (t *tfImport) addonsKarpenter(o *hclObj, base string) bool {
	var key string
	switch base {
	case moduleDataAddons:
		if on, _ := o.get("enable_karpenter_resources").bool(); !on {
			return false
		}
		key = "karpenter_resources_helm_config"
	case moduleBlueprintsAddons:
		key = "helm_releases"
	default:
		return false
	}
	var row *kpChartRow
	if base == moduleDataAddons {
		ver, _ := o.get("version").str()
		r := kpChartVersion(ver)
		if ver == "" {
			r.source += " (the newest: the module call has no version constraint)"
		}
		row = &r
	}
	n := t.releaseMap(o, key, row)
	if n == 0 {
		return false
	}
	what := "its karpenter-resources chart releases (%d)"
	if base == moduleDataAddons {
		what += " and its NVIDIA add-on inputs"
	}
	t.b.skip(o.name(), fmt.Sprintf("read for "+what+" only: its other inputs install add-ons gpuctl does not import", n), o.origin())
	return true
}

// releaseMap reads the releases of the chart karpenter-resources in the
// map of releases key of module o (the module's own chart, with the
// defaults of row, by default when row is set) and returns how many it
// read.
func (t *tfImport) releaseMap(o *hclObj, key string, row *kpChartRow) int {
	x, expr := o.get(key), o.expr(key)
	if x.absent() || !x.v.IsKnown() || !(x.v.Type().IsObjectType() || x.v.Type().IsMapType()) {
		return 0
	}
	n := 0
	eval := func(e hcl.Expression) (cty.Value, []string) { return t.e.eval(e, nil) }
	for _, k := range sortedKeys(x.v) {
		item := t.e.child(expr, cty.StringVal(k))
		if item == nil {
			continue
		}
		chart := ""
		if ce := t.e.child(item, cty.StringVal("chart")); ce != nil {
			v, _ := eval(ce)
			chart, _ = knownString(v)
		} else if row != nil {
			chart = chartKarpenterResources
		}
		if chartBase(chart) != chartKarpenterResources {
			continue
		}
		at := t.e.origin(item)
		r := row
		if r != nil && chart != chartKarpenterResources {
			r = nil // a copy of the chart by its path: its own defaults
		}
		t.karpenterChart(kpRelease{what: fmt.Sprintf("%s %s[%q]", o.name(), key, k), at: at, chart: chart, row: r}, t.e.child(item, cty.StringVal("values")), eval)
		n++
	}
	return n
}

// kpRelease is a release of the karpenter-resources chart: what names it,
// at is where it is written, chart its chart argument, row the defaults
// of the module's own chart (nil for a copy of the chart by its path).
type kpRelease struct {
	what  string
	at    Origin
	chart string
	row   *kpChartRow
}

// karpenterChart reads release r of the karpenter-resources chart: its
// values (a list expression of YAML strings or objects, nil for none)
// over the chart's defaults, rendered as the chart renders them.
func (t *tfImport) karpenterChart(r kpRelease, values hcl.Expression, eval evalFunc) {
	vals, ok := t.chartUserValues(r, values, eval)
	if !ok {
		return
	}
	if vals != nil && vals.get("nodePool") == nil && vals.get("ec2NodeClass") == nil && vals.get("name") == nil {
		t.b.skip(r.what, "values in another shape than the karpenter-resources chart's (name, nodePool, ec2NodeClass): a chart gpuctl does not render", r.at)
		return
	}
	defaults, row := t.chartDefaults(r)
	vals = mergeValues(defaults, vals)
	name := vals.get("name").str()
	if name == "" {
		name = "default"
	}
	var docs []*ynode
	if d := kpChartPool(vals, name, row, r.at); d != nil {
		docs = append(docs, d)
	}
	if d := kpChartClass(vals, name, row, r.at); d != nil {
		docs = append(docs, d)
	}
	t.takeDocs(r.what, docs)
}

// chartUserValues are the values release r sets, merged in order; ok is
// false when they are not a list gpuctl reads (said as a skip).
func (t *tfImport) chartUserValues(r kpRelease, values hcl.Expression, eval evalFunc) (*ynode, bool) {
	if def := t.e.definition(values, 0); def != nil {
		values, eval = def, func(e hcl.Expression) (cty.Value, []string) { return t.e.eval(e, nil) }
	}
	if values == nil {
		return nil, true
	}
	tc, ok := values.(*hclsyntax.TupleConsExpr)
	if !ok {
		t.b.skip(r.what+" values", "values that are not a list gpuctl reads item by item", t.e.origin(values))
		return nil, false
	}
	var vals *ynode
	for _, it := range tc.Exprs {
		docs, why := t.exprDocs(it, eval, 0)
		if docs == nil {
			t.b.skip(r.what+" values", "unknown until Terraform applies: it depends on "+strings.Join(why, ", "), t.e.origin(it))
			continue
		}
		for _, d := range docs {
			vals = mergeValues(vals, d)
		}
	}
	return vals, true
}

// chartDefaults are the default values of release r's chart: the module's
// row, else the values.yaml of the chart's folder when it is in the files
// read, else the newest row (said in the origins' note).
func (t *tfImport) chartDefaults(r kpRelease) (*ynode, kpChartRow) {
	def := r.at
	if r.row != nil {
		def.Note = kpChartDefault + ": " + r.row.source
		return r.row.values(def), *r.row
	}
	row := kpChartDefaults[0]
	if docs := t.chartValuesFile(r.chart); len(docs) == 1 {
		return docs[0], row
	}
	def.Note = kpChartDefault + ": " + row.source + " (the chart's own values.yaml is not in the files read)"
	return row.values(def), row
}

// chartValuesFile is the values.yaml of the chart folder chart when it
// lies inside the root; nil when it does not, or is not YAML.
func (t *tfImport) chartValuesFile(chart string) []*ynode {
	sb := t.e.sb
	p := strings.TrimSuffix(chart, "/") + "/values.yaml"
	if sb.outside || !strings.Contains(chart, "/") || strings.Contains(chart, "://") || filepath.IsAbs(p) || strings.HasPrefix(p, "~") ||
		!safefs.Local(filepath.Join(sb.dir, filepath.FromSlash(p))) {
		return nil
	}
	data, rel, err := sb.read("file", 1, p)
	if err != nil {
		return nil
	}
	docs, err := yamlDocs(sb.root.Path(rel), data, KarpenterLimits)
	if err != nil {
		return nil
	}
	return docs
}

// mergeValues is b over a, as Helm merges values files: mappings key by
// key (a merged mapping is where b writes it), anything else replaced.
func mergeValues(a, b *ynode) *ynode {
	if a == nil || a.kind != yMap || b == nil || b.kind != yMap {
		return b
	}
	out := &ynode{kind: yMap, at: b.at, kv: map[string]*ynode{}}
	for _, k := range a.keys {
		out.keys = append(out.keys, k)
		out.kv[k] = a.kv[k]
	}
	for _, k := range b.keys {
		if _, ok := out.kv[k]; !ok {
			out.keys = append(out.keys, k)
		}
		out.kv[k] = mergeValues(out.kv[k], b.kv[k])
	}
	return out
}

// ymap is a mapping at at of the key and value pairs kvs, nil values left
// out.
func ymap(at Origin, kvs ...any) *ynode {
	n := &ynode{kind: yMap, at: at, kv: map[string]*ynode{}}
	for i := 0; i+1 < len(kvs); i += 2 {
		k := kvs[i].(string)
		var v *ynode
		switch x := kvs[i+1].(type) {
		case *ynode:
			v = x
		case string:
			v = &ynode{kind: yScalar, at: at, scalar: x}
		}
		if v == nil || (v.kind == yScalar && v.scalar == nil) {
			continue
		}
		if _, dup := n.kv[k]; !dup {
			n.keys = append(n.keys, k)
		}
		n.kv[k] = v
	}
	return n
}

// chartEnabled reports whether section n of the values is not disabled
// (enabled: false).
func chartEnabled(n *ynode) bool {
	e := n.get("enabled")
	return e == nil || e.scalar != false
}

// kpChartPool is the NodePool the chart renders from vals; nil when
// nodePool.enabled is false.
func kpChartPool(vals *ynode, name string, row kpChartRow, def Origin) *ynode {
	np := vals.get("nodePool")
	if !chartEnabled(np) {
		return nil
	}
	labels := ymap(def, "NodePool", name, "NodeGroupType", name)
	if ls := np.get("labels"); ls != nil && ls.kind != yScalar {
		labels.at = ls.at
		for _, m := range append([]*ynode{ls}, ls.items...) {
			for _, k := range m.keys {
				labels = mergeValues(labels, ymap(m.kv[k].at, k, m.kv[k]))
			}
		}
	}
	ref := ymap(def, "name", name, "group", "karpenter.k8s.aws", "kind", "EC2NodeClass")
	tspec := ymap(def, "nodeClassRef", ref, "taints", np.get("taints"), "requirements", np.get("requirements"),
		"expireAfter", np.get("expireAfter"), "terminationGracePeriod", np.get("terminationGracePeriod"))
	at := def
	if np != nil {
		at = np.at
	}
	return ymap(at, "apiVersion", "karpenter.sh/"+row.api, "kind", "NodePool", "metadata", ymap(at, "name", name),
		"spec", ymap(at, "template", ymap(at, "metadata", ymap(at, "labels", labels), "spec", tspec),
			"disruption", np.get("disruption"), "weight", np.get("weight")))
}

// kpChartClass is the EC2NodeClass the chart renders from vals; nil when
// ec2NodeClass.enabled is false.
func kpChartClass(vals *ynode, name string, row kpChartRow, def Origin) *ynode {
	nc := vals.get("ec2NodeClass")
	if !chartEnabled(nc) {
		return nil
	}
	ami := nc.get("amiSelectorTerms")
	if row.familyOnly && nc.get("amiFamily").str() != "" {
		ami = nil // the chart writes amiSelectorTerms only without amiFamily
	}
	at := def
	if nc != nil {
		at = nc.at
	}
	return ymap(at, "apiVersion", "karpenter.k8s.aws/"+row.api, "kind", "EC2NodeClass", "metadata", ymap(at, "name", name),
		"spec", ymap(at, "amiFamily", nc.get("amiFamily"), "amiSelectorTerms", ami, "role", nc.get("karpenterRole"),
			"subnetSelectorTerms", nc.get("subnetSelectorTerms"), "securityGroupSelectorTerms", nc.get("securityGroupSelectorTerms"),
			"blockDeviceMappings", nc.get("blockDeviceMappings"), "instanceStorePolicy", nc.get("instanceStorePolicy"), "userData", nc.get("userData")))
}
