package helmgen

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// What `gpuctl generate acceptance` names and where the sweep's pod finds
// its files: the paths are those of the command line the sweep contract
// fixes (docs/acceptance-sweep.md).
const (
	// SweepName names the ServiceAccount and the CronJob.
	SweepName = "gpuctl-accept-sweep"
	// SweepKeyDir is where the key Secret is mounted (read-only).
	SweepKeyDir = "/var/run/gpuctl/key"
	// SweepRecordsDir is the evidence folder: the PersistentVolumeClaim
	// with records.persistentVolumeClaim, else an emptyDir (the pod's
	// working folder) the run's evidence lives in until it ends.
	SweepRecordsDir = "/var/lib/gpuctl/records"
	// SweepBinary is gpuctl in the image the Containerfile builds.
	SweepBinary = "/usr/local/bin/gpuctl"
	// sweepUID is the distroless nonroot user (65532), the Containerfile's
	// final stage's USER. Source: https://github.com/GoogleContainerTools/distroless/blob/main/base/base.bzl
	// (NONROOT = 65532, 2026-12-03).
	sweepUID = 65532
	// sweepStartingDeadline is how late a missed run may still start
	// (seconds): a sweep more than an hour late waits for the next slot.
	sweepStartingDeadline = 3600
	// sweepHistory is how many finished Jobs of each outcome the CronJob
	// keeps, for kubectl logs.
	sweepHistory = 3
)

// The node-pool label of each platform, by which the sweep selects the
// spec's pools when spec.acceptance.selector is unset. Sources:
// https://cloud.google.com/kubernetes-engine/docs/how-to/node-pools (cloud.google.com/gke-nodepool),
// https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html (eks.amazonaws.com/nodegroup),
// https://karpenter.sh/docs/reference/well-known-labels/ (karpenter.sh/nodepool), all 2026-12-03.
const (
	labelGKENodePool  = "cloud.google.com/gke-nodepool"
	labelEKSNodeGroup = "eks.amazonaws.com/nodegroup"
	labelKarpenter    = "karpenter.sh/nodepool"
)

// SweepSelector is the label selector the sweep runs with:
// spec.acceptance.selector, else the spec's pools by their node-pool label
// ("LABEL=POOL", or "LABEL in (A,B)" for several, names sorted). Errors: no
// selector and no pool.
func SweepSelector(s *spec.Spec) (string, error) {
	if a := s.Acceptance; a != nil && a.Selector != "" {
		return a.Selector, nil
	}
	var names []string
	for _, p := range s.NodePools {
		names = append(names, p.Name)
	}
	if len(names) == 0 {
		return "", fmt.Errorf("acceptance: no selector and no node pool to sweep; set acceptance.selector")
	}
	label := labelGKENodePool
	switch {
	case UsesKarpenter(s):
		label = labelKarpenter
		for i := range names {
			names[i] = objectName(names[i])
		}
	case s.Provider == spec.ProviderEKS:
		label = labelEKSNodeGroup
	}
	slices.Sort(names)
	if len(names) == 1 {
		return label + "=" + names[0], nil
	}
	return label + " in (" + strings.Join(names, ",") + ")", nil
}

// SweepArgs is the sweep's command line after gpuctl: accept --sweep over
// the selection, in the namespace, with the stages, parallelism, cap, key
// and record store of spec.acceptance, its probe images (--image
// STAGE=REF, in stage order) and --allow-privileged when it allows
// privilege, quiet, JSON on stdout.
func SweepArgs(s *spec.Spec) ([]string, error) {
	a := s.Acceptance
	sel, err := SweepSelector(s)
	if err != nil {
		return nil, err
	}
	args := []string{"accept", "--sweep", "-l", sel, "-n", a.NamespaceOr(),
		"--stages", strings.Join(a.StagesOr(), ","),
		"--parallel", fmt.Sprint(a.ParallelOr()),
		"--max-unhealthy", a.MaxUnhealthyOr().String(),
		"--key", path.Join(SweepKeyDir, a.KeySecret.Key)}
	if a.Records.ConfigMap {
		args = append(args, "--records-configmap")
	} else {
		args = append(args, "--evidence-dir", SweepRecordsDir)
	}
	for _, st := range spec.ImageStages(a) {
		args = append(args, "--image", st+"="+a.Images[st])
	}
	if a.AllowPrivileged {
		args = append(args, "--allow-privileged")
	}
	return append(args, "-q", "-o", "json"), nil
}

// SweepDeadline is the longest one sweep of s runs before Kubernetes stops
// its Job (activeDeadlineSeconds): spec.acceptance.timeout, else
// accept.SweepBound over the node pools' autoscaling.max nodes (all pools:
// a selector picks among the cluster's nodes, so their sum bounds it), in
// the spec's parallelism, with its stages. Errors: a timeout that is no
// duration, a stage accept does not have, or no timeout and a pool without
// autoscaling.max.
func SweepDeadline(s *spec.Spec) (time.Duration, error) {
	a := s.Acceptance
	if a.Timeout != "" {
		t, err := a.TimeoutOr(0)
		if err != nil {
			return 0, fmt.Errorf("acceptance.%w", err)
		}
		return t, nil
	}
	nodes := 0
	for _, p := range s.NodePools {
		if p.Autoscaling.Max < 1 {
			return 0, fmt.Errorf("acceptance: node pool %s has no autoscaling.max to bound the sweep's time by; set acceptance.timeout", p.Name)
		}
		nodes += p.Autoscaling.Max
	}
	_, stages, err := sweepFeatures(a)
	if err != nil {
		return 0, err
	}
	return accept.SweepBound(nodes, a.ParallelOr(), stages)
}

// sweepFeatures are the RBAC features of the sweep's stages: the sweep's,
// the records ConfigMaps' with records.configMap, and the fleet stages'
// Services when it runs one.
func sweepFeatures(a *spec.Acceptance) (accept.RBACFeatures, []accept.Stage, error) {
	f := accept.RBACFeatures{Sweep: true, RecordsConfigMap: a.Records.ConfigMap}
	var stages []accept.Stage
	for _, n := range a.StagesOr() {
		st, err := accept.ParseStage(n)
		if err != nil {
			return f, nil, fmt.Errorf("acceptance.stages: %w", err)
		}
		stages = append(stages, st)
		f.Multi = f.Multi || accept.IsFleetStage(st)
	}
	return f, stages, nil
}

// SweepSubject is the sweep's ServiceAccount as an RBAC subject.
func SweepSubject(a *spec.Acceptance) accept.Subject {
	return accept.Subject{Kind: "ServiceAccount", Name: SweepName, Namespace: a.NamespaceOr()}
}

// buildAcceptance returns the objects of acceptance.yaml for s (nil when
// s has no spec.acceptance): the Namespace (its Pod Security level the
// one the stages' probes need), the ServiceAccount, accept's Role and
// ClusterRole for the sweep's features with their bindings to it (what
// `accept --dry-run -o yaml --bind serviceaccount:NS:SA` prints: the same
// function builds both), and the CronJob.
func buildAcceptance(s *spec.Spec) ([]any, error) {
	a := s.Acceptance
	if a == nil {
		return nil, nil
	}
	f, stages, err := sweepFeatures(a)
	if err != nil {
		return nil, err
	}
	ns := a.NamespaceOr()
	labels := map[string]string{accept.LabelManagedBy: accept.ManagedBy}
	objs := []any{
		&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{accept.LabelManagedBy: accept.ManagedBy,
				"pod-security.kubernetes.io/enforce": accept.PodSecurityLevel(a.AllowPrivileged, stages)}}},
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta:                   metav1.ObjectMeta{Name: SweepName, Namespace: ns, Labels: labels},
			AutomountServiceAccountToken: ptrTo(false)},
	}
	objs = append(objs, accept.DryRunObjectsWith(ns, nil, []accept.Subject{SweepSubject(a)}, f)...)
	cj, err := sweepCronJob(s)
	if err != nil {
		return nil, err
	}
	return append(objs, cj), nil
}

// sweepCronJob is the CronJob that runs the sweep: one run at a time
// (Forbid), a missed run started at most an hour late, three Jobs of each
// outcome kept; its pod runs gpuctl as the distroless nonroot user with a
// read-only root, no privilege and RuntimeDefault seccomp, on a Linux
// node (it needs no GPU and tolerates no GPU taint).
func sweepCronJob(s *spec.Spec) (*batchv1.CronJob, error) {
	a := s.Acceptance
	args, err := SweepArgs(s)
	if err != nil {
		return nil, err
	}
	deadline, err := SweepDeadline(s)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{accept.LabelManagedBy: accept.ManagedBy, "app.kubernetes.io/name": SweepName}
	volumes, mounts := sweepVolumes(a)
	c := corev1.Container{
		Name: "sweep", Image: a.Image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{SweepBinary}, Args: args, WorkingDir: SweepRecordsDir,
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		},
		VolumeMounts: mounts,
		SecurityContext: &corev1.SecurityContext{
			Privileged: ptrTo(false), AllowPrivilegeEscalation: ptrTo(false), ReadOnlyRootFilesystem: ptrTo(true),
			RunAsNonRoot: ptrTo(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	pod := corev1.PodSpec{
		ServiceAccountName: SweepName, AutomountServiceAccountToken: ptrTo(true),
		RestartPolicy: corev1.RestartPolicyNever,
		NodeSelector:  map[string]string{corev1.LabelOSStable: "linux"},
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptrTo(true), RunAsUser: ptrTo(int64(sweepUID)), RunAsGroup: ptrTo(int64(sweepUID)), FSGroup: ptrTo(int64(sweepUID)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{c},
		Volumes:    volumes,
	}
	cj := &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Name: SweepName, Namespace: a.NamespaceOr(), Labels: labels},
		Spec: batchv1.CronJobSpec{
			Schedule: strings.TrimSpace(a.Schedule), ConcurrencyPolicy: batchv1.ForbidConcurrent,
			StartingDeadlineSeconds:    ptrTo(int64(sweepStartingDeadline)),
			SuccessfulJobsHistoryLimit: ptrTo(int32(sweepHistory)), FailedJobsHistoryLimit: ptrTo(int32(sweepHistory)),
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: batchv1.JobSpec{
					// A failed sweep is not retried at once: the next
					// scheduled run accepts again.
					BackoffLimit: ptrTo(int32(0)),
					// With Forbid a hung sweep would block every later
					// run: Kubernetes stops one past the sweep's bound.
					ActiveDeadlineSeconds: ptrTo(int64((deadline + time.Second - 1) / time.Second)),
					Template:              corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
				},
			},
		},
	}
	if a.TimeZone != "" {
		cj.Spec.TimeZone = ptrTo(a.TimeZone)
	}
	return cj, nil
}

// sweepVolumes are the sweep pod's volumes and its container's mounts: the
// key Secret read-only, the records folder (the PersistentVolumeClaim at
// its path, or an emptyDir), and an emptyDir /tmp under the read-only root.
//
// The key's defaultMode is 0440: the Secret's files are root's, so the
// nonroot user reads the key through its group, fsGroup. The kubelet makes
// every file of a read-only volume group-readable when fsGroup is set
// anyway (SetVolumeOwnership ORs the mode with roMask 0440:
// https://github.com/kubernetes/kubernetes/blob/master/pkg/volume/volume_linux.go,
// 2026-12-03), so 0400 would end as 0440 too; 0440 says what the pod gets.
// accept --key takes a group-readable key only from a Secret volume's
// layout (internal/cli checkPrivateKeyMode), nothing for others.
func sweepVolumes(a *spec.Acceptance) ([]corev1.Volume, []corev1.VolumeMount) {
	records := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	recordsMount := corev1.VolumeMount{Name: "records", MountPath: SweepRecordsDir}
	if pvc := a.Records.PersistentVolumeClaim; pvc != nil {
		records = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.ClaimName}}
		recordsMount.SubPath = strings.Trim(path.Clean("/"+pvc.Path), "/")
	}
	volumes := []corev1.Volume{
		{Name: "key", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: a.KeySecret.Name,
			Items: []corev1.KeyToPath{{Key: a.KeySecret.Key, Path: a.KeySecret.Key}}, DefaultMode: ptrTo(int32(0o440))}}},
		{Name: "records", VolumeSource: records},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	mounts := []corev1.VolumeMount{
		{Name: "key", MountPath: SweepKeyDir, ReadOnly: true},
		recordsMount,
		{Name: "tmp", MountPath: "/tmp"},
	}
	return volumes, mounts
}

// acceptanceNotes is acceptance.yaml's header.
func acceptanceNotes(s *spec.Spec) []string {
	a := s.Acceptance
	store := "one ConfigMap per node (gpuctl-record-<node>, its newest record)"
	if pvc := a.Records.PersistentVolumeClaim; pvc != nil {
		store = fmt.Sprintf("PersistentVolumeClaim %s (must exist)", pvc.ClaimName)
	}
	return []string{
		"The acceptance sweep (spec.acceptance; docs/acceptance-sweep.md): a CronJob running gpuctl accept --sweep in " + a.NamespaceOr() + ",",
		"with accept's RBAC for the sweep bound to its ServiceAccount. Before applying, create Secret " + a.KeySecret.Name + " (key " + a.KeySecret.Key + ":",
		"gpuctl keygen's private key) in " + a.NamespaceOr() + "; records go to " + store + ".",
		"Turn it off: kubectl -n " + a.NamespaceOr() + " patch cronjob " + SweepName + " -p '{\"spec\":{\"suspend\":true}}', or delete this file's objects.",
	}
}
