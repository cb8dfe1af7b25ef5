package probe

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/text/encoding/unicode"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// normalize turns the bytes a user or a log collector handed over into the
// text that detection and every parser read, the one place that does so:
//
//   - UTF-16 with a byte order mark (what Windows PowerShell's `>` and
//     Out-File write: "Unicode", UTF-16LE with a BOM; about_Character_Encoding,
//     https://learn.microsoft.com/powershell/module/microsoft.powershell.core/about/about_character_encoding,
//     checked 2026-12-03) is decoded to UTF-8, and a UTF-8 BOM is dropped;
//   - CRLF line ends become LF;
//   - what a paste wraps around an output goes (unwrapPaste: ANSI and OSC
//     sequences, a Markdown fence, common indentation);
//   - the `[pod/NAME/CONTAINER] ` that `kubectl logs --prefix` writes before
//     every line goes (kubectl's pkg/cmd/logs/logs.go, addPrefixIfNeeded:
//     fmt.Sprintf("[pod/%s/%s] ", ...), checked 2026-12-03); the lines of
//     several sources are regrouped by source, in order of first appearance,
//     and the sources are returned so that Parse can flag the mix;
//   - the rank tags an MPI launcher writes before each piece of a rank's
//     output go (untag: `mpirun --tag-output`; stripLogTimestamps runs it
//     again on what sat behind kubectl's timestamps).
//
// `kubectl logs --timestamps` is removed by the caller (stripLogTimestamps),
// since a component log keeps its timestamps. Nothing else changes: a line's
// content and the order of one source's lines stay.
func normalize(data []byte) (out []byte, sources []string) {
	data = decodeText(data)
	if bytes.Contains(data, []byte("\r\n")) {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	}
	data = unwrapPaste(data)
	data, sources = unprefix(data)
	if sources != nil {
		// What indentation the paste had sat behind the prefixes.
		data = bytes.Join(dedent(bytes.SplitAfter(data, []byte("\n"))), nil)
	}
	return untag(data), sources
}

var (
	// reMPITag is a rank tag at the start of a line (a bare tag with the
	// space after it; the full tag is glued to the line): Open MPI's
	// `--tag-output` (`--output tag` in Open MPI 5) writes
	// "[job,rank]<stream>:" before each line (PRRTE's
	// src/docs/prrte-rst-content/cli-output.rst,
	// https://github.com/openpmix/prrte, checked 2026-12-03; the EKS
	// Blueprints run in testdata/nccl shows it), and a bare "[rank]" is the
	// form the paste in https://github.com/NVIDIA/nccl/issues/1453 shows.
	reMPITag = regexp.MustCompile(`^\[\d+(?:,\d+)?\](?:<std(?:out|err|diag)>:|:? ?)`)
	// reMPIStreamTag is Open MPI's full tag anywhere in a line.
	reMPIStreamTag = regexp.MustCompile(`\[\d+,\d+\]<std(?:out|err|diag)>:`)
)

// untag removes MPI rank tags when at least half of the non-blank lines
// start with one (mpirun's own messages, an abort banner among them, are
// not tagged): the tag at each line's start, and the tags the launcher
// wrote inside a line where the program wrote it in pieces (nccl-tests
// prints a result row as three printf calls, src/util.cu, and mpirun tags
// each: "-1[0]    1626.5 ..."). Inside a line, Open MPI's full tag goes
// wherever it is; a bare "[rank]" goes only where it is the line's own tag
// glued to the text before it and followed by a space, so that NCCL's
// "host:21:21 [0] NCCL INFO" keeps its device index. The lines of all
// ranks keep their order: they are one run.
func untag(data []byte) []byte {
	if !bytes.Contains(data, []byte("[")) {
		return data
	}
	ls := bytes.SplitAfter(data, []byte("\n"))
	tagged, nonBlank := 0, 0
	for _, l := range ls {
		if !blank(l) {
			nonBlank++
			if l[0] == '[' && reMPITag.Match(l) {
				tagged++
			}
		}
	}
	if tagged == 0 || 2*tagged < nonBlank {
		return data
	}
	out := make([]byte, 0, len(data))
	for _, l := range ls {
		out = append(out, untagLine(l)...)
	}
	return out
}

// untagLine removes one line's tags (see untag): those at its start (one,
// or several where the output was tagged twice), then Open MPI's full tags
// anywhere in it and the line's own bare tags where they are glued to the
// text before them.
func untagLine(l []byte) []byte {
	var bare [][]byte
	for {
		m := reMPITag.Find(l)
		if m == nil {
			break
		}
		if !bytes.Contains(m, []byte("<std")) {
			bare = append(bare, m[:bytes.IndexByte(m, ']')+1])
		}
		l = l[len(m):]
	}
	if bytes.Contains(l, []byte("]<std")) {
		l = reMPIStreamTag.ReplaceAll(l, nil)
	}
	for _, tag := range bare {
		l = removeGluedTag(l, tag)
	}
	return l
}

// removeGluedTag removes each tag in l that follows a non-blank character
// and is followed by a blank or the line's end.
func removeGluedTag(l, tag []byte) []byte {
	var out []byte
	for {
		i := bytes.Index(l, tag)
		if i < 0 {
			return append(out, l...)
		}
		end := i + len(tag)
		if i > 0 && !isSpace(l[i-1]) && (end == len(l) || isSpace(l[end])) {
			out = append(out, l[:i]...)
		} else {
			out = append(out, l[:end]...)
		}
		l = l[end:]
	}
}

var (
	bomUTF8    = []byte{0xef, 0xbb, 0xbf}
	bomUTF16LE = []byte{0xff, 0xfe}
	bomUTF16BE = []byte{0xfe, 0xff}
)

// decodeText decodes UTF-16 text that starts with its byte order mark and
// drops a UTF-8 BOM; other input is returned as it is. Undecodable UTF-16
// (an odd length) is returned as it is too, and reads as unrecognised.
func decodeText(data []byte) []byte {
	switch {
	case bytes.HasPrefix(data, bomUTF8):
		return data[len(bomUTF8):]
	case bytes.HasPrefix(data, bomUTF16LE), bytes.HasPrefix(data, bomUTF16BE):
		dec := unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder()
		if out, err := dec.Bytes(data); err == nil {
			return out
		}
	}
	return data
}

// reKubectlPrefix is the source prefix of `kubectl logs --prefix`.
var reKubectlPrefix = regexp.MustCompile(`^\[pod/[^/\]\s]+/[^/\]\s]*\] `)

// unprefix removes kubectl's source prefix when every non-blank line has
// one, grouping the lines by source; sources are the distinct prefixes
// (nil when the input has none).
func unprefix(data []byte) ([]byte, []string) {
	if !bytes.HasPrefix(bytes.TrimLeft(data, " \t\n"), []byte("[pod/")) {
		return data, nil
	}
	ls := bytes.SplitAfter(data, []byte("\n"))
	bySource := map[string][][]byte{}
	var sources []string
	for _, l := range ls {
		if blank(l) {
			continue
		}
		m := reKubectlPrefix.Find(l)
		if m == nil {
			return data, nil
		}
		src := strings.TrimSuffix(string(m), " ")
		if _, ok := bySource[src]; !ok {
			sources = append(sources, src)
		}
		bySource[src] = append(bySource[src], l[len(m):])
	}
	var out []byte
	for _, src := range sources {
		for _, l := range bySource[src] {
			out = append(out, l...)
		}
	}
	return out, sources
}

// Lines that start one output of a kind: a second one means several
// outputs were pasted or collected together.
var (
	reStartSMITable = regexp.MustCompile(`(?m)^\|\s*NVIDIA-SMI \d`)
	reStartSMIQuery = regexp.MustCompile(`(?m)^=+NVSMI LOG=+\s*$`)
	reStartSMIXML   = regexp.MustCompile(`<nvidia_smi_log[\s>]`)
	reStartDCGM     = regexp.MustCompile(`(?m)^\|\s*Diagnostic\s+\|\s*Result\s+\|`)
	reStartNCCL     = regexp.MustCompile(`(?m)^#?\s*nThread \d+ nGpus \d+`)
)

// outputStarts counts the outputs of kind in data by the line that starts
// each: nvidia-smi's table header, -q banner or XML root, dcgmi diag's
// table header, nccl-tests' parameter line. 0 for kinds it does not count.
func outputStarts(kind Kind, data []byte) (n int, what string) {
	switch kind {
	case KindNvidiaSMI:
		for _, s := range []struct {
			re   *regexp.Regexp
			what string
		}{{reStartSMITable, "nvidia-smi tables"}, {reStartSMIQuery, "nvidia-smi -q outputs"}, {reStartSMIXML, "nvidia-smi -q -x documents"}} {
			if c := len(s.re.FindAllIndex(data, -1)); c > n {
				n, what = c, s.what
			}
		}
	case KindDCGM:
		n, what = len(reStartDCGM.FindAllIndex(data, -1)), "dcgmi diag tables"
	case KindNCCL:
		n, what = len(reStartNCCL.FindAllIndex(data, -1)), "nccl-tests runs"
	}
	return n, what
}

// markMixed adds a mixed-input finding to a report read from several
// outputs (several kubectl sources, or a kind's output twice): its facts mix
// runs, GPUs or nodes, so an ok verdict becomes unknown; a fail stays, since
// a fault shown in any of them is a fault.
func markMixed(rep Report, kind Kind, data []byte, sources []string) {
	var why string
	if n, what := outputStarts(kind, data); n > 1 {
		why = fmt.Sprintf("the input holds %d %s, pasted or collected together", n, what)
	}
	if len(sources) > 1 {
		if why != "" {
			why += "; "
		}
		why += fmt.Sprintf("the kubectl log lines come from %d sources (%s)", len(sources), truncate(strings.Join(sources, ", "), 200))
	}
	if why == "" {
		return
	}
	h := rep.Common()
	h.Findings = append(h.Findings, diag.Finding{Rule: "mixed-input", Severity: diag.SeverityWarning,
		Message: why + ": the report mixes their facts; give one output of one run"})
	if h.Verdict == diag.ReportOK {
		h.Verdict = diag.ReportUnknown
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
