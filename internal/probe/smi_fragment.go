package probe

import "slices"

// A fragment of `nvidia-smi -q` is one or more sections of a GPU's block
// pasted without the NVSMI LOG header and the "GPU <bus id>" line above
// them, as issue threads quote the part that matters:
//
//	    Remapped Rows
//	        Correctable Error                 : 0
//	        Uncorrectable Error               : 4
//	        Pending                           : Yes
//
// It is read as the block of one unnamed GPU and flagged output-fragment
// (the rest of the block and the other GPUs are not shown), so that a
// failure it carries still fails and a fragment with nothing failing is
// unknown. Only the memory and reset sections are recognised: they are the
// ones judged on their own (judgeMemory, judgeResets), and their keys are
// those gpu() reads (nvidia-smi(1), "-q" output; the key names are those of
// the corpus' -q outputs of drivers 535-595).

// queryFragmentSections maps a -q section a fragment may start with to the
// keys that may follow its heading.
var queryFragmentSections = map[string][]string{
	"Remapped Rows":    {"Correctable Error", "Uncorrectable Error", "Pending", "Remapping Failure Occurred", "Bank Remap Availability Histogram"},
	"Retired Pages":    {"Single Bit ECC", "Double Bit ECC", "Pending Page Blacklist", "Pending Page Retirement", "Pending"},
	"ECC Errors":       {"Volatile", "Aggregate", "Channel Repair Pending", "TPC Repair Pending"},
	"GPU Reset Status": {"Reset Required", "Drain and Reset Recommended"},
}

// queryFragmentSection returns the section a -q fragment in ls starts
// with, or "": the first non-blank line is a known section heading, the
// next one of its keys one level deeper, every later line is deeper than
// the first or another known heading at its level, and some line has a
// padded "Key : Value". (normalize has removed the fragment's common
// indentation, so the first heading may be at the margin.)
func queryFragmentSection(ls []string) string {
	var ql []queryLine
	for i, l := range ls {
		if q, ok := splitQueryLine(i+1, l); ok {
			ql = append(ql, q)
		}
	}
	if len(ql) < 2 || ql[0].hasValue || ql[1].indent <= ql[0].indent {
		return ""
	}
	if keys, ok := queryFragmentSections[ql[0].key]; !ok || !slices.Contains(keys, ql[1].key) {
		return ""
	}
	if !queryFragmentBody(ql[0].indent, ql[1:]) {
		return ""
	}
	return ql[0].key
}

// queryFragmentBody reports whether the lines after a fragment's first
// heading (at indent top) are its body: each deeper than top or another
// known heading at top, and some a padded "Key : Value".
func queryFragmentBody(top int, ql []queryLine) bool {
	values := false
	for _, q := range ql {
		if _, heading := queryFragmentSections[q.key]; q.indent <= top && (q.indent < top || q.hasValue || !heading) {
			return false
		}
		values = values || q.hasValue && q.padded
	}
	return values
}

// parseSMIQueryFragment reads a -q fragment (queryFragmentSection) as the
// block of one GPU whose bus ID is not shown.
func parseSMIQueryFragment(r *SMIReport, j *judge, data []byte, section string) {
	r.Format = "query"
	r.Fragment = true
	b := &queryBlock{vals: map[string]string{}}
	qr := queryReader{r: r, j: j, cur: b}
	for _, q := range readQueryLines(data) {
		qr.inBlock(q)
	}
	j.unusable("output-fragment", "", "the input is a fragment of nvidia-smi -q (its %s section, without the header and the GPU line): which GPU it describes, the rest of its block and the other GPUs are not shown", section)
	r.GPUs = append(r.GPUs, b.gpu(0))
}

// unnameFragmentGPU clears the GPU of r's findings when r is a fragment: its
// one GPU has no bus ID, and the index judgeGPUs names it by is not the
// GPU's.
func unnameFragmentGPU(r *SMIReport) {
	if !r.Fragment {
		return
	}
	for i := range r.Findings {
		r.Findings[i].GPU = ""
	}
}
