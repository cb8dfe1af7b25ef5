package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// sweepState is what a sweep (--sweep) knows besides a --mark run: the
// selection, the nodes it skipped, and the quarantine cap.
type sweepState struct {
	// selected are the nodes of the selection, busy ones included, as read.
	selected map[string]*corev1.Node
	skipped  []render.AcceptSkipped
	qcap     *accept.QuarantineCap
	fleet    *render.Fleet
}

// addSweepFlags: --sweep and where it keeps the records.
func (o *acceptOptions) addSweepFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.sweep, "sweep", false, "the in-cluster sweep (implies --mark): skip busy nodes (a pod not gpuctl's holds GPUs), quarantine a FAILed node within --max-unhealthy (cordon, taint gpuctl.dev/unaccepted=fail:NoSchedule, reason annotation, Event), return a quarantined node on PASS only, set the GPUAccepted condition and verdict annotations on every probed node")
	f.BoolVar(&o.recordsConfigMap, "records-configmap", false, "with --sweep: keep each node's newest signed record in ConfigMap gpuctl-record-NODE of the probe namespace (at most 900 KiB)")
}

// validateSweep: --records-configmap is the sweep's, the sweep needs a
// cluster and does its own isolation.
func (o *acceptOptions) validateSweep() error {
	switch {
	case o.recordsConfigMap && !o.sweep:
		return usageErrorf("--records-configmap needs --sweep")
	case o.sweep && o.offline != "":
		return usageErrorf("--sweep needs a cluster: it does not work with --offline")
	case o.sweep && (o.taintOnFail || o.cordonOnFail):
		return usageErrorf("--sweep quarantines (taint and cordon) within --max-unhealthy itself: drop --taint-on-fail and --cordon-on-fail")
	}
	return nil
}

// sweepSpecDefaults: with --sweep, spec.acceptance of doc (as --env
// resolves it) is the default of each of -n, --stages, --parallel,
// --max-unhealthy, --records-configmap, --allow-privileged and --image not given (on the command line
// or in the environment), so that accept --sweep --spec runs, and its dry
// run's RBAC is, what the CronJob gpuctl generate acceptance writes for the
// spec. records.persistentVolumeClaim sets nothing: the CronJob mounts it
// and names it with --evidence-dir. Nothing without --sweep or without
// spec.acceptance.
func (o *acceptOptions) sweepSpecDefaults(flags *pflag.FlagSet, doc *spec.Document) error {
	if !o.sweep {
		return nil
	}
	cs, err := doc.Resolve(o.env)
	if err != nil {
		return usageErrorf("%v", err)
	}
	a := cs.Spec.Acceptance
	if a == nil {
		return nil
	}
	unset := func(name string) bool { return !flags.Changed(name) }
	if unset("namespace") {
		*o.kube.config.Namespace = a.NamespaceOr()
	}
	if unset("stages") {
		o.stages = slices.Clone(a.StagesOr())
	}
	if unset("parallel") {
		o.parallel = a.ParallelOr()
	}
	if unset("max-unhealthy") {
		o.maxUnhealthy = a.MaxUnhealthyOr().String()
	}
	if unset("records-configmap") {
		o.recordsConfigMap = a.Records.ConfigMap
	}
	if unset("allow-privileged") {
		o.privileged = a.AllowPrivileged
	}
	if unset("image") {
		for _, st := range spec.ImageStages(a) {
			o.images = append(o.images, st+"="+a.Images[st])
		}
	}
	return nil
}

// skipBusy returns the idle nodes of the selection (a pod not gpuctl's
// holding GPUs makes a node busy; gpuctl's own taint does not) and keeps the
// busy ones as skipped, before any Job is planned.
func (o *acceptOptions) skipBusy(ctx context.Context, c kubernetes.Interface, nodes []string, read map[string]*corev1.Node) ([]string, error) {
	busy, err := accept.BusyNodes(ctx, c, nodes)
	if err != nil {
		return nil, withCode(ExitInconclusive, err)
	}
	o.sw = &sweepState{selected: map[string]*corev1.Node{}}
	var idle []string
	for _, n := range nodes {
		o.sw.selected[n] = read[n]
		if why, ok := busy[n]; ok {
			o.sw.skipped = append(o.sw.skipped, render.AcceptSkipped{Node: n, Reason: why})
			continue
		}
		idle = append(idle, n)
	}
	return idle, nil
}

// startQuarantineCap counts the selection's quarantined nodes that stay so
// after this sweep (all but those that PASSed) against --max-unhealthy.
func (o *acceptOptions) startQuarantineCap(results []*accept.Result, errs []error) {
	passed := map[string]bool{}
	for i, res := range results {
		if errs[i] == nil && res != nil && res.Verdict == diag.Pass {
			passed[res.Node] = true
		}
	}
	held := 0
	for name, n := range o.sw.selected {
		if n != nil && accept.IsQuarantined(n) && !passed[name] {
			held++
		}
	}
	o.sw.qcap = accept.NewQuarantineCap(o.maxUnh, len(o.sw.selected), held)
}

// sweepNode does to the node of a written record what the sweep does: Mark
// with the quarantine the cap allows, the GPUAccepted condition, and the
// records ConfigMap. Each failed step is an error of the node's report.
func (o *acceptOptions) sweepNode(ctx context.Context, c kubernetes.Interface, n *render.AcceptNode, res *accept.Result) {
	sw := &render.AcceptSweep{}
	n.Sweep = sw
	ref, err := o.recordRef(n, res)
	if err != nil {
		o.sweepError(n, "reading the record", err)
		return
	}
	reason := accept.MarkReason(res.Verdict, res.Stages)
	opt := o.quarantineOptions(n.Node, res.Verdict, reason, sw)
	message := reason
	if sw.NotQuarantined != "" {
		message += "; " + sw.NotQuarantined
	}
	m, err := accept.Mark(ctx, c, n.Node, ref, message, opt)
	if m != nil {
		n.Mark = &render.AcceptMark{Label: m.Label, Added: m.Added, Removed: m.Removed, Event: m.Event, Events: m.Events}
		sw.Returned = res.Verdict == diag.Pass && len(m.Removed) > 0
	}
	if err != nil {
		o.sweepError(n, "marking", err)
	}
	if cond, err := accept.SetAcceptedCondition(ctx, c, n.Node, ref, reason); err != nil {
		o.sweepError(n, "condition", err)
	} else {
		sw.Condition = fmt.Sprintf("%s (%s)", cond.Status, cond.Reason)
	}
	if o.recordsConfigMap {
		o.storeRecord(ctx, c, n, ref)
	}
}

// quarantineOptions are Mark's options for a node of the sweep: a FAIL is
// quarantined when the node already is or the cap admits one more; beyond
// the cap sw says why not.
func (o *acceptOptions) quarantineOptions(node string, v diag.Verdict, reason string, sw *render.AcceptSweep) accept.MarkOptions {
	opt := accept.MarkOptions{Sweep: true}
	if v != diag.Fail {
		return opt
	}
	if n := o.sw.selected[node]; (n != nil && accept.IsQuarantined(n)) || o.sw.qcap.Admit() {
		opt.TaintOnFail, opt.CordonOnFail, opt.QuarantineReason = true, true, reason
		sw.Quarantined = true
		return opt
	}
	sw.NotQuarantined = o.sw.qcap.Full()
	return opt
}

// storeRecord keeps the node's newest record in its ConfigMap
// (--records-configmap).
func (o *acceptOptions) storeRecord(ctx context.Context, c kubernetes.Interface, n *render.AcceptNode, ref accept.MarkRecordRef) {
	data, err := os.ReadFile(n.Record)
	if err == nil {
		var name string
		ns := o.kube.namespace()
		if name, err = accept.StoreRecordConfigMap(ctx, c, ns, n.Node, data, ref); err == nil {
			n.Sweep.RecordConfigMap = ns + "/" + name
			return
		}
	}
	o.sweepError(n, "records ConfigMap", err)
}

// sweepError notes a failed step of the sweep on node n: in its report, on
// stderr, and in the exit code (1, as a failed --mark).
func (o *acceptOptions) sweepError(n *render.AcceptNode, step string, err error) {
	o.markFailed = true
	n.Sweep.Errors = append(n.Sweep.Errors, step+": "+err.Error())
	fmt.Fprintf(o.streams.ErrOut, "error: node %s: --sweep: %s: %v\n", n.Node, step, err)
}

// recordRef is the MarkRecordRef of the node's written record.
func (o *acceptOptions) recordRef(n *render.AcceptNode, res *accept.Result) (accept.MarkRecordRef, error) {
	ev, err := record.HashFile(n.Record)
	if err != nil {
		return accept.MarkRecordRef{}, err
	}
	return accept.MarkRecordRef{RunID: res.RunID, Verdict: res.Verdict, Digest: "sha256:" + ev.SHA256, Time: o.f.Now().UTC()}, nil
}

// fleetFormats are the formats of the sweep's fleet summary on stdout: one
// line of JSON after the records with -o json, nothing for the table (the
// human summary is on stderr).
var fleetFormats = viewFormats[*render.Fleet]{{render.FormatTable, func(*IOStreams, *render.Fleet) error { return nil }}, {render.FormatJSON, writeFleetLine}}

func writeFleetLine(s *IOStreams, f *render.Fleet) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return writeLine(s, b)
}

// reportSweep writes the skipped nodes to stderr and, with -o json, the
// fleet summary (skipped nodes and what the sweep did to each node
// included) as the last line of stdout; nothing without --sweep.
func (o *acceptOptions) reportSweep() error {
	if o.sw == nil {
		return nil
	}
	if err := render.AcceptSkippedText(o.streams.ErrOut, o.sw.skipped); err != nil {
		return err
	}
	if o.sw.fleet == nil {
		return nil
	}
	return writeOutput(o.streams, o.out, fleetFormats, o.sw.fleet)
}

// sweepNothing ends a sweep whose selector matches no node (a pool its
// autoscaler scaled to zero): nothing to accept, nothing created or
// changed, exit 0; a line on stderr and, with -o json, the fleet summary
// with no nodes on stdout (and in --evidence-dir, as every sweep's).
func (o *acceptOptions) sweepNothing() error {
	if err := o.writeFleet(nil, 0, nil); err != nil {
		return err
	}
	fmt.Fprintf(o.streams.ErrOut, "nothing to accept: no node matches selector %q (the pool may be scaled to zero)\n", o.selector)
	return o.reportSweep()
}

// markPermissions are what marking needs: --sweep's or --mark's.
func (o *acceptOptions) markPermissions() []accept.Permission {
	if o.sweep {
		return accept.SweepPermissions(o.kube.namespace(), o.recordsConfigMap)
	}
	return accept.MarkPermissions()
}

// markFlag names the flag that marks, for messages.
func (o *acceptOptions) markFlag() string {
	if o.sweep {
		return "--sweep"
	}
	return "--mark"
}

// rbacFeatures are the opt-in features whose RBAC the run needs.
func (o *acceptOptions) rbacFeatures() accept.RBACFeatures {
	return accept.RBACFeatures{Mark: o.mark && !o.sweep, Multi: o.multi, Sweep: o.sweep, RecordsConfigMap: o.recordsConfigMap, CreateNamespace: o.kube.createNamespace}
}
