package accept

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/gpuctl/gpuctl/internal/fabric"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A node's plan is worked out by one set of functions, used by both Runner.Run
// and `accept --dry-run`, so that the Jobs a dry run prints are the Jobs a
// real run creates.
//
// What a stage's Job looks like depends on the Plan (namespace, run id,
// images, probe image, timeouts, privilege, dcgm level, nccl size), on the
// node object (name, taints, nvidia.com/gpu capacity) and on the highest CUDA
// version the node's driver supports, which picks the default images. The
// runner plans each stage when it starts, with the driver CUDA version the
// inventory stage saw (nvidia-smi's), or the GPU Feature Discovery label
// (nvidia.com/cuda.runtime-version) before the inventory ran or when it did
// not say. A dry run plans every stage up front from what it knows before
// anything ran: the node object and the GFD label. Both give the same Jobs
// whenever nvidia-smi confirms the label; PlanStage is where both get them.

// ErrNoGPUs is returned by PlanNode for a node that advertises no whole
// GPUs (no nvidia.com/gpu capacity).
var ErrNoGPUs = errors.New("no " + string(ResourceGPU))

// StagePlan is one Job stage of a node's plan.
type StagePlan struct {
	Stage Stage
	// Image is the image chosen for the stage (empty when Problem is that
	// the node has no GPUs).
	Image Image
	// Spec is what the stage's containers are built from; Job is the Job
	// of the stage alone (nil when Problem is set). A node-local stage
	// runs in the node's Job instead (NodePlan.Jobs, BuildNodeJob).
	Spec JobSpec
	Job  *batchv1.Job
	// Problem, when set, is why the stage cannot run a Job and is
	// INCONCLUSIVE: the node advertises no GPUs, or the image needs a newer
	// CUDA than the node's driver supports.
	Problem string
}

// NodePlan is what a run on one node would create: the expectations it
// judges against and, for each selected Job stage in AllStages order, the
// image and the Job.
type NodePlan struct {
	Node      string
	RunID     string
	Namespace string
	// Expectations are the ones the run judges against (Plan.Expect, else
	// derived from the node).
	Expectations Expectations
	// GPUs is the node's nvidia.com/gpu capacity; every Job asks for all.
	GPUs int
	// DriverCUDA is the driver CUDA version the stages were planned with
	// ("" when unknown: then the oldest default images are chosen).
	DriverCUDA string
	Stages     []StagePlan
}

// Jobs returns the Jobs a run of the plan creates when every stage runs,
// in stage order: the node Job of its node-local stages (those whose
// Problem is not set), then the Job of each other stage (diagnostics).
func (np *NodePlan) Jobs() []*batchv1.Job {
	var jobs []*batchv1.Job
	if j := NodeJobOf(np.Stages); j != nil {
		jobs = append(jobs, j)
	}
	for _, sp := range np.Stages {
		if d, _ := stageOf(sp.Stage); sp.Job != nil && !d.nodeJob {
			jobs = append(jobs, sp.Job)
		}
	}
	return jobs
}

// NodeJobOf returns the node Job of the node-local stages of plans that can
// run (BuildNodeJob), or nil when there is none.
func NodeJobOf(plans []StagePlan) *batchv1.Job {
	var specs []JobSpec
	for _, sp := range plans {
		if d, _ := stageOf(sp.Stage); sp.Job != nil && d.nodeJob {
			specs = append(specs, sp.Spec)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	return BuildNodeJob(specs)
}

// PlanNode plans a run of p on node up front, from the node object and the
// driver CUDA version of its GPU Feature Discovery labels. The runner plans
// each stage with PlanStage too (see the comment at the top of this file for
// when the two can differ). A node with no nvidia.com/gpu capacity is an
// error wrapping ErrNoGPUs.
func PlanNode(p Plan, node *corev1.Node) (*NodePlan, error) {
	np := &NodePlan{Node: node.Name, RunID: p.RunID, Namespace: p.Namespace, Expectations: planExpectations(p, node),
		DriverCUDA: DriverCUDAFromLabels(node)}
	np.GPUs, _ = GPUCapacity(node)
	if np.GPUs == 0 {
		return nil, fmt.Errorf("node %s advertises %w", node.Name, ErrNoGPUs)
	}
	want := map[Stage]bool{}
	for _, st := range p.Stages {
		want[st] = true
	}
	for _, st := range AllStages {
		if !want[st] || st == StageKubernetes {
			continue
		}
		sp, err := PlanStage(p, node, st, np.DriverCUDA)
		if err != nil {
			return nil, err
		}
		np.Stages = append(np.Stages, sp)
	}
	return np, nil
}

// PlanStage plans one Job stage of p on node, whose driver supports CUDA up
// to driverCUDA ("" when unknown). Runner.Run calls it when the stage starts
// and PlanNode for a dry run. An error is gpuctl's (a stage without an
// image); a stage that cannot run has Problem set instead.
func PlanStage(p Plan, node *corev1.Node, st Stage, driverCUDA string) (StagePlan, error) {
	sp := StagePlan{Stage: st}
	gpus, _ := GPUCapacity(node)
	if gpus == 0 {
		sp.Problem = fmt.Sprintf("the node advertises no %s", ResourceGPU)
		return sp, nil
	}
	img, err := ChooseImage(st, p.Images[st], driverCUDA)
	if err != nil {
		return StagePlan{}, err
	}
	sp.Image = img
	if err := CheckImageCUDA(img, driverCUDA); err != nil {
		sp.Problem = fmt.Sprintf("harness: %v", err)
		return sp, nil
	}
	sp.Spec = JobSpec{Stage: st, RunID: p.RunID, Namespace: p.Namespace, Node: node.Name, GPUs: gpus,
		Taints: node.Spec.Taints, Image: img, ProbeImage: p.ProbeImage, AllowPrivileged: p.AllowPrivileged,
		Deadline: p.StageTimeout, TTL: p.TTL, DCGMLevel: p.DCGMLevel, NCCLMaxBytes: p.NCCLMaxBytes}
	sp.Job = BuildJob(sp.Spec)
	return sp, nil
}

// planExpectations returns what a run of p on node judges against:
// p.Expect, else the expectations derived from the node. When the spec left
// the GPU count open (a pool of several instance types), the count is the
// node's instance type's in the catalogue, else the node's capacity.
func planExpectations(p Plan, node *corev1.Node) Expectations {
	if p.Expect == nil {
		return NodeExpectations(node, p.Catalogue)
	}
	exp := *p.Expect
	if exp.GPUCount == 0 {
		if it := InstanceType(node); it != "" && p.Catalogue != nil {
			if _, n, ok := p.Catalogue.LookupMachine(it); ok {
				exp.GPUCount, exp.InstanceType = n, it
			}
		}
	}
	if exp.GPUCount == 0 {
		exp.GPUCount, _ = GPUCapacity(node)
	}
	return exp
}

// DryRunObjects returns what `accept --dry-run` prints: the Role and
// ClusterRole accept needs in namespace, then each plan's Jobs.
func DryRunObjects(namespace string, plans []*NodePlan) []any {
	return DryRunObjectsFor(namespace, plans, nil)
}

// DryRunObjectsFor is DryRunObjects with, after the Role and ClusterRole,
// their bindings to each of subjects.
func DryRunObjectsFor(namespace string, plans []*NodePlan, subjects []Subject) []any {
	return DryRunObjectsWith(namespace, plans, subjects, RBACFeatures{})
}

// DryRunObjectsWith is DryRunObjectsFor with the RBAC of the features f
// (with --mark in another namespace than EventNamespace, the Role of the
// Events there and its bindings after the others).
func DryRunObjectsWith(namespace string, plans []*NodePlan, subjects []Subject, f RBACFeatures) []any {
	role, cr := BuildRBACFor(namespace, f)
	docs := []any{role, cr}
	er := BuildMarkEventRole(namespace, f)
	if er != nil {
		docs = append(docs, er)
	}
	seen := map[Subject]bool{}
	for _, sub := range subjects {
		if seen[sub] {
			continue // the same identity twice: one set of bindings
		}
		seen[sub] = true
		rb, crb := BuildBindings(namespace, sub)
		docs = append(docs, rb, crb)
		if er != nil {
			docs = append(docs, roleBinding(er, sub))
		}
	}
	for _, np := range plans {
		for _, j := range np.Jobs() {
			docs = append(docs, j)
		}
	}
	return docs
}

// PoolNode is the node a dry run without a cluster plans for: a node named
// name of the expected machine (exp.GPUCount whole GPUs, the product's GPU
// Feature Discovery label, the pool's taints), whose driver supports CUDA
// driverCUDA ("" when unknown: the oldest default images are planned).
func PoolNode(name string, exp Expectations, driverCUDA string) *corev1.Node {
	n := &corev1.Node{}
	n.Name = name
	n.Labels = map[string]string{}
	if exp.GPUProduct != "" {
		n.Labels[LabelGFDProduct] = exp.GPUProduct
	}
	if exp.InstanceType != "" {
		n.Labels[LabelInstanceType] = exp.InstanceType
	}
	if maj, min, ok := strings.Cut(driverCUDA, "."); ok {
		n.Labels["nvidia.com/cuda.runtime-version.major"], n.Labels["nvidia.com/cuda.runtime-version.minor"] = maj, min
	}
	for _, t := range exp.Taints {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	q := *resourceQuantity(int64(exp.GPUCount))
	n.Status.Capacity = corev1.ResourceList{ResourceGPU: q}
	n.Status.Allocatable = corev1.ResourceList{ResourceGPU: q}
	poolFabric(n, exp)
	return n
}

// Subject is whom a dry run binds the RBAC to: Kind "User", "Group" or
// "ServiceAccount" (with Namespace).
type Subject struct {
	Kind, Name, Namespace string
}

// ParseSubject reads "user:NAME", "group:NAME" or
// "serviceaccount:NAMESPACE:NAME".
func ParseSubject(s string) (Subject, error) {
	kind, rest, _ := strings.Cut(s, ":")
	switch strings.ToLower(kind) {
	case "user":
		if rest != "" {
			return Subject{Kind: rbacv1.UserKind, Name: rest}, nil
		}
	case "group":
		if rest != "" {
			return Subject{Kind: rbacv1.GroupKind, Name: rest}, nil
		}
	case "serviceaccount", "sa":
		if ns, name, ok := strings.Cut(rest, ":"); ok && ns != "" && name != "" {
			return Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}, nil
		}
	}
	return Subject{}, fmt.Errorf("subject %q: want user:NAME, group:NAME or serviceaccount:NAMESPACE:NAME", s)
}

// BuildBindings binds BuildRBAC's Role and ClusterRole to sub.
func BuildBindings(namespace string, sub Subject) (*rbacv1.RoleBinding, *rbacv1.ClusterRoleBinding) {
	role, cr := BuildRBAC(namespace)
	crb := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: bindingName(cr.Name, sub), Labels: map[string]string{LabelManagedBy: ManagedBy}},
		Subjects:   []rbacv1.Subject{rbacSubject(sub)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name},
	}
	return roleBinding(role, sub), crb
}

// roleBinding binds role to sub in the role's namespace.
func roleBinding(role *rbacv1.Role, sub Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: bindingName(role.Name, sub), Namespace: role.Namespace, Labels: map[string]string{LabelManagedBy: ManagedBy}},
		Subjects:   []rbacv1.Subject{rbacSubject(sub)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
	}
}

// rbacSubject is sub as a binding's subject.
func rbacSubject(sub Subject) rbacv1.Subject {
	s := rbacv1.Subject{Kind: sub.Kind, Name: sub.Name, Namespace: sub.Namespace}
	if sub.Kind != rbacv1.ServiceAccountKind {
		s.APIGroup = rbacv1.GroupName
	}
	return s
}

// bindingName names the binding of role to sub after both, so that the
// bindings of two identities do not replace each other: ROLE-KIND-NAME (the
// subject's namespace too for a service account), lower-cased with every
// character outside [a-z0-9.-] made '-', cut to fit, and the first 8 hex
// digits of the sha256 of the exact subject, which keep names apart that
// the cleaning made alike.
func bindingName(role string, sub Subject) string {
	kind := map[string]string{rbacv1.UserKind: "user", rbacv1.GroupKind: "group", rbacv1.ServiceAccountKind: "sa"}[sub.Kind]
	raw := sub.Name
	if sub.Namespace != "" {
		raw = sub.Namespace + "-" + sub.Name
	}
	clean := strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(raw))
	sum := sha256.Sum256([]byte(sub.Kind + "\x00" + sub.Namespace + "\x00" + sub.Name))
	name := role + "-" + kind + "-" + clean
	if len(name) > 200 {
		name = name[:200]
	}
	return strings.Trim(name, "-.") + "-" + hex.EncodeToString(sum[:4])
}

// poolFabric makes a planned node advertise what its pool's fabric gives a
// real one: the EFA interfaces the spec attaches (with EFA's huge pages) and
// the GKE networks of its GPU NICs, so that a dry run prints the rank pods a
// run on such nodes creates.
func poolFabric(n *corev1.Node, exp Expectations) {
	one := *resourceQuantity(1)
	if exp.EFAInterfaces > 0 {
		efa := *resourceQuantity(int64(exp.EFAInterfaces))
		huge := resource.MustParse(fabric.EFAHugePages)
		for _, l := range []corev1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
			l[fabric.ResourceEFA], l[fabric.ResourceHugePages2Mi] = efa, huge
		}
	}
	for _, g := range exp.GPUNetworks {
		n.Status.Capacity[fabric.NetworkResource(g.Object)] = one
	}
}
