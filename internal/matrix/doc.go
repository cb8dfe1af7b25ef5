// Package matrix holds gpuctl's version and compatibility facts (embedded,
// each with its source URL and as_of date) and the rules that turn a
// resolved cluster spec into findings ([diag.Finding]). It is pure: no I/O
// beyond its embedded data.
//
// # Data
//
// Each file of data/ has one Go file of the same name holding its YAML type,
// its index and its lookups: cuda.go (toolkits, minor and forward
// compatibility), gpus.go (architectures, products and their names),
// drivers.go (driver branches), gcp.go (GCE accelerator and machine types,
// GKE's driver and release tables), aws.go (EC2 instance types, AMIs, EKS
// versions), operator.go (GPU Operator and device plugin releases, node
// labels) and nccl.go (fabrics, transports, NCCL baselines). data.go embeds
// and loads them (decoded strictly with goccy/go-yaml: an unknown field or a
// repeated key is an error at file:line:col); machines.go joins both clouds'
// machines. A new fact of an existing kind is an entry in its YAML file; a
// new field is a field of the file's type, checked in its index.
//
// # Severity contract
//
// Every validation rule grades its findings by one contract
// ([ContractLine]):
//
//   - error: the pool will not come up, its GPUs will not be usable, or the
//     vendor declares the combination unsupported (with the source). A name
//     or version that does not exist (a CUDA release never made, an unknown
//     machine type) counts as not coming up: the provider rejects it, or
//     nothing real matches it.
//   - warning: it works today, but is deprecated, past support, or risky
//     (slow NCCL over TCP on an RDMA machine, images that run only through
//     PTX JIT, a field whose effect the spec counts on but does not get).
//   - info: a note: nothing to fix, or a fact gpuctl cannot judge
//     (MATRIX-UNKNOWN-FACT). Info never fails `validate --strict`.
//
// Each [Rule] states its usual severity with the contract's one-line reason
// (Severity, SeverityReason) and every other severity it reports with its
// case (Also); `gpuctl explain RULE` prints them. A rule reports no severity
// it does not declare (the package's tests hold every rule and severity to
// a case). The POLICY-* rules grade what the user's policy asks
// (spec.policy, Options.Policy): a warning, and nothing at all without a
// policy. A rule that checks for something the platform does itself does
// not fire there (GKE's GPU taint, GKE's device plugin).
//
// Findings of `gpuctl parse`, `gpuctl probe` and `gpuctl accept` (packages
// probe and accept) are not graded by this contract; they keep their own
// meaning: error, the output shows a node problem (report verdict fail);
// warning, the output cannot judge the node (verdict unknown: truncated,
// garbled, an environment error) or shows something to look at; info, a
// note.
package matrix
