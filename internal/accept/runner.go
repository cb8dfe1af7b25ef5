package accept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// Plan is one node's acceptance run.
type Plan struct {
	Node      string
	RunID     string // DNS-1123 label; NewRunID makes one
	Namespace string
	// Stages to run, in AllStages order; the others are SKIPPED.
	Stages []Stage
	// Images overrides the default image of a stage.
	Images map[Stage]string
	// ProbeImage is a gpuctl image (make build-nvml) the inventory stage
	// runs `gpuctl probe nvml -o json` in instead of nvidia-smi; "" for
	// nvidia-smi.
	ProbeImage string
	// Expect, when set, is used instead of expectations derived from the
	// node (Catalogue, labels, capacity).
	Expect    *Expectations
	Catalogue Catalogue
	Baselines *Baselines
	// StageTimeout bounds each Job stage; RunTimeout the whole run; TTL is the
	// Jobs' ttlSecondsAfterFinished.
	StageTimeout time.Duration
	RunTimeout   time.Duration
	TTL          time.Duration
	// Continue runs the later stages after a FAIL; Force probes although
	// other pods hold GPUs; AllowPrivileged allows privileged probes.
	Continue, Force, AllowPrivileged bool
	DCGMLevel                        int
	NCCLMaxBytes                     string
	// EvidenceDir receives the raw outputs (created if needed).
	EvidenceDir string
	// Version is gpuctl's version, for the record.
	Version string
}

// Result is a finished run.
type Result struct {
	Node      string
	RunID     string
	Verdict   diag.Verdict
	Stages    []StageResult
	Predicate *Predicate
	// EvidenceDir is where the raw outputs are.
	EvidenceDir string
}

// Runner runs Plans against a cluster.
type Runner struct {
	Client kubernetes.Interface
	Parser Parser
	// Logs returns a container's log; nil reads it through Client.
	Logs func(ctx context.Context, namespace, pod, container string) ([]byte, error)
	// Log receives progress (stage started, finished, cleanup); nil discards.
	Log *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// CleanupTimeout bounds deleting and waiting for the run's objects to be
	// gone (default 60s).
	CleanupTimeout time.Duration
	// Denied are the permissions the caller lacks (CheckAccess): with any,
	// the Job stages create nothing and are INCONCLUSIVE, naming them.
	Denied []Permission
	// WatchNodes shares one watch of the nodes, so that a node deleted
	// mid-run ends its stage at once (needs nodes list and watch).
	WatchNodes bool
	// Progress, when set, is told of each stage that starts and finishes.
	Progress func(ProgressEvent)

	mu       sync.Mutex
	trackers map[string]*tracker
}

// ProgressEvent is one stage of one node starting (Verdict "") or finishing.
type ProgressEvent struct {
	Node    string
	Stage   Stage
	Verdict diag.Verdict
}

func (r *Runner) progress(node string, st Stage, v diag.Verdict) {
	if r.Progress != nil {
		r.Progress(ProgressEvent{Node: node, Stage: st, Verdict: v})
	}
}

// tracker returns the shared tracker of namespace ns, starting it when
// there is none; started reports whether this call started it.
func (r *Runner) tracker(ctx context.Context, ns string) (t *tracker, started bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.trackers[ns]; t != nil {
		return t, false, nil
	}
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if t, err = newTracker(sctx, r.Client, ns, r.WatchNodes); err != nil {
		return nil, false, err
	}
	if r.trackers == nil {
		r.trackers = map[string]*tracker{}
	}
	r.trackers[ns] = t
	return t, true, nil
}

func (r *Runner) dropTracker(ns string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.trackers[ns]; t != nil {
		t.close()
		delete(r.trackers, ns)
	}
}

// NewRunID returns a fresh run id: UTC time and 4 random hex digits,
// e.g. "20261129t154400-a1b2".
func NewRunID(now time.Time, random uint16) string {
	return fmt.Sprintf("%s-%04x", now.UTC().Format("20060102t150405"), random)
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

func (r *Runner) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// runState is what one run accumulates.
type runState struct {
	parser   Parser
	plan     Plan
	exp      Expectations
	obs      Observed
	node     *corev1.Node
	facts    *NodeFacts
	gpus     int
	images   map[Stage]Image
	results  []StageResult
	log      *slog.Logger
	mu       sync.Mutex
	jobs     []string        // Jobs this run created
	deleted  map[string]bool // Jobs deleted (once)
	gone     map[string]bool // Jobs whose Job and pods were seen gone (finishJob)
	tr       *tracker
	watch    *runWatch
	stopWhy  string // set by a stage: why no later stage may run
	started  time.Time
	finished time.Time
}

// RunAll runs plans with at most parallel at a time and returns their
// results in plan order. A run that fails as a tool (error) gets a nil
// Result and its error.
func (r *Runner) RunAll(ctx context.Context, plans []Plan, parallel int) ([]*Result, []error) {
	if parallel < 1 {
		parallel = 1
	}
	results, errs := make([]*Result, len(plans)), make([]error, len(plans))
	// One tracker per namespace for the whole fleet.
	for _, ns := range planNamespaces(plans) {
		if _, started, err := r.tracker(ctx, ns); err != nil {
			for i := range plans {
				errs[i] = err
			}
			return results, errs
		} else if started {
			defer r.dropTracker(ns)
		}
	}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range plans {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = r.Run(ctx, plans[i])
		}(i)
	}
	wg.Wait()
	return results, errs
}

func planNamespaces(plans []Plan) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range plans {
		if !seen[p.Namespace] {
			seen[p.Namespace] = true
			out = append(out, p.Namespace)
		}
	}
	return out
}

// Run accepts one node. The verdicts of the stages are in the Result; err is
// only for failures of gpuctl itself (for example an unwritable evidence
// directory). Whatever happens, every Job and pod the run created is deleted
// before Run returns, also when ctx is cancelled.
func (r *Runner) Run(ctx context.Context, p Plan) (res *Result, err error) {
	if p.RunTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.RunTimeout)
		defer cancel()
	}
	s := &runState{plan: p, images: map[Stage]Image{}, deleted: map[string]bool{}, log: r.log().With("node", p.Node, "run", p.RunID), started: r.now()}
	if err := os.MkdirAll(p.EvidenceDir, 0o755); err != nil {
		return nil, fmt.Errorf("evidence directory: %w", err)
	}
	tr, started, err := r.tracker(ctx, p.Namespace)
	if err != nil {
		return nil, err
	}
	if started {
		defer r.dropTracker(p.Namespace)
	}
	s.tr, s.watch = tr, tr.register(p.RunID, p.Node)
	defer tr.unregister(p.RunID)
	defer func() {
		if cerr := r.cleanup(ctx, s); cerr != nil && err == nil {
			err = cerr
		}
	}()
	want := map[Stage]bool{}
	for _, st := range p.Stages {
		want[st] = true
	}
	stop := "" // why the remaining stages are skipped
	for _, st := range AllStages {
		if !want[st] {
			s.results = append(s.results, result(st, diag.Skipped, "not selected"))
			continue
		}
		if stop != "" {
			s.results = append(s.results, result(st, diag.Skipped, "%s", stop))
			continue
		}
		var res StageResult
		r.progress(p.Node, st, "")
		if st == StageKubernetes {
			res = r.kubernetesStage(ctx, s)
		} else {
			res, err = r.jobStage(ctx, s, st)
			if err != nil {
				return nil, err
			}
		}
		s.results = append(s.results, res)
		r.progress(p.Node, st, res.Verdict)
		s.log.Info("stage finished", "stage", st, "verdict", res.Verdict, "cause", res.Cause, "reason", res.Reason)
		switch {
		case ctx.Err() != nil:
			stop = "run interrupted or timed out"
		case s.stopWhy != "":
			stop = s.stopWhy
		case tr.nodeGone(p.Node):
			stop = fmt.Sprintf("node %s was deleted", p.Node)
		case res.Verdict == diag.Fail && !p.Continue:
			stop = fmt.Sprintf("stage %s FAILED (use --continue to run the rest)", st)
		case st == StageKubernetes && s.gpus == 0:
			stop = "the node advertises no whole GPUs to probe"
		}
	}
	s.finished = r.now()
	if err := s.writeRunFile(); err != nil {
		return nil, err
	}
	pred := BuildPredicate(s)
	return &Result{Node: p.Node, RunID: p.RunID, Verdict: pred.Verdict, Stages: s.results, Predicate: pred, EvidenceDir: p.EvidenceDir}, nil
}

// kubernetesStage reads the node and the pods on it (API only).
func (r *Runner) kubernetesStage(ctx context.Context, s *runState) StageResult {
	started := r.now()
	finish := func(res StageResult) StageResult {
		res.Started, res.Finished = started, r.now()
		return res
	}
	node, err := r.readNode(ctx, s)
	if err != nil {
		s.stopWhy = "the node could not be read"
		return finish(withCause(result(StageKubernetes, diag.Inconclusive, "%v", err), CauseCluster))
	}
	var pods *corev1.PodList
	err = retry(ctx, func(ctx context.Context) error {
		var err error
		pods, err = r.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", s.plan.Node).String()})
		return err
	})
	if err != nil {
		s.stopWhy = "the pods on the node could not be listed"
		return finish(withCause(result(StageKubernetes, diag.Inconclusive, "listing pods on node %s: %s", s.plan.Node, apiProblem(err, "list", "pods", "(all)")), CauseCluster))
	}
	onNode := pods.Items[:0]
	for _, p := range pods.Items {
		if p.Spec.NodeName == s.plan.Node {
			onNode = append(onNode, p)
		}
	}
	pods.Items = onNode
	s.setNode(node, pods.Items)
	var ev []Evidence
	for name, v := range map[string]any{"kubernetes.node.json": nodeEvidence(node), "kubernetes.pods.json": podsEvidence(pods.Items)} {
		e, err := s.save(name, v)
		if err != nil {
			return finish(result(StageKubernetes, diag.Inconclusive, "saving evidence: %v", err))
		}
		ev = append(ev, e)
	}
	sort.Slice(ev, func(i, j int) bool { return ev[i].Name < ev[j].Name })
	res := JudgeKubernetes(node, pods.Items, s.exp, s.plan.RunID, s.plan.Force)
	res.Evidence = ev
	if len(gpuHolders(pods.Items, s.plan.RunID)) > 0 && !s.plan.Force {
		s.stopWhy = "other pods hold GPUs on the node (use --force to probe anyway)"
	}
	return finish(res)
}

// readNode reads the run's node from the tracker's cache, else from the API
// (retrying while the API server is away).
func (r *Runner) readNode(ctx context.Context, s *runState) (*corev1.Node, error) {
	if n := s.tr.node(s.plan.Node); n != nil {
		return n.DeepCopy(), nil
	}
	if s.tr.nodeGone(s.plan.Node) {
		return nil, fmt.Errorf("node %s was deleted", s.plan.Node)
	}
	var node *corev1.Node
	err := retry(ctx, func(ctx context.Context) error {
		var err error
		node, err = r.Client.CoreV1().Nodes().Get(ctx, s.plan.Node, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("node %s was deleted", s.plan.Node)
	}
	if err != nil {
		return nil, fmt.Errorf("reading node %s: %s", s.plan.Node, apiProblem(err, "get", "nodes", "(cluster)"))
	}
	return node, nil
}

func (s *runState) jobCreated(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		if j == name {
			return true
		}
	}
	return false
}

// setNode records the node, derives the expectations and the GPUs to probe.
func (s *runState) setNode(node *corev1.Node, pods []corev1.Pod) {
	s.node = node
	s.facts = DescribeNode(node, pods)
	s.obs.Kubernetes = s.facts
	s.exp = planExpectations(s.plan, node)
	s.gpus, _ = GPUCapacity(node)
	if s.obs.DriverCUDA == "" {
		s.obs.DriverCUDA = DriverCUDAFromLabels(node)
	}
}

// jobStage runs one stage's Job and judges its output.
func (r *Runner) jobStage(ctx context.Context, s *runState, st Stage) (StageResult, error) {
	started := r.now()
	finish := func(res StageResult) StageResult {
		res.Started, res.Finished = started, r.now()
		return res
	}
	if s.node == nil { // the kubernetes stage was not selected
		node, err := r.readNode(ctx, s)
		if err != nil {
			s.stopWhy = "the node could not be read"
			return finish(withCause(result(st, diag.Inconclusive, "%v", err), CauseCluster)), nil
		}
		s.setNode(node, nil)
	}
	// The same planning as a dry run's (PlanNode), with the driver CUDA
	// version seen so far.
	sp, err := PlanStage(s.plan, s.node, st, s.obs.DriverCUDA)
	if err != nil {
		return StageResult{}, err
	}
	img := sp.Image
	if img.Ref != "" {
		s.images[st] = img
	}
	if sp.Problem != "" {
		res := finish(withCause(result(st, diag.Inconclusive, "%s", sp.Problem), CauseHarness))
		res.Image = img.Ref
		return res, nil
	}
	if len(r.Denied) > 0 {
		s.stopWhy = "the identity running gpuctl lacks permissions the Job stages need"
		res := finish(withCause(result(st, diag.Inconclusive, "%s", deniedReason(r.Denied)), CauseCluster))
		res.Image = img.Ref
		return res, nil
	}
	s.log.Info("stage started", "stage", st, "image", img.Ref)
	out := r.runJob(ctx, s, sp.Job)
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
	ev, err := s.saveOutput(st, out)
	if err != nil {
		return StageResult{}, err
	}
	res := Judge(st, out, s.exp, s.plan.Baselines, r.Parser, &s.obs)
	res.Image, res.Evidence = img.Ref, ev
	if st == StageInventory && s.plan.ProbeImage != "" {
		res.Image = s.plan.ProbeImage
	}
	return finish(res), nil
}

// runJob creates the Job, follows it through the shared tracker, collects
// the logs and deletes the Job again (once). A Job, pod or node deleted by
// someone else ends the stage at once; an API server that goes away is
// waited for (the tracker's watches resume with backoff, API calls are
// retried while the stage's time lasts).
func (r *Runner) runJob(ctx context.Context, s *runState, job *batchv1.Job) StageOutput {
	out := StageOutput{Logs: map[string][]byte{}, ExitCode: map[string]int32{}, Message: map[string]string{}}
	harness := func(cause, format string, args ...any) StageOutput {
		out.Harness, out.Cause = fmt.Sprintf(format, args...), cause
		return out
	}
	timeout := s.plan.StageTimeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	// Allow the Job's own deadline to be reported before ours expires.
	sctx, cancel := context.WithTimeout(ctx, timeout+15*time.Second)
	defer cancel()
	ns, st := job.Namespace, Stage(job.Labels[LabelStage])
	if s.tr.nodeGone(s.plan.Node) {
		return harness(CauseCluster, "node %s was deleted; no Job was created", s.plan.Node)
	}
	err := createOnce(sctx, func(ctx context.Context) error {
		_, err := r.Client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return harness(CauseInterrupted, "interrupted: %v", context.Cause(ctx))
		}
		return harness(CauseCluster, "%s", apiProblem(err, "create", "jobs.batch", ns))
	}
	s.mu.Lock()
	s.jobs = append(s.jobs, job.Name)
	s.mu.Unlock()

	var pod *corev1.Pod
	var doneAt time.Time
	for {
		deletedJobs, deletedPods, nodeGone := s.tr.events(s.plan.RunID)
		if nodeGone {
			return harness(CauseCluster, "node %s was deleted during the stage%s", s.plan.Node, podState(pod))
		}
		if deletedJobs[job.Name] {
			return harness(CauseCluster, "Job %s/%s was deleted by someone else before the stage finished%s", ns, job.Name, podState(pod))
		}
		_, pods := s.tr.runObjects(s.plan.RunID, st)
		if p := newestPodOf(pods); p != nil {
			pod = p.DeepCopy()
		}
		if pod != nil && deletedPods[pod.Name] && !podFinished(pod) {
			return harness(CauseCluster, "pod %s/%s was deleted by someone else before the probe finished", ns, pod.Name)
		}
		if pod != nil {
			if why := podHarnessProblem(pod); why != "" {
				return harness(CauseHarness, "%s", why)
			}
		}
		jobDone, deadline := jobState(s.tr.job(job.Name))
		if deadline {
			return harness(timeoutCause(pod), "stage timed out after %s (Job activeDeadlineSeconds)%s", timeout, podState(pod))
		}
		if pod != nil && podFinished(pod) {
			break
		}
		settled, ended := s.watch.turn(sctx, jobDone, &doneAt)
		if settled {
			break
		}
		if ended {
			if ctx.Err() != nil {
				return harness(CauseInterrupted, "interrupted: %v", context.Cause(ctx))
			}
			return harness(timeoutCause(pod), "stage timed out after %s%s", timeout, podState(pod))
		}
	}
	if pod == nil {
		return harness(CauseHarness, "the Job finished without a pod")
	}
	if why := podHarnessProblem(pod); why != "" {
		return harness(CauseHarness, "%s", why)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			out.ExitCode[cs.Name] = t.ExitCode
			if t.ExitCode != 0 && t.Message != "" {
				out.Message[cs.Name] = t.Message
			}
		}
	}
	for _, c := range pod.Spec.Containers {
		var data []byte
		err := retry(sctx, func(ctx context.Context) error {
			var err error
			data, err = r.containerLog(ctx, ns, pod.Name, c.Name)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return harness(CauseInterrupted, "interrupted: %v", context.Cause(ctx))
			}
			return harness(CauseCluster, "reading the log of %s/%s: %s", pod.Name, c.Name, apiProblem(err, "get", "pods/log", ns))
		}
		out.Logs[c.Name] = data
	}
	return out
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

// timeoutCause: a probe that started on the node and did not finish points
// at the node; one that never started, at the harness.
func timeoutCause(p *corev1.Pod) string {
	if p != nil && p.Status.Phase == corev1.PodRunning {
		return CauseNode
	}
	return CauseHarness
}

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
	for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
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
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return fmt.Sprintf("unschedulable: %s", c.Message)
		}
	}
	if p.Status.Phase == corev1.PodFailed && p.Status.Reason != "" && len(p.Status.ContainerStatuses) == 0 {
		return fmt.Sprintf("pod rejected by the node (%s): %s", p.Status.Reason, p.Status.Message)
	}
	if p.Status.Phase == corev1.PodFailed && p.Status.Reason != "" {
		allUnstarted := true
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Terminated != nil && cs.State.Terminated.StartedAt.Time != (time.Time{}) {
				allUnstarted = false
			}
		}
		if allUnstarted {
			return fmt.Sprintf("pod rejected by the node (%s): %s", p.Status.Reason, p.Status.Message)
		}
	}
	return ""
}

var foreground = metav1.DeletePropagationForeground

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

// deleteJob deletes one of the run's Jobs with foreground propagation (its
// pods go first), once: a Job already deleted is not deleted again. It runs
// also after ctx is cancelled, and retries while the API server is away.
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
		return r.Client.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &foreground})
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
		owners := map[string]bool{}
		for _, j := range jobs {
			owners[string(j.UID)] = true
		}
		for _, p := range pods {
			owned := false
			for _, o := range p.OwnerReferences {
				owned = owned || owners[string(o.UID)]
			}
			// A pod on a deleted node has no kubelet to finish its
			// deletion: it is deleted at once (grace 0).
			gone := p.Spec.NodeName != "" && s.tr.nodeGone(p.Spec.NodeName)
			key := p.Name
			if gone {
				key += "/force"
			}
			if podDeletes[key] || (!gone && (p.DeletionTimestamp != nil || owned)) {
				continue
			}
			podDeletes[key] = true
			opts := metav1.DeleteOptions{}
			if gone {
				opts.GracePeriodSeconds = ptr(int64(0))
			}
			err := retry(ctx, func(ctx context.Context) error {
				return r.Client.CoreV1().Pods(ns).Delete(ctx, p.Name, opts)
			})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting pod %s: %s", p.Name, apiProblem(err, "delete", "pods", ns))
			}
		}
		s.watch.wait(ctx, 2*time.Second)
		if ctx.Err() != nil {
			return errors.New("timed out waiting for the run's Jobs and pods to be deleted")
		}
	}
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

// save writes v as indented JSON evidence.
func (s *runState) save(name string, v any) (Evidence, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return Evidence{}, err
	}
	return s.saveBytes(name, append(data, '\n'))
}

func (s *runState) saveBytes(name string, data []byte) (Evidence, error) {
	if err := os.WriteFile(filepath.Join(s.plan.EvidenceDir, name), data, 0o644); err != nil {
		return Evidence{}, err
	}
	return evidenceOf(name, data), nil
}

// saveOutput writes a Job stage's logs ("STAGE.CONTAINER.log") and status
// ("STAGE.status.json").
func (s *runState) saveOutput(st Stage, out StageOutput) ([]Evidence, error) {
	var ev []Evidence
	for _, c := range sortedKeys(out.Logs) {
		e, err := s.saveBytes(fmt.Sprintf("%s.%s.log", st, c), out.Logs[c])
		if err != nil {
			return nil, fmt.Errorf("saving evidence: %w", err)
		}
		ev = append(ev, e)
	}
	e, err := s.save(fmt.Sprintf("%s.status.json", st), out)
	if err != nil {
		return nil, fmt.Errorf("saving evidence: %w", err)
	}
	return append(ev, e), nil
}

// nodeEvidence keeps what the kubernetes stage judges: metadata, spec and
// status of the node, without managed fields.
func nodeEvidence(n *corev1.Node) *corev1.Node {
	c := n.DeepCopy()
	c.ManagedFields = nil
	c.Status.Images = nil
	return c
}

// podSummary is the kubernetes stage's evidence about one pod on the node:
// enough to judge, without the pod's environment (which may hold secrets).
type podSummary struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	Phase     corev1.PodPhase   `json:"phase"`
	Images    []string          `json:"images"`
	GPUs      int64             `json:"gpus"`
}

func podsEvidence(pods []corev1.Pod) []podSummary {
	out := []podSummary{}
	for i := range pods {
		p := &pods[i]
		ps := podSummary{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels, Phase: p.Status.Phase, GPUs: podGPUs(p), Images: []string{}}
		for _, c := range p.Spec.Containers {
			ps.Images = append(ps.Images, c.Image)
		}
		out = append(out, ps)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name })
	return out
}

// podsFromEvidence turns saved summaries back into pods for JudgeKubernetes.
func podsFromEvidence(sums []podSummary) []corev1.Pod {
	var pods []corev1.Pod
	for _, s := range sums {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: s.Labels}, Status: corev1.PodStatus{Phase: s.Phase}}
		for i, img := range s.Images {
			c := corev1.Container{Name: fmt.Sprint(i), Image: img}
			if i == 0 && s.GPUs > 0 {
				c.Resources.Limits = corev1.ResourceList{ResourceGPU: *resourceQuantity(s.GPUs)}
			}
			p.Spec.Containers = append(p.Spec.Containers, c)
		}
		pods = append(pods, p)
	}
	return pods
}

// RunFile is run.json in the evidence directory: what an offline re-judge
// needs besides the evidence files.
type RunFile struct {
	FormatVersion string            `json:"formatVersion"`
	Node          string            `json:"node"`
	RunID         string            `json:"runID"`
	Namespace     string            `json:"namespace"`
	Stages        []StageResult     `json:"stages"`
	Expectations  Expectations      `json:"expectations"`
	ExpectFixed   bool              `json:"expectationsFromSpec"`
	Images        map[string]string `json:"images"`
	Thresholds    Thresholds        `json:"thresholds"`
	Force         bool              `json:"force"`
	Continue      bool              `json:"continue"`
	Started       time.Time         `json:"started"`
	Finished      time.Time         `json:"finished"`
}

func (s *runState) writeRunFile() error {
	rf := RunFile{FormatVersion: "1", Node: s.plan.Node, RunID: s.plan.RunID, Namespace: s.plan.Namespace,
		Stages: s.results, Expectations: s.exp, ExpectFixed: s.plan.Expect != nil, Images: imageRefs(s.images),
		Thresholds: thresholds(s.plan), Force: s.plan.Force, Continue: s.plan.Continue, Started: s.started, Finished: s.finished}
	if _, err := s.save("run.json", rf); err != nil {
		return fmt.Errorf("saving run.json: %w", err)
	}
	return nil
}

func imageRefs(m map[Stage]Image) map[string]string {
	out := map[string]string{}
	for st, img := range m {
		out[string(st)] = img.Ref
	}
	return out
}

func thresholds(p Plan) Thresholds {
	t := Thresholds{StageTimeoutSeconds: int64(p.StageTimeout / time.Second), RunTimeoutSeconds: int64(p.RunTimeout / time.Second),
		NCCLMaxBytes: p.NCCLMaxBytes, DCGMLevel: p.DCGMLevel}
	if t.NCCLMaxBytes == "" {
		t.NCCLMaxBytes = "8G"
	}
	if p.Baselines != nil {
		t.Baselines, t.BaselinesAsOf = p.Baselines.Origin, p.Baselines.AsOf
	}
	return t
}

// runVerdict returns the run's verdict: the Worst of its stages' verdicts.
func runVerdict(results []StageResult) diag.Verdict {
	vs := make([]diag.Verdict, len(results))
	for i, r := range results {
		vs[i] = r.Verdict
	}
	return diag.Worst(vs...)
}

// BuildPredicate assembles the record's predicate from a run.
func BuildPredicate(s *runState) *Predicate {
	p := &Predicate{
		FormatVersion: PredicateFormatVersion, RunID: s.plan.RunID, Verdict: runVerdict(s.results),
		Started: s.started, Finished: s.finished, Expectations: s.exp, Thresholds: thresholds(s.plan),
		Images: imageRefs(s.images), Stages: s.results, Gpuctl: Tool{Version: s.plan.Version},
		GPUHealth: []diag.Finding{}, Hardware: Hardware{UUIDs: []string{}, Serials: []string{}, VBIOS: []string{}, InfoROM: []string{}, BusIDs: []string{}},
		Interconnect: Interconnect{PCIe: []string{}, GPULinks: []string{}, NICs: []string{}, NUMA: map[string]string{}, CPUAffinity: map[string]string{}},
	}
	if s.facts != nil {
		p.Node = *s.facts
	} else {
		p.Node = NodeFacts{Name: s.plan.Node}
	}
	if s.plan.Expect != nil && s.plan.Expect.Source != "" && p.Node.Pool == "" {
		p.Node.Pool = poolFromSource(s.plan.Expect.Source)
	}
	p.Hardware.GPUProduct, p.Hardware.GPUCount = s.obs.GPUProduct, len(s.obs.GPUs)
	for _, g := range s.obs.GPUs {
		p.Hardware.UUIDs = append(p.Hardware.UUIDs, g.UUID)
		p.Hardware.Serials = append(p.Hardware.Serials, g.Serial)
		p.Hardware.VBIOS = append(p.Hardware.VBIOS, g.VBIOS)
		p.Hardware.InfoROM = append(p.Hardware.InfoROM, g.InfoROM)
		p.Hardware.BusIDs = append(p.Hardware.BusIDs, g.BusID)
		if g.PCIeGen != "" || g.PCIeWidth != "" {
			p.Interconnect.PCIe = append(p.Interconnect.PCIe, fmt.Sprintf("GPU %d: gen %s %s", g.Index, g.PCIeGen, g.PCIeWidth))
		}
	}
	p.Driver = DriverInfo{Version: s.obs.Driver, CUDA: s.obs.DriverCUDA}
	for _, f := range s.obs.Findings {
		if f.Severity != diag.SeverityInfo {
			p.GPUHealth = append(p.GPUHealth, f)
		}
	}
	if t := s.obs.Topo; t != nil {
		p.Interconnect.GPULinks = linkClasses(t)
		p.Topology = t.Matrix
		p.Interconnect.NICs = append(p.Interconnect.NICs, t.NICs...)
		for k, v := range t.NUMA {
			p.Interconnect.NUMA[k] = v
		}
		for k, v := range t.CPUAffinity {
			p.Interconnect.CPUAffinity[k] = v
		}
	}
	for _, r := range s.results {
		switch r.Name {
		case StageNCCL:
			if r.Verdict == diag.Skipped {
				continue
			}
			n := &NCCLSummary{Verdict: r.Verdict, Baseline: s.obs.Baseline}
			if f := s.obs.NCCL; f != nil {
				n.BusBandwidthGBps, n.LargestBytes, n.Wrong, n.Rows = f.BusBandwidthGBps, f.LargestBytes, f.Wrong, f.PerSize
			}
			if n.Baseline != nil && s.plan.Baselines != nil {
				n.BaselineOrigin = s.plan.Baselines.Origin
			}
			p.NCCL = n
		case StageDCGM:
			if r.Verdict != diag.Skipped {
				p.DCGM = &StageSummary{Verdict: r.Verdict, Reason: r.Reason}
			}
		}
	}
	return p
}

func poolFromSource(src string) string {
	if i := strings.Index(src, "pool "); i >= 0 {
		return strings.TrimRight(strings.Fields(src[i+5:])[0], ")")
	}
	return ""
}
