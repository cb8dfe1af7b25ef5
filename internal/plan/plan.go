// Package plan is `gpuctl plan`: what a spec resolves to, what `generate`
// would change under an output folder, what changes between two specs and
// how to roll node-replacing changes through a pool, and what a live
// cluster's GPU nodes say against the spec (read-only).
//
// Every value comes from the one pipeline or fact that owns it: the
// document check (check.Document) resolves the environments and builds the
// generated files (check.Files), the matrix resolves GPUs, drivers and NCCL
// transports, helmgen what the device plugin advertises and the Kueue
// quota, accept the stages and NCCL baseline of the acceptance gate. The
// package returns a Plan; it never prints and never writes to the cluster.
package plan

import (
	"fmt"
	"slices"
	"sort"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Kind and FormatVersion identify a plan document (-o json|yaml).
const (
	Kind          = "Plan"
	FormatVersion = "1"
)

// Plan is the result of `gpuctl plan`; its JSON keys are a contract
// (the hand-written schema, data/plan.schema.json and its copy
// testdata/plan.schema.json, holds them).
type Plan struct {
	APIVersion    string `json:"apiVersion"`
	Kind          string `json:"kind"`
	FormatVersion string `json:"formatVersion"`
	// Spec is the spec file; From the old spec (--from), Out the folder
	// compared (--out), Cluster whether drift was read from a cluster.
	Spec    string `json:"spec"`
	From    string `json:"from,omitempty"`
	OutDir  string `json:"out,omitempty"`
	Cluster bool   `json:"cluster"`
	AsOf    string `json:"asOf"`
	// Environments are the resolved pools, the base spec ("") first.
	Environments []Environment `json:"environments"`
	// Files are the generated-file changes against Out (nil without --out).
	Files []FileChange `json:"files"`
	// SpecChanges are the pool changes from From to Spec.
	SpecChanges []PoolChange `json:"specChanges"`
	// Rollouts are the rollout plans of pools whose nodes must be replaced.
	Rollouts []Rollout `json:"rollouts"`
	// Drift is what each live node of a spec pool says against the spec.
	Drift []NodeDrift `json:"drift"`
	// SweepGates are the live nodes of each pool with rollout.gate sweep
	// against that gate (empty without a cluster).
	SweepGates []SweepGateCheck `json:"sweepGates"`
	// Warnings are what the spec changes mean beyond any rollout (a
	// provider switch, a Kubernetes downgrade).
	Warnings []string `json:"warnings"`
	// Findings are the check's error findings (warnings and info are
	// validate's business); with one, no files are compared.
	Findings []diag.Finding `json:"findings"`
	Summary  Summary        `json:"summary"`
}

// Summary counts what the plan found. Changes is true when anything would
// change or has drifted: the exit code 3.
type Summary struct {
	Pools        int `json:"pools"`
	FilesAdded   int `json:"filesAdded"`
	FilesChanged int `json:"filesChanged"`
	FilesRemoved int `json:"filesRemoved"`
	// SpecChanges counts the spec changes as the table shows them: each
	// changed field, and each pool added or removed.
	SpecChanges  int  `json:"specChanges"`
	Rollouts     int  `json:"rollouts"`
	NodesChecked int  `json:"nodesChecked"`
	NodesDrifted int  `json:"nodesDrifted"`
	Errors       int  `json:"errors"`
	Changes      bool `json:"changes"`
}

// Environment is one resolved environment.
type Environment struct {
	// Name is the environment; "" the base spec.
	Name     string `json:"name"`
	Provider string `json:"provider"`
	// KubernetesVersion is spec.kubernetesVersion as resolved.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	Pools             []Pool `json:"pools"`
}

// Pool is one resolved node pool with every derived value a reviewer needs.
type Pool struct {
	Name         string   `json:"name"`
	Role         string   `json:"role,omitempty"`
	MachineTypes []string `json:"machineTypes"`
	// GPU is the matrix product ID ("H100-SXM"), GPUName NVIDIA's name.
	GPU             string   `json:"gpu,omitempty"`
	GPUName         string   `json:"gpuName,omitempty"`
	AcceleratorType string   `json:"acceleratorType,omitempty"`
	GPUsPerNode     int      `json:"gpusPerNode"`
	Zones           []string `json:"zones"`
	MinNodes        int      `json:"minNodes"`
	MaxNodes        int      `json:"maxNodes"`
	OSImage         string   `json:"osImage,omitempty"`
	CUDA            string   `json:"cuda,omitempty"`
	Capacity        string   `json:"capacity,omitempty"`
	// DevicePlugin is who advertises the GPUs, Resource what and PerNode
	// how many per node.
	DevicePlugin string `json:"devicePlugin"`
	Resource     string `json:"resource"`
	PerNode      int    `json:"perNode"`
	// Sharing is how a GPU is shared between containers ("time-slicing",
	// "mps", "mig"), SharedBy how many containers share one (time-slicing
	// and MPS replicas); "" and 0 for whole GPUs.
	Sharing  string `json:"sharing,omitempty"`
	SharedBy int    `json:"sharedBy,omitempty"`
	Driver   Driver `json:"driver"`
	NCCL     NCCL   `json:"nccl"`
	// KueueQuota is the pool's nominal quota of Resource in the generated
	// ClusterQueue (PerNode x maxNodes).
	KueueQuota int `json:"kueueQuota"`
	// Taints are key[=value]:effect; Labels every label the spec knows
	// the pool's nodes carry (the pool's, gpuctl's and the platform's).
	Taints         []string          `json:"taints"`
	Labels         map[string]string `json:"labels"`
	MaxUnavailable string            `json:"maxUnavailable"`
	// RolloutGate is rollout.gate: accept (the default) or sweep.
	RolloutGate string     `json:"rolloutGate"`
	Acceptance  Acceptance `json:"acceptance"`
	// At is the pool's file:line.
	At string `json:"at"`
}

// Driver is who installs the driver and which one.
type Driver struct {
	// Owner is gke, gpu-operator, ami, none or unknown.
	Owner   string `json:"owner"`
	Version string `json:"version,omitempty"`
	Branch  int    `json:"branch,omitempty"`
	Origin  string `json:"origin,omitempty"`
	Note    string `json:"note,omitempty"`
	At      string `json:"at"`
}

// NCCL is the network NCCL uses between the pool's nodes.
type NCCL struct {
	Fabric  string `json:"fabric,omitempty"`
	Network string `json:"network,omitempty"`
	Plugin  string `json:"plugin,omitempty"`
	// Needs is the plugin the fabric needs; "" when none.
	Needs string `json:"needs,omitempty"`
	// EnvConfigures is the plugin the pool's NCCL variables configure when
	// plugin is empty (they do not install it).
	EnvConfigures string `json:"envConfigures,omitempty"`
}

// Acceptance is what `gpuctl accept` runs on the pool's nodes by default
// and the NCCL baseline that applies.
type Acceptance struct {
	Stages []string `json:"stages"`
	// Baseline is the NCCL baseline SKU for the pool's GPU and count;
	// empty when gpuctl has none (the nccl stage then records, not judges).
	Baseline            string  `json:"baseline,omitempty"`
	MinBusBandwidthGBps float64 `json:"minBusBandwidthGBps,omitempty"`
	MinBytes            int64   `json:"minBytes,omitempty"`
	BaselinesAsOf       string  `json:"baselinesAsOf,omitempty"`
	// NoBaseline says why the GPU has no baseline although gpuctl knows it:
	// no published figure (the nccl stage is then INCONCLUSIVE).
	NoBaseline string   `json:"noBaseline,omitempty"`
	Sources    []string `json:"sources"`
	// Images are the default image of each Job stage.
	Images map[string]string `json:"images"`
}

// poolAt is the file:line:column of a path of env's resolved spec, the
// file named as findings name it (as given).
func poolAt(doc *spec.Document, env, path string) string {
	_, line, col := doc.Locate(env, path)
	return fmt.Sprintf("%s:%d:%d", doc.File, line, col)
}

// ResolvePools returns the resolved pools of every checked environment.
func ResolvePools(doc *spec.Document, res *check.Result) []Environment {
	out := []Environment{}
	for _, e := range res.Envs {
		env := Environment{Name: e.Name, Provider: e.Spec.Spec.Provider, KubernetesVersion: e.Spec.Spec.KubernetesVersion, Pools: []Pool{}}
		quota := map[string]int{}
		if qs, err := helmgen.PoolQuotas(&e.Spec.Spec); err == nil {
			for _, q := range qs {
				quota[q.Pool] = q.Total()
			}
		}
		for i := range e.Spec.Spec.NodePools {
			env.Pools = append(env.Pools, resolvePool(doc, e.Name, e.Spec, i, quota))
		}
		out = append(out, env)
	}
	return out
}

func resolvePool(doc *spec.Document, env string, cs *spec.ClusterSpec, i int, quota map[string]int) Pool {
	s := &cs.Spec
	p := &s.NodePools[i]
	out := Pool{Name: p.Name, Role: p.Role, MachineTypes: nonNil(p.MachineTypes()), Zones: nonNil(p.Zones),
		MinNodes: p.Autoscaling.Min, MaxNodes: p.Autoscaling.Max, OSImage: p.OSImage, CUDA: s.CUDAVersion(p),
		Capacity: p.Capacity, DevicePlugin: s.DevicePluginFor(p), KueueQuota: quota[p.Name],
		Taints: []string{}, Labels: matrix.PoolLabels(s, p), At: poolAt(doc, env, spec.PoolPath(i))}
	if g, ok := matrix.PoolGPU(s.Provider, p); ok {
		out.GPU, out.GPUName = g.ID, g.Name
	}
	if s.Provider == spec.ProviderGKE {
		out.AcceleratorType = matrix.PoolAcceleratorType(s.Provider, p)
	}
	out.GPUsPerNode, _ = matrix.PoolGPUsPerNode(s.Provider, p)
	if a, err := helmgen.AdvertisedBy(s, p); err == nil {
		out.Resource, out.PerNode = a.Resource, a.PerNode
	}
	if st := p.SharingStrategy(); st != spec.SharingNone {
		out.Sharing = st
		if st == spec.SharingTimeSlicing || st == spec.SharingMPS {
			out.SharedBy = p.GPU.Sharing.Replicas
		}
	}
	d := matrix.PoolDriver(cs, i)
	out.Driver = Driver{Owner: d.Owner, Version: d.Version, Branch: d.Branch, Origin: d.Origin, Note: d.Note, At: poolAt(doc, env, d.Path)}
	t := matrix.PoolNCCLTransport(s, p)
	out.NCCL = NCCL{Fabric: t.Fabric, Network: t.Network, Plugin: t.Plugin, Needs: t.Want, EnvConfigures: t.EnvPlugin}
	for _, tn := range p.NodeTaints() { // with the one GKE adds to queued nodes
		out.Taints = append(out.Taints, taintString(tn))
	}
	out.MaxUnavailable = maxUnavailable(p).String()
	out.RolloutGate = p.RolloutGate()
	out.Acceptance = acceptancePlan(out.GPU, out.GPUName, out.GPUsPerNode, poolStages(s, p))
	if p.RolloutGate() == spec.GateSweep && s.Acceptance != nil {
		for st, ref := range s.Acceptance.Images { // the sweep's --image overrides
			out.Acceptance.Images[st] = ref
		}
	}
	return out
}

func taintString(t spec.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

// maxUnavailable is the pool's rollout.maxUnavailable, one node when unset.
func maxUnavailable(p *spec.NodePool) spec.IntOrPercent {
	if p.Rollout != nil && p.Rollout.MaxUnavailable != nil {
		return *p.Rollout.MaxUnavailable
	}
	return spec.IntOrPercent{Value: 1}
}

// poolStages are the stages that accept pool p's nodes in a rollout: the
// sweep's (spec.acceptance.stages) for a pool whose rollout.gate is sweep,
// accept's default stages otherwise.
func poolStages(s *spec.Spec, p *spec.NodePool) []string {
	if p.RolloutGate() == spec.GateSweep && s.Acceptance != nil {
		return s.Acceptance.StagesOr()
	}
	var out []string
	for _, st := range accept.DefaultStages {
		out = append(out, string(st))
	}
	return out
}

// acceptancePlan is the stages, their default images and, when the nccl
// stage is one of them, the embedded NCCL baseline for the GPU (product ID
// or name) and count.
func acceptancePlan(id, name string, gpus int, stages []string) Acceptance {
	a := Acceptance{Stages: []string{}, Sources: []string{}, Images: map[string]string{}}
	for _, st := range stages {
		a.Stages = append(a.Stages, st)
		if imgs := accept.DefaultImages(accept.Stage(st)); len(imgs) > 0 {
			a.Images[st] = imgs[0].Ref
		}
	}
	if !slices.Contains(stages, string(accept.StageNCCL)) {
		return a
	}
	bl := accept.DefaultBaselines()
	var b *accept.Baseline
	for _, n := range []string{name, id} {
		if n != "" && b == nil {
			b = bl.Lookup(n, gpus)
		}
	}
	switch {
	case b != nil && b.NoFigure != "":
		a.NoBaseline, a.BaselinesAsOf = b.SKU+": "+b.NoFigure, bl.AsOf
		a.Sources = append(a.Sources, b.Sources...)
	case b != nil:
		a.Baseline, a.MinBusBandwidthGBps, a.MinBytes, a.BaselinesAsOf = b.SKU, b.MinBusBandwidthGBps, b.MinBytes, bl.AsOf
		a.Sources = append(a.Sources, b.Sources...)
	}
	return a
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// errorFindings are the findings of severity error.
func errorFindings(fs []diag.Finding) []diag.Finding {
	out := []diag.Finding{}
	for _, f := range fs {
		if f.Severity == diag.SeverityError {
			out = append(out, f)
		}
	}
	return out
}

// Finish fills in the summary of p.
func (p *Plan) Finish() {
	s := Summary{Rollouts: len(p.Rollouts), Errors: len(p.Findings)}
	for _, c := range p.SpecChanges {
		s.SpecChanges += max(len(c.Fields), 1) // a pool added or removed is one
	}
	for _, e := range p.Environments {
		s.Pools += len(e.Pools)
	}
	for _, f := range p.Files {
		switch f.Action {
		case ActionAdd:
			s.FilesAdded++
		case ActionChange:
			s.FilesChanged++
		case ActionRemove:
			s.FilesRemoved++
		}
	}
	for _, d := range p.Drift {
		if d.Node != "" {
			s.NodesChecked++
		}
		if d.Drifted {
			s.NodesDrifted++
		}
	}
	s.Changes = s.FilesAdded+s.FilesChanged+s.FilesRemoved+s.SpecChanges+s.NodesDrifted+s.Errors > 0
	p.Summary = s
	sort.SliceStable(p.Rollouts, func(i, j int) bool {
		a, b := p.Rollouts[i], p.Rollouts[j]
		if a.Environment != b.Environment {
			return a.Environment < b.Environment
		}
		return a.Pool < b.Pool
	})
}
