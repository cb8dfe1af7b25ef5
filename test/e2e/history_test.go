//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
)

// TestHistoryFlagsBusBWRegression: two nodes accepted twice into the same
// evidence directory (the default --history). The second time their
// all_reduce is 20 % slower (namespace e2e-history-slow serves
// testdata/derived's slower output): still above the baseline, so PASS, but
// each record links the node's first record and lists busbw-dropped, the
// output says so, the fleet summary (table and JSON) carries each node's
// regressions, and verify --previous checks the link.
func TestHistoryFlagsBusBWRegression(t *testing.T) {
	nodes := []string{"e2e-hist-1", "e2e-hist-2"}
	for _, node := range nodes {
		fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
		labelNode(t, node, map[string]string{"e2e-pool": "history"})
	}
	priv, pub, _ := keys(t)
	base := t.TempDir()
	accept2 := func(ns, fleet string) (run, map[string]*accept.Predicate) {
		r := gpuctlRun(t, "accept", "-l", "e2e-pool=history", "--parallel", "2", "-n", ns, "--create-namespace", "--key", priv,
			"--evidence-dir", base, "--fleet-summary", fleet, "-o", "json", "--stage-timeout", "60s", "-q")
		if r.code != 0 {
			t.Fatalf("accept in %s: exit %d, want 0 (PASS)", ns, r.code)
		}
		assertNothingLeft(t, ns)
		out := map[string]*accept.Predicate{}
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			_, p := predicate(t, l)
			out[p.Node.Name] = p
		}
		if len(out) != 2 {
			t.Fatalf("records for %d nodes, want 2", len(out))
		}
		return r, out
	}
	first, firstRecs := accept2("e2e-healthy", filepath.Join(base, "fleet-1.json"))
	for _, node := range nodes {
		if p := firstRecs[node]; p.Previous != nil || len(p.Regressions) != 0 || p.NCCL == nil || p.NCCL.BusBandwidthGBps != 470.73 {
			t.Errorf("first run of %s: previous %+v regressions %+v nccl %+v", node, p.Previous, p.Regressions, p.NCCL)
		}
	}
	if strings.Contains(first.stderr, "previous:") {
		t.Errorf("the first run names a previous record:\n%s", first.stderr)
	}

	second, recs := accept2("e2e-history-slow", filepath.Join(base, "fleet-2.json"))
	const drop = "NCCL busbw 376.6 GB/s is 20 % below the previous run's 470.7 GB/s (more than 10 %)"
	for _, node := range nodes {
		p, prev := recs[node], firstRecs[node]
		if p.Verdict != diag.Pass || stage(p, accept.StageNCCL).Verdict != diag.Pass {
			t.Errorf("%s: verdict %s, nccl %+v: a 20 %% drop above the baseline is no FAIL", node, p.Verdict, stage(p, accept.StageNCCL))
		}
		prevFile := filepath.Join(evidenceDir(t, base, node, prev.RunID), accept.RecordFile)
		data, err := os.ReadFile(prevFile)
		if err != nil {
			t.Fatal(err)
		}
		if p.Previous == nil || p.Previous.RunID != prev.RunID || p.Previous.Verdict != diag.Pass || p.Previous.Digest != record.Digest(data) {
			t.Errorf("%s: previous %+v, want run %s digest %s", node, p.Previous, prev.RunID, record.Digest(data))
		}
		if len(p.Regressions) != 1 || p.Regressions[0].Kind != accept.RegressionBusBW || p.Regressions[0].Message != drop {
			t.Errorf("%s: regressions %+v, want one %s: %s", node, p.Regressions, accept.RegressionBusBW, drop)
		}
		if want := "node " + node + "  run " + p.RunID; !strings.Contains(second.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
		if !strings.Contains(second.stderr, "  previous: "+prev.RunID+" (PASS)\n") {
			t.Errorf("stderr does not name %s's previous run %s", node, prev.RunID)
		}

		rec := filepath.Join(evidenceDir(t, base, node, p.RunID), accept.RecordFile)
		if r := gpuctlRun(t, "verify", rec, "--key", pub, "--previous", prevFile); r.code != 0 {
			t.Errorf("verify --previous the first record: exit %d\n%s", r.code, r.stdout)
		}
		if r := gpuctlRun(t, "verify", rec, "--key", pub, "--previous", rec); r.code != 3 || !strings.Contains(r.stdout, "previous: the record links") {
			t.Errorf("verify --previous another record: exit %d\n%s", r.code, r.stdout)
		}
	}
	if n := strings.Count(second.stderr, "  regressions: "+accept.RegressionBusBW+": "+drop+"\n"); n != 2 {
		t.Errorf("stderr shows the regression %d times, want 2:\n%s", n, second.stderr)
	}
	for _, node := range nodes {
		found := false
		for _, l := range strings.Split(second.stderr, "\n") {
			found = found || (strings.HasPrefix(l, node+"  PASS") && strings.Contains(l, " busbw-dropped "))
		}
		if !found {
			t.Errorf("the summary table has no row %s PASS ... busbw-dropped:\n%s", node, second.stderr)
		}
	}
	if !strings.Contains(second.stderr, "REGRESSIONS") || !strings.Contains(second.stderr, "2 with regressions") {
		t.Errorf("summary lacks the REGRESSIONS column or the fleet line's count:\n%s", second.stderr)
	}

	data, err := os.ReadFile(filepath.Join(base, "fleet-2.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fleet struct {
		Kind                 string `json:"kind"`
		NodesWithRegressions int    `json:"nodesWithRegressions"`
		Nodes                []struct {
			Node        string `json:"node"`
			Previous    string `json:"previous"`
			Regressions []struct {
				Kind    string `json:"kind"`
				Message string `json:"message"`
			} `json:"regressions"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(data, &fleet); err != nil {
		t.Fatal(err)
	}
	if fleet.Kind != "AcceptFleet" || fleet.NodesWithRegressions != 2 || len(fleet.Nodes) != 2 {
		t.Fatalf("fleet summary %s", data)
	}
	for _, n := range fleet.Nodes {
		if n.Previous != firstRecs[n.Node].RunID+" (PASS)" || len(n.Regressions) != 1 || n.Regressions[0].Kind != accept.RegressionBusBW || n.Regressions[0].Message != drop {
			t.Errorf("fleet node %+v", n)
		}
	}
	if data, err := os.ReadFile(filepath.Join(base, "fleet-1.json")); err != nil || !strings.Contains(string(data), `"regressions": []`) {
		t.Errorf("the first fleet summary should list no regressions ([]): %v\n%s", err, data)
	}
}

// labelNode adds labels to a node with a merge patch (kwok updates the
// node's status meanwhile, so a read-modify-update can conflict).
func labelNode(t *testing.T, node string, labels map[string]string) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
