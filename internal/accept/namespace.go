package accept

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// PrepareNamespace makes sure the run's namespace exists (creating it when
// create is set) and that its PodSecurity admission admits the probe pods
// of stages. Every error means the run cannot start; nothing else is
// created.
func PrepareNamespace(ctx context.Context, c kubernetes.Interface, ns string, create, privileged bool, stages []Stage) error {
	obj, err := EnsureNamespace(ctx, c, ns, create)
	if err != nil {
		return err
	}
	if msg := PodSecurityProblem(obj, privileged, stages); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// EnsureNamespace returns the namespace ns, creating it (labelled as
// gpuctl's) when it does not exist and create is set.
func EnsureNamespace(ctx context.Context, c kubernetes.Interface, ns string, create bool) (*corev1.Namespace, error) {
	got, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	switch {
	case err == nil:
		return got, nil
	case apierrors.IsNotFound(err) && create:
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{LabelManagedBy: ManagedBy}}}
		if _, err := c.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating namespace %s: %w", ns, err)
		}
		return obj, nil
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("namespace %s does not exist (create it, or pass --create-namespace)", ns)
	}
	return nil, fmt.Errorf("reading namespace %s: %w", ns, err)
}

// PodSecurityProblem says why the namespace's PodSecurity admission would
// reject the probe pods, or "". The Job controller cannot create a rejected
// pod and the stage used to wait for its whole timeout with "no pod was
// created". The unprivileged probes run as nobody and pass "restricted"; the
// dcgm probe runs as root, which "restricted" forbids; "baseline" forbids the
// privileged probes of --allow-privileged (the dmesg container, SYS_ADMIN
// for dcgm).
func PodSecurityProblem(ns *corev1.Namespace, privileged bool, stages []Stage) string {
	if ns == nil {
		return ""
	}
	level := ns.Labels["pod-security.kubernetes.io/enforce"]
	need := podSecurityNeeded(privileged, stages)
	switch {
	case level == "restricted" && need > psRestricted:
		return fmt.Sprintf("namespace %s enforces PodSecurity %q, which rejects the dcgm probe (nv-hostengine runs as root) and the privileged probes of --allow-privileged; run accept in a namespace that enforces \"baseline\" (or \"privileged\" with --allow-privileged), e.g. -n gpuctl --create-namespace", ns.Name, level)
	case level == "baseline" && need > psBaseline:
		return fmt.Sprintf("namespace %s enforces PodSecurity %q, which rejects the privileged probes of --allow-privileged; use a namespace that enforces \"privileged\", or drop --allow-privileged", ns.Name, level)
	}
	return ""
}
