package rules

import (
	"fmt"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Sources of EKS-AUTOSCALER (checked 2026-12-03).
const (
	// EKS: "the Kubernetes Cluster Autoscaler and Karpenter" are what scale
	// a cluster's nodes; a node group alone keeps its desired size.
	srcEKSAutoscaling = "https://docs.aws.amazon.com/eks/latest/userguide/autoscaling.html"
	// Karpenter v1 NodePools, and cluster-autoscaler on AWS (auto-discovery
	// and node-template tags).
	srcKarpenterNodePools = "https://karpenter.sh/docs/concepts/nodepools/"
	srcCAAWS              = "https://github.com/kubernetes/autoscaler/blob/062f28a624a2cbedcdc13b152845ac8074853219/cluster-autoscaler/cloudprovider/aws/README.md"
)

var enumAutoscaler = []string{spec.AutoscalerKarpenter, spec.AutoscalerClusterAutoscaler, spec.AutoscalerNone}

// checkAutoscaler: addons.autoscaler is one gpuctl knows, an EKS field;
// an EKS pool that can scale (autoscaling.max above min) names
// what scales it (EKS-AUTOSCALER).
func (v *validator) checkAutoscaler() {
	a := v.s.Addons.Autoscaler
	v.enum("spec.addons.autoscaler", "autoscaler", a, enumAutoscaler)
	if v.gke() && a != "" {
		v.add(RuleSpecProviderField, diag.SeverityWarning, "spec.addons.autoscaler",
			fmt.Sprintf("addons.autoscaler %q is an EKS setting: GKE scales node pools with its own cluster autoscaler (the node pool's autoscaling block)", a),
			"Remove spec.addons.autoscaler.")
	}
	if !v.eks() {
		return
	}
	for i := range v.s.NodePools {
		p := &v.s.NodePools[i]
		if !PoolScales(p) {
			continue
		}
		path := spec.PoolPath(i) + ".autoscaling"
		switch a {
		case "":
			v.add(RuleEKSAutoscaler, "", path,
				fmt.Sprintf("pool %s can scale (autoscaling min %d, max %d) but the spec names no autoscaler: an EKS managed node group keeps the size it is given, so the pool stays at its autoscaling.min", p.Name, p.Autoscaling.Min, p.Autoscaling.Max),
				"")
		case spec.AutoscalerNone:
			v.add(RuleEKSAutoscaler, diag.SeverityInfo, path,
				fmt.Sprintf("pool %s: addons.autoscaler is none, so it stays at autoscaling.min (%d) until someone changes the node group's desired size; max %d is only a bound", p.Name, p.Autoscaling.Min, p.Autoscaling.Max),
				"Nothing to fix if that is meant; else set addons.autoscaler: karpenter or cluster-autoscaler.")
		}
	}
}

// PoolScales reports whether pool p's size may change between its bounds:
// autoscaling.max is above min (min 0 among them: a pool that scales from
// zero). A pool with neither bound set (max 0) does not scale.
func PoolScales(p *spec.NodePool) bool {
	return p.Autoscaling.Max > p.Autoscaling.Min
}
