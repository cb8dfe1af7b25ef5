package cli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// probeView is the table view of a probe report.
func probeView(r probe.Report) render.ProbeView {
	h := r.Common()
	// label is the kind, with the shape read where the kind has several.
	label, sum := string(h.Kind), ""
	var detail []render.Table
	var curve *render.BusbwCurve
	switch x := r.(type) {
	case *probe.SMIReport:
		label += " (" + x.Format + ")"
		sum = smiSummary(x.DriverVersion, x.CUDAVersion, x.AttachedGPUs, len(x.GPUs), x.Error)
		detail = append(detail, gpuTable(x.GPUs))
	case *probe.NVMLReport:
		sum = smiSummary(x.DriverVersion, x.CUDAVersion, x.AttachedGPUs, len(x.GPUs), x.Error)
		detail = append(detail, gpuTable(x.GPUs))
	case *probe.TopoReport:
		sum = fmt.Sprintf("%d GPUs, %d NICs", len(x.GPUs), len(x.NICs))
		detail = append(detail, topoTable(x))
	case *probe.NCCLReport:
		label += " (" + x.Format + ")"
		sum = ncclSummary(x)
		detail = append(detail, ncclTable(x))
		curve = ncclCurve(x)
	case *probe.CUDAReport:
		sum = fmt.Sprintf("%s: %s, %s devices, CUDA driver/runtime %s/%s", orDash(x.Program), orDash(x.Result), intp(x.Devices), orDash(x.DriverVersion), orDash(x.RuntimeVersion))
		detail = append(detail, cudaTable(x))
	case *probe.DCGMReport:
		label += " (" + x.Format + ")"
		sum = fmt.Sprintf("DCGM %s, driver %s: %s", orDash(x.Version), orDash(x.DriverVersion), orDash(x.Result))
		t := render.Table{Title: "tests", Headers: []string{"CATEGORY", "TEST", "RESULT", "DETAIL"}}
		for _, tt := range x.Tests {
			t.Rows = append(t.Rows, []string{tt.Category, tt.Name, tt.Result, tt.Detail})
		}
		detail = append(detail, t)
	case *probe.DmesgReport:
		sum = fmt.Sprintf("%d lines (%s timestamps), %d XID groups, %d GPUs off the bus, probe failed: %v", x.Lines, x.TimestampStyle, len(x.XIDs), len(x.FallenOffBus), x.ProbeFailed)
		t := render.Table{Title: "xids", Headers: []string{"XID", "GPU", "COUNT", "CLASS", "DESCRIPTION"}}
		for _, e := range x.XIDs {
			t.Rows = append(t.Rows, []string{strconv.Itoa(e.Code), e.BusID, strconv.Itoa(e.Count), e.Class, e.Description})
		}
		detail = append(detail, t)
	case *probe.FrameworkReport:
		sum = frameworkSummary(x)
		detail = append(detail, frameworkTable(x))
	case *probe.ComponentLogReport:
		sum = orDash(x.Component)
		if x.Failure != nil {
			sum += ": " + x.Failure.Kind
		}
	}
	return render.ProbeView{Label: label, Verdict: h.Verdict, Summary: sum, Details: detail, Findings: h.Findings, Curve: curve}
}

func smiSummary(driver, cuda string, attached *int, gpus int, e *probe.SMIError) string {
	s := fmt.Sprintf("driver %s, CUDA %s, %d of %s GPUs shown", orDash(driver), orDash(cuda), gpus, intp(attached))
	if e != nil {
		s += "; error " + e.Kind + ": " + e.Message
	}
	return s
}

func gpuTable(gpus []probe.SMIGPU) render.Table {
	t := render.Table{Title: "gpus", Headers: []string{"GPU", "BUS", "NAME", "MEM(MiB)", "ECC", "ECC-UNC(VOL/AGG)", "REMAP(PEND/FAIL)", "PCIE(CUR/MAX)", "UTIL%", "TEMP(C)", "POWER(W)", "MIG"}}
	for _, g := range gpus {
		t.Rows = append(t.Rows, []string{
			strconv.Itoa(g.Index), g.BusID, g.Name, int64p(g.MemoryTotalMiB), boolp(g.ECCEnabled),
			int64p(g.ECCUncorrectedVolatile) + "/" + int64p(g.ECCUncorrectedAggregate),
			boolp(g.RowRemapPending) + "/" + boolp(g.RowRemapFailure),
			"gen" + intp(g.PCIeGenCurrent) + " x" + intp(g.PCIeWidthCurrent) + "/gen" + intp(g.PCIeGenMax) + " x" + intp(g.PCIeWidthMax),
			intp(g.UtilizationGPUPercent), intp(g.TemperatureC), floatp(g.PowerDrawW), g.MIGMode,
		})
	}
	return t
}

func topoTable(x *probe.TopoReport) render.Table {
	cols := append(append([]string{}, x.GPUs...), x.NICs...)
	t := render.Table{Title: "matrix", Headers: append(append([]string{""}, cols...), "CPU AFFINITY", "NUMA AFFINITY")}
	rows := make([]string, 0, len(x.Matrix))
	for r := range x.Matrix {
		rows = append(rows, r)
	}
	order := map[string]int{}
	for i, c := range cols {
		order[c] = i
	}
	sort.Slice(rows, func(i, j int) bool { return order[rows[i]] < order[rows[j]] })
	for _, r := range rows {
		row := []string{r}
		for _, c := range cols {
			row = append(row, x.Matrix[r][c])
		}
		t.Rows = append(t.Rows, append(row, x.CPUAffinity[r], x.NUMAAffinity[r]))
	}
	return t
}

func ncclSummary(x *probe.NCCLReport) string {
	s := fmt.Sprintf("%s, %d ranks, %d sizes", orDash(x.Collective), x.Ranks, len(x.Rows))
	if x.BusBandwidthAtLargestSizeGBps != nil {
		s += fmt.Sprintf(", busbw %.2f GB/s at %d B", *x.BusBandwidthAtLargestSizeGBps, *x.LargestSizeBytes)
	}
	if x.AvgBusBandwidthGBps != nil {
		s += fmt.Sprintf(", average %s GB/s", floatp(x.AvgBusBandwidthGBps))
	}
	if len(x.Errors) > 0 {
		s += "; " + strings.Join(x.Errors, "; ")
	}
	return s
}

// ncclCurve is the report's busbw by size (the better half of each row),
// for the terminal's sparkline; nil without rows.
func ncclCurve(x *probe.NCCLReport) *render.BusbwCurve {
	if len(x.Rows) == 0 {
		return nil
	}
	c := &render.BusbwCurve{}
	for _, r := range x.Rows {
		pt := render.CurvePoint{SizeBytes: r.SizeBytes}
		for _, h := range []*probe.NCCLResult{r.OutOfPlace, r.InPlace} {
			if h != nil && h.BusBandwidthGBps > pt.BusBandwidthGBps {
				pt.BusBandwidthGBps = h.BusBandwidthGBps
			}
		}
		c.Points = append(c.Points, pt)
	}
	return c
}

func ncclTable(x *probe.NCCLReport) render.Table {
	t := render.Table{Title: "results", Headers: []string{"SIZE(B)", "COUNT", "TYPE", "REDOP", "ROOT", "OOP-TIME(us)", "OOP-BUSBW(GB/s)", "OOP-WRONG", "IP-TIME(us)", "IP-BUSBW(GB/s)", "IP-WRONG"}}
	half := func(r *probe.NCCLResult) []string {
		if r == nil {
			return []string{"-", "-", "-"}
		}
		return []string{strconv.FormatFloat(r.TimeUs, 'f', -1, 64), strconv.FormatFloat(r.BusBandwidthGBps, 'f', 2, 64), floatp(r.Wrong)}
	}
	for _, r := range x.Rows {
		row := []string{strconv.FormatInt(r.SizeBytes, 10), strconv.FormatInt(r.Count, 10), r.Type, r.Redop, intp(r.Root)}
		row = append(row, half(r.OutOfPlace)...)
		t.Rows = append(t.Rows, append(row, half(r.InPlace)...))
	}
	return t
}

func cudaTable(x *probe.CUDAReport) render.Table {
	t := render.Table{Title: "devices", Headers: []string{"DEVICE", "NAME", "CAPABILITY", "MEM(MiB)", "SMs", "CORES", "ECC", "PCI BUS"}}
	for _, d := range x.DeviceInfo {
		t.Rows = append(t.Rows, []string{strconv.Itoa(d.Index), d.Name, d.ComputeCapability, int64p(d.TotalMemoryMiB), intp(d.Multiprocessors), intp(d.CUDACores), boolp(d.ECCEnabled), intp(d.PCIBus)})
	}
	return t
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func intp(p *int) string {
	if p == nil {
		return "?"
	}
	return strconv.Itoa(*p)
}

func int64p(p *int64) string {
	if p == nil {
		return "?"
	}
	return strconv.FormatInt(*p, 10)
}

func floatp(p *float64) string {
	if p == nil {
		return "?"
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

func boolp(p *bool) string {
	switch {
	case p == nil:
		return "?"
	case *p:
		return "yes"
	}
	return "no"
}

// frameworkSummary is the framework checks' one line: torch, where they
// ran and how many passed.
func frameworkSummary(x *probe.FrameworkReport) string {
	passed := 0
	for _, c := range x.Checks {
		if c.OK {
			passed++
		}
	}
	return fmt.Sprintf("torch %s (CUDA %s) on %d %s ranks, %d nodes, %s: %d of %d checks ok", orDash(x.Torch), orDash(x.CUDA), x.World, orDash(x.Device), x.Nodes, orDash(x.Backend), passed, len(x.Checks))
}

// frameworkTable lists each check with the rank it reports on.
func frameworkTable(x *probe.FrameworkReport) render.Table {
	t := render.Table{Title: "checks", Headers: []string{"CHECK", "OK", "DEVICE", "RANK", "MS", "ERROR"}}
	for _, c := range x.Checks {
		e := ""
		if c.Error != nil {
			e = c.Error.Class + ": " + c.Error.Message
		}
		t.Rows = append(t.Rows, []string{c.Name, strconv.FormatBool(c.OK), orDash(c.Device), strconv.Itoa(c.Rank), strconv.FormatFloat(c.DurationMs, 'f', 1, 64), e})
	}
	return t
}
