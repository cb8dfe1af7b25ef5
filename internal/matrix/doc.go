// Package matrix holds gpuctl's version and compatibility facts, embedded
// (data/*.yaml), each with its source URL and as_of date, and the lookups
// over them: GPUs, machine types, CUDA and drivers, the GPU Operator,
// platforms' upgrades and GPU networks, and what a node pool of a spec
// resolves to (ResolvePool). It is pure: no I/O beyond its embedded data.
// It judges nothing: the rules that turn a spec into findings are package
// rules, which reads these facts (facts never call rules).
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
package matrix
