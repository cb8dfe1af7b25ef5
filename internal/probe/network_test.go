package probe

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// rdmaWant is what a parsed RDMA output must show: every device's name in
// order, and the facts of some of them.
type rdmaWant struct {
	kind        Kind
	tool        string
	verdict     diag.ReportVerdict
	unavailable string
	devices     []string
	facts       map[string]rdmaDeviceWant
	domains     int
}

// rdmaDeviceWant is a device's kind, its identity (firmware, board,
// HCA type, PCI IDs: "" where the output has none) and its first port's
// facts ("" / 0 / -1 where not checked).
type rdmaDeviceWant struct {
	kind, state, phys, linkLayer, pci, netdev string
	fw, board, hca, vendor, device            string
	rate                                      float64
	numa                                      int
}

// rdmaCases are the real RDMA outputs under testdata/network (see each
// file's .source); init adds them to the corpus cases, which detect, parse
// and check the JSON contract of every file.
var rdmaCases = func() map[string]rdmaWant {
	p5 := make([]string, 0, 32)
	for _, g := range []int{79, 96, 113, 130, 147, 164, 181, 198} {
		for k := 0; k < 4; k++ {
			p5 = append(p5, "rdmap"+strconv.Itoa(g+k)+"s0")
		}
	}
	return map[string]rdmaWant{
		"fi-info-efa-rdm-p4d-24xlarge-4-domains.txt": {kind: KindFIInfo, tool: "fi_info", verdict: diag.ReportOK,
			devices: []string{"rdmap16s27", "rdmap32s27", "rdmap144s27", "rdmap160s27"}, domains: 4,
			facts: map[string]rdmaDeviceWant{"rdmap144s27": {kind: "efa", numa: -1}}},
		"fi-info-efa-0-rdm-dgrm-rxd.txt": {kind: KindFIInfo, tool: "fi_info", verdict: diag.ReportOK,
			devices: []string{"efa_0"}, domains: 3},
		"fi-getinfo-61-no-efa.txt": {kind: KindFIInfo, tool: "fi_info", verdict: diag.ReportOK, devices: []string{}},
		"ibv-devinfo-efa-rdmap16s27-active.txt": {kind: KindIBVDevinfo, tool: "ibv_devinfo", verdict: diag.ReportOK,
			devices: []string{"rdmap16s27"},
			facts:   map[string]rdmaDeviceWant{"rdmap16s27": {kind: "efa", state: "ACTIVE", linkLayer: "Unspecified", numa: -1, fw: "0.0.0.0", vendor: "0x1d0f", device: "61344"}}},
		"ibv-devinfo-mlx5-roce-down-ib-excerpt.txt": {kind: KindIBVDevinfo, tool: "ibv_devinfo", verdict: diag.ReportOK,
			devices: []string{"mlx5_0", "mlx5_1", "mlx5_2"},
			facts: map[string]rdmaDeviceWant{
				"mlx5_0": {kind: "mlx5", state: "ACTIVE", linkLayer: "Ethernet", numa: -1, fw: "22.39.3004", board: "MT_0000000327", vendor: "0x02c9", device: "4125"},
				"mlx5_1": {kind: "mlx5", state: "DOWN", linkLayer: "Ethernet", numa: -1, fw: "22.39.3004", board: "MT_0000000327", vendor: "0x02c9", device: "4125"},
				"mlx5_2": {kind: "mlx5", state: "ACTIVE", linkLayer: "InfiniBand", numa: -1, fw: "20.43.2026", board: "MT_0000000223", vendor: "0x02c9", device: "4123"},
			}},
		"rdma-link-mlx5-cx6dx-2-ports.txt": {kind: KindRDMALink, tool: "rdma link", verdict: diag.ReportOK,
			devices: []string{"mlx5_0", "mlx5_1"},
			facts:   map[string]rdmaDeviceWant{"mlx5_1": {kind: "mlx5", state: "ACTIVE", phys: "LINK_UP", netdev: "p1p2", numa: -1}}},
		"rdma-sysfs-p5-48xlarge-32-efa.txt": {kind: KindRDMASysfs, tool: "sysfs", verdict: diag.ReportOK, devices: p5,
			facts: map[string]rdmaDeviceWant{
				"rdmap79s0":  {kind: "efa", state: "ACTIVE", phys: "LinkUp", linkLayer: "Unknown", pci: "0000:4f:00.0", rate: 100, numa: 0, vendor: "0x1d0f"},
				"rdmap201s0": {kind: "efa", state: "ACTIVE", pci: "0000:c9:00.0", rate: 100, numa: 1, vendor: "0x1d0f"},
			}},
		"rdma-sysfs-a3-ultragpu-8g-8-cx7.txt": {kind: KindRDMASysfs, tool: "sysfs", verdict: diag.ReportOK,
			devices: []string{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"},
			facts: map[string]rdmaDeviceWant{
				"mlx5_5": {kind: "mlx5", state: "ACTIVE", phys: "LinkUp", linkLayer: "Ethernet", pci: "0000:c2:00.0", rate: 400, numa: 1, fw: "28.39.1002", hca: "MT4129", vendor: "0x15b3", device: "0x1021"},
			}},
	}
}()

func init() {
	files := make([]string, 0, len(rdmaCases))
	for f := range rdmaCases {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		w := rdmaCases[f]
		corpusCases = append(corpusCases, corpusCase{file: "testdata/network/" + f, kind: w.kind, verdict: w.verdict,
			check: func(t *testing.T, rep Report) { checkRDMA(t, rep.(*RDMAReport), w) }})
	}
}

func checkRDMA(t *testing.T, r *RDMAReport, w rdmaWant) {
	t.Helper()
	eq(t, "tool", r.Tool, w.tool)
	eq(t, "verdict", r.Verdict, w.verdict)
	eq(t, "unavailable", r.Unavailable, w.unavailable)
	eq(t, "domains", len(r.Domains), w.domains)
	var names []string
	for _, d := range r.Devices {
		names = append(names, d.Name)
	}
	eq(t, "devices", strings.Join(names, ","), strings.Join(w.devices, ","))
	for name, f := range w.facts {
		var d *RDMADevice
		for i := range r.Devices {
			if r.Devices[i].Name == name {
				d = &r.Devices[i]
			}
		}
		if d == nil {
			t.Errorf("no device %s", name)
			continue
		}
		checkRDMADevice(t, d, f)
	}
}

func checkRDMADevice(t *testing.T, d *RDMADevice, f rdmaDeviceWant) {
	t.Helper()
	eq(t, d.Name+" kind", d.Kind, f.kind)
	eq(t, d.Name+" pci", d.PCIAddress, f.pci)
	numa := -1
	if d.NUMANode != nil {
		numa = *d.NUMANode
	}
	eq(t, d.Name+" numa", numa, f.numa)
	eq(t, d.Name+" firmware", d.FirmwareVersion, f.fw)
	eq(t, d.Name+" board", d.BoardID, f.board)
	eq(t, d.Name+" hca type", d.HCAType, f.hca)
	eq(t, d.Name+" vendor", d.VendorID, f.vendor)
	eq(t, d.Name+" device", d.DeviceID, f.device)
	if f.state == "" {
		eq(t, d.Name+" ports", len(d.Ports), 0)
		return
	}
	if len(d.Ports) != 1 {
		t.Fatalf("%s: %d ports, want 1", d.Name, len(d.Ports))
	}
	p := d.Ports[0]
	eq(t, d.Name+" state", p.State, f.state)
	eq(t, d.Name+" up", p.Up(), f.state == "ACTIVE")
	if f.phys != "" {
		eq(t, d.Name+" phys", p.PhysicalState, f.phys)
	}
	if f.linkLayer != "" {
		eq(t, d.Name+" link layer", p.LinkLayer, f.linkLayer)
	}
	if f.netdev != "" {
		eq(t, d.Name+" netdev", p.Netdev, f.netdev)
	}
	rate := 0.0
	if p.RateGbps != nil {
		rate = *p.RateGbps
	}
	eq(t, d.Name+" rate", rate, f.rate)
}

// The DOWN port is a warning naming it, and leaves the verdict ok.
func TestIBVDevinfoDownPortWarns(t *testing.T) {
	r := ParseIBVDevinfo(readFile(t, "testdata/network/ibv-devinfo-mlx5-roce-down-ib-excerpt.txt"))
	var msgs []string
	for _, f := range r.Findings {
		if f.Severity == diag.SeverityWarning {
			msgs = append(msgs, f.Message)
		}
	}
	eq(t, "warnings", strings.Join(msgs, "; "), "mlx5_1 port 1 is DOWN")
}

// Synthetic variations the real outputs do not have, each labelled.
func TestParseRDMAVariations(t *testing.T) {
	for name, c := range map[string]struct {
		kind        Kind
		in          string
		verdict     diag.ReportVerdict
		devices     int
		unavailable string
		rate        float64
	}{
		"marker line: tool not in image": {KindIBVDevinfo, "gpuctl: ibv_devinfo not in image\n", diag.ReportOK, 0, "not in image", 0},
		"marker line for fi_info":        {KindFIInfo, "gpuctl: fi_info not in image\n", diag.ReportOK, 0, "not in image", 0},
		"ibv_devinfo without devices":    {KindIBVDevinfo, "No IB devices found\n", diag.ReportOK, 0, "", 0},
		"ibv_devinfo cannot open":        {KindIBVDevinfo, "Failed to open device\n", diag.ReportOK, 0, "cannot open devices", 0},
		"ibv_devinfo -v rate from width and speed": {KindIBVDevinfo, "hca_id:\tmlx5_0\n\tport:\t1\n\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\tactive_width:\t\t4X (2)\n\t\tactive_speed:\t\t100.0 Gbps (128)\n\t\tphys_state:\t\tLINK_UP (5)\n\t\tlink_layer:\t\tEthernet\n",
			diag.ReportOK, 1, "", 400},
		"not ibv_devinfo":           {KindIBVDevinfo, "hello\n", diag.ReportUnknown, 0, "", 0},
		"sysfs without devices":     {KindRDMASysfs, RDMASysfsHeader + "\n" + RDMASysfsEnd + "\n", diag.ReportOK, 0, "", 0},
		"sysfs cut before its end":  {KindRDMASysfs, RDMASysfsHeader + "\ndevice mlx5_0\nmlx5_0 port 1 rate 200 Gb/sec (4X HDR)\n", diag.ReportUnknown, 1, "", 200},
		"sysfs without header":      {KindRDMASysfs, "device mlx5_0\n", diag.ReportUnknown, 0, "", 0},
		"rdma link with no devices": {KindRDMALink, "\n", diag.ReportOK, 0, "", 0},
		"not rdma link":             {KindRDMALink, "rdma: command not found\n", diag.ReportUnknown, 0, "", 0},
		"not fi_info":               {KindFIInfo, "something else\n", diag.ReportUnknown, 0, "", 0},
	} {
		t.Run(name, func(t *testing.T) {
			rep, err := Parse(c.kind, []byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			r := rep.(*RDMAReport)
			eq(t, "verdict", r.Verdict, c.verdict)
			eq(t, "devices", len(r.Devices), c.devices)
			eq(t, "unavailable", r.Unavailable, c.unavailable)
			if c.rate > 0 {
				if len(r.Devices[0].Ports) != 1 || r.Devices[0].Ports[0].RateGbps == nil {
					t.Fatalf("no rate: %+v", r.Devices[0])
				}
				eq(t, "rate", *r.Devices[0].Ports[0].RateGbps, c.rate)
			}
		})
	}
}

// The stage's script, run by sh over a fake /sys/class/infiniband, prints
// what ParseRDMASysfs reads back; missing files print nothing.
func TestRDMASysfsScript(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	root := t.TempDir()
	ib := filepath.Join(root, "class", "infiniband")
	pci := filepath.Join(root, "devices", "pci0000:00", "0000:4f:00.0")
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(pci, "numa_node"), "0\n")
	write(filepath.Join(pci, "vendor"), "0x1d0f\n")
	if err := os.MkdirAll(filepath.Join(ib, "rdmap79s0", "ports", "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pci, filepath.Join(ib, "rdmap79s0", "device")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(ib, "rdmap79s0", "ports", "1", "state"), "4: ACTIVE\n")
	write(filepath.Join(ib, "rdmap79s0", "ports", "1", "rate"), "100 Gb/sec (4X EDR)\n")
	// mlx5_0 has no device link and a DOWN port without rate or link layer.
	write(filepath.Join(ib, "mlx5_0", "ports", "1", "state"), "1: DOWN\n")
	script := strings.ReplaceAll(RDMASysfsScript, "/sys/class/infiniband", ib)
	out, err := exec.Command(sh, "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	r := ParseRDMASysfs(out)
	checkRDMA(t, r, rdmaWant{tool: "sysfs", verdict: diag.ReportOK, devices: []string{"mlx5_0", "rdmap79s0"},
		facts: map[string]rdmaDeviceWant{
			"rdmap79s0": {kind: "efa", state: "ACTIVE", pci: "0000:4f:00.0", rate: 100, numa: 0, vendor: "0x1d0f"},
			"mlx5_0":    {kind: "mlx5", state: "DOWN", numa: -1},
		}})
	// Without /sys/class/infiniband at all: the header, the end, no device.
	out, err = exec.Command(sh, "-c", strings.ReplaceAll(RDMASysfsScript, "/sys/class/infiniband", filepath.Join(root, "none"))).CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	checkRDMA(t, ParseRDMASysfs(out), rdmaWant{tool: "sysfs", verdict: diag.ReportOK, devices: []string{}})
}

// Every kind Parse lists has a parser.
func TestEveryParseKindParses(t *testing.T) {
	for _, k := range ParseKinds {
		if k == KindAuto {
			continue
		}
		r, err := Parse(k, []byte("x\n"))
		if err != nil || r.Common().Kind != k {
			t.Errorf("%s: %v", k, err)
		}
	}
}
