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

// planView is the table form of a plan.
func planView(p *plan.Plan) render.PlanView {
	v := render.PlanView{}
	envName := func(e string) string {
		if e == "" {
			return "base"
		}
		return e
	}
	pools := render.Table{Title: "pools", Headers: []string{"ENV", "POOL", "MACHINE", "GPU", "GPUS/NODE", "ADVERTISES", "DEVICE PLUGIN", "DRIVER", "NCCL", "KUEUE QUOTA", "NODES", "MAX UNAVAILABLE", "TAINTS"}}
	labels := render.Table{Title: "pool labels", Headers: []string{"ENV", "POOL", "LABELS"}}
	gates := render.Table{Title: "acceptance", Headers: []string{"ENV", "POOL", "STAGES", "NCCL BASELINE", "MIN BUSBW GB/S", "BASELINES AS OF"}}
	for _, e := range p.Environments {
		for _, pl := range e.Pools {
			pools.Rows = append(pools.Rows, []string{envName(e.Name), pl.Name, strings.Join(pl.MachineTypes, ","), gpuText(pl),
				strconv.Itoa(pl.GPUsPerNode), advertisesText(pl), pl.DevicePlugin, driverText(pl.Driver),
				ncclText(pl.NCCL), fmt.Sprintf("%d %s", pl.KueueQuota, pl.Resource), fmt.Sprintf("%d-%d", pl.MinNodes, pl.MaxNodes),
				pl.MaxUnavailable, strings.Join(pl.Taints, ",")})
			var ls []string
			for k, val := range pl.Labels {
				ls = append(ls, k+"="+val)
			}
			sort.Strings(ls)
			labels.Rows = append(labels.Rows, []string{envName(e.Name), pl.Name, strings.Join(ls, ",")})
			bw := ""
			if pl.Acceptance.MinBusBandwidthGBps > 0 {
				bw = strconv.FormatFloat(pl.Acceptance.MinBusBandwidthGBps, 'f', -1, 64)
			}
			gates.Rows = append(gates.Rows, []string{envName(e.Name), pl.Name, strings.Join(pl.Acceptance.Stages, ","), pl.Acceptance.Baseline, bw, pl.Acceptance.BaselinesAsOf})
		}
	}
	v.Tables = append(v.Tables, pools, labels, gates)
	if len(p.Findings) > 0 {
		t := render.Table{Title: "errors (nothing compared or rolled out)", Headers: []string{"SEVERITY", "RULE", "AT", "MESSAGE"}}
		for _, f := range p.Findings {
			t.Rows = append(t.Rows, []string{string(f.Severity), f.Rule, fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column), f.Message})
		}
		v.Tables = append(v.Tables, t)
	}
	if len(p.SpecChanges) > 0 {
		t := render.Table{Title: "spec changes", Headers: []string{"ENV", "POOL", "CHANGE", "FIELD", "OLD", "NEW"}}
		for _, c := range p.SpecChanges {
			pool := c.Pool
			if pool == "" {
				pool = "(every pool)"
			}
			if len(c.Fields) == 0 {
				t.Rows = append(t.Rows, []string{envName(c.Environment), pool, planMarkers[c.Action] + " " + c.Action, "", "", ""})
			}
			for _, f := range c.Fields {
				t.Rows = append(t.Rows, []string{envName(c.Environment), pool, planMarkers[c.Action] + " " + c.Action, f.Field, f.Old, f.New})
			}
		}
		v.Tables = append(v.Tables, t)
	}
	if len(p.Warnings) > 0 {
		t := render.Table{Title: "warnings", Headers: []string{"WARNING"}}
		for _, w := range p.Warnings {
			t.Rows = append(t.Rows, []string{w})
		}
		v.Tables = append(v.Tables, t)
	}
	if len(p.Rollouts) > 0 {
		plans := render.Table{Title: "rollout plans", Headers: []string{"ENV", "POOL", "STRATEGY", "CHANGE", "WHAT APPLY DOES"}}
		notes := render.Table{Title: "rollout notes", Headers: []string{"ENV", "POOL", "WHEN", "WHAT"}}
		t := render.Table{Title: "rollout", Headers: []string{"ENV", "POOL", "STEP", "KIND", "STARTED BY", "NODES", "IN SERVICE", "GATE"}}
		for _, r := range p.Rollouts {
			for _, e := range r.Effects {
				plans.Rows = append(plans.Rows, []string{envName(r.Environment), r.Pool, e.Strategy, e.Change, e.Why})
			}
			for _, n := range []struct {
				when  string
				lines []string
			}{{"warning", r.Warnings}, {"how", []string{r.Mechanism}}, {"before", r.Prepare}, {"start", r.Start}, {"on fail", append([]string{r.OnFail.Stop, r.OnFail.Keep}, r.OnFail.Rollback...)}} {
				for _, l := range n.lines {
					notes.Rows = append(notes.Rows, []string{envName(r.Environment), r.Pool, n.when, l})
				}
			}
			for _, s := range r.Steps {
				by := "platform (checkpoint)"
				if s.Controlled {
					by = "pipeline"
				}
				gate := plan.ShellJoin(s.Gate.Command)
				if len(s.Gate.Command) == 0 {
					gate = s.Action
				}
				t.Rows = append(t.Rows, []string{envName(r.Environment), r.Pool, strconv.Itoa(s.Step), s.Kind, by, strconv.Itoa(s.Nodes),
					fmt.Sprintf("%d/%d nodes, %d GPUs", s.CapacityNodes, r.Nodes, s.CapacityGPUs), gate})
			}
		}
		v.Tables = append(v.Tables, plans, t, notes)
	}
	if p.Cluster {
		t := render.Table{Title: "drift", Headers: []string{"ENV", "POOL", "NODE", "FIELD", "EXPECTED", "OBSERVED", "AT"}}
		for _, d := range p.Drift {
			for _, f := range d.Fields {
				if f.State == plan.StateDrift {
					t.Rows = append(t.Rows, []string{envName(d.Environment), d.Pool, d.Node, f.Field, f.Expected, f.Observed, f.At})
				}
			}
		}
		v.Tables = append(v.Tables, t)
	}
	for _, f := range p.Files {
		pf := render.PlanFile{Marker: planMarkers[f.Action], Path: f.Path, Diff: f.Diff}
		for _, o := range f.Objects {
			pf.Objects = append(pf.Objects, planMarkers[o.Action]+" "+o.Name)
		}
		v.Files = append(v.Files, pf)
	}
	s := p.Summary
	switch {
	case !s.Changes:
		v.Summary = fmt.Sprintf("No changes: %d pool(s)", s.Pools)
	default:
		v.Summary = fmt.Sprintf("Plan: %d pool(s)", s.Pools)
	}
	if p.OutDir != "" && s.Errors > 0 {
		v.Summary += fmt.Sprintf("; files under %s not compared", p.OutDir)
	} else if p.OutDir != "" {
		v.Summary += fmt.Sprintf("; files under %s: %d to add, %d to change, %d to remove", p.OutDir, s.FilesAdded, s.FilesChanged, s.FilesRemoved)
	}
	if p.From != "" && s.Errors > 0 {
		v.Summary += fmt.Sprintf("; not compared with %s, no rollout", p.From)
	} else if p.From != "" {
		v.Summary += fmt.Sprintf("; %d spec change(s) against %s", s.SpecChanges, p.From)
	}
	if p.Cluster {
		v.Summary += fmt.Sprintf("; %d of %d node(s) drifted", s.NodesDrifted, s.NodesChecked)
	}
	if s.Rollouts > 0 {
		v.Summary += fmt.Sprintf("; %d rollout(s)", s.Rollouts)
	}
	if s.Errors > 0 {
		v.Summary += fmt.Sprintf("; %d error finding(s)", s.Errors)
	}
	v.Summary += "."
	return v
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
	if n.Plugin != "" {
		s += " (" + n.Plugin + ")"
	} else if n.Needs != "" {
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
