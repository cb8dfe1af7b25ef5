package hclgen

import (
	"fmt"
	"strconv"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Tags the Kubernetes Cluster Autoscaler reads on AWS (checked
// 2026-12-03). Auto-discovery finds the Auto Scaling groups that carry
// both keys (any value; "owned" by convention); the node-template keys
// describe the nodes of a group that has none yet, for scaling from zero.
// For an EKS managed node group the autoscaler reads the node group's own
// labels and taints (eks:DescribeNodegroup) and its node-template/resources
// tags, which win over the Auto Scaling group's; EKS itself tags the
// group's Auto Scaling group with the two discovery keys.
// Sources: https://github.com/kubernetes/autoscaler/blob/062f28a624a2cbedcdc13b152845ac8074853219/cluster-autoscaler/cloudprovider/aws/README.md
// ("Auto-Discovery Setup"), https://github.com/kubernetes/autoscaler/blob/00a2c93c3857386b505c7e46e012c555f6bfe3f3/cluster-autoscaler/cloudprovider/aws/aws_manager.go
// (buildNodeFromTemplate: resources from the managed node group's tags) and
// https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html.
const (
	caTagEnabled      = "k8s.io/cluster-autoscaler/enabled"
	caTagClusterPref  = "k8s.io/cluster-autoscaler/"
	caTagLabelPrefix  = "k8s.io/cluster-autoscaler/node-template/label/"
	caTagTaintPrefix  = "k8s.io/cluster-autoscaler/node-template/taint/"
	caTagResourcePref = "k8s.io/cluster-autoscaler/node-template/resources/"
	// awsTagKeyMax is the longest AWS tag key.
	// Source: https://docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html (2026-12-03).
	awsTagKeyMax = 128
)

// eksNodeGroupTags are the tags of pool p's node group: the cost tags
// (spec.tags) and, with addons.autoscaler cluster-autoscaler, the
// autoscaler's discovery and node-template tags (eksAutoscalerTags); the
// second result names what those tags cannot say.
func (g *gen) eksNodeGroupTags(p *pool) (map[string]string, []string) {
	tags := g.s.PoolTags(p.NodePool)
	if g.s.Addons.Autoscaler != spec.AutoscalerClusterAutoscaler {
		return tags, nil
	}
	if tags == nil {
		tags = map[string]string{}
	}
	notes := eksAutoscalerTags(tags, p, g.s.ClusterName)
	return tags, notes
}

// eksAutoscalerTags adds to tags the Cluster Autoscaler's tags for pool
// p of cluster: auto-discovery, the node labels and taints, and
// nvidia.com/gpu (GPUs per node) where the pool's GPUs are not shared,
// and vpc.amazonaws.com/efa (EFA interfaces per node) on EFA pools.
// It returns notes for what it leaves out: a key longer than AWS allows,
// shared GPUs whose advertised count the device plugin decides.
func eksAutoscalerTags(tags map[string]string, p *pool, cluster string) []string {
	var notes []string
	put := func(k, v string) {
		if len(k) > awsTagKeyMax {
			notes = append(notes, fmt.Sprintf("cluster-autoscaler: no tag %s (longer than AWS's %d characters)", k, awsTagKeyMax))
			return
		}
		tags[k] = v
	}
	put(caTagEnabled, "true")
	put(caTagClusterPref+cluster, "owned")
	for k, v := range p.labels {
		put(caTagLabelPrefix+k, v)
	}
	for _, t := range p.Taints {
		put(caTagTaintPrefix+t.Key, t.Value+":"+t.Effect)
	}
	switch {
	case p.SharingStrategy() != spec.SharingNone:
		notes = append(notes, fmt.Sprintf("cluster-autoscaler: the device plugin advertises pool %s's shared GPUs (%s); gpuctl writes no node-template/resources tag for them, so scaling from zero needs one node or that tag", p.Name, p.SharingStrategy()))
	case p.gpuCount > 0:
		put(caTagResourcePref+"nvidia.com/gpu", strconv.Itoa(p.gpuCount))
	}
	// EFA pods request vpc.amazonaws.com/efa (one per interface, the EFA
	// device plugin's resource): without it in the node template the
	// autoscaler sees no EFA on a pool at 0 nodes and never scales it up
	// for them.
	if n, ok := matrix.PoolEFAInterfaces(spec.ProviderEKS, p.NodePool); ok && n > 0 {
		put(caTagResourcePref+"vpc.amazonaws.com/efa", strconv.Itoa(n))
	}
	return notes
}

// eksKarpenter writes the Terraform of an EKS spec whose pools Karpenter
// launches (addons.autoscaler karpenter): no managed node group, so that
// Karpenter and EKS do not both own the pools' nodes. node_pools.tf says
// where each pool went and creates the cluster placement group of a pool
// that has one (spec.EKSPlacementGroup; Karpenter selects a group, it creates
// none); the one output is the discovery tag Karpenter's EC2NodeClasses
// select the subnets and security groups by.
func (g *gen) eksKarpenter() {
	g.requiredProviders("aws", "hashicorp/aws", AWSProviderVersion)
	variable(g.variables(), "cluster_name", "Name of the existing cluster the node pools join.", "string", cty.StringVal(g.s.ClusterName),
		[2]string{`length(var.cluster_name) > 0`, "cluster_name must not be empty."})
	body := g.nodePools()
	comment(body, "addons.autoscaler is karpenter: Karpenter launches the nodes of these pools from the NodePools and",
		"EC2NodeClasses of `gpuctl generate karpenter` (karpenter/<env>/karpenter.yaml), so no aws_eks_node_group is",
		"written for them (a node group beside a NodePool would be a second owner of the same GPU capacity).")
	for _, p := range g.ps {
		comment(body, fmt.Sprintf("Pool %s: Karpenter NodePool %s, EC2NodeClass %s.", p.Name, p.Name, p.Name))
		if spec.EKSPlacementGroup(p.NodePool) == spec.PlacementGroupCluster {
			// The EC2NodeClass selects it by this name
			// (helmgen.KarpenterPlacementGroup).
			g.eksPlacementGroup(body, p)
		}
		g.flush()
		body = g.nodePools()
	}
	o := g.outputs().AppendNewBlock("output", []string{"karpenter_discovery_tags"}).Body()
	o.SetAttributeValue("description", cty.StringVal("The tag the EC2NodeClasses select subnets and security groups by: put it on the cluster's node subnets and node security group."))
	o.SetAttributeRaw("value", expr(`{ "karpenter.sh/discovery" = var.cluster_name }`))
	g.outputs().AppendNewline()
}
