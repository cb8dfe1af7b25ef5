package record

import (
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// The record's types.
const (
	// PredicateType identifies gpuctl's acceptance predicate.
	PredicateType = "https://gpuctl.dev/acceptance/v1"
	// PayloadType is the DSSE payload type of an in-toto Statement.
	PayloadType = "application/vnd.in-toto+json"
	// PredicateFormatVersion is the version of the Predicate layout.
	PredicateFormatVersion = "1"
)

// Predicate is the acceptance record: the fields of a node acceptance
// record. JSON names are a contract.
type Predicate struct {
	FormatVersion string       `json:"formatVersion"`
	RunID         string       `json:"runID"`
	Verdict       diag.Verdict `json:"verdict"`
	Started       time.Time    `json:"started"`
	Finished      time.Time    `json:"finished"`
	Node          NodeFacts    `json:"node"`
	Hardware      Hardware     `json:"hardware"`
	Driver        DriverInfo   `json:"driver"`
	// GPUHealth lists the probe findings (warnings and errors) of inventory.
	GPUHealth    []diag.Finding `json:"gpuHealth"`
	Interconnect Interconnect   `json:"interconnect"`
	// Topology is topo -m's whole GPU/NIC matrix; nil when the topology
	// stage did not read one (and in records written before gpuctl kept it).
	Topology *Topology    `json:"topology,omitempty"`
	NCCL     *NCCLSummary `json:"nccl" jsonschema:"nullable"`
	DCGM     *DCGMSummary `json:"dcgm" jsonschema:"nullable"`
	// Network is the network stage's RDMA/EFA devices against the
	// machine's facts; nil when the stage did not run (and in records
	// written before it existed).
	Network *NetworkSummary `json:"network,omitempty"`
	// Framework is the framework stage's summary; nil when it did not run.
	Framework    *FrameworkSummary `json:"framework,omitempty"`
	Expectations Expectations      `json:"expectations"`
	Thresholds   Thresholds        `json:"thresholds"`
	Images       map[string]string `json:"images"`
	Stages       []StageResult     `json:"stages"`
	Gpuctl       Tool              `json:"gpuctl"`
	// Rejudged is set on a record made by `gpuctl accept --offline` from
	// saved evidence; nil on the record of a live run.
	Rejudged *Rejudged `json:"rejudged,omitempty"`
	// Previous links the node's previous record (accept --history); nil
	// when there was none.
	Previous *PreviousRecord `json:"previous,omitempty"`
	// Regressions is what got worse since the previous record.
	Regressions []Regression `json:"regressions,omitempty"`
	// Diagnostics is the diagnostics stage's verdict and reason: PASS when
	// it captured the evidence NVIDIA support asks for (after a FAIL, or
	// selected), INCONCLUSIVE when it could not; nil when it did not run.
	// It never changes Verdict.
	Diagnostics *StageSummary `json:"diagnostics,omitempty"`
	// EvidenceBundle is the run's evidence directory as one tar.gz
	// (accept --evidence-uri); nil without one.
	EvidenceBundle *EvidenceBundle `json:"evidenceBundle,omitempty"`
	// BaselinesMet says, for each figure the run held to a baseline, which
	// baseline it was and whether the figure met it (the nccl stage's
	// busbw, the network stage's RDMA port rate); absent when no figure
	// was held to one (and in records written before gpuctl kept it).
	BaselinesMet []BaselineMet `json:"baselinesMet,omitempty"`
}

// DCGMSummary is the dcgm stage's verdict and reason and the dcgmi diag
// run level it ran (1-4; 0 in records written before gpuctl kept it).
type DCGMSummary struct {
	Verdict diag.Verdict `json:"verdict"`
	Reason  string       `json:"reason"`
	Level   int          `json:"level,omitempty"`
}

// BaselineMet is one figure of a stage held to a baseline: the stage
// ("nccl", "network"), the figure ("busBandwidthGBps": the busbw at the
// largest message size; "portRateGbps": the least rate of the RDMA
// ports), its unit ("GB/s", "Gb/s"), the baseline by name ("h100-sxm-x8";
// "a3-ultragpu-8g rdma_nic_gbps" for the matrix's per-NIC rate) and where
// it comes from ("embedded", a --baselines file, "matrix"), the minimum
// and the figure measured (nil when the output did not show it), and Met.
// NotJudged says why a figure that has a baseline was not held to it (no
// published figure, a message size below the baseline's, a rate the
// output does not show); Met is false then.
type BaselineMet struct {
	Stage     Stage    `json:"stage"`
	Figure    string   `json:"figure"`
	Unit      string   `json:"unit"`
	Baseline  string   `json:"baseline"`
	Origin    string   `json:"origin,omitempty"`
	Minimum   float64  `json:"minimum"`
	Value     *float64 `json:"value" jsonschema:"nullable"`
	Met       bool     `json:"met"`
	NotJudged string   `json:"notJudged,omitempty"`
}

// EvidenceBundle is the evidence directory of a run as one deterministic
// tar.gz (sorted names, zero mtimes): its file name in that directory, its
// sha256 (lowercase hex) and size in bytes, and URI, where the operator
// stores it ("s3://bucket/path", "gs://..."; gpuctl uploads nothing).
type EvidenceBundle struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	URI    string `json:"uri"`
}

// SubjectName is the in-toto subject name of the record of node: "node/NAME".
// The subject's sha256 is HardwareDigest of the predicate's hardware.
func SubjectName(node string) string { return "node/" + node }

// Rejudged says that a record was re-judged offline from saved evidence,
// when, and that every evidence file still had the sha256 the live run
// recorded for it in run.json.
type Rejudged struct {
	At time.Time `json:"at"`
	// EvidenceUnchanged is true when every evidence file matched the live
	// run's hashes (Rejudge refuses evidence that does not).
	EvidenceUnchanged bool `json:"evidenceUnchanged"`
}

// NodeFacts are what the API says about the node, for the record.
type NodeFacts struct {
	Name             string `json:"name"`
	UID              string `json:"uid,omitempty"`
	ProviderID       string `json:"providerID,omitempty"`
	Pool             string `json:"pool,omitempty"`
	Zone             string `json:"zone,omitempty"`
	InstanceType     string `json:"instanceType,omitempty"`
	OSImage          string `json:"osImage,omitempty"`
	KernelVersion    string `json:"kernelVersion,omitempty"`
	Architecture     string `json:"architecture,omitempty"`
	ContainerRuntime string `json:"containerRuntime,omitempty"`
	Kubelet          string `json:"kubelet,omitempty"`
	// DevicePlugin and GPUOperator are the images of those pods on the node.
	DevicePlugin string `json:"devicePlugin,omitempty"`
	GPUOperator  string `json:"gpuOperator,omitempty"`
}

// Hardware identifies the GPUs. UUIDs, Serials, VBIOS and InfoROM are per GPU
// in nvidia-smi's order.
type Hardware struct {
	GPUProduct string   `json:"gpuProduct"`
	GPUCount   int      `json:"gpuCount"`
	UUIDs      []string `json:"uuids"`
	Serials    []string `json:"serials"`
	VBIOS      []string `json:"vbios"`
	InfoROM    []string `json:"inforom"`
	BusIDs     []string `json:"busIDs"`
}

// DriverInfo is the node's driver and the highest CUDA it supports.
type DriverInfo struct {
	Version string `json:"version"`
	CUDA    string `json:"cuda"`
}

// Interconnect records PCIe links per GPU, the GPU link classes and NICs.
type Interconnect struct {
	PCIe        []string          `json:"pcie"`
	GPULinks    []string          `json:"gpuLinks"`
	NICs        []string          `json:"nics"`
	NUMA        map[string]string `json:"numa"`
	CPUAffinity map[string]string `json:"cpuAffinity"`
}

// NCCLSummary is what the record keeps of the nccl stage: its verdict, the
// bus bandwidth (GB/s) at the largest message size (bytes), the results
// with wrong values, the baseline judged against (nil when none applied)
// and every row of the output. probe.NCCLReport is the parsed output it
// is made from.
type NCCLSummary struct {
	Verdict          diag.Verdict `json:"verdict"`
	BusBandwidthGBps float64      `json:"busBandwidthGBps"`
	LargestBytes     int64        `json:"largestBytes"`
	Wrong            int          `json:"wrong"`
	Baseline         *Baseline    `json:"baseline" jsonschema:"nullable"`
	BaselineOrigin   string       `json:"baselineOrigin,omitempty"`
	// Rows are all_reduce_perf's results, one per message size in the
	// output's order; absent when the output had none (and in records
	// written before gpuctl kept them).
	Rows []NCCLRow `json:"rows,omitempty"`
}

// NCCLRow is one message size of the nccl stage: its out-of-place and
// in-place results (nil where the output has no such half).
type NCCLRow struct {
	SizeBytes  int64            `json:"sizeBytes"`
	Count      int64            `json:"count"`
	Type       string           `json:"type"`
	OutOfPlace *NCCLMeasurement `json:"outOfPlace" jsonschema:"nullable"`
	InPlace    *NCCLMeasurement `json:"inPlace" jsonschema:"nullable"`
}

// NCCLMeasurement is one half of an NCCLRow: time in µs (omitted where the
// output does not give it), algorithm and bus bandwidth in GB/s (10^9
// bytes per second), and the validation value (wrong elements, or the
// largest error in old layouts; null when validation was off).
type NCCLMeasurement struct {
	TimeUs           float64  `json:"timeUs,omitempty"`
	AlgbwGBps        float64  `json:"algbwGBps"`
	BusBandwidthGBps float64  `json:"busbwGBps"`
	Wrong            *float64 `json:"wrong" jsonschema:"nullable"`
}

// Topology is nvidia-smi topo -m's matrix: Devices are its GPU then NIC
// columns in nvidia-smi's order ("GPU0", ..., "NIC0"), Matrix[i][j] the link
// between Devices[i] and Devices[j] as printed ("X" itself, "NV18", "PIX",
// "PXB", "PHB", "NODE", "SYS"; "" where the output had no such row), and
// NICNames the device of each NIC column the legend names ("NIC0" ->
// "mlx5_0").
type Topology struct {
	Devices  []string          `json:"devices"`
	Matrix   [][]string        `json:"matrix"`
	NICNames map[string]string `json:"nicNames"`
}

// NetworkSummary is what the network stage found: the RDMA/EFA devices
// (from sysfs, else the tools), how many the machine must have and of
// which kind, their ports, and the GPU-NIC pairs topo -m shows.
type NetworkSummary struct {
	Verdict diag.Verdict `json:"verdict"`
	Reason  string       `json:"reason"`
	// MachineType and Fabric are the matrix's ("p5.48xlarge", "efa");
	// Fabric is empty for a machine type the matrix does not know.
	MachineType string `json:"machineType"`
	Fabric      string `json:"fabric,omitempty"`
	// ExpectedKind ("efa", "mlx5") and ExpectedDevices are what the
	// machine must have (0 and "" where none is expected);
	// ExpectedRateGbps is each device's least port rate in Gb/s (0: not
	// judged).
	ExpectedKind     string  `json:"expectedKind,omitempty"`
	ExpectedDevices  int     `json:"expectedDevices"`
	ExpectedRateGbps float64 `json:"expectedRateGbps,omitempty"`
	// Source names where Devices come from ("sysfs", "fi_info", ...).
	Source    string          `json:"source"`
	Devices   []NetworkDevice `json:"devices"`
	PortsUp   int             `json:"portsUp"`
	PortsDown int             `json:"portsDown"`
	// Tools says for each tool what it showed: "32 devices", "not in
	// image", "cannot open devices".
	Tools map[string]string `json:"tools"`
	// GPUNICs maps each GPU of topo -m to the NICs at PIX or PXB
	// ("GPU0" -> ["NIC0 (mlx5_0)"]); empty when topo -m lists no NICs.
	GPUNICs map[string][]string `json:"gpuNICs"`
}

// NetworkDevice is one RDMA device: name, kind ("efa", "mlx5": the
// kernel driver family the device's vendor or name shows), PCI address,
// NUMA node (nil: none shown) and ports, and what the node shows of its
// model and firmware, each "" where no output showed it: Model is sysfs's
// hca_type ("MT4129"), VendorID and DeviceID the PCI IDs ("0x15b3",
// "0x1021"; ibv_devinfo's vendor_id and vendor_part_id), Firmware fw_ver
// ("28.39.1002") and BoardID ibv_devinfo's board_id ("MT_0000000327").
type NetworkDevice struct {
	Name       string        `json:"name"`
	Kind       string        `json:"kind"`
	PCIAddress string        `json:"pciAddress,omitempty"`
	NUMANode   *int          `json:"numaNode" jsonschema:"nullable"`
	Ports      []NetworkPort `json:"ports"`
	Model      string        `json:"model,omitempty"`
	VendorID   string        `json:"vendorID,omitempty"`
	DeviceID   string        `json:"deviceID,omitempty"`
	Firmware   string        `json:"firmware,omitempty"`
	BoardID    string        `json:"boardID,omitempty"`
}

// NetworkPort is a port's state ("ACTIVE", "DOWN"), rate in Gb/s (nil:
// not shown) and link layer ("Ethernet", "InfiniBand", "Unknown").
type NetworkPort struct {
	Port      int      `json:"port"`
	State     string   `json:"state"`
	RateGbps  *float64 `json:"rateGbps" jsonschema:"nullable"`
	LinkLayer string   `json:"linkLayer,omitempty"`
}

// FrameworkSummary is what the record keeps of the framework stage
// (gpuctl's PyTorch checks): its verdict and reason, the torch and CUDA
// versions that ran them, on what device and backend, over how many ranks
// and nodes, and each check.
type FrameworkSummary struct {
	Verdict diag.Verdict     `json:"verdict"`
	Reason  string           `json:"reason"`
	Torch   string           `json:"torch"`
	CUDA    string           `json:"cuda"`
	Device  string           `json:"device"`
	Backend string           `json:"backend"`
	World   int              `json:"world"`
	Nodes   int              `json:"nodes"`
	Checks  []FrameworkCheck `json:"checks"`
}

// FrameworkCheck is one framework check: its verdict over every rank, the
// device of the rank it reports on (the first failing one, else rank 0),
// its duration in ms (the slowest rank's), that rank's numeric measurements
// and the thresholds they were held to (booleans as 1 or 0; keys as the
// script prints them: maxRelErr, lossRatio, msPerStep, stepsPerSecond,
// mismatched, latencyMs ...), and the exception of a check that raised one
// ("RuntimeError: ...").
type FrameworkCheck struct {
	Name         string             `json:"name"`
	OK           bool               `json:"ok"`
	Device       string             `json:"device"`
	DurationMs   float64            `json:"durationMs"`
	Measurements map[string]float64 `json:"measurements"`
	Thresholds   map[string]float64 `json:"thresholds"`
	Error        string             `json:"error,omitempty"`
}

// StageSummary is a stage's verdict and reason.
type StageSummary struct {
	Verdict diag.Verdict `json:"verdict"`
	Reason  string       `json:"reason"`
}

// Thresholds are the limits the run used.
type Thresholds struct {
	StageTimeoutSeconds int64  `json:"stageTimeoutSeconds"`
	RunTimeoutSeconds   int64  `json:"runTimeoutSeconds"`
	NCCLMaxBytes        string `json:"ncclMaxBytes"`
	DCGMLevel           int    `json:"dcgmLevel,omitempty"`
	Baselines           string `json:"baselines"`
	BaselinesAsOf       string `json:"baselinesAsOf"`
	// Framework are the framework checks' thresholds, "CHECK.KEY" ->
	// value ("matmul.maxRelErr": 0.0001, "training.maxLossRatio": 0.5);
	// absent when the stage did not run.
	Framework map[string]float64 `json:"framework,omitempty"`
}

// Tool identifies the gpuctl that made the record.
type Tool struct {
	Version string `json:"version"`
}

// PreviousRecord links a record to the node's previous record: its run, the
// sha256 of the previous record's file ("sha256:HEX") and its verdict.
type PreviousRecord struct {
	RunID   string       `json:"runID"`
	Digest  string       `json:"digest"`
	Verdict diag.Verdict `json:"verdict"`
}

// Regression is something that got worse since the previous record.
type Regression struct {
	// Kind is a stable ID: busbw-dropped, gpu-health-new, driver-changed,
	// firmware-changed, gpu-identity-changed.
	Kind    string `json:"kind"`
	Message string `json:"message"`
}
