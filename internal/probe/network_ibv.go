package probe

import (
	"strconv"
	"strings"
)

// ParseIBVDevinfo reads rdma-core's `ibv_devinfo` or `ibv_devinfo -v`: an
// "hca_id: NAME" block per device with its keys, and a "port: N" block per
// port (state "PORT_ACTIVE (4)", link_layer, and with -v active_width "4X
// (2)" and active_speed "25.0 Gbps (32)", whose product is the rate).
// "No IB devices found" is no device; "Failed to open device" makes the
// report unavailable ("cannot open devices": the container has no
// /dev/infiniband), not a fault.
func ParseIBVDevinfo(data []byte) *RDMAReport {
	r, j, done := newRDMAReport(KindIBVDevinfo, "ibv_devinfo", data)
	if done {
		return r
	}
	ir := ibvReader{r: r, j: j}
	for _, l := range lines(data) {
		ir.line(strings.TrimSpace(l))
	}
	switch {
	case ir.cannotOpen && len(r.Devices) == 0:
		r.Unavailable = "cannot open devices"
		j.info("rdma-cannot-open", "", "ibv_devinfo could not open the RDMA devices (no /dev/infiniband in the container): no facts from it")
	case len(r.Devices) == 0 && !ir.noDevices:
		j.unusable("not-ibv-devinfo", "", "no hca_id line: this is not ibv_devinfo output")
	}
	ir.rates()
	return finishRDMA(r, j)
}

// ibvReader reads ibv_devinfo line by line: the current device and port,
// and each port's -v width and lane speed until rates() multiplies them.
type ibvReader struct {
	r                     *RDMAReport
	j                     *judge
	dev                   *RDMADevice
	port                  *RDMAPort
	noDevices, cannotOpen bool
	// width and speed are the -v lanes and lane speed (Gb/s) of each port.
	width, speed map[portKey]float64
}

// portKey names a port of a device: pointers into the report's slices do
// not survive their growth.
type portKey struct {
	dev  string
	port int
}

func (ir *ibvReader) line(t string) {
	switch {
	case t == "":
		return
	case strings.HasPrefix(t, "No IB devices found"):
		ir.noDevices = true
		return
	case strings.HasPrefix(t, "Failed to open device") || strings.HasPrefix(t, "Failed to get IB devices list"):
		ir.cannotOpen = true
		return
	}
	key, value, ok := strings.Cut(t, ":")
	if !ok {
		return
	}
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	switch {
	case key == "hca_id":
		ir.dev, ir.port = ir.r.device(ir.j, value), nil
	case ir.dev == nil:
	case key == "port":
		ir.startPort(value)
	case ir.port != nil:
		ir.portKey(key, value)
	default:
		ibvDeviceKey(ir.dev, key, value)
	}
}

func (ir *ibvReader) startPort(value string) {
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 || len(ir.dev.Ports) >= maxRecords {
		ir.port = nil
		return
	}
	ir.port = ir.dev.port(n)
}

func ibvDeviceKey(d *RDMADevice, key, value string) {
	switch key {
	case "transport":
		d.Transport = portState(value)
	case "fw_ver":
		d.FirmwareVersion = value
	case "node_guid":
		d.NodeGUID = value
	case "vendor_id":
		d.VendorID = value
	case "vendor_part_id":
		d.DeviceID = value
	case "board_id":
		d.BoardID = value
	}
}

func (ir *ibvReader) portKey(key, value string) {
	p := ir.port
	switch key {
	case "state":
		p.State = portState(value)
	case "phys_state":
		p.PhysicalState = portState(value)
	case "active_mtu":
		p.ActiveMTU = leadingNumber(value)
	case "link_layer":
		p.LinkLayer = value
	case "active_width":
		ir.set(&ir.width, strings.TrimSuffix(strings.Fields(value + " x")[0], "X"))
	case "active_speed":
		ir.set(&ir.speed, leadingNumber(value))
	}
}

func (ir *ibvReader) set(m *map[portKey]float64, num string) {
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f <= 0 {
		return
	}
	if *m == nil {
		*m = map[portKey]float64{}
	}
	(*m)[portKey{ir.dev.Name, ir.port.Port}] = f
}

// rates sets each -v port's rate: lanes x lane speed ("4X" x "100.0 Gbps"
// = 400 Gb/s).
func (ir *ibvReader) rates() {
	for i := range ir.r.Devices {
		d := &ir.r.Devices[i]
		for k := range d.Ports {
			key := portKey{d.Name, d.Ports[k].Port}
			w, wok := ir.width[key]
			s, sok := ir.speed[key]
			if wok && sok {
				d.Ports[k].RateGbps = ptr(w * s)
			}
		}
	}
}
