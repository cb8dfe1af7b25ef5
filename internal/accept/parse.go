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
// verdict on it ("ok", "fail", "unknown") with its findings, and the facts of
// its kind (only the field of its kind is set).
type Output struct {
	Kind     probe.Kind
	Verdict  diag.ReportVerdict
	Findings []diag.Finding
	SMI      *SMIFacts
	Topo     *TopoFacts
	NCCL     *NCCLFacts
	CUDA     *CUDAFacts
}

// SMIFacts are nvidia-smi's facts about the node's GPUs.
type SMIFacts struct {
	// Format is the shape probe read: "xml", "query", "table", "csv",
	// "list" (-L) or "nvlink" (nvlink -s); "nvml" for gpuctl probe nvml.
	Format        string
	DriverVersion string // "535.161.08"
	CUDAVersion   string // highest CUDA the driver supports, "12.2"
	AttachedGPUs  int
	GPUs          []GPUFacts
}

// GPUFacts describe one GPU as nvidia-smi (or NVML) reports it; "" where
// not reported.
type GPUFacts struct {
	Index          int
	Name           string // product name, "NVIDIA H100 80GB HBM3"
	BusID          string
	UUID           string
	Serial         string
	VBIOS          string
	InfoROM        string // InfoROM image version
	MemoryTotalMiB int
	MIGMode        string // current MIG mode: "Enabled", "Disabled", "N/A"
	Persistence    string
	PCIeGen        string // current link generation
	PCIeWidth      string // current link width, "16x"
	NVLinks        []NVLinkFacts
}

// NVLinkFacts is one NVLink of a GPU as `nvidia-smi nvlink -s` shows it.
type NVLinkFacts struct {
	Link   int
	Active bool
}

// TopoFacts are nvidia-smi topo -m's facts: the link class of each GPU pair
// ("NV18", "PIX", "SYS", ...), NICs and CPU/NUMA affinity per GPU.
type TopoFacts struct {
	GPUs        []string          // "GPU0" ...
	Links       map[string]string // "GPU0-GPU1" -> "NV18" (i < j)
	NICs        []string          // "NIC0" or device names
	CPUAffinity map[string]string // "GPU0" -> "0-47,96-143"
	NUMA        map[string]string // "GPU0" -> "0"
	// Matrix is the whole GPU/NIC matrix as the record carries it.
	Matrix *Topology
}

// NCCLFacts are an nccl-tests result: the largest message size (bytes) and
// its bus bandwidth (GB/s, the better of out-of-place and in-place, as probe
// reports it), the number of results (out-of-place or in-place, per size)
// that had wrong values (-1 when the test did not check), and the ranks.
type NCCLFacts struct {
	Ranks int
	// Hosts is the number of distinct hosts the ranks ran on (the "on HOST"
	// of the "Using devices" lines).
	Hosts            int
	LargestBytes     int64
	BusBandwidthGBps float64
	AvgBusbwGBps     float64
	Wrong            int
	Rows             int
	// PerSize is every result row (message size) in the output's order.
	PerSize []NCCLRow
}

// CUDAFacts are a CUDA sample's result.
type CUDAFacts struct {
	Passed  bool
	Devices int
}
