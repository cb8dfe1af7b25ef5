package accept

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// jobStage runs one stage's Job and judges its output.
func (r *Runner) jobStage(ctx context.Context, s *runState, st Stage) (StageResult, error) {
	started := r.now()
	finish := func(res StageResult) StageResult {
		res.Started, res.Finished = started, r.now()
		return res
	}
	out, img, early, err := r.execJob(ctx, s, st)
	if err != nil || early != nil {
		return finishEarly(early, finish), err
	}
	ev, err := s.saveOutput(st, out)
	if err != nil {
		return StageResult{}, err
	}
	res := Judge(st, out, s.exp, s.plan.Baselines, r.Parser, &s.obs)
	res.Image, res.Evidence = img.Ref, ev
	if d, _ := stageOf(st); d.probeImage && s.plan.ProbeImage != "" {
		res.Image = s.plan.ProbeImage
	}
	return finish(res), nil
}

// finishEarly is the finished result of a stage that ended before its Job
// ran (early), or the zero result when there is none (an error).
func finishEarly(early *StageResult, finish func(StageResult) StageResult) StageResult {
	if early == nil {
		return StageResult{}
	}
	return finish(*early)
}

// execJob plans stage st's Job on the run's node (reading the node when
// the kubernetes stage did not), runs it and deletes it, and returns its
// output and image. early is the stage's result when no Job could run (the
// node unreadable, the image too new, permissions missing); err is
// gpuctl's own.
func (r *Runner) execJob(ctx context.Context, s *runState, st Stage) (out StageOutput, img Image, early *StageResult, err error) {
	if s.node == nil { // the kubernetes stage was not selected
		node, err := r.readNode(ctx, s)
		if err != nil {
			s.stopWhy = "the node could not be read"
			res := withCause(result(st, diag.Inconclusive, "%v", err), CauseCluster)
			return out, img, &res, nil
		}
		s.setNode(node, nil)
	}
	// The same planning as a dry run's (PlanNode), with the driver CUDA
	// version seen so far.
	sp, err := PlanStage(s.plan, s.node, st, s.obs.DriverCUDA)
	if err != nil {
		return out, img, nil, err
	}
	img = sp.Image
	if img.Ref != "" {
		s.images[st] = img
	}
	if sp.Problem != "" {
		res := withCause(result(st, diag.Inconclusive, "%s", sp.Problem), CauseHarness)
		res.Image = img.Ref
		return out, img, &res, nil
	}
	if len(r.Denied) > 0 {
		s.stopWhy = "the identity running gpuctl lacks permissions the Job stages need"
		res := withCause(result(st, diag.Inconclusive, "%s", deniedReason(r.Denied)), CauseCluster)
		res.Image = img.Ref
		return out, img, &res, nil
	}
	s.log.Info("stage started", "stage", st, "image", img.Ref)
	if d, _ := stageOf(st); d.nodeJob {
		out, err = r.runInNodeJob(ctx, s, st, sp)
		return out, img, nil, err
	}
	out = r.runJob(ctx, s, sp.Job)
	if s.jobCreated(sp.Job.Name) {
		if err := r.finishJob(ctx, s, sp.Job.Namespace, sp.Job.Name, st); err != nil {
			// The next stage's pod would meet this one's leftovers.
			s.stopWhy = "the previous stage's Job could not be cleaned up"
			if out.Harness == "" {
				out.Harness, out.Cause = fmt.Sprintf("cleanup failed: %v", err), CauseCluster
			} else {
				out.Harness += fmt.Sprintf("; cleanup failed: %v", err)
			}
		}
	}
	return out, img, nil, nil
}

// runJob creates the Job, follows it through the shared tracker, collects
// the logs and deletes the Job again (once). A Job, pod or node deleted by
// someone else ends the stage at once; an API server that goes away is
// waited for (the tracker's watches resume with backoff, API calls are
// retried while the stage's time lasts).
func (r *Runner) runJob(ctx context.Context, s *runState, job *batchv1.Job) StageOutput {
	out := StageOutput{Logs: map[string][]byte{}, ExitCode: map[string]int32{}, Message: map[string]string{}}
	timeout := s.plan.StageTimeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	// Allow the Job's own deadline to be reported before ours expires.
	sctx, cancel := context.WithTimeout(ctx, timeout+15*time.Second)
	defer cancel()
	p := r.createJob(ctx, sctx, s, job)
	var pod *corev1.Pod
	if p == nil {
		pod, p = r.followJob(ctx, sctx, s, job, timeout)
	}
	if p == nil {
		p = r.collectOutput(ctx, sctx, job.Namespace, pod, &out)
	}
	if p != nil {
		out.Harness, out.Cause = p.reason, p.cause
	}
	return out
}

// harnessProblem is why the harness could not run a stage's probe (a
// StageOutput's Harness) and its cause (CauseCluster, CauseHarness,
// CauseNode for a probe that hung, CauseInterrupted).
type harnessProblem struct{ cause, reason string }

func problemf(cause, format string, args ...any) *harnessProblem {
	return &harnessProblem{cause: cause, reason: fmt.Sprintf(format, args...)}
}

// interruptedOr is p, or "interrupted" when ctx (the run's, not the
// stage's) is over: the failed call was cut short by the run's end.
func interruptedOr(ctx context.Context, p *harnessProblem) *harnessProblem {
	if ctx.Err() != nil {
		return problemf(CauseInterrupted, "interrupted: %v", context.Cause(ctx))
	}
	return p
}

// createJob creates a stage's Job (unless its node is gone) and notes it
// as the run's, to be deleted.
func (r *Runner) createJob(ctx, sctx context.Context, s *runState, job *batchv1.Job) *harnessProblem {
	if s.tr.nodeGone(s.plan.Node) {
		return problemf(CauseCluster, "node %s was deleted; no Job was created", s.plan.Node)
	}
	err := createOnce(sctx, func(ctx context.Context) error {
		_, err := r.Client.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return interruptedOr(ctx, problemf(CauseCluster, "%s", apiProblem(err, "create", "jobs.batch", job.Namespace)))
	}
	s.mu.Lock()
	s.jobs = append(s.jobs, job.Name)
	s.mu.Unlock()
	return nil
}

// followJob follows a stage's Job on the tracker's cache until its pod
// finished, or the Job is done and its pod's last updates had their time
// (turn), and returns the pod (nil when none was created). It stops at
// once when the node, the Job or the pod is deleted, the pod cannot run the
// probe, or the stage times out.
func (r *Runner) followJob(ctx, sctx context.Context, s *runState, job *batchv1.Job, timeout time.Duration) (*corev1.Pod, *harnessProblem) {
	ns, st := job.Namespace, Stage(job.Labels[LabelStage])
	var pod *corev1.Pod
	var doneAt time.Time
	since := time.Now()
	for {
		deletedJobs, deletedPods, nodeGone := s.tr.events(s.plan.RunID)
		if nodeGone {
			return nil, problemf(CauseCluster, "node %s was deleted during the stage%s", s.plan.Node, podState(pod))
		}
		if deletedJobs[job.Name] {
			return nil, problemf(CauseCluster, "Job %s/%s was deleted by someone else before the stage finished%s", ns, job.Name, podState(pod))
		}
		_, pods := s.tr.runObjects(s.plan.RunID, st)
		if p := newestPodOf(pods); p != nil {
			pod = p.DeepCopy()
		}
		if p := podProblem(ns, pod, deletedPods); p != nil {
			return nil, p
		}
		jobDone, deadline := jobState(s.tr.job(job.Name))
		if deadline {
			return nil, problemf(timeoutCause(s.tr, since, podRunning(pod)), "stage timed out after %s (Job activeDeadlineSeconds)%s", timeout, podState(pod))
		}
		if pod != nil && podFinished(pod) {
			return pod, nil
		}
		settled, ended := s.watch.turn(sctx, jobDone, &doneAt)
		if settled {
			return pod, nil
		}
		if ended {
			return nil, interruptedOr(ctx, problemf(timeoutCause(s.tr, since, podRunning(pod)), "stage timed out after %s%s", timeout, podState(pod)))
		}
	}
}

// podProblem says why a stage's pod (in namespace ns; nil before it
// exists) ends the stage early: someone else deleted it before it
// finished, or the probe cannot run in it (podHarnessProblem).
func podProblem(ns string, pod *corev1.Pod, deletedPods map[string]bool) *harnessProblem {
	if pod == nil {
		return nil
	}
	if deletedPods[pod.Name] && !podFinished(pod) {
		return problemf(CauseCluster, "pod %s/%s was deleted by someone else before the probe finished", ns, pod.Name)
	}
	if why := podHarnessProblem(pod); why != "" {
		return problemf(CauseHarness, "%s", why)
	}
	return nil
}

// collectOutput reads the finished pod's exit codes, termination messages
// and container logs into out.
func (r *Runner) collectOutput(ctx, sctx context.Context, ns string, pod *corev1.Pod, out *StageOutput) *harnessProblem {
	if pod == nil {
		return problemf(CauseHarness, "the Job finished without a pod")
	}
	if why := podHarnessProblem(pod); why != "" {
		return problemf(CauseHarness, "%s", why)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		out.noteExit(cs.Name, cs)
	}
	for _, c := range pod.Spec.Containers {
		data, p := r.readLog(ctx, sctx, ns, pod.Name, c.Name)
		if p != nil {
			return p
		}
		out.Logs[c.Name] = data
	}
	return nil
}

// noteExit keeps, under key, the exit code of a terminated container (and
// its termination message when it exited non-zero).
func (out *StageOutput) noteExit(key string, cs corev1.ContainerStatus) {
	if t := cs.State.Terminated; t != nil {
		out.ExitCode[key] = t.ExitCode
		if t.ExitCode != 0 && t.Message != "" {
			out.Message[key] = t.Message
		}
	}
}

// readLog reads container's log in pod, retrying while the stage's time
// (sctx) lasts; the problem names the pod, the container and the API error.
func (r *Runner) readLog(ctx, sctx context.Context, ns, pod, container string) ([]byte, *harnessProblem) {
	var data []byte
	err := retry(sctx, func(ctx context.Context) error {
		var err error
		data, err = r.containerLog(ctx, ns, pod, container)
		return err
	})
	if err != nil {
		return nil, interruptedOr(ctx, problemf(CauseCluster, "reading the log of %s/%s: %s", pod, container, apiProblem(err, "get", "pods/log", ns)))
	}
	return data, nil
}

// turn ends one turn of a stage's follow loop. The Job may finish (jobDone)
// before its pods' last updates reach the cache: they get 5 seconds from
// *doneAt, then settled says to judge what there is. Otherwise it waits for
// the tracker's next event (a second at most once the Job is done); ended
// says the stage's context sctx is over.
func (w *runWatch) turn(sctx context.Context, jobDone bool, doneAt *time.Time) (settled, ended bool) {
	var wait time.Duration
	if jobDone {
		if doneAt.IsZero() {
			*doneAt = time.Now()
		}
		if time.Since(*doneAt) > 5*time.Second {
			return true, false
		}
		wait = time.Second
	}
	w.wait(sctx, wait)
	return false, sctx.Err() != nil
}

// jobState says whether the Job finished, and whether it failed by its
// activeDeadlineSeconds.
func jobState(j *batchv1.Job) (done, deadline bool) {
	if j == nil {
		return false, false
	}
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete, batchv1.JobSuccessCriteriaMet:
			done = true
		case batchv1.JobFailed, batchv1.JobFailureTarget:
			done = true
			if c.Reason == batchv1.JobReasonDeadlineExceeded {
				deadline = true
			}
		}
	}
	return done, deadline
}

// timeoutCause is the cause of a stage that timed out: the cluster when
// gpuctl saw the API server away since the stage started (a watch of tr
// failed), else the node when the probe had started on it (started), else
// the harness.
func timeoutCause(tr *tracker, since time.Time, started bool) string {
	switch {
	case tr.outageSince(since):
		return CauseCluster
	case started:
		return CauseNode
	}
	return CauseHarness
}

// podRunning reports whether p (nil: none yet) is Running.
func podRunning(p *corev1.Pod) bool { return p != nil && p.Status.Phase == corev1.PodRunning }

func newestPodOf(pods []*corev1.Pod) *corev1.Pod {
	var newest *corev1.Pod
	for _, p := range pods {
		if newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp) {
			newest = p
		}
	}
	return newest
}

func (r *Runner) containerLog(ctx context.Context, ns, pod, container string) ([]byte, error) {
	if r.Logs != nil {
		return r.Logs(ctx, ns, pod, container)
	}
	return r.Client.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
}

func podFinished(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		return false
	}
	if len(p.Status.ContainerStatuses) == 0 {
		return true // rejected before any container ran
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated == nil {
			return false
		}
	}
	return true
}

func podState(p *corev1.Pod) string {
	if p == nil {
		return "; no pod was created"
	}
	s := fmt.Sprintf("; pod %s was %s", p.Name, p.Status.Phase)
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			s += fmt.Sprintf(", %s waiting: %s", cs.Name, w.Reason)
		}
	}
	return s
}

// podHarnessProblem returns why the probe could not run in this pod (image
// pull failure, container creation error, unschedulable, rejected by the
// node), or "".
func podHarnessProblem(p *corev1.Pod) string {
	if why := containerWaitProblem(p); why != "" {
		return why
	}
	return podLevelProblem(p)
}

// podLevelProblem returns why no container can run in pod p (unschedulable,
// rejected by the node), or "".
func podLevelProblem(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return fmt.Sprintf("unschedulable: %s", c.Message)
		}
	}
	if p.Status.Phase == corev1.PodFailed && p.Status.Reason != "" && noContainerStarted(p) {
		return fmt.Sprintf("pod rejected by the node (%s): %s", p.Status.Reason, p.Status.Message)
	}
	return ""
}

// containerWaitProblem returns why an (init) container of p waits for good:
// its image cannot be pulled or it cannot be created; or "".
func containerWaitProblem(p *corev1.Pod) string {
	return waitProblem(allStatuses(p))
}

// allStatuses returns the statuses of p's init containers, then of its
// containers.
func allStatuses(p *corev1.Pod) []corev1.ContainerStatus {
	return append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
}

// waitProblem returns why one of the containers of statuses waits for good
// (containerWaitProblem), or "".
func waitProblem(statuses []corev1.ContainerStatus) string {
	for _, cs := range statuses {
		w := cs.State.Waiting
		if w == nil {
			continue
		}
		switch w.Reason {
		case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable":
			return fmt.Sprintf("image pull failed for %s (%s): %s", cs.Image, w.Reason, w.Message)
		case "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
			return fmt.Sprintf("container %s could not start (%s): %s", cs.Name, w.Reason, w.Message)
		}
	}
	return ""
}

// noContainerStarted reports whether none of p's containers ever started
// (also when it has no container statuses: rejected before any ran).
func noContainerStarted(p *corev1.Pod) bool {
	for _, cs := range allStatuses(p) {
		if cs.State.Terminated != nil && cs.State.Terminated.StartedAt.Time != (time.Time{}) {
			return false
		}
	}
	return true
}

var background = metav1.DeletePropagationBackground

// finishJob deletes a stage's Job and waits until it and its pods are gone,
// so that the next stage's pod, which asks for the same GPUs, is not
// rejected by the kubelet while this one still holds them. A delete the API
// server forbids fails at once.
func (r *Runner) finishJob(ctx context.Context, s *runState, ns, name string, st Stage) error {
	if err := r.deleteJob(ctx, s, ns, name); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cleanupTimeout())
	defer cancel()
	if err := r.waitGone(wctx, s, ns, st); err != nil {
		return err
	}
	s.mu.Lock()
	if s.gone == nil {
		s.gone = map[string]bool{}
	}
	s.gone[name] = true
	s.mu.Unlock()
	return nil
}

func (r *Runner) cleanupTimeout() time.Duration {
	if r.CleanupTimeout > 0 {
		return r.CleanupTimeout
	}
	return 60 * time.Second
}

// deleteJob deletes one of the run's Jobs, once: a Job already deleted is
// not deleted again. It runs also after ctx is cancelled, and retries while
// the API server is away. The propagation is background: the Job goes at
// once and its pods, orphaned, are deleted by waitGone itself (gpuctl's own
// requests) rather than through the garbage collector's foreground
// deletion, which costs the controller manager's rate-limited garbage
// collector about ten requests per Job and was what a fleet waited for
// (docs/accept.md, "Performance at fleet scale").
func (r *Runner) deleteJob(ctx context.Context, s *runState, ns, name string) error {
	s.mu.Lock()
	done := s.deleted[name]
	s.mu.Unlock()
	if done {
		return nil
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := retry(dctx, func(ctx context.Context) error {
		return r.Client.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Job %s: %s", name, apiProblem(err, "delete", "jobs.batch", ns))
	}
	s.mu.Lock()
	s.deleted[name] = true
	s.mu.Unlock()
	return nil
}

// cleanup deletes every Job the run created that is not deleted yet, then
// waits until none of the run's Jobs and pods is left.
func (r *Runner) cleanup(ctx context.Context, s *runState) error {
	s.mu.Lock()
	jobs := append([]string(nil), s.jobs...)
	left := 0
	for _, name := range jobs {
		if !s.gone[name] {
			left++
		}
	}
	s.mu.Unlock()
	// Every Job that finishJob saw gone, with its pods (confirmed with a
	// list), needs no second wait and no second list.
	if left == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cleanupTimeout())
	defer cancel()
	ns, sel := s.plan.Namespace, RunSelector(s.plan.RunID)
	var err error
	for _, name := range jobs {
		if derr := r.deleteJob(cctx, s, ns, name); derr != nil && err == nil {
			err = derr
		}
	}
	if err == nil {
		err = r.waitGone(cctx, s, ns, "")
	}
	if err != nil {
		return fmt.Errorf("cleanup of run %s in namespace %s: %w (delete leftovers with: kubectl delete jobs,pods -n %s -l %s)", s.plan.RunID, ns, err, ns, sel)
	}
	s.log.Debug("cleaned up", "jobs", len(jobs))
	return nil
}

// waitGone waits, on the tracker's cache, until no Job and no pod of the
// run (of stage st when set) is left. A pod whose Job is gone and that is
// not being deleted (orphaned) is deleted directly: it carries the run's
// label, so it was created for it.
func (r *Runner) waitGone(ctx context.Context, s *runState, ns string, st Stage) error {
	podDeletes := map[string]bool{}
	for {
		jobs, pods := s.tr.runObjects(s.plan.RunID, st)
		if len(jobs) == 0 && len(pods) == 0 {
			// The cache may lag the API server (a pod made just before
			// its Job was deleted): confirm with one list before leaving.
			left, err := r.livePods(ctx, ns, s.plan.RunID, st)
			if err != nil || len(left) == 0 {
				return nil
			}
			pods = left
		}
		if err := r.deleteOrphans(ctx, s, ns, jobs, pods, podDeletes); err != nil {
			return err
		}
		s.watch.wait(ctx, 2*time.Second)
		if ctx.Err() != nil {
			return errors.New("timed out waiting for the run's Jobs and pods to be deleted")
		}
	}
}

// deleteOrphans deletes those of pods that their Job's deletion does not
// take away: a pod none of jobs owns that is not being deleted, and
// (at once, grace 0) a pod on a deleted node. done holds the deletes
// already asked for ("POD", "POD/force"), each asked once.
func (r *Runner) deleteOrphans(ctx context.Context, s *runState, ns string, jobs []*batchv1.Job, pods []*corev1.Pod, done map[string]bool) error {
	owners := map[string]bool{}
	for _, j := range jobs {
		owners[string(j.UID)] = true
	}
	for _, p := range pods {
		// A pod on a deleted node has no kubelet to finish its
		// deletion: it is deleted at once (grace 0).
		gone := p.Spec.NodeName != "" && s.tr.nodeGone(p.Spec.NodeName)
		key := p.Name
		if gone {
			key += "/force"
		}
		if done[key] || (!gone && (p.DeletionTimestamp != nil || ownedBy(p, owners))) {
			continue
		}
		done[key] = true
		if err := r.deletePod(ctx, ns, p.Name, gone); err != nil {
			return err
		}
	}
	return nil
}

// ownedBy reports whether one of p's owners has a UID in owners.
func ownedBy(p *corev1.Pod, owners map[string]bool) bool {
	for _, o := range p.OwnerReferences {
		if owners[string(o.UID)] {
			return true
		}
	}
	return false
}

// deletePod deletes pod name of namespace ns (with grace 0 when force),
// retrying while the API server is away; one already gone is fine.
func (r *Runner) deletePod(ctx context.Context, ns, name string, force bool) error {
	opts := metav1.DeleteOptions{}
	if force {
		opts.GracePeriodSeconds = ptr(int64(0))
	}
	err := retry(ctx, func(ctx context.Context) error {
		return r.Client.CoreV1().Pods(ns).Delete(ctx, name, opts)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting pod %s: %s", name, apiProblem(err, "delete", "pods", ns))
	}
	return nil
}

// livePods lists, from the API server rather than the cache, the run's pods
// (of stage st when set) that are not being deleted yet.
func (r *Runner) livePods(ctx context.Context, ns, runID string, st Stage) ([]*corev1.Pod, error) {
	var list *corev1.PodList
	err := retry(ctx, func(ctx context.Context) error {
		var err error
		list, err = r.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: RunSelector(runID)})
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp == nil && (st == "" || p.Labels[LabelStage] == string(st)) {
			out = append(out, p)
		}
	}
	return out, nil
}
