package accept

import (
	"fmt"
)

// baselinesMet are the figures of a predicate that were held to a
// baseline, in stage order: the nccl stage's busbw at the largest message
// size against its baseline's minimum, and the network stage's least RDMA
// port rate against the matrix's rdma_nic_gbps of the machine type. A
// figure without a baseline has no entry; nil when none has one.
func baselinesMet(p *Predicate) []BaselineMet {
	var out []BaselineMet
	for _, m := range []*BaselineMet{ncclBaselineMet(p.NCCL), networkBaselineMet(p.Network)} {
		if m != nil {
			out = append(out, *m)
		}
	}
	return out
}

// ncclBaselineMet is the nccl stage's busbw against the baseline it was
// judged by; nil when none applied (no baseline for the SKU, or the
// results were wrong before a baseline was looked up).
func ncclBaselineMet(n *NCCLSummary) *BaselineMet {
	if n == nil || n.Baseline == nil {
		return nil
	}
	b, v := n.Baseline, n.BusBandwidthGBps
	m := &BaselineMet{Stage: StageNCCL, Figure: "busBandwidthGBps", Unit: "GB/s", Baseline: b.SKU, Origin: n.BaselineOrigin,
		Minimum: b.MinBusBandwidthGBps, Value: &v}
	switch {
	case b.NoFigure != "":
		m.NotJudged = "no published figure: " + b.NoFigure
	case n.LargestBytes < b.MinBytes:
		m.NotJudged = fmt.Sprintf("largest message %s is below the baseline's %s", humanBytes(n.LargestBytes), humanBytes(b.MinBytes))
	default:
		m.Met = v >= b.MinBusBandwidthGBps
	}
	return m
}

// networkBaselineMet is the least rate of the network stage's RDMA ports
// against the per-NIC rate the matrix gives the machine type
// (rdma_nic_gbps); nil when the stage held no rate to one.
func networkBaselineMet(n *NetworkSummary) *BaselineMet {
	if n == nil || n.ExpectedRateGbps <= 0 {
		return nil
	}
	m := &BaselineMet{Stage: StageNetwork, Figure: "portRateGbps", Unit: "Gb/s", Baseline: n.MachineType + " rdma_nic_gbps",
		Origin: "matrix", Minimum: n.ExpectedRateGbps}
	least, unshown := leastPortRate(n.Devices)
	switch {
	case unshown != "":
		m.NotJudged = "rate not shown for " + unshown
	case least == nil:
		m.NotJudged = "no RDMA port shown"
	default:
		m.Value, m.Met = least, *least >= n.ExpectedRateGbps
	}
	return m
}

// leastPortRate is the lowest rate of the devices' ports (nil: no port),
// or the first device with a port whose rate is not shown.
func leastPortRate(devs []NetworkDevice) (least *float64, unshown string) {
	for _, d := range devs {
		for _, p := range d.Ports {
			if p.RateGbps == nil {
				return nil, d.Name
			}
			if least == nil || *p.RateGbps < *least {
				r := *p.RateGbps
				least = &r
			}
		}
	}
	return least, ""
}
