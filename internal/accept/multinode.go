package accept

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// The nccl-multi stage runs all_reduce across the nodes of a group without
// an SSH launcher (nccl-tests needs MPI to start more than one process, and
// MPI's launcher needs SSH or a cluster agent): an Indexed Job with one pod
// per node (completions = parallelism = the group's nodes, pinned to them by
// node affinity and kept one per node by pod anti-affinity), and a headless
// Service that gives each pod the DNS name JOB-INDEX.SERVICE. Every pod runs
// torchrun with a static rendezvous at the index-0 pod (MASTER_ADDR), node
// rank JOB_COMPLETION_INDEX and one process per GPU; the processes run
// data/allreduce.py, torch.distributed's NCCL all_reduce, which prints
// nccl-tests' all_reduce_perf table, so the nccl-tests parser reads it. Every
// pod prints the whole table, with the slowest rank's times.

//go:embed data/allreduce.py
var allReduceScript string

// ContainerNCCLMulti is the container of each rank pod of nccl-multi.
const ContainerNCCLMulti = "all-reduce-multi"

// MultiRendezvousPort is torchrun's rendezvous port on the index-0 pod.
const MultiRendezvousPort = 29500

// AnnotationCompletionIndex is the Job controller's annotation of an
// Indexed Job's pod with its completion index.
const AnnotationCompletionIndex = "batch.kubernetes.io/job-completion-index"

// MultiSpec is everything BuildMultiNode needs for one group of nodes.
type MultiSpec struct {
	// Stage is the fleet stage the group runs: StageNCCLMulti (the zero
	// value) or StageFrameworkMulti.
	Stage Stage
	// RunID names the group's objects (a DNS-1123 label); every object
	// carries it as LabelRunID.
	RunID     string
	Namespace string
	// Nodes are the group's nodes, one rank pod each.
	Nodes []string
	// GPUsPerNode is the GPUs each pod asks for (all of the node's).
	GPUsPerNode int
	// Taints of the nodes; each pod tolerates each of them exactly.
	Taints []corev1.Taint
	Image  Image
	// Env are the NCCL transport's variables of the nodes' pool
	// (matrix.PoolTransport), set in every rank.
	Env map[string]string
	// Deadline bounds the Job (activeDeadlineSeconds), TTL removes it.
	Deadline, TTL time.Duration
	// MaxBytes is the largest all_reduce message ("8G"); MinBytes the
	// smallest ("1G").
	MinBytes, MaxBytes string
	// Fabric is the nodes' GPU fabric (fabric.Build): its resources,
	// variables, volumes, annotations and sidecars go into every rank pod;
	// the zero Pod for machines without one.
	Fabric fabric.Pod
}

// ncclDebugEnv makes NCCL print the network it uses ("NCCL INFO Using
// network NAME"), which the judge checks against the fabric, without the
// per-channel lines of the other subsystems. A pool's nccl.env that sets
// them wins. Source: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-debug-subsys
var ncclDebugEnv = map[string]string{"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"}

// MultiName is the name of an nccl-multi group's Job and headless Service.
func MultiName(runID string) string { return multiName(StageNCCLMulti, runID) }

// multiName is the name of a fleet stage's group's Job and Service.
func multiName(st Stage, runID string) string { return "gpuctl-" + string(st) + "-" + runID }

// stage is the group's fleet stage (nccl-multi when unset).
func (s MultiSpec) stage() Stage {
	if s.Stage == "" {
		return StageNCCLMulti
	}
	return s.Stage
}

// multiWorkload is what a fleet stage's rank pods run: the container's
// name, its command (given the group) and its own variables.
type multiWorkload struct {
	container string
	command   func(s MultiSpec) string
	env       []corev1.EnvVar
}

// multiWorkloads are the fleet stages' workloads.
var multiWorkloads = map[Stage]multiWorkload{
	StageNCCLMulti: {container: ContainerNCCLMulti, command: func(s MultiSpec) string {
		minB, maxB := s.MinBytes, s.MaxBytes
		if minB == "" {
			minB = "1G"
		}
		if maxB == "" {
			maxB = "8G"
		}
		return MultiNodeCommand(minB, maxB)
	}},
	StageFrameworkMulti: {container: ContainerFrameworkMulti, command: func(MultiSpec) string { return FrameworkMultiCommand() },
		env: []corev1.EnvVar{{Name: "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", Value: "0"}, {Name: "PYTHONUNBUFFERED", Value: "1"}}},
}

// multiContainer is the rank container of fleet stage st.
func multiContainer(st Stage) string { return multiWorkloads[st].container }

// BuildMultiNode returns the Indexed Job and the headless Service of one
// nccl-multi group. It is pure.
func BuildMultiNode(s MultiSpec) (*batchv1.Job, *corev1.Service) {
	st := s.stage()
	wl := multiWorkloads[st]
	name := multiName(st, s.RunID)
	labels := Labels(s.RunID, st)
	ranks := int32(len(s.Nodes))
	master := fmt.Sprintf("%s-0.%s", name, name)
	env := []corev1.EnvVar{
		{Name: "GPUCTL_NNODES", Value: strconv.Itoa(len(s.Nodes))},
		{Name: "GPUCTL_GPUS_PER_NODE", Value: strconv.Itoa(s.GPUsPerNode)},
		// JOB_COMPLETION_INDEX is set by the Job controller as well; the
		// annotation is the same index, readable by the downward API.
		{Name: "GPUCTL_NODE_RANK", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + AnnotationCompletionIndex + "']"}}},
		{Name: "GPUCTL_NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "MASTER_ADDR", Value: master},
		{Name: "MASTER_PORT", Value: strconv.Itoa(MultiRendezvousPort)},
		{Name: "HOME", Value: "/tmp"},
	}
	env = append(env, wl.env...)
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, corev1.EnvVar{Name: k, Value: s.Env[k]})
	}
	for _, k := range []string{"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS"} {
		if _, set := s.Env[k]; !set {
			env = append(env, corev1.EnvVar{Name: k, Value: ncclDebugEnv[k]})
		}
	}
	script := s.Fabric.Prelude
	if script != "" {
		script += "\n"
	}
	script += wl.command(s)
	q := resource.MustParse(strconv.Itoa(s.GPUsPerNode))
	c := container(wl.container, s.Image.Ref, []string{"sh", "-c", script}, env, corev1.ResourceRequirements{Limits: corev1.ResourceList{ResourceGPU: q}}, asNobody)
	c.Ports = []corev1.ContainerPort{{Name: "rendezvous", ContainerPort: MultiRendezvousPort, Protocol: corev1.ProtocolTCP}}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "dshm", MountPath: "/dev/shm"}}
	nodes := append([]string(nil), s.Nodes...)
	var terms []corev1.NodeSelectorTerm
	for _, n := range nodes {
		terms = append(terms, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{n}}}})
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: labels, Annotations: map[string]string{AnnotationNode: strings.Join(nodes, ",")}},
		Spec: batchv1.JobSpec{
			CompletionMode:          ptr(batchv1.IndexedCompletion),
			Completions:             ptr(ranks),
			Parallelism:             ptr(ranks),
			BackoffLimit:            ptr(int32(0)),
			ActiveDeadlineSeconds:   ptr(int64(s.Deadline / time.Second)),
			TTLSecondsAfterFinished: ptr(int32(s.TTL / time.Second)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					// Indexed Job pods are named NAME-INDEX as hosts; with the
					// Service as subdomain each resolves as NAME-INDEX.NAME.
					Subdomain:                     name,
					RestartPolicy:                 corev1.RestartPolicyNever,
					Tolerations:                   Tolerations(s.Taints),
					AutomountServiceAccountToken:  ptr(false),
					EnableServiceLinks:            ptr(false),
					TerminationGracePeriodSeconds: ptr(int64(5)),
					SecurityContext:               &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Affinity: &corev1.Affinity{
						// Only the group's nodes (matchFields: the node name exactly;
						// one value per term, the terms ORed) ...
						NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}},
						// ... and one rank per node.
						PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
							LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: "kubernetes.io/hostname"}}},
					},
					Containers: []corev1.Container{c},
					Volumes:    []corev1.Volume{{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}},
				},
			},
		},
	}
	tpl := &job.Spec.Template
	tpl.Annotations = s.Fabric.Apply(&tpl.Spec, &tpl.Spec.Containers[0], tpl.Annotations)
	prependLibraryPath(&tpl.Spec.Containers[0])
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: labels},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  labels,
			// The rank pods look the index-0 pod up before it is Ready.
			PublishNotReadyAddresses: true,
			Ports:                    []corev1.ServicePort{{Name: "rendezvous", Port: MultiRendezvousPort, TargetPort: intstr.FromInt32(MultiRendezvousPort), Protocol: corev1.ProtocolTCP}},
		},
	}
	return job, svc
}

// prependLibraryPath turns an LD_LIBRARY_PATH variable of the rank
// container (the transport's /usr/local/nvidia/lib64, a pool's nccl.env) into
// an export ahead of its command that puts it before the image's own value:
// as a variable it would replace the path the image sets for its torch and
// CUDA libraries.
func prependLibraryPath(c *corev1.Container) {
	for i, e := range c.Env {
		if e.Name != "LD_LIBRARY_PATH" || e.ValueFrom != nil || len(c.Command) != 3 {
			continue
		}
		c.Env = append(c.Env[:i:i], c.Env[i+1:]...)
		c.Command[2] = `export LD_LIBRARY_PATH="` + strings.ReplaceAll(e.Value, `"`, "") + `:${LD_LIBRARY_PATH:-}"` + "\n" + c.Command[2]
		return
	}
}

// MultiNodeCommand is the shell command of each rank pod: write the
// benchmark, wait until the index-0 pod's name resolves, and start torchrun
// with a static rendezvous there (node rank = the completion index).
func MultiNodeCommand(minBytes, maxBytes string) string {
	return "cat > /tmp/gpuctl-allreduce.py <<'GPUCTL_EOF'\n" + allReduceScript + "GPUCTL_EOF\n" +
		`i=0; until getent hosts "$MASTER_ADDR" >/dev/null 2>&1; do i=$((i+1)); [ $i -gt 300 ] && { echo "rendezvous: $MASTER_ADDR does not resolve" >&2; exit 1; }; sleep 1; done` + "\n" +
		`exec torchrun --nnodes="$GPUCTL_NNODES" --nproc-per-node="$GPUCTL_GPUS_PER_NODE" --node-rank="${JOB_COMPLETION_INDEX:-$GPUCTL_NODE_RANK}" ` +
		`--master-addr="$MASTER_ADDR" --master-port="$MASTER_PORT" /tmp/gpuctl-allreduce.py ` + minBytes + " " + maxBytes + " 20\n"
}

// Multi-node group modes: ring pairs (each node with its two neighbours, to
// tell the slow node) or one group of the whole selection.
const (
	MultiPairs = "pairs"
	MultiAll   = "all"
)

// MultiGroups splits nodes into the groups of a mode, in rounds: the groups
// of a round share no node (each rank pod takes all of its node's GPUs), so
// a round runs at once. pairs: the ring n0-n1, n1-n2, ..., n(N-1)-n0, so
// every node is in two pairs and a slow node is the one common to two
// failing pairs; 2 nodes make one pair, fewer than 2 no group.
func MultiGroups(nodes []string, mode string) [][][]string {
	if len(nodes) < 2 {
		return nil
	}
	if mode == MultiAll {
		return [][][]string{{append([]string(nil), nodes...)}}
	}
	var pairs [][]string
	if len(nodes) == 2 {
		pairs = [][]string{{nodes[0], nodes[1]}}
	} else {
		for i := range nodes {
			pairs = append(pairs, []string{nodes[i], nodes[(i+1)%len(nodes)]})
		}
	}
	// Greedy rounds: a pair goes into the first round where neither node is
	// busy (2 rounds for an even ring, 3 for an odd one).
	var rounds [][][]string
	var busy []map[string]bool
	for _, p := range pairs {
		placed := false
		for r := range rounds {
			if !busy[r][p[0]] && !busy[r][p[1]] {
				rounds[r] = append(rounds[r], p)
				busy[r][p[0]], busy[r][p[1]] = true, true
				placed = true
				break
			}
		}
		if !placed {
			rounds = append(rounds, [][]string{p})
			busy = append(busy, map[string]bool{p[0]: true, p[1]: true})
		}
	}
	return rounds
}

// MultiGroupResult is one group's outcome.
type MultiGroupResult struct {
	Group   string       `json:"group"`
	Nodes   []string     `json:"nodes"`
	Verdict diag.Verdict `json:"verdict"`
	Reason  string       `json:"reason"`
	Cause   string       `json:"cause,omitempty"`
	// BusBandwidthGBps is the busbw at LargestBytes (0 when none parsed).
	BusBandwidthGBps float64 `json:"busBandwidthGBps,omitempty"`
	LargestBytes     int64   `json:"largestBytes,omitempty"`
	// Transport is the NCCL network the ranks used ("AWS Libfabric",
	// "FasTrak", "gIB", "Socket"), from NCCL's "Using network" lines; ""
	// when the output does not say.
	Transport string `json:"transport,omitempty"`
	// Ranks are the rank pods: completion index, node, pod.
	Ranks []MultiRank `json:"ranks"`
}

// MultiRank is one rank pod of a group.
type MultiRank struct {
	Index int    `json:"index"`
	Node  string `json:"node"`
	Pod   string `json:"pod"`
	// Log is the rank's output (not in the JSON: it is saved as evidence).
	Log      []byte `json:"-"`
	ExitCode *int32 `json:"exitCode,omitempty"`
}

// MultiBaselineFor returns the multi-node baseline of a machine type's
// fabric (matrix.MultiNodeBaseline); false when it has none.
func MultiBaselineFor(machine string) (matrix.NCCLMultiNodeBaseline, bool) {
	return matrix.MultiNodeBaseline(machine)
}

// JudgeMultiGroup judges one group from its ranks' outputs: every rank
// printed a table (the rendezvous worked), the table lists every rank
// (nodes x gpus) on as many hosts as the group has nodes, no wrong values,
// and the busbw at the largest size is at least the fabric's minimum. bl is
// nil for a machine without a fabric baseline.
func JudgeMultiGroup(g MultiGroupResult, gpus int, p Parser, bl *matrix.NCCLMultiNodeBaseline, machine string) MultiGroupResult {
	return JudgeMultiGroupOn(g, gpus, p, bl, machine, fabric.Pod{})
}

// JudgeMultiGroupOn is JudgeMultiGroup for rank pods built for the GPU
// fabric pod: before the bandwidth is judged, every rank's output must name
// the fabric's NCCL network (transportProblem); a rank that used another
// (TCP sockets when the plugin did not load) makes the group INCONCLUSIVE
// with what is missing, cause cluster.
func JudgeMultiGroupOn(g MultiGroupResult, gpus int, p Parser, bl *matrix.NCCLMultiNodeBaseline, machine string, pod fabric.Pod) MultiGroupResult {
	set := func(v diag.Verdict, cause, format string, args ...any) MultiGroupResult {
		g.Verdict, g.Cause, g.Reason = v, cause, fmt.Sprintf(format, args...)
		return g
	}
	if len(g.Ranks) != len(g.Nodes) {
		return set(diag.Inconclusive, CauseHarness, "%d of %d rank pods ran", len(g.Ranks), len(g.Nodes))
	}
	var first *NCCLSummary
	for _, r := range g.Ranks {
		f, rep, v := judgeRank(g, r, gpus, p)
		if v != nil {
			return set(v.verdict, v.cause, "%s", v.reason)
		}
		if v := rankTransport(&g, r, rep, pod); v != nil {
			return set(v.verdict, v.cause, "%s", v.reason)
		}
		if first == nil {
			first = f
		}
	}
	g.BusBandwidthGBps, g.LargestBytes = first.BusBandwidthGBps, first.LargestBytes
	switch {
	case bl == nil:
		return set(diag.Inconclusive, CauseHarness, "busbw %.1f GB/s at %s across %d nodes not judged: no multi-node baseline for %s", first.BusBandwidthGBps, humanBytes(first.LargestBytes), len(g.Nodes), dashIfEmpty(machine))
	case bl.NoFigure != "":
		return set(diag.Inconclusive, CauseHarness, "busbw %.1f GB/s at %s across %d nodes not judged: no baseline for fabric %s: %s", first.BusBandwidthGBps, humanBytes(first.LargestBytes), len(g.Nodes), bl.Fabric, bl.NoFigure)
	case first.LargestBytes < bl.MinBytes:
		return set(diag.Inconclusive, CauseHarness, "largest message %s is below %s: bandwidth not judged against the %s baseline", humanBytes(first.LargestBytes), humanBytes(bl.MinBytes), bl.Fabric)
	case first.BusBandwidthGBps < bl.MinBusBandwidthGBps:
		return set(diag.Fail, CauseNode, "busbw %.1f GB/s at %s across %s is below the %s multi-node minimum %.0f GB/s (expected %s; %s)",
			first.BusBandwidthGBps, humanBytes(first.LargestBytes), strings.Join(g.Nodes, ", "), bl.Fabric, bl.MinBusBandwidthGBps, bl.ExpectedText(), strings.Join(bl.Sources, ", "))
	}
	return set(diag.Pass, CauseNode, "busbw %.1f GB/s at %s across %s meets the %s multi-node minimum %.0f GB/s; 0 wrong",
		first.BusBandwidthGBps, humanBytes(first.LargestBytes), strings.Join(g.Nodes, ", "), bl.Fabric, bl.MinBusBandwidthGBps)
}

// rankTransport notes the NCCL network rank r's output rep names in g
// (the first rank's) and returns the group's INCONCLUSIVE verdict, cause
// cluster, when it is not the fabric's (transportProblem).
func rankTransport(g *MultiGroupResult, r MultiRank, rep *probe.NCCLReport, pod fabric.Pod) *groupVerdict {
	if len(rep.Networks) > 0 && g.Transport == "" {
		g.Transport = strings.Join(rep.Networks, ",")
	}
	if prob := transportProblem(pod, rep.Networks, rep.OFIProviders); prob != "" {
		return &groupVerdict{verdict: diag.Inconclusive, cause: CauseCluster, reason: fmt.Sprintf("rank %d on node %s: %s", r.Index, r.Node, prob)}
	}
	return nil
}

// groupVerdict is a group's verdict, its cause and reason.
type groupVerdict struct {
	verdict       diag.Verdict
	cause, reason string
}

// judgeRank parses one rank's output of group g: it exited 0, printed an
// all_reduce table (the rendezvous worked) over every rank (nodes x gpus)
// on as many hosts as the group has nodes, with no wrong values. It returns
// the parsed facts, or the group's verdict when the rank decides it.
func judgeRank(g MultiGroupResult, r MultiRank, gpus int, p Parser) (*NCCLSummary, *probe.NCCLReport, *groupVerdict) {
	set := func(v diag.Verdict, cause, format string, args ...any) (*NCCLSummary, *probe.NCCLReport, *groupVerdict) {
		return nil, nil, &groupVerdict{verdict: v, cause: cause, reason: fmt.Sprintf(format, args...)}
	}
	if r.ExitCode != nil && *r.ExitCode != 0 {
		return set(diag.Fail, CauseNode, "rank %d on node %s exited %d: %s", r.Index, r.Node, *r.ExitCode, lastLine(r.Log))
	}
	o, err := p.Parse(kindOf(StageNCCLMulti, ContainerNCCLMulti), r.Log)
	if err != nil || o == nil || o.NCCL == nil || len(o.NCCL.Rows) == 0 {
		return set(diag.Inconclusive, CauseHarness, "rank %d on node %s printed no all_reduce results (rendezvous not reached?): %s", r.Index, r.Node, lastLine(r.Log))
	}
	f, want, hosts := ncclSummary(o.NCCL), len(g.Nodes)*gpus, ncclHosts(o.NCCL)
	switch {
	case o.NCCL.Ranks != want:
		return set(diag.Inconclusive, CauseHarness, "rank %d on node %s: the all_reduce ran on %d ranks, the group has %d (%d nodes x %d GPUs)", r.Index, r.Node, o.NCCL.Ranks, want, len(g.Nodes), gpus)
	case hosts != len(g.Nodes):
		return set(diag.Inconclusive, CauseHarness, "rank %d on node %s: the ranks ran on %d hosts, the group has %d nodes", r.Index, r.Node, hosts, len(g.Nodes))
	case f.Wrong > 0:
		return set(diag.Fail, CauseNode, "all_reduce across %s returned wrong values in %d results", strings.Join(g.Nodes, ", "), f.Wrong)
	}
	return f, o.NCCL, nil
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "an unknown machine type"
	}
	return s
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if l == "" {
		return "(no output)"
	}
	return truncateString(l, 200)
}

func truncateString(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// BlameMulti turns the groups' results into each node's nccl-multi stage
// result. A node whose groups all passed PASSes. With pairs, a node all of
// whose pairs failed while some of its partners passed with another node is
// the slow one: it FAILs, and the failed pair does not count against its
// partner (that partner PASSes when its other pairs passed). When every pair
// failed, or a node's only pair failed (two nodes), no single node can be
// named: its nodes FAIL with that said. An INCONCLUSIVE group makes its
// nodes INCONCLUSIVE unless a blamed partner explains it.
func BlameMulti(nodes []string, groups []MultiGroupResult, mode string) map[string]StageResult {
	return blameMulti(StageNCCLMulti, nodes, groups, mode)
}

// blameMulti is BlameMulti for fleet stage st.
func blameMulti(st Stage, nodes []string, groups []MultiGroupResult, mode string) map[string]StageResult {
	b := multiBlame{stage: st, groups: groups, of: map[string][]int{}, mode: mode}
	for i, g := range groups {
		for _, n := range g.Nodes {
			b.of[n] = append(b.of[n], i)
		}
		b.anyPass = b.anyPass || g.Verdict == diag.Pass
	}
	b.slow = b.slowNodes(nodes)
	out := map[string]StageResult{}
	for _, n := range nodes {
		out[n] = withMultiFacts(b.node(n), n, groups, b.of[n])
	}
	return out
}

// multiBlame is what BlameMulti knows of a run's groups.
type multiBlame struct {
	stage  Stage
	groups []MultiGroupResult
	// of maps each node to the indexes of its groups.
	of   map[string][]int
	mode string
	// anyPass: some group PASSed.
	anyPass bool
	// slow are the slow nodes (slowNodes).
	slow map[string]bool
}

// slowNodes are, in pairs mode, the nodes every group of which FAILed,
// that are in two or more pairs, while some group passed.
func (b *multiBlame) slowNodes(nodes []string) map[string]bool {
	slow := map[string]bool{}
	if b.mode == MultiAll || !b.anyPass {
		return slow
	}
	for _, n := range nodes {
		gs := b.of[n]
		all := len(gs) >= 2
		for _, i := range gs {
			all = all && b.groups[i].Verdict == diag.Fail
		}
		if all {
			slow[n] = true
		}
	}
	return slow
}

// node returns node n's nccl-multi stage result.
func (b *multiBlame) node(n string) StageResult {
	gs := b.of[n]
	if len(gs) == 0 {
		return withCause(result(b.stage, diag.Inconclusive, "the node is in no group (a selection of fewer than 2 nodes)"), CauseHarness)
	}
	if b.slow[n] {
		var peers []string
		for _, i := range gs {
			peers = append(peers, strings.Join(without(b.groups[i].Nodes, n), ","))
		}
		return withCause(result(b.stage, diag.Fail, "the slow node: all of its pairs (with %s) failed while its partners pass with other nodes; %s", strings.Join(peers, ", "), b.groups[gs[0]].Reason), CauseNode)
	}
	fails, incs, passes := b.outcomes(n)
	switch {
	case len(fails) > 0 && (b.mode == MultiAll || len(gs) < 2 || !b.anyPass):
		return withCause(result(b.stage, diag.Fail, "%s (no single node can be named: %s)", fails[0], noBlameWhy(b.mode, len(gs), b.anyPass)), CauseNode)
	case len(fails) > 0:
		return withCause(result(b.stage, diag.Fail, "%s", fails[0]), CauseNode)
	case len(incs) > 0:
		return withCause(result(b.stage, diag.Inconclusive, "%s", incs[0]), groupCause(b.groups, gs))
	}
	return withCause(result(b.stage, diag.Pass, "%s", strings.Join(passes, "; ")), CauseNode)
}

// outcomes sorts the reasons of n's groups (n not slow) into failed,
// inconclusive and passed; a group that failed because of a slow partner
// counts as passed for n.
func (b *multiBlame) outcomes(n string) (fails, incs, passes []string) {
	for _, i := range b.of[n] {
		g := b.groups[i]
		explained := false
		for _, m := range g.Nodes {
			explained = explained || (m != n && b.slow[m])
		}
		switch {
		case g.Verdict == diag.Pass:
			passes = append(passes, g.Reason)
		case explained:
			passes = append(passes, fmt.Sprintf("its pair %s failed because of the slow node %s", strings.Join(g.Nodes, "+"), strings.Join(slowOf(g.Nodes, b.slow), ",")))
		case g.Verdict == diag.Fail:
			fails = append(fails, g.Reason)
		default:
			incs = append(incs, g.Reason)
		}
	}
	return fails, incs, passes
}

func noBlameWhy(mode string, groups int, anyPass bool) string {
	switch {
	case mode == MultiAll:
		return "one group of the whole selection; run with --nccl-multi pairs to find the slow node"
	case groups < 2:
		return "with two nodes either may be the slow one"
	case !anyPass:
		return "every pair failed: the fabric, its configuration or the harness, not one node"
	}
	return ""
}

func groupCause(groups []MultiGroupResult, idx []int) string {
	for _, i := range idx {
		if groups[i].Verdict == diag.Inconclusive && groups[i].Cause != "" {
			return groups[i].Cause
		}
	}
	return CauseHarness
}

func without(list []string, s string) []string {
	var out []string
	for _, v := range list {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}

func slowOf(list []string, slow map[string]bool) []string {
	var out []string
	for _, v := range list {
		if slow[v] {
			out = append(out, v)
		}
	}
	return out
}
