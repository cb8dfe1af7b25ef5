package accept

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// templateNode is testdata/nodes/gke-a3-ultragpu-8g.json, a GKE A3 Ultra
// node as `kubectl get node -o json` prints it (a derived fixture: see the
// folder's README).
func templateNode(t *testing.T) *corev1.Node {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "nodes", "gke-a3-ultragpu-8g.json"))
	if err != nil {
		t.Fatal(err)
	}
	var n corev1.Node
	if err := json.Unmarshal(data, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

// templateRun runs stages on the A3 Ultra node with the network stage's
// real outputs: the built sysfs dump of its 8 ConnectX-7 NICs, the
// tools absent from the image and the corpus' topo -m of an 8-GPU, 8-NIC
// node.
func templateRun(t *testing.T, stages []Stage, sysfs string) (*Result, *corev1.Node) {
	t.Helper()
	h := newHarness(t, nil)
	n := templateNode(t)
	pod := devicePluginPod(n.Name)
	pod.Name += "-a3u"
	if _, err := h.client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.CoreV1().Pods("kube-system").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.plan.Node, h.plan.Stages = n.Name, stages
	h.runner.Parser = ProbeParser()
	logs := networkLogs(sysfs, map[string]string{ContainerSMITopo: readTestFile(t, topo8NIC)})
	h.runner.Logs = func(_ context.Context, _, _, container string) ([]byte, error) { return logs[container], nil }
	return run(t, h, succeed), n
}

// TestRecordCarriesNodeInfo: the record holds the Node's OS image,
// kernel, container runtime and kubelet (status.nodeInfo) whether or not
// the kubernetes stage was selected: the runner reads the node either way.
func TestRecordCarriesNodeInfo(t *testing.T) {
	for _, stages := range [][]Stage{{StageKubernetes, StageNetwork}, {StageNetwork}} {
		res, n := templateRun(t, stages, readTestFile(t, a3UltraSysfs))
		if res.Verdict != diag.Pass {
			t.Fatalf("%v: verdict %s: %s", stages, res.Verdict, verdicts(res.Stages))
		}
		got, want := res.Predicate.Node, n.Status.NodeInfo
		for _, c := range []struct{ field, got, want string }{
			{"osImage", got.OSImage, want.OSImage},
			{"kernelVersion", got.KernelVersion, want.KernelVersion},
			{"containerRuntime", got.ContainerRuntime, want.ContainerRuntimeVersion},
			{"kubelet", got.Kubelet, want.KubeletVersion},
			{"architecture", got.Architecture, want.Architecture},
		} {
			if c.want == "" || c.got != c.want {
				t.Errorf("%v: node.%s %q, want the node's %q", stages, c.field, c.got, c.want)
			}
		}
	}
}

// TestRecordCarriesNICIdentityAndBaseline: each RDMA device of the network
// stage keeps the model, PCI IDs and firmware sysfs shows, and the record
// says which baseline the port rate was held to (the matrix's
// rdma_nic_gbps of a3-ultragpu-8g) and that it met it.
func TestRecordCarriesNICIdentityAndBaseline(t *testing.T) {
	sysfs := readTestFile(t, a3UltraSysfs)
	res, _ := templateRun(t, []Stage{StageKubernetes, StageNetwork}, sysfs)
	if res.Verdict != diag.Pass {
		t.Fatalf("verdict %s: %s", res.Verdict, verdicts(res.Stages))
	}
	parsed := probe.ParseRDMASysfs([]byte(sysfs))
	net := res.Predicate.Network
	if net == nil || len(net.Devices) != len(parsed.Devices) || len(parsed.Devices) == 0 {
		t.Fatalf("network %+v, want the %d devices of the dump", net, len(parsed.Devices))
	}
	for i, d := range net.Devices {
		p := parsed.Devices[i]
		if d.Name != p.Name || d.Model != p.HCAType || d.Firmware != p.FirmwareVersion || d.VendorID != p.VendorID || d.DeviceID != p.DeviceID || d.Model == "" || d.Firmware == "" {
			t.Errorf("device %d: %+v, want the dump's %s (hca %q, fw %q, %s:%s)", i, d, p.Name, p.HCAType, p.FirmwareVersion, p.VendorID, p.DeviceID)
		}
	}
	bm := baselineOf(res.Predicate, StageNetwork)
	if bm == nil {
		t.Fatalf("no network baseline in %+v", res.Predicate.BaselinesMet)
	}
	if bm.Baseline != "a3-ultragpu-8g rdma_nic_gbps" || bm.Minimum != net.ExpectedRateGbps || bm.Minimum <= 0 || bm.Value == nil || *bm.Value < bm.Minimum || !bm.Met || bm.NotJudged != "" {
		t.Errorf("network baseline %+v (value %v), want a3-ultragpu-8g's %v Gb/s met", bm, bm.Value, net.ExpectedRateGbps)
	}
}

// TestNetworkBaselineNotMet: one CX-7 port at 200 Gb/s FAILs the network
// stage, and the record says the rate baseline was not met, with the rate.
func TestNetworkBaselineNotMet(t *testing.T) {
	sysfs := readTestFile(t, a3UltraSysfs)
	slow := replaceOnce(t, sysfs, "mlx5_3 port 1 rate 400 Gb/sec (4X NDR)", "mlx5_3 port 1 rate 200 Gb/sec (4X HDR)")
	res, _ := templateRun(t, []Stage{StageNetwork}, slow)
	if res.Verdict != diag.Fail {
		t.Fatalf("verdict %s: %s", res.Verdict, verdicts(res.Stages))
	}
	bm := baselineOf(res.Predicate, StageNetwork)
	if bm == nil || bm.Met || bm.Value == nil || *bm.Value != 200 || bm.NotJudged != "" {
		t.Fatalf("network baseline %+v, want 200 Gb/s not met", bm)
	}
	// A port whose rate the dump does not show leaves the figure unjudged.
	unshown := replaceOnce(t, sysfs, "mlx5_3 port 1 rate 400 Gb/sec (4X NDR)\n", "")
	res, _ = templateRun(t, []Stage{StageNetwork}, unshown)
	if bm := baselineOf(res.Predicate, StageNetwork); bm == nil || bm.Met || bm.Value != nil || bm.NotJudged != "rate not shown for mlx5_3" {
		t.Fatalf("network baseline %+v, want not judged for mlx5_3", bm)
	}
}

func replaceOnce(t *testing.T, s, old, repl string) string {
	t.Helper()
	i := strings.Index(s, old)
	if i < 0 {
		t.Fatalf("%q not in the fixture", old)
	}
	return s[:i] + repl + s[i+len(old):]
}

// baselineOf is the predicate's baselinesMet entry of stage st (nil: none).
func baselineOf(p *Predicate, st Stage) *BaselineMet {
	for i := range p.BaselinesMet {
		if p.BaselinesMet[i].Stage == st {
			return &p.BaselinesMet[i]
		}
	}
	return nil
}

// TestRecordNCCLBaselineMet: the real 8x H100 run's busbw (470.7 GB/s at 2
// GiB) is held to h100-sxm-x8's minimum, met with the embedded baselines
// and not met against the raised one; the record names the baseline and
// where it came from.
func TestRecordNCCLBaselineMet(t *testing.T) {
	strict := DefaultBaselines()
	strict.Origin = "testdata/baselines-strict.yaml"
	for i := range strict.Baselines {
		if strict.Baselines[i].SKU == "h100-sxm-x8" {
			strict.Baselines[i].MinBusBandwidthGBps = 480
		}
	}
	for _, c := range []struct {
		bl     *Baselines
		origin string
		min    float64
		met    bool
	}{{DefaultBaselines(), "embedded", 333, true}, {strict, "testdata/baselines-strict.yaml", 480, false}} {
		res := realRun(t, "gpu-node-1", c.bl)
		bm := baselineOf(res.Predicate, StageNCCL)
		n := res.Predicate.NCCL
		if bm == nil || n == nil {
			t.Fatalf("%s: no nccl baseline in %+v", c.origin, res.Predicate.BaselinesMet)
		}
		if bm.Baseline != "h100-sxm-x8" || bm.Origin != c.origin || bm.Minimum != c.min || bm.Met != c.met || bm.Value == nil || *bm.Value != n.BusBandwidthGBps || bm.Unit != "GB/s" {
			t.Errorf("%s: nccl baseline %+v (value %v), want h100-sxm-x8 min %v met=%v at %v", c.origin, bm, bm.Value, c.min, c.met, n.BusBandwidthGBps)
		}
	}
}

// TestNCCLBaselineNotJudged: a baseline without a published figure, or a
// run whose largest message is below the baseline's, is recorded as not
// judged, with why; without a baseline there is no entry.
func TestNCCLBaselineNotJudged(t *testing.T) {
	v := 300.0
	for _, c := range []struct {
		name string
		n    *NCCLSummary
		want string
	}{
		{"no figure", &NCCLSummary{BusBandwidthGBps: v, LargestBytes: 8 << 30, Baseline: &Baseline{SKU: "x", NoFigure: "no published figure for x"}}, "no published figure: no published figure for x"},
		{"small", &NCCLSummary{BusBandwidthGBps: v, LargestBytes: 512 << 20, Baseline: &Baseline{SKU: "x", MinBytes: 1 << 30, MinBusBandwidthGBps: 100}}, "largest message 512 MiB is below the baseline's 1 GiB"},
	} {
		m := ncclBaselineMet(c.n)
		if m == nil || m.Met || m.NotJudged != c.want {
			t.Errorf("%s: %+v, want not judged %q", c.name, m, c.want)
		}
	}
	if m := ncclBaselineMet(&NCCLSummary{BusBandwidthGBps: v}); m != nil {
		t.Errorf("no baseline: %+v, want no entry", m)
	}
}

// TestWithIdentity: a device sysfs lists takes the board and firmware
// that another tool's output shows for the device of that name, and keeps
// what sysfs showed. The two outputs are real files of two hosts, joined
// here only to see the merge (mlx5_0 in both).
func TestWithIdentity(t *testing.T) {
	sysfs := probe.ParseRDMASysfs([]byte(readTestFile(t, a3UltraSysfs)))
	ibv := probe.ParseIBVDevinfo([]byte(readTestFile(t, "../probe/testdata/network/ibv-devinfo-mlx5-roce-down-ib-excerpt.txt")))
	got := withIdentity(sysfs.Devices, []*probe.RDMAReport{ibv})
	d := got[0]
	if d.Name != "mlx5_0" || d.BoardID != ibv.Devices[0].BoardID || d.BoardID == "" || d.FirmwareVersion != sysfs.Devices[0].FirmwareVersion || d.HCAType != sysfs.Devices[0].HCAType {
		t.Errorf("mlx5_0 %+v: want sysfs's firmware %q and hca %q with ibv_devinfo's board %q", d, sysfs.Devices[0].FirmwareVersion, sysfs.Devices[0].HCAType, ibv.Devices[0].BoardID)
	}
	if sysfs.Devices[0].BoardID != "" {
		t.Errorf("withIdentity changed the parsed output: %+v", sysfs.Devices[0])
	}
	if got[3].BoardID != "" {
		t.Errorf("mlx5_3 (not in ibv_devinfo) %+v took a board", got[3])
	}
}

// TestRecordCarriesDCGMLevel: the dcgm stage's summary in the record says
// the run level dcgmi diag ran: the plan's, else DefaultDCGMLevel (the
// real output is a level-3 diag of one V100 that passed).
func TestRecordCarriesDCGMLevel(t *testing.T) {
	out := corpus(t, "dcgm/v100-pcie-x1-diag-r3-pass-dcgm3.3.9-driver560.txt")
	for _, c := range []struct{ plan, want int }{{3, 3}, {0, DefaultDCGMLevel}} {
		h := newHarness(t, nil)
		h.plan.Stages, h.plan.DCGMLevel = []Stage{StageDCGM}, c.plan
		h.runner.Parser = ProbeParser()
		h.runner.Logs = func(context.Context, string, string, string) ([]byte, error) { return out, nil }
		res := run(t, h, succeed)
		d := res.Predicate.DCGM
		if d == nil || d.Verdict != diag.Pass || d.Level != c.want {
			t.Errorf("plan level %d: dcgm %+v, want PASS at level %d", c.plan, d, c.want)
		}
		cs, _ := dcgmContainers(JobSpec{DCGMLevel: c.plan})
		if want := fmt.Sprintf("dcgmi diag -r %d -j", c.want); len(cs) != 1 || !strings.Contains(strings.Join(cs[0].Command, " "), want) {
			t.Errorf("plan level %d: the stage's container does not run %q", c.plan, want)
		}
	}
}
