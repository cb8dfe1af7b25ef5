package plan

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Input is what Make plans from. Doc and Result are required; the rest
// turn parts of the plan on.
type Input struct {
	Doc    *spec.Document
	Result *check.Result
	AsOf   string
	// From and FromResult are the old spec (--from), checked like Doc.
	From       *spec.Document
	FromResult *check.Result
	// Tree is the folder generate writes (--out, OpenTree), OutDir its
	// name. Out is the same folder as an fs.FS (read through TreeFS), for
	// callers without a Tree; Tree wins when both are set.
	Tree   *Tree
	Out    fs.FS
	OutDir string
	// Kube reads the live cluster (list calls only); with it, Result must
	// hold exactly one environment: the cluster's.
	Kube kubernetes.Interface
	// StepStart is when the rollout step whose sweep gate is checked
	// started (--step-start): a node satisfies the gate with GPUAccepted
	// True set after it. Zero: any GPUAccepted=True with a time counts.
	StepStart time.Time
}

// Make builds the plan.
func Make(ctx context.Context, in Input) (*Plan, error) {
	p := &Plan{APIVersion: spec.APIVersion, Kind: Kind, FormatVersion: FormatVersion, Spec: in.Doc.File, OutDir: in.OutDir, AsOf: in.AsOf,
		Environments: ResolvePools(in.Doc, in.Result), Files: []FileChange{}, SpecChanges: []PoolChange{}, Rollouts: []Rollout{},
		Drift: []NodeDrift{}, SweepGates: []SweepGateCheck{}, Warnings: []string{}, Findings: errorFindings(in.Result.Findings)}
	if in.From != nil {
		p.From = in.From.File
	}
	if len(p.Findings) > 0 {
		// A spec with an error finding is not what will be applied: the
		// findings only, nothing compared, rolled or read from the cluster.
		p.Finish()
		return p, nil
	}
	if t := in.tree(); t != nil {
		files, err := check.Files(in.Result, check.LayerAll, filepath.Base(in.Doc.File))
		if err != nil {
			return nil, err
		}
		out, err := ReadOut(t, files, check.LayerAll, check.RunEnv(in.Result))
		if err != nil {
			return nil, err
		}
		p.Files = CompareOut(out)
	}
	rolls := pendingRolls{reasons: map[poolKey][]string{}, rollback: map[poolKey][]string{}, effects: map[poolKey][]Effect{}}
	if in.From != nil {
		p.SpecChanges = SpecChanges(in.FromResult, in.Result)
		p.Warnings = ChangeWarnings(in.FromResult, in.Result)
		for _, e := range in.Result.Envs {
			rolls.fromSpecChanges(p.SpecChanges, in, e)
		}
	}
	var live map[string][]ZoneNodes
	if in.Kube != nil {
		var err error
		if live, err = p.readDrift(ctx, in, rolls); err != nil {
			return nil, err
		}
	}
	for _, e := range p.Environments {
		for _, pool := range e.Pools {
			if r, ok := rolls.rollout(in, e, pool, live); ok {
				p.Rollouts = append(p.Rollouts, r)
			}
		}
	}
	p.Finish()
	return p, nil
}

// tree is the --out tree to compare with; nil without one.
func (in Input) tree() *Tree {
	switch {
	case in.Tree != nil:
		return in.Tree
	case in.Out != nil:
		return TreeFS(in.Out, in.OutDir)
	}
	return nil
}

// poolKey names a pool of an environment.
type poolKey struct{ env, pool string }

// pendingRolls are the pools that must be rolled: why (reasons), how to
// undo it (rollback) and what each change does to the nodes (effects).
type pendingRolls struct {
	reasons, rollback map[poolKey][]string
	effects           map[poolKey][]Effect
}

// fromSpecChanges records the pools of environment e whose change from the
// old spec (--from) touches their nodes.
func (r pendingRolls) fromSpecChanges(changes []PoolChange, in Input, e check.Env) {
	old := envSpec(in.FromResult, e.Name)
	if old == nil {
		return
	}
	for ni, pool := range e.Spec.Spec.NodePools {
		oi := poolIndex(old, pool.Name)
		if oi < 0 || old.Spec.Provider != e.Spec.Spec.Provider {
			continue
		}
		k := poolKey{e.Name, pool.Name}
		es := PoolEffects(old, oi, e.Spec, ni)
		if strongest(es) == StrategyNone {
			continue
		}
		r.effects[k] = es
		r.reasons[k] = reasons(changes, e.Name, pool.Name)
		if len(r.reasons[k]) == 0 {
			for _, x := range es {
				r.reasons[k] = append(r.reasons[k], x.Change)
			}
		}
		r.rollback[k] = []string{fmt.Sprintf("restore the old values (%s) from %s and apply them", strings.Join(oldValues(changes, e.Name, pool.Name), ", "), filepath.Base(in.From.File))}
	}
}

// readDrift reads the live cluster's drift into p and records the pools
// whose nodes drifted; it returns the live nodes of each pool by zone.
func (p *Plan) readDrift(ctx context.Context, in Input, rolls pendingRolls) (map[string][]ZoneNodes, error) {
	if len(in.Result.Envs) != 1 {
		return nil, fmt.Errorf("plan: drift needs exactly one environment, have %d", len(in.Result.Envs))
	}
	e := in.Result.Envs[0]
	var live map[string][]ZoneNodes
	var err error
	p.Cluster = true
	var nodes map[string][]corev1.Node
	p.Drift, live, nodes, err = driftNodes(ctx, in.Kube, in.Doc, e.Name, e.Spec, p.Environments[0].Pools)
	if err != nil {
		return nil, err
	}
	p.SweepGates = sweepGateChecks(e, in.StepStart, nodes)
	for _, d := range p.Drift {
		rolls.fromDrift(e.Name, d)
	}
	return live, nil
}

// rolledFields are the drifted fields that make a pool roll to the spec.
var rolledFields = map[string]bool{"driver": true, "kubernetesVersion": true, "osImage": true}

// fromDrift records node d's pool (of environment env) where the node runs
// another driver, Kubernetes version or image than the spec says: it must
// be rolled to the spec.
func (r pendingRolls) fromDrift(env string, d NodeDrift) {
	for _, f := range d.Fields {
		if f.State != StateDrift || !rolledFields[f.Field] {
			continue
		}
		k := poolKey{env, d.Pool}
		why := fmt.Sprintf("%s: node %s runs %s, the spec says %s", f.Field, d.Node, f.Observed, f.Expected)
		r.reasons[k] = append(r.reasons[k], why)
		r.effects[k] = append(r.effects[k], Effect{Change: why, Strategy: StrategySurge,
			Why: "the node drifted from the spec, so the Terraform may not change: find what changed it (terraform plan of the pool) before its nodes are replaced"})
		if r.rollback[k] == nil {
			r.rollback[k] = []string{"the drifted nodes ran a configuration the spec does not describe: recreate them from the spec, not from their old state"}
		}
	}
}

// rollout is the rollout of pool of environment e (live: the cluster's
// nodes by pool, nil without a cluster); ok is false when nothing makes
// the pool roll.
func (r pendingRolls) rollout(in Input, e Environment, pool Pool, live map[string][]ZoneNodes) (Rollout, bool) {
	k := poolKey{e.Name, pool.Name}
	rs := r.reasons[k]
	if len(rs) == 0 {
		return Rollout{}, false
	}
	sp := poolSpec(in.Result, e.Name, pool.Name)
	cs := envSpec(in.Result, e.Name)
	ri := RolloutInput{Environment: e.Name, SpecFile: in.Doc.File, Provider: e.Provider, Pool: pool,
		ClusterName: cs.Spec.ClusterName, Location: cs.Spec.Region, KubernetesVersion: cs.Spec.KubernetesVersion,
		MaxUnavailable: maxUnavailable(sp), Upgrade: matrix.PoolUpgrade(e.Provider, sp), Reasons: rs, Effects: r.effects[k], Rollback: r.rollback[k]}
	if in.From != nil {
		ri.FromFile = in.From.File
	}
	if ri.Gate = sp.RolloutGate(); ri.Gate == GateSweep {
		ri.Sweep = cs.Spec.Acceptance
		ri.SweepSelector, _ = helmgen.SweepSelector(&cs.Spec) // a pool is there: no error
	}
	if live != nil && in.Result.Envs[0].Name == e.Name && len(live[pool.Name]) > 0 {
		ri.Live = live[pool.Name]
	}
	return PlanRollout(ri), true
}

// envSpec is environment env's resolved spec in res; nil when res has none.
func envSpec(res *check.Result, env string) *spec.ClusterSpec {
	for _, e := range res.Envs {
		if e.Name == env {
			return e.Spec
		}
	}
	return nil
}

// poolIndex is the index of pool name in cs; -1 when it has none.
func poolIndex(cs *spec.ClusterSpec, name string) int {
	for i := range cs.Spec.NodePools {
		if cs.Spec.NodePools[i].Name == name {
			return i
		}
	}
	return -1
}

func poolSpec(res *check.Result, env, pool string) *spec.NodePool {
	for _, e := range res.Envs {
		if e.Name != env {
			continue
		}
		for i := range e.Spec.Spec.NodePools {
			if e.Spec.Spec.NodePools[i].Name == pool {
				return &e.Spec.Spec.NodePools[i]
			}
		}
	}
	return &spec.NodePool{}
}

func oldValues(cs []PoolChange, env, pool string) []string {
	var out []string
	for _, c := range cs {
		if c.Environment != env || (c.Pool != pool && c.Pool != "") {
			continue
		}
		for _, f := range c.Fields {
			if replacing(f.Field) && f.Field != "driver (resolved)" {
				out = append(out, f.Field+"="+orNone(f.Old))
			}
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		out = []string{"the old spec's driver"}
	}
	return out
}

// sweepGateChecks are the live nodes (by pool) of environment e's pools
// with rollout.gate sweep against their gate (step: the step's start).
func sweepGateChecks(e check.Env, step time.Time, nodes map[string][]corev1.Node) []SweepGateCheck {
	out := []SweepGateCheck{}
	for i := range e.Spec.Spec.NodePools {
		p := &e.Spec.Spec.NodePools[i]
		if p.RolloutGate() != GateSweep {
			continue
		}
		sel, _ := helmgen.SweepSelector(&e.Spec.Spec)
		out = append(out, CheckSweepGate(e.Name, p.Name, sel, step, nodes[p.Name]))
	}
	return out
}
