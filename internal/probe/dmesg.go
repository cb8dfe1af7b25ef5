package probe

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// DmesgReport is what a kernel log says about the GPUs: XIDs by code and GPU,
// GPUs that fell off the bus, and driver probe failures.
type DmesgReport struct {
	Header
	// TimestampStyle is the prefix style seen: "raw" ([ 12.345678]),
	// "ctime" (dmesg -T: [Sun Feb 23 16:24:18 2025]), "iso" (dmesg
	// --time-format iso), "syslog" (journalctl -k / /var/log/messages) or
	// "none".
	TimestampStyle string `json:"timestampStyle"`
	// Lines is the number of kernel log lines read (continuation lines
	// included).
	Lines int `json:"lines"`
	// XIDs groups the XID events by code and GPU, in order of first
	// appearance.
	XIDs []XIDCount `json:"xids"`
	// FallenOffBus lists the GPUs (domain:bus:device) the driver reported
	// fallen off the bus, with or without an XID 79.
	FallenOffBus []string `json:"fallenOffBus"`
	// ProbeFailed is true when the driver failed to initialise a GPU
	// (RmInitAdapter failed, probe of ... failed, the probe routine failed).
	ProbeFailed   bool     `json:"probeFailed"`
	ProbeFailures []string `json:"probeFailures"`
	// APIMismatch holds "NVRM: API mismatch" messages: the user-space driver
	// and the kernel module are different versions.
	APIMismatch []string `json:"apiMismatch"`
}

// XIDCount is one XID code seen on one GPU.
type XIDCount struct {
	Code int `json:"code"`
	// BusID is the GPU as the driver names it, e.g. "0000:9b:00".
	BusID string `json:"busId"`
	Count int    `json:"count"`
	// Mnemonic, Description and Class come from the catalogue; Class is ""
	// for an XID the catalogue does not list.
	Mnemonic    string `json:"mnemonic,omitempty"`
	Description string `json:"description,omitempty"`
	Class       string `json:"class"`
	// FirstMessage is the text after the code on the first occurrence.
	FirstMessage string `json:"firstMessage"`
}

var (
	reDecodePrefix = regexp.MustCompile(`^[a-z]+\s*:[a-z]+\s*:\s?`)
	reTSRaw        = regexp.MustCompile(`^\[\s*\d+\.\d+\]\s?`)
	reTSCtime      = regexp.MustCompile(`^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2}\s+\d{1,2} \d{2}:\d{2}:\d{2} \d{4}\]\s?`)
	reTSISO        = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\s`)
	reTSSyslog     = regexp.MustCompile(`^[A-Z][a-z]{2}\s+\d{1,2} \d{2}:\d{2}:\d{2} (?:\S+ )?kernel:\s?(?:\[\s*\d+\.\d+\]\s?)?`)
	reXID          = regexp.MustCompile(`NVRM: Xid \((?:PCI:)?([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?)\): (\d+),?\s*(.*)`)
	reBusInText    = regexp.MustCompile(`([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-9A-Fa-f])?`)
	reProbeFailed  = regexp.MustCompile(`RmInitAdapter failed|rm_init_adapter failed|probe of [0-9a-f:.]+ failed with error|NVIDIA probe routine failed|None of the NVIDIA devices were initialized|failed to allocate (?:a )?PCI|installed in this system is not supported by the`)
)

type tsStyle struct {
	name string
	re   *regexp.Regexp
}

var (
	tsBracket = []tsStyle{{"raw", reTSRaw}, {"ctime", reTSCtime}}
	tsISO     = []tsStyle{{"iso", reTSISO}}
	tsSyslog  = []tsStyle{{"syslog", reTSSyslog}}
)

// ParseDmesg reads a kernel log (dmesg in any timestamp style, journalctl -k,
// /var/log/kern.log) and judges the NVIDIA driver's messages in it.
func ParseDmesg(data []byte) *DmesgReport {
	r := &DmesgReport{TimestampStyle: "none"}
	j := newJudge(&r.Header, KindDmesg)
	styles := map[string]int{}
	var records []*strings.Builder
	add := func(s string) {
		b := &strings.Builder{}
		b.WriteString(s)
		records = append(records, b)
	}
	kernelish := 0
	for _, l := range lines(data) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		r.Lines++
		rest := l
		if c := l[0]; c >= 'a' && c <= 'z' {
			rest = reDecodePrefix.ReplaceAllString(l, "")
		}
		style := ""
		if rest != "" {
			var candidates []tsStyle
			switch c := rest[0]; {
			case c == '[':
				candidates = tsBracket
			case c >= '0' && c <= '9':
				candidates = tsISO
			case c >= 'A' && c <= 'Z':
				candidates = tsSyslog
			}
			for _, ts := range candidates {
				if loc := ts.re.FindStringIndex(rest); loc != nil {
					style, rest = ts.name, rest[loc[1]:]
					break
				}
			}
		}
		switch {
		case style != "":
			styles[style]++
			kernelish++
			add(rest)
		case len(records) > 0 && (l[0] == ' ' || l[0] == '\t'):
			// A continuation line: the driver printed one message over
			// several lines, each indented under the first.
			if last := records[len(records)-1]; last.Len() < 1<<14 {
				last.WriteString(" ")
				last.WriteString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "NVRM:")))
			}
		default:
			if strings.Contains(l, "NVRM:") || strings.Contains(l, "nvidia") {
				kernelish++
			}
			add(strings.TrimSpace(rest))
		}
	}
	best := 0
	for s, n := range styles {
		if n > best || (n == best && s < r.TimestampStyle) {
			r.TimestampStyle, best = s, n
		}
	}
	index := map[string]int{}
	fallen := map[string]bool{}
	for _, b := range records {
		rec := b.String()
		if !strings.Contains(rec, "NVRM") && !strings.Contains(rec, "nvidia") {
			continue
		}
		if m := reXID.FindStringSubmatch(rec); m != nil {
			code, err := strconv.Atoi(m[2])
			if err != nil {
				continue
			}
			bus := trimFunction(m[1])
			key := fmt.Sprintf("%d/%s", code, strings.ToLower(bus))
			if i, ok := index[key]; ok {
				r.XIDs[i].Count++
			} else if len(r.XIDs) < maxRecords {
				x := XIDCount{Code: code, BusID: bus, Count: 1, FirstMessage: truncate(strings.TrimSpace(m[3]), 300)}
				if info, ok := LookupXID(code); ok {
					x.Mnemonic, x.Description, x.Class = info.Mnemonic, info.Description, info.Class
				}
				index[key] = len(r.XIDs)
				r.XIDs = append(r.XIDs, x)
			}
			if code == 79 {
				addFallen(r, fallen, bus)
			}
			continue
		}
		if strings.Contains(rec, "fallen off the bus") {
			if m := reBusInText.FindStringSubmatch(rec); m != nil {
				addFallen(r, fallen, trimFunction(m[1]))
			} else {
				addFallen(r, fallen, "")
			}
			continue
		}
		if strings.Contains(rec, "NVRM: API mismatch") {
			r.APIMismatch = append(r.APIMismatch, truncate(rec, 300))
			continue
		}
		if reProbeFailed.MatchString(rec) {
			r.ProbeFailed = true
			if len(r.ProbeFailures) < 20 {
				r.ProbeFailures = append(r.ProbeFailures, truncate(rec, 300))
			}
		}
	}
	judgeDmesg(r, j, kernelish)
	j.done()
	fillNil(r)
	return r
}

func addFallen(r *DmesgReport, seen map[string]bool, bus string) {
	key := strings.ToLower(bus)
	if seen[key] {
		return
	}
	seen[key] = true
	r.FallenOffBus = append(r.FallenOffBus, bus)
}

func judgeDmesg(r *DmesgReport, j *judge, kernelish int) {
	if kernelish == 0 {
		j.unusable("not-a-kernel-log", "", "no kernel log lines found (no dmesg/journal timestamps, no NVRM messages)")
		return
	}
	xid79 := map[string]bool{}
	for _, x := range r.XIDs {
		msg := fmt.Sprintf("XID %d (%s) x%d: %s", x.Code, x.Description, x.Count, truncate(x.FirstMessage, 160))
		class := x.Class
		if x.Code == 154 {
			class = xid154Class(x.FirstMessage)
		}
		switch class {
		case XIDApplication:
			j.warn("xid-application", x.BusID, "%s — an application fault (NVIDIA: restart the application); the GPU is not implicated", msg)
		case XIDBenign:
			j.info("xid-benign", x.BusID, "%s — informational", msg)
		case XIDReset:
			j.fail("xid-reset", x.BusID, "%s — the GPU needs a reset", msg)
		case XIDReboot:
			j.fail("xid-reboot", x.BusID, "%s — the node needs a reboot", msg)
			if x.Code == 79 {
				xid79[strings.ToLower(x.BusID)] = true
			}
		case XIDHardware:
			j.fail("xid-hardware", x.BusID, "%s — a hardware fault is suspected", msg)
		case XIDInvestigate:
			j.unusable("xid-investigate", x.BusID, "%s — the log line alone cannot tell whether this needs action", msg)
		default:
			j.unusable("xid-uncatalogued", x.BusID, "%s — XID %d is not in gpuctl's catalogue (%s)", msg, x.Code, XIDCatalogueSource)
		}
	}
	for _, bus := range r.FallenOffBus {
		if !xid79[strings.ToLower(bus)] {
			j.fail("gpu-fallen-off-bus", bus, "the driver reports the GPU fallen off the bus and not responding")
		}
	}
	if r.ProbeFailed {
		j.fail("driver-probe-failed", "", "the NVIDIA driver failed to initialise a GPU: %s", truncate(r.ProbeFailures[0], 200))
	}
	if len(r.APIMismatch) > 0 {
		j.fail("driver-api-mismatch", "", "the NVIDIA kernel module and the user-space driver are different versions: %s", truncate(r.APIMismatch[0], 200))
	}
}

// xid154Class reads the action an XID 154 names.
func xid154Class(msg string) string {
	low := strings.ToLower(msg)
	switch {
	case strings.Contains(low, "reboot"):
		return XIDReboot
	case strings.Contains(low, "reset") || strings.Contains(low, "drain"):
		return XIDReset
	case strings.Contains(low, "none"):
		return XIDBenign
	}
	return XIDInvestigate
}

// trimFunction drops a PCI function suffix: "0000:2b:00.0" -> "0000:2b:00".
func trimFunction(bus string) string {
	if i := strings.LastIndexByte(bus, '.'); i > 0 && strings.Count(bus, ":") == 2 {
		return bus[:i]
	}
	return bus
}
