package probe

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// `dcgmi nvlink --link-status` prints each GPU's and NVSwitch's links as a
// row of state letters under a small box of its own:
//
//	+----------------------+
//	|  NvLink Link Status  |
//	+----------------------+
//	GPUs:
//	    gpuId 0:
//	        D D D D D D D D D D D D D D D D D D
//	NvSwitches:
//	    No NvSwitches found.
//
//	Key: Up=U, Down=D, Disabled=X, Not Supported=_
//
// (https://docs.nvidia.com/datacenter/dcgm/latest/reference/command-line-reference/dcgmi/dcgmi-nvlink.html,
// checked 2026-12-03; the corpus' NVIDIA/DCGM#198 output, DCGM 3.3.7).
// Pasted before `dcgmi diag`'s table, its box is no diag row: the reader
// takes the section out before the diag table is read.

// DCGMLinkStatus is one device's links as `dcgmi nvlink --link-status`
// shows them.
type DCGMLinkStatus struct {
	// Device is "gpu" or "nvswitch"; ID its gpuId or physicalId.
	Device string `json:"device"`
	ID     int    `json:"id"`
	// Links are the links' states in link order, as printed: "U" up, "D"
	// down, "X" disabled, "_" not supported.
	Links []string `json:"links"`
}

// Down counts the links in state D.
func (s DCGMLinkStatus) Down() int {
	n := 0
	for _, l := range s.Links {
		if l == "D" {
			n++
		}
	}
	return n
}

var (
	reDCGMLinkTitle  = regexp.MustCompile(`^\|\s*NvLink Link Status\s*\|$`)
	reDCGMLinkDevice = regexp.MustCompile(`^(gpuId|physicalId) (\d+):$`)
	reDCGMLinkStates = regexp.MustCompile(`^[UDX_](?: [UDX_])*$`)
)

// takeDCGMLinkStatus reads the link-status sections of ls into r and
// returns the other lines, for the diag table's reader.
func takeDCGMLinkStatus(r *DCGMReport, ls []string) []string {
	out := make([]string, 0, len(ls))
	for i := 0; i < len(ls); i++ {
		if !reDCGMLinkTitle.MatchString(strings.TrimSpace(ls[i])) {
			out = append(out, ls[i])
			continue
		}
		if n := len(out); n > 0 && strings.HasPrefix(strings.TrimSpace(out[n-1]), "+-") {
			out = out[:n-1] // the box's top border
		}
		i = readDCGMLinkSection(r, ls, i+1)
	}
	return out
}

// readDCGMLinkSection reads the section after the title at ls[i] up to its
// Key line (or the first line of something else) and returns the index of
// its last line.
func readDCGMLinkSection(r *DCGMReport, ls []string, i int) int {
	device := "gpu"
	for ; i < len(ls); i++ {
		t := strings.TrimSpace(ls[i])
		switch {
		case t == "" || strings.HasPrefix(t, "+-") || t == "GPUs:" || strings.HasPrefix(t, "No NvSwitches"):
		case t == "NvSwitches:":
			device = "nvswitch"
		case strings.HasPrefix(t, "Key:"):
			return i
		case reDCGMLinkDevice.MatchString(t):
			if len(r.LinkStatus) < maxRecords {
				id, _ := strconv.Atoi(reDCGMLinkDevice.FindStringSubmatch(t)[2])
				r.LinkStatus = append(r.LinkStatus, DCGMLinkStatus{Device: device, ID: id})
			}
		case reDCGMLinkStates.MatchString(t) && len(r.LinkStatus) > 0:
			last := &r.LinkStatus[len(r.LinkStatus)-1]
			last.Links = append(last.Links, strings.Fields(t)...)
		default:
			return i - 1
		}
	}
	return i - 1
}

// judgeDCGMLinks fails every device with links Down: a link that is not
// disabled and not unsupported is expected up (an NVLink GPU's or
// NVSwitch's), so a Down one is a broken NVLink; NVIDIA's health checks
// tolerate no inactive NVLink per GPU (nvlink_active, max_inactive_nvlinks
// 0: https://docs.nvidia.com/health-validation/reference/checks/nvlink,
// checked 2026-12-03).
func judgeDCGMLinks(r *DCGMReport, j *judge) {
	for _, s := range r.LinkStatus {
		down := s.Down()
		if down == 0 {
			continue
		}
		var which []string
		for k, l := range s.Links {
			if l == "D" {
				which = append(which, strconv.Itoa(k))
			}
		}
		gpu, name := "", fmt.Sprintf("NVSwitch %d", s.ID)
		if s.Device == "gpu" {
			gpu, name = strconv.Itoa(s.ID), fmt.Sprintf("GPU %d", s.ID)
		}
		if down == len(s.Links) {
			j.fail("dcgm-nvlink-down", gpu, "all %d NVLinks of %s are Down in dcgmi nvlink --link-status", down, name)
			continue
		}
		j.fail("dcgm-nvlink-down", gpu, "%d of %d NVLinks of %s are Down (links %s) in dcgmi nvlink --link-status", down, len(s.Links), name, truncate(strings.Join(which, ", "), 120))
	}
}
