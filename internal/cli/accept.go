package cli

import (
	"context"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/safefs"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// acceptOptions are accept's flags, by group (each group's flags are added
// by its add*Flags), and what complete and validate make of them.
type acceptOptions struct {
	streams *IOStreams
	f       *Factory
	kube    *kubeFlags
	out     *outputFlag

	// What is judged, against what (addSelectionFlags).
	nodes     []string
	selector  string
	parallel  int
	specFile  string
	env, pool string
	offline   string
	kubeQPS   float32
	kubeBurst int

	// The stages and how they run (addStageFlags).
	stages       []string
	dcgm         bool
	dcgmLevel    int
	images       []string
	probeImage   string
	baselines    string
	ncclMaxBytes string
	ncclMulti    string // --nccl-multi: pairs | all
	stageTimeout time.Duration
	timeout      time.Duration
	ttl          time.Duration
	cont, force  bool
	privileged   bool
	noDiag       bool

	// Evidence, records and what is printed (addRecordFlags).
	evidenceDir string
	evidenceURI string
	history     string
	record      string
	key         string
	fleetFile   string
	quiet       bool

	// --dry-run (addDryRunFlags).
	dryRun     bool
	gpus       int
	product    string
	driverCUDA string
	bind       []string

	// --mark (addMarkFlags).
	mark         bool
	taintOnFail  bool
	cordonOnFail bool
	maxUnhealthy string
	unmark       bool

	// --sweep (addSweepFlags).
	sweep            bool
	recordsConfigMap bool

	// Completed values.
	stageList []accept.Stage
	multi     bool           // a fleet stage (nccl-multi, framework-multi) selected
	fleet     []accept.Stage // the fleet stages selected, in table order
	overrides map[accept.Stage]string
	bl        *accept.Baselines
	expect    *accept.Expectations
	signer    interface {
		Sign(context.Context, []byte) ([]byte, error)
		KeyID() (string, error)
	}
	subjects []accept.Subject
	maxUnh   accept.MaxUnhealthy

	// What the run found out on the way.
	fleetLine  string // the fleet summary's line and where it was written
	markStop   string // why marking stopped (--max-unhealthy), "" when it did not
	markFailed bool
	sw         *sweepState // --sweep: the selection, the skipped nodes, the quarantine cap
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
  dcgm        opt-in (--dcgm): dcgmi diag -r LEVEL -j (DCGM 4; on a failed diag the
              nv-hostengine log follows in its evidence)
  network     opt-in (--stages ...,network): RDMA/EFA devices from sysfs (and ibv_devinfo,
              rdma link, fi_info -p efa where the image has them) against the machine
              type: one EFA device per network card on EKS EFA instances, the RDMA NIC
              count, ACTIVE ports, Ethernet link layer and NIC speed on GKE RoCE
              machines (A3 Ultra, A4); GPU-NIC pairs from topo -m; none expected
              elsewhere
  framework   opt-in (--stages ...,framework): PyTorch under torchrun, one process per
              GPU, in the PyTorch image: an fp32 matmul against a float64 reference
              (max rel err <= 1e-4), an exact all-reduce, a short DDP training run
              whose loss must fall to <= 0.1 of its start, a checkpoint saved and
              restored bit-equal, a transformer's inference finite and repeatable
  diagnostics after a node FAILs (--no-diagnostics: not; --stages ...,diagnostics: also
              on a PASS): nvidia-bug-report.sh where the driver mount has it (base64
              in the pod log, at most 6 MiB, decoded into the evidence), else
              nvidia-smi -q; dmesg with --allow-privileged; the dcgm stage's
              nv-hostengine log. PASS captured, INCONCLUSIVE could not; it never
              changes the node's verdict
  nccl-multi  opt-in (--stages ...,nccl-multi), after the nodes' own stages: all_reduce
              across nodes without SSH or MPI (an Indexed Job, one rank pod per node,
              a headless Service for DNS, torchrun's static rendezvous); --nccl-multi
              pairs runs a ring of node pairs and names the node common to failing
              pairs, all one all_reduce of the whole selection; the rank pods use the
              nodes' GPU fabric (EFA devices and huge pages; GPUDirect-TCPX/TCPXO
              sidecar and GPU networks; RDMA networks and gIB; the GKE ones need
              --allow-privileged), NCCL must report the fabric's network, then the
              busbw is judged against the fabric's multi-node baseline; a node that
              lacks what its fabric needs is INCONCLUSIVE, naming it
  framework-multi  opt-in (--stages ...,framework-multi), after nccl-multi: the framework
              checks across the nodes (the same Indexed Job, rendezvous and fabric-aware
              rank pods, --nccl-multi pairs|all): DDP training, all-reduce, checkpoint and
              inference over every GPU of the group; judged as framework is

The node-local stages run in one Job per node, their containers one after another
in one pod; each stage is judged as its containers end and held to --stage-timeout,
and a FAIL (without --continue) ends the Job. diagnostics and the fleet stages run
Jobs of their own.
Each Job asks for every GPU of the node, tolerates exactly the node's taints, has
backoffLimit 0, activeDeadlineSeconds, ttlSecondsAfterFinished, no service account
token and no privilege unless --allow-privileged. Everything gpuctl creates is
labelled app.kubernetes.io/managed-by=gpuctl and gpuctl.dev/run-id=RUN-ID, and is
deleted (the Job, then its pods) when the run ends, fails, times out or is interrupted.

Expectations come from --spec FILE [--env] [--pool], else from the node (instance
type, GPU Feature Discovery labels, capacity). A FAIL stops the node's run unless
--continue. The run's verdict is the worst stage: FAIL over INCONCLUSIVE over PASS.

The human summary goes to stderr. Raw outputs are saved under
--evidence-dir/NODE/RUN-ID/; the record (an in-toto Statement in a DSSE envelope,
signed with --key) goes to --record (default record.dsse.json there) and, with
-o json, to stdout (one JSON document per line and node). --dry-run -o yaml prints
the exact Jobs and the RBAC Role/ClusterRole accept needs. --offline DIR re-judges
saved evidence without a cluster. --evidence-uri URI writes each node's evidence
directory as one deterministic tar.gz in it and names it in the record (file, sha256,
size) with URI, where you store it: gpuctl uploads nothing (copy it with your
cloud's CLI); 'gpuctl verify --evidence-dir' checks the bundle's sha256 when it is
there.

--sweep is the in-cluster acceptance sweep (what the CronJob of 'gpuctl generate
acceptance' runs; it implies --mark): a node where a pod not gpuctl's holds GPUs is
SKIPPED before any Job is planned (reported, not probed, not changed); a node that
FAILs is quarantined while --max-unhealthy allows (of the selection, busy nodes
included, a percentage rounded up; nodes already quarantined count): cordoned, tainted
gpuctl.dev/unaccepted=fail:NoSchedule, labelled gpuctl.dev/accept=fail, annotated
gpuctl.dev/quarantine-reason, with an Event; beyond the cap it is marked, not
cordoned, and the report says the cap was reached. A quarantined node is probed
again once idle and returned (what gpuctl added removed, an Event) on PASS only.
Every probed node gets the condition GPUAccepted (True PASS, False FAIL, Unknown
INCONCLUSIVE; the record's digest in its message) and the annotations
gpuctl.dev/accept-verdict, accept-time and record-digest. --records-configmap keeps
each node's newest signed record in ConfigMap gpuctl-record-NODE of the probe
namespace (900 KiB at most; a larger record is an error of that node). With -o json
the last line of stdout is the fleet summary (kind AcceptFleet), skipped nodes and
what the sweep did to each node included. Skipped nodes do not fail the sweep,
and a selector that matches no node (a pool scaled to zero) is nothing to accept:
exit 0.

--unmark takes off each node (NODE... or --selector) what --mark and --sweep put
on it, and nothing else: the label gpuctl.dev/accept, the annotations
gpuctl.dev/accept-record, accept-added, accept-verdict, accept-time, record-digest
and quarantine-reason, the condition GPUAccepted, and the taint
gpuctl.dev/unaccepted and the cordon only where accept-added says gpuctl added them
(a node someone else cordoned stays cordoned); an Event GPUUnmarked on the node
says what was removed. It runs no stage and creates no Job; a node that carries
nothing of gpuctl's is left alone and reported so. --dry-run says what would be
removed, --dry-run -o yaml (or --bind) prints the RBAC it needs. -o json is a list
of {node, removed, kept, event, errors}; exit 1 when an API call failed.

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

  # the in-cluster sweep of a pool's idle nodes: quarantine FAILs (at most 10% of the
  # pool), return them after a later PASS, newest records in ConfigMaps
  gpuctl accept --sweep -l cloud.google.com/gke-nodepool=train-h100 -n gpuctl-acceptance \
    --max-unhealthy 10% --key accept.key --records-configmap -q -o json

  # take gpuctl's marks off a pool's nodes: first what would go, then remove it
  gpuctl accept --unmark -l cloud.google.com/gke-nodepool=train-h100 --dry-run
  gpuctl accept --unmark -l cloud.google.com/gke-nodepool=train-h100

  # re-judge saved evidence later, without a cluster
  gpuctl accept --offline gpuctl-evidence/gpu-node-1/20261129t154400-a1b2 --key accept.key -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			o.nodes = args
			if o.unmark {
				return o.runUnmark(cmd)
			}
			if err := o.complete(cmd); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	o.kube.AddFlags(cmd)
	o.addSelectionFlags(cmd.Flags())
	o.addStageFlags(cmd.Flags())
	o.addRecordFlags(cmd.Flags())
	o.addDryRunFlags(cmd.Flags())
	o.addMarkFlags(cmd.Flags())
	o.addSweepFlags(cmd.Flags())
	o.out = addViewFlag(cmd, dryRunFormats).alias("text", "table")
	return cmd
}

// addSelectionFlags: which nodes (or saved evidence), how many at a time,
// the spec pool they are judged against, and the API rate.
func (o *acceptOptions) addSelectionFlags(f *pflag.FlagSet) {
	f.StringVarP(&o.selector, "selector", "l", "", "accept every node matching this label selector")
	f.IntVar(&o.parallel, "parallel", 1, "nodes accepted at the same time")
	f.StringVar(&o.specFile, "spec", "", "cluster spec with the node pool's expectations (with --sweep its acceptance block's namespace, stages, parallel, maxUnhealthy and records.configMap are the defaults of -n, --stages, --parallel, --max-unhealthy and --records-configmap)")
	f.StringVar(&o.env, "env", "", "environment of the spec")
	f.StringVar(&o.pool, "pool", "", "node pool of the spec (needed when it has several)")
	f.StringVar(&o.offline, "offline", "", "re-judge the saved evidence in DIR without a cluster")
	f.Float32Var(&o.kubeQPS, "kube-qps", 0, "API requests per second gpuctl may send (default: 5 per --parallel node, at least 20, at most 500)")
	f.IntVar(&o.kubeBurst, "kube-burst", 0, "API request burst (default: twice --kube-qps)")
}

// addStageFlags: the stages, their images and baselines, limits and
// privileges.
func (o *acceptOptions) addStageFlags(f *pflag.FlagSet) {
	f.StringSliceVar(&o.stages, "stages", nil, "stages to run (default kubernetes,inventory,topology,cuda,nccl)")
	f.BoolVar(&o.dcgm, "dcgm", false, "also run the dcgm stage (dcgmi diag)")
	f.IntVar(&o.dcgmLevel, "dcgm-level", 2, "dcgmi diag run level (1-4)")
	f.StringArrayVar(&o.images, "image", nil, "image of a stage, STAGE=REF (repeatable); pin with @sha256:")
	f.StringVar(&o.probeImage, "probe-image", "", "gpuctl image (make build-nvml) whose gpuctl probe nvml -o json the inventory stage runs instead of nvidia-smi")
	f.StringVar(&o.baselines, "baselines", "", "NCCL baselines file replacing the shipped ones")
	f.StringVar(&o.ncclMaxBytes, "nccl-max-bytes", "8G", "largest all_reduce_perf message size (nccl-tests -e)")
	f.StringVar(&o.ncclMulti, "nccl-multi", accept.MultiPairs, "with --stages nccl-multi: pairs (a ring of node pairs, names the slow node) or all (one all_reduce across the selection)")
	f.DurationVar(&o.stageTimeout, "stage-timeout", accept.DefaultStageTimeout, "time limit of each stage")
	f.DurationVar(&o.timeout, "timeout", accept.DefaultRunTimeout, "time limit of each node's run")
	f.DurationVar(&o.ttl, "ttl", time.Hour, "ttlSecondsAfterFinished of the Jobs (a safety net; gpuctl deletes them)")
	f.BoolVar(&o.cont, "continue", false, "run the remaining stages after a FAIL")
	f.BoolVar(&o.force, "force", false, "probe even if other pods hold GPUs on the node")
	f.BoolVar(&o.privileged, "allow-privileged", false, "allow privileged probes (dmesg XID scan, dcgm SYS_ADMIN, the diagnostics stage's dmesg)")
	f.BoolVar(&o.noDiag, "no-diagnostics", false, "no diagnostics capture (bug report, dmesg, nv-hostengine log) after a node FAILs")
}

// addRecordFlags: where evidence and records go, the history they are
// compared with, the signing key, and progress on stderr.
func (o *acceptOptions) addRecordFlags(f *pflag.FlagSet) {
	f.StringVar(&o.evidenceDir, "evidence-dir", "gpuctl-evidence", "directory for raw outputs, under NODE/RUN-ID/")
	f.StringVar(&o.evidenceURI, "evidence-uri", "", "write each node's evidence as one tar.gz (named in the record with its sha256) and record URI (s3://..., gs://...) as where you store it; gpuctl uploads nothing")
	f.StringVar(&o.history, "history", "", "directory of earlier records (NODE/RUN-ID/record.dsse.json): link the node's previous record and list regressions (default --evidence-dir; with --offline only when given)")
	f.StringVar(&o.record, "record", "", "record file (default record.dsse.json in the node's evidence directory; one node only)")
	f.StringVar(&o.key, "key", "", "private key (PEM, Ed25519 or ECDSA P-256) that signs the record")
	f.StringVar(&o.fleetFile, "fleet-summary", "", "file for the fleet summary JSON of a run over several nodes (default fleet-RUN-ID.json in --evidence-dir)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines on stderr")
}

// addDryRunFlags: --dry-run and the machine it plans for without a
// cluster.
func (o *acceptOptions) addDryRunFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.dryRun, "dry-run", false, "print the Jobs and RBAC instead of running (with -o yaml)")
	f.IntVar(&o.gpus, "gpus", 0, "--dry-run without a cluster: GPUs of the machine to plan for (else the spec pool's)")
	f.StringVar(&o.product, "product", "", "--dry-run without a cluster: GPU product of the machine (GPU Feature Discovery name)")
	f.StringVar(&o.driverCUDA, "driver-cuda", "", "--dry-run without a cluster: CUDA version the driver supports (picks the images; default the oldest)")
	f.StringArrayVar(&o.bind, "bind", nil, "--dry-run: also print bindings of the RBAC to user:NAME, group:NAME or serviceaccount:NAMESPACE:NAME (repeatable)")
}

// addMarkFlags: --mark and what it does to a node that FAILs.
func (o *acceptOptions) addMarkFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.mark, "mark", false, "mark each node: label gpuctl.dev/accept=pass|fail|inconclusive, the record's digest in an annotation, an Event in namespace default (needs nodes patch, events create in default)")
	f.BoolVar(&o.taintOnFail, "taint-on-fail", false, "with --mark: taint a FAILed node gpuctl.dev/unaccepted:NoSchedule (a later PASS removes it)")
	f.BoolVar(&o.cordonOnFail, "cordon-on-fail", false, "with --mark: cordon a FAILed node (a later PASS uncordons it, if gpuctl cordoned it)")
	f.StringVar(&o.maxUnhealthy, "max-unhealthy", "", "with --mark: mark no node when more than N (or P%) of the selection are not PASS")
	f.BoolVar(&o.unmark, "unmark", false, "remove from each node what --mark and --sweep put on it (label, annotations, GPUAccepted condition; the taint and cordon only where gpuctl added them), with an Event; runs no stage (--dry-run: what would be removed; --dry-run -o yaml: its RBAC)")
}

// complete resolves the flags: the stage list, image overrides, baselines,
// the spec's expectations and the signing key.
func (o *acceptOptions) complete(cmd *cobra.Command) error {
	o.mark = o.mark || o.sweep
	// The spec first: with --sweep its acceptance block is the default of
	// --stages and the other flags completeStages and validate read.
	if err := o.completeExpectations(cmd.Flags()); err != nil {
		return err
	}
	if err := o.completeStages(); err != nil {
		return err
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
	if o.key != "" {
		return o.loadSigner(cmd.Context())
	}
	return nil
}

// completeStages parses --stages (default accept.DefaultStages) and --dcgm
// into stageList, in order and without repeats.
func (o *acceptOptions) completeStages() error {
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
		if accept.IsFleetStage(st) {
			o.multi = true
			o.fleet = append(o.fleet, st)
		}
	}
	return nil
}

// completeExpectations reads the expectations of --spec's pool (--env,
// --pool) and, with --sweep, the defaults spec.acceptance gives the flags
// not set (sweepSpecDefaults); without --spec expectations come from the
// node.
func (o *acceptOptions) completeExpectations(flags *pflag.FlagSet) error {
	if o.specFile == "" {
		if o.env != "" || o.pool != "" {
			return usageErrorf("--env and --pool need --spec")
		}
		return nil
	}
	doc, err := spec.Load(o.specFile, o.streams.In)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	e, err := accept.SpecExpectations(doc, o.env, o.pool, o.f.Catalogue)
	if err != nil {
		return usageErrorf("%v", err)
	}
	o.expect = &e
	return o.sweepSpecDefaults(flags, doc)
}

// loadSigner reads --key (a private key, not readable by others) and
// checks that it signs.
func (o *acceptOptions) loadSigner(ctx context.Context) error {
	pemBytes, err := safefs.ReadFile(o.key, safefs.Key)
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
	if _, err := sv.Sign(ctx, []byte("probe")); err != nil {
		return usageErrorf("--key %s is not a private key: %v", o.key, err)
	}
	o.signer = sv
	return nil
}

// validate checks the flags against each other, group by group in a fixed
// order (the first broken rule is the one reported), then parses
// --max-unhealthy and --bind and sizes the API client.
func (o *acceptOptions) validate() error {
	if err := o.out.validate(); err != nil {
		return err
	}
	for _, check := range []func() error{o.validateTarget, o.validateDryRun, o.validateRun, o.validateSweep, o.validateMark, o.validateMulti} {
		if err := check(); err != nil {
			return err
		}
	}
	var err error
	if o.maxUnh, err = accept.ParseMaxUnhealthy(o.maxUnhealthy); err != nil {
		return usageErrorf("%v", err)
	}
	return o.completeSubjects()
}

// completeSubjects parses --bind into subjects and sizes the client: the
// end of validate for every mode (accept, --unmark).
func (o *acceptOptions) completeSubjects() error {
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

// validateTarget: what the run judges is named once: nodes or a selector,
// saved evidence (--offline), or a pool's machine (a dry run).
func (o *acceptOptions) validateTarget() error {
	switch {
	case o.offline != "" && (len(o.nodes) > 0 || o.selector != ""):
		return usageErrorf("--offline re-judges one evidence directory: give no nodes or --selector")
	case o.gpus < 0:
		return usageErrorf("--gpus %d: the number of GPUs of a node must be positive", o.gpus)
	case o.offline == "" && len(o.nodes) == 0 && o.selector == "" && !o.poolDryRun():
		return usageErrorf("name at least one node, or use --selector or --offline (or --dry-run with --spec/--pool or --gpus)")
	}
	return nil
}

// cudaMajorMinor is --driver-cuda's form: MAJOR.MINOR.
var cudaMajorMinor = regexp.MustCompile(`^[0-9]{1,3}\.[0-9]{1,3}$`)

// validateDryRun: the flags that only a dry run reads need --dry-run.
func (o *acceptOptions) validateDryRun() error {
	switch {
	case !o.dryRun && (o.gpus != 0 || o.product != "" || o.driverCUDA != "" || len(o.bind) > 0):
		return usageErrorf("--gpus, --product, --driver-cuda and --bind are for --dry-run")
	case o.out.value == "yaml" && !o.dryRun:
		return usageErrorf("-o yaml is for --dry-run; the record is JSON (-o json)")
	case o.dryRun && o.offline != "":
		return usageErrorf("--dry-run and --offline exclude each other")
	case o.driverCUDA != "" && !cudaMajorMinor.MatchString(o.driverCUDA):
		return usageErrorf("--driver-cuda %q: want the CUDA version the driver supports as MAJOR.MINOR, e.g. 12.4 (nvidia-smi's \"CUDA Version\")", o.driverCUDA)
	}
	return nil
}

// validateRun: one --record file for one node, and the run's numbers
// (parallelism, time limits, dcgm level, API rate) in range.
func (o *acceptOptions) validateRun() error {
	switch {
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
	case o.noDiag && slices.Contains(o.stageList, accept.StageDiagnostics):
		return usageErrorf("--no-diagnostics turns off the diagnostics stage that --stages selects: give one of them")
	case o.evidenceURI != "":
		if err := accept.CheckEvidenceURI(o.evidenceURI); err != nil {
			return usageErrorf("%v", err)
		}
	}
	return nil
}

// validateMark: what --mark does to a node needs --mark, and a cluster.
func (o *acceptOptions) validateMark() error {
	switch {
	case !o.mark && (o.taintOnFail || o.cordonOnFail || o.maxUnhealthy != ""):
		return usageErrorf("--taint-on-fail, --cordon-on-fail and --max-unhealthy need --mark")
	case o.mark && o.offline != "":
		return usageErrorf("--mark needs a cluster: it does not work with --offline")
	}
	return nil
}

// validateMulti: nccl-multi runs in a cluster, over several nodes.
func (o *acceptOptions) validateMulti() error {
	switch {
	case o.ncclMulti != accept.MultiPairs && o.ncclMulti != accept.MultiAll:
		return usageErrorf("--nccl-multi must be %s or %s", accept.MultiPairs, accept.MultiAll)
	case o.multi && o.offline != "":
		return usageErrorf("--stages nccl-multi needs a cluster: it does not work with --offline")
	case o.multi && o.record != "":
		return usageErrorf("--stages nccl-multi runs over several nodes: --record names one file")
	}
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
func (o *acceptOptions) multiRun(st accept.Stage, runID string, nodes []*corev1.Node, dirs map[string]string) accept.MultiRun {
	m := accept.MultiRun{Stage: st, RunID: runID, Namespace: o.kube.namespace(), Nodes: nodes, Mode: o.ncclMulti, Image: o.overrides[st],
		StageTimeout: o.stageTimeout, TTL: o.ttl, MaxBytes: o.ncclMaxBytes, EvidenceDirs: dirs}
	if len(nodes) > 0 {
		m.DriverCUDA = accept.DriverCUDAFromLabels(nodes[0])
	}
	if o.expect != nil {
		m.Env, m.Expect = o.expect.NCCLEnv, o.expect
	}
	m.AllowPrivileged = o.privileged
	return m
}

// plan is the run of node that the flags ask for; a real run and --dry-run
// both start from it.
func (o *acceptOptions) plan(node, runID string) accept.Plan {
	return accept.Plan{
		Node: node, RunID: runID, Namespace: o.kube.namespace(), Stages: o.nodeStages(), Images: o.overrides, ProbeImage: o.probeImage, Expect: o.expect, Catalogue: o.f.Catalogue,
		Baselines: o.bl, StageTimeout: o.stageTimeout, RunTimeout: o.timeout, TTL: o.ttl,
		Continue: o.cont, Force: o.force, AllowPrivileged: o.privileged, NoDiagnostics: o.noDiag, DCGMLevel: o.dcgmLevel,
		NCCLMaxBytes: o.ncclMaxBytes, EvidenceDir: accept.EvidenceDir(o.evidenceDir, node, runID), Version: BuildVersion(),
	}
}
