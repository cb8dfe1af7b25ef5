package probe

import (
	"bytes"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// RDMAReport is what one tool shows of a node's RDMA devices (InfiniBand,
// RoCE and EFA): the stage script's sysfs dump (KindRDMASysfs),
// `ibv_devinfo [-v]` (KindIBVDevinfo), iproute2's `rdma link`
// (KindRDMALink) or libfabric's `fi_info -p efa` (KindFIInfo). A DOWN port
// is a warning here: whether it matters depends on the machine, which the
// acceptance judge knows and the parser does not.
type RDMAReport struct {
	Header
	// Tool names the source: "sysfs", "ibv_devinfo", "rdma link", "fi_info".
	Tool string `json:"tool"`
	// Unavailable says why the tool showed no devices although it may have
	// some: "not in image" (the stage's marker line), "cannot open
	// devices" (ibv_devinfo without /dev/infiniband); "" when it ran.
	Unavailable string `json:"unavailable,omitempty"`
	// Devices in the output's order; fi_info's are its domains' devices
	// ("rdmap79s0" of "rdmap79s0-rdm"), without ports.
	Devices []RDMADevice `json:"devices"`
	// Domains are fi_info's entries (empty for the other tools).
	Domains []FabricDomain `json:"domains"`
}

// RDMADevice is one RDMA device ("mlx5_0", "rdmap79s0", "efa_0").
type RDMADevice struct {
	Name string `json:"name"`
	// Kind is "efa" (Amazon's vendor ID 0x1d0f, or an rdmap*/efa_* name
	// with no vendor shown), "mlx5" (Mellanox/NVIDIA ConnectX, vendor
	// 0x15b3 or an mlx5_* name), else the name's driver prefix ("irdma").
	Kind string `json:"kind"`
	// Transport is ibv_devinfo's ("InfiniBand", "unspecified");
	// FirmwareVersion is fw_ver; NodeGUID as printed.
	Transport       string `json:"transport,omitempty"`
	FirmwareVersion string `json:"firmwareVersion,omitempty"`
	NodeGUID        string `json:"nodeGUID,omitempty"`
	// HCAType is sysfs's hca_type ("MT4129"), VendorID and DeviceID the PCI
	// IDs ("0x15b3", "0x1021"; ibv_devinfo's vendor_id and vendor_part_id).
	HCAType  string `json:"hcaType,omitempty"`
	VendorID string `json:"vendorID,omitempty"`
	DeviceID string `json:"deviceID,omitempty"`
	// BoardID is ibv_devinfo's board_id, the vendor's board (PSID on
	// ConnectX: "MT_0000000838"); sysfs's dump does not read it.
	BoardID string `json:"boardID,omitempty"`
	// PCIAddress is the device's PCI function ("0000:4f:00.0"); NUMANode
	// its NUMA node, nil when not shown or -1 (none).
	PCIAddress string `json:"pciAddress,omitempty"`
	NUMANode   *int   `json:"numaNode"`
	// Netdevs are the network interfaces of the device ("eth2").
	Netdevs []string   `json:"netdevs"`
	Ports   []RDMAPort `json:"ports"`
}

// RDMAPort is one port of an RDMA device.
type RDMAPort struct {
	Port int `json:"port"`
	// State is the logical state without its number: "ACTIVE", "DOWN",
	// "INIT", "ARMED" (sysfs "4: ACTIVE", ibv_devinfo "PORT_ACTIVE (4)",
	// rdma link "ACTIVE").
	State string `json:"state"`
	// PhysicalState as printed without its number ("LinkUp", "LINK_UP",
	// "Disabled", "Polling").
	PhysicalState string `json:"physicalState,omitempty"`
	// RateGbps is the port's rate in Gb/s (sysfs "400 Gb/sec (4X NDR)";
	// ibv_devinfo -v's active_width x active_speed); nil when not shown.
	RateGbps *float64 `json:"rateGbps"`
	// LinkLayer is "InfiniBand", "Ethernet", "Unspecified" or "Unknown"
	// (EFA).
	LinkLayer string `json:"linkLayer,omitempty"`
	// ActiveMTU is ibv_devinfo's active_mtu ("4096").
	ActiveMTU string `json:"activeMTU,omitempty"`
	// Netdev is rdma link's netdev ("eth2").
	Netdev string `json:"netdev,omitempty"`
}

// FabricDomain is one fi_info entry: provider ("efa"), fabric ("efa",
// "efa-direct", "EFA-fe80::..."), domain ("rdmap79s0-rdm"), API version,
// endpoint type ("FI_EP_RDM") and protocol.
type FabricDomain struct {
	Provider string `json:"provider"`
	Fabric   string `json:"fabric"`
	Domain   string `json:"domain"`
	Version  string `json:"version,omitempty"`
	Type     string `json:"type,omitempty"`
	Protocol string `json:"protocol,omitempty"`
}

// Up reports whether the port's logical state is ACTIVE.
func (p RDMAPort) Up() bool { return p.State == "ACTIVE" }

// NotInImageMarker ends the line the network stage prints in place of a
// tool's output when the image has no such tool: "gpuctl: TOOL not in
// image". Each RDMA parser reads it as "not available", not as a fault.
const NotInImageMarker = "not in image"

// notInImage reports whether data is the stage's marker line for a
// missing tool.
func notInImage(data []byte) bool {
	for _, l := range lines(data) {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "gpuctl: ") && strings.HasSuffix(t, " "+NotInImageMarker) {
			return true
		}
	}
	return false
}

// newRDMAReport starts a report of tool; with the marker line it is
// already complete (unavailable, verdict ok) and done is true.
func newRDMAReport(kind Kind, tool string, data []byte) (r *RDMAReport, j *judge, done bool) {
	r = &RDMAReport{Tool: tool}
	j = newJudge(&r.Header, kind)
	if notInImage(data) {
		r.Unavailable = NotInImageMarker
		j.info("tool-not-in-image", "", "%s is not in the image: no facts from it", tool)
		return finishRDMA(r, j), j, true
	}
	return r, j, false
}

// finishRDMA classifies the devices, notes the ports that are not ACTIVE,
// and sets the verdict.
func finishRDMA(r *RDMAReport, j *judge) *RDMAReport {
	for i := range r.Devices {
		d := &r.Devices[i]
		if d.Kind == "" {
			d.Kind = rdmaKind(d.Name, d.VendorID)
		}
		sort.SliceStable(d.Ports, func(a, b int) bool { return d.Ports[a].Port < d.Ports[b].Port })
		for _, p := range d.Ports {
			if !p.Up() && p.State != "" {
				j.warn("rdma-port-not-active", "", "%s port %d is %s", d.Name, p.Port, p.State)
			}
		}
	}
	if r.Unavailable == "" {
		j.info("rdma-devices", "", "%s shows %d RDMA device(s)", r.Tool, len(r.Devices))
	}
	j.done()
	fillNil(r)
	return r
}

// rdmaKind classifies a device by PCI vendor, else by name.
func rdmaKind(name, vendor string) string {
	switch strings.ToLower(vendor) {
	case "0x1d0f":
		return "efa"
	case "0x15b3", "0x02c9":
		return "mlx5"
	}
	switch {
	case strings.HasPrefix(name, "rdmap") || strings.HasPrefix(name, "efa_"):
		return "efa"
	case strings.HasPrefix(name, "mlx5_"):
		return "mlx5"
	}
	prefix := strings.TrimRightFunc(name, func(r rune) bool { return r >= '0' && r <= '9' || r == '_' })
	if prefix == "" {
		return name
	}
	return prefix
}

// device returns the device named name, appending it when new (nil past
// maxRecords devices).
func (r *RDMAReport) device(j *judge, name string) *RDMADevice {
	for i := range r.Devices {
		if r.Devices[i].Name == name {
			return &r.Devices[i]
		}
	}
	if !j.room(len(r.Devices), "RDMA devices") {
		return nil
	}
	r.Devices = append(r.Devices, RDMADevice{Name: name})
	return &r.Devices[len(r.Devices)-1]
}

// port returns port n of d, appending it when new (finishRDMA sorts
// them).
func (d *RDMADevice) port(n int) *RDMAPort {
	for i := range d.Ports {
		if d.Ports[i].Port == n {
			return &d.Ports[i]
		}
	}
	d.Ports = append(d.Ports, RDMAPort{Port: n})
	return &d.Ports[len(d.Ports)-1]
}

// portState strips the number from a port state: "4: ACTIVE" -> "ACTIVE",
// "PORT_ACTIVE (4)" -> "ACTIVE", "5: LinkUp" -> "LinkUp".
func portState(s string) string {
	s = strings.TrimSpace(s)
	if _, after, ok := strings.Cut(s, ": "); ok {
		s = after
	}
	if before, _, ok := strings.Cut(s, " ("); ok {
		s = before
	}
	return strings.TrimPrefix(strings.TrimSpace(s), "PORT_")
}

// rateGbps reads sysfs's rate ("400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X
// SDR)"): nil when it is no rate.
func rateGbps(s string) *float64 {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok || !strings.HasPrefix(unit, "Gb/sec") {
		return nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return nil
	}
	return &f
}

// numaNode reads sysfs's numa_node: nil for -1 (no NUMA affinity) or
// garbage.
func numaNode(s string) *int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return nil
	}
	return &n
}

var (
	reDetectIBV      = regexp.MustCompile(`(?m)^hca_id:\s+\S+\s*$`)
	reDetectRDMALink = regexp.MustCompile(`(?m)^link \S+/\d+ (state|subnet_prefix|lid) `)
	reDetectFIInfo   = regexp.MustCompile(`(?m)^provider: \S+\s*\n\s+fabric: `)
)

// detectRDMA tells the RDMA kinds apart, after every GPU tool's shape: the
// sysfs dump's header, ibv_devinfo's hca_id line, rdma link's "link DEV/N"
// lines, fi_info's provider and fabric lines or its "no data" error; ""
// for none.
func detectRDMA(head []byte) Kind {
	switch {
	case bytes.Contains(head, []byte(RDMASysfsHeader)):
		return KindRDMASysfs
	case reDetectIBV.Match(head):
		return KindIBVDevinfo
	case reDetectRDMALink.Match(head):
		return KindRDMALink
	case reDetectFIInfo.Match(head) || bytes.HasPrefix(bytes.TrimSpace(head), []byte("fi_getinfo: -61")):
		return KindFIInfo
	}
	return ""
}
