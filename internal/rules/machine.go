package rules

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// checkMachine: machine types exist, carry the pool's GPU in that count, and
// (EKS) the pool's instance types share one shape.
func (v *validator) checkMachine(pc *matrix.PoolFacts) {
	p := pc.Pool
	if !v.gke() && !v.eks() {
		return
	}
	for _, rm := range pc.Machines {
		if !rm.Known {
			v.checkUnknownMachine(p, rm)
		}
	}

	// gpu.type names something?
	if p.GPU.Type != "" && !v.gpuTypeKnown(p.GPU.Type) {
		sev, msg := diag.SeverityError, fmt.Sprintf("pool %s: gpu.type %q is not a known GPU or GKE accelerator type; nearest: %s", p.Name, p.GPU.Type, strings.Join(matrix.NearestGPUs(p.GPU.Type, 3), ", "))
		if v.eks() && pc.Machine != nil && pc.Machine.GPU != "" {
			// The instance type fixes the GPU; the rules judge its GPU.
			sev = diag.SeverityInfo
			msg += fmt.Sprintf("; %s carries %s, which the checks judge", pc.Machine.Name, pc.Machine.GPU)
		}
		v.add(RuleGPUUnknown, sev, pc.Field(".gpu.type"), msg, "", srcGCEGPUs)
	}

	m := pc.Machine
	if m == nil {
		return
	}
	if v.gke() {
		v.checkGKEAccelerator(pc, m)
	} else {
		v.checkEKSGPU(pc)
	}
	if p.Capacity == "spot" && !m.Spot {
		v.add(RuleMachineCapacity, "", pc.Field(".capacity"), fmt.Sprintf("pool %s: %s is not offered as Spot (%s)", p.Name, m.Name, m.Note), "", m.Source)
	}
}

// checkUnknownMachine: a machine type the matrix does not know, or one of
// the other provider (MACHINE-UNKNOWN).
func (v *validator) checkUnknownMachine(p *spec.NodePool, rm matrix.ResolvedMachine) {
	other := spec.ProviderEKS
	if v.eks() {
		other = spec.ProviderGKE
	}
	if _, ok := matrix.LookupMachine(other, rm.Name); ok {
		v.add(RuleMachineUnknown, diag.SeverityError, rm.Path, fmt.Sprintf("pool %s: %s is a %s machine type, but spec.provider is %s", p.Name, rm.Name, strings.ToUpper(other), v.s.Provider),
			"Use a machine type of the spec's provider.", srcGCEGPUs, srcEC2Accel)
		return
	}
	near := matrix.NearestMachines(v.s.Provider, rm.Name, 3)
	kind := "GKE GPU machine type"
	why := "GPUs attach only to N1 and come with the accelerator-optimized series (A2, A3, A4, A4X, G2, G4)"
	if v.eks() {
		kind = "EKS GPU instance type"
		why = "the catalogue lists the g4dn ... p6 GPU instance types"
	}
	var described []string
	for _, n := range near {
		described = append(described, describeMachine(v.s.Provider, n))
	}
	v.add(RuleMachineUnknown, diag.SeverityError, rm.Path,
		fmt.Sprintf("pool %s: %q is not a known %s (%s); nearest known: %s", p.Name, rm.Name, kind, why, strings.Join(near, ", ")),
		fmt.Sprintf("Use a real machine type: %s.", strings.Join(described, "; ")), srcGCEGPUs, srcEC2Accel)
}

func (v *validator) gpuTypeKnown(t string) bool {
	_, ok := matrix.LookupGPU(t)
	return ok
}

// checkGKEAccelerator: gpu.type and gpu.count fit the GKE machine type
// (MACHINE-ACCELERATOR): attached to N1, fixed on the accelerator-optimized
// series.
func (v *validator) checkGKEAccelerator(pc *matrix.PoolFacts, m *matrix.Machine) {
	if m.Attachable != nil {
		v.checkN1Accelerator(pc, m)
		return
	}
	v.checkFixedAccelerator(pc, m)
}

// checkN1Accelerator: N1's GPUs are attached; the type must be one N1
// takes, in a count it takes.
func (v *validator) checkN1Accelerator(pc *matrix.PoolFacts, m *matrix.Machine) {
	p := pc.Pool
	t := p.GPU.Type
	if t == "" && v.notJudged(RuleMachineAccel+" (the accelerator N1 needs attached)", p.Name, pc.Field(".gpu.type")) {
		return
	}
	if t == "" {
		v.add(RuleMachineAccel, "", pc.Field(".gpu.type"), fmt.Sprintf("pool %s: %s has no GPU of its own; N1 needs an attached accelerator (nvidia-tesla-t4, -p4, -v100 or -p100)", p.Name, m.Name), "Set gpu.type and gpu.count, or use an accelerator-optimized machine type.", srcGCEGPUs)
		return
	}
	acc, isAcc := v.c.Accelerators()[t]
	if !isAcc && pc.GPU != nil {
		for name, a := range v.c.Accelerators() {
			if _, ok := m.Attachable[name]; ok && a.GPU == pc.GPU.ID {
				acc, isAcc = a, true
			}
		}
	}
	counts, ok := m.Attachable[t]
	if isAcc {
		counts, ok = m.Attachable[acc.Name]
	}
	if !ok {
		v.add(RuleMachineAccel, "", pc.Field(".gpu.type"),
			fmt.Sprintf("pool %s: %s cannot be attached to N1 machine %s: N1 takes only nvidia-tesla-t4, -p4, -v100 and -p100%s", p.Name, t, m.Name, v.whereGPULives(pc.GPU)),
			v.machineAdvice(pc.GPU, p.GPU.Count), srcGCEGPUs)
		return
	}
	if isAcc && acc.EOL {
		v.add(RuleMachineAccel, "", pc.Field(".gpu.type"), fmt.Sprintf("pool %s: %s reached end of support on Compute Engine", p.Name, acc.Name), "Move to a supported GPU (nvidia-tesla-t4 on N1, or nvidia-l4 on G2).", acc.Source)
	}
	n := p.GPU.Count
	if n == 0 {
		n = 1
	}
	if !slices.Contains(counts, n) {
		v.add(RuleMachineAccel, "", pc.Field(".gpu.count"), fmt.Sprintf("pool %s: N1 attaches %s in counts of %s, not %d", p.Name, acc.Name, strings.Join(intsToStrings(counts), ", "), n), "", srcGCEGPUs)
	}
}

// checkFixedAccelerator: an accelerator-optimized machine type fixes the
// GPU's type and count.
func (v *validator) checkFixedAccelerator(pc *matrix.PoolFacts, m *matrix.Machine) {
	p := pc.Pool
	t := p.GPU.Type
	acc, isAcc := v.c.Accelerators()[t]
	switch {
	case t == "":
	case isAcc && acc.Name != m.AcceleratorType:
		v.add(RuleMachineAccel, "", pc.Field(".gpu.type"),
			fmt.Sprintf("pool %s: %s comes with %s, not %s", p.Name, m.Name, m.AcceleratorType, acc.Name),
			fmt.Sprintf("Set gpu.type: %s (or leave it empty), or use a machine type with %s: %s.", m.AcceleratorType, acc.Name, strings.Join(v.machinesWith(acc.Name, "gke"), ", ")), m.Source)
	case !isAcc && pc.GPU != nil && pc.GPU.ID != m.GPU && !(matrix.NormalizeGPU(t) == matrix.NormalizeGPU(pc.GPU.Family) && v.c.Product(m.GPU).Family == pc.GPU.Family):
		v.add(RuleMachineAccel, "", pc.Field(".gpu.type"),
			fmt.Sprintf("pool %s: %s comes with %s (%s), not %s", p.Name, m.Name, m.AcceleratorType, m.GPU, t),
			fmt.Sprintf("Set gpu.type: %s, or use a machine type with %s.", m.AcceleratorType, t), m.Source)
	}
	switch {
	case p.GPU.Count == 0:
	case m.GPUFraction > 0:
		v.add(RuleMachineAccel, "", pc.Field(".gpu.count"), fmt.Sprintf("pool %s: %s has a fraction (%g) of one %s, not %d GPUs", p.Name, m.Name, m.GPUFraction, m.AcceleratorType, p.GPU.Count), "Remove gpu.count.", m.Source)
	case p.GPU.Count != m.GPUCount:
		v.add(RuleMachineAccel, "", pc.Field(".gpu.count"), fmt.Sprintf("pool %s: %s has %d x %s, not %d", p.Name, m.Name, m.GPUCount, m.AcceleratorType, p.GPU.Count), fmt.Sprintf("Set gpu.count: %d (or leave it empty).", m.GPUCount), m.Source)
	}
}

// whereGPULives says which machine types carry a GPU, for messages.
func (v *validator) whereGPULives(g *matrix.GPUProduct) string {
	if g == nil {
		return ""
	}
	ms := v.machinesWith("", "gke", g.ID)
	if len(ms) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s comes only with %s", g.ID, strings.Join(ms, ", "))
}

// machinesWith lists machine types of provider with an accelerator (GKE
// name) or product IDs, fewest GPUs first.
func (v *validator) machinesWith(accel, provider string, products ...string) []string {
	var ms []matrix.Machine
	for _, m := range matrix.Machines(provider) {
		if (accel != "" && m.AcceleratorType == accel) || (m.GPU != "" && slices.Contains(products, m.GPU)) {
			ms = append(ms, m)
		}
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].GPUCount != ms[j].GPUCount {
			return ms[i].GPUCount < ms[j].GPUCount
		}
		return ms[i].Name < ms[j].Name
	})
	out := []string{}
	for _, m := range ms {
		out = append(out, m.Name)
	}
	if len(out) > 6 {
		out = append(out[:6], "...")
	}
	return out
}

func (v *validator) machineAdvice(g *matrix.GPUProduct, count int) string {
	if g == nil {
		return "Use a machine type that carries the GPU."
	}
	var best []string
	for _, m := range matrix.Machines("gke") {
		if m.GPU == g.ID && (count == 0 || m.GPUCount == count) {
			best = append(best, m.Name)
		}
	}
	sort.Strings(best)
	if len(best) == 0 {
		return fmt.Sprintf("Use a machine type that carries %s: %s.", g.ID, strings.Join(v.machinesWith("", "gke", g.ID), ", "))
	}
	return fmt.Sprintf("Use %s (machineType: %s; gpu.type can be left empty).", strings.Join(best, " or "), best[0])
}

// checkEKSGPU: gpu.type and gpu.count fit every known instance type of
// the pool (MACHINE-ACCELERATOR), and several types fit together
// (POOL-MIXED-INSTANCES).
func (v *validator) checkEKSGPU(pc *matrix.PoolFacts) {
	p := pc.Pool
	var known []matrix.ResolvedMachine
	for _, rm := range pc.Machines {
		if rm.Known {
			known = append(known, rm)
		}
	}
	if len(known) == 0 {
		return
	}
	if p.GPU.Type != "" && pc.GPUPath == pc.Field(".gpu.type") {
		for _, rm := range known {
			v.checkEKSGPUType(pc, rm)
		}
	}
	if p.GPU.Count != 0 && !known[0].Machine.Family {
		for _, rm := range known {
			v.checkEKSGPUCount(pc, rm)
		}
	}
	if len(known) >= 2 {
		v.checkMixedArch(pc, known)
		v.checkMixedEFA(pc, known)
		v.checkMixedGPUs(pc, known)
	}
}

// checkEKSGPUType: the instance type carries the GPU gpu.type names, or one
// of the family it names.
func (v *validator) checkEKSGPUType(pc *matrix.PoolFacts, rm matrix.ResolvedMachine) {
	p, g := pc.Pool, pc.GPU
	mg := v.c.Product(rm.Machine.GPU)
	generic := matrix.NormalizeGPU(p.GPU.Type) == matrix.NormalizeGPU(g.Family)
	if g.ID != rm.Machine.GPU && !(generic && mg.Family == g.Family) {
		v.add(RuleMachineAccel, "", pc.Field(".gpu.type"), fmt.Sprintf("pool %s: %s has %s, not %s", p.Name, rm.Name, rm.Machine.GPU, p.GPU.Type),
			fmt.Sprintf("Set gpu.type: %s (or leave it empty).", rm.Machine.GPU), rm.Machine.Source)
	}
}

// checkEKSGPUCount: the instance type has gpu.count GPUs.
func (v *validator) checkEKSGPUCount(pc *matrix.PoolFacts, rm matrix.ResolvedMachine) {
	p, m := pc.Pool, rm.Machine
	switch {
	case m.GPUFraction > 0:
		v.add(RuleMachineAccel, "", pc.Field(".gpu.count"), fmt.Sprintf("pool %s: %s has a fraction (%g) of one %s, not %d GPUs", p.Name, rm.Name, m.GPUFraction, m.GPU, p.GPU.Count), "Remove gpu.count.", m.Source)
	case m.GPUCount != p.GPU.Count:
		v.add(RuleMachineAccel, "", pc.Field(".gpu.count"), fmt.Sprintf("pool %s: %s has %d x %s, not %d", p.Name, rm.Name, m.GPUCount, m.GPU, p.GPU.Count), fmt.Sprintf("Set gpu.count: %d (or leave it empty).", m.GPUCount), m.Source)
	}
}

// A pool of several instance types (an EKS managed node group's
// instanceTypes, or Karpenter-style lists) is judged by their GPUs: one GPU
// model across the list is fine, whatever the GPUs per node (each type is
// judged on its own); different GPU models are risky, because workloads
// land on either, unless gpu.type names the family they share; types of
// different CPU architectures, or with EFA enabled different EFA cards,
// cannot share one launch template (POOL-MIXED-INSTANCES).

// groupNames writes "key on a, b; key2 on c" for messages.
func groupNames(keys []string, by map[string][]string) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s on %s", cmp.Or(k, "unknown"), strings.Join(by[k], ", ")))
	}
	return strings.Join(parts, "; ")
}

// checkMixedArch: the instance types share one CPU architecture.
func (v *validator) checkMixedArch(pc *matrix.PoolFacts, known []matrix.ResolvedMachine) {
	archs := map[string][]string{}
	for _, rm := range known {
		archs[rm.Machine.Arch] = append(archs[rm.Machine.Arch], rm.Name)
	}
	if len(archs) > 1 {
		v.add(RulePoolMixed, diag.SeverityError, pc.Field(".instanceTypes"),
			fmt.Sprintf("pool %s mixes CPU architectures (%s): one node group has one AMI type, which is built for one architecture", pc.Pool.Name, groupNames(slices.Sorted(maps.Keys(archs)), archs)),
			"Split the pool: one pool per architecture.", srcEKSAMIs, srcEC2Accel)
	}
}

// checkMixedEFA: with EFA on, the instance types have one EFA card count.
func (v *validator) checkMixedEFA(pc *matrix.PoolFacts, known []matrix.ResolvedMachine) {
	if !pc.Pool.EFA.Enabled {
		return
	}
	cards := map[int][]string{}
	for _, rm := range known {
		n := rm.Machine.NetworkCards
		if !rm.Machine.EFA {
			n = 0
		}
		cards[n] = append(cards[n], rm.Name)
	}
	if len(cards) < 2 {
		return
	}
	var counts []int
	for n := range cards {
		counts = append(counts, n)
	}
	sort.Ints(counts)
	var parts []string
	for _, n := range counts {
		parts = append(parts, fmt.Sprintf("%d EFA card(s) on %s", n, strings.Join(cards[n], ", ")))
	}
	v.add(RulePoolMixed, diag.SeverityError, pc.Field(".instanceTypes"),
		fmt.Sprintf("pool %s enables EFA on instance types with different EFA cards (%s): the launch template's EFA interface list fits one card count, so the other types fail to launch or leave cards unused", pc.Pool.Name, strings.Join(parts, "; ")),
		"Split the pool by EFA card count, or disable EFA on the smaller types' pool.", srcEFANCCL, srcEC2Accel)
}

// checkMixedGPUs: the instance types carry one GPU model, or gpu.type
// names the family they share.
func (v *validator) checkMixedGPUs(pc *matrix.PoolFacts, known []matrix.ResolvedMachine) {
	p := pc.Pool
	path := pc.Field(".instanceTypes")
	byGPU := map[string][]string{}
	var gpus []string
	for _, rm := range known {
		if _, seen := byGPU[rm.Machine.GPU]; !seen {
			gpus = append(gpus, rm.Machine.GPU)
		}
		byGPU[rm.Machine.GPU] = append(byGPU[rm.Machine.GPU], rm.Name)
	}
	if len(gpus) < 2 {
		return // one GPU model: the types differ in GPUs per node only, each judged on its own
	}
	var fams []string
	for _, g := range gpus {
		if f := v.c.Product(g).Family; !slices.Contains(fams, f) {
			fams = append(fams, f)
		}
	}
	if f, ok := v.c.GPUFamilyName(p.GPU.Type); p.GPU.Type != "" && len(fams) == 1 && ok && f == fams[0] {
		v.add(RulePoolMixed, diag.SeverityInfo, path,
			fmt.Sprintf("pool %s takes any %s (gpu.type %s): its instance types carry different %s products (%s), so workloads land on either", p.Name, fams[0], p.GPU.Type, fams[0], groupNames(gpus, byGPU)),
			"Size jobs for the smallest of them, or split the pool.", srcEC2Accel)
		return
	}
	fix := "Split the pool into one pool per GPU model (spread Spot risk across those pools)."
	if len(fams) == 1 {
		fix = fmt.Sprintf("Split the pool into one pool per GPU model, or set gpu.type: %s if any %s will do.", fams[0], fams[0])
	}
	v.add(RulePoolMixed, diag.SeverityWarning, path,
		fmt.Sprintf("pool %s mixes GPU models (%s): workloads land on either, so jobs sized or tuned for one (memory, NCCL topology, CUDA targets) may fail or slow down on the other", p.Name, groupNames(gpus, byGPU)),
		fix, srcEC2Accel)
}

// describeMachine names a machine type with its GPUs, for fix texts.
func describeMachine(provider, name string) string {
	m, ok := matrix.LookupMachine(provider, name)
	switch {
	case !ok:
		return name
	case m.Attachable != nil:
		return name + " (N1: attach nvidia-tesla-t4, -p4, -v100 or -p100)"
	case m.GPUFraction > 0:
		return fmt.Sprintf("%s (%g of one %s)", name, m.GPUFraction, m.GPU)
	case m.AcceleratorType != "":
		return fmt.Sprintf("%s (%d x %s)", name, m.GPUCount, m.AcceleratorType)
	}
	return fmt.Sprintf("%s (%d x %s)", name, m.GPUCount, m.GPU)
}
