package probe

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DmesgReport is what a kernel log says about the GPUs: XIDs by code and GPU,
// GPUs that fell off the bus, and driver probe failures.
type DmesgReport struct {
	Header
	// TimestampStyle is the prefix style seen: "raw" ([ 12.345678]),
	// "ctime" (dmesg -T: [Sun Feb 23 16:24:18 2025]), "iso" (dmesg
	// --time-format iso), "syslog" (journalctl -k / /var/log/messages),
	// "kmsg" (/dev/kmsg records: "6,3964,206764307,-;text") or "none".
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
	// (RmInitAdapter failed, probe of ... failed, the probe routine failed,
	// GSP/FSP/VBIOS boot failures); ProbeFailures are the probe's own
	// failure lines (at most 20).
	ProbeFailed   bool     `json:"probeFailed"`
	ProbeFailures []string `json:"probeFailures"`
	// DriverInitFailures are the GPUs the driver could not bring up, each
	// with the cause its messages name (GSP or FSP firmware boot, VBIOS
	// boot, BAR, unsupported GPU) and the action it calls for.
	DriverInitFailures []DriverFailure `json:"driverInitFailures"`
	// DriverRuntimeFailures are the GPUs the driver lost after bringing
	// them up, by what its messages name (GSP heartbeat or RPC timeout,
	// memory subsystem error), with or without an XID.
	DriverRuntimeFailures []DriverFailure `json:"driverRuntimeFailures"`
	// APIMismatch holds "NVRM: API mismatch" messages: the user-space driver
	// and the kernel module are different versions.
	APIMismatch []string `json:"apiMismatch"`
	// SXIDs groups the NVSwitch SXid events by code, switch and link, in
	// order of first appearance.
	SXIDs []SXIDCount `json:"sxids"`
}

// SXIDCount is one NVSwitch SXid code seen on one switch link. The Fabric
// Manager User Guide documents the codes; the line itself says whether the
// error was fatal ("Fatal" / "Non-fatal").
type SXIDCount struct {
	Code int `json:"code"`
	// Switch is the NVSwitch device as the driver names it
	// ("nvidia-nvswitch1") and BusID its PCI address ("0000:06:00.0").
	Switch string `json:"switch"`
	BusID  string `json:"busId"`
	// Link is the NVLink port the line names; nil when it names none.
	Link *int `json:"link"`
	// Fatal: the line said "Fatal"; nil when it said neither.
	Fatal        *bool  `json:"fatal"`
	Count        int    `json:"count"`
	FirstMessage string `json:"firstMessage"`
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
	// Severity is the word NVLink5 XIDs (144-150) print after their
	// mnemonic: "fatal" when any occurrence said "Fatal", "nonfatal" when
	// all said "Nonfatal", "" for XIDs without it.
	Severity string `json:"severity,omitempty"`
	// CausedBy is the earlier XID the first line names ("caused by
	// previous Xid 145"); 0 when it names none. Class is then that XID's
	// class where it implicates the GPU (the cleanup inherits the cause).
	CausedBy int `json:"causedBy,omitempty"`
	// Links are the NVLink ports the lines name ("Link 03"), ascending,
	// without repeats: an NVLink XID (74, 136, 144-150) grouped by GPU and
	// link. Empty when no line names a link.
	Links []int `json:"links"`
}

var (
	reDecodePrefix = regexp.MustCompile(`^[a-z]+\s*:[a-z]+\s*:\s?`)
	reTSRaw        = regexp.MustCompile(`^\[\s*\d+\.\d+\]\s?`)
	reTSCtime      = regexp.MustCompile(`^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2}\s+\d{1,2} \d{2}:\d{2}:\d{2} \d{4}\]\s?`)
	reTSISO        = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\s`)
	reTSSyslog     = regexp.MustCompile(`^[A-Z][a-z]{2}\s+\d{1,2} \d{2}:\d{2}:\d{2} (?:\S+ )?kernel:\s?(?:\[\s*\d+\.\d+\]\s?)?`)
	// reXID is an XID line. The GPU is what the parentheses hold: a bus ID,
	// or what a redacted paste left of it ("PCI:...", "0000:xx:00").
	reXID       = regexp.MustCompile(`NVRM: Xid \((?:PCI:)?([^()]{1,40})\): (\d+),?\s*(.*)`)
	reBusInText = regexp.MustCompile(`([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-9A-Fa-f])?`)
	// reProbeFailed: the driver could not bring a GPU up. "This PCI I/O
	// region assigned to your NVIDIA device is invalid: BARn is 0M" (the
	// BIOS gave the GPU no BAR: the driver refuses it) is one of them
	// (Dunedan/mbp-2016-linux#60; NVIDIA's nv-pci.c prints it).
	reProbeFailed  = regexp.MustCompile(`RmInitAdapter failed|rm_init_adapter failed|probe of [0-9a-f:.]+ failed with error|NVIDIA probe routine failed|None of the NVIDIA devices were initialized|failed to allocate (?:a )?PCI|installed in this system is not supported by the|No NVIDIA graphics adapter probed|NVIDIA probe routine was not called|No NVIDIA (?:graphics adapter|GPU) found|PCI I/O region assigned to your NVIDIA device is invalid`)
	reDriverPrefix = regexp.MustCompile(`^(?:nvidia(?:-[a-z]+)?\d*|nouveau|nvidia_uvm|nvidia_drm|nvidia_modeset)(?: \S+)?: |^(?:nvidia-[a-z]+|nvidia-peermem) `)
	reTSKmsg       = regexp.MustCompile(`^\d{1,3},\d+,\d+,[-cC+][^;]*;`)
	reSXID         = regexp.MustCompile(`(nvidia-nvswitch\d*): SXid \((?:PCI:)?([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?)\): (\d+),?\s*(.*)`)
	reSXIDLink     = regexp.MustCompile(`\bLink (\d+)\b`)
	reXIDSeverity  = regexp.MustCompile(`^\S+ (Fatal|Nonfatal|Non-fatal)\b`)
)

type tsStyle struct {
	name string
	re   *regexp.Regexp
}

var (
	tsBracket = []tsStyle{{"raw", reTSRaw}, {"ctime", reTSCtime}}
	tsSyslog  = []tsStyle{{"syslog", reTSSyslog}}
	tsDigit   = []tsStyle{{"kmsg", reTSKmsg}, {"iso", reTSISO}}
)

// ParseDmesg reads a kernel log (dmesg in any timestamp style, journalctl -k,
// /var/log/kern.log) and judges the NVIDIA driver's messages in it.
func ParseDmesg(data []byte) *DmesgReport {
	r := &DmesgReport{TimestampStyle: "none"}
	j := newJudge(&r.Header, KindDmesg)
	lr := kernelLogReader{styles: map[string]int{}}
	for _, l := range lines(data) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		r.Lines++
		lr.line(l)
	}
	best := 0
	for s, n := range lr.styles {
		if n > best || (n == best && s < r.TimestampStyle) {
			r.TimestampStyle, best = s, n
		}
	}
	ev := dmesgEvents{r: r, xids: map[string]int{}, sxids: map[string]int{}, fallen: map[string]bool{}, init: driverInit{byBus: map[string]int{}}}
	for _, b := range lr.records {
		ev.record(b.String())
	}
	ev.init.done(r)
	judgeDmesg(r, j, lr.kernelish)
	j.done()
	fillNil(r)
	return r
}

// kernelLogReader joins a kernel log's lines into records, one per message,
// without their timestamps.
type kernelLogReader struct {
	records []*strings.Builder
	// styles counts the lines of each timestamp style.
	styles map[string]int
	// kernelish counts the lines that look like kernel log lines.
	kernelish int
}

func (lr *kernelLogReader) line(l string) {
	rest := l
	if c := l[0]; c >= 'a' && c <= 'z' {
		rest = reDecodePrefix.ReplaceAllString(l, "")
	}
	style, rest := stripTimestamp(rest)
	switch {
	case style != "":
		lr.styles[style]++
		lr.kernelish++
		lr.add(rest)
	case len(lr.records) > 0 && (l[0] == ' ' || l[0] == '\t'):
		// A continuation line: the driver printed one message over
		// several lines, each indented under the first.
		if last := lr.records[len(lr.records)-1]; last.Len() < 1<<14 {
			last.WriteString(" ")
			last.WriteString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "NVRM:")))
		}
	default:
		// Without a timestamp only the driver's own prefixes make a
		// line a kernel log line ("nvidia" alone appears in any text).
		if strings.Contains(l, "NVRM:") || reDriverPrefix.MatchString(strings.TrimSpace(rest)) {
			lr.kernelish++
		}
		lr.add(strings.TrimSpace(rest))
	}
}

func (lr *kernelLogReader) add(s string) {
	b := &strings.Builder{}
	b.WriteString(s)
	lr.records = append(lr.records, b)
}

// stripTimestamp returns the timestamp style l starts with and the text
// after the timestamp; "" and l when it starts with none.
func stripTimestamp(l string) (style, rest string) {
	if l == "" {
		return "", l
	}
	var candidates []tsStyle
	switch c := l[0]; {
	case c == '[':
		candidates = tsBracket
	case c >= '0' && c <= '9':
		candidates = tsDigit
	case c >= 'A' && c <= 'Z':
		candidates = tsSyslog
	}
	for _, ts := range candidates {
		if loc := ts.re.FindStringIndex(l); loc != nil {
			return ts.name, l[loc[1]:]
		}
	}
	return "", l
}

// dmesgEvents files a kernel log's driver messages into the report: SXids,
// XIDs, GPUs fallen off the bus, API mismatches and probe failures.
type dmesgEvents struct {
	r *DmesgReport
	// xids and sxids index the report's counts by code and device;
	// fallen holds the lower-case bus IDs already reported fallen.
	xids, sxids map[string]int
	fallen      map[string]bool
	init        driverInit
}

// record files one message; the first kind that matches takes it.
func (ev *dmesgEvents) record(rec string) {
	if !strings.Contains(rec, "NVRM") && !strings.Contains(rec, "nvidia") && !strings.Contains(rec, "nouveau") {
		return
	}
	if strings.Contains(rec, "SXid") {
		if m := reSXID.FindStringSubmatch(rec); m != nil {
			addSXID(ev.r, ev.sxids, m)
			return
		}
	}
	if m := reXID.FindStringSubmatch(rec); m != nil {
		ev.xid(m)
		return
	}
	r := ev.r
	switch {
	case strings.Contains(rec, "fallen off the bus"):
		bus := ""
		if m := reBusInText.FindStringSubmatch(rec); m != nil {
			bus = trimFunction(m[1])
		}
		addFallen(r, ev.fallen, bus)
	case strings.Contains(rec, "NVRM: API mismatch"):
		r.APIMismatch = append(r.APIMismatch, truncate(rec, 300))
	default:
		ev.init.record(r, rec)
	}
}

// xid counts one XID line: m holds the bus, code and text. An XID 79 also
// marks its GPU fallen off the bus.
func (ev *dmesgEvents) xid(m []string) {
	code, err := strconv.Atoi(m[2])
	if err != nil {
		return
	}
	r := ev.r
	bus := trimFunction(m[1])
	text := strings.TrimSpace(m[3])
	key := fmt.Sprintf("%d/%s", code, strings.ToLower(bus))
	sev := xidSeverity(code, text)
	if i, ok := ev.xids[key]; ok {
		r.XIDs[i].Count++
		if sev == "fatal" || r.XIDs[i].Severity == "" {
			r.XIDs[i].Severity = sev
		}
		r.XIDs[i].Links = addLink(r.XIDs[i].Links, text)
	} else if len(r.XIDs) < maxRecords {
		x := XIDCount{Code: code, BusID: bus, Count: 1, FirstMessage: truncate(text, 300), Severity: sev, Links: addLink(nil, text)}
		if info, ok := LookupXID(code); ok {
			x.Mnemonic, x.Description, x.Class = info.Mnemonic, info.Description, info.Class
		}
		if c, ok := xidCause(x); ok {
			x.CausedBy = c.Code
			x.Class = causedClass(c, x.Class)
		}
		ev.xids[key] = len(r.XIDs)
		r.XIDs = append(r.XIDs, x)
	}
	if code == 79 {
		addFallen(r, ev.fallen, bus)
	}
}

// reXIDLink is the NVLink port an XID line names: "Link 03", "link 17".
var reXIDLink = regexp.MustCompile(`\b[Ll]ink (\d{1,3})\b`)

// addLink adds the link an XID line names to links, kept ascending and
// without repeats.
func addLink(links []int, text string) []int {
	m := reXIDLink.FindStringSubmatch(text)
	if m == nil {
		return links
	}
	n, _ := strconv.Atoi(m[1])
	i, found := slices.BinarySearch(links, n)
	if found {
		return links
	}
	return slices.Insert(links, i, n)
}

// causedClass is the class of an XID whose line names an earlier XID as
// its cause (Xid 45 "caused by previous Xid 145"): the cause's class where
// it implicates the GPU, the XID's own otherwise. An NVLink5 XID (144-150)
// that caused one is a GPU reset: NVIDIA's decode table for XIDs 144-150
// lists an application crash (Xid 45) as the local effect only of errors
// it resolves with RESET_GPU or XID_154_EVAL (the recovery action a
// following Xid 154 names), never of those it says to ignore.
// Source: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
// (sheet "XID 144-150 Decode", as mirrored by leptonai/gpud
// components/accelerator/nvidia/xid/catalog_generated.go, commit 4a8de33, checked 2026-12-03).
func causedClass(cause XIDInfo, own string) string {
	switch {
	case cause.Code >= 144 && cause.Code <= 150:
		return XIDReset
	case cause.Class != XIDApplication && cause.Class != XIDBenign:
		return cause.Class // the earlier XID the line names decides, not this one's cleanup
	}
	return own
}

// xidSeverity reads the word NVLink5 XIDs (144-150) print after their
// mnemonic: "fatal", "nonfatal", or "" for other XIDs and lines without it.
func xidSeverity(code int, text string) string {
	if code < 144 || code > 150 {
		return ""
	}
	sm := reXIDSeverity.FindStringSubmatch(text)
	switch {
	case sm == nil:
		return ""
	case sm[1] == "Fatal":
		return "fatal"
	}
	return "nonfatal"
}

// addSXID counts one SXid line: m holds the switch, bus, code and text.
func addSXID(r *DmesgReport, index map[string]int, m []string) {
	code, err := strconv.Atoi(m[3])
	if err != nil {
		return
	}
	text := strings.TrimSpace(m[4])
	var link *int
	if lm := reSXIDLink.FindStringSubmatch(text); lm != nil {
		link = parseIntPtr(lm[1])
	}
	var fatal *bool
	switch low := strings.ToLower(text); {
	case strings.HasPrefix(low, "non-fatal"), strings.HasPrefix(low, "nonfatal"):
		fatal = ptr(false)
	case strings.HasPrefix(low, "fatal"):
		fatal = ptr(true)
	}
	key := fmt.Sprintf("%d/%s/%s/%s", code, m[1], strings.ToLower(m[2]), itoa(link))
	if i, ok := index[key]; ok {
		r.SXIDs[i].Count++
		if r.SXIDs[i].Fatal == nil {
			r.SXIDs[i].Fatal = fatal
		}
		return
	}
	if link == nil && fatal == nil && (strings.HasPrefix(text, "Severity ") || strings.HasPrefix(text, "Data {")) {
		// The detail lines the driver prints after an event ("Severity 1
		// Engine instance 60 ...", "Data {...}") are not events.
		return
	}
	if len(r.SXIDs) >= maxRecords {
		return
	}
	index[key] = len(r.SXIDs)
	r.SXIDs = append(r.SXIDs, SXIDCount{Code: code, Switch: m[1], BusID: m[2], Link: link, Fatal: fatal, Count: 1, FirstMessage: truncate(text, 300)})
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
		if judgeXID(j, x) && x.Code == 79 {
			xid79[strings.ToLower(x.BusID)] = true
		}
	}
	for _, x := range r.SXIDs {
		judgeSXID(j, x)
	}
	for _, bus := range r.FallenOffBus {
		if !xid79[strings.ToLower(bus)] {
			j.fail("gpu-fallen-off-bus", bus, "the driver reports the GPU fallen off the bus and not responding")
		}
	}
	judgeDriverInit(r, j)
	if len(r.APIMismatch) > 0 {
		j.fail("driver-api-mismatch", "", "the NVIDIA kernel module and the user-space driver are different versions: %s", truncate(r.APIMismatch[0], 200))
	}
}

// xidClass is the action an XID count calls for: the catalogue's class,
// read from the message for XID 154, and from the fatal/nonfatal word for
// NVLink5 XIDs (a fatal one needs a GPU reset, a non-fatal one was
// corrected).
func xidClass(x XIDCount) string {
	switch {
	case x.Severity == "fatal":
		return XIDReset
	case x.Severity != "":
		return XIDBenign
	case x.Code == 154:
		return xid154Class(x.FirstMessage)
	}
	return x.Class
}

// reXIDCause is the driver's "caused by previous Xid N" at the end of an
// XID line (Xid 45's channel teardown after an NVLink or memory error).
// Source: https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1150 (2026-05-18).
var reXIDCause = regexp.MustCompile(`caused by previous Xid (\d{1,4})\b`)

// xidCause is the catalogue entry of the earlier XID an XID line names as
// its cause; false when the line names none, or one not in the catalogue.
func xidCause(x XIDCount) (XIDInfo, bool) {
	m := reXIDCause.FindStringSubmatch(x.FirstMessage)
	if m == nil {
		return XIDInfo{}, false
	}
	code, _ := strconv.Atoi(m[1])
	if code == x.Code {
		return XIDInfo{}, false
	}
	return LookupXID(code)
}

// judgeXID adds the finding of one XID count by its class; it reports
// whether the class asks for a reboot.
func judgeXID(j *judge, x XIDCount) (reboot bool) {
	msg := fmt.Sprintf("XID %d (%s) x%d%s: %s", x.Code, x.Description, x.Count, linksText(x.Links), truncate(x.FirstMessage, 160))
	if c, ok := xidCause(x); ok {
		msg += fmt.Sprintf(" (caused by XID %d, %s: judged by that XID)", c.Code, c.Description)
	}
	switch xidClass(x) {
	case XIDApplication:
		j.warn("xid-application", x.BusID, "%s — an application fault (NVIDIA: restart the application); the GPU is not implicated", msg)
	case XIDBenign:
		j.info("xid-benign", x.BusID, "%s — informational", msg)
	case XIDReset:
		j.fail("xid-reset", x.BusID, "%s — the GPU needs a reset", msg)
	case XIDReboot:
		j.fail("xid-reboot", x.BusID, "%s — the node needs a reboot", msg)
		return true
	case XIDHardware:
		j.fail("xid-hardware", x.BusID, "%s — a hardware fault is suspected", msg)
	case XIDInvestigate:
		j.unusable("xid-investigate", x.BusID, "%s — the log line alone cannot tell whether this needs action", msg)
	default:
		j.unusable("xid-uncatalogued", x.BusID, "%s — XID %d is not in gpuctl's catalogue (%s)", msg, x.Code, XIDCatalogueSource)
	}
	return false
}

// judgeSXID adds the finding of one NVSwitch SXid count by whether its line
// said it was fatal.
func judgeSXID(j *judge, x SXIDCount) {
	where := x.Switch
	if x.Link != nil {
		where = fmt.Sprintf("%s link %d", x.Switch, *x.Link)
	}
	msg := fmt.Sprintf("NVSwitch SXid %d on %s x%d: %s", x.Code, where, x.Count, truncate(x.FirstMessage, 160))
	switch {
	case x.Fatal != nil && *x.Fatal:
		j.fail("sxid-fatal", x.BusID, "%s — a fatal NVSwitch error: the fabric needs a reset of the GPUs and switches (Fabric Manager User Guide)", msg)
	case x.Fatal != nil:
		j.warn("sxid-nonfatal", x.BusID, "%s — a non-fatal NVSwitch error, corrected by the switch", msg)
	default:
		j.unusable("sxid-unclassified", x.BusID, "%s — the line does not say whether the error was fatal", msg)
	}
}

// linksText is " on link 3" / " on links 0, 3, 17" for an XID group's
// links; "" when its lines name none.
func linksText(links []int) string {
	switch len(links) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(" on link %d", links[0])
	}
	parts := make([]string, len(links))
	for i, l := range links {
		parts[i] = strconv.Itoa(l)
	}
	return " on links " + strings.Join(parts, ", ")
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
