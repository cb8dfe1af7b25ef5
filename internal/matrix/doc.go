// Package matrix holds gpuctl's version and compatibility facts, embedded
// (data/*.yaml), each with its source URL and as_of date, and the lookups
// over them: GPUs, machine types, CUDA and drivers, the GPU Operator,
// platforms' upgrades and GPU networks, and what a node pool of a spec
// resolves to (ResolvePool). It is pure: no I/O beyond its embedded data.
// It judges nothing: the rules that turn a spec into findings are package
// rules, which reads these facts (facts never call rules).
package matrix
