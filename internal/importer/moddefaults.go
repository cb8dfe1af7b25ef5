package importer

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	version "github.com/hashicorp/go-version"
	"github.com/zclconf/go-cty/cty"
)

// data/moddefaults.yaml: the defaults registry modules (and the
// cluster-toolkit modules a blueprint uses) give the inputs that reach the
// API, by module and version range, each row with its source and commit.

//go:embed data/moddefaults.yaml
var modDefaultsYAML []byte

type modDefaultsFile struct {
	Modules []moduleFacts `yaml:"modules"`
}

// moduleFacts are one module's rows, for the submodules they hold for (""
// is the module itself).
type moduleFacts struct {
	Module     string        `yaml:"module"`
	Submodules []string      `yaml:"submodules"`
	Rows       []defaultsRow `yaml:"rows"`
}

// defaultsRow is what a module defaults in the releases its Versions
// constraint allows: the cluster's inputs and a node pool's.
type defaultsRow struct {
	Versions string         `yaml:"versions"`
	Release  string         `yaml:"release"`
	Commit   string         `yaml:"commit"`
	Source   string         `yaml:"source"`
	Source2  string         `yaml:"source_2"`
	AsOf     string         `yaml:"as_of"`
	Note     string         `yaml:"note"`
	Cluster  map[string]any `yaml:"cluster"`
	NodePool map[string]any `yaml:"node_pool"`
	// Addons are what an add-on module installs by default
	// (data/addondefaults.yaml).
	Addons map[string]any `yaml:"addons"`

	allows version.Constraints
}

// modDefaults are the decoded facts; the file is checked when the package
// loads (its test decodes it again and holds each row).
var modDefaults = mustModDefaults(modDefaultsYAML)

func mustModDefaults(b []byte) []moduleFacts {
	m, err := decodeModDefaults(b)
	if err != nil {
		panic(err)
	}
	return m
}

// decodeModDefaults decodes the facts file. Errors: a field the types do
// not name, a row without versions, source, commit or as_of, a constraint
// that does not parse.
func decodeModDefaults(b []byte) ([]moduleFacts, error) {
	var f modDefaultsFile
	if err := yaml.UnmarshalWithOptions(b, &f, yaml.DisallowUnknownField()); err != nil {
		return nil, fmt.Errorf("moddefaults.yaml: %w", err)
	}
	for i := range f.Modules {
		m := &f.Modules[i]
		for j := range m.Rows {
			r := &m.Rows[j]
			if r.Versions == "" || r.Source == "" || r.Commit == "" || r.AsOf == "" {
				return nil, fmt.Errorf("moddefaults.yaml: %s row %d: versions, source, commit and as_of are required", m.Module, j+1)
			}
			c, err := version.NewConstraint(r.Versions)
			if err != nil {
				return nil, fmt.Errorf("moddefaults.yaml: %s row %d: %w", m.Module, j+1, err)
			}
			r.allows = c
		}
	}
	return f.Modules, nil
}

// moduleDefaults is the row of module source (a registry address without
// its host, with or without a //submodule) that the call's version
// constraint selects, and a note for import to list when no constraint
// chose it: the newest row, when the call sets none (or one that does not
// parse). ok is false for a module or submodule without facts, or a
// constraint no row's releases meet.
func moduleDefaults(source, constraint string) (row defaultsRow, note string, ok bool) {
	return defaultsIn(modDefaults, source, constraint)
}

// defaultsIn is moduleDefaults over the facts mods.
func defaultsIn(mods []moduleFacts, source, constraint string) (row defaultsRow, note string, ok bool) {
	base, sub, _ := strings.Cut(strings.TrimPrefix(source, "registry.terraform.io/"), "//")
	sub = strings.TrimPrefix(strings.TrimSuffix(sub, "/"), "modules/")
	for _, m := range mods {
		if m.Module != base || !slices.Contains(m.Submodules, sub) || len(m.Rows) == 0 {
			continue
		}
		want, err := version.NewConstraint(constraint)
		if strings.TrimSpace(constraint) == "" || err != nil {
			r := m.Rows[0]
			return r, fmt.Sprintf("no version constraint: the defaults of %s %s were applied", base, majorOf(r.Release)), true
		}
		r, ok := pickRow(m.Rows, want, constraint)
		return r, "", ok
	}
	return defaultsRow{}, "", false
}

// versionNumber finds the versions a constraint names.
var versionNumber = regexp.MustCompile(`\d+(\.\d+){0,2}`)

// pickRow is the row of the newest release want allows, among the
// versions want names and the rows' own releases and bounds: Terraform
// installs the newest release a constraint allows, and the rows change
// only at their bounds.
func pickRow(rows []defaultsRow, want version.Constraints, constraint string) (defaultsRow, bool) {
	var cands []*version.Version
	texts := versionNumber.FindAllString(constraint, -1)
	for _, r := range rows {
		texts = append(texts, versionNumber.FindAllString(r.Versions+" "+r.Release, -1)...)
	}
	for _, s := range texts {
		if v, err := version.NewVersion(s); err == nil && want.Check(v) {
			cands = append(cands, v)
		}
	}
	slices.SortFunc(cands, func(a, b *version.Version) int { return b.Compare(a) })
	for _, v := range cands {
		for _, r := range rows {
			if r.allows.Check(v) {
				return r, true
			}
		}
	}
	return defaultsRow{}, false
}

// newestAllowed is the newest of versions (dotted version strings: the
// bounds where facts change and the newest releases known) and of the
// versions constraint names that constraint allows (hashicorp/go-version,
// Terraform's own constraint syntax), as Terraform installs the newest
// release a constraint allows. ok is false for an empty constraint, one
// that does not parse, or one that allows none of them.
func newestAllowed(constraint string, versions []string) (*version.Version, bool) {
	want, err := version.NewConstraint(constraint)
	if strings.TrimSpace(constraint) == "" || err != nil {
		return nil, false
	}
	var best *version.Version
	for _, s := range append(versionNumber.FindAllString(constraint, -1), versions...) {
		if v, err := version.NewVersion(s); err == nil && want.Check(v) && (best == nil || v.GreaterThan(best)) {
			best = v
		}
	}
	return best, best != nil
}

// allows reports whether constraint (which parses) allows version v.
func allows(constraint, v string) bool {
	want, err := version.NewConstraint(constraint)
	return err == nil && want.Check(version.Must(version.NewVersion(v)))
}

// majorOf is "v21.x" of release "v21.19.0".
func majorOf(release string) string {
	major, _, _ := strings.Cut(release, ".")
	return major + ".x"
}

// defaultsObj is a row's defaults for one object (a node pool or the
// cluster) as an obj under the module call's own keys: the last layer
// under what the call sets. Each value is at the module call's origin.
type defaultsObj struct {
	values map[string]any
	what   string // "terraform-google-modules/kubernetes-engine/google v44.2.0"
	at     Origin
}

func (d *defaultsObj) origin() Origin      { return d.at }
func (d *defaultsObj) name() string        { return d.what }
func (d *defaultsObj) blocks(string) []obj { return nil }
func (d *defaultsObj) get(key string) val {
	x, ok := d.values[key]
	what := "module default " + key + " (" + d.what + ")"
	if !ok {
		return val{what: what, at: d.at}
	}
	at := d.at
	at.Note = "module default"
	return val{v: ctyOfFact(x), what: what, at: at}
}

// ctyOfFact is a fact's YAML value as cty: a string, a whole number, a
// bool or a list of strings.
func ctyOfFact(x any) cty.Value {
	switch v := x.(type) {
	case string:
		return cty.StringVal(v)
	case bool:
		return cty.BoolVal(v)
	case uint64:
		return cty.NumberUIntVal(v)
	case int64:
		return cty.NumberIntVal(v)
	case int:
		return cty.NumberIntVal(int64(v))
	case []any:
		var l []cty.Value
		for _, e := range v {
			l = append(l, ctyOfFact(e))
		}
		if len(l) == 0 {
			return cty.ListValEmpty(cty.String)
		}
		return cty.TupleVal(l)
	}
	return cty.NullVal(cty.DynamicPseudoType)
}

// scalarOfFact is a fact's value as a ynode scalar holds it (int64 for a
// whole number).
func scalarOfFact(x any) any {
	switch v := x.(type) {
	case uint64:
		return int64(v)
	case int:
		return int64(v)
	}
	return x
}

// blueprintDefaults are the defaults of cluster-toolkit module path (as
// "compute/gke-node-pool") for the node pool or the cluster, as the
// blueprint reader's settings take them.
func blueprintDefaults(path string, cluster bool) map[string]any {
	r, _, ok := moduleDefaults("GoogleCloudPlatform/cluster-toolkit/modules/"+path, "")
	if !ok {
		panic("moddefaults.yaml: no row for cluster-toolkit " + path)
	}
	src := r.NodePool
	if cluster {
		src = r.Cluster
	}
	out := make(map[string]any, len(src))
	for k, v := range src {
		out[k] = scalarOfFact(v)
	}
	return out
}

// moduleDefaultsFor are the defaults of module call o (source src) for a
// node pool and for the cluster, as objs under what the call sets (nil when
// gpuctl has no facts of the module or its version); the note that no
// version constraint chose them is listed once per call.
func (t *tfImport) moduleDefaultsFor(o *hclObj, src string) (pool, cluster obj) {
	vs, _ := o.get("version").str()
	row, note, ok := moduleDefaults(src, vs)
	if !ok {
		return nil, nil
	}
	if note != "" {
		t.b.skip(o.name()+" version", note, o.origin())
	}
	what := src + " " + row.Release
	return &defaultsObj{values: row.NodePool, what: what, at: o.origin()},
		&defaultsObj{values: row.Cluster, what: what, at: o.origin()}
}

// poolDefaults are the node pool defaults of module call o by its source
// and version (nil when gpuctl has none).
func (t *tfImport) poolDefaults(o *hclObj) obj {
	src, _ := o.get("source").str()
	pool, _ := t.moduleDefaultsFor(o, src)
	return pool
}

// withDefaults is pool g over the module's defaults d (g itself when d is
// nil).
func withDefaults(g, d obj) obj {
	if d == nil {
		return g
	}
	return &mergedObj{layers: []obj{g, d}}
}
