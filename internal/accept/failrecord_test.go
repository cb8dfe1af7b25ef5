package accept

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/record"
)

// TestFailedNodeRecordCarriesItsHardware: an A10 whose nvidia-smi -q shows a
// pending row remap (testdata/corpus/nvidia-smi/a10-x1-q-535.129.03.txt)
// FAILs at inventory, and its record still describes the GPU that was read:
// one GPU with its UUID and serial, the driver, and a subject digest over
// them (not the sha256 of nothing every failed node had); the FAIL reason
// names the GPU by UUID and serial beside its bus id.
func TestFailedNodeRecordCarriesItsHardware(t *testing.T) {
	h := newHarness(t, nil)
	n := gpuNode("gpu-node-a10", 1)
	n.Labels[LabelGFDProduct] = "NVIDIA-A10"
	pod := devicePluginPod(n.Name)
	pod.Name += "-a10"
	ctx := context.Background()
	if _, err := h.client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.CoreV1().Pods("kube-system").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.plan.Node, h.plan.Stages = n.Name, []Stage{StageKubernetes, StageInventory}
	h.runner.Parser = ProbeParser()
	smi := corpus(t, "nvidia-smi/a10-x1-q-535.129.03.txt")
	h.runner.Logs = func(_ context.Context, _, _, container string) ([]byte, error) {
		if container == ContainerSMIQuery {
			return smi, nil
		}
		return []byte{}, nil
	}
	res := run(t, h, succeed)
	if res.Verdict != diag.Fail {
		t.Fatalf("verdict %s: %s", res.Verdict, verdicts(res.Stages))
	}
	p := res.Predicate
	hw := p.Hardware
	if hw.GPUCount != 1 || len(hw.UUIDs) != 1 || hw.UUIDs[0] == "" || len(hw.Serials) != 1 || p.Driver.Version != "535.129.03" {
		t.Fatalf("the FAIL record's hardware: %+v, driver %+v", hw, p.Driver)
	}
	if d := record.HardwareDigest(hw.UUIDs, hw.Serials); d == record.HardwareDigest(nil, nil) {
		t.Errorf("subject digest %s is the digest of no GPU", d)
	}
	inv := stageByName(res.Stages, StageInventory)
	if !strings.Contains(inv.Reason, "UUID "+hw.UUIDs[0]) || !strings.Contains(inv.Reason, "serial "+hw.Serials[0]) {
		t.Errorf("the FAIL reason does not name the GPU: %q", inv.Reason)
	}
}

func stageByName(rs []StageResult, st Stage) StageResult {
	for _, r := range rs {
		if r.Name == st {
			return r
		}
	}
	return StageResult{}
}
