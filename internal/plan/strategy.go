package plan

import (
	"fmt"

	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Strategies: what applying a change does to a pool's nodes, as the
// generated Terraform and the provider make the platform do it.
const (
	// StrategySurge: terraform apply updates the pool in place and the
	// platform replaces its nodes in batches (GKE's surge upgrade with
	// upgrade_settings, EKS's node group update with update_config), in an
	// order it chooses, without pausing.
	StrategySurge = "surge-upgrade"
	// StrategyCommand: terraform apply does not touch the nodes (the
	// Terraform ignores the attribute); the rollout's Start command starts
	// the platform's surge upgrade.
	StrategyCommand = "upgrade-command"
	// StrategyReplace: the attribute forces a new resource, so terraform
	// apply destroys the pool and creates it again, all nodes at once; the
	// rollout instead adds a new pool beside the old one.
	StrategyReplace = "replace-pool"
	// StrategyDriver: the nodes stay; the GPU Operator replaces the driver
	// container on them.
	StrategyDriver = "driver-rollout"
	// StrategyNone: the change does not reach the nodes at all.
	StrategyNone = "no-node-change"
)

// strategyRank orders the strategies: a pool's rollout follows its
// strongest change.
var strategyRank = map[string]int{StrategyNone: 0, StrategyDriver: 1, StrategySurge: 2, StrategyCommand: 3, StrategyReplace: 4}

// Sources of what the providers do with each attribute.
const (
	srcTFGoogleNodeConfig = "https://github.com/hashicorp/terraform-provider-google/blob/main/google/services/container/node_config.go"
	srcTFGoogleNodePool   = "https://github.com/hashicorp/terraform-provider-google/blob/main/google/services/container/resource_container_node_pool.go"
	srcTFAWSNodeGroup     = "https://github.com/hashicorp/terraform-provider-aws/blob/main/internal/service/eks/node_group.go"
	srcEKSUpdateBehavior  = "https://docs.aws.amazon.com/eks/latest/userguide/managed-node-update-behavior.html"
	srcGKEUpgradeSettings = "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools#upgradesettings"
	srcGcloudUpgrade      = "https://cloud.google.com/sdk/gcloud/reference/container/clusters/upgrade"
)

// Effect is what one change does to a pool's nodes on apply.
type Effect struct {
	// Change is the change as the generated Terraform sees it.
	Change   string `json:"change"`
	Strategy string `json:"strategy"`
	// Why names the attribute, what the provider does with it, and the
	// source.
	Why string `json:"why"`
}

// strongest is the strategy of the strongest effect; StrategyNone for none.
func strongest(es []Effect) string {
	s := StrategyNone
	for _, e := range es {
		if strategyRank[e.Strategy] > strategyRank[s] {
			s = e.Strategy
		}
	}
	return s
}

// PoolEffects says what each node-level change from pool oi of old to
// pool ni of new does on apply of the generated Terraform, on provider.
func PoolEffects(old *spec.ClusterSpec, oi int, new *spec.ClusterSpec, ni int) []Effect {
	c := poolChange{os: &old.Spec, ns: &new.Spec}
	c.op, c.np = &c.os.NodePools[oi], &c.ns.NodePools[ni]
	c.opDriver, c.npDriver = matrix.OperatorDriverOn(c.os, c.op), matrix.OperatorDriverOn(c.ns, c.np)
	if c.ns.Provider == spec.ProviderEKS {
		c.eksNodeGroup()
		c.eksDriver()
	} else {
		c.gkeDriver()
		c.gkeNodePool()
	}
	if ov, nv := c.os.Addons.GPUOperator.Driver.Version, c.ns.Addons.GPUOperator.Driver.Version; ov != nv && (c.opDriver || c.npDriver) && c.op.GPU.Driver == c.np.GPU.Driver {
		c.add(StrategyDriver, fmt.Sprintf("spec.addons.gpuOperator.driver.version: %s -> %s", orNone(ov), orNone(nv)),
			"the GPU Operator's upgrade controller replaces the driver on the running nodes (driver.upgradePolicy); the pool does not change")
	}
	return c.out
}

// poolChange is one pool's change from old spec os (pool op) to new spec
// ns (pool np); opDriver and npDriver say whether the GPU Operator installs
// the pool's driver in each. out collects the effects.
type poolChange struct {
	os, ns             *spec.Spec
	op, np             *spec.NodePool
	opDriver, npDriver bool
	out                []Effect
}

func (c *poolChange) add(strategy, change, why string) {
	c.out = append(c.out, Effect{change, strategy, why})
}

// eksNodeGroup: the AMI type, release and Kubernetes version of an EKS node
// group.
func (c *poolChange) eksNodeGroup() {
	os, ns, op, np := c.os, c.ns, c.op, c.np
	if op.OSImage != np.OSImage {
		c.add(StrategyReplace, fmt.Sprintf("ami_type: %s -> %s", orNone(op.OSImage), orNone(np.OSImage)),
			"ami_type forces a new node group (ForceNew in terraform-provider-aws, "+srcTFAWSNodeGroup+")")
	}
	if op.ReleaseVersion != np.ReleaseVersion {
		c.add(StrategySurge, fmt.Sprintf("release_version: %s -> %s", orNone(op.ReleaseVersion), orNone(np.ReleaseVersion)),
			"release_version updates in place (UpdateNodegroupVersion, "+srcTFAWSNodeGroup+"): EKS's node update replaces the nodes, update_config nodes at a time ("+srcEKSUpdateBehavior+")")
	}
	if os.KubernetesVersion == ns.KubernetesVersion {
		return
	}
	change := fmt.Sprintf("version: %s -> %s", orNone(os.KubernetesVersion), orNone(ns.KubernetesVersion))
	if np.OSImage == "CUSTOM" {
		c.add(StrategyNone, change, "a CUSTOM AMI node group takes no version: its launch template's image is the version")
		return
	}
	c.add(StrategySurge, change,
		"version updates in place (UpdateNodegroupVersion, "+srcTFAWSNodeGroup+"): EKS's node update replaces the nodes, update_config nodes at a time ("+srcEKSUpdateBehavior+")")
}

// eksDriver: a new driver on EKS, which the GPU Operator or the AMI
// release installs.
func (c *poolChange) eksDriver() {
	op, np := c.op, c.np
	if op.GPU.Driver == np.GPU.Driver {
		return
	}
	change := fmt.Sprintf("gpu.driver: %s -> %s", orNone(op.GPU.Driver), orNone(np.GPU.Driver))
	switch {
	case c.npDriver:
		c.add(StrategyDriver, change,
			"the GPU Operator installs the driver: its upgrade controller replaces the driver on the running nodes (driver.upgradePolicy); the node group does not change")
	case op.ReleaseVersion == np.ReleaseVersion:
		c.add(StrategyNone, change,
			"the AMI release decides the driver and the node group does not change: set releaseVersion to a release that ships this driver")
	}
}

// gkeDriver: GKE's driver installation, and a new driver it does not
// install.
func (c *poolChange) gkeDriver() {
	os, ns, op, np := c.os, c.ns, c.op, c.np
	oinst, ninst := matrix.GKEDriverInstallation(os.KubernetesVersion, op.GPU.Driver), matrix.GKEDriverInstallation(ns.KubernetesVersion, np.GPU.Driver)
	switch {
	case oinst != ninst:
		c.add(StrategyReplace, fmt.Sprintf("guest_accelerator.gpu_driver_installation_config.gpu_driver_version: %s -> %s", oinst, ninst),
			"guest_accelerator and its gpu_driver_installation_config force a new node pool (ForceNew in terraform-provider-google, "+srcTFGoogleNodeConfig+")")
	case op.GPU.Driver != np.GPU.Driver && ninst == "INSTALLATION_DISABLED":
		strategy, why := StrategyNone, "GKE's installation stays "+ninst+", so the pool's Terraform does not change; whoever installs the driver on the nodes must roll the new one"
		if c.npDriver {
			strategy, why = StrategyDriver, "GKE's installation stays "+ninst+" and the pool's Terraform does not change: the GPU Operator's upgrade controller replaces the driver on the running nodes (driver.upgradePolicy)"
		}
		c.add(strategy, fmt.Sprintf("gpu.driver: %s -> %s", orNone(op.GPU.Driver), orNone(np.GPU.Driver)), why)
	}
}

// gkeNodePool: the image type and Kubernetes version of a GKE node pool.
func (c *poolChange) gkeNodePool() {
	os, ns, op, np := c.os, c.ns, c.op, c.np
	if op.OSImage != np.OSImage {
		c.add(StrategySurge, fmt.Sprintf("node_config.image_type: %s -> %s", orNone(op.OSImage), orNone(np.OSImage)),
			"image_type updates in place (UpdateNodePool, "+srcTFGoogleNodeConfig+"): GKE recreates the nodes with the pool's upgrade_settings ("+srcGKEUpgradeSettings+")")
	}
	if os.KubernetesVersion == ns.KubernetesVersion {
		return
	}
	change := fmt.Sprintf("version: %s -> %s", orNone(os.KubernetesVersion), orNone(ns.KubernetesVersion))
	if matrix.GKEAutoUpgrade(ns, np) {
		c.add(StrategyCommand, change, "the pool auto-upgrades, so the generated Terraform ignores its version (lifecycle ignore_changes = [version]) and apply does not upgrade the nodes: the rollout's command does, with the pool's upgrade_settings ("+srcGcloudUpgrade+")")
		return
	}
	c.add(StrategySurge, change, "version updates in place (UpdateNodePool, "+srcTFGoogleNodePool+"): GKE upgrades the nodes with the pool's upgrade_settings ("+srcGKEUpgradeSettings+")")
}
