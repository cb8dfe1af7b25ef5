package probe

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

var (
	reDetectTopoHeader = regexp.MustCompile(`(?m)^[ \t]+GPU0\s+(GPU1|NIC0|mlx5_\d+|CPU Affinity)`)
	reDetectTopoRow    = regexp.MustCompile(`(?m)^GPU0\s+X\s`)
	reDetectNCCL       = regexp.MustCompile(`(nThread \d+ nGpus \d+|NCCL failure \S+\.cu:\d+|Test CUDA failure \S+\.cu:\d+)`)
	reDetectDCGM       = regexp.MustCompile(`(?m)(^\|\s+DCGM Version\s+\||^\|\s+Diagnostic\s+\|\s+Result\s+\||^[+|]-{3,}\s+(?:Metadata|Deployment|Integration|Hardware|Stress|Custom)\s+-{3,}\+|^\|\s+NvLink Link Status\s+\|\s*$)`)
	reDetectKernel     = regexp.MustCompile(`(?m)(^\[\s*\d+\.\d+\] |^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} .{1,2} \d{2}:\d{2}:\d{2} \d{4}\] | kernel: |^kern\s*:|^\d{1,3},\d+,\d+,[-cC+][^;\n]*;)`)
)

// detectWindow bounds how much of an input detection reads: every shape
// shows itself in its first lines, and a bounded look keeps detection's cost
// independent of the input's size.
const detectWindow = 64 << 10

// Detect tells which tool printed data. It returns ErrInputTooLarge for
// input over MaxInputBytes and ErrUnrecognized when no kind fits. Kubernetes
// component logs are recognised as KindComponentLog.
func Detect(data []byte) (Kind, error) {
	k, _, err := detectPaste(data)
	return k, err
}

// detectPaste detects the kind of a pasted output and returns the output
// without what the paste wrapped around it. Log timestamps on every line
// (`kubectl logs --timestamps`) are removed unless the input is a component
// log, which is recognised by them and keeps them.
func detectPaste(data []byte) (Kind, []byte, error) {
	k, data, _, err := detectNormalized(data)
	return k, data, err
}

// detectNormalized is detectPaste that also returns the kubectl log
// sources normalize found.
func detectNormalized(data []byte) (Kind, []byte, []string, error) {
	if len(data) > MaxInputBytes {
		return "", nil, nil, ErrInputTooLarge
	}
	data, sources := normalize(data)
	k, err := detect(data)
	if k != KindComponentLog {
		if bare, ok := stripLogTimestamps(data); ok {
			if k2, err2 := detect(bare); err2 == nil {
				return k2, bare, sources, nil
			}
		}
	}
	return k, data, sources, err
}

func detect(data []byte) (Kind, error) {
	if isBlank(data) {
		return "", fmt.Errorf("%w: the input is empty", ErrUnrecognized)
	}
	in := newDetectInput(data)
	head := in.head
	switch {
	case looksLikeNVMLJSON(data, head):
		return KindNVML, nil
	case bytes.Contains(head, []byte(FrameworkLinePrefix+`{"`)):
		return KindFramework, nil
	case in.smiMarkers():
		return KindNvidiaSMI, nil
	case in.dcgm():
		return KindDCGM, nil
	case in.nccl():
		return KindNCCL, nil
	case containsAny(head, "deviceQuery Starting", "CUDA Device Query (Runtime API)", "[Vector addition of "):
		return KindCUDA, nil
	case in.sig.topo:
		return KindTopo, nil
	case smiShape(head) != "":
		return KindNvidiaSMI, nil
	case componentOf(head) != "":
		return KindComponentLog, nil
	case in.kernelLog():
		return KindDmesg, nil
	case FindFailure(head) != nil:
		return KindNvidiaSMI, nil
	case containsAny(head, "cudaGetDeviceCount returned", "Test PASSED"):
		// A CUDA sample that failed before printing its banner.
		return KindCUDA, nil
	}
	if k := detectRDMA(head); k != "" {
		return k, nil
	}
	return "", ErrUnrecognized
}

// detectInput is what detection looks at: the first detectWindow bytes
// (head), the first 16 KiB (top) and the line shapes in top.
type detectInput struct {
	head, top []byte
	sig       lineSignals
}

func newDetectInput(data []byte) detectInput {
	head := data[:min(len(data), detectWindow)]
	top := head[:min(len(head), 16<<10)]
	return detectInput{head: head, top: top, sig: scanLines(top)}
}

// smiMarkers: nvidia-smi's XML root, the -q banner or the table's header.
func (in *detectInput) smiMarkers() bool {
	return bytes.Contains(in.head, []byte("<nvidia_smi_log")) || bytes.Contains(in.top, []byte("NVSMI LOG")) || in.sig.smiTable
}

// dcgm: dcgmi diag's last line, its JSON's root key or its table's rows.
func (in *detectInput) dcgm() bool {
	return containsAny(in.head, "Successfully ran diagnostic for group", `"DCGM GPU Diagnostic"`, `"DCGM Diagnostic"`) || in.sig.dcgm
}

// nccl: nccl-tests' JSON, its summary or version lines, or its parameter
// and failure lines.
func (in *detectInput) nccl() bool {
	return looksLikeNCCLJSON(in.head) || containsAny(in.head, "# Avg bus bandwidth", "# Out of bounds values", "nccl-tests version") || in.sig.nccl
}

// kernelLog: the NVIDIA driver's or NVSwitch driver's messages, or kernel
// log timestamps.
func (in *detectInput) kernelLog() bool {
	return containsAny(in.head, "NVRM: ", "nvidia-nvswitch") || in.sig.kernel
}

// lineSignals are the line shapes detection looks for.
type lineSignals struct {
	smiTable, dcgm, nccl, topo, kernel bool
	// ncclRows counts the lines that are nccl-tests result rows; two make
	// an output of nccl-tests without its header (a paste of rows).
	ncclRows int
}

// scanLines looks at each line once. Matching the multi-line patterns
// against the whole window instead tries every position of it and made
// detection the larger part of a parse; here a cheap test of the line's
// first bytes decides which pattern, if any, is worth running on it.
func scanLines(data []byte) lineSignals {
	var sig lineSignals
	for len(data) > 0 {
		var l []byte
		l, data, _ = bytes.Cut(data, []byte("\n"))
		if l = bytes.TrimSuffix(l, []byte("\r")); len(l) > 0 {
			sig.line(l)
		}
	}
	return sig
}

func (sig *lineSignals) line(l []byte) {
	switch c := l[0]; {
	case c == '|' || c == '+':
		sig.boxLine(l)
	case c == ' ' || c == '\t':
		sig.topo = sig.topo || bytes.Contains(l, []byte("GPU0")) && reDetectTopoHeader.Match(l)
	case c == 'G':
		sig.topo = sig.topo || reDetectTopoRow.Match(l)
	}
	sig.nccl = sig.nccl || isNCCLLine(l)
	if !sig.nccl && sig.ncclRows < 2 && isNCCLRowLine(l) {
		if sig.ncclRows++; sig.ncclRows == 2 {
			sig.nccl = true
		}
	}
	sig.kernel = sig.kernel || isKernelLine(l)
}

// isNCCLLine: nccl-tests' parameter line or one of its failure lines
// ("Test NCCL failure FILE.cu:LINE", "Test CUDA failure FILE.cu:LINE": the
// NCCLCHECK and CUDACHECK macros of nccl-tests' src/common.h).
func isNCCLLine(l []byte) bool {
	return (bytes.Contains(l, []byte("nThread ")) || bytes.Contains(l, []byte("NCCL failure ")) || bytes.Contains(l, []byte("CUDA failure "))) && reDetectNCCL.Match(l)
}

// isNCCLRowLine: a result row of nccl-tests' table, read as the parser
// reads a row without the table's header (size, count, a data type
// nccl-tests names, then time, algbw, busbw and the validation value).
func isNCCLRowLine(l []byte) bool {
	t := bytes.TrimLeft(l, " \t")
	if len(t) == 0 || t[0] < '0' || t[0] > '9' {
		return false
	}
	f := strings.Fields(string(t))
	if len(f) < 7 || len(f) > 13 {
		return false
	}
	if _, ok := ncclTypeSize[f[2]]; !ok {
		return false
	}
	_, ok := parseNCCLRow(f, nil)
	return ok
}

// isKernelLine: a kernel log line in one of its timestamp styles.
func isKernelLine(l []byte) bool {
	return (l[0] == '[' || l[0] == 'k' || kmsgLike(l) || bytes.Contains(l, []byte(" kernel: "))) && reDetectKernel.Match(l)
}

// boxLine looks at a line of a box-drawn table: nvidia-smi's or dcgmi's.
func (sig *lineSignals) boxLine(l []byte) {
	sig.smiTable = sig.smiTable || bytes.Contains(l, []byte("NVIDIA-SMI")) && reTableHeader.Match(l)
	sig.dcgm = sig.dcgm || (bytes.Contains(l, []byte("DCGM Version")) || bytes.Contains(l, []byte("Diagnostic")) || bytes.Contains(l, []byte("----- ")) || bytes.Contains(l, []byte("NvLink Link Status"))) && reDetectDCGM.Match(l)
}

// kmsgLike tells whether l may be a /dev/kmsg record: "PRIORITY,SEQ,..."
// with a 1-3 digit priority.
func kmsgLike(l []byte) bool {
	i := 0
	for i < len(l) && i < 4 && l[i] >= '0' && l[i] <= '9' {
		i++
	}
	return i > 0 && i < len(l) && l[i] == ','
}

// Parse reads data as kind (KindAuto detects it) and returns the report.
// The input is normalised first (normalize: UTF-16 and BOMs, CRLF, ANSI
// colours, a Markdown code fence, common indentation, kubectl's --prefix and
// --timestamps); an input that holds several outputs gets a mixed-input
// finding (markMixed).
// The error is non-nil only when the input is too large, no kind fits the
// input (KindAuto), or kind is unknown; odd or damaged input of a known kind
// gives a report with verdict unknown instead.
func Parse(kind Kind, data []byte) (Report, error) {
	if len(data) > MaxInputBytes {
		return nil, ErrInputTooLarge
	}
	var sources []string
	if kind == KindAuto || kind == "" {
		k, bare, src, err := detectNormalized(data)
		if err != nil {
			return nil, err
		}
		kind, data, sources = k, bare, src
	} else {
		data, sources = normalize(data)
		if kind != KindComponentLog {
			data, _ = stripLogTimestamps(data)
		}
	}
	parse, ok := parsers[kind]
	if !ok {
		return nil, fmt.Errorf("%w %q (want one of %v)", ErrUnknownKind, kind, ParseKinds)
	}
	rep := parse(data)
	markMixed(rep, kind, data, sources)
	return rep, nil
}

// parsers are the parser of each kind Parse reads.
var parsers = map[Kind]func([]byte) Report{
	KindNvidiaSMI:    func(b []byte) Report { return ParseNvidiaSMI(b) },
	KindTopo:         func(b []byte) Report { return ParseTopo(b) },
	KindNCCL:         func(b []byte) Report { return ParseNCCL(b) },
	KindCUDA:         func(b []byte) Report { return ParseCUDA(b) },
	KindDCGM:         func(b []byte) Report { return ParseDCGM(b) },
	KindDmesg:        func(b []byte) Report { return ParseDmesg(b) },
	KindComponentLog: func(b []byte) Report { return ParseComponentLog(b) },
	KindNVML:         func(b []byte) Report { return ParseNVML(b) },
	KindRDMASysfs:    func(b []byte) Report { return ParseRDMASysfs(b) },
	KindIBVDevinfo:   func(b []byte) Report { return ParseIBVDevinfo(b) },
	KindRDMALink:     func(b []byte) Report { return ParseRDMALink(b) },
	KindFIInfo:       func(b []byte) Report { return ParseFIInfo(b) },
	KindFramework:    func(b []byte) Report { return ParseFramework(b) },
}

func containsAny(data []byte, subs ...string) bool {
	for _, s := range subs {
		if bytes.Contains(data, []byte(s)) {
			return true
		}
	}
	return false
}
