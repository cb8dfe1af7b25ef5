package matrix

import (
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/spec"
)

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

// GKEDriverInstallation is the gpu_driver_installation_config
// gpu_driver_version the generated Terraform gives a GKE pool whose
// gpu.driver is driver on a cluster at kubernetesVersion: an exact version
// is installed by someone else (INSTALLATION_DISABLED), unset is what GKE
// installs by default for the version (GKEUnsetDriver;
// GPU_DRIVER_VERSION_UNSPECIFIED where that is unknown), DEFAULT and
// LATEST are themselves. hclgen writes it and plan compares it: the block
// forces the replacement of the pool (ForceNew in terraform-provider-google,
// google/services/container/node_config.go, guest_accelerator).
func GKEDriverInstallation(kubernetesVersion, driver string) string {
	switch {
	case exactVersion(driver):
		return gkeDisabled
	case driver == "":
		if d := GKEUnsetDriver(kubernetesVersion, false); d != "" {
			return d
		}
		return "GPU_DRIVER_VERSION_UNSPECIFIED"
	}
	return driver
}

// exactVersion reports whether s is a numeric dotted version of one to
// three components ("550.90.07"), as opposed to DEFAULT or LATEST.
func exactVersion(s string) bool {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if s == "" || len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 999999 {
			return false
		}
	}
	return true
}

// GKEAutoUpgrade is a GKE pool's management.auto_upgrade as the generated
// Terraform sets it: the spec's autoUpgrade where GKE honours it (no
// release channel), true otherwise (GKE enforces auto-upgrade on clusters
// in a release channel). With it on, the Terraform ignores the pool's
// version (lifecycle ignore_changes), so a kubernetesVersion change does
// not reach the nodes on apply.
// Source: https://cloud.google.com/kubernetes-engine/docs/how-to/node-auto-upgrades
func GKEAutoUpgrade(s *spec.Spec, p *spec.NodePool) bool {
	if rc := strings.ToUpper(s.ReleaseChannel); rc != "" && rc != "UNSPECIFIED" {
		return true
	}
	return p.AutoUpgrade == nil || *p.AutoUpgrade
}
