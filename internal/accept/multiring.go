package accept

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// ring is a fleet stage's run while nodes go away (RunMulti): the nodes
// still taking part, the plan of their groups, every group run so far and
// the nodes that were deleted. When a node goes away the groups are planned
// anew without it (rebuild), so that its partners are paired with each
// other; a group of the new plan that already ran with the same nodes is
// not run again.
type ring struct {
	m     MultiRun
	mp    *MultiPlan
	nodes []*corev1.Node
	// gone maps each deleted node to its stage result's reason.
	gone map[string]string
	// groups are the results of every group run, in run order.
	groups []MultiGroupResult
	// next is the index of the next group's run id (RUN-mN).
	next int
}

// newRing is the run of plan mp over m's nodes, none of them gone yet.
func newRing(m MultiRun, mp *MultiPlan) *ring {
	return &ring{m: m, mp: mp, nodes: m.Nodes, gone: map[string]string{}}
}

// goneNodes returns the names of those of nodes that the tracker saw
// deleted (tracker.nodeGone), in the nodes' order.
func goneNodes(tr *tracker, nodes []*corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		if tr.nodeGone(n.Name) {
			out = append(out, n.Name)
		}
	}
	return out
}

// drop takes the nodes the tracker saw deleted out of the ring, each with
// the reason when(node) gives, and plans the groups of the nodes left
// (rebuild); false when no node was gone. An error is PlanMulti's.
func (g *ring) drop(tr *tracker, when func(node string) string) (bool, error) {
	gone := goneNodes(tr, g.nodes)
	if len(gone) == 0 {
		return false, nil
	}
	for _, n := range gone {
		g.gone[n] = when(n)
	}
	g.nodes = slices.DeleteFunc(slices.Clone(g.nodes), func(n *corev1.Node) bool { return g.gone[n.Name] != "" })
	return true, g.rebuild()
}

// rebuild plans the groups of the ring's nodes anew. Fewer than two nodes
// left is the plan's problem, said with the nodes that were deleted.
func (g *ring) rebuild() error {
	m := g.m
	m.Nodes = g.nodes
	mp, err := PlanMulti(m)
	if err != nil {
		return err
	}
	if mp.Problem != "" {
		gone := g.goneNames()
		mp.Problem = fmt.Sprintf("%s: %s deleted", mp.Problem, strings.Join(gone, ", "))
		if len(g.nodes) < 2 {
			mp.ProblemCause = CauseCluster
		}
	}
	g.mp = mp
	return nil
}

// goneNames are the deleted nodes, in the order of the run's nodes.
func (g *ring) goneNames() []string {
	var out []string
	for _, n := range g.m.Nodes {
		if g.gone[n.Name] != "" {
			out = append(out, n.Name)
		}
	}
	return out
}

// groupKey names a group by its set of nodes, whatever their order.
func groupKey(nodes []string) string {
	s := slices.Clone(nodes)
	slices.Sort(s)
	return strings.Join(s, ",")
}

// ran returns the last result of a group run with exactly nodes, none of
// them gone since; false when there is none.
func (g *ring) ran(nodes []string) (MultiGroupResult, bool) {
	key := groupKey(nodes)
	for i := len(g.groups) - 1; i >= 0; i-- {
		if groupKey(g.groups[i].Nodes) == key {
			return g.groups[i], true
		}
	}
	return MultiGroupResult{}, false
}

// pending is the plan of the groups of the current plan that have not run
// yet, packed into rounds anew (packRounds) and given the next run ids;
// the first plan's groups keep PlanMulti's ids (those --dry-run prints).
func (g *ring) pending() *MultiPlan {
	var todo []MultiSpec
	for _, round := range g.mp.Rounds {
		for _, spec := range round {
			if _, done := g.ran(spec.Nodes); !done {
				spec.RunID = fmt.Sprintf("%s-%s%d", g.m.RunID, groupLetter(g.m.stage()), g.next)
				g.next++
				todo = append(todo, spec)
			}
		}
	}
	p := *g.mp
	p.Rounds = packRounds(todo)
	return &p
}

// packRounds puts each group into the first round in which none of its
// nodes is busy (each rank pod takes all of its node's GPUs).
func packRounds(specs []MultiSpec) [][]MultiSpec {
	var rounds [][]MultiSpec
	var busy []map[string]bool
	for _, s := range specs {
		r := slices.IndexFunc(busy, func(b map[string]bool) bool {
			return !slices.ContainsFunc(s.Nodes, func(n string) bool { return b[n] })
		})
		if r < 0 {
			rounds, busy = append(rounds, nil), append(busy, map[string]bool{})
			r = len(rounds) - 1
		}
		rounds[r] = append(rounds[r], s)
		for _, n := range s.Nodes {
			busy[r][n] = true
		}
	}
	return rounds
}

// final returns the results of the current plan's groups, in plan order:
// what the nodes still there are judged on.
func (g *ring) final() []MultiGroupResult {
	var out []MultiGroupResult
	for _, round := range g.mp.Rounds {
		for _, spec := range round {
			if res, ok := g.ran(spec.Nodes); ok {
				out = append(out, res)
			}
		}
	}
	return out
}

// blame returns each node's stage result: a deleted node's is INCONCLUSIVE
// (cluster) with its reason; the others are judged on the groups of the
// last plan (blameMulti), or INCONCLUSIVE with its problem when it has none
// to run (fewer than two nodes left).
func (g *ring) blame() map[string]StageResult {
	st := g.m.stage()
	names := make([]string, len(g.nodes))
	for i, n := range g.nodes {
		names[i] = n.Name
	}
	out := map[string]StageResult{}
	if g.mp.Problem != "" {
		for _, n := range names {
			out[n] = withCause(result(st, diag.Inconclusive, "%s", g.mp.Problem), g.mp.ProblemCause)
		}
	} else {
		out = blameMulti(st, names, g.final(), g.m.Mode)
	}
	for n, why := range g.gone {
		out[n] = withCause(result(st, diag.Inconclusive, "%s", why), CauseCluster)
	}
	return out
}

// goneBefore and goneDuring are the reasons of a node deleted before the
// fleet stage st began (it takes no part) and during it.
func goneBefore(st Stage) func(string) string {
	return func(n string) string {
		return fmt.Sprintf("node %s was deleted before the %s stage; it takes no part and the groups are planned without it", n, st)
	}
}

func goneDuring(st Stage) func(string) string {
	return func(n string) string {
		return fmt.Sprintf("node %s was deleted during the %s stage; its partners were paired anew without it", n, st)
	}
}
