package helmgen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// RuleAcceptStageNeeds is the finding of a sweep stage the CronJob cannot
// run as spec.acceptance stands (catalogued in package rules as
// rules.RuleAcceptStageNeeds).
const RuleAcceptStageNeeds = "ACCEPT-STAGE-NEEDS"

// sweepStageFindings holds each stage of spec.acceptance.stages to what
// accept's stage table says it needs. The node stages need nothing the
// spec can lack: their Pod Security level (baseline for dcgm and
// diagnostics, privileged with allowPrivileged) is the sweep namespace's
// label, and without privilege inventory and diagnostics only leave out
// the kernel log. A fleet stage (nccl-multi, framework-multi) needs two
// alike nodes in the sweep's selection, and where the pools' GPU fabric
// makes its rank pods privileged (GPUDirect-TCPX, -TCPXO, RDMA: fabric's
// Pod.Privileged) acceptance.allowPrivileged; without them accept creates
// nothing for it and the stage is INCONCLUSIVE on every node.
func sweepStageFindings(s *spec.Spec) []diag.Finding {
	a := s.Acceptance
	if a == nil {
		return nil
	}
	var out []diag.Finding
	for i, name := range a.Stages {
		st, err := accept.ParseStage(name)
		if err != nil || !accept.IsFleetStage(st) {
			continue
		}
		path := fmt.Sprintf("spec.acceptance.stages[%d]", i)
		if msg, fix := fleetNodes(s, name); msg != "" {
			out = append(out, stageFinding(path, msg, fix))
		}
		if !a.AllowPrivileged {
			if pool, why := privilegedFabric(s); pool != "" {
				out = append(out, stageFinding(path,
					fmt.Sprintf("stage %s: %s on pool %s; the sweep passes --allow-privileged only with acceptance.allowPrivileged: true, so the stage would create nothing and be INCONCLUSIVE", name, why, pool),
					fmt.Sprintf("Set acceptance.allowPrivileged: true (the sweep's namespace then enforces the privileged Pod Security level), or remove %s from acceptance.stages.", name)))
			}
		}
	}
	return out
}

func stageFinding(path, msg, fix string) diag.Finding {
	return diag.Finding{Rule: RuleAcceptStageNeeds, Severity: diag.SeverityError, Path: path, Message: msg, Fix: fix}
}

// sweptGPUPools are the GPU pools the sweep selects: every pool of the
// spec with GPUs when acceptance.selector is unset (SweepSelector), and,
// with a selector of the spec's own, every GPU pool it may select; known
// says which.
func sweptGPUPools(s *spec.Spec) (pools []*spec.NodePool, known bool) {
	for i := range s.NodePools {
		p := &s.NodePools[i]
		if g, _ := matrix.PoolGPUsPerNode(s.Provider, p); g > 0 {
			pools = append(pools, p)
		}
	}
	return pools, s.Acceptance.Selector == ""
}

// fleetNodes says why the sweep's selection cannot give a fleet stage two
// alike nodes ("" when it can, or when a selector of the spec's own makes
// the selection unknown): pools of different machine types or GPU
// counts, or at most one node.
func fleetNodes(s *spec.Spec, stage string) (msg, fix string) {
	pools, known := sweptGPUPools(s)
	if !known {
		return "", ""
	}
	kinds, nodes := map[string]bool{}, 0
	var names []string
	for _, p := range pools {
		g, _ := matrix.PoolGPUsPerNode(s.Provider, p)
		for _, m := range p.MachineTypes() {
			kinds[fmt.Sprintf("%d x %s", g, m)] = true
		}
		nodes += p.Autoscaling.Max
		names = append(names, p.Name)
	}
	switch {
	case len(kinds) > 1:
		k := slices.Sorted(maps.Keys(kinds))
		return fmt.Sprintf("stage %s: the sweep selects the nodes of pools %s, which differ (%s); one all_reduce needs alike nodes, so the stage would be INCONCLUSIVE", stage, strings.Join(names, ", "), strings.Join(k, ", ")),
			"Set acceptance.selector to one pool's nodes (e.g. cloud.google.com/gke-nodepool=POOL), or remove the stage from acceptance.stages."
	case len(pools) > 0 && nodes < 2:
		return fmt.Sprintf("stage %s: the sweep's pools (%s) have at most %d node(s) (autoscaling.max), and the stage needs two", stage, strings.Join(names, ", "), nodes),
			"Remove the stage from acceptance.stages, or let the pool grow to two nodes (autoscaling.max)."
	}
	return "", ""
}

// privilegedFabric is the first swept pool whose GPU fabric's rank pods
// need the privileged Pod Security level, and why (fabric.Build's
// Pod.Privileged); "" for none.
func privilegedFabric(s *spec.Spec) (pool, why string) {
	pools, _ := sweptGPUPools(s)
	for _, p := range pools {
		gpus, _ := matrix.PoolGPUsPerNode(s.Provider, p)
		for _, m := range p.MachineTypes() {
			if pod, ok := fabricPod(s.Provider, m, gpus); ok && len(pod.Privileged) > 0 {
				return p.Name, fmt.Sprintf("the %s rank pods need the privileged Pod Security level (%s)", pod.Name, strings.Join(pod.Privileged, "; "))
			}
		}
	}
	return "", ""
}

// fabricPod is the rank pod fabric.Build makes for machine with gpus GPUs,
// its NICs as many as the machine's fabric needs (fabric.NeedsOf; their
// names do not change what the pod needs); false for a machine without a
// fabric or one fabric cannot build.
func fabricPod(provider, machine string, gpus int) (fabric.Pod, bool) {
	need := fabric.NeedsOf(provider, machine)
	if need.Fabric == "" {
		return fabric.Pod{}, false
	}
	p := fabric.Params{Provider: provider, Machine: machine, GPUs: gpus, EFA: need.EFA}
	for i := range need.Networks {
		p.Networks = append(p.Networks, fabric.Network{Interface: fmt.Sprintf("eth%d", i+1), Object: fmt.Sprintf("gpu-nic-%d", i)})
	}
	pod, err := fabric.Build(p)
	return pod, err == nil
}
