package accept

import (
	"fmt"
	"strconv"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// ProbeParser returns the Parser backed by internal/probe: the same parsers and
// health judgement as `gpuctl parse`, so a stage reads any shape of its
// tool's output that probe reads (nvidia-smi -q -x, -q text, the table...).
func ProbeParser() Parser { return ParserFunc(parseWithProbe) }

func parseWithProbe(kind probe.Kind, data []byte) (*Output, error) {
	rep, err := probe.Parse(kind, data)
	if err != nil {
		return nil, err
	}
	h := rep.Common()
	o := &Output{Kind: kind, Verdict: h.Verdict, Findings: append([]diag.Finding(nil), h.Findings...)}
	switch r := rep.(type) {
	case *probe.SMIReport:
		o.SMI = r
	case *probe.NVMLReport:
		o.SMI = &probe.SMIReport{Format: "nvml", DriverVersion: r.DriverVersion, CUDAVersion: r.CUDAVersion,
			AttachedGPUs: r.AttachedGPUs, GPUs: r.GPUs}
	case *probe.TopoReport:
		o.Topo = r
	case *probe.NCCLReport:
		o.NCCL = r
	case *probe.CUDAReport:
		o.CUDA = r
	case *probe.RDMAReport:
		o.RDMA = r
	case *probe.FrameworkReport:
		o.Framework = r
	case *probe.DCGMReport, *probe.DmesgReport:
		// The verdict and findings are all the stage uses.
	default:
		return nil, fmt.Errorf("unexpected %T for kind %s", rep, kind)
	}
	return o, nil
}

// pcieLink is a GPU's current PCIe link as the record lists it ("GPU 0:
// gen 5 16x"); "" when nvidia-smi showed neither generation nor width.
func pcieLink(g probe.SMIGPU) string {
	gen, width := "", ""
	if g.PCIeGenCurrent != nil {
		gen = strconv.Itoa(*g.PCIeGenCurrent)
	}
	if g.PCIeWidthCurrent != nil {
		width = strconv.Itoa(*g.PCIeWidthCurrent) + "x"
	}
	if gen == "" && width == "" {
		return ""
	}
	return fmt.Sprintf("GPU %d: gen %s %s", g.Index, gen, width)
}

// gpuPairLinks maps each pair of GPUs topo -m links ("GPU0-GPU1", the
// first before the second in the matrix's order) to its link ("NV18").
func gpuPairLinks(r *probe.TopoReport) map[string]string {
	links := map[string]string{}
	for i, a := range r.GPUs {
		for _, b := range r.GPUs[i+1:] {
			if l := r.Link(a, b); l != "" {
				links[a+"-"+b] = l
			}
		}
	}
	return links
}

// nicLabels are topo -m's NIC columns with the device the legend names
// ("NIC0 (mlx5_0)").
func nicLabels(r *probe.TopoReport) []string {
	var nics []string
	for _, n := range r.NICs {
		if dev := r.NICNames[n]; dev != "" && dev != n {
			n += " (" + dev + ")"
		}
		nics = append(nics, n)
	}
	return nics
}

// ncclHosts is the number of distinct hosts the ranks ran on (the "on
// HOST" of the "Using devices" lines).
func ncclHosts(r *probe.NCCLReport) int {
	hosts := map[string]bool{}
	for _, d := range r.Devices {
		if d.Host != "" {
			hosts[d.Host] = true
		}
	}
	return len(hosts)
}

// ncclSummary is what the record keeps of an nccl-tests result: the bus
// bandwidth (GB/s, the better of out-of-place and in-place, as probe
// reports it) at the largest message size (bytes), the number of results
// (out-of-place or in-place, per size) with wrong values (-1 when the test
// did not check) and every row. Verdict and baseline are the judge's.
func ncclSummary(r *probe.NCCLReport) *NCCLSummary {
	f := &NCCLSummary{Wrong: -1, Rows: make([]NCCLRow, 0, len(r.Rows))}
	if r.LargestSizeBytes != nil {
		f.LargestBytes = *r.LargestSizeBytes
	}
	if r.BusBandwidthAtLargestSizeGBps != nil {
		f.BusBandwidthGBps = *r.BusBandwidthAtLargestSizeGBps
	}
	for _, row := range r.Rows {
		f.Rows = append(f.Rows, NCCLRow{SizeBytes: row.SizeBytes, Count: row.Count, Type: row.Type,
			OutOfPlace: measurementOf(row.OutOfPlace), InPlace: measurementOf(row.InPlace)})
		for _, res := range []*probe.NCCLResult{row.OutOfPlace, row.InPlace} {
			if res == nil || res.Wrong == nil {
				continue
			}
			f.Wrong = max(f.Wrong, 0)
			if *res.Wrong > 0 {
				f.Wrong++
			}
		}
	}
	return f
}

func measurementOf(r *probe.NCCLResult) *NCCLMeasurement {
	if r == nil {
		return nil
	}
	m := &NCCLMeasurement{TimeUs: r.TimeUs, AlgbwGBps: r.AlgbwGBps, BusBandwidthGBps: r.BusBandwidthGBps}
	if r.Wrong != nil {
		w := *r.Wrong
		m.Wrong = &w
	}
	return m
}

// topologyOf is the record's form of topo -m: the GPU and NIC columns in
// nvidia-smi's order and the link of every pair, "" where a row is missing.
func topologyOf(r *probe.TopoReport) *Topology {
	t := &Topology{Devices: append(append([]string{}, r.GPUs...), r.NICs...), NICNames: map[string]string{}}
	t.Matrix = make([][]string, len(t.Devices))
	for i, a := range t.Devices {
		t.Matrix[i] = make([]string, len(t.Devices))
		for j, b := range t.Devices {
			t.Matrix[i][j] = r.Link(a, b)
		}
	}
	for _, n := range r.NICs {
		if dev := r.NICNames[n]; dev != "" && dev != n {
			t.NICNames[n] = dev
		}
	}
	return t
}
