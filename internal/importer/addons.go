package importer

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// Add-on installers. A module that installs NVIDIA's device plugin or the
// GPU Operator (an add-on module, or a wrapper whose name or arguments say
// so) leaves those add-ons unknown, not absent: the rules then say what
// they could not judge instead of reporting the device plugin missing.
// Where a known add-on module's input is known to be true
// (enable_nvidia_device_plugin = true), import reads the chart the module
// installs as it reads a helm_release of it: the version and values of the
// call's helm config over the module's defaults for its version
// (data/addondefaults.yaml); a part that cannot be known stays unknown.

// Spec paths of the add-on facts a module not read may install.
const (
	pathDevicePlugin = "spec.addons.devicePlugin.provider"
	pathGPUOperator  = "spec.addons.gpuOperator.enabled"
)

// addonInput is a module input that installs an add-on when true.
type addonInput struct {
	input, path, what string
	// chart is the chart the module installs and config the input of its
	// helm config, for the modules whose defaults gpuctl has.
	chart, config string
}

// addonModules are the registry add-on modules by source (without host and
// submodule) and the inputs that install NVIDIA's add-ons (each a bool,
// default false), as of 2026-12-02:
//   - aws-ia/eks-data-addons/aws: variables.tf of
//     https://github.com/aws-ia/terraform-aws-eks-data-addons at
//     ea3c83dc8ce4be0f2bcca8cb3dc3e5e71057740e (enable_nvidia_device_plugin,
//     nvidia-device-plugin.tf; enable_nvidia_gpu_operator,
//     nvidia-gpu-operator.tf).
//   - aws-ia/eks-blueprints-addons/aws: variables.tf of
//     https://github.com/aws-ia/terraform-aws-eks-blueprints-addons at
//     d78fb74a57982a3a4d37e06da0e54510293c021a has no NVIDIA input; NVIDIA's
//     charts come in through helm_releases (its tests/complete/main.tf
//     installs gpu-operator so), which the generic scan below finds by the
//     chart's name.
var addonModules = map[string][]addonInput{
	"aws-ia/eks-data-addons/aws": {
		{"enable_nvidia_device_plugin", pathDevicePlugin, "NVIDIA's device plugin", chartDevicePlugin, "nvidia_device_plugin_helm_config"},
		{"enable_nvidia_gpu_operator", pathGPUOperator, "the GPU Operator", chartGPUOperator, "nvidia_gpu_operator_helm_config"},
	},
	"aws-ia/eks-blueprints-addons/aws": {},
}

// addonWords are the words that, in a module's name, source or arguments,
// say it may install an NVIDIA add-on, and the fact each makes unknown.
var addonWords = []struct{ word, path string }{
	{"gpu-operator", pathGPUOperator},
	{"gpu_operator", pathGPUOperator},
	{"device-plugin", pathDevicePlugin},
	{"device_plugin", pathDevicePlugin},
}

// addonMentions are the add-on facts (spec paths) whose words a module
// call's name, source or arguments carry, each with where the word was
// seen ("name", "source", "argument X"); an enable_* argument that is
// false is switched off and not read.
func addonMentions(m *tfBlock, o *hclObj, src string) map[string]string {
	found := map[string]string{}
	note := func(where, text string) {
		low := strings.ToLower(text)
		if where == "name" || where == "source" {
			// a module named after NVIDIA is an add-on; an argument that
			// says nvidia (an accelerator type) is not
			low = strings.ReplaceAll(low, "nvidia", "device-plugin")
		}
		for _, w := range addonWords {
			if _, seen := found[w.path]; !seen && strings.Contains(low, w.word) {
				found[w.path] = where
			}
		}
	}
	note("name", m.typ)
	note("source", src)
	for _, name := range sortedAttrs(o) {
		x := o.get(name)
		if on, ok := x.bool(); ok && !on && strings.HasPrefix(name, "enable") {
			continue // switched off
		}
		note("argument "+name, name)
		walkStrings(x.v, func(s string) { note("argument "+name, s) })
	}
	return found
}

// mayInstall reports whether a module's name and source say it installs
// what the cluster runs (add-ons, Helm charts, Kubernetes objects).
func mayInstall(nameSource string) bool {
	low := strings.ToLower(nameSource)
	return strings.Contains(low, "addon") || strings.Contains(low, "helm") || strings.Contains(low, "kubernetes")
}

// addonModule reads the NVIDIA add-ons a module call that import does not
// otherwise read (source src, without the registry host) installs, or
// records those it may install as unknown values; read says it read the
// chart of one.
func (t *tfImport) addonModule(m *tfBlock, o *hclObj, src string) (read bool) {
	base, _, _ := strings.Cut(src, "//")
	t.b.k8sAddons = t.b.k8sAddons || mayInstall(m.typ+" "+src)
	if inputs, ok := addonModules[base]; ok && len(inputs) > 0 {
		t.b.k8sAddons = true
		for _, in := range inputs {
			read = t.addonInput(m, o, base, in) || read
		}
		return read
	}
	found := addonMentions(m, o, src)
	t.b.k8sAddons = t.b.k8sAddons || len(found) > 0
	for _, path := range slices.Sorted(maps.Keys(found)) {
		t.b.unknowns = append(t.b.unknowns, Unknown{Path: path, What: addonFact(path), Origin: rangeOrigin(m.rng), Hint: addonHint,
			Because: []string{fmt.Sprintf("%s, a module gpuctl does not read (its %s names an NVIDIA add-on)", m.addr(), found[path])}})
	}
	return false
}

// addonInput reads in, an input of a known add-on module: the chart it
// installs when it is true (read), an unknown add-on when it is unknown.
func (t *tfImport) addonInput(m *tfBlock, o *hclObj, base string, in addonInput) (read bool) {
	x := o.get(in.input)
	on, known := x.bool()
	if x.absent() || (known && !on) {
		return false // the input's default is false
	}
	if known && in.chart != "" && t.moduleChart(o, base, in, x.at) {
		return true
	}
	why := fmt.Sprintf("%s (%s), which sets %s = true and is not read", m.addr(), base, in.input)
	if !known {
		why = fmt.Sprintf("%s (%s), which is not read, and its %s, which depends on %s", m.addr(), base, in.input, strings.Join(x.why, ", "))
	}
	t.b.unknowns = append(t.b.unknowns, Unknown{Path: in.path, What: addonFact(in.path), Because: []string{diag.OneLine(why)}, Origin: x.at, Hint: addonHint})
	return false
}

// moduleChart reads the chart that input in of module call o (source
// base), switched on at on, installs: the call's helm config over the
// module's defaults for its version, as a helm_release of the chart is
// read. false when gpuctl has no defaults for that version (the add-on
// then stays unknown).
func (t *tfImport) moduleChart(o *hclObj, base string, in addonInput, on Origin) bool {
	constraint, _ := o.get("version").str()
	row, note, ok := addonDefaults(base, constraint)
	verFact := factOperatorVersion
	if in.chart == chartDevicePlugin {
		verFact = factPluginVersion
	}
	if !ok || row.fact(verFact) == "" {
		return false
	}
	if note != "" {
		t.skipOnce(o.name()+" version", note, o.origin())
	}
	def := o.origin()
	def.Note = row.where(in.chart)
	var cfg obj = &defaultsObj{what: o.name() + " " + in.config, at: def}
	if x := o.get(in.config); !x.absent() {
		cfg = objOf(t.e, x, o.expr(in.config), o.scope)
	}
	max := 0 // the GPU Operator's values are passed as they are
	if in.chart == chartDevicePlugin {
		max = 1 // merge(defaults, try(yamldecode(values[0]), {}))
	}
	vals, why := t.releaseValues(in.chart, cfg, max)
	if in.chart == chartDevicePlugin {
		underValues(row.fact(factPluginValues), def, vals)
	}
	version := cfg.get("version")
	if version.absent() {
		version = val{v: cty.StringVal(row.fact(verFact)), what: o.name() + " " + in.config + ".version", at: def}
	}
	t.addon(in.chart, &releaseObj{obj: cfg, what: fmt.Sprintf("%s (%s) %s", o.name(), base, in.config), at: on}, version, vals)
	if len(why) > 0 {
		t.valuesUnknown(in, o, on, why)
	}
	return true
}

// valuesUnknown records the chart values import reads as unknown: the
// values of input in's chart depend on why.
func (t *tfImport) valuesUnknown(in addonInput, o *hclObj, on Origin, why []string) {
	paths := []string{"spec.addons.devicePlugin.nodeSelector"}
	if in.chart == chartGPUOperator {
		paths = paths[:0]
		for _, key := range slices.Sorted(maps.Keys(helmKeys[chartGPUOperator])) {
			paths = append(paths, helmKeys[chartGPUOperator][key])
		}
	}
	for _, p := range paths {
		what := fmt.Sprintf("%s %s values (%s)", o.name(), in.config, p[strings.LastIndex(p, "addons.")+len("addons."):])
		t.b.unknowns = append(t.b.unknowns, Unknown{Path: p, What: what, Because: why, Origin: on})
	}
}

// underValues adds the module's default values (YAML text, written at
// def) under vals, as Terraform's merge does: a top-level key the values
// set replaces the default's whole.
func underValues(text string, def Origin, vals map[string]helmValue) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil || len(m) == 0 {
		return
	}
	for k := range vals {
		top, _, _ := strings.Cut(k, ".")
		delete(m, top)
	}
	flatten("", m, def, vals)
}

// releaseObj is a module's helm config as the release it makes: named
// and located as the module call's input that installs it.
type releaseObj struct {
	obj
	what string
	at   Origin
}

func (r *releaseObj) name() string   { return r.what }
func (r *releaseObj) origin() Origin { return r.at }

// skipOnce lists a skip unless the same one is listed already.
func (t *tfImport) skipOnce(what, reason string, at Origin) {
	for _, s := range t.b.skipped {
		if s.What == what && s.Reason == reason {
			return
		}
	}
	t.b.skip(what, reason, at)
}

// addonHint is what to do about an add-on a module not read installs.
const addonHint = "check what the module installs (gpuctl does not read it), or judge a spec with addons.devicePlugin and addons.gpuOperator set (gpuctl import, then edit)"

// addonFact names the add-on at path.
func addonFact(path string) string {
	if path == pathGPUOperator {
		return "the GPU Operator"
	}
	return "the device plugin"
}

// karpenterAddons records, for an import of Karpenter YAML alone, that
// nothing about the cluster's add-ons is known: the device plugin and the
// GPU Operator are installed by whatever installs the cluster, which the
// files do not describe. Add-ons the import did set stay known.
func (b *builder) karpenterAddons(files []string) {
	a := &b.cs.Spec.Addons
	if a.DevicePlugin.Provider != "" || a.GPUOperator.Enabled {
		return
	}
	at := Origin{Line: 1, Column: 1}
	if len(files) > 0 {
		at.File = files[0]
	}
	if len(b.pools) > 0 {
		at = b.pools[0].origins[""] // the first NodePool
	}
	for _, u := range b.unknowns {
		if u.Path == "spec.clusterName" {
			at = u.Origin // the document that names no cluster
		}
	}
	why := []string{"the cluster's add-ons, which Karpenter YAML does not describe (the device plugin comes with the cluster: Helm, an EKS add-on or the GPU Operator)"}
	hint := "judge the cluster's add-ons with the Terraform that installs them, or a spec with addons.devicePlugin set"
	b.unknowns = append(b.unknowns,
		Unknown{Path: pathDevicePlugin, What: "the device plugin", Because: why, Origin: at, Hint: hint},
		Unknown{Path: pathGPUOperator, What: "the GPU Operator", Because: why, Origin: at, Hint: hint})
}

// ruleSpecUnknown is the rule ID of a check not judged for an unknown value
// (rules.RuleSpecUnknown; the package's tests hold the two equal).
const ruleSpecUnknown = "SPEC-UNKNOWN"

// Fact is an unknown value as the rules take it: why it is unknown and how
// to give it. Its fields are rules.Unknown's (the importer does not import
// rules), so callers convert it as is: rules.Unknown(f).
type Fact struct {
	Reason, Hint string
	// PlatformDefault: the platform picks the value when no file sets it
	// (Unknown.PlatformDefault).
	PlatformDefault bool
}

// UnknownFacts are the unknown values by spec path, for the rules to judge
// unknown rather than absent (check.Options.Unknown); several values at one
// path are joined. A --kubernetes-version hint is added where the source
// gives none.
func (r *Result) UnknownFacts() map[string]Fact {
	out := map[string]Fact{}
	for _, u := range r.Unknowns {
		if u.Path == "" {
			continue
		}
		why, hint := r.Why(u), cmpOr(u.Hint, varHint(u))
		if hint == "" && u.Path == "spec.kubernetesVersion" {
			hint = "pass --kubernetes-version VERSION"
		}
		have, ok := out[u.Path]
		switch {
		case !ok:
			out[u.Path] = Fact{Reason: why, Hint: hint, PlatformDefault: u.PlatformDefault}
		case !strings.Contains(have.Reason, why):
			have.Reason += "; " + why
			out[u.Path] = Fact{Reason: have.Reason, Hint: cmpOr(have.Hint, hint)}
		}
	}
	return out
}

// varHint names the variable an unknown value depends on, when it depends
// on one: "pass --var NAME=VALUE or --var-file FILE"; "" otherwise.
func varHint(u Unknown) string {
	for _, b := range u.Because {
		if m := varReason.FindStringSubmatch(b); m != nil {
			return "pass --var " + m[1] + "=VALUE or --var-file FILE"
		}
	}
	return ""
}

// varReason is a reason that begins with a variable's name.
var varReason = regexp.MustCompile(`^var\.([A-Za-z_][A-Za-z0-9_-]*)\b`)

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Why is u's reason in one line without the words about when it becomes
// known: "X depends on Y (file:line)"; the rules quote it where a check
// could not be judged.
func (r *Result) Why(u Unknown) string {
	return diag.OneLine(fmt.Sprintf("%s depends on %s (%s)", u.What, strings.Join(u.Because, ", "), u.Origin))
}

// sortedAttrs are the names of o's attributes, sorted.
func sortedAttrs(o *hclObj) []string {
	names := make([]string, 0, len(o.body.Attributes))
	for n := range o.body.Attributes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// walkStrings calls f with every known string in v and every key of its
// maps and objects.
func walkStrings(v cty.Value, f func(string)) {
	if v == cty.NilVal {
		return
	}
	_ = cty.Walk(v, func(_ cty.Path, x cty.Value) (bool, error) {
		if !x.IsKnown() || x.IsNull() {
			return false, nil
		}
		t := x.Type()
		switch {
		case t == cty.String:
			f(x.AsString())
		case t.IsMapType() || t.IsObjectType():
			for k := range x.AsValueMap() {
				f(k)
			}
		}
		return true, nil
	})
}
