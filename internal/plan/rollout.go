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

// Rollout is the plan of rolling a node-level change through one pool, as
// the platform really carries it out (Strategy, one per pool: its
// strongest change's):
//
//   - surge-upgrade, upgrade-command, driver-rollout: the platform (or the
//     GPU Operator) replaces the nodes in place, in batches it sizes from
//     the pool's upgrade settings, in an order it chooses, without pausing.
//     The steps are checkpoints (Controlled false): observations of how
//     far it got, each a gate that accepts the nodes replaced since the
//     last one; a FAIL stops nothing by itself (OnFail says what does).
//   - replace-pool: applying the change as it is destroys the pool and
//     creates it again, all nodes at once (Warnings says so). The steps
//     instead add a new pool beside the old one: a one-node canary, the
//     rest, then workloads move and the old pool goes; the command
//     sequence controls each step (Controlled true) and capacity never
//     drops.
type Rollout struct {
	Environment string   `json:"environment"`
	Pool        string   `json:"pool"`
	Reasons     []string `json:"reasons"`
	// Strategy is what applying the change does (Strategy* constants);
	// Effects what each change does and why, with the provider's source.
	Strategy string   `json:"strategy"`
	Effects  []Effect `json:"effects"`
	// Nodes is the pool's size the plan is made for; NodesFrom says where
	// it comes from: "cluster" (the live nodes) or "autoscaling.max".
	Nodes       int    `json:"nodes"`
	NodesFrom   string `json:"nodesFrom"`
	GPUsPerNode int    `json:"gpusPerNode"`
	// MaxUnavailable is the nodes the platform takes out of service at
	// once, as the generated Terraform sets it (GKE upgrade_settings,
	// EKS update_config) from rollout.maxUnavailable (MaxUnavailableSpec
	// as written; "1" when unset) or the role's default, never more than
	// the pool's nodes; MaxSurge the nodes GKE adds beyond the pool
	// meanwhile. The platform replaces up to MaxSurge + MaxUnavailable
	// nodes at a time.
	MaxUnavailable     int    `json:"maxUnavailable"`
	MaxUnavailableSpec string `json:"maxUnavailableSpec"`
	MaxSurge           int    `json:"maxSurge"`
	// Mechanism says who replaces the nodes and how the steps relate to
	// it; Prepare what must hold before step 1 for the gates' selectors
	// to mean what they say; Start the commands that start the change
	// (after Prepare); Warnings what the reviewer must know (capacity
	// that drops to 0, a limit larger than the pool).
	Mechanism string      `json:"mechanism"`
	Prepare   []string    `json:"prepare"`
	Start     []string    `json:"start"`
	Warnings  []string    `json:"warnings"`
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

// Step kinds.
const (
	StepCanary = "canary" // a new pool's first node (replace-pool)
	StepBatch  = "batch"  // nodes replaced or added
	StepMove   = "move"   // workloads leave the old pool (replace-pool)
	StepRemove = "remove" // the old pool goes (replace-pool)
)

// Step is one step of a rollout.
type Step struct {
	Step int `json:"step"`
	// Kind is canary, batch, move or remove.
	Kind string `json:"kind"`
	// Controlled is true when the step's Action starts it (the pipeline
	// decides when it happens), false when the step is a checkpoint of
	// the platform's own progress.
	Controlled bool   `json:"controlled"`
	Zone       string `json:"zone"`
	Nodes      int    `json:"nodes"`
	// NodeNames are the live nodes of the step, when known.
	NodeNames []string `json:"nodeNames"`
	// CapacityNodes and CapacityGPUs are the pool's nodes that stay in
	// service during the step (the old pool's while a new one is
	// accepted; surge nodes replace before they drain).
	CapacityNodes int    `json:"capacityNodes"`
	CapacityGPUs  int    `json:"capacityGPUs"`
	Action        string `json:"action"`
	Gate          Gate   `json:"gate"`
}

// Gate is the acceptance run after a step: `gpuctl accept` of the step's
// nodes with the pool's expectations, stages and NCCL baseline (Kind
// accept), or, for a pool with rollout.gate sweep, the in-cluster sweep's
// verdicts on them (Kind sweep: no Command; Pass holds each node's
// GPUAccepted condition to the step's start). A step without acceptance
// (move, remove) has an empty Kind, Command and Selector.
type Gate struct {
	// Kind is accept, sweep or "" (no acceptance).
	Kind string `json:"kind"`
	// Command is the argv of the gate.
	Command []string `json:"command"`
	// Selector selects the nodes the gate accepts; SelectorMeans says
	// which nodes those are.
	Selector      string   `json:"selector"`
	SelectorMeans string   `json:"selectorMeans"`
	Stages        []string `json:"stages"`
	// Baseline and MinBusBandwidthGBps are the NCCL baseline the nccl
	// stage judges against ("" when gpuctl has none for the GPU).
	Baseline            string  `json:"baseline,omitempty"`
	MinBusBandwidthGBps float64 `json:"minBusBandwidthGBps,omitempty"`
	// Pass is what lets the rollout go on.
	Pass string `json:"pass"`
	// Condition is the Node condition a sweep gate waits for
	// ("GPUAccepted=True"); SweepSelector the sweep's own selector,
	// SweepNamespace its namespace, Trigger the command that starts a
	// sweep now rather than at the CronJob's next run (STEP: a name of
	// the pipeline's). Sweep gates only.
	Condition      string   `json:"condition,omitempty"`
	SweepSelector  string   `json:"sweepSelector,omitempty"`
	SweepNamespace string   `json:"sweepNamespace,omitempty"`
	Trigger        []string `json:"trigger,omitempty"`
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
	// SpecFile is the new spec, FromFile the old one ("" when the change
	// is drift against the cluster).
	SpecFile string
	FromFile string
	Provider string
	// ClusterName and Location (GKE: region or zone) name the cluster in
	// the platform's commands.
	ClusterName string
	Location    string
	// KubernetesVersion is the new spec's.
	KubernetesVersion string
	Pool              Pool
	// MaxUnavailable is the pool's rollout.maxUnavailable (one when unset);
	// Upgrade how the platform replaces the nodes (matrix.PoolUpgrade).
	MaxUnavailable spec.IntOrPercent
	Upgrade        matrix.Upgrade
	// Reasons are the node-level changes; Effects what each does on apply
	// (PoolEffects); Rollback the steps back.
	Reasons  []string
	Effects  []Effect
	Rollback []string
	// Live are the pool's nodes per zone from the cluster; nil: the plan
	// spreads autoscaling.max over the spec's zones.
	Live []ZoneNodes
	// Gate is the pool's rollout.gate (GateAccept when empty); with
	// GateSweep, Sweep is the environment's spec.acceptance and
	// SweepSelector the selector its sweep runs with.
	Gate          string
	Sweep         *spec.Acceptance
	SweepSelector string
}

// sweep reports whether the rollout's gates are the sweep's.
func (in RolloutInput) sweep() bool { return in.Gate == GateSweep }

// NewPoolSuffix names the pool a replace-pool rollout adds beside the old
// one.
const NewPoolSuffix = "-next"

// PlanRollout builds the rollout of one pool (see Rollout).
//
// Gates select the nodes to accept by their labels: the pool's, and no
// gpuctl.dev/accept label. `accept --mark` writes that label (pass, fail
// or inconclusive); a node the platform creates carries none. So for an
// in-place rollout the pool's nodes are marked before the change starts
// (Prepare, with the cheapest stage that marks: kubernetes, which reads
// the API only), every gate marks the nodes it accepted, and each gate
// then selects exactly the nodes created since the last one.
func PlanRollout(in RolloutInput) Rollout {
	p := in.Pool
	r := Rollout{Environment: in.Environment, Pool: p.Name, Reasons: nonNil(in.Reasons), Strategy: strongest(in.Effects),
		Effects: append([]Effect{}, in.Effects...), GPUsPerNode: p.GPUsPerNode, MaxUnavailableSpec: in.MaxUnavailable.String(),
		MaxSurge: in.Upgrade.MaxSurge, Prepare: []string{}, Start: []string{}, Warnings: []string{}, Steps: []Step{}}
	if len(in.Effects) == 0 {
		r.Strategy = StrategySurge
	}
	if in.Live != nil {
		r.NodesFrom, r.Zones = "cluster", in.Live
	} else {
		r.NodesFrom, r.Zones = "autoscaling.max", spread(max(p.MaxNodes, p.MinNodes), p.Zones)
	}
	for _, z := range r.Zones {
		r.Nodes += z.Nodes
	}
	r.MaxUnavailable = in.Upgrade.Unavailable(r.Nodes)
	if r.MaxUnavailable > r.Nodes {
		r.Warnings = append(r.Warnings, fmt.Sprintf("maxUnavailable %d is more than the pool's %d node(s): the platform can take every node out of service at once", r.MaxUnavailable, r.Nodes))
		r.MaxUnavailable = r.Nodes
	}
	if r.Strategy == StrategyReplace {
		planReplace(&r, in)
	} else {
		planInPlace(&r, in)
	}
	if w := sweepCoverWarning(in, r.Strategy == StrategyReplace); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	for _, s := range r.Steps {
		if s.CapacityNodes == 0 && r.Nodes > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("capacity drops to 0 nodes during step %d: pool %s has %d node(s) and the step takes them all out of service", s.Step, p.Name, r.Nodes))
			break
		}
	}
	return r
}

// gate is the acceptance gate of nodes selected by sel, marked; with
// rollout.gate sweep, the sweep's gate of pool's nodes (poolSel).
func gate(in RolloutInput, pool, sel, means, poolSel string) Gate {
	if in.sweep() {
		return sweepGate(in, poolSel, sweepMeans(pool))
	}
	p := in.Pool
	cmd := []string{"gpuctl", "accept", "-l", sel, "--spec", in.SpecFile}
	if in.Environment != "" {
		cmd = append(cmd, "--env", in.Environment)
	}
	cmd = append(cmd, "--pool", pool, "--mark")
	return Gate{Kind: GateAccept, Command: cmd, Selector: sel, SelectorMeans: means, Stages: p.Acceptance.Stages, Baseline: p.Acceptance.Baseline,
		MinBusBandwidthGBps: p.Acceptance.MinBusBandwidthGBps,
		Pass:                "every accepted node PASS (exit 0); FAIL (exit 3) or INCONCLUSIVE (exit 4) stops the rollout"}
}

// gcloudWhere is the --cluster and --location of GKE's commands.
func gcloudWhere(in RolloutInput) string {
	return fmt.Sprintf("--cluster %s --location %s", ShellQuote(orPlaceholder(in.ClusterName, "CLUSTER")), ShellQuote(orPlaceholder(in.Location, "LOCATION")))
}

func orPlaceholder(s, p string) string {
	if s == "" {
		return p
	}
	return s
}

// planInPlace: the platform replaces the nodes itself; the steps are
// checkpoints of its progress.
func planInPlace(r *Rollout, in RolloutInput) {
	p := in.Pool
	poolSel := PoolLabel(in.Provider) + "=" + p.Name
	batch := min(max(r.MaxSurge+r.MaxUnavailable, 1), max(r.Nodes, 1))
	u := inPlaceUpgrader(r, in)
	if r.Strategy == StrategyDriver {
		// The operator's upgrade controller sets its own pace.
		batch, r.MaxSurge, r.MaxUnavailable = 1, 0, min(1, r.Nodes)
	}
	r.Mechanism = fmt.Sprintf("%s replaces the pool's nodes (%s): up to %d node(s) at a time, in an order and over zones it chooses, without pausing between batches. "+
		"The steps are checkpoints of that replacement, not steps gpuctl or the pipeline controls: run each step's gate as soon as that many more nodes are Ready on the new configuration. On a FAIL: %s",
		u.platform, u.settings, batch, u.stop)
	inPlacePrepare(r, in, poolSel)
	if r.Strategy != StrategyCommand || hasStrategy(r.Effects, StrategySurge) || hasStrategy(r.Effects, StrategyDriver) {
		what := "terraform apply of the generated Terraform: " + u.platform + " starts replacing the nodes"
		if r.Strategy == StrategyDriver {
			what = "apply the generated GPU Operator values (helm upgrade): " + u.platform + " starts replacing the driver"
		}
		r.Start = append([]string{"gpuctl generate all, then " + what}, r.Start...)
	}
	inPlaceSteps(r, in, batch, u.platform, poolSel)
	r.OnFail = OnFail{
		Stop: "stop: " + u.stop + " The gate's record names the failed stage.",
		Keep: "keep every node not yet replaced in service on the old configuration; cordon the failed node(s) (kubectl cordon NODE) and keep their evidence",
		Rollback: append(append(u.cancel, inPlaceRollback(r, in)...),
			"the nodes changed so far are replaced again with the old configuration the same way, a batch at a time, and accepted with the same gate"),
	}
	if in.sweep() {
		r.OnFail.Keep = sweepKeep
	}
}

// upgrader is what replaces a pool's nodes in place: its name, the
// settings that pace it, how to stop it and the commands that cancel it.
type upgrader struct {
	platform, settings, stop string
	cancel                   []string
}

// inPlaceUpgrader is the upgrader of rollout r: the GPU Operator's driver
// upgrade controller, EKS's node group update or GKE's surge upgrade.
func inPlaceUpgrader(r *Rollout, in RolloutInput) upgrader {
	switch {
	case r.Strategy == StrategyDriver:
		return upgrader{platform: "The GPU Operator's driver upgrade controller",
			settings: "driver.upgradePolicy of the operator's values; the nodes stay, the driver container is replaced; the steps assume one node at a time",
			stop:     "set driver.upgradePolicy.autoUpgrade false in the operator's values so it takes no more nodes."}
	case in.Provider == spec.ProviderEKS:
		settings := fmt.Sprintf("update_config max_unavailable %d", r.MaxUnavailable)
		if in.Upgrade.MaxUnavailablePercent > 0 {
			settings = fmt.Sprintf("update_config max_unavailable_percentage %d: %d of %d node(s)", in.Upgrade.MaxUnavailablePercent, r.MaxUnavailable, r.Nodes)
		}
		return upgrader{platform: "EKS's node group update",
			settings: settings + "; it first launches new nodes in the zones of those it replaces (" + srcEKSUpdateBehavior + "), so the capacity shown is the least",
			stop:     "EKS has no call that pauses a node group update: the update goes on, and the rollback replaces the changed nodes again."}
	}
	// Sources: https://cloud.google.com/sdk/gcloud/reference/container/operations/cancel,
	// https://cloud.google.com/sdk/gcloud/reference/container/node-pools/rollback
	loc := ShellQuote(orPlaceholder(in.Location, "LOCATION"))
	return upgrader{platform: "GKE's surge upgrade",
		settings: fmt.Sprintf("upgrade_settings max_surge %d, max_unavailable %d", r.MaxSurge, r.MaxUnavailable),
		stop:     "cancel GKE's upgrade operation before it takes more nodes (the commands below).",
		cancel: []string{
			fmt.Sprintf("gcloud container operations list --location %s --filter 'status=RUNNING AND targetLink~nodePools/%s'", loc, in.Pool.Name),
			fmt.Sprintf("gcloud container operations cancel OPERATION --location %s", loc),
			fmt.Sprintf("gcloud container node-pools rollback %s %s (reverts the canceled upgrade's nodes)", in.Pool.Name, gcloudWhere(in)),
		}}
}

// inPlacePrepare: mark the old nodes (selected by poolSel) so the gates
// tell them from the new ones; on GKE, where a command upgrades the pool,
// upgrade the control plane first and start with that command.
func inPlacePrepare(r *Rollout, in RolloutInput, poolSel string) {
	p := in.Pool
	markSpec := in.FromFile
	if markSpec == "" {
		markSpec = in.SpecFile
	}
	env := ""
	if in.Environment != "" {
		env = " --env " + ShellQuote(in.Environment)
	}
	if in.sweep() {
		r.Prepare = append(r.Prepare, sweepPrepare(in, p.Name))
	} else {
		r.Prepare = append(r.Prepare, fmt.Sprintf("mark every node of pool %s before the change starts: gpuctl accept -l %s --spec %s%s --pool %s --stages kubernetes --mark. "+
			"The kubernetes stage reads the API only (no GPU Job), so the %s label it leaves tells the old nodes from the new ones; it does not say they passed full acceptance",
			p.Name, ShellQuote(poolSel), ShellQuote(markSpec), env, p.Name, accept.LabelAccept))
	}
	if in.Provider == spec.ProviderEKS || !hasStrategy(r.Effects, StrategyCommand) {
		return
	}
	v := ShellQuote(orPlaceholder(in.KubernetesVersion, "VERSION"))
	r.Prepare = append(r.Prepare, fmt.Sprintf("the control plane runs %s or later (nodes never run a newer version than the control plane): gcloud container clusters upgrade %s --master --cluster-version %s --location %s",
		orPlaceholder(in.KubernetesVersion, "VERSION"), ShellQuote(orPlaceholder(in.ClusterName, "CLUSTER")), v, ShellQuote(orPlaceholder(in.Location, "LOCATION"))))
	r.Start = append(r.Start, fmt.Sprintf("gcloud container clusters upgrade %s --node-pool %s --cluster-version %s --location %s",
		ShellQuote(orPlaceholder(in.ClusterName, "CLUSTER")), p.Name, v, ShellQuote(orPlaceholder(in.Location, "LOCATION"))))
}

// inPlaceRollback is how to undo the rollout once the platform finished:
// the input's rollback, except that the platform does not downgrade a
// node's minor Kubernetes version.
func inPlaceRollback(r *Rollout, in RolloutInput) []string {
	if hasStrategy(r.Effects, StrategyCommand) || hasStrategy(r.Effects, StrategySurge) && strings.Contains(strings.Join(in.Reasons, ";"), "kubernetesVersion") {
		// Source: https://cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster#downgrading_limitations
		return []string{"the platform does not downgrade nodes to an older minor Kubernetes version: only a canceled or failed upgrade is rolled back (above); after that, a new pool at the old version"}
	}
	return in.Rollback
}

// inPlaceSteps are the checkpoints: one per batch of nodes platform
// replaces, each with its gate on the nodes not yet marked.
func inPlaceSteps(r *Rollout, in RolloutInput, batch int, platform, poolSel string) {
	p := in.Pool
	sel := poolSel + ",!" + accept.LabelAccept
	means := fmt.Sprintf("the nodes of pool %s without a %s label: those created since the last gate marked its nodes (the old ones were marked in Prepare)", p.Name, accept.LabelAccept)
	if r.Strategy == StrategyDriver {
		means = fmt.Sprintf("the nodes of pool %s not yet marked: the operator keeps the nodes, so each gate must be given the node whose driver it just replaced by name (gpuctl accept NODE ...) or the label of the old mark removed (kubectl label node NODE %s-)", p.Name, accept.LabelAccept)
	}
	for done := 0; done < r.Nodes; {
		n := min(batch, r.Nodes-done)
		out := min(max(n-r.MaxSurge, 0), r.MaxUnavailable)
		if r.Strategy == StrategyDriver {
			out = n
		}
		done += n
		r.Steps = append(r.Steps, Step{Step: len(r.Steps) + 1, Kind: StepBatch, Nodes: n, NodeNames: []string{},
			CapacityNodes: r.Nodes - out, CapacityGPUs: (r.Nodes - out) * p.GPUsPerNode,
			Action: fmt.Sprintf("checkpoint: %s has replaced %d more node(s) of pool %s (%d of %d) with the new configuration (%s); it goes on by itself",
				platform, n, p.Name, done, r.Nodes, strings.Join(r.Reasons, "; ")),
			Gate: gate(in, p.Name, sel, means, poolSel)})
	}
}

// planReplace: applying the change replaces the pool at once, so the
// rollout adds a new pool beside it instead, step by step.
func planReplace(r *Rollout, in RolloutInput) {
	p := in.Pool
	next := p.Name + NewPoolSuffix
	label := PoolLabel(in.Provider)
	var why []string
	for _, e := range r.Effects {
		if e.Strategy == StrategyReplace {
			why = append(why, e.Change)
		}
	}
	r.Mechanism = fmt.Sprintf("The change forces a new pool (%s). Applied as it is, terraform apply destroys pool %s and then creates it again "+
		"(destroy first: a cluster holds one pool of a name, so create_before_destroy cannot help): all %d node(s) (%d GPUs) go at once and the pool has no capacity until the new nodes are Ready. "+
		"The steps instead add the new configuration as a second pool, %s, beside the old one and move the work over; each step's action starts it, so the pipeline controls the order.",
		strings.Join(why, "; "), p.Name, r.Nodes, r.Nodes*p.GPUsPerNode, next)
	r.Warnings = append(r.Warnings,
		fmt.Sprintf("terraform apply of the new spec as it is replaces pool %s at once: capacity drops to 0 of %d node(s) until the new nodes are Ready", p.Name, r.Nodes),
		fmt.Sprintf("the rollout needs room for %d more node(s) (%d GPUs: quota, reservation or capacity) while both pools exist", r.Nodes, r.Nodes*p.GPUsPerNode))
	r.Prepare = append(r.Prepare, fmt.Sprintf("edit %s: keep pool %s as it was (the old configuration, from %s) and add pool %s, a copy with the new configuration; %s keeps its name afterwards (renaming a pool replaces it again)",
		in.SpecFile, p.Name, orPlaceholder(in.FromFile, "the old spec"), next, next))
	if in.sweep() {
		r.Prepare = append(r.Prepare, sweepPrepare(in, next)+"; with acceptance.selector unset, gpuctl generate acceptance selects pool "+next+" once the spec has it: apply its acceptance.yaml again")
	}
	nextSel := label + "=" + next
	oldSel := label + "=" + p.Name
	full := r.Nodes * p.GPUsPerNode
	add := func(kind string, nodes int, action string, g Gate) {
		r.Steps = append(r.Steps, Step{Step: len(r.Steps) + 1, Kind: kind, Controlled: true, Nodes: nodes, NodeNames: []string{},
			CapacityNodes: r.Nodes, CapacityGPUs: full, Action: action, Gate: g})
	}
	unmarked := nextSel + ",!" + accept.LabelAccept
	means := fmt.Sprintf("the nodes of the new pool %s not yet marked by a gate", next)
	add(StepCanary, 1, fmt.Sprintf("give pool %s autoscaling min 1, max 1; gpuctl generate all and terraform apply: the platform creates its first node while pool %s keeps serving", next, p.Name),
		gate(in, next, unmarked, means, nextSel))
	if r.Nodes > 1 {
		add(StepBatch, r.Nodes-1, fmt.Sprintf("give pool %s the autoscaling of pool %s (%d-%d); generate and apply: the platform adds the other %d node(s)", next, p.Name, p.MinNodes, p.MaxNodes, r.Nodes-1),
			gate(in, next, unmarked, means, nextSel))
	}
	none := Gate{Command: []string{}, Stages: []string{}, SelectorMeans: "no acceptance: the new pool's nodes passed theirs", Pass: "no pod left on the old pool's nodes but DaemonSets"}
	add(StepMove, r.Nodes, fmt.Sprintf("cordon the old pool (kubectl cordon -l %s) and drain its nodes as their jobs allow (kubectl drain -l %s --ignore-daemonsets --delete-emptydir-data): the work moves to %s", ShellQuote(oldSel), ShellQuote(oldSel), next), none)
	none.Pass = "the old pool is gone from the platform"
	add(StepRemove, r.Nodes, fmt.Sprintf("remove pool %s from the spec; generate and apply: Terraform deletes the old pool", p.Name), none)
	r.OnFail = OnFail{
		Stop: "stop: start no further step; the gate's record names the failed stage",
		Keep: fmt.Sprintf("pool %s keeps serving on the old configuration: nothing touched it before the move step", p.Name),
		Rollback: []string{
			fmt.Sprintf("before the move: remove pool %s from the spec, generate and apply", next),
			fmt.Sprintf("after the move: uncordon the old pool (kubectl uncordon -l %s), then remove pool %s", ShellQuote(oldSel), next)},
	}
}

func hasStrategy(es []Effect, s string) bool {
	for _, e := range es {
		if e.Strategy == s {
			return true
		}
	}
	return false
}

// ShellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./=:,@+ (a selector with ! or a space).
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,@+", c)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// ShellJoin is argv as one line a shell runs as that argv.
func ShellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
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
