package probe

import (
	"strconv"
	"strings"
)

// ParseRDMALink reads iproute2's `rdma link` (`rdma link show`): a line
// per port, "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev
// eth2". No output means no RDMA devices.
func ParseRDMALink(data []byte) *RDMAReport {
	r, j, done := newRDMAReport(KindRDMALink, "rdma link", data)
	if done {
		return r
	}
	other := 0
	for _, l := range lines(data) {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case f[0] == "link" && len(f) >= 2:
			rdmaLinkLine(r, j, f[1], f[2:])
		default:
			other++
		}
	}
	if len(r.Devices) == 0 && other > 0 {
		j.unusable("not-rdma-link", "", "no \"link DEV/PORT\" line: this is not `rdma link` output")
	}
	return finishRDMA(r, j)
}

func rdmaLinkLine(r *RDMAReport, j *judge, devPort string, kv []string) {
	name, portText, ok := strings.Cut(devPort, "/")
	n, err := strconv.Atoi(portText)
	if !ok || err != nil || n < 0 || name == "" {
		return
	}
	d := r.device(j, name)
	if d == nil || len(d.Ports) >= maxRecords {
		return
	}
	p := d.port(n)
	for i := 0; i+1 < len(kv); i += 2 {
		switch v := kv[i+1]; kv[i] {
		case "state":
			p.State = v
		case "physical_state":
			p.PhysicalState = v
		case "netdev":
			p.Netdev = v
			d.Netdevs = append(d.Netdevs, v)
		}
	}
}

// ParseFIInfo reads libfabric's `fi_info -p efa` (any `fi_info` listing):
// a "provider: NAME" line per entry and its indented fabric, domain,
// version, type and protocol. The devices are the domains of provider
// "efa" without their "-rdm" / "-dgrm" suffix (utility layers such as
// "efa;ofi_rxd" wrap the same domains and add none). "fi_getinfo: -61 (No
// data available)" means no such provider here: no devices.
func ParseFIInfo(data []byte) *RDMAReport {
	r, j, done := newRDMAReport(KindFIInfo, "fi_info", data)
	if done {
		return r
	}
	noData := false
	for _, l := range lines(data) {
		t := strings.TrimSpace(l)
		key, value, ok := strings.Cut(t, ":")
		value = strings.TrimSpace(value)
		switch {
		case strings.HasPrefix(t, "fi_getinfo: -61") || strings.HasPrefix(t, "fi_getinfo: No data available"):
			noData = true
		case !ok:
		case key == "provider":
			if !j.room(len(r.Domains), "fi_info entries") {
				return finishRDMA(r, j)
			}
			r.Domains = append(r.Domains, FabricDomain{Provider: value})
		case len(r.Domains) > 0:
			setDomainKey(&r.Domains[len(r.Domains)-1], key, value)
		}
	}
	if len(r.Domains) == 0 && !noData {
		j.unusable("not-fi-info", "", "no provider line: this is not fi_info output")
	}
	for _, dom := range r.Domains {
		if dom.Provider == "efa" && dom.Domain != "" {
			if d := r.device(j, efaDomainDevice(dom.Domain)); d != nil {
				d.Kind = "efa"
			}
		}
	}
	return finishRDMA(r, j)
}

func setDomainKey(d *FabricDomain, key, value string) {
	switch key {
	case "fabric":
		d.Fabric = value
	case "domain":
		d.Domain = value
	case "version":
		d.Version = value
	case "type":
		d.Type = value
	case "protocol":
		d.Protocol = value
	}
}

// efaDomainDevice is the device of an EFA domain: "rdmap79s0-rdm" ->
// "rdmap79s0" (libfabric's efa provider names domains DEVICE + "-rdm" or
// "-dgrm").
func efaDomainDevice(domain string) string {
	for _, suffix := range []string{"-rdm", "-dgrm"} {
		if d, ok := strings.CutSuffix(domain, suffix); ok {
			return d
		}
	}
	return domain
}
