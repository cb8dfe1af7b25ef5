package spec

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
)

// Environments returns the names of the spec's environments, sorted.
func (d *Document) Environments() []string { return sortedKeys(d.Spec.Spec.Environments) }

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
	var raw map[string]any
	// The document was already decoded once, so this cannot fail on syntax.
	if err := yaml.NodeToValue(d.root, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", d.File, err)
	}
	base, _ := raw["spec"].(map[string]any)
	if base == nil {
		base = map[string]any{}
	}
	envs, _ := base["environments"].(map[string]any)
	delete(base, "environments")
	if env != "" {
		ov, ok := envs[env]
		if !ok {
			known := d.Environments()
			if len(known) == 0 {
				return nil, fmt.Errorf("%s defines no environments (asked for %q)", d.File, env)
			}
			return nil, fmt.Errorf("%s has no environment %q (known: %s)", d.File, env, strings.Join(known, ", "))
		}
		if m, ok := ov.(map[string]any); ok {
			base = mergeMaps(base, m).(map[string]any)
		}
	}
	raw["spec"] = base
	out, err := yaml.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var cs ClusterSpec
	if err := yaml.Unmarshal(out, &cs); err != nil {
		return nil, fmt.Errorf("%s: environment %q: %w", d.File, env, err)
	}
	// Waivers of the base apply to every environment; an overlay's waivers add to them.
	if env != "" {
		cs.Spec.Waivers = append(append([]Waiver(nil), d.Spec.Spec.Waivers...), d.Spec.Spec.Environments[env].Waivers...)
	}
	return &cs, nil
}

func mergeMaps(base, over any) any {
	bm, ok1 := base.(map[string]any)
	om, ok2 := over.(map[string]any)
	if !ok1 || !ok2 {
		return over
	}
	out := make(map[string]any, len(bm)+len(om))
	for k, v := range bm {
		out[k] = v
	}
	for k, v := range om {
		if k == "nodePools" {
			out[k] = mergePools(bm[k], v)
			continue
		}
		if k == "waivers" {
			continue // handled by Resolve
		}
		if cur, ok := out[k]; ok {
			out[k] = mergeMaps(cur, v)
		} else {
			out[k] = v
		}
	}
	return out
}

func mergePools(base, over any) any {
	bl, _ := base.([]any)
	ol, ok := over.([]any)
	if !ok {
		return over
	}
	out := append([]any(nil), bl...)
	for _, o := range ol {
		om, _ := o.(map[string]any)
		name, _ := om["name"].(string)
		merged := false
		for i, b := range out {
			if bm, _ := b.(map[string]any); bm != nil && bm["name"] == name {
				out[i] = mergeMaps(bm, om)
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, o)
		}
	}
	return out
}

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
