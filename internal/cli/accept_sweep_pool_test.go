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

// TestAcceptSweepNoNodes: a sweep whose selector matches no node (the
// pool scaled to zero) has nothing to accept: exit 0, a line on stderr,
// the fleet summary with no nodes on stdout with -o json, nothing
// created. Without --sweep the same selector is exit 4.
func TestAcceptSweepNoNodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := markClient(nil, markNodeObjects("gpu-1", true)...)
	args := []string{"accept", "--sweep", "-l", "team=b", "-n", "gpuctl", "--stages", "kubernetes", "--evidence-dir", t.TempDir(), "-q", "-o", "json"}
	streams, _, out, errOut := TestStreams()
	if code := RunWithFactory(ctx, args, streams, fakeFactory(c)); code != 0 {
		t.Fatalf("exit %d, want 0: %s", code, errOut)
	}
	if f := sweepFleet(t, out.String()); len(f.Nodes) != 0 || len(f.Skipped) != 0 || len(f.Verdicts) != 0 || f.Nodes == nil {
		t.Errorf("fleet %+v", f)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 1 {
		t.Errorf("stdout is not the fleet summary alone:\n%s", out)
	}
	if !strings.Contains(errOut.String(), `nothing to accept: no node matches selector "team=b"`) {
		t.Errorf("stderr %q", errOut)
	}
	for _, a := range c.Actions() {
		if v := a.GetVerb(); v != "list" && v != "get" {
			t.Errorf("a sweep over no node did %s %s", v, a.GetResource().Resource)
		}
	}

	streams, _, out, errOut = TestStreams()
	if code := RunWithFactory(ctx, args[:len(args)-2], streams, fakeFactory(c)); code != 0 || out.Len() != 0 || !strings.Contains(errOut.String(), "nothing to accept") {
		t.Errorf("without -o json: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	streams, _, _, errOut = TestStreams()
	plain := []string{"accept", "-l", "team=b", "-n", "gpuctl", "--stages", "kubernetes", "--evidence-dir", t.TempDir(), "-q"}
	if code := RunWithFactory(ctx, plain, streams, fakeFactory(c)); code != ExitInconclusive || !strings.Contains(errOut.String(), `no node matches selector "team=b"`) {
		t.Errorf("without --sweep: exit %d, want 4: %s", code, errOut)
	}
}
