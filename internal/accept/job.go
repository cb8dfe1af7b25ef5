package accept

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Labels and annotations on every object gpuctl creates. The runner selects
// and deletes only objects that carry LabelManagedBy=ManagedBy and its own
// LabelRunID.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "gpuctl"
	LabelRunID     = "gpuctl.dev/run-id"
	LabelStage     = "gpuctl.dev/stage"
	AnnotationNode = "gpuctl.dev/node"
	// AnnotationStages lists, comma-separated in run order, the stages a
	// node Job runs (BuildNodeJob); its LabelStage is the first of them.
	AnnotationStages = "gpuctl.dev/stages"
	// ResourceGPU is the extended resource of NVIDIA's device plugin (whole GPUs).
	ResourceGPU corev1.ResourceName = "nvidia.com/gpu"
)

// JobSpec is everything BuildJob needs for one stage on one node.
type JobSpec struct {
	Stage     Stage
	RunID     string // a DNS-1123 label, e.g. "20261129t154400-a1b2"
	Namespace string
	Node      string
	// GPUs is the number of whole GPUs the node advertises; the Job asks for
	// all of them so that nothing else lands on the node while it runs.
	GPUs int
	// Taints of the node; the pod tolerates each of them.
	Taints []corev1.Taint
	Image  Image
	// ProbeImage, when set, is a gpuctl image (make build-nvml) that the
	// inventory stage runs `gpuctl probe nvml -o json` in, instead of the
	// nvidia-smi containers of Image. The dmesg container keeps Image.
	ProbeImage string
	// AllowPrivileged lets stages that need it use privilege: the kernel-log
	// XID scan in inventory and SYS_ADMIN for dcgm. Without it no container
	// is privileged.
	AllowPrivileged bool
	// Deadline bounds the Job (activeDeadlineSeconds); TTL removes it after it
	// finished (ttlSecondsAfterFinished) should the runner not get to.
	Deadline time.Duration
	TTL      time.Duration
	// DCGMLevel is the dcgmi diag run level (1-4); NCCLMaxBytes the largest
	// all_reduce_perf message size (an nccl-tests size such as "8G").
	DCGMLevel    int
	NCCLMaxBytes string
}

// JobName returns the name of a stage's Job in a run.
func JobName(st Stage, runID string) string { return fmt.Sprintf("gpuctl-%s-%s", st, runID) }

// Labels returns the labels of a run's objects for a stage ("" for none).
func Labels(runID string, st Stage) map[string]string {
	l := map[string]string{LabelManagedBy: ManagedBy, LabelRunID: runID}
	if st != "" {
		l[LabelStage] = string(st)
	}
	return l
}

// RunSelector is the label selector matching every object of a run.
func RunSelector(runID string) string {
	return LabelManagedBy + "=" + ManagedBy + "," + LabelRunID + "=" + runID
}

// BuildJob returns the Job for one stage, with the containers of its entry
// in the stage table; a node-local stage's is its node Job alone
// (BuildNodeJob), its containers one after another. It is pure: the same
// JobSpec gives the same Job. It panics on a stage that runs no per-node
// Job (kubernetes, nccl-multi).
func BuildJob(s JobSpec) *batchv1.Job {
	d, _ := stageOf(s.Stage)
	if d.containers == nil {
		panic(fmt.Sprintf("accept.BuildJob: stage %q runs no Job", s.Stage))
	}
	if d.nodeJob {
		return BuildNodeJob([]JobSpec{s})
	}
	containers, volumes := d.containers(s)
	return baseJob(s, containers, volumes)
}

// baseJob is the Job of s's stage with containers and volumes.
func baseJob(s JobSpec, containers []corev1.Container, volumes []corev1.Volume) *batchv1.Job {
	labels := Labels(s.RunID, s.Stage)

	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        JobName(s.Stage, s.RunID),
			Namespace:   s.Namespace,
			Labels:      labels,
			Annotations: map[string]string{AnnotationNode: s.Node},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr(int32(0)),
			Parallelism:             ptr(int32(1)),
			Completions:             ptr(int32(1)),
			ActiveDeadlineSeconds:   ptr(int64(s.Deadline / time.Second)),
			TTLSecondsAfterFinished: ptr(int32(s.TTL / time.Second)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{AnnotationNode: s.Node}},
				Spec: corev1.PodSpec{
					NodeName:                      s.Node,
					RestartPolicy:                 corev1.RestartPolicyNever,
					Tolerations:                   Tolerations(s.Taints),
					AutomountServiceAccountToken:  ptr(false),
					EnableServiceLinks:            ptr(false),
					TerminationGracePeriodSeconds: ptr(int64(5)),
					SecurityContext: &corev1.PodSecurityContext{
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: containers,
					Volumes:    volumes,
				},
			},
		},
	}
	return job
}

// BuildNodeJob returns the node Job of the node-local stages of specs (in
// run order, one node, one run): each stage's containers, in order, run
// one after another in one pod (the last container as the pod's
// container, every other one as an init container), so that a node's
// stages cost the Job controller one Job instead of one each. Its name and
// LabelStage are the first stage's (JobName); AnnotationStages lists them
// all; its activeDeadlineSeconds is the sum of the stages' deadlines (the
// runner holds each stage to its own). A container whose name an earlier
// stage's container took is named "STAGE-NAME" (PodContainers maps the
// names back). Volumes of the same name are the same volume (dshm). It is
// pure, and panics when specs is empty or holds a stage that runs no
// per-node Job.
func BuildNodeJob(specs []JobSpec) *batchv1.Job {
	if len(specs) == 0 {
		panic("accept.BuildNodeJob: no stages")
	}
	names := PodContainers(specs)
	var containers []corev1.Container
	var volumes []corev1.Volume
	var deadline time.Duration
	stages := make([]string, 0, len(specs))
	for _, s := range specs {
		d, _ := stageOf(s.Stage)
		cs, vs := d.containers(s)
		for _, c := range cs {
			c.Name = names[len(containers)].Name
			containers = append(containers, c)
		}
		volumes = mergeVolumes(volumes, vs)
		deadline += s.Deadline
		stages = append(stages, string(s.Stage))
	}
	first := specs[0]
	first.Deadline = deadline
	job := baseJob(first, containers[len(containers)-1:], volumes)
	if len(containers) > 1 {
		job.Spec.Template.Spec.InitContainers = containers[:len(containers)-1]
	}
	job.Annotations[AnnotationStages] = strings.Join(stages, ",")
	job.Spec.Template.Annotations[AnnotationStages] = job.Annotations[AnnotationStages]
	return job
}

// PodContainer is one container of a node Job's pod: its name in the pod,
// the stage it belongs to and its name within the stage (the evidence file
// STAGE.CONTAINER.log and the parser's kind follow that one).
type PodContainer struct {
	Name  string
	Stage Stage
	Local string
}

// PodContainers lists the containers of the node Job of specs in run
// order (see BuildNodeJob for their names).
func PodContainers(specs []JobSpec) []PodContainer {
	var out []PodContainer
	taken := map[string]bool{}
	for _, s := range specs {
		d, _ := stageOf(s.Stage)
		if d.containers == nil {
			panic(fmt.Sprintf("accept.BuildNodeJob: stage %q runs no Job", s.Stage))
		}
		cs, _ := d.containers(s)
		for _, c := range cs {
			name := c.Name
			if taken[name] {
				name = string(s.Stage) + "-" + c.Name
			}
			taken[name] = true
			out = append(out, PodContainer{Name: name, Stage: s.Stage, Local: c.Name})
		}
	}
	return out
}

// mergeVolumes appends those of add whose name vs does not hold yet.
func mergeVolumes(vs, add []corev1.Volume) []corev1.Volume {
	for _, v := range add {
		if !slices.ContainsFunc(vs, func(o corev1.Volume) bool { return o.Name == v.Name }) {
			vs = append(vs, v)
		}
	}
	return vs
}

// nonRootUID is the user the unprivileged probe containers run as (nobody).
const nonRootUID = 65534

// runAs is who a probe container runs as.
type runAs int

const (
	// asNobody: unprivileged, as nobody. nvidia-smi, the CUDA samples and
	// nccl-tests need no root: the GPU device nodes are world-accessible
	// (mode 0666) and /dev/shm is an emptyDir. Running as nobody keeps the
	// probes within the "restricted" Pod Security Standard.
	// Source: https://kubernetes.io/docs/concepts/security/pod-security-standards/
	asNobody runAs = iota
	// asImageUser: unprivileged, as the image's user (root for dcgm's
	// nv-hostengine); within "baseline".
	asImageUser
	// asPrivileged: privileged, with every capability (the kernel log).
	asPrivileged
)

func container(name, image string, cmd []string, env []corev1.EnvVar, res corev1.ResourceRequirements, as runAs) corev1.Container {
	privileged := as == asPrivileged
	sc := &corev1.SecurityContext{
		Privileged:               ptr(privileged),
		AllowPrivilegeEscalation: ptr(privileged),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	switch as {
	case asPrivileged:
		sc.Capabilities = &corev1.Capabilities{}
	case asNobody:
		sc.RunAsNonRoot = ptr(true)
		sc.RunAsUser = ptr(int64(nonRootUID))
		sc.RunAsGroup = ptr(int64(nonRootUID))
	}
	return corev1.Container{
		Name:                     name,
		Image:                    image,
		ImagePullPolicy:          corev1.PullIfNotPresent,
		Command:                  cmd,
		Env:                      env,
		Resources:                res,
		SecurityContext:          sc,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// Tolerations returns one toleration per taint that matches exactly that
// taint (key, value and effect), so the probe pods run on the node without
// tolerating anything else.
func Tolerations(taints []corev1.Taint) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range taints {
		tol := corev1.Toleration{Key: t.Key, Effect: t.Effect, Operator: corev1.TolerationOpEqual, Value: t.Value}
		if t.Value == "" {
			tol.Operator, tol.Value = corev1.TolerationOpExists, ""
		}
		out = append(out, tol)
	}
	return out
}

// BuildRBAC returns the least privilege accept needs: a Role in the probe
// namespace (create, watch and delete Jobs; watch, delete and read the logs of
// their pods) and a ClusterRole (get nodes, list them for --selector and
// watch them to notice a node deleted mid-run, list
// the pods on a node for the kubernetes stage, get the namespace; creating
// it is RBACFeatures.CreateNamespace's).
// Bind them to the identity that runs gpuctl.
func BuildRBAC(namespace string) (*rbacv1.Role, *rbacv1.ClusterRole) {
	return BuildRBACFor(namespace, RBACFeatures{})
}

// RBACFeatures are the opt-in features whose permissions BuildRBACFor adds.
type RBACFeatures struct {
	// Mark (--mark): patch nodes, create events.
	Mark bool
	// Multi (--stages nccl-multi): create and delete the headless Service
	// of each group, in the probe namespace.
	Multi bool
	// Sweep (--sweep, the in-cluster sweep): everything Mark needs, and
	// patch nodes/status (the GPUAccepted condition). The cluster-wide
	// pods list that finds the GPUs' holders is in every ClusterRole
	// already.
	Sweep bool
	// RecordsConfigMap (--records-configmap): get, create and update
	// ConfigMaps in the probe namespace (each node's newest record).
	RecordsConfigMap bool
	// Unmark (--unmark): what removing gpuctl's marks needs
	// (UnmarkPermissions): patch nodes and nodes/status, create events.
	Unmark bool
	// CreateNamespace (--create-namespace): create the probe namespace.
	CreateNamespace bool
}

// marks reports whether f patches nodes and creates their Events.
func (f RBACFeatures) marks() bool { return f.Mark || f.Sweep || f.Unmark }

// BuildRBACFor is BuildRBAC with the permissions of the opt-in features f,
// and no more.
func BuildRBACFor(namespace string, f RBACFeatures) (*rbacv1.Role, *rbacv1.ClusterRole) {
	meta := func(name, ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{LabelManagedBy: ManagedBy}}
	}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: meta("gpuctl-accept", namespace),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create", "get", "list", "watch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		},
	}
	cr := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: meta("gpuctl-accept", ""),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
		},
	}
	if f.CreateNamespace {
		cr.Rules[2].Verbs = append(cr.Rules[2].Verbs, "create")
	}
	if f.Multi {
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create", "delete"}})
	}
	if f.RecordsConfigMap {
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "update"}})
	}
	if f.marks() {
		cr.Rules = append(cr.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"patch"}})
		if namespace == EventNamespace {
			role.Rules = append(role.Rules, markEventRule)
		}
	}
	if f.Sweep || f.Unmark {
		cr.Rules = append(cr.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch"}})
	}
	return role, cr
}

// markEventRule lets --mark create the Event on a node. A node's Events go
// in namespace EventNamespace: the API server takes an Event of a
// cluster-scoped object only in "default" or "kube-system"
// (legacyValidateEvent, https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/core/validation/events.go,
// as of 2026-12-02), so the permission is a Role rule there, not the
// ClusterRole's.
var markEventRule = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}}

// MarkEventRoleName is the Role of --mark's Events in EventNamespace.
const MarkEventRoleName = "gpuctl-accept-mark-events"

// BuildMarkEventRole returns the Role that lets --mark create Events in
// EventNamespace (events create, nothing else), or nil when f has none of
// --mark, --sweep and --unmark or namespace is EventNamespace (BuildRBACFor's Role has the rule then).
func BuildMarkEventRole(namespace string, f RBACFeatures) *rbacv1.Role {
	if !f.marks() || namespace == EventNamespace {
		return nil
	}
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: MarkEventRoleName, Namespace: EventNamespace, Labels: map[string]string{LabelManagedBy: ManagedBy}},
		Rules:      []rbacv1.PolicyRule{markEventRule},
	}
}

func ptr[T any](v T) *T { return &v }

// MarshalYAML renders a built object as YAML without the empty status and
// creationTimestamp fields the API types carry, as `--dry-run -o yaml`
// prints it.
func MarshalYAML(obj any) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	prune(m)
	return yaml.Marshal(m)
}

// prune drops null creationTimestamp fields and empty maps left by them.
func prune(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			if k == "creationTimestamp" {
				delete(m, k)
			}
		case map[string]any:
			prune(x)
			if len(x) == 0 && (k == "metadata" || k == "resources") {
				delete(m, k)
			}
		case []any:
			for _, e := range x {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
		}
	}
}
