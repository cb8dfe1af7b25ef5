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

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/report"
	"github.com/gpuctl/gpuctl/internal/spec"
)

type acceptOptions struct {
	streams *IOStreams
	f       *Factory
	kube    *kubeFlags
	out     *outputFlag

	nodes        []string
	selector     string
	parallel     int
	specFile     string
	env, pool    string
	stages       []string
	dcgm         bool
	dcgmLevel    int
	images       []string
	probeImage   string
	baselines    string
	stageTimeout time.Duration
	timeout      time.Duration
	ttl          time.Duration
	cont, force  bool
	privileged   bool
	evidenceDir  string
	history      string
	record       string
	key          string
	dryRun       bool
	offline      string
	ncclMaxBytes string
	quiet        bool
	kubeQPS      float32
	kubeBurst    int
	fleetFile    string
	fleetLine    string
	gpus         int
	product      string
	driverCUDA   string
	bind         []string
	subjects     []accept.Subject
	mark         bool
	taintOnFail  bool
	cordonOnFail bool
	maxUnhealthy string
	maxUnh       accept.MaxUnhealthy
	markStop     string // why marking stopped (--max-unhealthy), "" when it did not
	markFailed   bool
	ncclMulti    string // --nccl-multi: pairs | all
	multi        bool   // nccl-multi selected

	// Completed values.
	stageList []accept.Stage
	overrides map[accept.Stage]string
	bl        *accept.Baselines
	expect    *accept.Expectations
	signer    interface {
		Sign(context.Context, []byte) ([]byte, error)
		KeyID() (string, error)
	}
}

func newAcceptCommand(streams *IOStreams, factory *Factory) *cobra.Command {
	o := &acceptOptions{streams: streams, f: factory, kube: newKubeFlags()}
	cmd := &cobra.Command{
		Use:   "accept NODE... | --selector SELECTOR | --offline DIR",
		Short: "Accept GPU nodes with staged probe Jobs and a signed record",
		Long: `Accept GPU nodes: run the acceptance stages on each node as Kubernetes Jobs
pinned to it, judge each stage, clean up, and write a signed record.

Stages, in order (each ends PASS, FAIL, INCONCLUSIVE or SKIPPED, with a reason):
  kubernetes  API only: node Ready, nvidia.com/gpu capacity as expected, GFD labels,
              the pool's taints, a device plugin Running, no other pod holding GPUs
  inventory   nvidia-smi -q -x, -L and nvlink -s (or gpuctl probe nvml with
              --probe-image): GPU count and model, driver, ECC, retired pages, row
              remapping, NVLink links, persistence, MIG off (with --allow-privileged
              also a dmesg XID scan);
              with --probe-image, gpuctl probe nvml -o json in that image instead
  topology    nvidia-smi topo -m: GPU<->GPU link class of the SKU (NV18 on H100 SXM)
  cuda        the CUDA vectorAdd sample on every GPU
  nccl        all_reduce_perf on all GPUs with validation; busbw at the largest size
              against the SKU's baseline (shipped with gpuctl, or --baselines)
  dcgm        opt-in (--dcgm): dcgmi diag -r LEVEL -j
  nccl-multi  opt-in (--stages ...,nccl-multi), after the nodes' own stages: all_reduce
              across nodes without SSH or MPI (an Indexed Job, one rank pod per node,
              a headless Service for DNS, torchrun's static rendezvous); --nccl-multi
              pairs runs a ring of node pairs and names the node common to failing
              pairs, all one all_reduce of the whole selection; judged against the
              fabric's multi-node baseline (TCPX, TCPXO, EFA, RDMA)

Each Job asks for every GPU of the node, tolerates exactly the node's taints, has
backoffLimit 0, activeDeadlineSeconds, ttlSecondsAfterFinished, no service account
token and no privilege unless --allow-privileged. Everything gpuctl creates is
labelled app.kubernetes.io/managed-by=gpuctl and gpuctl.dev/run-id=RUN-ID, and is
deleted (foreground) when the run ends, fails, times out or is interrupted.

Expectations come from --spec FILE [--env] [--pool], else from the node (instance
type, GPU Feature Discovery labels, capacity). A FAIL stops the node's run unless
--continue. The run's verdict is the worst stage: FAIL over INCONCLUSIVE over PASS.

The human summary goes to stderr. Raw outputs are saved under
--evidence-dir/NODE/RUN-ID/; the record (an in-toto Statement in a DSSE envelope,
signed with --key) goes to --record (default record.dsse.json there) and, with
-o json, to stdout (one JSON document per line and node). --dry-run -o yaml prints
the exact Jobs and the RBAC Role/ClusterRole accept needs. --offline DIR re-judges
saved evidence without a cluster.

Exit codes: 0 every node PASS, 3 a node FAILED, 4 inconclusive (and no FAIL),
1 tool error, 2 usage error.`,
		Example: `  # one node, expectations from the node itself, signed record
  gpuctl keygen --out accept
  gpuctl accept gpu-node-1 --key accept.key --create-namespace

  # every node of a pool, four at a time, against the spec
  gpuctl accept -l cloud.google.com/gke-nodepool=train-h100 --parallel 4 \
    --spec cluster.yaml --env prod --pool train-h100 --key accept.key

  # what would run, and the RBAC it needs
  gpuctl accept gpu-node-1 --dry-run -o yaml

  # re-judge saved evidence later, without a cluster
  gpuctl accept --offline gpuctl-evidence/gpu-node-1/20261129t154400-a1b2 --key accept.key -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			o.nodes = args
			if err := o.complete(cmd); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	o.kube.AddFlags(cmd)
	f.StringVarP(&o.selector, "selector", "l", "", "accept every node matching this label selector")
	f.IntVar(&o.parallel, "parallel", 1, "nodes accepted at the same time")
	f.StringVar(&o.specFile, "spec", "", "cluster spec with the node pool's expectations")
	f.StringVar(&o.env, "env", "", "environment of the spec")
	f.StringVar(&o.pool, "pool", "", "node pool of the spec (needed when it has several)")
	f.StringSliceVar(&o.stages, "stages", nil, "stages to run (default kubernetes,inventory,topology,cuda,nccl)")
	f.BoolVar(&o.dcgm, "dcgm", false, "also run the dcgm stage (dcgmi diag)")
	f.IntVar(&o.dcgmLevel, "dcgm-level", 2, "dcgmi diag run level (1-4)")
	f.StringArrayVar(&o.images, "image", nil, "image of a stage, STAGE=REF (repeatable); pin with @sha256:")
	f.StringVar(&o.probeImage, "probe-image", "", "gpuctl image (make build-nvml) whose gpuctl probe nvml -o json the inventory stage runs instead of nvidia-smi")
	f.StringVar(&o.baselines, "baselines", "", "NCCL baselines file replacing the shipped ones")
	f.DurationVar(&o.stageTimeout, "stage-timeout", 10*time.Minute, "time limit of each stage")
	f.DurationVar(&o.timeout, "timeout", time.Hour, "time limit of each node's run")
	f.DurationVar(&o.ttl, "ttl", time.Hour, "ttlSecondsAfterFinished of the Jobs (a safety net; gpuctl deletes them)")
	f.BoolVar(&o.cont, "continue", false, "run the remaining stages after a FAIL")
	f.BoolVar(&o.force, "force", false, "probe even if other pods hold GPUs on the node")
	f.BoolVar(&o.privileged, "allow-privileged", false, "allow privileged probes (dmesg XID scan, dcgm SYS_ADMIN)")
	f.StringVar(&o.evidenceDir, "evidence-dir", "gpuctl-evidence", "directory for raw outputs, under NODE/RUN-ID/")
	f.StringVar(&o.history, "history", "", "directory of earlier records (NODE/RUN-ID/record.dsse.json): link the node's previous record and list regressions (default --evidence-dir; with --offline only when given)")
	f.StringVar(&o.record, "record", "", "record file (default record.dsse.json in the node's evidence directory; one node only)")
	f.StringVar(&o.key, "key", "", "private key (PEM, Ed25519 or ECDSA P-256) that signs the record")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the Jobs and RBAC instead of running (with -o yaml)")
	f.StringVar(&o.offline, "offline", "", "re-judge the saved evidence in DIR without a cluster")
	f.StringVar(&o.ncclMaxBytes, "nccl-max-bytes", "8G", "largest all_reduce_perf message size (nccl-tests -e)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines on stderr")
	f.Float32Var(&o.kubeQPS, "kube-qps", 0, "API requests per second gpuctl may send (default: 5 per --parallel node, at least 20, at most 500)")
	f.IntVar(&o.kubeBurst, "kube-burst", 0, "API request burst (default: twice --kube-qps)")
	f.IntVar(&o.gpus, "gpus", 0, "--dry-run without a cluster: GPUs of the machine to plan for (else the spec pool's)")
	f.StringVar(&o.product, "product", "", "--dry-run without a cluster: GPU product of the machine (GPU Feature Discovery name)")
	f.StringVar(&o.driverCUDA, "driver-cuda", "", "--dry-run without a cluster: CUDA version the driver supports (picks the images; default the oldest)")
	f.StringArrayVar(&o.bind, "bind", nil, "--dry-run: also print bindings of the RBAC to user:NAME, group:NAME or serviceaccount:NAMESPACE:NAME (repeatable)")
	f.StringVar(&o.fleetFile, "fleet-summary", "", "file for the fleet summary JSON of a run over several nodes (default fleet-RUN-ID.json in --evidence-dir)")
	f.BoolVar(&o.mark, "mark", false, "mark each node: label gpuctl.dev/accept=pass|fail|inconclusive, the record's digest in an annotation, an Event (needs nodes patch, events create)")
	f.BoolVar(&o.taintOnFail, "taint-on-fail", false, "with --mark: taint a FAILed node gpuctl.dev/unaccepted:NoSchedule (a later PASS removes it)")
	f.BoolVar(&o.cordonOnFail, "cordon-on-fail", false, "with --mark: cordon a FAILed node (a later PASS uncordons it, if gpuctl cordoned it)")
	f.StringVar(&o.maxUnhealthy, "max-unhealthy", "", "with --mark: mark no node when more than N (or P%) of the selection are not PASS")
	f.StringVar(&o.ncclMulti, "nccl-multi", accept.MultiPairs, "with --stages nccl-multi: pairs (a ring of node pairs, names the slow node) or all (one all_reduce across the selection)")
	o.out = addOutputFlag(cmd, "table", "table", "json", "yaml").alias("text", "table")
	return cmd
}

func (o *acceptOptions) complete(cmd *cobra.Command) error {
	names := o.stages
	if len(names) == 0 {
		for _, s := range accept.DefaultStages {
			names = append(names, string(s))
		}
	}
	if o.dcgm {
		names = append(names, string(accept.StageDCGM))
	}
	seen := map[accept.Stage]bool{}
	for _, n := range names {
		st, err := accept.ParseStage(strings.TrimSpace(n))
		if err != nil {
			return usageErrorf("--stages: %v", err)
		}
		if !seen[st] {
			o.stageList = append(o.stageList, st)
			seen[st] = true
		}
		o.multi = o.multi || st == accept.StageNCCLMulti
	}
	var err error
	if o.overrides, err = accept.ImageOverrides(o.images); err != nil {
		return usageErrorf("%v", err)
	}
	o.bl = accept.DefaultBaselines()
	if o.baselines != "" {
		if o.bl, err = accept.LoadBaselines(o.baselines); err != nil {
			return usageErrorf("%v", err)
		}
	}
	if o.specFile != "" {
		doc, err := spec.Load(o.specFile, o.streams.In)
		if err != nil {
			return withCode(ExitUsage, err)
		}
		e, err := accept.SpecExpectations(doc, o.env, o.pool, o.f.Catalogue)
		if err != nil {
			return usageErrorf("%v", err)
		}
		o.expect = &e
	} else if o.env != "" || o.pool != "" {
		return usageErrorf("--env and --pool need --spec")
	}
	if o.key != "" {
		pemBytes, err := readLimited(o.key, maxKeyBytes)
		if err != nil {
			return usageErrorf("reading --key: %v", err)
		}
		if err := checkPrivateKeyMode(o.key); err != nil {
			return usageErrorf("--key: %v", err)
		}
		sv, err := record.LoadSignerVerifier(pemBytes)
		if err != nil {
			return usageErrorf("--key %s: %v", o.key, err)
		}
		if _, err := sv.Sign(cmd.Context(), []byte("probe")); err != nil {
			return usageErrorf("--key %s is not a private key: %v", o.key, err)
		}
		o.signer = sv
	}
	return nil
}

func (o *acceptOptions) validate() error {
	if err := o.out.validate(); err != nil {
		return err
	}
	switch {
	case o.offline != "" && (len(o.nodes) > 0 || o.selector != ""):
		return usageErrorf("--offline re-judges one evidence directory: give no nodes or --selector")
	case o.offline == "" && len(o.nodes) == 0 && o.selector == "" && !o.poolDryRun():
		return usageErrorf("name at least one node, or use --selector or --offline (or --dry-run with --spec/--pool or --gpus)")
	case !o.dryRun && (o.gpus != 0 || o.product != "" || o.driverCUDA != "" || len(o.bind) > 0):
		return usageErrorf("--gpus, --product, --driver-cuda and --bind are for --dry-run")
	case o.out.value == "yaml" && !o.dryRun:
		return usageErrorf("-o yaml is for --dry-run; the record is JSON (-o json)")
	case o.dryRun && o.offline != "":
		return usageErrorf("--dry-run and --offline exclude each other")
	case o.record != "" && (len(o.nodes) > 1 || o.selector != ""):
		return usageErrorf("--record names one file: use it with one node (each node's record goes to its evidence directory)")
	case o.parallel < 1:
		return usageErrorf("--parallel must be at least 1")
	case o.stageTimeout <= 0 || o.timeout <= 0:
		return usageErrorf("--stage-timeout and --timeout must be positive")
	case o.dcgmLevel < 1 || o.dcgmLevel > 4:
		return usageErrorf("--dcgm-level must be 1-4")
	case o.kubeQPS < 0 || o.kubeBurst < 0:
		return usageErrorf("--kube-qps and --kube-burst must not be negative")
	case !o.mark && (o.taintOnFail || o.cordonOnFail || o.maxUnhealthy != ""):
		return usageErrorf("--taint-on-fail, --cordon-on-fail and --max-unhealthy need --mark")
	case o.mark && o.offline != "":
		return usageErrorf("--mark needs a cluster: it does not work with --offline")
	case o.ncclMulti != accept.MultiPairs && o.ncclMulti != accept.MultiAll:
		return usageErrorf("--nccl-multi must be %s or %s", accept.MultiPairs, accept.MultiAll)
	case o.multi && o.offline != "":
		return usageErrorf("--stages nccl-multi needs a cluster: it does not work with --offline")
	case o.multi && o.record != "":
		return usageErrorf("--stages nccl-multi runs over several nodes: --record names one file")
	}
	var err error
	if o.maxUnh, err = accept.ParseMaxUnhealthy(o.maxUnhealthy); err != nil {
		return usageErrorf("%v", err)
	}
	for _, b := range o.bind {
		sub, err := accept.ParseSubject(b)
		if err != nil {
			return usageErrorf("--bind: %v", err)
		}
		o.subjects = append(o.subjects, sub)
	}
	o.sizeClient()
	return nil
}

// poolDryRun: a dry run that can plan without a cluster, for the machine of
// the spec's pool or of --gpus/--product.
func (o *acceptOptions) poolDryRun() bool {
	return o.dryRun && (o.expect != nil || o.gpus > 0)
}

// sizeClient gives the client a rate limit sized for --parallel, shared by
// every API group (client-go's default, QPS 5 and burst 10 per group, made
// 100 parallel nodes wait on each other and stretched their stage times).
func (o *acceptOptions) sizeClient() {
	qps, burst := o.kubeQPS, o.kubeBurst
	if qps == 0 {
		qps = min(max(5*float32(o.parallel), 20), 500)
	}
	if burst == 0 {
		burst = int(2 * qps)
	}
	o.kube.config.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.QPS, c.Burst = qps, burst
		c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
		return c
	}
}

func (o *acceptOptions) logger() *slog.Logger {
	level := slog.LevelInfo
	if o.quiet {
		level = slog.LevelError
	}
	return o.loggerAt(level)
}

func (o *acceptOptions) loggerAt(level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(o.streams.ErrOut, &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
}

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
		return withCode(ExitInconclusive, fmt.Errorf("kubernetes client: %w", err))
	}
	nodes, read, err := o.nodeNames(ctx, client)
	if err != nil {
		return err
	}
	if o.multi && len(nodes) < 2 {
		return usageErrorf("--stages nccl-multi runs across nodes: select at least two (NODE NODE... or --selector)")
	}
	if o.dryRun {
		return o.printDryRun(ctx, client, nodes, read)
	}
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
	var progress *render.Progress
	if !o.quiet && len(plans) > 1 {
		var names []string
		for _, st := range append(append([]accept.Stage(nil), accept.AllStages...), accept.FleetStages...) {
			names = append(names, string(st))
		}
		progress = render.NewProgress(o.streams.ErrOut, o.streams.ErrTTY, len(plans), names)
		r.Progress = func(ev accept.ProgressEvent) { progress.Event(ev.Node, string(ev.Stage), ev.Verdict) }
		if o.streams.ErrTTY { // the live line instead of a log line per stage
			r.Log = o.loggerAt(slog.LevelWarn)
		}
	}
	results, errs := r.RunAll(ctx, plans, o.parallel)
	if o.multi {
		if err := o.runMulti(ctx, r, results, errs, read); err != nil {
			return err
		}
	}
	if progress != nil {
		progress.Done()
	}
	if o.mark {
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
	var summary []render.AcceptNode
	for i, res := range results {
		n := o.finish(ctx, plans[i].Node, res, errs[i])
		if o.mark && o.markStop == "" && n.Err == nil && res != nil {
			o.markNode(ctx, client, &n, res)
		}
		summary = append(summary, n)
	}
	if len(summary) > 1 {
		if err := o.writeFleet(summary, o.f.Now().Sub(started), plans[0].RunID); err != nil {
			return err
		}
	}
	return o.report(summary)
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
		markDenied, err := accept.CheckAccess(ctx, c, accept.MarkPermissions())
		if err == nil && len(markDenied) > 0 {
			var s []string
			for _, p := range markDenied {
				s = append(s, fmt.Sprintf("%s (to %s)", p, p.Why))
			}
			return withCode(ExitInconclusive, fmt.Errorf("RBAC: --mark: the identity running gpuctl may not %s; nothing was run ('gpuctl accept --dry-run --mark -o yaml' prints the RBAC)", strings.Join(s, "; ")))
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
	ev, err := record.HashFile(n.Record)
	if err == nil {
		ref := accept.MarkRecordRef{RunID: res.RunID, Verdict: res.Verdict, Digest: "sha256:" + ev.SHA256, Time: o.f.Now().UTC()}
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
		k8s := diag.Skipped
		for _, st := range res.Stages {
			if st.Name == accept.StageKubernetes {
				k8s = st.Verdict
			}
		}
		switch {
		case res.Verdict == diag.Fail:
			accept.AddStage(res, accept.StageResult{Name: accept.StageNCCLMulti, Verdict: diag.Skipped, Reason: "the node FAILED its own stages; it takes no part", Evidence: []accept.Evidence{}})
		case k8s != diag.Pass && k8s != diag.Skipped && !o.force:
			// GPUs held by another pod, the node not Ready, ...: no Job stage runs there.
			accept.AddStage(res, accept.StageResult{Name: accept.StageNCCLMulti, Verdict: diag.Skipped, Reason: "the node's kubernetes stage is " + string(k8s) + "; it takes no part (--force to include it)", Evidence: []accept.Evidence{}})
		case n == nil:
			accept.AddStage(res, accept.StageResult{Name: accept.StageNCCLMulti, Verdict: diag.Inconclusive, Cause: accept.CauseCluster, Reason: "the node could not be read", Evidence: []accept.Evidence{}})
		default:
			nodes = append(nodes, n)
			dirs[res.Node] = res.EvidenceDir
		}
	}
	m := o.multiRun(o.f.runID(), nodes, dirs)
	if len(nodes) > 0 && byNode[nodes[0].Name].Predicate != nil && byNode[nodes[0].Name].Predicate.Driver.CUDA != "" {
		m.DriverCUDA = byNode[nodes[0].Name].Predicate.Driver.CUDA // what inventory saw
	}
	mr, err := r.RunMulti(ctx, m, o.parallel)
	if err != nil {
		return err
	}
	for name, sr := range mr.Nodes {
		accept.AddStage(byNode[name], sr)
	}
	for _, g := range mr.Groups {
		fmt.Fprintf(o.streams.ErrOut, "nccl-multi %s (%s): %s %s\n", g.Group, strings.Join(g.Nodes, ", "), g.Verdict, g.Reason)
	}
	return nil
}

// writeFleet writes the fleet summary JSON and prints where.
func (o *acceptOptions) writeFleet(nodes []render.AcceptNode, wall time.Duration, runID string) error {
	f := render.NewFleet(nodes, wall)
	if o.mark {
		f.Marking = &render.FleetMarking{Stopped: o.markStop != "", Reason: o.markStop, MaxUnhealthy: o.maxUnhealthy}
	}
	path := o.fleetFile
	if path == "" {
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

// nodeStages are the selected stages a node's own run has (not the fleet
// stage nccl-multi).
func (o *acceptOptions) nodeStages() []accept.Stage {
	var out []accept.Stage
	for _, st := range o.stageList {
		if !accept.IsFleetStage(st) {
			out = append(out, st)
		}
	}
	return out
}

// multiRun is the nccl-multi run over nodes the flags ask for; runs and
// --dry-run both start from it.
func (o *acceptOptions) multiRun(runID string, nodes []*corev1.Node, dirs map[string]string) accept.MultiRun {
	m := accept.MultiRun{RunID: runID, Namespace: o.kube.namespace(), Nodes: nodes, Mode: o.ncclMulti, Image: o.overrides[accept.StageNCCLMulti],
		StageTimeout: o.stageTimeout, TTL: o.ttl, MaxBytes: o.ncclMaxBytes, EvidenceDirs: dirs}
	if len(nodes) > 0 {
		m.DriverCUDA = accept.DriverCUDAFromLabels(nodes[0])
	}
	if o.expect != nil {
		m.Env = o.expect.NCCLEnv
	}
	return m
}

// plan is the run of node that the flags ask for; a real run and --dry-run
// both start from it.
func (o *acceptOptions) plan(node, runID string) accept.Plan {
	return accept.Plan{
		Node: node, RunID: runID, Namespace: o.kube.namespace(), Stages: o.nodeStages(), Images: o.overrides, ProbeImage: o.probeImage, Expect: o.expect, Catalogue: o.f.Catalogue,
		Baselines: o.bl, StageTimeout: o.stageTimeout, RunTimeout: o.timeout, TTL: o.ttl,
		Continue: o.cont, Force: o.force, AllowPrivileged: o.privileged, DCGMLevel: o.dcgmLevel,
		NCCLMaxBytes: o.ncclMaxBytes, EvidenceDir: accept.EvidenceDir(o.evidenceDir, node, runID), Version: BuildVersion(),
	}
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
	rec, err := accept.WriteRecord(ctx, res, o.signer, o.record)
	if err != nil {
		n.Err = err
		return n
	}
	n.Record, n.Signed = rec.Path, rec.Signed
	if o.out.value == "json" {
		if _, err := fmt.Fprintf(o.streams.Out, "%s\n", rec.JSON); err != nil {
			n.Err = err
		}
	}
	return n
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
	if len(nodes) > 1 {
		if err := render.AcceptSummary(o.streams.ErrOut, nodes); err != nil {
			return err
		}
		if o.fleetLine != "" {
			fmt.Fprintln(o.streams.ErrOut, o.fleetLine)
		}
	}
	if firstErr != nil {
		return withCode(ExitToolError, firstErr)
	}
	if o.markFailed {
		return withCode(ExitToolError, errors.New("--mark: some nodes could not be marked (see above)"))
	}
	switch diag.Worst(verdicts...) {
	case diag.Fail:
		return silentExit(ExitCheckFailed)
	case diag.Inconclusive:
		return silentExit(ExitInconclusive)
	}
	return nil
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
		if len(list.Items) == 0 {
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

// printDryRun prints the RBAC and, for each node, the Jobs the run would
// create, as a YAML stream. read holds the nodes nodeNames already read; the
// others are read here.
func (o *acceptOptions) printDryRun(ctx context.Context, c kubernetes.Interface, nodes []string, read map[string]*corev1.Node) error {
	var plans []*accept.NodePlan
	var objs []*corev1.Node
	for _, name := range nodes {
		node := read[name]
		if node == nil {
			var err error
			if node, err = c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil {
				if apierrors.IsNotFound(err) {
					return usageErrorf("node %s not found ('kubectl get nodes' lists the nodes)", name)
				}
				return withCode(ExitInconclusive, fmt.Errorf("reading node %s: %w", name, err))
			}
		}
		np, err := accept.PlanNode(o.plan(name, o.f.runID()), node)
		if errors.Is(err, accept.ErrNoGPUs) {
			return withCode(ExitInconclusive, err)
		}
		if err != nil {
			return err
		}
		for _, sp := range np.Stages {
			if sp.Problem != "" {
				fmt.Fprintf(o.streams.ErrOut, "note: node %s: stage %s would create no Job and be INCONCLUSIVE: %s\n", name, sp.Stage, sp.Problem)
			}
		}
		plans = append(plans, np)
		objs = append(objs, node)
	}
	docs := accept.DryRunObjectsWith(o.kube.namespace(), plans, o.subjects, accept.RBACFeatures{Mark: o.mark, Multi: o.multi})
	more, err := o.multiDryRun(objs)
	if err != nil {
		return err
	}
	return o.printDocs(append(docs, more...))
}

// printPoolDryRun plans without any API access, for the machine the spec's
// pool (or --gpus/--product) describes: one plan per named node, else one
// for a node called NODE.
func (o *acceptOptions) printPoolDryRun() error {
	exp := accept.Expectations{Source: "--gpus/--product"}
	if o.expect != nil {
		exp = *o.expect
	}
	if o.gpus > 0 {
		exp.GPUCount = o.gpus
	}
	if o.product != "" {
		exp.GPUProduct = o.product
	}
	if exp.GPUCount == 0 {
		return usageErrorf("the spec's pool does not say how many GPUs a node has: give --gpus")
	}
	names := o.nodes
	if len(names) == 0 {
		names = []string{"NODE"}
	}
	if o.multi && len(names) < 2 {
		names = []string{"NODE-1", "NODE-2"} // nccl-multi runs across nodes: plan a pair
	}
	var plans []*accept.NodePlan
	var objs []*corev1.Node
	for _, name := range names {
		p := o.plan(name, o.f.runID())
		p.Expect = &exp
		node := accept.PoolNode(name, exp, o.driverCUDA)
		np, err := accept.PlanNode(p, node)
		if err != nil {
			return err
		}
		plans = append(plans, np)
		objs = append(objs, node)
	}
	fmt.Fprintf(o.streams.ErrOut, "note: planned without a cluster for %d x %s (%s)\n", exp.GPUCount, dash(exp.GPUProduct), exp.Source)
	docs := accept.DryRunObjectsWith(o.kube.namespace(), plans, o.subjects, accept.RBACFeatures{Mark: o.mark, Multi: o.multi})
	more, err := o.multiDryRun(objs)
	if err != nil {
		return err
	}
	return o.printDocs(append(docs, more...))
}

// multiDryRun returns the Services and Jobs nccl-multi would create across
// nodes (none without --stages nccl-multi), from the planning a run uses.
func (o *acceptOptions) multiDryRun(nodes []*corev1.Node) ([]any, error) {
	if !o.multi {
		return nil, nil
	}
	m := o.multiRun(o.f.runID(), nodes, nil)
	if o.driverCUDA != "" {
		m.DriverCUDA = o.driverCUDA
	}
	mp, err := accept.PlanMulti(m)
	if err != nil {
		return nil, err
	}
	if mp.Problem != "" {
		fmt.Fprintf(o.streams.ErrOut, "note: stage nccl-multi would create nothing and be INCONCLUSIVE: %s\n", mp.Problem)
	}
	return mp.Objects(), nil
}

func dash(s string) string {
	if s == "" {
		return "unknown GPU"
	}
	return s
}

// printDocs prints a dry run's objects as a YAML stream (or a JSON List).
func (o *acceptOptions) printDocs(docs []any) error {
	if o.out.value == "json" {
		return render.JSON(o.streams.Out, map[string]any{"apiVersion": "v1", "kind": "List", "items": docs})
	}
	for i, d := range docs {
		b, err := accept.MarshalYAML(d)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(o.streams.Out, "---")
		}
		if _, err := o.streams.Out.Write(b); err != nil {
			return err
		}
	}
	if o.out.value == "table" {
		fmt.Fprintln(o.streams.ErrOut, "note: --dry-run prints YAML; bind the Role and ClusterRole to the identity that runs gpuctl")
	}
	return nil
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
