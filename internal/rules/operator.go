package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
)

// operatorVersionPath is the field of the GPU Operator's version.
const operatorVersionPath = "spec.addons.gpuOperator.version"

// checkOperator: cluster-wide GPU Operator facts (version, Kubernetes
// range, lifecycle, GKE specifics, driver in the component matrix).
func (v *validator) checkOperator() {
	op := v.s.Addons.GPUOperator
	if !op.Enabled {
		return
	}
	if op.Version == "" {
		v.unknown(operatorVersionPath, "addons.gpuOperator.version is not set: the chart default floats, so the Kubernetes range, driver matrix and known issues cannot be judged", srcOperatorPlat)
	}
	if x, err := matrix.ParseVersion(op.Version); op.Version != "" && err == nil {
		rel := v.operatorRelease()
		if rel == nil {
			rels := v.c.Operator().GPUOperator.Releases
			v.unknown(operatorVersionPath, fmt.Sprintf("GPU Operator %s is not in the matrix (it knows %s to %s)", op.Version, rels[0].Version, rels[len(rels)-1].Version), srcOperatorPlat)
		}
		v.checkOperatorK8s(rel)
		v.checkOperatorLifecycle(x)
		if v.gke() && x.Less(matrix.MustVersion(v.c.Operator().GPUOperator.GKEMinVersion)) {
			v.add(RuleOperatorGKEVer, "", operatorVersionPath, fmt.Sprintf("GPU Operator %s predates %s, the first release supported on GKE", op.Version, v.c.Operator().GPUOperator.GKEMinVersion), "", v.c.Operator().GPUOperator.GKEMinVersionSource)
		}
		v.checkOperatorDriverVersion(rel)
	}
	v.checkOperatorGKEToolkit()
}

// checkOperatorK8s: the cluster's Kubernetes version in the release's
// validated range (OPERATOR-K8S-RANGE); rel is nil when the matrix does not
// know the release.
func (v *validator) checkOperatorK8s(rel *matrix.OperatorRelease) {
	if v.k8s == nil {
		if v.s.KubernetesVersion == "" {
			v.notJudged(RuleOperatorK8s, "", "spec.kubernetesVersion")
		}
		return
	}
	op := v.s.Addons.GPUOperator
	csp := v.gke() || v.eks()
	lo, hi, from, ok := v.c.OperatorRange(op.Version, csp)
	switch {
	case !ok && rel != nil:
		v.unknown(operatorVersionPath, fmt.Sprintf("the validated Kubernetes range of GPU Operator %s is not in the matrix", op.Version), srcOperatorPlat)
		return
	case !ok || (!v.k8s.Less(lo) && !hi.Less(v.k8s)):
		return
	}
	// Older than the minimum: NVIDIA does not support it; newer than the
	// range: not validated yet.
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
	v.add(RuleOperatorK8s, sev, operatorVersionPath, fmt.Sprintf("GPU Operator %s is validated on %s %s-%s%s; the cluster runs %s", op.Version, where, lo, hi, via, v.k8s), "", srcOperatorPlat)
}

// checkOperatorLifecycle: the release line is deprecated or out of support
// (OPERATOR-EOL).
func (v *validator) checkOperatorLifecycle(x matrix.Version) {
	if len(x) < 2 {
		return
	}
	version := v.s.Addons.GPUOperator.Version
	line := fmt.Sprintf("%d.%d", x[0], x[1])
	lc := v.c.Operator().GPUOperator.Lifecycle
	switch {
	case slices.Contains(lc.Deprecated, line):
		v.add(RuleOperatorEOL, diag.SeverityWarning, operatorVersionPath, fmt.Sprintf("GPU Operator %s: the %s line is deprecated (critical fixes only) as of %s", version, line, lc.AsOf), "Plan the upgrade to the supported line.", lc.Source)
	case !matrix.MustVersion(lc.EndOfSupportThrough).Less(matrix.Version{x[0], x[1]}):
		v.add(RuleOperatorEOL, "", operatorVersionPath, fmt.Sprintf("GPU Operator %s: the %s line is out of support (%s and older, as of %s)", version, line, lc.EndOfSupportThrough, lc.AsOf), "Upgrade the GPU Operator (one major at a time).", lc.Source)
	}
}

// checkOperatorDriverVersion: the Operator's driver is in the release's
// component matrix (OPERATOR-DRIVER-VERSION).
func (v *validator) checkOperatorDriverVersion(rel *matrix.OperatorRelease) {
	op := v.s.Addons.GPUOperator
	if rel == nil || !matrix.OperatorSwitches(v.s).Driver || op.Driver.Version == "" || len(rel.Drivers) == 0 || slices.Contains(rel.Drivers, op.Driver.Version) {
		return
	}
	v.add(RuleOperatorDriver, "", "spec.addons.gpuOperator.driver.version", fmt.Sprintf("GPU Operator %s lists drivers %s; %s is not among them", op.Version, strings.Join(rel.Drivers, ", "), op.Driver.Version),
		fmt.Sprintf("Use one of %s.", strings.Join(rel.Drivers, ", ")), rel.Source)
}

// checkOperatorGKEToolkit: the known issue of GKE 1.33+ and the toolkit's
// containerd config (OPERATOR-GKE-TOOLKIT).
func (v *validator) checkOperatorGKEToolkit() {
	op := v.s.Addons.GPUOperator
	if v.gke() && op.Enabled && v.s.KubernetesVersion == "" {
		v.notJudged(RuleOperatorGKEKit, "", "spec.kubernetesVersion")
	}
	if !v.gke() || v.k8s == nil || (op.Toolkit.Enabled != nil && !*op.Toolkit.Enabled) || op.Toolkit.Env["RUNTIME_CONFIG_SOURCE"] == "file" {
		return
	}
	for _, ki := range v.c.Operator().GPUOperator.KnownIssues {
		if ki.ID == "gke-runtime-config-source" && !v.k8s.Less(matrix.MustVersion(ki.KubernetesMin)) {
			v.add(RuleOperatorGKEKit, "", "spec.addons.gpuOperator.toolkit.env", fmt.Sprintf("GKE %s: %s", v.k8s, ki.Fact), "", ki.Sources()...)
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
	if a.ShipsToolkit && matrix.OperatorSwitches(v.s).Toolkit && !v.notJudged(RuleOperatorToolkit, pc.Pool.Name, "spec.addons.gpuOperator.toolkit.enabled") {
		how := "toolkit.enabled: true"
		if v.s.Addons.GPUOperator.Toolkit.Enabled == nil {
			rel := matrix.OperatorChartDefaults(v.s.Addons.GPUOperator.Version)
			how = fmt.Sprintf("toolkit.enabled is unset, and the chart default of %s is true", rel.Release)
		}
		v.add(RuleOperatorToolkit, "", "spec.addons.gpuOperator.toolkit.enabled",
			fmt.Sprintf("pool %s: %s ships the NVIDIA Container Toolkit, and the GPU Operator installs its own (%s)", pc.Pool.Name, a.Name, how), "", a.Source, srcOperatorNoAL2023, srcOperatorAL2023Fail)
	}
}
