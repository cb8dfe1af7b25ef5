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
		o.SMI = smiFacts(r)
	case *probe.NVMLReport:
		// NVML's GPU records have nvidia-smi's shape, NVLinks included.
		o.SMI = smiFacts(&probe.SMIReport{Format: "nvml", DriverVersion: r.DriverVersion, CUDAVersion: r.CUDAVersion,
			AttachedGPUs: r.AttachedGPUs, GPUs: r.GPUs})
	case *probe.TopoReport:
		o.Topo = topoFacts(r)
	case *probe.NCCLReport:
		o.NCCL = ncclFacts(r)
	case *probe.CUDAReport:
		o.CUDA = &CUDAFacts{Passed: r.Result == "PASS"}
		if r.Devices != nil {
			o.CUDA.Devices = *r.Devices
		}
	case *probe.DCGMReport, *probe.DmesgReport:
		// The verdict and findings are all the stage uses.
	default:
		return nil, fmt.Errorf("unexpected %T for kind %s", rep, kind)
	}
	return o, nil
}

func smiFacts(r *probe.SMIReport) *SMIFacts {
	f := &SMIFacts{Format: r.Format, DriverVersion: r.DriverVersion, CUDAVersion: r.CUDAVersion, AttachedGPUs: len(r.GPUs)}
	if r.AttachedGPUs != nil {
		f.AttachedGPUs = *r.AttachedGPUs
	}
	for _, g := range r.GPUs {
		gf := GPUFacts{Index: g.Index, Name: g.Name, BusID: g.BusID, UUID: g.UUID, Serial: g.Serial, VBIOS: g.VBIOS,
			InfoROM: g.InfoROMImage, MIGMode: g.MIGMode, Persistence: g.PersistenceMode}
		for _, l := range g.NVLinks {
			gf.NVLinks = append(gf.NVLinks, NVLinkFacts{Link: l.Link, Active: l.Active})
		}
		if g.MemoryTotalMiB != nil {
			gf.MemoryTotalMiB = int(*g.MemoryTotalMiB)
		}
		if g.PCIeGenCurrent != nil {
			gf.PCIeGen = strconv.Itoa(*g.PCIeGenCurrent)
		}
		if g.PCIeWidthCurrent != nil {
			gf.PCIeWidth = strconv.Itoa(*g.PCIeWidthCurrent) + "x"
		}
		f.GPUs = append(f.GPUs, gf)
	}
	return f
}

func topoFacts(r *probe.TopoReport) *TopoFacts {
	t := &TopoFacts{GPUs: r.GPUs, Links: map[string]string{}, CPUAffinity: r.CPUAffinity, NUMA: r.NUMAAffinity, Matrix: topologyOf(r)}
	for i, a := range r.GPUs {
		for _, b := range r.GPUs[i+1:] {
			if l := r.Link(a, b); l != "" {
				t.Links[a+"-"+b] = l
			}
		}
	}
	for _, n := range r.NICs {
		if dev := r.NICNames[n]; dev != "" && dev != n {
			n += " (" + dev + ")"
		}
		t.NICs = append(t.NICs, n)
	}
	return t
}

func ncclFacts(r *probe.NCCLReport) *NCCLFacts {
	f := &NCCLFacts{Ranks: r.Ranks, Rows: len(r.Rows), Wrong: -1}
	hosts := map[string]bool{}
	for _, d := range r.Devices {
		if d.Host != "" {
			hosts[d.Host] = true
		}
	}
	f.Hosts = len(hosts)
	if r.LargestSizeBytes != nil {
		f.LargestBytes = *r.LargestSizeBytes
	}
	if r.BusBandwidthAtLargestSizeGBps != nil {
		f.BusBandwidthGBps = *r.BusBandwidthAtLargestSizeGBps
	}
	if r.AvgBusBandwidthGBps != nil {
		f.AvgBusbwGBps = *r.AvgBusBandwidthGBps
	}
	f.PerSize = make([]NCCLRow, 0, len(r.Rows))
	for _, row := range r.Rows {
		f.PerSize = append(f.PerSize, NCCLRow{SizeBytes: row.SizeBytes, Count: row.Count, Type: row.Type,
			OutOfPlace: measurementOf(row.OutOfPlace), InPlace: measurementOf(row.InPlace)})
		for _, res := range []*probe.NCCLResult{row.OutOfPlace, row.InPlace} {
			if res == nil || res.Wrong == nil {
				continue
			}
			if f.Wrong < 0 {
				f.Wrong = 0
			}
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
