package accept

import (
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// Parser turns one raw probe output into Output. Parsing and the health
// verdict of a single output belong to internal/probe; ProbeParser adapts it.
// Tests substitute their own.
type Parser interface {
	Parse(kind probe.Kind, data []byte) (*Output, error)
}

// ParserFunc adapts a function to Parser.
type ParserFunc func(kind probe.Kind, data []byte) (*Output, error)

// Parse calls f.
func (f ParserFunc) Parse(kind probe.Kind, data []byte) (*Output, error) { return f(kind, data) }

// Output is what acceptance needs from one parsed output: the parser's own
// verdict on it ("ok", "fail", "unknown") with its findings, and probe's
// report of its kind (only the field of its kind is set; NVML's report is
// read as nvidia-smi's, Format "nvml": its GPU records have nvidia-smi's
// shape, NVLinks included).
type Output struct {
	Kind     probe.Kind
	Verdict  diag.ReportVerdict
	Findings []diag.Finding
	SMI      *probe.SMIReport
	Topo     *probe.TopoReport
	NCCL     *probe.NCCLReport
	CUDA     *probe.CUDAReport
	// RDMA is the network stage's sysfs dump, ibv_devinfo, rdma link or
	// fi_info.
	RDMA *probe.RDMAReport
	// Framework is gpuctl's PyTorch checks' report (the framework stage).
	Framework *probe.FrameworkReport
}
