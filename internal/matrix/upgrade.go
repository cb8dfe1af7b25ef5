package matrix

import "github.com/gpuctl/gpuctl/internal/spec"

// Node upgrades, as the platforms run them when a pool's nodes must be
// replaced (driver, Kubernetes version, node image).
//
// GKE (surge upgrade, upgrade_settings): maxSurge is how many nodes GKE
// may create beyond the pool's size, maxUnavailable how many may be out of
// service at once; maxSurge + maxUnavailable nodes are upgraded at the same
// time, in an order GKE chooses. Both take a number of nodes, no
// percentage.
// Sources: https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools#upgradesettings,
// https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-upgrades#node_pool_upgrades
//
// EKS (managed node group update_config): maxUnavailable nodes (at most
// 100) or maxUnavailablePercentage percent of the group (1 to 100, at most
// 100 nodes at once) are updated in parallel.
// Source: https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-eks-nodegroup-updateconfig.html
const (
	// EKSMaxUnavailable is the most nodes an EKS node group update takes
	// out of service at once.
	EKSMaxUnavailable = 100
	srcEKSUpdate      = "https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-eks-nodegroup-updateconfig.html"
)

// Upgrade is how the platform replaces a pool's nodes: what hclgen writes
// (GKE upgrade_settings, EKS update_config) and what plan's rollout steps
// follow.
type Upgrade struct {
	// MaxSurge is the nodes GKE may add beyond the pool during an upgrade
	// (0 on EKS, where gpuctl sets no surge).
	MaxSurge int
	// MaxUnavailable is the nodes out of service at once; with
	// MaxUnavailablePercent set (EKS only) it is 0 and the platform
	// computes the count from the group's size at update time.
	MaxUnavailable        int
	MaxUnavailablePercent int
	// FromSpec is true when nodePools[].rollout.maxUnavailable set the
	// limit; false for gpuctl's default of the pool's role.
	FromSpec bool
}

// Parallel is how many nodes the platform replaces at once in a pool of
// nodes nodes: maxSurge + maxUnavailable (a percentage of nodes rounded
// down, at least one, at most EKSMaxUnavailable), at least one.
func (u Upgrade) Parallel(nodes int) int {
	return max(u.MaxSurge+u.Unavailable(nodes), 1)
}

// Unavailable is the nodes out of service at once in a pool of nodes
// nodes.
func (u Upgrade) Unavailable(nodes int) int {
	if u.MaxUnavailablePercent > 0 {
		return min(spec.IntOrPercent{Value: u.MaxUnavailablePercent, Percent: true}.Of(nodes), EKSMaxUnavailable)
	}
	return u.MaxUnavailable
}

// PoolUpgrade is the node upgrade of pool p on provider.
//
// Without rollout.maxUnavailable a training pool is replaced one node at a
// time without a surge node (its GPUs are scarce: a surge node may find no
// capacity), an inference pool on GKE one surge node at a time with none
// out of service, an EKS node group one node at a time. With it, the
// limit is the spec's: on GKE a percentage is taken of autoscaling.max
// (GKE takes a count), on EKS it is written as a percentage; GKE's surge
// stays the role's (none for training, one otherwise).
func PoolUpgrade(provider string, p *spec.NodePool) Upgrade {
	var set *spec.IntOrPercent
	if p.Rollout != nil {
		set = p.Rollout.MaxUnavailable
	}
	if provider == spec.ProviderEKS {
		switch {
		case set == nil:
			return Upgrade{MaxUnavailable: 1}
		case set.Percent:
			return Upgrade{MaxUnavailablePercent: set.Value, FromSpec: true}
		default:
			return Upgrade{MaxUnavailable: min(set.Value, EKSMaxUnavailable), FromSpec: true}
		}
	}
	u := Upgrade{MaxSurge: 1}
	if p.Role == spec.RoleTraining {
		u = Upgrade{MaxUnavailable: 1}
	}
	if set != nil {
		u.MaxUnavailable, u.FromSpec = set.Of(max(p.Autoscaling.Max, p.Autoscaling.Min)), true
	}
	return u
}
