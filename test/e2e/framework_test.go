//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/diag"
)

// TestFrameworkStage: --stages kubernetes,framework on a 2-GPU node runs
// one Job whose pod "prints" the framework checks' output (kwok runs no
// process; hack/e2e/kwok.yaml serves a real CPU run of the script with its
// device renamed cuda, testdata/derived): judged PASS with every check in the
// record; the same run with a checkpoint that did not come back bit-equal
// is FAIL (exit 3) naming the checkpoint check. Nothing is left.
func TestFrameworkStage(t *testing.T) {
	for _, c := range []struct {
		ns, node string
		code     int
		verdict  diag.Verdict
		reason   string
	}{
		{"e2e-framework", "e2e-framework-ok", 0, diag.Pass, "on 2 GPUs"},
		{"e2e-framework-fail", "e2e-framework-bad", 3, diag.Fail, "checkpoint"},
	} {
		t.Run(c.ns, func(t *testing.T) {
			ctx := context.Background()
			fakeGPUNode(t, c.node, "NVIDIA-H100-80GB-HBM3", 2, "12.2")
			if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			r := gpuctlRun(t, "accept", c.node, "--stages", "kubernetes,framework", "-n", c.ns, "--evidence-dir", t.TempDir(), "-o", "json", "--stage-timeout", "60s", "-q")
			if r.code != c.code {
				t.Fatalf("exit %d, want %d: %s", r.code, c.code, r.stderr)
			}
			var st struct {
				Predicate accept.Predicate `json:"predicate"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &st); err != nil {
				t.Fatal(err)
			}
			s := stage(&st.Predicate, accept.StageFramework)
			if s.Verdict != c.verdict || !strings.Contains(s.Reason, c.reason) {
				t.Errorf("framework %s %q, want %s with %q", s.Verdict, s.Reason, c.verdict, c.reason)
			}
			if f := st.Predicate.Framework; f == nil || len(f.Checks) != 5 {
				t.Errorf("the record's framework summary: %+v", f)
			}
			assertNothingLeft(t, c.ns)
		})
	}
}
