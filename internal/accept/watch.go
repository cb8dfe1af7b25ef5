package accept

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// tracker is the one list+watch of a namespace's gpuctl Jobs and pods (and,
// when allowed, of the nodes) that every run of a fleet shares: a watch per
// Job does not scale, and an informer's reflector resumes its watch with
// backoff after the API server goes away (an API server restart used to end
// the run). Runs read the objects from its cache and are woken by its
// events; Deleted events are kept, so that a Job, pod or node deleted by
// someone else ends the stage at once.
type tracker struct {
	ns      string
	factory informers.SharedInformerFactory
	nodesF  informers.SharedInformerFactory
	jobs    cache.SharedIndexInformer
	pods    cache.SharedIndexInformer
	nodes   cache.SharedIndexInformer // nil without nodes list/watch

	mu   sync.Mutex
	runs map[string]*runWatch // by run id
	// lastOutage is when a watch last failed (the API server away).
	lastOutage time.Time
	goneNodes  map[string]bool
	stop       chan struct{}
}

// runWatch is what one run learns from the tracker: a wake-up channel and
// the Deleted events of its objects and of its node.
type runWatch struct {
	nodes       []string // the run's node (a group's: every node of it)
	wake        chan struct{}
	deletedJobs map[string]bool
	deletedPods map[string]bool
	nodeGone    bool
}

func (w *runWatch) notify() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// newTracker starts the informers of namespace ns (and of the nodes when
// watchNodes) and waits until their caches are filled.
//
// With watchObjects false (the caller may not list or watch them: no Job
// is created then) it watches no Jobs or pods, and its cache of them stays
// empty, so that a denied list or watch is never started and never waited
// for.
func newTracker(ctx context.Context, c kubernetes.Interface, ns string, watchNodes, watchObjects bool) (*tracker, error) {
	t := &tracker{ns: ns, runs: map[string]*runWatch{}, goneNodes: map[string]bool{}, stop: make(chan struct{})}
	var syncs []cache.InformerSynced
	if watchObjects {
		if err := t.watchObjects(c); err != nil {
			return nil, err
		}
		syncs = append(syncs, t.jobs.HasSynced, t.pods.HasSynced)
	}
	if watchNodes {
		t.nodesF = informers.NewSharedInformerFactory(c, 0)
		t.nodes = t.nodesF.Core().V1().Nodes().Informer()
		if _, err := t.nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: t.nodeDeleted}); err != nil {
			return nil, err
		}
		t.nodesF.Start(t.stop)
		syncs = append(syncs, t.nodes.HasSynced)
	}
	if t.factory != nil {
		t.factory.Start(t.stop)
	}
	if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
		t.close()
		return nil, fmt.Errorf("watching the Jobs and pods in namespace %s: %w", ns, context.Cause(ctx))
	}
	return t, nil
}

// watchObjects sets up the informers of the namespace's gpuctl Jobs and
// pods (started by newTracker).
func (t *tracker) watchObjects(c kubernetes.Interface) error {
	ns := t.ns
	sel := func(o *metav1.ListOptions) { o.LabelSelector = LabelManagedBy + "=" + ManagedBy }
	t.factory = informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns), informers.WithTweakListOptions(sel))
	t.jobs = t.factory.Batch().V1().Jobs().Informer()
	t.pods = t.factory.Core().V1().Pods().Informer()
	objHandler := func(deleted func(w *runWatch, name string)) cache.ResourceEventHandlerFuncs {
		return cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { t.touch(obj, nil) },
			UpdateFunc: func(_, obj any) { t.touch(obj, nil) },
			DeleteFunc: func(obj any) { t.touch(obj, deleted) },
		}
	}
	if _, err := t.jobs.AddEventHandler(objHandler(func(w *runWatch, name string) { w.deletedJobs[name] = true })); err != nil {
		return err
	}
	if _, err := t.pods.AddEventHandler(objHandler(func(w *runWatch, name string) { w.deletedPods[name] = true })); err != nil {
		return err
	}
	for _, inf := range []cache.SharedIndexInformer{t.jobs, t.pods} {
		if err := inf.SetWatchErrorHandlerWithContext(t.watchFailed); err != nil {
			return err
		}
	}
	return nil
}

// watchFailed notes that a watch or list of the tracker failed (the
// reflector retries it with backoff), and logs it as client-go's default
// handler does.
func (t *tracker) watchFailed(ctx context.Context, r *cache.Reflector, err error) {
	t.mu.Lock()
	t.lastOutage = time.Now()
	t.mu.Unlock()
	cache.DefaultWatchErrorHandler(ctx, r, err)
}

// outageSince reports whether a watch of the tracker failed at or after
// since: gpuctl saw the API server away.
func (t *tracker) outageSince(since time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.lastOutage.IsZero() && !t.lastOutage.Before(since)
}

func (t *tracker) close() {
	select {
	case <-t.stop:
	default:
		close(t.stop)
		if t.factory != nil {
			t.factory.Shutdown()
		}
		if t.nodesF != nil {
			t.nodesF.Shutdown()
		}
	}
}

func metaOf(obj any) metav1.Object {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, _ := obj.(metav1.Object)
	return m
}

// touch wakes the run that obj belongs to; deleted, when set, records a
// Deleted event.
func (t *tracker) touch(obj any, deleted func(w *runWatch, name string)) {
	m := metaOf(obj)
	if m == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.runs[m.GetLabels()[LabelRunID]]
	if w == nil {
		return
	}
	if deleted != nil {
		deleted(w, m.GetName())
	}
	w.notify()
}

func (t *tracker) nodeDeleted(obj any) {
	m := metaOf(obj)
	if m == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.goneNodes[m.GetName()] = true
	for _, w := range t.runs {
		if slices.Contains(w.nodes, m.GetName()) {
			w.nodeGone = true
			w.notify()
		}
	}
}

// register starts following run runID on nodes (one, or a group's): the
// run is woken, and its events say nodeGone, when any of them is deleted.
func (t *tracker) register(runID string, nodes ...string) *runWatch {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := &runWatch{nodes: nodes, wake: make(chan struct{}, 1), deletedJobs: map[string]bool{}, deletedPods: map[string]bool{}}
	for _, n := range nodes {
		w.nodeGone = w.nodeGone || t.goneNodes[n]
	}
	t.runs[runID] = w
	return w
}

func (t *tracker) unregister(runID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.runs, runID)
}

// events returns a copy of what the run has learned of Deleted events.
func (t *tracker) events(runID string) (deletedJobs, deletedPods map[string]bool, nodeGone bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.runs[runID]
	if w == nil {
		return nil, nil, false
	}
	deletedJobs, deletedPods = map[string]bool{}, map[string]bool{}
	for k := range w.deletedJobs {
		deletedJobs[k] = true
	}
	for k := range w.deletedPods {
		deletedPods[k] = true
	}
	return deletedJobs, deletedPods, w.nodeGone
}

// nodeGone reports whether node was deleted (seen deleted, or absent from a
// synced node cache).
func (t *tracker) nodeGone(node string) bool {
	t.mu.Lock()
	gone := t.goneNodes[node]
	t.mu.Unlock()
	if gone || t.nodes == nil {
		return gone
	}
	_, exists, err := t.nodes.GetStore().GetByKey(node)
	return err == nil && !exists
}

// node returns the cached node, or nil (no node cache, or not there).
func (t *tracker) node(name string) *corev1.Node {
	if t.nodes == nil {
		return nil
	}
	obj, exists, err := t.nodes.GetStore().GetByKey(name)
	if err != nil || !exists {
		return nil
	}
	n, _ := obj.(*corev1.Node)
	return n
}

// job returns the cached Job name, or nil.
func (t *tracker) job(name string) *batchv1.Job {
	if t.jobs == nil {
		return nil
	}
	obj, exists, err := t.jobs.GetStore().GetByKey(t.ns + "/" + name)
	if err != nil || !exists {
		return nil
	}
	j, _ := obj.(*batchv1.Job)
	return j
}

// runObjects returns the cached Jobs and pods of run runID (of one stage
// when stage is set).
func (t *tracker) runObjects(runID string, stage Stage) ([]*batchv1.Job, []*corev1.Pod) {
	match := func(l map[string]string) bool {
		return l[LabelRunID] == runID && (stage == "" || l[LabelStage] == string(stage))
	}
	var jobs []*batchv1.Job
	if t.jobs == nil {
		return nil, nil
	}
	for _, obj := range t.jobs.GetStore().List() {
		if j, ok := obj.(*batchv1.Job); ok && match(j.Labels) {
			jobs = append(jobs, j)
		}
	}
	var pods []*corev1.Pod
	for _, obj := range t.pods.GetStore().List() {
		if p, ok := obj.(*corev1.Pod); ok && match(p.Labels) {
			pods = append(pods, p)
		}
	}
	return jobs, pods
}

// wait blocks until w is woken, ctx ends or d passes (d <= 0: no limit).
func (w *runWatch) wait(ctx context.Context, d time.Duration) {
	var tick <-chan time.Time
	if d > 0 {
		tm := time.NewTimer(d)
		defer tm.Stop()
		tick = tm.C
	}
	select {
	case <-ctx.Done():
	case <-w.wake:
	case <-tick:
	}
}
