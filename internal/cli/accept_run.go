package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/report"
)

// run accepts what the flags select: saved evidence (--offline), a pool's
// machine without a cluster (--dry-run), or the cluster's nodes.
func (o *acceptOptions) run(ctx context.Context) error {
	if o.offline != "" {
		return o.runOffline(ctx)
	}
	if o.poolDryRun() && len(o.nodes) == 0 && o.selector == "" {
		return o.printPoolDryRun()
	}
	client, err := o.f.KubeClient(o.kube.config)
	if err != nil && o.poolDryRun() {
		return o.printPoolDryRun()
	}
	if err != nil {
		if o.dryRun {
			return withCode(ExitInconclusive, fmt.Errorf("kubernetes client: %w (a dry run without a cluster needs --gpus [--product] or --spec with --pool)", err))
		}
		return withCode(ExitInconclusive, fmt.Errorf("kubernetes client: %w", err))
	}
	nodes, read, err := o.selectNodes(ctx, client)
	if err != nil {
		return err
	}
	if o.sw != nil && len(o.sw.selected) == 0 {
		return o.sweepNothing()
	}
	if o.multi && len(nodes) < 2 {
		return usageErrorf("--stages nccl-multi runs across nodes: select at least two (NODE NODE... or --selector)")
	}
	if o.dryRun {
		return o.printDryRun(ctx, client, nodes, read)
	}
	return o.runNodes(ctx, client, nodes, read)
}

// runNodes runs each node's stages (--parallel at a time), then nccl-multi
// across them, marks them (--mark), writes their records and, for several
// nodes, the fleet summary, and reports.
func (o *acceptOptions) runNodes(ctx context.Context, client kubernetes.Interface, nodes []string, read map[string]*corev1.Node) error {
	ns := o.kube.namespace()
	if err := accept.PrepareNamespace(ctx, client, ns, o.kube.createNamespace, o.privileged, o.stageList); err != nil {
		return withCode(ExitInconclusive, err)
	}
	var plans []accept.Plan
	ids := o.f.runIDs(len(nodes))
	for i, n := range nodes {
		plans = append(plans, o.plan(n, ids[i]))
	}
	log := o.logger()
	klog.SetSlogLogger(log) // the informers' retries, in gpuctl's log format
	r := &accept.Runner{Client: client, Parser: o.f.Parser, Log: log, Now: o.f.Now}
	if err := o.checkAccess(ctx, client, r, ns); err != nil {
		return err
	}
	started := o.f.Now()
	progress := o.startProgress(r, len(plans))
	results, errs := r.RunAll(ctx, plans, o.parallel)
	if o.multi {
		if err := o.runMulti(ctx, r, results, errs, read); err != nil {
			return err
		}
	}
	if progress != nil {
		progress.Done()
	}
	o.startMarking(results, errs)
	summary := o.finishAll(ctx, client, plans, results, errs)
	if len(summary) > 1 || o.sweep {
		if err := o.writeFleet(summary, o.f.Now().Sub(started), ids); err != nil {
			return err
		}
	}
	return o.report(summary)
}

// startMarking decides, before any node is marked, what --max-unhealthy
// allows: --mark stops all marking beyond it, --sweep stops quarantining.
func (o *acceptOptions) startMarking(results []*accept.Result, errs []error) {
	switch {
	case o.sweep:
		o.startQuarantineCap(results, errs)
	case o.mark:
		o.checkMaxUnhealthy(results, errs)
	}
}

// finishAll writes each node's record (finish) and marks the node with it
// (--mark, unless marking stopped).
func (o *acceptOptions) finishAll(ctx context.Context, client kubernetes.Interface, plans []accept.Plan, results []*accept.Result, errs []error) []render.AcceptNode {
	var summary []render.AcceptNode
	for i, res := range results {
		n := o.finish(ctx, plans[i].Node, res, errs[i])
		switch {
		case n.Err != nil || res == nil:
		case o.sweep:
			o.sweepNode(ctx, client, &n, res)
		case o.mark && o.markStop == "":
			o.markNode(ctx, client, &n, res)
		}
		summary = append(summary, n)
	}
	return summary
}

// startProgress shows the stages of a run over several nodes as they end
// (a live line on a terminal, in place of a log line per stage); nil for
// one node or with --quiet.
func (o *acceptOptions) startProgress(r *accept.Runner, nodes int) *render.Progress {
	if o.quiet || nodes <= 1 {
		return nil
	}
	var names []string
	for _, st := range append(append([]accept.Stage(nil), accept.AllStages...), accept.FleetStages...) {
		names = append(names, string(st))
	}
	progress := render.NewProgress(o.streams.ErrOut, o.streams.ErrTTY, nodes, names)
	r.Progress = func(ev accept.ProgressEvent) { progress.Event(ev.Node, string(ev.Stage), ev.Verdict) }
	if o.streams.ErrTTY {
		r.Log = o.loggerAt(slog.LevelWarn)
	}
	return progress
}

// checkMaxUnhealthy stops marking (markStop) when more of the selection
// than --max-unhealthy is not PASS: a broken harness must not take the
// pool down.
func (o *acceptOptions) checkMaxUnhealthy(results []*accept.Result, errs []error) {
	unhealthy := 0
	for i, res := range results {
		if errs[i] != nil || res == nil || res.Verdict != diag.Pass {
			unhealthy++
		}
	}
	if o.maxUnh.Exceeded(unhealthy, len(results)) {
		o.markStop = fmt.Sprintf("%d of %d nodes are not PASS, more than --max-unhealthy %s: no node was marked (a broken harness must not take the pool down)", unhealthy, len(results), o.maxUnh)
		fmt.Fprintf(o.streams.ErrOut, "warning: marking stopped: %s\n", o.markStop)
	}
}

// checkAccess asks the API server what the caller may do: without the Job
// stages' permissions the runner creates nothing and names them; without
// nodes list/watch a deleted node is noticed only by its stage's API errors.
func (o *acceptOptions) checkAccess(ctx context.Context, c kubernetes.Interface, r *accept.Runner, ns string) error {
	jobStages := false
	for _, st := range o.stageList {
		jobStages = jobStages || st != accept.StageKubernetes
	}
	var perms []accept.Permission
	if jobStages {
		perms = accept.JobPermissions(ns)
	}
	if o.multi {
		perms = append(perms, accept.MultiServicePermissions(ns)...)
	}
	perms = append(perms, accept.NodeWatchPermissions()...)
	if o.mark {
		markDenied, err := accept.CheckAccess(ctx, c, o.markPermissions())
		if err == nil && len(markDenied) > 0 {
			var s []string
			for _, p := range markDenied {
				s = append(s, fmt.Sprintf("%s (to %s)", p, p.Why))
			}
			return withCode(ExitInconclusive, fmt.Errorf("RBAC: %s: the identity running gpuctl may not %s; nothing was run ('gpuctl accept --dry-run %s -o yaml' prints the RBAC)", o.markFlag(), strings.Join(s, "; "), o.markFlag()))
		}
	}
	denied, err := accept.CheckAccess(ctx, c, perms)
	if err != nil {
		fmt.Fprintf(o.streams.ErrOut, "warning: %v; going on without the check\n", err)
		r.WatchNodes = true
		return nil
	}
	r.WatchNodes = true
	for _, p := range denied {
		if p.Resource == "nodes" {
			r.WatchNodes = false
			fmt.Fprintf(o.streams.ErrOut, "warning: RBAC: may not %s: a node deleted mid-run is noticed only through API errors\n", p)
			continue
		}
		r.Denied = append(r.Denied, p)
	}
	return nil
}

// markNode marks the node of a written record (--mark).
func (o *acceptOptions) markNode(ctx context.Context, c kubernetes.Interface, n *render.AcceptNode, res *accept.Result) {
	ref, err := o.recordRef(n, res)
	if err == nil {
		var m *accept.Marked
		m, err = accept.Mark(ctx, c, n.Node, ref, accept.MarkReason(res.Verdict, res.Stages), accept.MarkOptions{TaintOnFail: o.taintOnFail, CordonOnFail: o.cordonOnFail})
		if m != nil {
			n.Mark = &render.AcceptMark{Label: m.Label, Added: m.Added, Removed: m.Removed, Event: m.Event}
		}
	}
	if err != nil {
		o.markFailed = true
		if n.Mark == nil {
			n.Mark = &render.AcceptMark{}
		}
		n.Mark.Error = err.Error()
		fmt.Fprintf(o.streams.ErrOut, "error: node %s: marking: %v\n", n.Node, err)
	}
}

// runMulti runs the nccl-multi stage across the nodes whose own stages did
// not FAIL and adds each node's result to its record.
func (o *acceptOptions) runMulti(ctx context.Context, r *accept.Runner, results []*accept.Result, errs []error, read map[string]*corev1.Node) error {
	var nodes []*corev1.Node
	dirs := map[string]string{}
	byNode := map[string]*accept.Result{}
	for i, res := range results {
		if errs[i] != nil || res == nil {
			continue
		}
		byNode[res.Node] = res
		n := read[res.Node]
		if skip, ok := o.multiExclusion(res, n); ok {
			for _, st := range o.fleet {
				skip.Name = st
				accept.AddStage(res, skip)
			}
			continue
		}
		nodes = append(nodes, n)
		dirs[res.Node] = res.EvidenceDir
	}
	for _, st := range o.fleet {
		if err := o.runFleetStage(ctx, r, st, nodes, dirs, byNode); err != nil {
			return err
		}
	}
	return nil
}

// runFleetStage runs fleet stage st across nodes and adds each node's
// result to its record.
func (o *acceptOptions) runFleetStage(ctx context.Context, r *accept.Runner, st accept.Stage, nodes []*corev1.Node, dirs map[string]string, byNode map[string]*accept.Result) error {
	m := o.multiRun(st, o.f.runID(), nodes, dirs)
	if len(nodes) > 0 {
		if p := byNode[nodes[0].Name].Predicate; p != nil && p.Driver.CUDA != "" {
			m.DriverCUDA = p.Driver.CUDA // what inventory saw
		}
	}
	mr, err := r.RunMulti(ctx, m, o.parallel)
	if err != nil {
		return err
	}
	for name, sr := range mr.Nodes {
		accept.AddStage(byNode[name], sr)
	}
	for _, g := range mr.Groups {
		fmt.Fprintf(o.streams.ErrOut, "%s %s (%s): %s %s\n", st, g.Group, strings.Join(g.Nodes, ", "), g.Verdict, g.Reason)
	}
	return nil
}

// multiExclusion is the fleet stages' result of a node that takes no part
// (ok): it FAILED its own stages, they ended INCONCLUSIVE or its kubernetes
// stage did not pass (no Job stage runs there; --force includes both), or
// it could not be read (n nil). The fleet stages group only nodes whose own
// stages all passed.
func (o *acceptOptions) multiExclusion(res *accept.Result, n *corev1.Node) (accept.StageResult, bool) {
	k8s := diag.Skipped
	for _, st := range res.Stages {
		if st.Name == accept.StageKubernetes {
			k8s = st.Verdict
		}
	}
	skip := accept.StageResult{Name: accept.StageNCCLMulti, Verdict: diag.Skipped, Evidence: []accept.Evidence{}}
	switch {
	case res.Verdict == diag.Fail:
		skip.Reason = "the node FAILED its own stages; it takes no part"
	case res.Verdict == diag.Inconclusive && !o.force:
		// A node gone or unreadable mid-run, a harness problem: its pairs
		// would end INCONCLUSIVE for its partners too.
		skip.Reason = "the node's own stages ended INCONCLUSIVE; it takes no part (--force to include it)"
	case k8s != diag.Pass && k8s != diag.Skipped && !o.force:
		// GPUs held by another pod, the node not Ready, ...: no Job stage runs there.
		skip.Reason = "the node's kubernetes stage is " + string(k8s) + "; it takes no part (--force to include it)"
	case n == nil:
		skip.Verdict, skip.Cause, skip.Reason = diag.Inconclusive, accept.CauseCluster, "the node could not be read"
	default:
		return accept.StageResult{}, false
	}
	return skip, true
}

// writeFleet writes the fleet summary JSON (named after the first of the
// run's ids) and prints where.
func (o *acceptOptions) writeFleet(nodes []render.AcceptNode, wall time.Duration, ids []string) error {
	f := render.NewFleet(nodes, wall)
	if o.mark {
		f.Marking = &render.FleetMarking{Stopped: o.markStop != "", Reason: o.markStop, MaxUnhealthy: o.maxUnhealthy}
	}
	if o.sw != nil {
		f.Skipped, o.sw.fleet = o.sw.skipped, f
	}
	path := o.fleetFile
	if path == "" {
		runID := o.f.runID()
		if len(ids) > 0 {
			runID = ids[0]
		}
		path = filepath.Join(o.evidenceDir, "fleet-"+runID+".json")
	}
	var b strings.Builder
	if err := render.FleetJSON(&b, f); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("fleet summary: %w", err)
	}
	if err := writeFileAtomic(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("fleet summary: %w", err)
	}
	o.fleetLine = render.FleetLine(f) + "; summary: " + path
	return nil
}

func (o *acceptOptions) runOffline(ctx context.Context) error {
	res, err := accept.Rejudge(o.offline, o.f.Parser, o.bl, BuildVersion(), o.f.Now())
	if errors.Is(err, accept.ErrEvidenceChanged) {
		return withCode(ExitCheckFailed, err)
	}
	if err != nil {
		return usageErrorf("%v", err)
	}
	if o.record == "" {
		o.record = filepath.Join(o.offline, accept.OfflineRecordFile)
	}
	return o.report([]render.AcceptNode{o.finish(ctx, res.Node, res, nil)})
}

// finish writes a node's record and prints it (-o json).
func (o *acceptOptions) finish(ctx context.Context, node string, res *accept.Result, runErr error) render.AcceptNode {
	n := render.AcceptNode{Node: node, Err: runErr}
	if runErr != nil {
		return n
	}
	n.RunID, n.Verdict, n.EvidenceDir = res.RunID, res.Verdict, res.EvidenceDir
	if res.Predicate != nil {
		n.Duration = res.Predicate.Finished.Sub(res.Predicate.Started)
	}
	for _, s := range res.Stages {
		n.Stages = append(n.Stages, render.AcceptStage{Name: string(s.Name), Verdict: s.Verdict, Reason: s.Reason, Cause: s.Cause})
	}
	if p := res.Predicate; p != nil && p.NCCL != nil {
		n.Curve = busbwCurve(p.NCCL)
	}
	// A live run looks in --history (default --evidence-dir); a re-judged
	// run only when --history is given.
	if res.Predicate != nil && (o.offline == "" || o.history != "") {
		o.linkHistory(node, res.Predicate)
		for _, r := range res.Predicate.Regressions {
			n.Regressions = append(n.Regressions, render.Regression{Kind: r.Kind, Message: r.Message})
		}
		if p := res.Predicate.Previous; p != nil {
			n.Previous = p.RunID + " (" + string(p.Verdict) + ")"
		}
	}
	if err := o.writeBundle(node, res, &n); err != nil {
		n.Err = err
		return n
	}
	rec, err := accept.WriteRecord(ctx, res, o.signer, o.record)
	if err != nil {
		n.Err = err
		return n
	}
	n.Record, n.Signed = rec.Path, rec.Signed
	if err := writeOutput(o.streams, o.out, recordFormats, rec.JSON); err != nil {
		n.Err = err
	}
	return n
}

// writeBundle writes the node's evidence bundle (--evidence-uri) before
// its record, which names it; nothing without --evidence-uri.
func (o *acceptOptions) writeBundle(node string, res *accept.Result, n *render.AcceptNode) error {
	if o.evidenceURI == "" || res.Predicate == nil {
		return nil
	}
	b, err := accept.WriteBundle(res.EvidenceDir, accept.BundleName(node, res.RunID), o.evidenceURI)
	if err != nil {
		return err
	}
	res.Predicate.EvidenceBundle = b
	n.Bundle = &render.AcceptBundle{Path: filepath.Join(res.EvidenceDir, b.Name), SHA256: b.SHA256, URI: b.URI}
	return nil
}

// recordFormats are the output formats of a node's record (rec.JSON, one
// line of JSON): on stdout with -o json; the table is the human summary
// report writes to stderr. (-o yaml is for --dry-run.)
var recordFormats = viewFormats[[]byte]{{render.FormatTable, writeNothing}, {render.FormatJSON, writeLine}}

func writeNothing(*IOStreams, []byte) error { return nil }

func writeLine(s *IOStreams, line []byte) error {
	_, err := fmt.Fprintf(s.Out, "%s\n", line)
	return err
}

// linkHistory links the node's previous record in --history (default
// --evidence-dir) to the predicate and lists the regressions since; a
// history that cannot be read is a warning, not a failed run.
func (o *acceptOptions) linkHistory(node string, p *accept.Predicate) {
	dir := o.history
	if dir == "" {
		dir = o.evidenceDir
	}
	prev, err := accept.FindPrevious(dir, node, p.RunID, p.Started)
	if err != nil {
		fmt.Fprintf(o.streams.ErrOut, "warning: node %s: --history %s: %v\n", node, dir, err)
		return
	}
	accept.LinkPrevious(p, prev)
}

// report prints the human summary to stderr and returns the exit code:
// any tool error 1, else any FAIL 3, any INCONCLUSIVE 4, else 0.
func (o *acceptOptions) report(nodes []render.AcceptNode) error {
	var verdicts []diag.Verdict
	var firstErr error
	for _, n := range nodes {
		if err := render.AcceptText(o.streams.ErrOut, o.streams.ErrTTY, n); err != nil {
			return err
		}
		if n.Err != nil && firstErr == nil {
			firstErr = fmt.Errorf("node %s: %w", n.Node, n.Err)
		}
		verdicts = append(verdicts, n.Verdict)
	}
	if o.signer == nil {
		fmt.Fprintln(o.streams.ErrOut, "warning: no --key: the statement is not signed (create a key with 'gpuctl keygen')")
	}
	if err := o.reportSweep(); err != nil {
		return err
	}
	if len(nodes) > 1 || (o.sw != nil && len(nodes) > 0) {
		if err := render.AcceptSummary(o.streams.ErrOut, nodes); err != nil {
			return err
		}
		if o.fleetLine != "" {
			fmt.Fprintln(o.streams.ErrOut, o.fleetLine)
		}
	}
	return o.exitCode(verdicts, firstErr)
}

// exitCode is the run's exit: any tool error 1 (a node's, or marking's),
// else the worst verdict (FAIL 3, INCONCLUSIVE 4); a sweep that probed no
// node (all busy) 0.
func (o *acceptOptions) exitCode(verdicts []diag.Verdict, firstErr error) error {
	if firstErr != nil {
		return withCode(ExitToolError, firstErr)
	}
	if o.markFailed {
		return withCode(ExitToolError, fmt.Errorf("%s: some nodes could not be marked (see above)", o.markFlag()))
	}
	if len(verdicts) == 0 && o.sw != nil {
		return nil // every node busy: a sweep that skips nodes does not fail
	}
	switch diag.Worst(verdicts...) {
	case diag.Fail:
		return silentExit(ExitCheckFailed)
	case diag.Inconclusive:
		return silentExit(ExitInconclusive)
	}
	return nil
}

// selectNodes is nodeNames, less the busy nodes a sweep skips (not for
// --dry-run, which changes nothing). A sweep's selector may match no node
// (a pool scaled to zero): no nodes, and an empty selection in o.sw.
func (o *acceptOptions) selectNodes(ctx context.Context, c kubernetes.Interface) ([]string, map[string]*corev1.Node, error) {
	nodes, read, err := o.nodeNames(ctx, c)
	if err != nil || !o.sweep || o.dryRun {
		return nodes, read, err
	}
	if len(nodes) == 0 {
		o.sw = &sweepState{selected: map[string]*corev1.Node{}}
		return nil, read, nil
	}
	nodes, err = o.skipBusy(ctx, c, nodes, read)
	return nodes, read, err
}

// nodeNames returns the names of the nodes to accept and the Node objects
// it read on the way (by name; a node whose Get failed other than NotFound
// is named but not read).
func (o *acceptOptions) nodeNames(ctx context.Context, c kubernetes.Interface) ([]string, map[string]*corev1.Node, error) {
	names := append([]string(nil), o.nodes...)
	read := map[string]*corev1.Node{}
	// A misspelt node name is the operator's mistake: say so before anything
	// is created or recorded (other errors are the kubernetes stage's).
	for _, n := range o.nodes {
		node, err := c.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil, usageErrorf("node %s not found ('kubectl get nodes' lists the nodes)", n)
		}
		if err == nil {
			read[n] = node
		}
	}
	if o.selector != "" {
		list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: o.selector})
		if err != nil {
			return nil, nil, withCode(ExitInconclusive, fmt.Errorf("listing nodes with selector %q: %w", o.selector, err))
		}
		for i := range list.Items {
			names = append(names, list.Items[i].Name)
			read[list.Items[i].Name] = &list.Items[i]
		}
		if len(list.Items) == 0 && !o.sweep {
			return nil, nil, withCode(ExitInconclusive, fmt.Errorf("no node matches selector %q", o.selector))
		}
	}
	seen := map[string]bool{}
	out := names[:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, read, nil
}

// busbwCurve is the nccl stage's busbw by size (report.Points), for the
// terminal's sparkline; nil without rows.
func busbwCurve(r *record.NCCLSummary) *render.BusbwCurve {
	if len(r.Rows) == 0 {
		return nil
	}
	c := &render.BusbwCurve{}
	if r.Baseline != nil {
		c.MinGBps = r.Baseline.MinBusBandwidthGBps
	}
	for _, pt := range report.Points(r.Rows) {
		c.Points = append(c.Points, render.CurvePoint{SizeBytes: pt.SizeBytes, BusBandwidthGBps: pt.BusBandwidthGBps})
	}
	return c
}
