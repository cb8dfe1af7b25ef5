package plan

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// PoolChange is one node pool added, removed or changed between the old
// spec (--from) and the new one, in one environment.
type PoolChange struct {
	Environment string `json:"environment"`
	// Pool is the pool's name; "" for a change of the spec outside the
	// pools (kubernetesVersion, addons) that reaches every pool.
	Pool   string        `json:"pool"`
	Action string        `json:"action"`
	Fields []FieldChange `json:"fields"`
	// Replaces says the change replaces the pool's nodes (driver,
	// Kubernetes version, node image): it gets a rollout plan.
	Replaces bool `json:"replaces"`
}

// FieldChange is one field of a changed pool: its path below the pool
// (gpu.driver) or the spec (spec.kubernetesVersion), old and new values as
// JSON text ("" when absent).
type FieldChange struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// replacing says which changes replace a pool's nodes: the driver, the
// Kubernetes version and the node image.
func replacing(field string) bool {
	switch field {
	case "gpu.driver", "osImage", "releaseVersion", "driver (resolved)", "spec.kubernetesVersion", "spec.addons.gpuOperator.driver.version":
		return true
	}
	return false
}

// SpecChanges compares the environments of old and new (checked
// documents): pools added, removed and changed, and the spec-wide fields
// that change every pool's nodes. Environments only one side has are left
// out (a new environment is a new cluster).
func SpecChanges(old, new *check.Result) []PoolChange {
	out := []PoolChange{}
	olds := map[string]*spec.ClusterSpec{}
	for _, e := range old.Envs {
		olds[e.Name] = e.Spec
	}
	for _, e := range new.Envs {
		o, ok := olds[e.Name]
		if !ok {
			continue
		}
		var cluster []FieldChange
		for _, f := range []struct{ name, old, new string }{
			{"spec.kubernetesVersion", o.Spec.KubernetesVersion, e.Spec.Spec.KubernetesVersion},
			{"spec.addons.gpuOperator.driver.version", o.Spec.Addons.GPUOperator.Driver.Version, e.Spec.Spec.Addons.GPUOperator.Driver.Version},
		} {
			if f.old != f.new {
				cluster = append(cluster, FieldChange{f.name, quoted(f.old), quoted(f.new)})
			}
		}
		if len(cluster) > 0 {
			out = append(out, PoolChange{Environment: e.Name, Action: ActionChange, Fields: cluster, Replaces: true})
		}
		oldPools := map[string]int{}
		for i, p := range o.Spec.NodePools {
			oldPools[p.Name] = i
		}
		newPools := map[string]bool{}
		for i, p := range e.Spec.Spec.NodePools {
			newPools[p.Name] = true
			j, ok := oldPools[p.Name]
			if !ok {
				out = append(out, PoolChange{Environment: e.Name, Pool: p.Name, Action: ActionAdd, Fields: []FieldChange{}})
				continue
			}
			fs := fieldChanges(flatten(o.Spec.NodePools[j]), flatten(p))
			// The driver the nodes get can change without gpu.driver
			// changing (GKE's DEFAULT for another version, the AMI's).
			od, nd := matrix.PoolDriver(o, j), matrix.PoolDriver(e.Spec, i)
			if was, is := driverText(od), driverText(nd); was != is {
				fs = append(fs, FieldChange{"driver (resolved)", quoted(was), quoted(is)})
			}
			if len(fs) == 0 {
				continue
			}
			pc := PoolChange{Environment: e.Name, Pool: p.Name, Action: ActionChange, Fields: fs}
			for _, f := range fs {
				pc.Replaces = pc.Replaces || replacing(f.Field)
			}
			out = append(out, pc)
		}
		for _, p := range o.Spec.NodePools {
			if !newPools[p.Name] {
				out = append(out, PoolChange{Environment: e.Name, Pool: p.Name, Action: ActionRemove, Fields: []FieldChange{}})
			}
		}
	}
	return out
}

func driverText(d matrix.PoolDriverFacts) string {
	switch {
	case d.Version != "":
		return d.Owner + " " + d.Version
	case d.Branch != 0:
		return fmt.Sprintf("%s R%d", d.Owner, d.Branch)
	}
	return d.Owner
}

func quoted(s string) string {
	if s == "" {
		return ""
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// flatten maps every leaf of a pool (its JSON form) to its JSON text,
// keyed by dotted path (gpu.driver, nccl.env.NCCL_DEBUG, zones).
func flatten(p spec.NodePool) map[string]string {
	b, _ := json.Marshal(p)
	var v any
	_ = json.Unmarshal(b, &v)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, x := range m {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, x)
			}
			return
		}
		t, _ := json.Marshal(v)
		out[prefix] = string(t)
	}
	walk("", v)
	return out
}

func fieldChanges(old, new map[string]string) []FieldChange {
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range new {
		keys[k] = true
	}
	var out []FieldChange
	for k := range keys {
		if old[k] != new[k] {
			out = append(out, FieldChange{k, old[k], new[k]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// reasons are the node-replacing field changes of c, for the rollout.
func reasons(cs []PoolChange, env, pool string) []string {
	var out []string
	for _, c := range cs {
		if c.Environment != env || (c.Pool != pool && c.Pool != "") || !c.Replaces {
			continue
		}
		for _, f := range c.Fields {
			if replacing(f.Field) {
				out = append(out, fmt.Sprintf("%s: %s -> %s", f.Field, orNone(f.Old), orNone(f.New)))
			}
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(unset)"
	}
	return strings.Trim(s, `"`)
}
