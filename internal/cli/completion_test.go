package cli

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// accept completes node names from the cluster, leaving out those already
// on the line.
func TestCompleteAcceptNodes(t *testing.T) {
	t.Parallel()
	c := fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-1"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-2"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cpu-node-1"}},
	)
	streams, _, out, _ := TestStreams()
	code := RunWithFactory(context.Background(), []string{"__complete", "accept", "gpu-node-1", "gpu"}, streams, fakeFactory(c))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"gpu-node-2", ":4"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("completions %q, want %q", got, want)
	}
}
