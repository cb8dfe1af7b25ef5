package accept

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// exampleDir is the sample evidence folder of the README's quick start.
var exampleDir = filepath.Join("..", "..", "examples", "evidence")

// exampleRun is the accept runner, with the real parsers, over the default
// stages of a node whose probe pods print the given container logs (a
// container not named prints the cuda sample's output); the 1-GPU node
// without the diagnostics capture after a FAIL (no real bug report of it).
func exampleRun(t *testing.T, node string, gpus int, labels map[string]string, logs map[string][]byte) *Result {
	t.Helper()
	h := newHarness(t, nil)
	h.runner.Parser = ProbeParser()
	h.plan.NoDiagnostics = gpus == 1
	if node != h.plan.Node {
		n := gpuNode(node, gpus)
		for k, v := range labels {
			n.Labels[k] = v
		}
		pod := devicePluginPod(node)
		pod.Name += "-" + node
		if _, err := h.client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.client.CoreV1().Pods("kube-system").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h.plan.Node = node
	}
	vecadd := corpus(t, "cuda-samples/vectoradd-pass-cuda12.5.txt")
	h.runner.Logs = func(_ context.Context, _, _, container string) ([]byte, error) {
		if l, ok := logs[container]; ok {
			return l, nil
		}
		return vecadd, nil
	}
	return run(t, h, succeed)
}

// TestExampleEvidence holds examples/evidence/NODE/ to what accept saves
// on two nodes (-update rewrites it): gpu-node-1, the 8x H100 of the
// record fixtures (the corpus's -q, topo -m, vectorAdd and all_reduce_perf;
// probe's -L and nvlink -s), which PASSes, and gpu-node-2, a 1x A10 whose
// nvidia-smi -q (corpus) shows a row remap pending, which FAILs at
// inventory (the corpus has no -L or nvlink -s of an A10: those two
// containers print nothing). `gpuctl accept --offline` re-judges these folders in the
// README's quick start.
func TestExampleEvidence(t *testing.T) {
	probeFile := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("..", "probe", "testdata", "nvidia-smi", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	h100 := exampleRun(t, "gpu-node-1", 8, nil, map[string][]byte{
		ContainerSMIQuery:  corpus(t, "nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt"),
		ContainerSMIList:   probeFile("list-L-h100-80gb-hbm3-x8.txt"),
		ContainerSMINVLink: probeFile("nvlink-s-h100-80gb-hbm3-x8-550.90.07.txt"),
		ContainerSMITopo:   corpus(t, "topo/h100-x8-8nic-sglang-checkenv-570.txt"),
		ContainerNCCL:      corpus(t, "nccl-tests/h100-x8-allreduce-g8-256M-2G-noindent-rows.txt"),
	})
	a10 := exampleRun(t, "gpu-node-2", 1, map[string]string{LabelGFDProduct: "NVIDIA-A10"}, map[string][]byte{
		ContainerSMIQuery:  corpus(t, "nvidia-smi/a10-x1-q-535.129.03.txt"),
		ContainerSMIList:   nil,
		ContainerSMINVLink: nil,
	})
	for _, c := range []struct {
		res  *Result
		want diag.Verdict
	}{{h100, diag.Pass}, {a10, diag.Fail}} {
		if c.res.Verdict != c.want {
			t.Errorf("%s: verdict %s, want %s: %s", c.res.Node, c.res.Verdict, c.want, verdicts(c.res.Stages))
		}
		compareEvidenceDir(t, c.res.EvidenceDir, filepath.Join(exampleDir, c.res.Node))
	}
}

// compareEvidenceDir holds the files of want (but its README.md) to those
// of got, or with -update replaces them.
func compareEvidenceDir(t *testing.T, got, want string) {
	t.Helper()
	gotFiles, wantFiles := dirFiles(t, got), dirFiles(t, want)
	if *update {
		for _, name := range wantFiles {
			if err := os.Remove(filepath.Join(want, name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(want, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range gotFiles {
			data, err := os.ReadFile(filepath.Join(got, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(want, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if !slices.Equal(gotFiles, wantFiles) {
		t.Fatalf("%s holds %q; accept writes %q (go test ./internal/accept -run TestExampleEvidence -update)", want, wantFiles, gotFiles)
	}
	for _, name := range gotFiles {
		g, err := os.ReadFile(filepath.Join(got, name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(filepath.Join(want, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s differs from what accept writes (go test ./internal/accept -run TestExampleEvidence -update)", filepath.Join(want, name))
		}
	}
}

// dirFiles lists the file names of dir, sorted, without README.md; none
// when dir does not exist.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && !strings.EqualFold(e.Name(), "README.md") {
			names = append(names, e.Name())
		}
	}
	return names
}
