package accept

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// StageNetwork checks the node's RDMA/EFA devices against its machine type
// (opt-in): one Job per node.
const StageNetwork Stage = "network"

// The network stage's containers, one per tool (their logs are the
// evidence files network.CONTAINER.log); the last is ContainerSMITopo.
const (
	ContainerRDMASysfs  = "rdma-sysfs"
	ContainerIBVDevinfo = "ibv-devinfo"
	ContainerRDMALink   = "rdma-link"
	ContainerFIInfo     = "fi-info"
)

// networkKinds are the network containers' output kinds; the sysfs
// dump's is the stage's kind.
var networkKinds = map[string]probe.Kind{
	ContainerIBVDevinfo: probe.KindIBVDevinfo,
	ContainerRDMALink:   probe.KindRDMALink,
	ContainerFIInfo:     probe.KindFIInfo,
	ContainerSMITopo:    probe.KindTopo,
}

// networkTools are the tool containers: the tool the image may lack and
// its command line.
var networkTools = []struct{ container, tool, cmd string }{
	{ContainerIBVDevinfo, "ibv_devinfo", "ibv_devinfo -v"},
	{ContainerRDMALink, "rdma", "rdma link show"},
	{ContainerFIInfo, "fi_info", "fi_info -p efa"},
}

// toolScript runs cmd where the image has tool, and prints the marker
// line the parsers read as "not available" where it has not. It exits 0
// either way: the output, not the exit code, is the answer (ibv_devinfo
// exits non-zero on a node without devices).
func toolScript(tool, cmd string) string {
	return fmt.Sprintf(`if command -v %s >/dev/null 2>&1; then %s 2>&1; else echo "gpuctl: %s %s"; fi; exit 0`, tool, cmd, tool, probe.NotInImageMarker)
}

// networkContainers: the sysfs dump, each tool, and nvidia-smi topo -m
// with the node's GPUs (its NIC legend and GPU-NIC links). All run as
// nobody: sysfs and the tools' queries need no privilege, and the tools
// that open devices (ibv_devinfo, fi_info) say so when they cannot.
func networkContainers(s JobSpec) ([]corev1.Container, []corev1.Volume) {
	none := corev1.ResourceRequirements{}
	cs := []corev1.Container{container(ContainerRDMASysfs, s.Image.Ref, []string{"sh", "-c", probe.RDMASysfsScript}, nil, none, asNobody)}
	for _, t := range networkTools {
		cs = append(cs, container(t.container, s.Image.Ref, []string{"sh", "-c", toolScript(t.tool, t.cmd)}, nil, none, asNobody))
	}
	cs = append(cs, container(ContainerSMITopo, s.Image.Ref, []string{"nvidia-smi", "topo", "-m"}, smiEnv(), gpuLimit(s.GPUs), asNobody))
	return cs, nil
}

// fabricExpectation is what a machine's GPU fabric must show: kind devices
// ("efa", "mlx5"), count of them, each port at least rateGbps (0: not
// judged) and of linkLayer ("" : not judged); why says where the rule
// comes from, for reasons.
type fabricExpectation struct {
	kind, linkLayer, why string
	count                int
	rateGbps             float64
}

// networkExpectation is the rule for machine m:
//   - EKS with EFA (m.EFA, NetworkCards > 0): one EFA device per network
//     card (an EFA interface per card at most; the matrix's network_cards,
//     AWS's instance type table), every port ACTIVE;
//   - GKE RoCE (Fabric roce, RDMANICs > 0): RDMANICs mlx5 devices, ports
//     ACTIVE, link layer Ethernet, rate at least RDMANICGbps;
//   - anything else (none, TCPX/TCPXO's gVNICs, a RoCE machine whose NIC
//     count the matrix lacks): nothing expected; count is 0.
func networkExpectation(m matrix.Machine) fabricExpectation {
	switch {
	case m.Fabric == matrix.FabricEFA && m.EFA && m.NetworkCards > 0:
		return fabricExpectation{kind: "efa", count: m.NetworkCards,
			why: fmt.Sprintf("one EFA device per network card of %s (%d, matrix)", m.Name, m.NetworkCards)}
	case m.Fabric == matrix.FabricRoCE && m.RDMANICs > 0:
		return fabricExpectation{kind: "mlx5", count: m.RDMANICs, linkLayer: "Ethernet", rateGbps: float64(m.RDMANICGbps),
			why: fmt.Sprintf("%d RDMA NICs on %s (matrix)", m.RDMANICs, m.Name)}
	}
	return fabricExpectation{}
}

// lookupNetworkMachine finds the machine type on GKE, then EKS (their
// names do not overlap).
func lookupNetworkMachine(name string) (matrix.Machine, bool) {
	if name == "" {
		return matrix.Machine{}, false
	}
	for _, p := range []string{"gke", "eks"} {
		if m, ok := matrix.LookupMachine(p, name); ok {
			return m, true
		}
	}
	return matrix.Machine{}, false
}

// networkEvidence is what the stage's outputs show: the devices (sysfs's,
// else the first tool's that ran), what each tool showed, and topo -m.
type networkEvidence struct {
	source  string
	devices []probe.RDMADevice
	tools   map[string]string
	topo    *probe.TopoReport
}

func gatherNetwork(parsed map[string]*Output) networkEvidence {
	ev := networkEvidence{tools: map[string]string{}}
	if o := parsed[ContainerSMITopo]; o != nil {
		ev.topo = o.Topo
	}
	var others []*probe.RDMAReport
	for _, c := range []string{ContainerRDMASysfs, ContainerFIInfo, ContainerIBVDevinfo, ContainerRDMALink} {
		o := parsed[c]
		if o == nil || o.RDMA == nil {
			continue
		}
		r := o.RDMA
		ev.tools[r.Tool] = toolShows(r)
		if ev.source == "" && r.Unavailable == "" {
			ev.source, ev.devices = r.Tool, r.Devices
			continue
		}
		others = append(others, r)
	}
	ev.devices = withIdentity(ev.devices, others)
	return ev
}

// withIdentity is a copy of devs with the model, PCI IDs, firmware and
// board each device lacks taken from the first other tool that shows the
// device of that name (sysfs has no board_id, ibv_devinfo no hca_type).
func withIdentity(devs []probe.RDMADevice, others []*probe.RDMAReport) []probe.RDMADevice {
	if len(others) == 0 {
		return devs
	}
	out := slices.Clone(devs)
	for i := range out {
		d := &out[i]
		for _, r := range others {
			if o := findDevice(r.Devices, d.Name); o != nil {
				fillIdentity(d, o)
			}
		}
	}
	return out
}

func findDevice(devs []probe.RDMADevice, name string) *probe.RDMADevice {
	for i := range devs {
		if devs[i].Name == name {
			return &devs[i]
		}
	}
	return nil
}

// fillIdentity sets each identity fact of d that is empty to o's.
func fillIdentity(d, o *probe.RDMADevice) {
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&d.HCAType, o.HCAType}, {&d.VendorID, o.VendorID}, {&d.DeviceID, o.DeviceID},
		{&d.FirmwareVersion, o.FirmwareVersion}, {&d.BoardID, o.BoardID},
	} {
		*f.dst = cmp.Or(*f.dst, f.src)
	}
}

func toolShows(r *probe.RDMAReport) string {
	if r.Unavailable != "" {
		return r.Unavailable
	}
	return fmt.Sprintf("%d devices", len(r.Devices))
}

// ofKind are the devices of kind.
func ofKind(devices []probe.RDMADevice, kind string) []probe.RDMADevice {
	var out []probe.RDMADevice
	for _, d := range devices {
		if d.Kind == kind {
			out = append(out, d)
		}
	}
	return out
}

func judgeNetworkStage(in judgeInput) StageResult {
	ev := gatherNetwork(in.parsed)
	name := in.exp.InstanceType
	m, known := lookupNetworkMachine(name)
	sum := &NetworkSummary{MachineType: name, Fabric: m.Fabric, Source: ev.source, Tools: ev.tools}
	in.obs.Network = sum
	if !known {
		sum.Devices, sum.PortsUp, sum.PortsDown = networkDevices(ev.devices)
		if name == "" {
			return result(StageNetwork, diag.Inconclusive, "the node has no instance-type label: which RDMA/EFA devices it must have is unknown; found %s", deviceList(ev.devices))
		}
		return result(StageNetwork, diag.Inconclusive, "machine type %q is not in gpuctl's matrix: which RDMA/EFA devices it must have is unknown; found %s", name, deviceList(ev.devices))
	}
	if ev.source == "" {
		return result(StageNetwork, diag.Inconclusive, "no RDMA device listing: the sysfs dump and every tool were unavailable")
	}
	want := networkExpectation(m)
	if want.kind == "efa" {
		if r, optional := optionalEFAResult(m, &want, in.exp, ev); optional {
			sum.Devices, sum.PortsUp, sum.PortsDown = networkDevices(ev.devices)
			return withNetworkFacts(r, sum)
		}
	}
	sum.ExpectedKind, sum.ExpectedDevices, sum.ExpectedRateGbps = want.kind, want.count, want.rateGbps
	if want.count == 0 {
		sum.Devices, sum.PortsUp, sum.PortsDown = networkDevices(ev.devices)
		return withNetworkFacts(noFabricResult(m, ev), sum)
	}
	devs := ofKind(ev.devices, want.kind)
	sum.Devices, sum.PortsUp, sum.PortsDown = networkDevices(devs)
	note, pairs := gpuNICPairing(ev.topo)
	sum.GPUNICs = pairs
	if problems := fabricProblems(devs, want, ev.source); len(problems) > 0 {
		return withNetworkFacts(result(StageNetwork, diag.Fail, "%s: %s", m.Name, strings.Join(problems, "; ")), sum)
	}
	r := result(StageNetwork, diag.Pass, "%d %s devices on %s as expected (%s), every port ACTIVE%s (%s)%s",
		len(devs), want.kind, m.Name, want.why, rateNote(devs, want), ev.source, note)
	return withNetworkFacts(r, sum)
}

// optionalEFAResult applies the spec's efa.interfaces to want and decides
// an instance type on which EFA is optional (one without a multi-node
// baseline, g5/g6: its pools run EFA only where the launch template
// attaches it): with no EFA device and no spec that enables EFA, the node
// passes; optional is false where the EFA rule applies.
func optionalEFAResult(m matrix.Machine, want *fabricExpectation, exp Expectations, ev networkEvidence) (StageResult, bool) {
	if exp.EFAInterfaces > 0 {
		want.count = exp.EFAInterfaces
		want.why = fmt.Sprintf("the spec pool's %d EFA interfaces", exp.EFAInterfaces)
		return StageResult{}, false
	}
	if !fabric.NeedsOf(m.Provider, m.Name).OptionalEFA || len(ofKind(ev.devices, "efa")) > 0 {
		return StageResult{}, false
	}
	return result(StageNetwork, diag.Pass, "no EFA device on %s, where EFA is optional (no multi-node baseline; a spec with efa.enabled makes it required); %s shows %s", m.Name, ev.source, deviceList(ev.devices)), true
}

// noFabricResult: a machine with no RDMA/EFA devices expected passes with
// what it shows; absence is never a failure there.
func noFabricResult(m matrix.Machine, ev networkEvidence) StageResult {
	fabric := m.Fabric
	if fabric == "" {
		fabric = matrix.FabricNone
	}
	if len(ev.devices) == 0 {
		return result(StageNetwork, diag.Pass, "no RDMA/EFA devices expected on %s (fabric %s), none found (%s)", m.Name, fabric, ev.source)
	}
	return result(StageNetwork, diag.Pass, "no RDMA/EFA devices expected on %s (fabric %s); %s shows %s, not judged", m.Name, fabric, ev.source, deviceList(ev.devices))
}

// fabricProblems are the rule's failures: the count, each port not
// ACTIVE, of another link layer, or below the rate.
func fabricProblems(devs []probe.RDMADevice, want fabricExpectation, source string) []string {
	var problems []string
	if len(devs) != want.count {
		problems = append(problems, fmt.Sprintf("expected %d %s devices (%s), %s shows %d%s", want.count, want.kind, want.why, source, len(devs), namedList(" (%s)", devs)))
	}
	for _, d := range devs {
		problems = append(problems, portProblems(d, want)...)
	}
	return problems
}

func portProblems(d probe.RDMADevice, want fabricExpectation) []string {
	if len(d.Ports) == 0 {
		return nil
	}
	var problems []string
	for _, p := range d.Ports {
		switch {
		case !p.Up():
			problems = append(problems, fmt.Sprintf("%s port %d is %s", d.Name, p.Port, orUnknown(p.State)))
		case want.linkLayer != "" && p.LinkLayer != "" && p.LinkLayer != want.linkLayer:
			problems = append(problems, fmt.Sprintf("%s port %d link layer is %s, expected %s", d.Name, p.Port, p.LinkLayer, want.linkLayer))
		case want.rateGbps > 0 && p.RateGbps != nil && *p.RateGbps < want.rateGbps:
			problems = append(problems, fmt.Sprintf("%s port %d runs at %s Gb/s, below the %s Gb/s of each NIC", d.Name, p.Port, gbps(*p.RateGbps), gbps(want.rateGbps)))
		}
	}
	return problems
}

// rateNote says the rate the ports were judged at, or that sysfs showed
// none.
func rateNote(devs []probe.RDMADevice, want fabricExpectation) string {
	if want.rateGbps == 0 {
		return ""
	}
	for _, d := range devs {
		for _, p := range d.Ports {
			if p.RateGbps == nil {
				return fmt.Sprintf("; rate not shown for %s, not judged against %s Gb/s", d.Name, gbps(want.rateGbps))
			}
		}
	}
	return fmt.Sprintf(" at %s Gb/s or more", gbps(want.rateGbps))
}

// gpuNICPairing maps each GPU of topo -m to its NICs at PIX or PXB (same
// PCIe switch) and notes the GPUs without one, with their nearest link.
// A GPU with no NIC closer than SYS is a warning in the note, never a
// failure: neither AWS's p5 nor GCP's A3 Ultra/A4 documentation states
// the PCIe tree topo -m must show inside the VM, and what a poor pairing
// costs is bandwidth, which the nccl stages measure.
func gpuNICPairing(t *probe.TopoReport) (note string, pairs map[string][]string) {
	pairs = map[string][]string{}
	if t == nil || len(t.NICs) == 0 {
		return "", pairs
	}
	labels := nicLabels(t)
	var far, sys []string
	for _, g := range t.GPUs {
		best := ""
		for i, n := range t.NICs {
			l := t.Link(g, n)
			if l == "PIX" || l == "PXB" {
				pairs[g] = append(pairs[g], labels[i])
			}
			if best == "" || linkRank(l) < linkRank(best) {
				best = l
			}
		}
		switch {
		case len(pairs[g]) > 0:
		case best == "SYS":
			sys = append(sys, g)
		default:
			far = append(far, fmt.Sprintf("%s (nearest NIC at %s)", g, orUnknown(best)))
		}
	}
	return pairingNote(len(pairs), len(t.GPUs), far, sys), pairs
}

// linkRank orders topo -m's GPU-NIC links nearest first.
func linkRank(l string) int {
	for i, c := range []string{"PIX", "PXB", "PHB", "NODE", "SYS"} {
		if l == c {
			return i
		}
	}
	return 9
}

func pairingNote(paired, gpus int, far, sys []string) string {
	note := fmt.Sprintf("; topo -m: %d of %d GPUs share a PCIe switch (PIX/PXB) with a NIC", paired, gpus)
	if len(far) > 0 {
		note += "; " + strings.Join(far, ", ") + " without one"
	}
	if len(sys) > 0 {
		note += fmt.Sprintf("; warning: %s reach every NIC only across the CPU interconnect (SYS): GPUDirect RDMA from them is slower", strings.Join(sys, ", "))
	}
	return note
}

// networkDevices is the record's form of the devices, with the count of
// ports up and down.
func networkDevices(devs []probe.RDMADevice) (out []NetworkDevice, up, down int) {
	out = []NetworkDevice{}
	for _, d := range devs {
		nd := NetworkDevice{Name: d.Name, Kind: d.Kind, PCIAddress: d.PCIAddress, NUMANode: d.NUMANode, Ports: []NetworkPort{},
			Model: d.HCAType, VendorID: d.VendorID, DeviceID: d.DeviceID, Firmware: d.FirmwareVersion, BoardID: d.BoardID}
		for _, p := range d.Ports {
			nd.Ports = append(nd.Ports, NetworkPort{Port: p.Port, State: p.State, RateGbps: p.RateGbps, LinkLayer: p.LinkLayer})
			if p.Up() {
				up++
			} else {
				down++
			}
		}
		out = append(out, nd)
	}
	return out, up, down
}

// withNetworkFacts adds the summary's numbers to the result's facts.
func withNetworkFacts(r StageResult, s *NetworkSummary) StageResult {
	r.Facts = map[string]string{
		"devices":         strconv.Itoa(len(s.Devices)),
		"expectedDevices": strconv.Itoa(s.ExpectedDevices),
		"portsUp":         strconv.Itoa(s.PortsUp),
		"portsDown":       strconv.Itoa(s.PortsDown),
		"source":          s.Source,
	}
	if len(s.GPUNICs) > 0 {
		r.Facts["gpuNICPairs"] = pairsText(s.GPUNICs)
	}
	return r
}

// pairsText is "GPU0=NIC0 (mlx5_0)+NIC1 (mlx5_1),GPU1=..." in GPU order.
func pairsText(pairs map[string][]string) string {
	var parts []string
	for _, g := range sortedKeys(pairs) {
		parts = append(parts, g+"="+strings.Join(pairs[g], "+"))
	}
	return strings.Join(parts, ",")
}

// deviceList names the devices ("none", or "2: mlx5_0, mlx5_1").
func deviceList(devs []probe.RDMADevice) string {
	if len(devs) == 0 {
		return "none"
	}
	return fmt.Sprintf("%d: %s", len(devs), strings.Join(deviceNames(devs), ", "))
}

// namedList formats the names into format's %s, "" for none or more than
// 8 (a count says enough then).
func namedList(format string, devs []probe.RDMADevice) string {
	if len(devs) == 0 || len(devs) > 8 {
		return ""
	}
	return fmt.Sprintf(format, strings.Join(deviceNames(devs), ", "))
}

func deviceNames(devs []probe.RDMADevice) []string {
	names := make([]string, 0, len(devs))
	for _, d := range devs {
		names = append(names, d.Name)
	}
	sort.Slice(names, func(i, j int) bool { return matrix.NaturalLess(names[i], names[j]) })
	return names
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// gbps prints a rate without a needless fraction ("400", "2.5").
func gbps(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// recordNetwork puts the network stage's summary, verdict and reason into
// the record.
func recordNetwork(p *Predicate, r StageResult, s *runState) {
	n := s.obs.Network
	if n == nil {
		n = &NetworkSummary{Devices: []NetworkDevice{}, Tools: map[string]string{}, GPUNICs: map[string][]string{}}
	}
	c := *n
	c.Verdict, c.Reason = r.Verdict, r.Reason
	if c.Devices == nil {
		c.Devices = []NetworkDevice{}
	}
	if c.GPUNICs == nil {
		c.GPUNICs = map[string][]string{}
	}
	p.Network = &c
}
