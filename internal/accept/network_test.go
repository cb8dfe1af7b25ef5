package accept

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// The network judge's inputs are probe's real and built RDMA outputs
// (internal/probe/testdata/network, each with its .source) and the
// corpus' real topo -m of an 8-GPU, 8-NIC H100 node; the cases vary them
// where a fault is needed.
const (
	p5Sysfs      = "../probe/testdata/network/rdma-sysfs-p5-48xlarge-32-efa.txt"
	a3UltraSysfs = "../probe/testdata/network/rdma-sysfs-a3-ultragpu-8g-8-cx7.txt"
	fiInfoP4d    = "../probe/testdata/network/fi-info-efa-rdm-p4d-24xlarge-4-domains.txt"
	topo8NIC     = "../../testdata/corpus/topo/h100-x8-8nic-sglang-checkenv-570.txt"
)

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dropDevice removes every line of device dev from a sysfs dump.
func dropDevice(dump, dev string) string {
	var keep []string
	for _, l := range strings.Split(dump, "\n") {
		if l == "device "+dev || strings.HasPrefix(l, dev+" ") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// networkLogs are the stage's logs: the sysfs dump, the tools absent from
// the image (their marker lines) unless given, and topo -m when given.
func networkLogs(sysfs string, extra map[string]string) map[string][]byte {
	logs := map[string][]byte{ContainerRDMASysfs: []byte(sysfs)}
	for _, tl := range networkTools {
		logs[tl.container] = []byte("gpuctl: " + tl.tool + " " + probe.NotInImageMarker + "\n")
	}
	for c, s := range extra {
		logs[c] = []byte(s)
	}
	return logs
}

func TestJudgeNetwork(t *testing.T) {
	p5 := readTestFile(t, p5Sysfs)
	a3 := readTestFile(t, a3UltraSysfs)
	empty := probe.RDMASysfsHeader + "\n" + probe.RDMASysfsEnd + "\n"
	for _, c := range []struct {
		name, machine string
		logs          map[string][]byte
		verdict       diag.Verdict
		reason        []string // substrings the reason must have
		up, down      int
	}{
		{"p5.48xlarge with its 32 EFA devices up", "p5.48xlarge", networkLogs(p5, nil), diag.Pass,
			[]string{"32 efa devices on p5.48xlarge as expected", "one EFA device per network card of p5.48xlarge (32, matrix)", "every port ACTIVE"}, 32, 0},
		{"p5.48xlarge with 31 EFA devices", "p5.48xlarge", networkLogs(dropDevice(p5, "rdmap130s0"), nil), diag.Fail,
			[]string{"expected 32 efa devices", "sysfs shows 31"}, 31, 0},
		{"p5.48xlarge with one port DOWN", "p5.48xlarge", networkLogs(strings.Replace(p5, "rdmap96s0 port 1 state 4: ACTIVE", "rdmap96s0 port 1 state 1: DOWN", 1), nil), diag.Fail,
			[]string{"rdmap96s0 port 1 is DOWN"}, 31, 1},
		{"p5.48xlarge whose sysfs shows no devices, tools not in image", "p5.48xlarge", networkLogs(empty, nil), diag.Fail,
			[]string{"expected 32 efa devices", "sysfs shows 0"}, 0, 0},
		{"a3-ultragpu-8g with 8 CX-7 at 400 Gb/s", "a3-ultragpu-8g", networkLogs(a3, nil), diag.Pass,
			[]string{"8 mlx5 devices on a3-ultragpu-8g as expected", "at 400 Gb/s or more"}, 8, 0},
		{"a3-ultragpu-8g with one NIC at 200 Gb/s", "a3-ultragpu-8g", networkLogs(strings.Replace(a3, "mlx5_3 port 1 rate 400 Gb/sec (4X NDR)", "mlx5_3 port 1 rate 200 Gb/sec (4X HDR)", 1), nil), diag.Fail,
			[]string{"mlx5_3 port 1 runs at 200 Gb/s, below the 400 Gb/s of each NIC"}, 8, 0},
		{"a3-ultragpu-8g with an InfiniBand port", "a3-ultragpu-8g", networkLogs(strings.Replace(a3, "mlx5_0 port 1 link_layer Ethernet", "mlx5_0 port 1 link_layer InfiniBand", 1), nil), diag.Fail,
			[]string{"mlx5_0 port 1 link layer is InfiniBand, expected Ethernet"}, 8, 0},
		{"a3-ultragpu-8g pairs from topo -m", "a3-ultragpu-8g", networkLogs(a3, map[string]string{ContainerSMITopo: readTestFile(t, topo8NIC)}), diag.Pass,
			[]string{"topo -m: 4 of 8 GPUs share a PCIe switch (PIX/PXB) with a NIC", "GPU1 (nearest NIC at NODE)"}, 8, 0},
		{"g6.xlarge without fabric, no devices", "g6.xlarge", networkLogs(empty, nil), diag.Pass,
			[]string{"no RDMA/EFA devices expected on g6.xlarge (fabric none), none found"}, 0, 0},
		{"a3-megagpu-8g (TCPXO gVNICs), no devices", "a3-megagpu-8g", networkLogs(empty, nil), diag.Pass,
			[]string{"no RDMA/EFA devices expected on a3-megagpu-8g (fabric tcpxo)"}, 0, 0},
		{"g2-standard-8 showing an RDMA device it need not have", "g2-standard-8", networkLogs(dropDevice(a3, "mlx5_1"), nil), diag.Pass,
			[]string{"no RDMA/EFA devices expected on g2-standard-8", "sysfs shows 7: mlx5_0"}, 7, 0},
		{"unknown machine type", "x9.mystery", networkLogs(p5, nil), diag.Inconclusive,
			[]string{`machine type "x9.mystery" is not in gpuctl's matrix`, "found 32: rdmap79s0"}, 32, 0},
		{"p4d.24xlarge from fi_info when sysfs is unavailable", "p4d.24xlarge", map[string][]byte{
			ContainerRDMASysfs: []byte("gpuctl: sysfs " + probe.NotInImageMarker + "\n"),
			ContainerFIInfo:    []byte(readTestFile(t, fiInfoP4d)),
		}, diag.Pass, []string{"4 efa devices on p4d.24xlarge as expected", "(fi_info)"}, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			obs := &Observed{}
			exp := Expectations{InstanceType: c.machine}
			r := Judge(StageNetwork, StageOutput{Logs: c.logs, ExitCode: map[string]int32{}}, exp, nil, ProbeParser(), obs)
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s: %s", r.Verdict, c.verdict, r.Reason)
			}
			for _, s := range c.reason {
				if !strings.Contains(r.Reason, s) {
					t.Errorf("reason %q lacks %q", r.Reason, s)
				}
			}
			if c.verdict == diag.Fail && r.Cause != CauseNode {
				t.Errorf("cause %q, want node", r.Cause)
			}
			n := obs.Network
			if n == nil {
				t.Fatal("no network summary")
			}
			if n.PortsUp != c.up || n.PortsDown != c.down {
				t.Errorf("ports up/down %d/%d, want %d/%d", n.PortsUp, n.PortsDown, c.up, c.down)
			}
		})
	}
}

// The pairs topo -m shows go into the summary and the record, GPU by GPU.
func TestNetworkRecord(t *testing.T) {
	obs := &Observed{}
	logs := networkLogs(readTestFile(t, a3UltraSysfs), map[string]string{ContainerSMITopo: readTestFile(t, topo8NIC)})
	r := Judge(StageNetwork, StageOutput{Logs: logs, ExitCode: map[string]int32{}}, Expectations{InstanceType: "a3-ultragpu-8g"}, nil, ProbeParser(), obs)
	p := &Predicate{}
	recordNetwork(p, r, &runState{obs: *obs})
	n := p.Network
	if n == nil || n.Verdict != diag.Pass || n.Reason != r.Reason {
		t.Fatalf("record %+v", n)
	}
	if n.ExpectedKind != "mlx5" || n.ExpectedDevices != 8 || n.ExpectedRateGbps != 400 || n.Fabric != "roce" || n.Source != "sysfs" {
		t.Errorf("expectations %+v", n)
	}
	if got := strings.Join(n.GPUNICs["GPU0"], ","); got != "NIC0 (mlx5_0),NIC1 (mlx5_1)" {
		t.Errorf("GPU0 pairs %q", got)
	}
	if _, ok := n.GPUNICs["GPU1"]; ok {
		t.Errorf("GPU1 has no PIX/PXB NIC, got %v", n.GPUNICs["GPU1"])
	}
	if n.Tools["ibv_devinfo"] != probe.NotInImageMarker || n.Tools["sysfs"] != "8 devices" {
		t.Errorf("tools %v", n.Tools)
	}
	if len(n.Devices) != 8 || n.Devices[5].PCIAddress != "0000:c2:00.0" || *n.Devices[5].Ports[0].RateGbps != 400 {
		t.Errorf("devices %+v", n.Devices)
	}
}

// TestJudgeNetworkOptionalEFA: on g6.8xlarge, EFA is optional (no
// multi-node baseline): a node without EFA devices passes, unless the
// spec's pool enables EFA, which makes its interfaces required.
func TestJudgeNetworkOptionalEFA(t *testing.T) {
	empty := probe.RDMASysfsHeader + "\n" + probe.RDMASysfsEnd + "\n"
	out := StageOutput{Logs: networkLogs(empty, nil), ExitCode: map[string]int32{}}
	r := Judge(StageNetwork, out, Expectations{InstanceType: "g6.8xlarge"}, nil, ProbeParser(), &Observed{})
	if r.Verdict != diag.Pass || !strings.Contains(r.Reason, "EFA is optional") {
		t.Errorf("without a spec: %s %q", r.Verdict, r.Reason)
	}
	r = Judge(StageNetwork, out, Expectations{InstanceType: "g6.8xlarge", EFAInterfaces: 1}, nil, ProbeParser(), &Observed{})
	if r.Verdict != diag.Fail || !strings.Contains(r.Reason, "expected 1 efa devices") {
		t.Errorf("with efa.enabled: %s %q", r.Verdict, r.Reason)
	}
}
