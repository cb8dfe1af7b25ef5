package accept

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/matrix"
)

// MultiRun is an nccl-multi run over the nodes of a selection, after their
// own stages.
type MultiRun struct {
	// Stage is the fleet stage: StageNCCLMulti (the zero value) or
	// StageFrameworkMulti.
	Stage Stage
	// RunID is the fleet's run id; group i's objects use RunID-mI.
	RunID     string
	Namespace string
	// Nodes take part, in this order (the ring of pairs follows it).
	Nodes []*corev1.Node
	// Mode is MultiPairs (default) or MultiAll.
	Mode string
	// Image overrides the stage's default image; DriverCUDA picks the
	// default ("" for the oldest).
	Image, DriverCUDA string
	// Env are the NCCL transport's variables of the pool (may be nil).
	Env map[string]string
	// Expect is the spec's view of the nodes' pool (nil without --spec):
	// its cloud, EFA interfaces and GKE GPU networks decide the rank pods'
	// fabric where the nodes alone do not.
	Expect *Expectations
	// AllowPrivileged lets the rank pods have what their fabric needs
	// beyond the restricted Pod Security level (host paths, the RxDM
	// sidecar's NET_ADMIN); without it such a run is INCONCLUSIVE.
	AllowPrivileged bool
	StageTimeout    time.Duration
	TTL             time.Duration
	MaxBytes        string
	// EvidenceDirs maps each node to its run's evidence directory, where
	// the rank outputs of its groups are saved.
	EvidenceDirs map[string]string
}

// stage is the run's fleet stage (nccl-multi when unset).
func (m MultiRun) stage() Stage {
	if m.Stage == "" {
		return StageNCCLMulti
	}
	return m.Stage
}

// MultiResult is an nccl-multi run's outcome: every group, and each node's
// nccl-multi stage result (with the evidence saved in its directory).
type MultiResult struct {
	Groups []MultiGroupResult
	Nodes  map[string]StageResult
}

// MultiRanksFile is the evidence file of a node's groups (the groups it
// was in, their ranks and verdicts).
const MultiRanksFile = "nccl-multi.groups.json"

// multiGroupsFile is fleet stage st's groups file (MultiRanksFile for
// nccl-multi).
func multiGroupsFile(st Stage) string { return string(st) + ".groups.json" }

// groupLetter tells the groups of the fleet stages apart in their run ids
// (RUN-m0 for nccl-multi, RUN-f0 for framework-multi).
func groupLetter(st Stage) string {
	if st == StageFrameworkMulti {
		return "f"
	}
	return "m"
}

// RunMulti runs the nccl-multi groups of m, round by round (at most
// parallel groups at a time), judges each group and blames the slow node.
// Every Job, pod and Service it creates is deleted before it returns. An
// error is gpuctl's own (an evidence directory it cannot write).
func (r *Runner) RunMulti(ctx context.Context, m MultiRun, parallel int) (*MultiResult, error) {
	if parallel < 1 {
		parallel = 1
	}
	names := make([]string, len(m.Nodes))
	for i, n := range m.Nodes {
		names[i] = n.Name
	}
	res := &MultiResult{Groups: []MultiGroupResult{}, Nodes: map[string]StageResult{}}
	started := r.now()
	all := func(v diag.Verdict, cause, format string, args ...any) (*MultiResult, error) {
		for _, n := range names {
			sr := withCause(result(m.stage(), v, format, args...), cause)
			sr.Started, sr.Finished = started, r.now()
			res.Nodes[n] = sr
		}
		return res, nil
	}
	mp, cause, why, err := r.planMultiRun(m)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return all(diag.Inconclusive, cause, "%s", why)
	}
	tr, startedTr, err := r.tracker(ctx, m.Namespace)
	if err != nil {
		return all(diag.Inconclusive, CauseCluster, "%v", err)
	}
	if startedTr {
		defer r.dropTracker(m.Namespace)
	}
	for _, n := range names {
		r.progress(n, m.stage(), "")
	}
	rg := newRing(m, mp)
	if err := r.runRing(ctx, tr, rg, parallel); err != nil {
		return nil, err
	}
	res.Groups = rg.groups
	blame := rg.blame()
	for _, n := range names {
		sr := blame[n]
		sr.Started, sr.Finished, sr.Image = started, r.now(), mp.Image.Ref
		ev, err := saveMultiEvidence(m.EvidenceDirs[n], m.stage(), n, res.Groups)
		if err != nil {
			return nil, err
		}
		sr.Evidence = ev
		if ctx.Err() != nil && sr.Verdict != diag.Fail {
			sr = withCause(result(m.stage(), diag.Inconclusive, "interrupted: %v", context.Cause(ctx)), CauseInterrupted)
			sr.Started, sr.Finished, sr.Evidence = started, r.now(), ev
		}
		res.Nodes[n] = sr
		r.progress(n, m.stage(), sr.Verdict)
	}
	return res, nil
}

// planMultiRun plans m's groups; a reason (and its cause) is why none can
// run: fewer than two nodes, RBAC denied, a plan problem (PlanMulti), or a
// fabric that needs --allow-privileged without it.
func (r *Runner) planMultiRun(m MultiRun) (*MultiPlan, string, string, error) {
	if len(m.Nodes) < 2 {
		return nil, CauseHarness, "nccl-multi needs at least two nodes that passed their own stages", nil
	}
	if len(r.Denied) > 0 {
		return nil, CauseCluster, deniedReason(r.Denied), nil
	}
	mp, err := PlanMulti(m)
	switch {
	case err != nil:
		return nil, "", "", err
	case mp.Problem != "":
		return mp, mp.ProblemCause, mp.Problem, nil
	case len(mp.Fabric.Privileged) > 0 && !m.AllowPrivileged:
		return mp, CauseCluster, privilegedReason(mp.Fabric), nil
	}
	return mp, "", "", nil
}

// runRing runs the groups of ring g: a node deleted before the stage
// takes no part; after the groups of a plan ran, the nodes deleted in the
// meantime are taken out and the groups of those left that have not run
// yet are run, until a plan's groups ran with no node gone, ctx ends or
// fewer than two nodes are left. An error is PlanMulti's.
func (r *Runner) runRing(ctx context.Context, tr *tracker, g *ring, parallel int) error {
	if _, err := g.drop(tr, goneBefore(g.m.stage())); err != nil {
		return err
	}
	// Each pass after the first ends with a node fewer.
	for range len(g.m.Nodes) {
		if g.mp.Problem != "" {
			return nil
		}
		g.groups = append(g.groups, r.runRounds(ctx, tr, g.pending(), parallel)...)
		if ctx.Err() != nil {
			return nil
		}
		if dropped, err := g.drop(tr, goneDuring(g.m.stage())); err != nil || !dropped {
			return err
		}
	}
	return nil
}

// runRounds runs the groups of mp round by round, at most parallel groups
// at a time, and judges each; a cancelled ctx ends the run after the round
// under way. It returns the groups' results in plan order.
func (r *Runner) runRounds(ctx context.Context, tr *tracker, mp *MultiPlan, parallel int) []MultiGroupResult {
	var blp *matrix.NCCLMultiNodeBaseline
	if bl, ok := MultiBaselineFor(mp.Machine); ok {
		blp = &bl
	}
	groups := []MultiGroupResult{}
	for _, round := range mp.Rounds {
		out := make([]MultiGroupResult, len(round))
		sem := make(chan struct{}, parallel)
		var wg sync.WaitGroup
		for i, spec := range round {
			wg.Add(1)
			go func(i int, spec MultiSpec) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				g := r.runGroup(ctx, tr, spec)
				if g.Verdict == "" {
					g = judgeGroup(mp, g, r.Parser, blp)
				}
				r.log().Info("nccl-multi group finished", "group", spec.RunID, "nodes", spec.Nodes, "verdict", g.Verdict, "reason", g.Reason)
				out[i] = g
			}(i, spec)
		}
		wg.Wait()
		groups = append(groups, out...)
		if ctx.Err() != nil {
			break
		}
	}
	return groups
}

// judgeGroup judges one group of plan mp's stage.
func judgeGroup(mp *MultiPlan, g MultiGroupResult, p Parser, blp *matrix.NCCLMultiNodeBaseline) MultiGroupResult {
	if mp.Stage == StageFrameworkMulti {
		return JudgeFrameworkGroup(g, mp.GPUsPerNode, p, mp.Fabric)
	}
	return JudgeMultiGroupOn(g, mp.GPUsPerNode, p, blp, mp.Machine, mp.Fabric)
}

// MultiPlan is what an nccl-multi run creates, round by round: the groups'
// specs (BuildMultiNode makes each group's Job and Service). Problem, when
// set, is why no group can run (INCONCLUSIVE for every node).
type MultiPlan struct {
	Stage       Stage
	Rounds      [][]MultiSpec
	GPUsPerNode int
	Machine     string
	Image       Image
	// Fabric is the rank pods' GPU fabric (the zero Pod for none).
	Fabric fabric.Pod
	// ProblemCause is Problem's cause: harness, or cluster when the nodes
	// do not advertise what their fabric needs.
	Problem, ProblemCause string
	// ImageNote says what the default image may lack for the fabric (EFA:
	// aws-ofi-nccl); "" with --image or a fabric whose plugin the host
	// provides.
	ImageNote string
}

// privilegedReason says why a fabric's rank pods need --allow-privileged.
func privilegedReason(pod fabric.Pod) string {
	return fmt.Sprintf("the %s rank pods need the privileged Pod Security level (%s), which accept creates only with --allow-privileged, in a namespace that admits privileged pods; sources: %s",
		pod.Name, strings.Join(pod.Privileged, "; "), strings.Join(pod.Sources, ", "))
}

// PlanMulti plans an nccl-multi run: RunMulti and accept --dry-run both use
// it, so that a dry run prints the Jobs and Services a run creates.
func PlanMulti(m MultiRun) (*MultiPlan, error) {
	mp := &MultiPlan{Stage: m.stage(), ProblemCause: CauseHarness}
	if len(m.Nodes) < 2 {
		mp.Problem = "nccl-multi needs at least two nodes that passed their own stages"
		return mp, nil
	}
	mp.GPUsPerNode, _ = GPUCapacity(m.Nodes[0])
	mp.Machine = InstanceType(m.Nodes[0])
	for _, n := range m.Nodes[1:] {
		if g, _ := GPUCapacity(n); g != mp.GPUsPerNode || InstanceType(n) != mp.Machine {
			mp.Problem = fmt.Sprintf("the nodes differ in GPUs or machine type (%s has %d x %s, %s has %d x %s): one all_reduce needs alike nodes",
				m.Nodes[0].Name, mp.GPUsPerNode, dashIfEmpty(mp.Machine), n.Name, g, dashIfEmpty(InstanceType(n)))
			return mp, nil
		}
	}
	if mp.GPUsPerNode == 0 {
		mp.Problem = fmt.Sprintf("the nodes advertise no %s", ResourceGPU)
		return mp, nil
	}
	img, err := ChooseImage(m.stage(), m.Image, m.DriverCUDA)
	if err != nil {
		return nil, err
	}
	mp.Image = img
	mp.Fabric, mp.Problem = planFabric(fabricInput{nodes: m.Nodes, machine: mp.Machine, gpus: mp.GPUsPerNode, expect: m.Expect, env: m.Env})
	if mp.Problem != "" {
		mp.ProblemCause = CauseCluster
		return mp, nil
	}
	if mp.Fabric.ImageNeeds != "" && m.Image == "" {
		mp.ImageNote = fmt.Sprintf("the %s rank pods run the default image %s; they need %s", mp.Fabric.Name, img.Ref, mp.Fabric.ImageNeeds)
	}
	names, taints := namesAndTaints(m.Nodes)
	timeout := m.StageTimeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	gi := 0
	for _, round := range MultiGroups(names, m.Mode) {
		var specs []MultiSpec
		for _, nodes := range round {
			specs = append(specs, MultiSpec{Stage: m.stage(), RunID: fmt.Sprintf("%s-%s%d", m.RunID, groupLetter(m.stage()), gi), Namespace: m.Namespace, Nodes: nodes, GPUsPerNode: mp.GPUsPerNode,
				Taints: taints, Image: img, Env: m.Env, Deadline: timeout, TTL: m.TTL, MaxBytes: m.MaxBytes, Fabric: mp.Fabric})
			gi++
		}
		mp.Rounds = append(mp.Rounds, specs)
	}
	return mp, nil
}

// namesAndTaints returns the nodes' names and every distinct taint of
// theirs (each rank pod tolerates them all).
func namesAndTaints(nodes []*corev1.Node) ([]string, []corev1.Taint) {
	var taints []corev1.Taint
	seen := map[string]bool{}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
		for _, t := range n.Spec.Taints {
			k := t.Key + "=" + t.Value + ":" + string(t.Effect)
			if !seen[k] {
				seen[k] = true
				taints = append(taints, t)
			}
		}
	}
	return names, taints
}

// Objects returns the plan's Jobs and Services, group by group.
func (mp *MultiPlan) Objects() []any {
	var out []any
	for _, round := range mp.Rounds {
		for _, spec := range round {
			job, svc := BuildMultiNode(spec)
			out = append(out, svc, job)
		}
	}
	return out
}

// saveMultiEvidence writes, in a node's evidence directory, the rank
// outputs of its groups and the groups' summary, and returns their
// evidence entries.
func saveMultiEvidence(dir string, st Stage, node string, groups []MultiGroupResult) ([]Evidence, error) {
	ev := []Evidence{}
	if dir == "" {
		return ev, nil
	}
	var mine []MultiGroupResult
	for _, g := range groups {
		for _, n := range g.Nodes {
			if n == node {
				mine = append(mine, g)
			}
		}
	}
	write := func(name string, data []byte) error {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("evidence: %w", err)
		}
		ev = append(ev, evidenceOf(name, data))
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("evidence directory: %w", err)
	}
	for _, g := range mine {
		for _, rk := range g.Ranks {
			if err := write(fmt.Sprintf("%s.%s.rank-%d.log", st, g.Group, rk.Index), rk.Log); err != nil {
				return nil, err
			}
		}
	}
	data, err := json.MarshalIndent(mine, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := write(multiGroupsFile(st), data); err != nil {
		return nil, err
	}
	sort.Slice(ev, func(i, j int) bool { return ev[i].Name < ev[j].Name })
	return ev, nil
}

// runGroup creates the group's headless Service and Indexed Job, follows
// them until every rank pod finished (or the Job failed, timed out or was
// deleted), reads each rank's output, and deletes the Job, its pods and the
// Service. A result with Verdict set is a harness or cluster problem; else
// Ranks hold the outputs to judge.
func (r *Runner) runGroup(ctx context.Context, tr *tracker, spec MultiSpec) (g MultiGroupResult) {
	// g is the named result: the deferred cleanups below amend what is returned.
	g = MultiGroupResult{Group: spec.RunID, Nodes: append([]string(nil), spec.Nodes...), Ranks: []MultiRank{}}
	fail := func(p *harnessProblem) MultiGroupResult {
		g.Verdict, g.Cause, g.Reason = diag.Inconclusive, p.cause, p.reason
		return g
	}
	job, svc := BuildMultiNode(spec)
	ns := spec.Namespace
	s := &runState{plan: Plan{Node: spec.Nodes[0], RunID: spec.RunID, Namespace: ns, StageTimeout: spec.Deadline}, images: map[Stage]Image{},
		deleted: map[string]bool{}, log: r.log().With("group", spec.RunID), started: r.now()}
	s.tr, s.watch = tr, tr.register(spec.RunID, spec.Nodes...)
	defer tr.unregister(spec.RunID)
	if n := goneNode(tr, spec.Nodes); n != "" {
		return fail(problemf(CauseCluster, "node %s was deleted; no Job was created", n))
	}
	sctx, cancel := context.WithTimeout(ctx, spec.Deadline+15*time.Second)
	defer cancel()
	err := createOnce(sctx, func(ctx context.Context) error {
		_, err := r.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fail(interruptedOr(ctx, problemf(CauseCluster, "%s", apiProblem(err, "create", "services", ns))))
	}
	defer func() {
		if err := r.deleteService(ctx, ns, svc.Name); err != nil && g.Verdict != diag.Fail {
			g.Verdict, g.Cause = diag.Inconclusive, CauseCluster
			g.Reason = joinReason(g.Reason, err.Error())
		}
	}()
	if p := r.createJob(ctx, sctx, s, job); p != nil {
		return fail(p)
	}
	defer func() {
		if err := r.finishJob(ctx, s, ns, job.Name, spec.stage()); err != nil && g.Verdict != diag.Fail {
			g.Verdict, g.Cause = diag.Inconclusive, CauseCluster
			g.Reason = joinReason(g.Reason, "cleanup failed: "+err.Error())
		}
	}()
	pods, p := r.followGroup(ctx, sctx, s, spec, job.Name)
	if p == nil {
		g.Ranks, p = r.readRanks(ctx, sctx, ns, pods, multiContainer(spec.stage()))
	}
	if p != nil {
		return fail(p)
	}
	return g
}

// goneNode returns the first of nodes that was deleted, or "".
func goneNode(tr *tracker, nodes []string) string {
	for _, n := range nodes {
		if tr.nodeGone(n) {
			return n
		}
	}
	return ""
}

// followGroup follows a group's Job (named job) on the tracker's cache
// until every rank pod finished, or the Job is done and its pods' last
// updates had their time (turn), and returns the rank pods. It stops at once
// when a node, the Job or a rank pod is deleted, a rank pod cannot run, or
// the stage times out.
func (r *Runner) followGroup(ctx, sctx context.Context, s *runState, spec MultiSpec, job string) ([]*corev1.Pod, *harnessProblem) {
	tr, ns := s.tr, spec.Namespace
	var doneAt time.Time
	for {
		deletedJobs, deletedPods, _ := tr.events(spec.RunID)
		if n := goneNode(tr, spec.Nodes); n != "" {
			return nil, problemf(CauseCluster, "node %s was deleted during the stage", n)
		}
		if deletedJobs[job] {
			return nil, problemf(CauseCluster, "Job %s/%s was deleted by someone else before the stage finished", ns, job)
		}
		_, pods := tr.runObjects(spec.RunID, spec.stage())
		finished, p := rankPodsState(ns, pods, deletedPods)
		if p != nil {
			return nil, p
		}
		jobDone, deadline := jobState(tr.job(job))
		if deadline {
			return nil, problemf(CauseHarness, "stage timed out after %s (Job activeDeadlineSeconds) with %d of %d ranks finished", spec.Deadline, finished, len(spec.Nodes))
		}
		if finished >= len(spec.Nodes) {
			return pods, nil
		}
		settled, ended := s.watch.turn(sctx, jobDone, &doneAt)
		if settled {
			return pods, nil
		}
		if ended {
			return nil, interruptedOr(ctx, problemf(CauseHarness, "stage timed out after %s with %d of %d ranks finished", spec.Deadline, finished, len(spec.Nodes)))
		}
	}
}

// rankPodsState counts the finished rank pods, or says why one ends the
// stage: deleted by someone else before it finished, or unable to run
// (podHarnessProblem).
func rankPodsState(ns string, pods []*corev1.Pod, deletedPods map[string]bool) (finished int, p *harnessProblem) {
	for _, pod := range pods {
		if deletedPods[pod.Name] && !podFinished(pod) {
			return 0, problemf(CauseCluster, "pod %s/%s was deleted by someone else before the rank finished", ns, pod.Name)
		}
		if why := podHarnessProblem(pod); why != "" {
			return 0, problemf(CauseHarness, "rank pod %s: %s", pod.Name, why)
		}
		if podFinished(pod) {
			finished++
		}
	}
	return finished, nil
}

// readRanks reads the exit code and the log of each finished rank pod, in
// completion index order; on an error, those read so far.
func (r *Runner) readRanks(ctx, sctx context.Context, ns string, pods []*corev1.Pod, container string) ([]MultiRank, *harnessProblem) {
	ranks := []MultiRank{}
	sort.Slice(pods, func(i, j int) bool { return completionIndex(pods[i]) < completionIndex(pods[j]) })
	for _, p := range pods {
		if !podFinished(p) {
			continue
		}
		rk := MultiRank{Index: completionIndex(p), Node: p.Spec.NodeName, Pod: p.Name}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && cs.Name == container {
				rk.ExitCode = ptr(t.ExitCode)
			}
		}
		err := retry(sctx, func(ctx context.Context) error {
			var err error
			rk.Log, err = r.containerLog(ctx, ns, p.Name, container)
			return err
		})
		if err != nil {
			return ranks, interruptedOr(ctx, problemf(CauseCluster, "reading the log of %s/%s: %s", p.Name, container, apiProblem(err, "get", "pods/log", ns)))
		}
		ranks = append(ranks, rk)
	}
	return ranks, nil
}

// deleteService deletes a group's Service, retrying while the API server is
// away; one already gone is fine.
func (r *Runner) deleteService(ctx context.Context, ns, name string) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := retry(dctx, func(ctx context.Context) error {
		return r.Client.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Service %s: %s", name, apiProblem(err, "delete", "services", ns))
	}
	return nil
}

func completionIndex(p *corev1.Pod) int {
	i, err := strconv.Atoi(p.Annotations[AnnotationCompletionIndex])
	if err != nil {
		i, err = strconv.Atoi(p.Labels[AnnotationCompletionIndex])
	}
	if err != nil {
		return -1
	}
	return i
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// AddStage appends a stage result (nccl-multi, after the node's own
// stages) to a node's result and its record, and sets both verdicts anew.
func AddStage(res *Result, sr StageResult) {
	res.Stages = append(res.Stages, sr)
	res.Verdict = runVerdict(res.Stages)
	if res.Predicate != nil {
		res.Predicate.Stages = append(res.Predicate.Stages, sr)
		res.Predicate.Verdict = res.Verdict
		if sr.Finished.After(res.Predicate.Finished) {
			res.Predicate.Finished = sr.Finished
		}
	}
}

// MultiServicePermissions are what the nccl-multi stage needs beyond the
// Job stages' permissions: the headless Service of each group.
func MultiServicePermissions(ns string) []Permission {
	return []Permission{
		{Verb: "create", Resource: "services", Namespace: ns, Why: "give the nccl-multi rank pods DNS names (headless Service)"},
		{Verb: "delete", Resource: "services", Namespace: ns, Why: "clean up the nccl-multi Service"},
	}
}
