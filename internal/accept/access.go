package accept

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// The causes of a verdict (StageResult.Cause): what the verdict is about.
const (
	// CauseNode: the node's own state decided (a PASS, a FAIL, a probe
	// that started on the node and hung).
	CauseNode = "node"
	// CauseHarness: the probe could not run or its output could not be
	// judged (image pull, unschedulable, garbage output).
	CauseHarness = "harness"
	// CauseCluster: the cluster around the node stood in the way (API
	// errors, RBAC, GPUs held by other pods, a Job, pod or node deleted by
	// someone else).
	CauseCluster = "cluster"
	// CauseInterrupted: the run was interrupted or ran out of time.
	CauseInterrupted = "interrupted"
)

// withCause sets r's cause when it has none: PASS and FAIL are the node's,
// INCONCLUSIVE the harness's; SKIPPED has no cause.
func withCause(r StageResult, cause string) StageResult {
	if r.Cause != "" || r.Verdict == diag.Skipped {
		return r
	}
	if cause == "" {
		cause = CauseNode
		if r.Verdict == diag.Inconclusive {
			cause = CauseHarness
		}
	}
	r.Cause = cause
	return r
}

// Permission is one verb on one resource that accept needs.
type Permission struct {
	Verb        string
	Group       string
	Resource    string
	Subresource string
	// Namespace is "" for cluster-scoped resources and for lists across
	// namespaces.
	Namespace string
	// Why says which feature needs it.
	Why string
}

func (p Permission) String() string {
	res := p.Resource
	if p.Subresource != "" {
		res += "/" + p.Subresource
	}
	if p.Group != "" {
		res += "." + p.Group
	}
	where := "cluster-wide"
	if p.Namespace != "" {
		where = "in namespace " + p.Namespace
	}
	return fmt.Sprintf("%s %s %s", p.Verb, res, where)
}

// JobPermissions are what the Job stages need in namespace ns.
func JobPermissions(ns string) []Permission {
	return []Permission{
		{Verb: "create", Group: "batch", Resource: "jobs", Namespace: ns, Why: "run the probe Jobs"},
		{Verb: "delete", Group: "batch", Resource: "jobs", Namespace: ns, Why: "clean up the probe Jobs"},
		{Verb: "list", Group: "batch", Resource: "jobs", Namespace: ns, Why: "follow the probe Jobs"},
		{Verb: "watch", Group: "batch", Resource: "jobs", Namespace: ns, Why: "follow the probe Jobs"},
		{Verb: "list", Resource: "pods", Namespace: ns, Why: "follow the probe pods"},
		{Verb: "watch", Resource: "pods", Namespace: ns, Why: "follow the probe pods"},
		{Verb: "delete", Resource: "pods", Namespace: ns, Why: "clean up orphaned probe pods"},
		{Verb: "get", Resource: "pods", Subresource: "log", Namespace: ns, Why: "read the probes' outputs"},
	}
}

// NodeWatchPermissions are what noticing a deleted node needs.
func NodeWatchPermissions() []Permission {
	return []Permission{
		{Verb: "list", Resource: "nodes", Why: "notice a node deleted mid-run"},
		{Verb: "watch", Resource: "nodes", Why: "notice a node deleted mid-run"},
	}
}

// CheckAccess asks the API server (SelfSubjectAccessReview) whether the
// caller may do each of perms and returns those it may not. An error means
// the review itself failed.
func CheckAccess(ctx context.Context, c kubernetes.Interface, perms []Permission) ([]Permission, error) {
	var denied []Permission
	for _, p := range perms {
		rev := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
			Namespace: p.Namespace, Verb: p.Verb, Group: p.Group, Resource: p.Resource, Subresource: p.Subresource}}}
		got, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, rev, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("checking access (%s): %w", p, err)
		}
		if !got.Status.Allowed {
			denied = append(denied, p)
		}
	}
	return denied, nil
}

// deniedReason names the permissions missing for the Job stages.
func deniedReason(denied []Permission) string {
	var s []string
	for _, p := range denied {
		s = append(s, fmt.Sprintf("%s (to %s)", p, p.Why))
	}
	return "RBAC: the identity running gpuctl may not " + strings.Join(s, "; ") + "; no Job was created (gpuctl accept --dry-run -o yaml prints the Role and ClusterRole to bind)"
}

// apiProblem describes a failed API call (verb on resource in ns) and its
// cause: a 403 names the missing permission, an unreachable API server or
// any other API error is the cluster's.
func apiProblem(err error, verb, resource, ns string) string {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("RBAC: forbidden to %s %s in namespace %s: %v", verb, resource, ns, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("API: %s %s in namespace %s: %v", verb, resource, ns, err)
	}
	return fmt.Sprintf("API error: %s %s in namespace %s: %v", verb, resource, ns, err)
}

// transient reports whether err is worth retrying: the API server is
// unreachable, restarting, overloaded or timed out.
func transient(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	msg := err.Error()
	if strings.Contains(msg, "connection refused") || strings.Contains(msg, "connection reset") || strings.Contains(msg, "EOF") || strings.Contains(msg, "http2: client connection lost") {
		return true
	}
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err)
}

// createOnce retries create like retry does; AlreadyExists counts as
// success: an earlier try got through, and the name is the run's own.
func createOnce(ctx context.Context, create func(context.Context) error) error {
	return retry(ctx, func(ctx context.Context) error {
		if err := create(ctx); !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	})
}

// retry calls f until it succeeds, fails for good, or ctx ends, backing off
// from 200 ms to 5 s between transient failures.
func retry(ctx context.Context, f func(context.Context) error) error {
	delay := 200 * time.Millisecond
	for {
		err := f(ctx)
		if !transient(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		if delay *= 2; delay > 5*time.Second {
			delay = 5 * time.Second
		}
	}
}
