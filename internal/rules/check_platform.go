package rules

import (
	"fmt"
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
		if rm.Known {
			continue
		}
		other := spec.ProviderEKS
		if v.eks() {
			other = spec.ProviderGKE
		}
		if _, ok := matrix.LookupMachine(other, rm.Name); ok {
			v.add(RuleMachineUnknown, diag.SeverityError, rm.Path, fmt.Sprintf("pool %s: %s is a %s machine type, but spec.provider is %s", p.Name, rm.Name, strings.ToUpper(other), v.s.Provider),
				"Use a machine type of the spec's provider.", srcGCEGPUs, srcEC2Accel)
			continue
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

func (v *validator) gpuTypeKnown(t string) bool {
	_, ok := matrix.LookupGPU(t)
	return ok
}

func (v *validator) checkGKEAccelerator(pc *matrix.PoolFacts, m *matrix.Machine) {
	p := pc.Pool
	t := p.GPU.Type
	acc, isAcc := v.c.Accelerators()[t]
	if m.Attachable != nil {
		// N1: GPUs are attached; the type must be one N1 takes.
		if t == "" {
			v.add(RuleMachineAccel, "", pc.Field(".gpu.type"), fmt.Sprintf("pool %s: %s has no GPU of its own; N1 needs an attached accelerator (nvidia-tesla-t4, -p4, -v100 or -p100)", p.Name, m.Name), "Set gpu.type and gpu.count, or use an accelerator-optimized machine type.", srcGCEGPUs)
			return
		}
		if !isAcc && pc.GPU != nil {
			for name, a := range v.c.Accelerators() {
				if a.GPU == pc.GPU.ID {
					if _, ok := m.Attachable[name]; ok {
						acc, isAcc = a, true
					}
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
		return
	}
	// Accelerator-optimized: type and count are fixed.
	if t != "" {
		switch {
		case isAcc && acc.Name != m.AcceleratorType:
			v.add(RuleMachineAccel, "", pc.Field(".gpu.type"),
				fmt.Sprintf("pool %s: %s comes with %s, not %s", p.Name, m.Name, m.AcceleratorType, acc.Name),
				fmt.Sprintf("Set gpu.type: %s (or leave it empty), or use a machine type with %s: %s.", m.AcceleratorType, acc.Name, strings.Join(v.machinesWith(acc.Name, "gke"), ", ")), m.Source)
		case !isAcc && pc.GPU != nil && pc.GPU.ID != m.GPU && !(matrix.NormalizeGPU(t) == matrix.NormalizeGPU(pc.GPU.Family) && v.c.Product(m.GPU).Family == pc.GPU.Family):
			v.add(RuleMachineAccel, "", pc.Field(".gpu.type"),
				fmt.Sprintf("pool %s: %s comes with %s (%s), not %s", p.Name, m.Name, m.AcceleratorType, m.GPU, t),
				fmt.Sprintf("Set gpu.type: %s, or use a machine type with %s.", m.AcceleratorType, t), m.Source)
		}
	}
	if p.GPU.Count != 0 {
		switch {
		case m.GPUFraction > 0:
			v.add(RuleMachineAccel, "", pc.Field(".gpu.count"), fmt.Sprintf("pool %s: %s has a fraction (%g) of one %s, not %d GPUs", p.Name, m.Name, m.GPUFraction, m.AcceleratorType, p.GPU.Count), "Remove gpu.count.", m.Source)
		case p.GPU.Count != m.GPUCount:
			v.add(RuleMachineAccel, "", pc.Field(".gpu.count"), fmt.Sprintf("pool %s: %s has %d x %s, not %d", p.Name, m.Name, m.GPUCount, m.AcceleratorType, p.GPU.Count), fmt.Sprintf("Set gpu.count: %d (or leave it empty).", m.GPUCount), m.Source)
		}
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
	m := known[0].Machine
	if p.GPU.Type != "" && pc.GPUPath == pc.Field(".gpu.type") {
		for _, rm := range known {
			g := pc.GPU
			mg := v.c.Product(rm.Machine.GPU)
			generic := matrix.NormalizeGPU(p.GPU.Type) == matrix.NormalizeGPU(g.Family)
			if g.ID != rm.Machine.GPU && !(generic && mg.Family == g.Family) {
				v.add(RuleMachineAccel, "", pc.Field(".gpu.type"), fmt.Sprintf("pool %s: %s has %s, not %s", p.Name, rm.Name, rm.Machine.GPU, p.GPU.Type),
					fmt.Sprintf("Set gpu.type: %s (or leave it empty).", rm.Machine.GPU), rm.Machine.Source)
			}
		}
	}
	if p.GPU.Count != 0 && !m.Family {
		for _, rm := range known {
			if rm.Machine.GPUFraction > 0 {
				v.add(RuleMachineAccel, "", pc.Field(".gpu.count"), fmt.Sprintf("pool %s: %s has a fraction (%g) of one %s, not %d GPUs", p.Name, rm.Name, rm.Machine.GPUFraction, rm.Machine.GPU, p.GPU.Count), "Remove gpu.count.", rm.Machine.Source)
			} else if rm.Machine.GPUCount != p.GPU.Count {
				v.add(RuleMachineAccel, "", pc.Field(".gpu.count"), fmt.Sprintf("pool %s: %s has %d x %s, not %d", p.Name, rm.Name, rm.Machine.GPUCount, rm.Machine.GPU, p.GPU.Count), fmt.Sprintf("Set gpu.count: %d (or leave it empty).", rm.Machine.GPUCount), rm.Machine.Source)
			}
		}
	}
	if len(known) < 2 {
		return
	}
	v.checkMixedPool(pc, known)
}

// checkMixedPool judges a pool of several instance types (an EKS managed
// node group's instanceTypes, or Karpenter-style lists) by their GPUs: one
// GPU model across the list is fine, whatever the GPUs per node (each type is
// judged on its own); different GPU models are risky, because workloads land
// on either, unless gpu.type names the family they share; types of different
// CPU architectures, or with EFA enabled different EFA cards, cannot share
// one launch template.
func (v *validator) checkMixedPool(pc *matrix.PoolFacts, known []matrix.ResolvedMachine) {
	p := pc.Pool
	path := pc.Field(".instanceTypes")
	byGPU := map[string][]string{}
	var gpus []string
	archs, cards := map[string][]string{}, map[int][]string{}
	for _, rm := range known {
		if _, seen := byGPU[rm.Machine.GPU]; !seen {
			gpus = append(gpus, rm.Machine.GPU)
		}
		byGPU[rm.Machine.GPU] = append(byGPU[rm.Machine.GPU], rm.Name)
		archs[rm.Machine.Arch] = append(archs[rm.Machine.Arch], rm.Name)
		if p.EFA.Enabled {
			n := rm.Machine.NetworkCards
			if !rm.Machine.EFA {
				n = 0
			}
			cards[n] = append(cards[n], rm.Name)
		}
	}
	group := func(keys []string, by map[string][]string) string {
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s on %s", orDefault(k, "unknown"), strings.Join(by[k], ", ")))
		}
		return strings.Join(parts, "; ")
	}
	if len(archs) > 1 {
		keys := sortedKeys(archs)
		v.add(RulePoolMixed, diag.SeverityError, path,
			fmt.Sprintf("pool %s mixes CPU architectures (%s): one node group has one AMI type, which is built for one architecture", p.Name, group(keys, archs)),
			"Split the pool: one pool per architecture.", srcEKSAMIs, srcEC2Accel)
	}
	if len(cards) > 1 {
		var counts []int
		for n := range cards {
			counts = append(counts, n)
		}
		sort.Ints(counts)
		var parts []string
		for _, n := range counts {
			parts = append(parts, fmt.Sprintf("%d EFA card(s) on %s", n, strings.Join(cards[n], ", ")))
		}
		v.add(RulePoolMixed, diag.SeverityError, path,
			fmt.Sprintf("pool %s enables EFA on instance types with different EFA cards (%s): the launch template's EFA interface list fits one card count, so the other types fail to launch or leave cards unused", p.Name, strings.Join(parts, "; ")),
			"Split the pool by EFA card count, or disable EFA on the smaller types' pool.", srcEFANCCL, srcEC2Accel)
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
	declared := false
	if p.GPU.Type != "" && len(fams) == 1 {
		if f, ok := v.c.GPUFamilyName(p.GPU.Type); ok && f == fams[0] {
			declared = true
		}
	}
	if declared {
		v.add(RulePoolMixed, diag.SeverityInfo, path,
			fmt.Sprintf("pool %s takes any %s (gpu.type %s): its instance types carry different %s products (%s), so workloads land on either", p.Name, fams[0], p.GPU.Type, fams[0], group(gpus, byGPU)),
			"Size jobs for the smallest of them, or split the pool.", srcEC2Accel)
		return
	}
	fix := "Split the pool into one pool per GPU model (spread Spot risk across those pools)."
	if len(fams) == 1 {
		fix = fmt.Sprintf("Split the pool into one pool per GPU model, or set gpu.type: %s if any %s will do.", fams[0], fams[0])
	}
	v.add(RulePoolMixed, diag.SeverityWarning, path,
		fmt.Sprintf("pool %s mixes GPU models (%s): workloads land on either, so jobs sized or tuned for one (memory, NCCL topology, CUDA targets) may fail or slow down on the other", p.Name, group(gpus, byGPU)),
		fix, srcEC2Accel)
}

// checkAMI: the EKS AMI type fits the instance architecture and the
// Kubernetes version, is in support, and can run NVIDIA GPUs.
func (v *validator) checkAMI(pc *matrix.PoolFacts) {
	a := pc.AMI
	if a == nil || !v.eks() {
		return
	}
	p := pc.Pool
	// No zones: the generated <pool>_zones variable has no default and
	// takes exactly one zone.
	if spec.EKSSingleAZ(p) && len(p.Zones) > 1 {
		v.add(RuleEKSSingleAZ, "", pc.Field(".zones"), fmt.Sprintf("pool %s: a %s needs exactly one zone; zones lists %d", p.Name, spec.EKSSingleAZReason(p), len(p.Zones)), "")
	}
	path := pc.Field(".osImage")
	if a.Windows || strings.Contains(a.Name, "NEURON") {
		v.add(RuleEKSAMIGPU, "", path, fmt.Sprintf("pool %s: %s cannot run NVIDIA GPUs in an EKS managed node group", p.Name, a.Name), "", a.Source)
		return
	}
	for _, rm := range pc.Machines {
		if rm.Known && a.Arch != "" && rm.Machine.Arch != "" && a.Arch != rm.Machine.Arch {
			v.add(RuleEKSAMIArch, "", path, fmt.Sprintf("pool %s: %s is %s, but %s is %s", p.Name, a.Name, a.Arch, rm.Name, rm.Machine.Arch),
				fmt.Sprintf("Use the %s variant of the AMI type.", map[string]string{"arm64": "ARM_64", "amd64": "x86_64"}[rm.Machine.Arch]), srcEKSAMIs)
		}
	}
	if v.k8s != nil {
		switch {
		case a.KubernetesMax != "" && matrix.MustVersion(a.KubernetesMax).Less(v.k8s) && !a.EndOfSupportDate().IsZero():
			v.add(RuleEKSAMIK8s, "", path, fmt.Sprintf("pool %s: there are no %s AMIs for Kubernetes %s: Amazon Linux 2 AMIs ended with %s (end of support %s)", p.Name, a.Name, v.s.KubernetesVersion, a.KubernetesMax, a.EndOfSupport),
				"Use AL2023_x86_64_NVIDIA (with a device plugin) or BOTTLEROCKET_x86_64_NVIDIA.", a.Source)
		case a.KubernetesMax != "" && matrix.MustVersion(a.KubernetesMax).Less(v.k8s):
			v.unknown(path, fmt.Sprintf("pool %s: the matrix knows %s AMIs up to Kubernetes %s (as of %s); %s cannot be judged", p.Name, a.Name, a.KubernetesMax, a.AsOf, v.s.KubernetesVersion), a.Sources()...)
		case a.KubernetesMin != "" && v.k8s.Less(matrix.MustVersion(a.KubernetesMin)):
			v.unknown(path, fmt.Sprintf("pool %s: the matrix knows %s AMIs from Kubernetes %s (as of %s); %s cannot be judged", p.Name, a.Name, a.KubernetesMin, a.AsOf, v.s.KubernetesVersion), a.Sources()...)
		}
	}
	if !a.EndOfSupportDate().IsZero() && !v.asOf.Before(a.EndOfSupportDate()) {
		v.add(RuleEKSAMIEOL, "", path, fmt.Sprintf("pool %s: %s reached end of support on %s: no security patches, drivers or Kubernetes versions since", p.Name, a.Name, a.EndOfSupport), "", a.Source)
	}
}

// checkDriverOwner: exactly one component installs the driver, and on GKE
// one GKE can.
func (v *validator) checkDriverOwner(pc *matrix.PoolFacts) {
	p := pc.Pool
	op := pc.OperatorDriver
	opPath := "spec.addons.gpuOperator.driver.enabled"
	switch {
	case v.gke():
		d := p.GPU.Driver
		switch {
		case op && pc.COS:
			v.add(RuleOperatorCOS, "", opPath, fmt.Sprintf("pool %s runs COS (%s), where the GPU Operator cannot install the driver%s", p.Name, matrix.GKEImageName(p.OSImage), v.operatorDriverDefault()), "", srcOperatorGKE)
		case op && (pc.GKEInstall == matrix.GKEDriverDefault || pc.GKEInstall == matrix.GKEDriverLatest):
			what := "the " + d + " driver"
			if d == "" || d == matrix.GKEDriverUnspecified {
				what = "the DEFAULT driver (" + pc.GKEUnsetWhy + ")"
			}
			v.add(RuleDriverOwner, diag.SeverityError, pc.Field(".gpu.driver"), fmt.Sprintf("pool %s: GKE installs %s and the GPU Operator installs its own%s: two drivers", p.Name, what, v.operatorDriverDefault()),
				"Set gpu.driver: INSTALLATION_DISABLED to let the Operator own the driver (Ubuntu), or addons.gpuOperator.driver.enabled: false.", srcOperatorGKE, srcGKEGPUs)
		}
		switch {
		case d == "" || d == matrix.GKEDriverUnspecified:
			v.checkGKEUnsetDriver(pc, op)
		case d == matrix.GKEDriverLatest && pc.Ubuntu:
			v.add(RuleGKEDriverOption, diag.SeverityError, pc.Field(".gpu.driver"), fmt.Sprintf("pool %s: LATEST is offered only on COS; %s takes DEFAULT", p.Name, p.OSImage), "Use DEFAULT on Ubuntu, or COS_CONTAINERD.", srcGKEDriverEnum)
		case d == matrix.GKEDriverDisabled && !op:
			v.unknown(pc.Field(".gpu.driver"), fmt.Sprintf("pool %s: GKE installs no driver (INSTALLATION_DISABLED) and the GPU Operator's driver is off: Google's installer DaemonSet must install it, which the spec does not describe", p.Name), srcGKEGPUs)
		case pc.Exact != nil:
			switch {
			case pc.COS:
				v.add(RuleGKEDriverOption, diag.SeverityError, pc.Field(".gpu.driver"),
					fmt.Sprintf("pool %s: GKE on COS cannot pin driver %s: it installs only the DEFAULT or LATEST driver of the GKE version, and the GPU Operator cannot install drivers on COS", p.Name, p.GPU.Driver),
					"Set gpu.driver: LATEST or DEFAULT and check which driver that is for the GKE version; pin exact drivers only on UBUNTU_CONTAINERD with the GPU Operator.", srcGKEDriverEnum, srcOperatorGKE)
			case !op:
				v.add(RuleGKEDriverOption, diag.SeverityError, pc.Field(".gpu.driver"),
					fmt.Sprintf("pool %s: nothing installs driver %s: GKE installs only DEFAULT or LATEST, and the GPU Operator's driver is off", p.Name, p.GPU.Driver),
					"Enable the GPU Operator's driver (addons.gpuOperator.driver.enabled: true, version "+p.GPU.Driver+"), or use gpu.driver: DEFAULT.", srcGKEDriverEnum, srcOperatorGKE)
			case v.s.Addons.GPUOperator.Driver.Version != "" && v.s.Addons.GPUOperator.Driver.Version != p.GPU.Driver:
				v.add(RuleDriverOwner, diag.SeverityWarning, pc.Field(".gpu.driver"), fmt.Sprintf("pool %s says driver %s, but the GPU Operator installs %s", p.Name, p.GPU.Driver, v.s.Addons.GPUOperator.Driver.Version), "Make them agree.")
			}
		}
	case v.eks():
		a := pc.AMI
		if a == nil || a.Windows || strings.Contains(a.Name, "NEURON") {
			return
		}
		switch {
		case a.ShipsDriver && op:
			// The Operator's driver pod finds the preinstalled driver and
			// exits (k8s-driver-manager): it works, with two owners.
			v.add(RuleDriverOwner, diag.SeverityWarning, opPath, fmt.Sprintf("pool %s: %s ships the NVIDIA driver and the GPU Operator's driver is on%s: its driver pod detects the preinstalled driver and exits, so the AMI's driver runs, but two components now own it", p.Name, a.Name, v.operatorDriverDefault()),
				"Set addons.gpuOperator.driver.enabled: false on NVIDIA AMIs.", srcEKSAMIs, srcOperatorPreinstalled, srcOperatorPreinstalledLog)
		case !a.ShipsDriver && !a.Custom && !op:
			v.add(RuleDriverOwner, diag.SeverityError, pc.Field(".osImage"), fmt.Sprintf("pool %s: %s has no NVIDIA driver and the GPU Operator's driver is off: nothing installs it", p.Name, a.Name),
				"Use an NVIDIA AMI type (AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64_NVIDIA), or enable addons.gpuOperator.driver.", srcEKSAMIs)
		case a.Custom && op && pc.Exact != nil:
			v.add(RuleDriverOwner, diag.SeverityWarning, opPath, fmt.Sprintf("pool %s: the custom AMI has driver %s preinstalled and the GPU Operator's driver is on: its driver pod detects the preinstalled driver and exits, but two components now own it", p.Name, p.GPU.Driver), "Turn one of them off.", srcOperatorPlat, srcOperatorPreinstalled)
		}
	}
}

// checkOperatorPool: the GPU Operator's operands where they run on an EKS
// pool: not on Amazon Linux 2 (glibc too old), and no second container
// toolkit on images that ship one.
func (v *validator) checkOperatorPool(pc *matrix.PoolFacts) {
	a := pc.AMI
	if !v.eks() || a == nil || !matrix.OperatorOperandsOn(v.s, pc.Pool) {
		return
	}
	op := v.c.Operator().GPUOperator
	if a.Glibc != "" && matrix.MustVersion(a.Glibc).Less(matrix.MustVersion(op.MinGlibc)) {
		v.add(RuleOperatorAL2, "", pc.Field(".osImage"),
			fmt.Sprintf("pool %s: the GPU Operator's operands run on %s, whose glibc %s is older than the %s they need: the Operator does not support Amazon Linux 2 (its validator fails with GLIBC_2.27 not found)", pc.Pool.Name, a.Name, a.Glibc, op.MinGlibc),
			"", a.GlibcSource, op.MinGlibcSource, op.MinGlibcSource2)
	}
	if a.ShipsToolkit && matrix.OperatorSwitches(v.s).Toolkit {
		how := "toolkit.enabled: true"
		if v.s.Addons.GPUOperator.Toolkit.Enabled == nil {
			rel := matrix.OperatorChartDefaults(v.s.Addons.GPUOperator.Version)
			how = fmt.Sprintf("toolkit.enabled is unset, and the chart default of %s is true", rel.Release)
		}
		v.add(RuleOperatorToolkit, "", "spec.addons.gpuOperator.toolkit.enabled",
			fmt.Sprintf("pool %s: %s ships the NVIDIA Container Toolkit, and the GPU Operator installs its own (%s)", pc.Pool.Name, a.Name, how), "", a.Source)
	}
}

// operatorDriverDefault says, for messages, that the Operator's driver is on
// by the chart's default when the spec leaves driver.enabled unset.
func (v *validator) operatorDriverDefault() string {
	if v.s.Addons.GPUOperator.Driver.Enabled != nil {
		return ""
	}
	return fmt.Sprintf(" (driver.enabled is unset, and the chart default of %s is true)", matrix.OperatorChartDefaults(v.s.Addons.GPUOperator.Version).Release)
}

// anyPoolPlugin reports whether some pool's device plugin is provider.
func (v *validator) anyPoolPlugin(provider string) bool {
	for i := range v.s.NodePools {
		if v.s.DevicePluginFor(&v.s.NodePools[i]) == provider {
			return true
		}
	}
	return false
}

// checkDevicePlugin: exactly one device plugin advertises nvidia.com/gpu on
// the pool's nodes.
func (v *validator) checkDevicePlugin(pc *matrix.PoolFacts) {
	p := pc.Pool
	if !v.gke() && !v.eks() {
		return
	}
	op := v.s.Addons.GPUOperator
	opPlugin := op.Enabled && (op.DevicePlugin.Enabled == nil || *op.DevicePlugin.Enabled)
	if opPlugin && v.s.DevicePluginFor(p) != spec.DevicePluginGPUOperator && v.anyPoolPlugin(spec.DevicePluginGPUOperator) {
		// The Operator's plugin owns other pools of this spec; the nodes of
		// this one are labelled out of it (nvidia.com/gpu.deploy.operands or
		// nvidia.com/gpu.deploy.device-plugin=false, see spec.NodeLabels).
		// With no pool of its own it would run everywhere.
		opPlugin = false
	}
	provider := pc.DevicePlugin.Provider
	disableLabel := v.c.GCP().GKE.DevicePlugin.DisableLabel
	var adv []string
	switch {
	case v.gke():
		if provider == spec.DevicePluginBottlerocket {
			v.add(RulePluginProvider, "", pc.DevicePluginPath, fmt.Sprintf("pool %s: devicePlugin.provider bottlerocket exists only on EKS Bottlerocket NVIDIA AMIs", p.Name), "Use gke-managed, helm or gpu-operator.")
			return
		}
		if p.Labels[disableLabel] != "true" {
			adv = append(adv, "GKE's device plugin")
		} else if provider == spec.DevicePluginGKEManaged || (provider == "" && !pc.DevicePluginSet) {
			v.add(RulePluginMissing, "", pc.Field(".labels")+spec.Key(disableLabel),
				fmt.Sprintf("pool %s: label %s=true turns GKE's device plugin off, but devicePlugin.provider is %s", p.Name, disableLabel, orDefault(provider, "gke-managed (default)")),
				"Remove the label, or set devicePlugin.provider to helm or gpu-operator.", v.c.GCP().GKE.DevicePlugin.Source)
			return
		}
	case v.eks():
		if provider == spec.DevicePluginGKEManaged {
			v.add(RulePluginProvider, "", pc.DevicePluginPath, fmt.Sprintf("pool %s: devicePlugin.provider gke-managed exists only on GKE", p.Name), "Use helm, gpu-operator, or bottlerocket on Bottlerocket NVIDIA AMIs.")
			return
		}
		if a := pc.AMI; a != nil && a.ShipsDevicePlugin {
			adv = append(adv, "the device plugin built into "+a.Name)
		} else if provider == spec.DevicePluginBottlerocket {
			v.add(RulePluginProvider, "", pc.DevicePluginPath, fmt.Sprintf("pool %s: devicePlugin.provider bottlerocket needs a Bottlerocket NVIDIA AMI; %s has no built-in device plugin", p.Name, orDefault(p.OSImage, "the default AMI")),
				"Use helm or gpu-operator, or a BOTTLEROCKET_*_NVIDIA AMI type.", srcEKSPlugin)
			return
		}
	}
	helmSkipped := false   // NVIDIA's chart is the provider, but its nodeSelector leaves the pool out
	helmUncertain := false // its nodeSelector names labels the spec cannot know for the pool
	if provider == spec.DevicePluginHelm {
		switch sel, unknown := matrix.HelmPluginSelects(v.s, p); sel {
		case matrix.NotSelected:
			helmSkipped = true
		case matrix.SelectionUnknown:
			helmUncertain = true
			v.unknown("spec.addons.devicePlugin.nodeSelector",
				fmt.Sprintf("pool %s: the device plugin's nodeSelector names %s, which the spec does not say the pool's nodes carry (labels of the pool, gpuctl's or the platform's); NVIDIA's chart is counted as running there", p.Name, strings.Join(unknown, ", ")),
				v.c.Operator().DevicePlugin.ChartDefaults.Source)
			adv = append(adv, "NVIDIA's device plugin (Helm)")
		default:
			adv = append(adv, "NVIDIA's device plugin (Helm)")
		}
	}
	if provider == spec.DevicePluginGPUOperator && !op.Enabled {
		v.add(RulePluginProvider, "", "spec.addons.gpuOperator.enabled", fmt.Sprintf("pool %s: devicePlugin.provider is gpu-operator but the GPU Operator is not enabled", p.Name), "Set addons.gpuOperator.enabled: true, or use another provider.")
		return
	}
	if opPlugin {
		adv = append(adv, "the GPU Operator's device plugin")
	}
	if v.eks() && pc.AMI == nil && len(adv) == 0 && p.OSImage == "" {
		return // osImage missing: reported already
	}
	switch {
	case len(adv) == 0 && helmSkipped:
		v.add(RulePluginMissing, "", "spec.addons.devicePlugin.nodeSelector",
			fmt.Sprintf("pool %s: its device plugin is NVIDIA's chart, but addons.devicePlugin.nodeSelector (%s) does not select the pool's nodes, so the chart does not run there and nothing advertises nvidia.com/gpu", p.Name, labelList(v.s.Addons.DevicePlugin.NodeSelector)),
			"Give the pool the selector's labels (nodePools[].labels), widen the selector, or set another devicePlugin.provider for the pool.", v.c.Operator().DevicePlugin.ChartDefaults.Source)
	case len(adv) == 0:
		fix := "Set devicePlugin.provider: helm (NVIDIA's chart) or gpu-operator."
		msg := fmt.Sprintf("pool %s: nothing advertises nvidia.com/gpu", p.Name)
		if a := pc.AMI; a != nil && a.ShipsDriver {
			msg = fmt.Sprintf("pool %s: %s ships the NVIDIA driver but not the device plugin, and devicePlugin.provider is %s: nothing advertises nvidia.com/gpu", p.Name, a.Name, orDefault(provider, "unset"))
		}
		v.add(RulePluginMissing, "", pc.DevicePluginPath, msg, fix, srcEKSPlugin)
	case len(adv) > 1:
		path := pc.DevicePluginPath
		fix := "Keep exactly one device plugin."
		switch {
		case v.gke() && adv[0] == "GKE's device plugin":
			fix = fmt.Sprintf("Use devicePlugin.provider: gke-managed and configure sharing through GKE (gpu.sharing), or label the pool %s=true and set gpu.driver: INSTALLATION_DISABLED to run NVIDIA's plugin instead.", disableLabel)
		case pc.AMI != nil && pc.AMI.ShipsDevicePlugin:
			fix = "Use devicePlugin.provider: bottlerocket and do not install NVIDIA's chart (GPU Operator devicePlugin.enabled: false)."
		case opPlugin && provider == spec.DevicePluginHelm:
			fix = "Set addons.gpuOperator.devicePlugin.enabled: false, or drop the Helm chart and use provider gpu-operator."
		}
		all := "all"
		if len(adv) == 2 {
			all = "both"
		}
		if helmUncertain && len(adv) == 2 {
			// Whether NVIDIA's chart runs there depends on labels the spec
			// cannot know: a risk, not a certainty.
			v.add(RulePluginConflict, diag.SeverityWarning, "spec.addons.devicePlugin.nodeSelector", fmt.Sprintf("pool %s: %s may both advertise nvidia.com/gpu on the same nodes: the device plugin's nodeSelector names labels the spec does not say the pool's nodes carry, so whether NVIDIA's chart runs there cannot be told", p.Name, joinAnd(adv)),
				"Give the selector a label the spec sets (nodePools[].labels) on the pools NVIDIA's chart serves, so that the others are visibly left out.", srcEKSPlugin)
			return
		}
		v.add(RulePluginConflict, "", path, fmt.Sprintf("pool %s: %s %s advertise nvidia.com/gpu on the same nodes; they race to register the resource and each ignores the other's sharing config", p.Name, joinAnd(adv), all), fix,
			srcOperatorGKE, srcEKSPlugin)
	default:
		// One advertiser. On GKE NVIDIA's plugin also needs the driver
		// taken away from GKE.
		if v.gke() && adv[0] != "GKE's device plugin" && (pc.GKEInstall == matrix.GKEDriverDefault || pc.GKEInstall == matrix.GKEDriverLatest) {
			v.add(RulePluginConflict, "", pc.Field(".gpu.driver"),
				fmt.Sprintf("pool %s: %s runs NVIDIA's device plugin, but GKE still manages the driver (%s); NVIDIA documents the %s=true label together with INSTALLATION_DISABLED", p.Name, adv[0], orDefault(p.GPU.Driver, "DEFAULT, as gpu.driver is unset"), disableLabel),
				"Set gpu.driver: INSTALLATION_DISABLED and install the driver with the GPU Operator (Ubuntu) or Google's installer DaemonSet.", v.c.GCP().GKE.DevicePlugin.Source)
		}
	}
	// Feature support of the Helm chart version.
	if provider == spec.DevicePluginHelm && p.GPU.Sharing.Strategy == spec.SharingMPS && pc.DevicePlugin.Version != "" {
		if x, err := matrix.ParseVersion(pc.DevicePlugin.Version); err == nil && x.Less(matrix.MustVersion("0.15.0")) {
			verPath := "spec.addons.devicePlugin.version"
			if p.DevicePlugin != nil && p.DevicePlugin.Version != "" {
				verPath = pc.Field(".devicePlugin.version")
			}
			v.add(RulePluginVersion, "", verPath, fmt.Sprintf("pool %s: MPS sharing needs k8s-device-plugin v0.15.0 or later; %s ignores it", p.Name, pc.DevicePlugin.Version), "", srcDevicePluginCL)
		}
	}
	if provider == spec.DevicePluginHelm && pc.DevicePlugin.Version != "" && !v.knownPlugin(pc.DevicePlugin.Version) {
		verPath := "spec.addons.devicePlugin.version"
		if p.DevicePlugin != nil && p.DevicePlugin.Version != "" {
			verPath = pc.Field(".devicePlugin.version")
		}
		rels := v.c.Operator().DevicePlugin.Releases
		v.unknown(verPath, fmt.Sprintf("k8s-device-plugin %s is not in the matrix (it knows %s to %s)", pc.DevicePlugin.Version, rels[0].Version, rels[len(rels)-1].Version), srcDevicePluginCL)
	}
}

func (v *validator) knownPlugin(ver string) bool {
	x, err := matrix.ParseVersion(ver)
	if err != nil {
		return true // reported as SPEC-VERSION
	}
	for i := range v.c.Operator().DevicePlugin.Releases {
		r := &v.c.Operator().DevicePlugin.Releases[i]
		if r.ParsedVersion().Compare(x) == 0 {
			return true
		}
	}
	return false
}

// checkOperator: cluster-wide GPU Operator facts (version, Kubernetes
// range, lifecycle, GKE specifics, driver in the component matrix).
func (v *validator) checkOperator() {
	op := v.s.Addons.GPUOperator
	if !op.Enabled {
		return
	}
	vpath := "spec.addons.gpuOperator.version"
	if op.Version == "" {
		v.unknown(vpath, "addons.gpuOperator.version is not set: the chart default floats, so the Kubernetes range, driver matrix and known issues cannot be judged", srcOperatorPlat)
	}
	x, err := matrix.ParseVersion(op.Version)
	if op.Version != "" && err == nil {
		rel := v.operatorRelease()
		if rel == nil {
			v.unknown(vpath, fmt.Sprintf("GPU Operator %s is not in the matrix (it knows %s to %s)", op.Version, v.c.Operator().GPUOperator.Releases[0].Version, v.c.Operator().GPUOperator.Releases[len(v.c.Operator().GPUOperator.Releases)-1].Version), srcOperatorPlat)
		}
		// Kubernetes range.
		if v.k8s != nil {
			csp := v.gke() || v.eks()
			if lo, hi, from, ok := v.c.OperatorRange(op.Version, csp); ok {
				if v.k8s.Less(lo) || hi.Less(v.k8s) {
					// Older than the minimum: NVIDIA does not support it;
					// newer than the range: not validated yet.
					sev := diag.SeverityError
					if hi.Less(v.k8s) {
						sev = diag.SeverityWarning
					}
					where := "Kubernetes"
					if csp {
						where = strings.ToUpper(v.s.Provider)
					}
					via := ""
					if from != strings.TrimSpace(op.Version) && from != "v"+strings.TrimPrefix(op.Version, "v") {
						via = fmt.Sprintf(" (range of %s)", from)
					}
					v.add(RuleOperatorK8s, sev, vpath, fmt.Sprintf("GPU Operator %s is validated on %s %s-%s%s; the cluster runs %s", op.Version, where, lo, hi, via, v.k8s), "", srcOperatorPlat)
				}
			} else if rel != nil {
				v.unknown(vpath, fmt.Sprintf("the validated Kubernetes range of GPU Operator %s is not in the matrix", op.Version), srcOperatorPlat)
			}
		}
		// Lifecycle.
		if len(x) >= 2 {
			line := fmt.Sprintf("%d.%d", x[0], x[1])
			lc := v.c.Operator().GPUOperator.Lifecycle
			switch {
			case slices.Contains(lc.Deprecated, line):
				v.add(RuleOperatorEOL, diag.SeverityWarning, vpath, fmt.Sprintf("GPU Operator %s: the %s line is deprecated (critical fixes only) as of %s", op.Version, line, lc.AsOf), "Plan the upgrade to the supported line.", lc.Source)
			case !matrix.MustVersion(lc.EndOfSupportThrough).Less(matrix.Version{x[0], x[1]}):
				v.add(RuleOperatorEOL, "", vpath, fmt.Sprintf("GPU Operator %s: the %s line is out of support (%s and older, as of %s)", op.Version, line, lc.EndOfSupportThrough, lc.AsOf), "Upgrade the GPU Operator (one major at a time).", lc.Source)
			}
		}
		if v.gke() && x.Less(matrix.MustVersion(v.c.Operator().GPUOperator.GKEMinVersion)) {
			v.add(RuleOperatorGKEVer, "", vpath, fmt.Sprintf("GPU Operator %s predates %s, the first release supported on GKE", op.Version, v.c.Operator().GPUOperator.GKEMinVersion), "", v.c.Operator().GPUOperator.GKEMinVersionSource)
		}
		// Driver in the release's component matrix.
		if rel != nil && matrix.OperatorSwitches(v.s).Driver && op.Driver.Version != "" && len(rel.Drivers) > 0 && !slices.Contains(rel.Drivers, op.Driver.Version) {
			v.add(RuleOperatorDriver, "", "spec.addons.gpuOperator.driver.version", fmt.Sprintf("GPU Operator %s lists drivers %s; %s is not among them", op.Version, strings.Join(rel.Drivers, ", "), op.Driver.Version),
				fmt.Sprintf("Use one of %s.", strings.Join(rel.Drivers, ", ")), rel.Source)
		}
	}
	// Known issue: GKE 1.33+ toolkit containerd config.
	if v.gke() && v.k8s != nil {
		for _, ki := range v.c.Operator().GPUOperator.KnownIssues {
			if ki.ID != "gke-runtime-config-source" || v.k8s.Less(matrix.MustVersion(ki.KubernetesMin)) {
				continue
			}
			if op.Toolkit.Enabled != nil && !*op.Toolkit.Enabled {
				continue
			}
			if op.Toolkit.Env["RUNTIME_CONFIG_SOURCE"] != "file" {
				v.add(RuleOperatorGKEKit, "", "spec.addons.gpuOperator.toolkit.env", fmt.Sprintf("GKE %s: %s", v.k8s, ki.Fact), "", ki.Sources()...)
			}
		}
	}
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
