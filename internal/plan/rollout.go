package plan

import (
	"fmt"
	"strings"

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
	// MaxUnavailable is the node count rollout.maxUnavailable allows for
	// Nodes (MaxUnavailableSpec as written; "1" when unset).
	MaxUnavailable     int         `json:"maxUnavailable"`
	MaxUnavailableSpec string      `json:"maxUnavailableSpec"`
	Zones              []ZoneNodes `json:"zones"`
	Steps              []Step      `json:"steps"`
	OnFail             OnFail      `json:"onFail"`
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
	// step's nodes are replaced.
	CapacityNodes int    `json:"capacityNodes"`
	CapacityGPUs  int    `json:"capacityGPUs"`
	Action        string `json:"action"`
	Gate          Gate   `json:"gate"`
}

// Gate is the acceptance run after a step: `gpuctl accept` of the step's
// nodes with the pool's expectations, stages and NCCL baseline.
type Gate struct {
	// Command is the argv of the gate.
	Command  []string `json:"command"`
	Selector string   `json:"selector"`
	Stages   []string `json:"stages"`
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
	// MaxUnavailable is the pool's rollout.maxUnavailable (one when unset).
	MaxUnavailable spec.IntOrPercent
	// Reasons are the node-replacing changes; Rollback the steps back.
	Reasons  []string
	Rollback []string
	// Live are the pool's nodes per zone from the cluster; nil: the plan
	// spreads autoscaling.max over the spec's zones.
	Live []ZoneNodes
}

// PlanRollout builds the rollout of one pool.
func PlanRollout(in RolloutInput) Rollout {
	p := in.Pool
	r := Rollout{Environment: in.Environment, Pool: p.Name, Reasons: nonNil(in.Reasons), GPUsPerNode: p.GPUsPerNode,
		MaxUnavailableSpec: in.MaxUnavailable.String(), Steps: []Step{}}
	if in.Live != nil {
		r.NodesFrom, r.Zones = "cluster", in.Live
	} else {
		r.NodesFrom, r.Zones = "autoscaling.max", spread(max(p.MaxNodes, p.MinNodes), p.Zones)
	}
	for _, z := range r.Zones {
		r.Nodes += z.Nodes
	}
	r.MaxUnavailable = in.MaxUnavailable.Of(r.Nodes)
	poolSel := PoolLabel(in.Provider) + "=" + p.Name
	step := func(kind string, z ZoneNodes, from, n int) {
		st := Step{Step: len(r.Steps) + 1, Kind: kind, Zone: z.Zone, Nodes: n, NodeNames: []string{},
			CapacityNodes: r.Nodes - n, CapacityGPUs: (r.Nodes - n) * p.GPUsPerNode}
		if len(z.NodeNames) >= from+n {
			st.NodeNames = z.NodeNames[from : from+n]
		}
		where := "the pool"
		if z.Zone != "" {
			where = "zone " + z.Zone
		}
		st.Action = fmt.Sprintf("cordon and drain %d node(s) of pool %s in %s, replace them with the new configuration (%s)", n, p.Name, where, strings.Join(r.Reasons, "; "))
		sel := poolSel
		if z.Zone != "" {
			sel += "," + LabelZone + "=" + z.Zone
		}
		cmd := []string{"gpuctl", "accept"}
		if len(st.NodeNames) > 0 {
			cmd = append(cmd, st.NodeNames...)
		} else {
			cmd = append(cmd, "-l", sel)
		}
		cmd = append(cmd, "--spec", in.SpecFile)
		if in.Environment != "" {
			cmd = append(cmd, "--env", in.Environment)
		}
		cmd = append(cmd, "--pool", p.Name)
		st.Gate = Gate{Command: cmd, Selector: sel, Stages: p.Acceptance.Stages, Baseline: p.Acceptance.Baseline,
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
			n := min(r.MaxUnavailable, z.Nodes-done)
			step("batch", z, done, n)
			done += n
		}
	}
	r.OnFail = OnFail{
		Stop: "stop: start no further step; the gate's record names the failed stage",
		Keep: "keep every node not yet replaced in service on the old configuration; cordon the failed node(s) and keep their evidence",
		Rollback: append(nonNil(in.Rollback),
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
