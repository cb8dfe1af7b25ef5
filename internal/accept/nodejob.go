package accept

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// The node-local stages of a run share one Job (BuildNodeJob): its pod runs
// their containers one after another, and the runner judges each stage as
// soon as its containers have ended, while the later ones run. A stage
// that stops the run (a FAIL without --continue, a deletion) ends the Job
// at once; so does a stage that times out or cannot run. The stages after
// one that ended the Job, and the stages whose containers the pod never ran
// (an earlier container exited non-zero, which ends a pod's init
// containers), run in a new node Job from that stage on, as does a stage
// whose image the driver CUDA version seen by inventory changes. In the
// common case, every stage passing, a node costs one Job.

// segment is one node Job of a run: the node-local stages from its first
// on that could be planned, run in order in one pod.
type segment struct {
	job    *batchv1.Job
	stages []Stage
	// images are the image references the stages were planned with.
	images map[Stage]string
	// containers are each stage's containers in the pod.
	containers map[Stage][]PodContainer
	// over: no stage may be awaited in this Job any more (it ended early,
	// was deleted, or a stage timed out in it).
	over bool
}

// holds reports whether stage st, planned with image, can be awaited in g.
func (g *segment) holds(st Stage, image string) bool {
	if g == nil || g.over {
		return false
	}
	ref, ok := g.images[st]
	return ok && ref == image
}

// names returns the pod's names of stage st's containers.
func (g *segment) names(st Stage) []string {
	var out []string
	for _, c := range g.containers[st] {
		out = append(out, c.Name)
	}
	return out
}

// nodeJobStages returns the selected node-local stages of s's plan from
// stage from on, in run order.
func (s *runState) nodeJobStages(from Stage) []Stage {
	var out []Stage
	seen := false
	for _, st := range AllStages {
		seen = seen || st == from
		d, _ := stageOf(st)
		if seen && d.nodeJob && slices.Contains(s.plan.Stages, st) {
			out = append(out, st)
		}
	}
	return out
}

// planSegment plans the node Job of s's node-local stages from stage from
// on, each with the driver CUDA version seen so far; a stage that cannot
// run (StagePlan.Problem) is left out and judged when its turn comes. An
// error is gpuctl's (a stage without an image).
func planSegment(s *runState, from Stage) (*segment, error) {
	g := &segment{images: map[Stage]string{}, containers: map[Stage][]PodContainer{}}
	var specs []JobSpec
	for _, st := range s.nodeJobStages(from) {
		sp, err := PlanStage(s.plan, s.node, st, s.obs.DriverCUDA)
		if err != nil {
			return nil, err
		}
		if sp.Job == nil {
			continue
		}
		specs = append(specs, sp.Spec)
		g.images[st] = sp.Image.Ref
		g.stages = append(g.stages, st)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("accept: no node-local stage from %s can be planned", from)
	}
	g.job = BuildNodeJob(specs)
	for _, c := range PodContainers(specs) {
		g.containers[c.Stage] = append(g.containers[c.Stage], c)
	}
	return g, nil
}

// runInNodeJob runs node-local stage st, planned as sp, in the run's node
// Job (starting one from st when the current one cannot hold it) and
// returns its output. A stage the pod ended before (an earlier container
// exited non-zero) is run once more in a node Job of its own from st on.
func (r *Runner) runInNodeJob(ctx context.Context, s *runState, st Stage, sp StagePlan) (StageOutput, error) {
	for again := false; ; again = true {
		if !s.seg.holds(st, sp.Image.Ref) {
			p, err := r.startSegment(ctx, s, st)
			if err != nil || p != nil {
				return harnessOutput(p), err
			}
		}
		out, rerun := r.awaitStage(ctx, s, s.seg, st)
		if !rerun || again {
			return out, nil
		}
		s.seg.over = true
	}
}

// harnessOutput is the output of a stage that ran no container, for
// problem p (nil: the zero output).
func harnessOutput(p *harnessProblem) StageOutput {
	out := newStageOutput()
	if p != nil {
		out.Harness, out.Cause = p.reason, p.cause
	}
	return out
}

func newStageOutput() StageOutput {
	return StageOutput{Logs: map[string][]byte{}, ExitCode: map[string]int32{}, Message: map[string]string{}}
}

// startSegment ends the run's node Job (deleting it and waiting until its
// pod is gone, which frees the GPUs), plans a new one from stage st on and
// creates it. A problem is why it could not (the stage is INCONCLUSIVE);
// an error is gpuctl's.
func (r *Runner) startSegment(ctx context.Context, s *runState, st Stage) (*harnessProblem, error) {
	if err := r.endSegment(ctx, s); err != nil {
		// The new pod would meet the old one's leftovers.
		s.stopWhy = "the previous stage's Job could not be cleaned up"
		return problemf(CauseCluster, "cleanup failed: %v", err), nil
	}
	g, err := planSegment(s, st)
	if err != nil {
		return nil, err
	}
	s.seg = g
	cctx, cancel := context.WithTimeout(ctx, stageTimeout(s.plan)+15*time.Second)
	defer cancel()
	if p := r.createJob(ctx, cctx, s, g.job); p != nil {
		g.over = true
		return p, nil
	}
	s.log.Info("node Job created", "job", g.job.Name, "stages", g.stages)
	return nil, nil
}

// endSegment deletes the run's node Job, if it created one, and waits until
// it and its pod are gone.
func (r *Runner) endSegment(ctx context.Context, s *runState) error {
	g := s.seg
	s.seg = nil
	if g == nil || !s.jobCreated(g.job.Name) {
		return nil
	}
	return r.finishJob(ctx, s, g.job.Namespace, g.job.Name, g.stages[0])
}

// stageTimeout is the plan's stage timeout (default 10 minutes).
func stageTimeout(p Plan) time.Duration {
	if p.StageTimeout > 0 {
		return p.StageTimeout
	}
	return 10 * time.Minute
}

// awaitStage follows g's pod until stage st's containers have ended, within
// the stage's timeout, and collects their output. rerun says that the pod
// ended before st's containers ran: the stage can run in a new node Job.
// A stage that did not end as it should marks g over.
func (r *Runner) awaitStage(ctx context.Context, s *runState, g *segment, st Stage) (out StageOutput, rerun bool) {
	out = newStageOutput()
	timeout := stageTimeout(s.plan)
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	f := &stageFollow{r: r, s: s, g: g, st: st, names: g.names(st), timeout: timeout, started: time.Now()}
	pod, p, rerun := f.follow(ctx, sctx)
	if rerun {
		return out, true
	}
	if p == nil {
		p = r.collectStage(ctx, sctx, g, st, pod, &out)
	}
	if p != nil {
		out.Harness, out.Cause = p.reason, p.cause
		g.over = true
	}
	return out, false
}

// stageFollow is one stage being followed in its node Job's pod.
type stageFollow struct {
	r       *Runner
	s       *runState
	g       *segment
	st      Stage
	names   []string // the stage's containers in the pod
	timeout time.Duration
	started time.Time
	pod     *corev1.Pod // the pod as last seen
}

// follow waits on the tracker's cache until the stage's containers have all
// ended and returns the pod; or a problem: the node, the Job or the pod was
// deleted (someone else's deletion stops the run), a container of the stage
// cannot run, the stage timed out; or rerun when the pod ended before the
// stage ran.
func (f *stageFollow) follow(ctx, sctx context.Context) (*corev1.Pod, *harnessProblem, bool) {
	var doneAt time.Time
	for {
		if p := f.deleted(); p != nil {
			return nil, p, false
		}
		if p := f.podProblem(); p != nil {
			return nil, p, false
		}
		if f.pod != nil && containersEnded(f.pod, f.names) {
			return f.pod, nil, false
		}
		if f.pod != nil && podEnded(f.pod) {
			return nil, problemf(CauseHarness, "the node Job's pod %s ended before the stage's containers ran", f.pod.Name), f.st != f.g.stages[0]
		}
		jobDone, deadline := jobState(f.s.tr.job(f.g.job.Name))
		if deadline {
			return nil, problemf(f.timeoutCause(), "stage timed out (the node Job's activeDeadlineSeconds)%s", stagePodState(f.pod, f.names)), false
		}
		settled, ended := f.s.watch.turn(sctx, jobDone, &doneAt)
		if settled {
			return nil, problemf(CauseHarness, "the node Job finished without running the stage%s", stagePodState(f.pod, f.names)), f.pod != nil && f.st != f.g.stages[0]
		}
		if ended {
			return nil, interruptedOr(ctx, problemf(f.timeoutCause(), "stage timed out after %s%s", f.timeout, stagePodState(f.pod, f.names))), false
		}
	}
}

// deleted is the problem of a node, Job or pod deleted mid-stage, reading
// the tracker's Deleted events and cache (which it keeps f.pod from); a
// deletion by someone else stops the run.
func (f *stageFollow) deleted() *harnessProblem {
	s, job := f.s, f.g.job
	deletedJobs, deletedPods, nodeGone := s.tr.events(s.plan.RunID)
	if nodeGone {
		return problemf(CauseCluster, "node %s was deleted during the stage%s", s.plan.Node, stagePodState(f.pod, f.names))
	}
	if deletedJobs[job.Name] {
		s.stopWhy = fmt.Sprintf("gpuctl's Job %s/%s was deleted by someone else", job.Namespace, job.Name)
		return problemf(CauseCluster, "Job %s/%s was deleted by someone else before the stage finished%s", job.Namespace, job.Name, stagePodState(f.pod, f.names))
	}
	_, pods := s.tr.runObjects(s.plan.RunID, f.g.stages[0])
	if p := newestPodOf(pods); p != nil {
		f.pod = p.DeepCopy()
	}
	if f.pod != nil && deletedPods[f.pod.Name] && !podEnded(f.pod) {
		s.stopWhy = fmt.Sprintf("gpuctl's pod %s/%s was deleted by someone else", job.Namespace, f.pod.Name)
		return problemf(CauseCluster, "pod %s/%s was deleted by someone else before the probe finished", job.Namespace, f.pod.Name)
	}
	return nil
}

// podProblem is why the stage's containers cannot run in the pod: an
// image that cannot be pulled or a container that cannot be created (of
// this stage), the pod unschedulable or rejected by the node.
func (f *stageFollow) podProblem() *harnessProblem {
	if f.pod == nil {
		return nil
	}
	if why := containerWaitProblemOf(f.pod, f.names); why != "" {
		return problemf(CauseHarness, "%s", why)
	}
	if why := podLevelProblem(f.pod); why != "" {
		return problemf(CauseHarness, "%s", why)
	}
	return nil
}

// timeoutCause: a stage whose container started on the node and did not
// finish points at the node, one that never started at the harness, one
// during which gpuctl saw the API server away at the cluster
// (timeoutCause, the one rule of every stage Job).
func (f *stageFollow) timeoutCause() string {
	return timeoutCause(f.s.tr, f.started, f.pod != nil && stageStarted(f.pod, f.names))
}

// collectStage reads the exit codes, termination messages and logs of stage
// st's containers in pod into out, under their names within the stage.
func (r *Runner) collectStage(ctx, sctx context.Context, g *segment, st Stage, pod *corev1.Pod, out *StageOutput) *harnessProblem {
	ns := g.job.Namespace
	statuses := containerStatuses(pod)
	for _, c := range g.containers[st] {
		out.noteExit(c.Local, statuses[c.Name])
		data, p := r.readLog(ctx, sctx, ns, pod.Name, c.Name)
		if p != nil {
			return p
		}
		out.Logs[c.Local] = data
	}
	return nil
}

// containerStatuses returns the statuses of p's init containers and
// containers by name.
func containerStatuses(p *corev1.Pod) map[string]corev1.ContainerStatus {
	m := map[string]corev1.ContainerStatus{}
	for _, cs := range allStatuses(p) {
		m[cs.Name] = cs
	}
	return m
}

// containersEnded reports whether every one of names has terminated in p.
func containersEnded(p *corev1.Pod, names []string) bool {
	st := containerStatuses(p)
	for _, n := range names {
		if cs, ok := st[n]; !ok || cs.State.Terminated == nil {
			return false
		}
	}
	return true
}

// stageStarted reports whether one of names is running or ran in p.
func stageStarted(p *corev1.Pod, names []string) bool {
	st := containerStatuses(p)
	for _, n := range names {
		if cs, ok := st[n]; ok && (cs.State.Running != nil || cs.State.Terminated != nil) {
			return true
		}
	}
	return false
}

// podEnded reports whether p's phase is final.
func podEnded(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// containerWaitProblemOf is containerWaitProblem for the containers names
// of p only: a later stage's image is pulled when its turn comes.
func containerWaitProblemOf(p *corev1.Pod, names []string) string {
	return waitProblem(slices.DeleteFunc(allStatuses(p), func(c corev1.ContainerStatus) bool { return !slices.Contains(names, c.Name) }))
}

// stagePodState is podState for the containers names of p.
func stagePodState(p *corev1.Pod, names []string) string {
	if p == nil {
		return "; no pod was created"
	}
	s := fmt.Sprintf("; pod %s was %s", p.Name, p.Status.Phase)
	st := containerStatuses(p)
	for _, n := range names {
		if w := st[n].State.Waiting; w != nil && w.Reason != "" {
			s += fmt.Sprintf(", %s waiting: %s", n, w.Reason)
		}
		if st[n].State.Running != nil {
			s += fmt.Sprintf(", %s running", n)
		}
	}
	return s
}
