package plan

import (
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// Node-pool labels the platforms put on every node of a pool.
const (
	LabelGKENodePool  = "cloud.google.com/gke-nodepool"
	LabelEKSNodeGroup = "eks.amazonaws.com/nodegroup"
	LabelZone         = "topology.kubernetes.io/zone"
)

// PoolLabel is the node label that names a node's pool on provider.
func PoolLabel(provider string) string {
	if provider == spec.ProviderEKS {
		return LabelEKSNodeGroup
	}
	return LabelGKENodePool
}

// Rollout is the plan of rolling a node-replacing change through one pool:
// a canary node, then batches that never take more than maxUnavailable
// nodes or more than one zone out of service at once, each followed by
// the acceptance gate. Steps run in order; a pipeline runs each step's
// action, then its gate, and stops at the first gate that does not pass.
type Rollout struct {
	Environment string   `json:"environment"`
	Pool        string   `json:"pool"`
	Reasons     []string `json:"reasons"`
	// Nodes is the pool's size the plan is made for; NodesFrom says where
	// it comes from: "cluster" (the live nodes) or "autoscaling.max".
	Nodes       int    `json:"nodes"`
	NodesFrom   string `json:"nodesFrom"`
	GPUsPerNode int    `json:"gpusPerNode"`
	// MaxUnavailable is the nodes the platform takes out of service at
	// once, as the generated Terraform sets it (GKE upgrade_settings,
	// EKS update_config) from rollout.maxUnavailable (MaxUnavailableSpec
	// as written; "1" when unset) or the role's default; MaxSurge the
	// nodes GKE adds beyond the pool meanwhile. A step replaces up to
	// MaxSurge + MaxUnavailable nodes.
	MaxUnavailable     int    `json:"maxUnavailable"`
	MaxUnavailableSpec string `json:"maxUnavailableSpec"`
	MaxSurge           int    `json:"maxSurge"`
	// Mechanism says who replaces the nodes and how the steps relate to
	// it; Prepare what must hold before step 1 for the gates' selectors
	// to mean what they say.
	Mechanism string      `json:"mechanism"`
	Prepare   []string    `json:"prepare"`
	Zones     []ZoneNodes `json:"zones"`
	Steps     []Step      `json:"steps"`
	OnFail    OnFail      `json:"onFail"`
}

// ZoneNodes is the pool's nodes in one zone ("" when the spec names none).
type ZoneNodes struct {
	Zone      string   `json:"zone"`
	Nodes     int      `json:"nodes"`
	NodeNames []string `json:"nodeNames"`
}

// Step is one canary or batch.
type Step struct {
	Step int `json:"step"`
	// Kind is "canary" or "batch".
	Kind  string `json:"kind"`
	Zone  string `json:"zone"`
	Nodes int    `json:"nodes"`
	// NodeNames are the live nodes of the step, when the plan read the
	// cluster.
	NodeNames []string `json:"nodeNames"`
	// CapacityNodes and CapacityGPUs are what stays in service while the
	// step's nodes are replaced (surge nodes replace before they drain).
	CapacityNodes int    `json:"capacityNodes"`
	CapacityGPUs  int    `json:"capacityGPUs"`
	Action        string `json:"action"`
	Gate          Gate   `json:"gate"`
}

// Gate is the acceptance run after a step: `gpuctl accept` of the step's
// nodes with the pool's expectations, stages and NCCL baseline.
type Gate struct {
	// Command is the argv of the gate.
	Command []string `json:"command"`
	// Selector selects the nodes the gate accepts when the plan has no
	// node names; SelectorMeans says which nodes those are.
	Selector      string   `json:"selector"`
	SelectorMeans string   `json:"selectorMeans"`
	Stages        []string `json:"stages"`
	// Baseline and MinBusBandwidthGBps are the NCCL baseline the nccl
	// stage judges against ("" when gpuctl has none for the GPU).
	Baseline            string  `json:"baseline,omitempty"`
	MinBusBandwidthGBps float64 `json:"minBusBandwidthGBps,omitempty"`
	// Pass is what lets the rollout go on.
	Pass string `json:"pass"`
}

// OnFail is what to do when a gate does not pass.
type OnFail struct {
	Stop     string   `json:"stop"`
	Keep     string   `json:"keep"`
	Rollback []string `json:"rollback"`
}

// RolloutInput is what PlanRollout needs about one pool.
type RolloutInput struct {
	Environment string
	SpecFile    string
	Provider    string
	Pool        Pool
	// MaxUnavailable is the pool's rollout.maxUnavailable (one when unset);
	// Upgrade how the platform replaces the nodes (matrix.PoolUpgrade).
	MaxUnavailable spec.IntOrPercent
	Upgrade        matrix.Upgrade
	// Reasons are the node-replacing changes; Rollback the steps back.
	Reasons  []string
	Rollback []string
	// Live are the pool's nodes per zone from the cluster; nil: the plan
	// spreads autoscaling.max over the spec's zones.
	Live []ZoneNodes
}

// PlanRollout builds the rollout of one pool.
//
// The platform replaces the nodes once the change is applied: GKE by a
// surge upgrade, up to maxSurge + maxUnavailable nodes at a time in an
// order it chooses; EKS by a node group update, up to maxUnavailable
// nodes at a time (matrix.PoolUpgrade has the sources). The steps are the
// checkpoints of that replacement, a step never larger than what the
// platform replaces at once and never across zones: after each, the gate
// accepts the nodes of the step's zone that the rollout replaced.
//
// Without node names a gate selects those nodes by their labels: the
// pool's, the zone's, and no gpuctl.dev/accept label. `accept --mark`
// writes that label (pass, fail or inconclusive); a node the platform
// creates carries none. So the pool's nodes are marked before step 1
// (Prepare; with the cluster read the gates name the nodes instead) and every gate marks the nodes it accepted (--mark), and each
// gate then selects exactly the nodes replaced since the last one.
func PlanRollout(in RolloutInput) Rollout {
	p := in.Pool
	r := Rollout{Environment: in.Environment, Pool: p.Name, Reasons: nonNil(in.Reasons), GPUsPerNode: p.GPUsPerNode,
		MaxUnavailableSpec: in.MaxUnavailable.String(), MaxSurge: in.Upgrade.MaxSurge, Steps: []Step{}}
	if in.Live != nil {
		r.NodesFrom, r.Zones = "cluster", in.Live
	} else {
		r.NodesFrom, r.Zones = "autoscaling.max", spread(max(p.MaxNodes, p.MinNodes), p.Zones)
	}
	for _, z := range r.Zones {
		r.Nodes += z.Nodes
	}
	r.MaxUnavailable = in.Upgrade.Unavailable(r.Nodes)
	batch := in.Upgrade.Parallel(r.Nodes)
	poolSel := PoolLabel(in.Provider) + "=" + p.Name
	settings := fmt.Sprintf("update_config max_unavailable %d", r.MaxUnavailable)
	if in.Upgrade.MaxUnavailablePercent > 0 {
		settings = fmt.Sprintf("update_config max_unavailable_percentage %d: %d of %d node(s)", in.Upgrade.MaxUnavailablePercent, r.MaxUnavailable, r.Nodes)
	}
	platform := "EKS's node group update"
	stop := "gpuctl knows no call that pauses an EKS update, so on a FAIL the rollback replaces the changed nodes again."
	var cancel []string
	if in.Provider != spec.ProviderEKS {
		settings = fmt.Sprintf("upgrade_settings max_surge %d, max_unavailable %d", r.MaxSurge, r.MaxUnavailable)
		platform = "GKE's surge upgrade"
		stop = "on a FAIL cancel the upgrade before it takes more nodes."
		// Source: https://cloud.google.com/sdk/gcloud/reference/container/node-pools/rollback
		cancel = []string{fmt.Sprintf("cancel GKE's upgrade operation of pool %s (gcloud container operations cancel OPERATION), then gcloud container node-pools rollback %s --cluster CLUSTER: it reverts a canceled or failed upgrade", p.Name, p.Name)}
	}
	r.Mechanism = fmt.Sprintf("%s replaces the pool's nodes once the change is applied (%s): up to %d node(s) at a time, in an order it chooses, without pausing between steps. "+
		"The steps are the checkpoints of that replacement, one zone at a time: run each step's gate as soon as its nodes are Ready on the new configuration; %s",
		platform, settings, batch, stop)
	r.Prepare = []string{}
	if in.Live == nil {
		r.Prepare = append(r.Prepare, fmt.Sprintf("every node of pool %s carries the %s label before step 1 (gpuctl accept -l %s --mark ...): the gates select the nodes without it, the ones the rollout created", p.Name, accept.LabelAccept, poolSel))
	}
	step := func(kind string, z ZoneNodes, from, n int) {
		out := max(n-r.MaxSurge, 0)
		st := Step{Step: len(r.Steps) + 1, Kind: kind, Zone: z.Zone, Nodes: n, NodeNames: []string{},
			CapacityNodes: r.Nodes - out, CapacityGPUs: (r.Nodes - out) * p.GPUsPerNode}
		if len(z.NodeNames) >= from+n {
			st.NodeNames = z.NodeNames[from : from+n]
		}
		where := "the pool"
		if z.Zone != "" {
			where = "zone " + z.Zone
		}
		st.Action = fmt.Sprintf("%s replaces %d node(s) of pool %s in %s with the new configuration (%s); the step is done when they are Ready", platform, n, p.Name, where, strings.Join(r.Reasons, "; "))
		sel := poolSel
		if z.Zone != "" {
			sel += "," + LabelZone + "=" + z.Zone
		}
		sel += ",!" + accept.LabelAccept
		means := fmt.Sprintf("the nodes of pool %s in %s without a %s label: those created since the last gate marked its nodes (the old ones were marked before step 1)", p.Name, where, accept.LabelAccept)
		cmd := []string{"gpuctl", "accept"}
		if len(st.NodeNames) > 0 {
			cmd = append(cmd, st.NodeNames...)
			means = "the step's nodes by name, read from the cluster; the selector is what selects them without names"
		} else {
			cmd = append(cmd, "-l", sel)
		}
		cmd = append(cmd, "--spec", in.SpecFile)
		if in.Environment != "" {
			cmd = append(cmd, "--env", in.Environment)
		}
		cmd = append(cmd, "--pool", p.Name, "--mark")
		st.Gate = Gate{Command: cmd, Selector: sel, SelectorMeans: means, Stages: p.Acceptance.Stages, Baseline: p.Acceptance.Baseline,
			MinBusBandwidthGBps: p.Acceptance.MinBusBandwidthGBps,
			Pass:                "every accepted node PASS (exit 0); FAIL (exit 3) or INCONCLUSIVE (exit 4) stops the rollout"}
		r.Steps = append(r.Steps, st)
	}
	canary := -1
	for i, z := range r.Zones {
		if z.Nodes > 0 {
			canary = i
			step("canary", z, 0, 1)
			break
		}
	}
	for i, z := range r.Zones {
		done := 0
		if i == canary {
			done = 1
		}
		for done < z.Nodes {
			n := min(batch, z.Nodes-done)
			step("batch", z, done, n)
			done += n
		}
	}
	r.OnFail = OnFail{
		Stop: "stop: start no further step; the gate's record names the failed stage",
		Keep: "keep every node not yet replaced in service on the old configuration; cordon the failed node(s) and keep their evidence",
		Rollback: append(append(cancel, in.Rollback...),
			"replace the nodes changed so far with the old configuration, a batch at a time, and accept them with the same gate"),
	}
	return r
}

// spread spreads n nodes over zones, the first zones taking the remainder
// (as a regional pool balances them).
func spread(n int, zones []string) []ZoneNodes {
	if len(zones) == 0 {
		zones = []string{""}
	}
	out := make([]ZoneNodes, len(zones))
	for i, z := range zones {
		out[i] = ZoneNodes{Zone: z, Nodes: n / len(zones), NodeNames: []string{}}
		if i < n%len(zones) {
			out[i].Nodes++
		}
	}
	return out
}
