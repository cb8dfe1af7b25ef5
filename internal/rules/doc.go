// Package rules is gpuctl's rule catalogue and validator: it judges a
// resolved cluster spec against the facts of package matrix and returns
// findings ([diag.Finding]); it also applies waivers and the organisation's
// policy, and answers `gpuctl matrix check` queries ([Check]). It is pure:
// no I/O. Each rule ID has its entry in the catalogue (rules.go) and its
// check function, in a file named by what it checks (driver_cuda.go,
// device_plugin.go, nccl.go, spec_fields.go, ...).
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
package rules
