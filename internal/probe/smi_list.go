package probe

import (
	"regexp"
	"strings"
)

// `nvidia-smi -L` prints one line per GPU and, with MIG enabled, an indented
// line per MIG device:
//
//	GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)
//	  MIG 1g.10gb     Device  0: (UUID: MIG-...)
//
// `nvidia-smi nvlink -s` prints the same GPU lines followed by one line per
// link, "Link N: 25 GB/s" or "Link N: <inactive>".

var (
	reListGPU    = regexp.MustCompile(`^GPU (\d+): (.+?) \(UUID: ([^)]*)\)\s*$`)
	reListMIG    = regexp.MustCompile(`^\s+MIG\s+(\S+)\s+Device\s+(\d+):\s+\(UUID:\s*([^)]*)\)\s*$`)
	reNVLinkLine = regexp.MustCompile(`^\s+Link (\d+):\s*(.*?)\s*$`)
	reElision    = regexp.MustCompile(`^\s*(\.{3,}|…)\s*$`)
)

// parseSMIList reads `nvidia-smi -L` and `nvidia-smi nvlink -s`.
func parseSMIList(r *SMIReport, j *judge, data []byte) {
	r.Format = "list"
	lr := listReader{r: r, j: j}
	for _, l := range lines(data) {
		if strings.TrimSpace(l) != "" && !lr.line(l) {
			break
		}
	}
	if lr.elided > 0 {
		j.unusable("output-elided", "", "the output was shortened by hand (%d elision marks): GPUs or links left out cannot be judged", lr.elided)
	}
	if lr.lastUnknown {
		// The last line is cut: the output ends inside it, not garbled.
		lr.unknown--
		j.unusable("output-truncated", "", "the output ends inside a line (%q): GPUs or links after it may be missing", truncate(strings.TrimSpace(lr.last), 60))
	}
	if lr.unknown > 0 && FindFailure(data) == nil {
		j.unusable("output-garbled", "", "%d lines are not nvidia-smi -L / nvlink output", lr.unknown)
	}
	for i := range r.GPUs {
		if len(r.GPUs[i].MIGDevices) > 0 {
			r.GPUs[i].MIGMode = "Enabled"
		}
	}
}

// listReader reads -L and nvlink -s output line by line: a GPU line opens
// a GPU, the MIG, link and status lines under it belong to it.
type listReader struct {
	r   *SMIReport
	j   *judge
	cur *SMIGPU
	// elided counts hand-made elision marks ("..."), unknown the lines of
	// no known shape; lastUnknown: the last line read, last, was one.
	elided, unknown int
	lastUnknown     bool
	last            string
}

// line reads a non-blank line; false stops when the report has no room for
// more GPUs.
func (lr *listReader) line(l string) bool {
	r, cur := lr.r, lr.cur
	lr.lastUnknown, lr.last = false, l
	if m := reListGPU.FindStringSubmatch(l); m != nil {
		if !lr.j.room(len(r.GPUs), "GPUs") {
			return false
		}
		r.GPUs = append(r.GPUs, listGPU(m))
		lr.cur = &r.GPUs[len(r.GPUs)-1]
		return true
	}
	switch {
	case cur != nil && len(cur.MIGDevices) < maxRecords && reMIGMatch(l, cur):
	case cur != nil && isNVLinkLine(l) && lr.j.room(len(cur.NVLinks), "NVLinks"):
		r.Format = "nvlink"
		cur.NVLinks = append(cur.NVLinks, nvlinkOf(reNVLinkLine.FindStringSubmatch(l)))
	case reElision.MatchString(l):
		lr.elided++
	case nvlinkStatus(cur, l):
		r.Format = "nvlink"
	default:
		lr.unknown++
		lr.lastUnknown = true
	}
	return true
}

// isNVLinkLine: "Link N: <speed> GB/s" or "Link N: <inactive>"; a link
// line cut before its state ("Link 5:", "Link 5: 25 G") is none.
func isNVLinkLine(l string) bool {
	m := reNVLinkLine.FindStringSubmatch(l)
	return m != nil && (strings.Contains(strings.ToLower(m[2]), "inactive") || strings.HasSuffix(m[2], "GB/s") && parseFloatPtr(m[2]) != nil)
}

// listGPU reads a "GPU N: name (UUID: ...)" line; a UUID elided to "..."
// is left empty.
func listGPU(m []string) SMIGPU {
	g := SMIGPU{Name: m[2], UUID: strings.TrimSpace(m[3])}
	if n := parseIntPtr(m[1]); n != nil {
		g.Index = *n
	}
	if g.UUID == "..." {
		g.UUID = ""
	}
	return g
}

// nvlinkOf reads a "Link N: 25 GB/s" or "Link N: <inactive>" line.
func nvlinkOf(m []string) NVLink {
	link := NVLink{}
	if n := parseIntPtr(m[1]); n != nil {
		link.Link = *n
	}
	if strings.Contains(strings.ToLower(m[2]), "inactive") {
		link.Active = false
	} else if s := parseFloatPtr(m[2]); s != nil {
		link.Active, link.SpeedGBps = true, s
	}
	return link
}

// nvlinkStatus reads the lines nvlink -s prints instead of links, into cur
// where there is one; false for any other line.
func nvlinkStatus(cur *SMIGPU, l string) bool {
	switch {
	case strings.Contains(strings.ToLower(l), "all links are inactive"):
		// nvidia-smi says so when a GPU has NVLinks but none is up.
		if cur != nil {
			cur.NVLinks = append(cur.NVLinks, NVLink{Link: 0})
			cur.NVLinkStatus = NVLinkAllInactive
		}
	case strings.Contains(l, "not supported for Devices in MIG mode"):
		// NVLink is not queried while the GPU is in MIG mode.
		if cur != nil {
			cur.NVLinkStatus, cur.MIGMode = NVLinkMIGMode, "Enabled"
		}
	case strings.Contains(l, "does not have or support Nvlink"), strings.Contains(l, "does not support NVLink"):
		if cur != nil {
			cur.NVLinkStatus = NVLinkNotSupported
		}
	default:
		return false
	}
	return true
}

func reMIGMatch(l string, cur *SMIGPU) bool {
	m := reListMIG.FindStringSubmatch(l)
	if m == nil {
		return false
	}
	d := MIGDevice{Profile: m[1], UUID: strings.TrimSpace(m[3])}
	if n := parseIntPtr(m[2]); n != nil {
		d.Index = *n
	}
	cur.MIGDevices = append(cur.MIGDevices, d)
	return true
}
