package cli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/plan"
)

var planMarkers = map[string]string{plan.ActionAdd: "+", plan.ActionChange: "~", plan.ActionRemove: "-"}

// planView is the table form of a plan: the pools, then each section the
// plan has (errors, spec changes, warnings, rollouts, drift), the files
// and the summary line.
func planView(p *plan.Plan) render.PlanView {
	v := render.PlanView{Tables: poolTables(p)}
	v.Tables = append(v.Tables, findingTables(p)...)
	v.Tables = append(v.Tables, specChangeTables(p)...)
	v.Tables = append(v.Tables, warningTables(p)...)
	v.Tables = append(v.Tables, rolloutTables(p)...)
	v.Tables = append(v.Tables, driftTables(p)...)
	v.Tables = append(v.Tables, sweepGateTables(p)...)
	v.Files = planFiles(p)
	v.Summary = planSummary(p)
	return v
}

// planEnvName is an environment as the tables name it: "base" for the spec
// without overlays.
func planEnvName(e string) string {
	if e == "" {
		return "base"
	}
	return e
}

// poolTables are every pool as resolved, its labels and its acceptance
// gate.
func poolTables(p *plan.Plan) []render.Table {
	pools := render.Table{Title: "pools", Headers: []string{"ENV", "POOL", "MACHINE", "GPU", "GPUS/NODE", "ADVERTISES", "DEVICE PLUGIN", "DRIVER", "NCCL", "KUEUE QUOTA", "NODES", "MAX UNAVAILABLE", "TAINTS"}}
	labels := render.Table{Title: "pool labels", Headers: []string{"ENV", "POOL", "LABELS"}}
	gates := render.Table{Title: "acceptance", Headers: []string{"ENV", "POOL", "STAGES", "NCCL BASELINE", "MIN BUSBW GB/S", "BASELINES AS OF", "ROLLOUT GATE"}}
	for _, e := range p.Environments {
		env := planEnvName(e.Name)
		for _, pl := range e.Pools {
			pools.Rows = append(pools.Rows, []string{env, pl.Name, strings.Join(pl.MachineTypes, ","), gpuText(pl),
				strconv.Itoa(pl.GPUsPerNode), advertisesText(pl), pl.DevicePlugin, driverText(pl.Driver),
				ncclText(pl.NCCL), fmt.Sprintf("%d %s", pl.KueueQuota, pl.Resource), fmt.Sprintf("%d-%d", pl.MinNodes, pl.MaxNodes),
				pl.MaxUnavailable, strings.Join(pl.Taints, ",")})
			labels.Rows = append(labels.Rows, []string{env, pl.Name, labelsText(pl.Labels)})
			bw := ""
			if pl.Acceptance.MinBusBandwidthGBps > 0 {
				bw = strconv.FormatFloat(pl.Acceptance.MinBusBandwidthGBps, 'f', -1, 64)
			}
			gates.Rows = append(gates.Rows, []string{env, pl.Name, strings.Join(pl.Acceptance.Stages, ","), pl.Acceptance.Baseline, bw, pl.Acceptance.BaselinesAsOf, pl.RolloutGate})
		}
	}
	return []render.Table{pools, labels, gates}
}

// labelsText is k=v,k=v sorted.
func labelsText(labels map[string]string) string {
	var ls []string
	for k, val := range labels {
		ls = append(ls, k+"="+val)
	}
	sort.Strings(ls)
	return strings.Join(ls, ",")
}

// findingTables are the error findings that stopped the comparison (none
// without).
func findingTables(p *plan.Plan) []render.Table {
	if len(p.Findings) == 0 {
		return nil
	}
	t := render.Table{Title: "errors (nothing compared or rolled out)", Headers: []string{"SEVERITY", "RULE", "AT", "MESSAGE"}}
	for _, f := range p.Findings {
		t.Rows = append(t.Rows, []string{string(f.Severity), f.Rule, fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column), f.Message})
	}
	return []render.Table{t}
}

// specChangeTables are the changes against --from, a row per changed field
// (none without).
func specChangeTables(p *plan.Plan) []render.Table {
	if len(p.SpecChanges) == 0 {
		return nil
	}
	t := render.Table{Title: "spec changes", Headers: []string{"ENV", "POOL", "CHANGE", "FIELD", "OLD", "NEW"}}
	for _, c := range p.SpecChanges {
		pool := c.Pool
		if pool == "" {
			pool = "(every pool)"
		}
		change := planMarkers[c.Action] + " " + c.Action
		if len(c.Fields) == 0 {
			t.Rows = append(t.Rows, []string{planEnvName(c.Environment), pool, change, "", "", ""})
		}
		for _, f := range c.Fields {
			n := f.New
			if f.Downgrade {
				n += " (downgrade)"
			}
			t.Rows = append(t.Rows, []string{planEnvName(c.Environment), pool, change, f.Field, f.Old, n})
		}
	}
	return []render.Table{t}
}

// warningTables are the plan's warnings (none without).
func warningTables(p *plan.Plan) []render.Table {
	if len(p.Warnings) == 0 {
		return nil
	}
	t := render.Table{Title: "warnings", Headers: []string{"WARNING"}}
	for _, w := range p.Warnings {
		t.Rows = append(t.Rows, []string{w})
	}
	return []render.Table{t}
}

// rolloutTables are the rollouts' plans (what apply does), steps and notes
// (none without a rollout).
func rolloutTables(p *plan.Plan) []render.Table {
	if len(p.Rollouts) == 0 {
		return nil
	}
	plans := render.Table{Title: "rollout plans", Headers: []string{"ENV", "POOL", "STRATEGY", "CHANGE", "WHAT APPLY DOES"}}
	notes := render.Table{Title: "rollout notes", Headers: []string{"ENV", "POOL", "WHEN", "WHAT"}}
	steps := render.Table{Title: "rollout", Headers: []string{"ENV", "POOL", "STEP", "KIND", "STARTED BY", "NODES", "IN SERVICE", "GATE"}}
	for _, r := range p.Rollouts {
		env := planEnvName(r.Environment)
		for _, e := range r.Effects {
			plans.Rows = append(plans.Rows, []string{env, r.Pool, e.Strategy, e.Change, e.Why})
		}
		notes.Rows = append(notes.Rows, rolloutNotes(env, r)...)
		for _, s := range r.Steps {
			steps.Rows = append(steps.Rows, rolloutStep(env, r, s))
		}
	}
	return []render.Table{plans, steps, notes}
}

// rolloutNotes are a rollout's warnings, mechanism, preparation, start and
// what to do when it fails, a row each.
func rolloutNotes(env string, r plan.Rollout) [][]string {
	var rows [][]string
	for _, n := range []struct {
		when  string
		lines []string
	}{{"warning", r.Warnings}, {"how", []string{r.Mechanism}}, {"before", r.Prepare}, {"start", r.Start}, {"on fail", append([]string{r.OnFail.Stop, r.OnFail.Keep}, r.OnFail.Rollback...)}} {
		for _, l := range n.lines {
			rows = append(rows, []string{env, r.Pool, n.when, l})
		}
	}
	return rows
}

// rolloutStep is one step's row: who starts it, its nodes, the capacity in
// service and its gate.
func rolloutStep(env string, r plan.Rollout, s plan.Step) []string {
	by := "platform (checkpoint)"
	if s.Controlled {
		by = "pipeline"
	}
	gate := plan.ShellJoin(s.Gate.Command)
	switch {
	case s.Gate.Kind == plan.GateSweep:
		gate = fmt.Sprintf("sweep: every node of %s has %s newer than the step's start (sweep now: %s)", s.Gate.Selector, s.Gate.Condition, plan.ShellJoin(s.Gate.Trigger))
	case len(s.Gate.Command) == 0:
		gate = s.Action
	}
	return []string{env, r.Pool, strconv.Itoa(s.Step), s.Kind, by, strconv.Itoa(s.Nodes),
		fmt.Sprintf("%d/%d nodes, %d GPUs", s.CapacityNodes, r.Nodes, s.CapacityGPUs), gate}
}

// driftTables are the nodes' fields that drifted from the spec (none
// without a cluster).
func driftTables(p *plan.Plan) []render.Table {
	if !p.Cluster {
		return nil
	}
	t := render.Table{Title: "drift", Headers: []string{"ENV", "POOL", "NODE", "FIELD", "EXPECTED", "OBSERVED", "AT"}}
	for _, d := range p.Drift {
		for _, f := range d.Fields {
			if f.State == plan.StateDrift {
				t.Rows = append(t.Rows, []string{planEnvName(d.Environment), d.Pool, d.Node, f.Field, f.Expected, f.Observed, f.At})
			}
		}
	}
	return []render.Table{t}
}

// sweepGateTables are the live nodes of each pool with rollout.gate sweep
// against its gate, a row each, and a row for a selector that misses
// nodes (none without a cluster or such a pool).
func sweepGateTables(p *plan.Plan) []render.Table {
	if !p.Cluster || len(p.SweepGates) == 0 {
		return nil
	}
	t := render.Table{Title: "sweep gate", Headers: []string{"ENV", "POOL", "NODE", "GPUACCEPTED", "SINCE", "PASSES", "WHY"}}
	for _, g := range p.SweepGates {
		env := planEnvName(g.Environment)
		for _, n := range g.NodeGates {
			t.Rows = append(t.Rows, []string{env, g.Pool, n.Node, n.State, n.AcceptedAt, strconv.FormatBool(n.Satisfies), n.Why})
		}
		if g.Nodes == 0 {
			t.Rows = append(t.Rows, []string{env, g.Pool, "", "", "", "false", "the pool has no nodes in the cluster"})
		}
		if g.Warning != "" {
			t.Rows = append(t.Rows, []string{env, g.Pool, "", "", "", "false", g.Warning})
		}
	}
	return []render.Table{t}
}

// planFiles are the files under --out that would change, with their
// objects and diffs.
func planFiles(p *plan.Plan) []render.PlanFile {
	var out []render.PlanFile
	for _, f := range p.Files {
		pf := render.PlanFile{Marker: planMarkers[f.Action], Path: f.Path, Diff: f.Diff}
		for _, o := range f.Objects {
			pf.Objects = append(pf.Objects, planMarkers[o.Action]+" "+o.Name)
		}
		if f.Kept {
			pf.Objects = append(pf.Objects, "! generate keeps it as it is: its content is not what gpuctl wrote there")
		}
		out = append(out, pf)
	}
	return out
}

// planSummary is the last line: pools, then what each comparison found.
func planSummary(p *plan.Plan) string {
	s := p.Summary
	line := fmt.Sprintf("Plan: %d pool(s)", s.Pools)
	if !s.Changes {
		line = fmt.Sprintf("No changes: %d pool(s)", s.Pools)
	}
	switch {
	case p.OutDir != "" && s.Errors > 0:
		line += fmt.Sprintf("; files under %s not compared", p.OutDir)
	case p.OutDir != "":
		line += fmt.Sprintf("; files under %s: %d to add, %d to change, %d to remove", p.OutDir, s.FilesAdded, s.FilesChanged, s.FilesRemoved)
	}
	switch {
	case p.From != "" && s.Errors > 0:
		line += fmt.Sprintf("; not compared with %s, no rollout", p.From)
	case p.From != "":
		line += fmt.Sprintf("; %d spec change(s) against %s", s.SpecChanges, p.From)
	}
	if p.Cluster {
		line += fmt.Sprintf("; %d of %d node(s) drifted", s.NodesDrifted, s.NodesChecked)
	}
	for _, g := range p.SweepGates {
		line += fmt.Sprintf("; sweep gate of %s: %d of %d node(s) accepted", g.Pool, g.Accepted, g.Nodes)
	}
	if s.Rollouts > 0 {
		line += fmt.Sprintf("; %d rollout(s)", s.Rollouts)
	}
	if s.Errors > 0 {
		line += fmt.Sprintf("; %d error finding(s)", s.Errors)
	}
	return line + "."
}

func gpuText(p plan.Pool) string {
	if p.AcceleratorType != "" && p.AcceleratorType != p.GPU {
		return p.GPU + " (" + p.AcceleratorType + ")"
	}
	return p.GPU
}

func driverText(d plan.Driver) string {
	switch {
	case d.Version != "":
		return d.Owner + ": " + d.Version
	case d.Branch != 0:
		return fmt.Sprintf("%s: R%d", d.Owner, d.Branch)
	}
	return d.Owner
}

func ncclText(n plan.NCCL) string {
	s := n.Network
	switch {
	case n.Plugin != "":
		s += " (" + n.Plugin + ")"
	case n.Needs != "" && n.EnvConfigures != "":
		s += " (needs " + n.Needs + "; nccl.env configures " + n.EnvConfigures + ", no plugin named)"
	case n.Needs != "":
		s += " (needs " + n.Needs + ")"
	}
	return s
}

// advertisesText is what the device plugin advertises per node and, for
// shared GPUs, how they are shared.
func advertisesText(p plan.Pool) string {
	s := fmt.Sprintf("%d x %s", p.PerNode, p.Resource)
	switch {
	case p.SharedBy > 0:
		s += fmt.Sprintf(" (%s: %d share each GPU)", p.Sharing, p.SharedBy)
	case p.Sharing != "":
		s += " (" + p.Sharing + ")"
	}
	return s
}
