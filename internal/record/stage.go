package record

import (
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// Stage names one acceptance stage as the record carries it ("inventory",
// "nccl", ...). What each stage runs and how it is judged is accept's
// stage table.
type Stage string

// Evidence is one saved raw output of a stage: a file name relative to the
// evidence directory, its sha256 (lowercase hex) and its size in bytes.
type Evidence struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// StageResult is the outcome of one stage. Reason is always set, also for
// PASS (what was checked). Facts are the values the stage established that
// end up in the record (for example the driver version); their keys are
// stable names.
type StageResult struct {
	Name     Stage             `json:"name"`
	Verdict  diag.Verdict      `json:"verdict"`
	Reason   string            `json:"reason"`
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Image    string            `json:"image,omitempty"`
	Evidence []Evidence        `json:"evidence"`
	Facts    map[string]string `json:"facts,omitempty"`
	// Cause says what the verdict is about: node, harness, cluster or
	// interrupted ("" for SKIPPED).
	Cause string `json:"cause,omitempty"`
}

// The facts of a fleet stage's result (nccl-multi, framework-multi): keys
// of StageResult.Facts that say what the node's groups measured, so that
// a record shows it without its groups evidence file.
const (
	// FactMultiGroups names the node's groups ("RUN-m0,RUN-m3").
	FactMultiGroups = "groups"
	// FactMultiPeers are the other nodes of the node's groups, in natural
	// order ("gpu-node-2,gpu-node-4"); absent when there are more than 8
	// (FactMultiNodes counts them then).
	FactMultiPeers = "peers"
	// FactMultiNodes counts the nodes of the node's groups, itself
	// included.
	FactMultiNodes = "nodes"
	// FactMultiBusBW is the lowest busbw (GB/s, two decimals) of the
	// node's groups that measured one, FactMultiLargest its message size
	// (bytes), FactMultiBusBWGroup the group that measured it and
	// FactMultiTransport the NCCL network its ranks used (absent when the
	// output did not say). All four are absent when no group measured a
	// busbw (framework-multi never does).
	FactMultiBusBW      = "busBandwidthGBps"
	FactMultiLargest    = "largestBytes"
	FactMultiBusBWGroup = "busBandwidthGroup"
	FactMultiTransport  = "transport"
)

// Expectations are what the node should be. Empty fields are not checked.
type Expectations struct {
	// Source says where the expectations come from: "spec FILE (env E, pool P)",
	// "machine catalogue (TYPE)", "node labels (GPU Feature Discovery)" or
	// "node capacity".
	Source string `json:"source"`
	// GPUProduct is the expected GPU product name, matched with
	// accept.ProductMatches (matrix.SameGPU).
	GPUProduct string `json:"gpuProduct,omitempty"`
	// GPUCount is the expected number of whole GPUs.
	GPUCount int `json:"gpuCount,omitempty"`
	// DriverVersion is the expected driver, exact ("535.161.08") or a prefix
	// of whole components ("535").
	DriverVersion string `json:"driverVersion,omitempty"`
	// DriverMin is the oldest driver accepted ("550.54.15"), compared as
	// dotted numbers (535.161.08 is older than 550); empty: not checked.
	DriverMin string `json:"driverMin,omitempty"`
	// Taints the node must carry (from the spec's node pool).
	Taints []Taint `json:"taints,omitempty"`
	// InstanceType is the machine/instance type the expectations are for.
	InstanceType string `json:"instanceType,omitempty"`
	// NCCLEnv are the NCCL variables of the spec's pool (its GPU network's
	// transport, under the pool's nccl.env, which wins): the nccl-multi
	// ranks run with them. Empty without a spec.
	NCCLEnv map[string]string `json:"ncclEnv,omitempty"`
	// Provider is the spec's cloud (gke, eks); empty without a spec.
	Provider string `json:"provider,omitempty"`
	// EFAInterfaces is the EFA interfaces of each node of the spec's EKS
	// pool (efa.interfaces, else the instance type's network cards); 0
	// without EFA or a spec.
	EFAInterfaces int `json:"efaInterfaces,omitempty"`
	// GPUNetworks are the GKE Network objects of the spec's pool's GPU NICs
	// (GPUDirect-TCPX/TCPXO, RDMA), in interface order: the nccl-multi rank
	// pods attach them. Empty without a spec or such NICs.
	GPUNetworks []GPUNetwork `json:"gpuNetworks,omitempty"`
}

// GPUNetwork is one GPU NIC of a GKE pod: its interface in the pod and the
// GKE Network object it attaches to.
type GPUNetwork struct {
	Interface string `json:"interface"`
	Object    string `json:"object"`
}

// Taint is a node taint the expectations require, in the JSON of a
// Kubernetes taint: key, value (omitted when empty) and effect
// ("NoSchedule", "PreferNoSchedule", "NoExecute").
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// Baseline is the expected single-node NCCL all_reduce_perf result and the
// GPU link class of one GPU SKU. The embedded set comes from package matrix
// (matrix.NCCLBaselines); --baselines FILE gives the same fields in YAML.
type Baseline struct {
	SKU         string `json:"sku"`
	Description string `json:"description,omitempty"`
	// GPU is the matrix product ID of the SKU ("H100-SXM"); empty in files
	// that do not say.
	GPU string `json:"gpu,omitempty"`
	// GPUMatch lists substrings of the GPU product name (as nvidia-smi or the
	// GFD label prints it; '-' and ' ' are treated alike) that identify the SKU.
	GPUMatch []string `json:"gpu_match"`
	// GPUs is the GPU count of the node the baseline applies to.
	GPUs int `json:"gpus"`
	// GPULink is the GPU<->GPU link class topo -m shows on every pair ("NV18");
	// empty when not fixed for the SKU.
	GPULink string `json:"gpu_link,omitempty"`
	// ExpectedBusBW describes the published figures and the NCCL algorithm
	// each assumes, for people.
	ExpectedBusBW string `json:"expected_busbw,omitempty"`
	// ExpectedBusBandwidthGBps is the low end of the figure of the algorithm
	// NCCL picks by itself (ExpectedAlgo: NVLS on 8x H100 SXM), informative.
	ExpectedBusBandwidthGBps float64 `json:"expected_busbw_gbps,omitempty"`
	ExpectedAlgo             string  `json:"expected_algo,omitempty"`
	// MinBusBandwidthGBps is the lowest acceptable busbw (GB/s) at the largest
	// message size; MinAlgo the NCCL algorithm whose figure it is derived
	// from (RING on 8x H100 SXM: 90% of ~370 GB/s).
	MinBusBandwidthGBps float64 `json:"min_busbw_gbps"`
	MinAlgo             string  `json:"min_algo,omitempty"`
	// MinBytes is the smallest largest-message size (bytes) that is judged.
	MinBytes   int64  `json:"min_bytes"`
	Confidence string `json:"confidence,omitempty"`
	// NoFigure, when set, says why the SKU has no published figure: there
	// is no minimum, and the nccl stage is INCONCLUSIVE ("no baseline")
	// instead of judged against an invented number. gpus 0 matches a node
	// with any GPU count.
	NoFigure string   `json:"no_figure,omitempty"`
	Sources  []string `json:"sources"`
}
