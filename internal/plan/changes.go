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
	// Downgrade is true for a change to an older driver (a lower version
	// or branch) or an older AMI release (releaseVersion of an earlier
	// date); omitted otherwise.
	Downgrade bool `json:"downgrade,omitempty"`
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

// envPair is one environment both checked documents have: its name, the
// old resolved spec and the new one.
type envPair struct {
	name     string
	old, new *spec.ClusterSpec
}

// sharedEnvs pairs the environments of new with those of old by name, in
// new's order; an environment only one side has is left out.
func sharedEnvs(old, new *check.Result) []envPair {
	olds := map[string]*spec.ClusterSpec{}
	for _, e := range old.Envs {
		olds[e.Name] = e.Spec
	}
	var out []envPair
	for _, e := range new.Envs {
		if o, ok := olds[e.Name]; ok {
			out = append(out, envPair{name: e.Name, old: o, new: e.Spec})
		}
	}
	return out
}

// SpecChanges compares the environments of old and new (checked
// documents): pools added, removed and changed, and the spec-wide fields
// that change every pool's nodes. Environments only one side has are left
// out (a new environment is a new cluster).
func SpecChanges(old, new *check.Result) []PoolChange {
	out := []PoolChange{}
	for _, e := range sharedEnvs(old, new) {
		if e.old.Spec.Provider != e.new.Spec.Provider {
			out = append(out, providerChange(e)...)
			continue
		}
		out = append(out, clusterChanges(e)...)
		out = append(out, poolChanges(e)...)
	}
	return out
}

// providerChange: on another platform no pool carries over; every old pool
// goes and every new one is created.
func providerChange(e envPair) []PoolChange {
	o, n := e.old, e.new
	out := []PoolChange{{Environment: e.name, Action: ActionChange, Replaces: true,
		Fields: []FieldChange{{Field: "spec.provider", Old: quoted(o.Spec.Provider), New: quoted(n.Spec.Provider)}}}}
	for _, p := range o.Spec.NodePools {
		out = append(out, PoolChange{Environment: e.name, Pool: p.Name, Action: ActionRemove, Fields: []FieldChange{}})
	}
	for _, p := range n.Spec.NodePools {
		out = append(out, PoolChange{Environment: e.name, Pool: p.Name, Action: ActionAdd, Fields: []FieldChange{}})
	}
	return out
}

// clusterChanges are the spec-wide fields that change every pool's nodes
// (none, or one change of the environment).
func clusterChanges(e envPair) []PoolChange {
	o, n := e.old, e.new
	var cluster []FieldChange
	for _, f := range []struct{ name, old, new string }{
		{"spec.kubernetesVersion", o.Spec.KubernetesVersion, n.Spec.KubernetesVersion},
		{"spec.addons.gpuOperator.driver.version", o.Spec.Addons.GPUOperator.Driver.Version, n.Spec.Addons.GPUOperator.Driver.Version},
	} {
		if f.old != f.new {
			cluster = append(cluster, FieldChange{Field: f.name, Old: quoted(f.old), New: quoted(f.new)})
		}
	}
	if len(cluster) == 0 {
		return nil
	}
	return []PoolChange{{Environment: e.name, Action: ActionChange, Fields: markDowngrades(cluster), Replaces: true}}
}

// poolChanges are the pools added and changed, in the new spec's order,
// then the pools removed, in the old spec's.
func poolChanges(e envPair) []PoolChange {
	o, n := e.old, e.new
	var out []PoolChange
	oldPools := map[string]int{}
	for i, p := range o.Spec.NodePools {
		oldPools[p.Name] = i
	}
	newPools := map[string]bool{}
	for i, p := range n.Spec.NodePools {
		newPools[p.Name] = true
		j, ok := oldPools[p.Name]
		if !ok {
			out = append(out, PoolChange{Environment: e.name, Pool: p.Name, Action: ActionAdd, Fields: []FieldChange{}})
			continue
		}
		if pc, changed := changedPool(e, j, i); changed {
			out = append(out, pc)
		}
	}
	for _, p := range o.Spec.NodePools {
		if !newPools[p.Name] {
			out = append(out, PoolChange{Environment: e.name, Pool: p.Name, Action: ActionRemove, Fields: []FieldChange{}})
		}
	}
	return out
}

// changedPool is the change of pool j of the old spec to pool i of the new
// one: its fields, and the driver the nodes get, which can change without
// gpu.driver changing (GKE's DEFAULT for another version, the AMI's).
// changed is false when nothing changed.
func changedPool(e envPair, j, i int) (PoolChange, bool) {
	o, n := e.old, e.new
	p := n.Spec.NodePools[i]
	fs := fieldChanges(flatten(o.Spec.NodePools[j]), flatten(p))
	od, nd := matrix.PoolDriver(o, j), matrix.PoolDriver(n, i)
	if was, is := driverText(od), driverText(nd); was != is {
		fs = append(fs, FieldChange{Field: "driver (resolved)", Old: quoted(was), New: quoted(is)})
	}
	if len(fs) == 0 {
		return PoolChange{}, false
	}
	pc := PoolChange{Environment: e.name, Pool: p.Name, Action: ActionChange, Fields: markDowngrades(fs)}
	for _, f := range fs {
		pc.Replaces = pc.Replaces || replacing(f.Field)
	}
	return pc, true
}

// ChangeWarnings are what a reviewer of the spec changes must know that no
// rollout shows: a switch of platform (the pools are new pools on another
// provider: nothing is rolled, the old cluster's pools are not removed by
// this Terraform), and a Kubernetes downgrade, which neither platform
// does to running nodes.
func ChangeWarnings(old, new *check.Result) []string {
	out := []string{}
	for _, e := range sharedEnvs(old, new) {
		name, o, n := e.name, e.old, e.new
		where := "the base spec"
		if name != "" {
			where = "environment " + name
		}
		if o.Spec.Provider != n.Spec.Provider {
			out = append(out, fmt.Sprintf("%s: spec.provider %s -> %s: the pools are new pools on another platform, built by other Terraform; nothing is rolled out, and the %s pools stay until their own Terraform removes them",
				where, o.Spec.Provider, n.Spec.Provider, o.Spec.Provider))
			continue
		}
		ov, err1 := matrix.ParseKubernetesVersion(o.Spec.KubernetesVersion)
		nv, err2 := matrix.ParseKubernetesVersion(n.Spec.KubernetesVersion)
		if err1 == nil && err2 == nil && nv.Minor().Less(ov.Minor()) {
			// Sources: https://cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster#downgrading_limitations,
			// https://docs.aws.amazon.com/eks/latest/userguide/update-managed-node-group.html
			out = append(out, fmt.Sprintf("%s: spec.kubernetesVersion %s -> %s is a downgrade: GKE and EKS do not downgrade running nodes to an older minor version (GKE rolls back only a canceled or failed upgrade), so the rollout cannot bring them there; create new pools at %s instead",
				where, o.Spec.KubernetesVersion, n.Spec.KubernetesVersion, n.Spec.KubernetesVersion))
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
			out = append(out, FieldChange{Field: k, Old: old[k], New: new[k]})
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
				out = append(out, fmt.Sprintf("%s: %s -> %s%s", f.Field, orNone(f.Old), orNone(f.New), downgradeNote(f)))
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

// downgradeNote is " (downgrade)" for a downgrade, else "".
func downgradeNote(f FieldChange) string {
	if f.Downgrade {
		return " (downgrade)"
	}
	return ""
}
