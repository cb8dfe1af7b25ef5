package probe

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// FormatVersion is the version of the report shapes (Go types and their JSON
// keys). Every report carries it as "formatVersion". Adding fields keeps the
// version; renaming or removing one changes it.
const FormatVersion = "probe/v1"

// Kind names a parser: which tool's output a report was read from.
type Kind string

// Kinds. KindAuto asks [Parse] to [Detect] the kind. KindNVML is the kind of
// the NVML prober's report, which [Parse] reads back from the JSON of
// `gpuctl probe nvml -o json`, and KindComponentLog that of a Kubernetes GPU
// component log.
const (
	KindAuto         Kind = "auto"
	KindNvidiaSMI    Kind = "nvidia-smi"
	KindTopo         Kind = "topo"
	KindNCCL         Kind = "nccl"
	KindCUDA         Kind = "cuda"
	KindDCGM         Kind = "dcgm"
	KindDmesg        Kind = "dmesg"
	KindNVML         Kind = "nvml"
	KindComponentLog Kind = "component-log"
	// The RDMA kinds (RDMAReport): the network stage's sysfs dump,
	// ibv_devinfo, `rdma link` and `fi_info -p efa`.
	KindRDMASysfs  Kind = "rdma-sysfs"
	KindIBVDevinfo Kind = "ibv-devinfo"
	KindRDMALink   Kind = "rdma-link"
	KindFIInfo     Kind = "fi-info"
	// KindFramework is the output of gpuctl's PyTorch framework checks
	// (accept's framework stage; [ParseFramework]).
	KindFramework Kind = "framework"
)

// ParseKinds lists the kinds [Parse] accepts, in the order the CLI documents
// them.
var ParseKinds = []Kind{KindNvidiaSMI, KindTopo, KindNCCL, KindCUDA, KindDCGM, KindDmesg, KindComponentLog, KindNVML, KindRDMASysfs, KindIBVDevinfo, KindRDMALink, KindFIInfo, KindFramework, KindAuto}

// Verdicts and findings are [diag.ReportVerdict] and [diag.Finding]. Of the
// finding's fields probe sets rule, severity, message and gpu (the GPU it is
// about: a bus ID, index or UUID as the output gives it, or empty). An
// "error" finding makes the verdict fail; findings that make it unknown are
// "warning"s whose rule says why the output is unusable; other warnings and
// "info" findings leave the verdict alone. The verdicts follow the shared
// corpus' VERDICTS.md.

// Header is embedded in every report; its fields appear at the top level of
// the report's JSON.
type Header struct {
	FormatVersion string             `json:"formatVersion"`
	Kind          Kind               `json:"kind"`
	Verdict       diag.ReportVerdict `json:"verdict"`
	Findings      []diag.Finding     `json:"findings"`
}

// Common returns the header, so that every report satisfies [Report].
func (h *Header) Common() *Header { return h }

// Report is implemented by every report type: *SMIReport, *TopoReport,
// *NCCLReport, *CUDAReport, *DCGMReport, *DmesgReport, *ComponentLogReport,
// *NVMLReport, *RDMAReport and *FrameworkReport.
type Report interface {
	Common() *Header
}

// Errors returned by [Parse], [Detect] and [ReadLimited].
var (
	// ErrInputTooLarge: the input exceeds MaxInputBytes.
	ErrInputTooLarge = fmt.Errorf("input larger than %d MiB", MaxInputBytes>>20)
	// ErrUnrecognized: Detect could not tell which tool printed the input.
	ErrUnrecognized = errors.New("input is not output of a known GPU tool")
	// ErrUnknownKind: Parse was given a kind it does not know.
	ErrUnknownKind = errors.New("unknown kind")
)

// MaxInputBytes caps what the parsers read: no real output of these tools
// comes near it (a 16-GPU nvidia-smi -q -x is about 1 MiB), and the cap bounds
// time and memory on hostile input.
const MaxInputBytes = 16 << 20

// maxRecords caps how many GPUs, rows, tests, ranks or XID groups one report
// holds. Real outputs have at most a few hundred; the cap keeps hostile input
// from making a parser allocate far beyond the input's size.
const maxRecords = 4096

// judge accumulates findings and decides the verdict.
type judge struct {
	h            *Header
	failed       bool
	inconclusive bool
	overflow     bool
}

// room reports whether a list of n records may grow, and records once that
// the output was too large otherwise.
func (j *judge) room(n int, what string) bool {
	if n < maxRecords {
		return true
	}
	if !j.overflow {
		j.overflow = true
		j.unusable("output-too-large", "", "more than %d %s: this is not a real output; the rest was not read", maxRecords, what)
	}
	return false
}

func newJudge(h *Header, kind Kind) *judge {
	h.FormatVersion = FormatVersion
	h.Kind = kind
	h.Findings = []diag.Finding{}
	return &judge{h: h}
}

func (j *judge) add(rule string, severity diag.Severity, gpu, format string, args ...any) {
	j.h.Findings = append(j.h.Findings, diag.Finding{Rule: rule, Severity: severity, Message: fmt.Sprintf(format, args...), GPU: gpu})
}

// fail records a node problem: an error finding and a failing verdict.
func (j *judge) fail(rule, gpu, format string, args ...any) {
	j.failed = true
	j.add(rule, diag.SeverityError, gpu, format, args...)
}

// unusable records why the output cannot judge the node: a warning finding
// and, unless a node problem is also shown, an unknown verdict.
func (j *judge) unusable(rule, gpu, format string, args ...any) {
	j.inconclusive = true
	j.add(rule, diag.SeverityWarning, gpu, format, args...)
}

// has reports whether a finding of rule was recorded.
func (j *judge) has(rule string) bool {
	return slices.ContainsFunc(j.h.Findings, func(f diag.Finding) bool { return f.Rule == rule })
}

func (j *judge) warn(rule, gpu, format string, args ...any) {
	j.add(rule, diag.SeverityWarning, gpu, format, args...)
}

func (j *judge) info(rule, gpu, format string, args ...any) {
	j.add(rule, diag.SeverityInfo, gpu, format, args...)
}

// done sets the verdict. A node problem that the output does show outweighs
// the output being incomplete: evidence of a fault stays evidence.
func (j *judge) done() {
	switch {
	case j.failed:
		j.h.Verdict = diag.ReportFail
	case j.inconclusive:
		j.h.Verdict = diag.ReportUnknown
	default:
		j.h.Verdict = diag.ReportOK
	}
}

// fillNil replaces nil slices and maps reachable from v (a pointer) with empty
// ones, so that JSON shows [] and {} rather than null. Pointers to scalars stay
// nil: null means "not shown / unknown".
func fillNil(v any) {
	fillValue(reflect.ValueOf(v), 0)
}

func fillValue(v reflect.Value, depth int) {
	if depth > 16 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			fillValue(v.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillValue(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		fillSlice(v, depth)
	case reflect.Map:
		fillMap(v)
	}
}

// fillSlice makes a nil slice empty where it can be set, and fills the
// elements of any other.
func fillSlice(v reflect.Value, depth int) {
	if v.IsNil() {
		if v.CanSet() {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		}
		return
	}
	for i := 0; i < v.Len(); i++ {
		fillValue(v.Index(i), depth+1)
	}
}

// fillMap makes a nil map empty where it can be set, and the nil maps and
// slices among the values of any other (map values are not addressable, so
// nothing deeper is filled).
func fillMap(v reflect.Value) {
	if v.IsNil() {
		if v.CanSet() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		return
	}
	for _, k := range v.MapKeys() {
		e := v.MapIndex(k)
		switch {
		case e.Kind() == reflect.Map && e.IsNil():
			v.SetMapIndex(k, reflect.MakeMap(e.Type()))
		case e.Kind() == reflect.Slice && e.IsNil():
			v.SetMapIndex(k, reflect.MakeSlice(e.Type(), 0, 0))
		}
	}
}
