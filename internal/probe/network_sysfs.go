package probe

import (
	"strconv"
	"strings"
)

// The sysfs dump the network stage's script prints: a header line, then one
// `DEVICE KEY VALUE` line per fact of each /sys/class/infiniband/DEVICE
// (a port's facts as `DEVICE port N KEY VALUE`), then an end line. Values
// are the sysfs files' contents as the kernel writes them
// (Documentation/ABI/stable/sysfs-class-infiniband): state "4: ACTIVE",
// phys_state "5: LinkUp", rate "400 Gb/sec (4X NDR)", link_layer
// "Ethernet". A missing file prints no line.
//
//	gpuctl-rdma-sysfs v1
//	device mlx5_0
//	mlx5_0 pci 0000:0c:00.0
//	mlx5_0 numa_node 0
//	mlx5_0 port 1 state 4: ACTIVE
//	mlx5_0 port 1 rate 400 Gb/sec (4X NDR)
//	gpuctl-rdma-sysfs end
const (
	RDMASysfsHeader = "gpuctl-rdma-sysfs v1"
	RDMASysfsEnd    = "gpuctl-rdma-sysfs end"
)

// RDMASysfsScript prints the sysfs dump. It runs in a plain POSIX sh with
// cat and readlink only, reads nothing it cannot (a missing file or
// directory prints no line) and needs no privilege: sysfs is readable by
// any user.
const RDMASysfsScript = `echo "` + RDMASysfsHeader + `"
d=/sys/class/infiniband
for p in "$d"/*; do
  [ -d "$p" ] || continue
  n=${p##*/}
  echo "device $n"
  r=$(readlink "$p/device" 2>/dev/null) && echo "$n pci ${r##*/}"
  for f in node_type hca_type fw_ver node_guid; do
    [ -r "$p/$f" ] && echo "$n $f $(cat "$p/$f" 2>/dev/null)"
  done
  for f in numa_node vendor device; do
    [ -r "$p/device/$f" ] && echo "$n $f $(cat "$p/device/$f" 2>/dev/null)"
  done
  for q in "$p"/device/net/*; do
    [ -d "$q" ] && echo "$n netdev ${q##*/}"
  done
  for q in "$p"/ports/*; do
    [ -d "$q" ] || continue
    for f in state phys_state rate link_layer; do
      [ -r "$q/$f" ] && echo "$n port ${q##*/} $f $(cat "$q/$f" 2>/dev/null)"
    done
  done
done
echo "` + RDMASysfsEnd + `"
`

// ParseRDMASysfs reads the network stage's sysfs dump (RDMASysfsScript).
// No header: unknown; no end line: the dump was cut, unknown.
func ParseRDMASysfs(data []byte) *RDMAReport {
	r, j, done := newRDMAReport(KindRDMASysfs, "sysfs", data)
	if done {
		return r
	}
	header, end := false, false
	for _, l := range lines(data) {
		t := strings.TrimSpace(l)
		switch {
		case t == RDMASysfsHeader:
			header = true
		case t == RDMASysfsEnd:
			end = true
		case header && !end && t != "":
			sysfsLine(r, j, t)
		}
	}
	switch {
	case !header:
		j.unusable("not-rdma-sysfs", "", "no %q line: this is not the network stage's sysfs dump", RDMASysfsHeader)
	case !end:
		j.unusable("output-truncated", "", "no %q line: the sysfs dump is incomplete", RDMASysfsEnd)
	}
	return finishRDMA(r, j)
}

// sysfsLine reads one `DEVICE KEY VALUE` line.
func sysfsLine(r *RDMAReport, j *judge, t string) {
	f := strings.SplitN(t, " ", 3)
	if len(f) == 2 && f[0] == "device" {
		r.device(j, f[1])
		return
	}
	if len(f) < 3 {
		return
	}
	d := r.device(j, f[0])
	if d == nil {
		return
	}
	key, value := f[1], strings.TrimSpace(f[2])
	if key == "port" {
		sysfsPortLine(d, value)
		return
	}
	setDeviceFact(d, key, value)
}

// deviceFacts are where a device fact's key (sysfs file) goes.
var deviceFacts = map[string]func(d *RDMADevice, v string){
	"pci":       func(d *RDMADevice, v string) { d.PCIAddress = v },
	"hca_type":  func(d *RDMADevice, v string) { d.HCAType = v },
	"fw_ver":    func(d *RDMADevice, v string) { d.FirmwareVersion = v },
	"node_guid": func(d *RDMADevice, v string) { d.NodeGUID = v },
	"numa_node": func(d *RDMADevice, v string) { d.NUMANode = numaNode(v) },
	"vendor":    func(d *RDMADevice, v string) { d.VendorID = v },
	"device":    func(d *RDMADevice, v string) { d.DeviceID = v },
	"netdev":    func(d *RDMADevice, v string) { d.Netdevs = append(d.Netdevs, v) },
}

func setDeviceFact(d *RDMADevice, key, value string) {
	if set, ok := deviceFacts[key]; ok {
		set(d, value)
	}
}

// sysfsPortLine reads "N KEY VALUE" of a port line.
func sysfsPortLine(d *RDMADevice, s string) {
	f := strings.SplitN(s, " ", 3)
	if len(f) < 3 {
		return
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 || len(d.Ports) >= maxRecords {
		return
	}
	p := d.port(n)
	switch v := strings.TrimSpace(f[2]); f[1] {
	case "state":
		p.State = portState(v)
	case "phys_state":
		p.PhysicalState = portState(v)
	case "rate":
		p.RateGbps = rateGbps(v)
	case "link_layer":
		p.LinkLayer = v
	}
}
