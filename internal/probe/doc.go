// Package probe reads what a GPU node prints and what NVML reports, and
// judges it.
//
// It has three parts:
//
//   - Parsers that turn the real outputs of NVIDIA's tools into typed reports:
//     nvidia-smi (XML, -q text, the default table, --query-gpu CSV, -L,
//     nvlink -s and its failure messages) into [SMIReport], `nvidia-smi topo -m`
//     into [TopoReport], nccl-tests into [NCCLReport], the CUDA samples
//     deviceQuery and vectorAdd into [CUDAReport], `dcgmi diag` into
//     [DCGMReport] and kernel logs into [DmesgReport]. [Detect] tells the kinds
//     apart and [Parse] dispatches. Parsers never fail on odd input: they
//     return a report whose verdict is "unknown" with a finding that says what
//     was wrong with the output. The only errors are for input that is too
//     large ([ErrInputTooLarge]) or of no recognised kind ([ErrUnrecognized],
//     [ErrUnknownKind]).
//
//     The ParseXxx functions read whatever they are given; Parse, Detect and
//     ReadLimited enforce MaxInputBytes, so callers reading untrusted input
//     should go through them.
//
//   - A health judgement per report: [diag.Finding] values (rule, severity, message,
//     GPU) and a [diag.ReportVerdict] of ok, fail or unknown, following the rules in the
//     corpus' VERDICTS.md (testdata/corpus). XIDs are classified by an embedded catalogue
//     taken from NVIDIA's XID documentation ([XIDCatalogue]).
//
//   - An NVML prober ([Prober]) built on github.com/NVIDIA/go-nvml. It needs cgo
//     and is compiled only with the build tag "nvml"; without it
//     [NewSystemProber] returns [ErrNVMLNotCompiled].
//
// Units are in field names or doc comments: MiB for memory, GB/s for
// bandwidth, µs for times, W for power, °C for temperature.
//
// The only gpuctl package it imports is internal/diag (for findings and
// verdicts); it never prints and never reads the environment.
package probe
