package spec

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Environments returns the names of the spec's environments, sorted.
func (d *Document) Environments() []string { return slices.Sorted(maps.Keys(d.Spec.Spec.Environments)) }

// Resolve returns the spec of environment env: the base spec with the
// environment's overlay merged over it. Mappings merge key by key, node
// pools merge by name (a pool only in the overlay is added), any other list
// or scalar written in the overlay replaces the base value. env "" returns
// the base spec. The result has no environments.
//
// Errors: env unknown (the message lists the known ones).
func (d *Document) Resolve(env string) (*ClusterSpec, error) {
	if cs, ok := d.resolved[env]; ok {
		return cs, nil
	}
	cs, err := d.resolve(env)
	if err != nil {
		return nil, err
	}
	if d.resolved == nil {
		d.resolved = map[string]*ClusterSpec{}
	}
	d.resolved[env] = cs
	return cs, nil
}

func (d *Document) resolve(env string) (*ClusterSpec, error) {
	cs := deepCopy(reflect.ValueOf(d.Spec).Elem()).Interface().(ClusterSpec)
	cs.Spec.Environments = nil
	if env == "" {
		return &cs, nil
	}
	ov, ok := d.Spec.Spec.Environments[env]
	if !ok {
		known := d.Environments()
		if len(known) == 0 {
			return nil, fmt.Errorf("%s defines no environments (asked for %q)", d.File, env)
		}
		return nil, fmt.Errorf("%s has no environment %q (known: %s)", d.File, env, strings.Join(known, ", "))
	}
	// The overlay is merged on the decoded values, guided by the keys the
	// file writes (an explicit 0 or false overrides, an absent key does
	// not): nothing is decoded again, so a merge cannot fail, and every
	// error about the overlay was reported with its position when the file
	// was read.
	segs, _ := parsePath("spec.environments" + Key(env))
	ref, _ := d.index.lookup(segs)
	merge(reflect.ValueOf(&cs.Spec).Elem(), reflect.ValueOf(ov), ref.node, true)
	// Waivers of the base apply to every environment; an overlay's waivers add to them.
	cs.Spec.Waivers = append(append([]Waiver(nil), d.Spec.Spec.Waivers...), ov.Waivers...)
	return &cs, nil
}

// merge writes the overlay value src, decoded from the value n (as the
// document's index has it), over dst: mappings merge key by key (struct
// fields and map entries alike), node pools merge by name (a pool only in
// the overlay is added), any other list or scalar written replaces the base
// value. top is the spec's own level, whose waivers Resolve appends instead.
func merge(dst, src reflect.Value, n *posNode, top bool) {
	merged := false
	if n.isMapping() {
		switch dst.Kind() {
		case reflect.Struct:
			mergeStruct(dst, src, n, top)
			merged = true
		case reflect.Map:
			merged = mergeMap(dst, src)
		case reflect.Pointer:
			merged = mergePointer(dst, src, n)
		}
	}
	if !merged {
		dst.Set(deepCopy(src))
	}
}

// mergeStruct merges the fields the overlay mapping n writes, node pools
// by name at the top level; the top level's waivers are left to Resolve.
func mergeStruct(dst, src reflect.Value, n *posNode, top bool) {
	fields := fieldIndex(dst.Type())
	for _, e := range n.mappingEntries() {
		i, ok := fields[e.key]
		switch {
		case !ok || (top && e.key == "waivers"):
		case top && e.key == "nodePools":
			mergePools(dst.Field(i), src.Field(i), e.node)
		default:
			merge(dst.Field(i), src.Field(i), e.node, false)
		}
	}
}

// mergeMap writes the overlay map's entries over the base map's, into a
// new map; false when the overlay holds no map.
func mergeMap(dst, src reflect.Value) bool {
	if src.IsNil() {
		return false
	}
	out := reflect.MakeMapWithSize(dst.Type(), dst.Len()+src.Len())
	for it := dst.MapRange(); it.Next(); {
		out.SetMapIndex(it.Key(), it.Value())
	}
	for it := src.MapRange(); it.Next(); {
		out.SetMapIndex(it.Key(), deepCopy(it.Value()))
	}
	dst.Set(out)
	return true
}

// mergePointer merges the overlay's struct into the base's (a new one when
// the base has none); false when the overlay holds none, or the pointer is
// not to a struct.
func mergePointer(dst, src reflect.Value, n *posNode) bool {
	if src.IsNil() || dst.Type().Elem().Kind() != reflect.Struct {
		return false
	}
	if dst.IsNil() {
		dst.Set(reflect.New(dst.Type().Elem()))
	}
	merge(dst.Elem(), src.Elem(), n, false)
	return true
}

// mergePools merges the overlay's node pools src (decoded from the list
// n) into dst by name.
func mergePools(dst, src reflect.Value, n *posNode) {
	if n == nil || n.kind != posList || src.Len() != len(n.items) {
		dst.Set(deepCopy(src))
		return
	}
	byName := make(map[string]int, dst.Len())
	for i := 0; i < dst.Len(); i++ {
		byName[dst.Index(i).Interface().(NodePool).Name] = i
	}
	for i := 0; i < src.Len(); i++ {
		name := src.Index(i).Interface().(NodePool).Name
		if j, ok := byName[name]; ok {
			merge(dst.Index(j), src.Index(i), n.items[i].node, false)
			continue
		}
		byName[name] = dst.Len()
		dst.Set(reflect.Append(dst, deepCopy(src.Index(i))))
	}
}

// fieldIndex maps a struct's YAML keys to field indexes.
func fieldIndex(t reflect.Type) map[string]int {
	if m, ok := fieldIndexes.Load(t); ok {
		return m.(map[string]int)
	}
	out := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = i
	}
	fieldIndexes.Store(t, out)
	return out
}

// fieldIndexes caches fieldIndex by type (a spec's structs are walked once
// per node pool); the maps are shared and never written to.
var fieldIndexes sync.Map // reflect.Type -> map[string]int

// deepCopy returns a copy of v that shares no map, slice or pointer with it.
// Values that hold none (strings, numbers, structs of them) are copied as
// they are, and a struct's other fields are copied whole before those
// that hold references are copied deeply: a reflect.Value per scalar was
// most of resolving a 1,000-pool spec.
func deepCopy(v reflect.Value) reflect.Value {
	refs := refFields(v.Type())
	if refs == nil {
		return v
	}
	switch v.Kind() {
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for _, i := range refs {
			out.Field(i).Set(deepCopy(v.Field(i)))
		}
		return out
	case reflect.Map:
		return copyMap(v)
	case reflect.Slice:
		return copySlice(v)
	case reflect.Pointer:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(deepCopy(v.Elem()))
		return p
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(deepCopy(v.Index(i)))
		}
		return out
	}
	return v // an interface, func or channel: shared, as before
}

// copyMap is deepCopy of a map.
func copyMap(v reflect.Value) reflect.Value {
	t := v.Type()
	if v.IsNil() {
		return reflect.Zero(t)
	}
	if t == stringMapType {
		return reflect.ValueOf(maps.Clone(v.Interface().(map[string]string)))
	}
	m := reflect.MakeMapWithSize(t, v.Len())
	for it := v.MapRange(); it.Next(); {
		m.SetMapIndex(it.Key(), deepCopy(it.Value()))
	}
	return m
}

// copySlice is deepCopy of a slice: a copy of its elements, each copied
// deeply where it holds references.
func copySlice(v reflect.Value) reflect.Value {
	t := v.Type()
	if v.IsNil() {
		return reflect.Zero(t)
	}
	s := reflect.MakeSlice(t, v.Len(), v.Len())
	if refFields(t.Elem()) == nil {
		reflect.Copy(s, v)
		return s
	}
	for i := 0; i < v.Len(); i++ {
		s.Index(i).Set(deepCopy(v.Index(i)))
	}
	return s
}

// refFields says how deepCopy copies a value of type t: nil when it holds
// no map, slice, pointer or interface (a copy shares nothing); for a
// struct that does, the indexes of the fields that hold them; for other
// kinds that are references, an empty list.
func refFields(t reflect.Type) []int {
	if r, ok := refFieldCache.Load(t); ok {
		return r.([]int)
	}
	var r []int
	switch t.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Interface, reflect.Chan, reflect.Func:
		r = []int{}
	case reflect.Array:
		if refFields(t.Elem()) != nil {
			r = []int{}
		}
	case reflect.Struct:
		r = []int(nil)
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && refFields(f.Type) != nil {
				r = append(r, i)
			}
		}
	}
	refFieldCache.Store(t, r)
	return r
}

var refFieldCache sync.Map // reflect.Type -> []int

// Locate maps a field path of environment env's resolved spec (as findings
// report it) to where a user changes it: the overlay's field when the
// overlay writes it, else the base spec's. It returns that path and its
// 1-based line and column (of the nearest written parent when the field is
// not written at all).
func (d *Document) Locate(env, path string) (where string, line, column int) {
	if env != "" && strings.HasPrefix(path, "spec.") {
		if ovPath, ok := d.overlayPath(env, path); ok && d.Has(ovPath) {
			l, c, _ := d.Position(ovPath)
			return ovPath, l, c
		}
		if basePath, ok := d.basePoolPath(env, path); ok {
			path = basePath
		} else if ovPath, ok := d.overlayPath(env, path); ok {
			// the pool exists only in the overlay
			l, c, _ := d.Position(ovPath)
			return ovPath, l, c
		}
	}
	l, c, _ := d.Position(path)
	return path, l, c
}

// poolName returns the name of the resolved pool a path points into.
func (d *Document) poolIndexRemap(env, path string, target []NodePool) (string, bool) {
	segs, err := parsePath(path)
	if err != nil || len(segs) < 3 || segs[0].key != "spec" || segs[1].key != "nodePools" || segs[2].index < 0 {
		return path, true // not a pool path: unchanged
	}
	resolved, err := d.Resolve(env)
	if err != nil || segs[2].index >= len(resolved.Spec.NodePools) {
		return "", false
	}
	name := resolved.Spec.NodePools[segs[2].index].Name
	for i, p := range target {
		if p.Name == name {
			segs[2].index = i
			return formatPath(segs), true
		}
	}
	return "", false
}

func (d *Document) overlayPath(env, path string) (string, bool) {
	ov := d.Spec.Spec.Environments[env]
	p, ok := d.poolIndexRemap(env, path, ov.NodePools)
	if !ok {
		return "", false
	}
	return "spec.environments" + Key(env) + strings.TrimPrefix(p, "spec"), true
}

func (d *Document) basePoolPath(env, path string) (string, bool) {
	return d.poolIndexRemap(env, path, d.Spec.Spec.NodePools)
}
