package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/accept"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestAcceptSweepPercentCapSmallPool: the default cap, 10%, on a pool of
// four nodes quarantines one FAILed node (10% of 4 rounded up), not none;
// the second is marked and reported as beyond the cap.
func TestAcceptSweepPercentCapSmallPool(t *testing.T) {
	t.Parallel()
	var objs []runtime.Object
	for _, n := range []struct {
		name  string
		ready bool
	}{{"gpu-1", false}, {"gpu-2", false}, {"gpu-3", true}, {"gpu-4", true}} {
		objs = append(objs, markNodeObjects(n.name, n.ready)...)
	}
	c := markClient(nil, objs...)
	args := []string{"accept", "--sweep", "-l", "team=a", "-n", "gpuctl", "--stages", "kubernetes", "--max-unhealthy", "10%",
		"--evidence-dir", t.TempDir(), "-q", "-o", "json"}
	streams, _, out, errOut := TestStreams()
	if code := RunWithFactory(context.Background(), args, streams, fakeFactory(c)); code != ExitCheckFailed {
		t.Fatalf("exit %d, want 3: %s", code, errOut)
	}
	quarantined := 0
	for _, name := range []string{"gpu-1", "gpu-2"} {
		n, err := c.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if accept.IsQuarantined(n) && n.Spec.Unschedulable {
			quarantined++
		}
	}
	if quarantined != 1 {
		t.Errorf("%d of the 2 FAILed nodes quarantined under 10%% of 4, want 1", quarantined)
	}
	sw := fleetNode(sweepFleet(t, out.String()), "gpu-2").Sweep
	if sw == nil || !strings.Contains(sw.NotQuarantined, "1 of 4 nodes are quarantined, --max-unhealthy 10% (1 of 4 nodes, rounded up)") {
		t.Errorf("gpu-2's sweep %+v", sw)
	}
}
