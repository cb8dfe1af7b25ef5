package accept

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

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
	// NoDiagnostics turns off the diagnostics stage's capture after a FAIL
	// (--no-diagnostics); selected in Stages it runs all the same.
	NoDiagnostics bool
	DCGMLevel     int
	NCCLMaxBytes  string
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
	// Denied permissions create no Job (execJob): no Job or pod is
	// watched, and a denied list or watch is not waited for.
	if t, err = newTracker(sctx, r.Client, ns, r.WatchNodes, len(r.Denied) == 0); err != nil {
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
	seg      *segment // the node Job of the node-local stages, while one runs
	stopWhy  string   // set by a stage: why no later stage may run
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
	if err := r.runStages(ctx, s); err != nil {
		return nil, err
	}
	s.finished = r.now()
	if err := s.writeRunFile(); err != nil {
		return nil, err
	}
	pred := BuildPredicate(s)
	return &Result{Node: p.Node, RunID: p.RunID, Verdict: pred.Verdict, Stages: s.results, Predicate: pred, EvidenceDir: p.EvidenceDir}, nil
}

// runStages runs the stages of s's plan in AllStages order: the ones not
// selected, and every one after a stage that stops the run (stopAfter), are
// SKIPPED; an evidence stage runs when selected or after a FAIL
// (runEvidenceStage). An error is gpuctl's own.
func (r *Runner) runStages(ctx context.Context, s *runState) error {
	want := map[Stage]bool{}
	for _, st := range s.plan.Stages {
		want[st] = true
	}
	stop := "" // why the remaining stages are skipped
	for _, st := range AllStages {
		d, _ := stageOf(st)
		if !d.nodeJob {
			r.endNodeJob(ctx, s)
		}
		if d.evidence {
			res, err := r.runEvidenceStage(ctx, s, d, want[st])
			if err != nil {
				return err
			}
			s.results = append(s.results, res)
			continue
		}
		if !want[st] {
			s.results = append(s.results, result(st, diag.Skipped, "not selected"))
			continue
		}
		if stop != "" {
			s.results = append(s.results, result(st, diag.Skipped, "%s", stop))
			continue
		}
		r.progress(s.plan.Node, st, "")
		res, err := d.run(r, ctx, s, st)
		if err != nil {
			return err
		}
		s.results = append(s.results, res)
		r.progress(s.plan.Node, st, res.Verdict)
		s.log.Info("stage finished", "stage", st, "verdict", res.Verdict, "cause", res.Cause, "reason", res.Reason)
		if stop = s.stopAfter(ctx, st, res); stop != "" {
			r.endNodeJob(ctx, s)
		}
	}
	r.endNodeJob(ctx, s)
	return nil
}

// endNodeJob ends the run's node Job (endSegment); a Job that cannot be
// cleaned up stops the run, and Run's cleanup reports it.
func (r *Runner) endNodeJob(ctx context.Context, s *runState) {
	if err := r.endSegment(ctx, s); err != nil {
		s.log.Warn("node Job cleanup failed", "err", err)
		s.stopWhy = "the previous stage's Job could not be cleaned up"
	}
}

// stopAfter says why no stage may run after stage st, whose result is res,
// or "": the run was interrupted, the stage said so (stopWhy), the node is
// gone, the stage FAILed (without --continue), or the node has no whole
// GPUs to probe.
func (s *runState) stopAfter(ctx context.Context, st Stage, res StageResult) string {
	switch {
	case ctx.Err() != nil:
		return "run interrupted or timed out"
	case s.stopWhy != "":
		return s.stopWhy
	case s.tr.nodeGone(s.plan.Node):
		return fmt.Sprintf("node %s was deleted", s.plan.Node)
	case res.Verdict == diag.Fail && !s.plan.Continue:
		return fmt.Sprintf("stage %s FAILED (use --continue to run the rest)", st)
	case st == StageKubernetes && s.gpus == 0:
		return "the node advertises no whole GPUs to probe"
	}
	return ""
}

// kubernetesStage reads the node and the pods on it (API only). Its error
// is always nil (the stage table's run signature).
func (r *Runner) kubernetesStage(ctx context.Context, s *runState, _ Stage) (StageResult, error) {
	started := r.now()
	finish := func(res StageResult) (StageResult, error) {
		res.Started, res.Finished = started, r.now()
		return res, nil
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
