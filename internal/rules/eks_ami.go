package rules

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

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
	v.checkAMIKubernetes(pc, a, path)
	if !a.EndOfSupportDate().IsZero() && !v.asOf.Before(a.EndOfSupportDate()) {
		v.add(RuleEKSAMIEOL, "", path, fmt.Sprintf("pool %s: %s reached end of support on %s: no security patches, drivers or Kubernetes versions since", p.Name, a.Name, a.EndOfSupport), "", a.Source)
	}
}

// checkAMIKubernetes: the matrix knows AMIs of the AMI type for the
// cluster's Kubernetes version (EKS-AMI-K8S, MATRIX-UNKNOWN-FACT).
func (v *validator) checkAMIKubernetes(pc *matrix.PoolFacts, a *matrix.AMIFact, path string) {
	if v.k8s == nil {
		if v.s.KubernetesVersion == "" {
			v.notJudged(RuleEKSAMIK8s, pc.Pool.Name, "spec.kubernetesVersion")
		}
		return
	}
	p := pc.Pool
	switch {
	case a.KubernetesMax != "" && matrix.MustVersion(a.KubernetesMax).Less(v.k8s) && !a.EndOfSupportDate().IsZero():
		v.add(RuleEKSAMIK8s, "", path, fmt.Sprintf("pool %s: there are no %s AMIs for Kubernetes %s: Amazon Linux 2 AMIs ended with %s (end of support %s)", p.Name, a.Name, v.s.KubernetesVersion, a.KubernetesMax, a.EndOfSupport),
			"Use AL2023_x86_64_NVIDIA (with a device plugin) or BOTTLEROCKET_x86_64_NVIDIA.", a.Source)
	case a.KubernetesMax != "" && matrix.MustVersion(a.KubernetesMax).Less(v.k8s):
		v.beyond(path, fmt.Sprintf("pool %s: Kubernetes %s is newer than the matrix's AMI types table (as of %s), whose %s AMIs go up to Kubernetes %s: what the AMI ships for it cannot be judged", p.Name, v.s.KubernetesVersion, a.AsOf, a.Name, a.KubernetesMax), a.Sources()...)
	case a.KubernetesMin != "" && v.k8s.Less(matrix.MustVersion(a.KubernetesMin)):
		v.unknown(path, fmt.Sprintf("pool %s: the matrix knows %s AMIs from Kubernetes %s (as of %s); %s cannot be judged", p.Name, a.Name, a.KubernetesMin, a.AsOf, v.s.KubernetesVersion), a.Sources()...)
	}
}
