package probe

import (
	"bytes"
	"regexp"
)

// What pasting and log collection wrap around a tool's output. Parse removes
// it before detecting and parsing, so that a pasted output is judged like the
// output itself (a failing node stays "fail" instead of "unknown").
var (
	// ANSI CSI sequences: colours from `--color=always`, `grep --color`,
	// `kubectl` plugins, terminal recorders.
	reANSI = regexp.MustCompile("\x1b\\[[0-9;:?]*[ -/]*[@-~]")
	// OSC sequences (ESC ] ... BEL or ESC \\): window titles, hyperlinks and
	// shell-integration marks that terminals such as VS Code, iTerm2 and
	// Windows Terminal write around a command's output.
	reOSC = regexp.MustCompile("\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)")
	// `kubectl logs --timestamps` (RFC 3339 with nanoseconds, UTC) and the
	// kubelet's CRI log files (`TS stdout F text`; P marks a partial line).
	reLogTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2}) (?:(stdout|stderr) ([FP]) )?`)
	// A Markdown code fence: ``` or ~~~, optionally with an info string.
	reFence = regexp.MustCompile("^(?:```|~~~)[\\w+.-]*\\s*$")
)

// unwrapPaste removes what a paste adds around a tool's output: ANSI colour
// sequences, an enclosing Markdown code fence, and indentation common to every line (a Markdown indented code block, a quote
// in a ticket). It only removes decoration: a line's content and the order of
// lines are kept, so truncated or garbled output stays so.
func unwrapPaste(data []byte) []byte {
	if bytes.IndexByte(data, 0x1b) >= 0 {
		data = reOSC.ReplaceAll(data, nil)
		data = reANSI.ReplaceAll(data, nil)
	}
	ls := bytes.SplitAfter(data, []byte("\n"))
	ls = unfence(ls)
	ls = dedent(ls)
	return bytes.Join(ls, nil)
}

// stripLogTimestamps removes the timestamps of `kubectl logs --timestamps` or
// of a CRI log file when every non-blank line has one; ok is false when not.
// Kept apart from unwrapPaste: a component log's own timestamps are what
// tells it apart (KindComponentLog keeps them). MPI rank tags that sat
// behind the timestamps go too (untag).
func stripLogTimestamps(data []byte) (out []byte, ok bool) {
	ls := bytes.SplitAfter(data, []byte("\n"))
	u, ok := untimestamp(ls)
	if !ok {
		return data, false
	}
	return untag(bytes.Join(u, nil)), true
}

func trimEOL(l []byte) []byte { return bytes.TrimRight(l, "\r\n") }

func blank(l []byte) bool { return len(bytes.TrimSpace(l)) == 0 }

// unfence drops an opening fence that is the first non-blank line and a
// closing fence that is the last (a paste cut short may lack it).
func unfence(ls [][]byte) [][]byte {
	first := 0
	for first < len(ls) && blank(ls[first]) {
		first++
	}
	if first == len(ls) || !reFence.Match(bytes.TrimSpace(ls[first])) {
		return ls
	}
	ls = ls[first+1:]
	last := len(ls) - 1
	for last >= 0 && blank(ls[last]) {
		last--
	}
	if last >= 0 && reFence.Match(bytes.TrimSpace(ls[last])) {
		ls = ls[:last]
	}
	return ls
}

// untimestamp strips log timestamps when every non-blank line starts with
// one, joining the partial (P) lines of a CRI log file.
func untimestamp(ls [][]byte) ([][]byte, bool) {
	n := 0
	for _, l := range ls {
		if blank(l) {
			continue
		}
		if !reLogTimestamp.Match(l) {
			return ls, false
		}
		n++
	}
	if n == 0 {
		return ls, false
	}
	out := make([][]byte, 0, len(ls))
	var partial []byte
	for _, l := range ls {
		m := reLogTimestamp.FindSubmatchIndex(l)
		if m == nil {
			out = append(out, l)
			continue
		}
		rest := l[m[1]:]
		if m[4] >= 0 && string(l[m[4]:m[5]]) == "P" {
			partial = append(partial, trimEOL(rest)...)
			continue
		}
		if partial != nil {
			rest = append(partial, rest...)
			partial = nil
		}
		out = append(out, rest)
	}
	if partial != nil {
		out = append(out, partial)
	}
	return out, true
}

// dedent removes the run of spaces or tabs that starts every non-blank line.
func dedent(ls [][]byte) [][]byte {
	var prefix []byte
	have := false
	for _, l := range ls {
		if blank(l) {
			continue
		}
		ws := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
		if !have {
			prefix, have = ws, true
		} else {
			i := 0
			for i < len(prefix) && i < len(ws) && prefix[i] == ws[i] {
				i++
			}
			prefix = prefix[:i]
		}
		if len(prefix) == 0 {
			return ls
		}
	}
	if len(prefix) == 0 {
		return ls
	}
	out := make([][]byte, len(ls))
	for i, l := range ls {
		out[i] = bytes.TrimPrefix(l, prefix)
	}
	return out
}
