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
	os, ns := &old.Spec, &new.Spec
	op, np := &os.NodePools[oi], &ns.NodePools[ni]
	var out []Effect
	add := func(strategy, change, why string) { out = append(out, Effect{change, strategy, why}) }
	opDriver, npDriver := matrix.OperatorDriverOn(os, op), matrix.OperatorDriverOn(ns, np)
	if ns.Provider == spec.ProviderEKS {
		if op.OSImage != np.OSImage {
			add(StrategyReplace, fmt.Sprintf("ami_type: %s -> %s", orNone(op.OSImage), orNone(np.OSImage)),
				"ami_type forces a new node group (ForceNew in terraform-provider-aws, "+srcTFAWSNodeGroup+")")
		}
		if op.ReleaseVersion != np.ReleaseVersion {
			add(StrategySurge, fmt.Sprintf("release_version: %s -> %s", orNone(op.ReleaseVersion), orNone(np.ReleaseVersion)),
				"release_version updates in place (UpdateNodegroupVersion, "+srcTFAWSNodeGroup+"): EKS's node update replaces the nodes, update_config nodes at a time ("+srcEKSUpdateBehavior+")")
		}
		if os.KubernetesVersion != ns.KubernetesVersion {
			if np.OSImage == "CUSTOM" {
				add(StrategyNone, fmt.Sprintf("version: %s -> %s", orNone(os.KubernetesVersion), orNone(ns.KubernetesVersion)),
					"a CUSTOM AMI node group takes no version: its launch template's image is the version")
			} else {
				add(StrategySurge, fmt.Sprintf("version: %s -> %s", orNone(os.KubernetesVersion), orNone(ns.KubernetesVersion)),
					"version updates in place (UpdateNodegroupVersion, "+srcTFAWSNodeGroup+"): EKS's node update replaces the nodes, update_config nodes at a time ("+srcEKSUpdateBehavior+")")
			}
		}
		if op.GPU.Driver != np.GPU.Driver {
			switch {
			case npDriver:
				add(StrategyDriver, fmt.Sprintf("gpu.driver: %s -> %s", orNone(op.GPU.Driver), orNone(np.GPU.Driver)),
					"the GPU Operator installs the driver: its upgrade controller replaces the driver on the running nodes (driver.upgradePolicy); the node group does not change")
			case op.ReleaseVersion == np.ReleaseVersion:
				add(StrategyNone, fmt.Sprintf("gpu.driver: %s -> %s", orNone(op.GPU.Driver), orNone(np.GPU.Driver)),
					"the AMI release decides the driver and the node group does not change: set releaseVersion to a release that ships this driver")
			}
		}
	} else {
		oinst, ninst := matrix.GKEDriverInstallation(os.KubernetesVersion, op.GPU.Driver), matrix.GKEDriverInstallation(ns.KubernetesVersion, np.GPU.Driver)
		switch {
		case oinst != ninst:
			add(StrategyReplace, fmt.Sprintf("guest_accelerator.gpu_driver_installation_config.gpu_driver_version: %s -> %s", oinst, ninst),
				"guest_accelerator and its gpu_driver_installation_config force a new node pool (ForceNew in terraform-provider-google, "+srcTFGoogleNodeConfig+")")
		case op.GPU.Driver != np.GPU.Driver && ninst == "INSTALLATION_DISABLED":
			strategy, why := StrategyNone, "GKE's installation stays "+ninst+", so the pool's Terraform does not change; whoever installs the driver on the nodes must roll the new one"
			if npDriver {
				strategy, why = StrategyDriver, "GKE's installation stays "+ninst+" and the pool's Terraform does not change: the GPU Operator's upgrade controller replaces the driver on the running nodes (driver.upgradePolicy)"
			}
			add(strategy, fmt.Sprintf("gpu.driver: %s -> %s", orNone(op.GPU.Driver), orNone(np.GPU.Driver)), why)
		}
		if op.OSImage != np.OSImage {
			add(StrategySurge, fmt.Sprintf("node_config.image_type: %s -> %s", orNone(op.OSImage), orNone(np.OSImage)),
				"image_type updates in place (UpdateNodePool, "+srcTFGoogleNodeConfig+"): GKE recreates the nodes with the pool's upgrade_settings ("+srcGKEUpgradeSettings+")")
		}
		if os.KubernetesVersion != ns.KubernetesVersion {
			change := fmt.Sprintf("version: %s -> %s", orNone(os.KubernetesVersion), orNone(ns.KubernetesVersion))
			if matrix.GKEAutoUpgrade(ns, np) {
				add(StrategyCommand, change, "the pool auto-upgrades, so the generated Terraform ignores its version (lifecycle ignore_changes = [version]) and apply does not upgrade the nodes: the rollout's command does, with the pool's upgrade_settings ("+srcGcloudUpgrade+")")
			} else {
				add(StrategySurge, change, "version updates in place (UpdateNodePool, "+srcTFGoogleNodePool+"): GKE upgrades the nodes with the pool's upgrade_settings ("+srcGKEUpgradeSettings+")")
			}
		}
	}
	if ov, nv := os.Addons.GPUOperator.Driver.Version, ns.Addons.GPUOperator.Driver.Version; ov != nv && (opDriver || npDriver) && op.GPU.Driver == np.GPU.Driver {
		add(StrategyDriver, fmt.Sprintf("spec.addons.gpuOperator.driver.version: %s -> %s", orNone(ov), orNone(nv)),
			"the GPU Operator's upgrade controller replaces the driver on the running nodes (driver.upgradePolicy); the pool does not change")
	}
	return out
}
