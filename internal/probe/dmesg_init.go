package probe

import (
	"regexp"
	"strings"
)

// DriverFailure is one GPU the NVIDIA driver could not bring up, or lost
// after it had, with what the kernel log says of why. The driver prints no
// XID for a GPU that never came up, and not always one for a GPU whose GSP
// stops answering.
type DriverFailure struct {
	// BusID is the GPU (domain:bus:device, "0000:a1:00"); "" when no line
	// of the failure names one.
	BusID string `json:"busId"`
	// Device is the driver's index of the GPU ("GPU6") where its lines
	// give one; "" otherwise.
	Device string `json:"device,omitempty"`
	// Cause is the most specific stage the log names, one of the
	// InitCause* constants.
	Cause string `json:"cause"`
	// Action is what the cause calls for: "reset" (the GPU), "reboot"
	// (power-cycle the node), "platform" (BIOS/firmware settings of the
	// host), "driver" (a driver that supports the GPU), "investigate".
	Action string `json:"action"`
	// Count is the number of failure lines for this GPU (a driver retries
	// the initialisation on every open).
	Count int `json:"count"`
	// FirstMessage is the line that named the cause, cut to 300 bytes.
	FirstMessage string `json:"firstMessage"`
}

// Causes of a driver initialisation failure, most specific first. Each is
// the driver's own message; the sources are the public reports of it and
// NVIDIA's driver source that prints it.
const (
	// InitCauseGSPWPR2: "_kgspBootGspRm: unexpected WPR2 already up ...
	// (the GPU is likely in a bad state and may need to be reset)": the
	// GSP's protected region survived a previous run. The driver says it:
	// reset the GPU. https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1230,
	// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1058 (2026-08-18).
	InitCauseGSPWPR2 = "gsp-wpr2-already-up"
	// InitCauseFSP: the firmware security processor did not take the boot
	// commands (kfspSendBootCommands, "Timed out waiting for FSP command
	// queue"): the GPU's boot firmware is stuck; a reset, and hardware if
	// it persists. https://github.com/NVIDIA/nvtrust/issues/77.
	InitCauseFSP = "fsp-boot"
	// InitCauseGFW: "failed to wait for GFW_BOOT" / "GFW boot complete":
	// the VBIOS did not finish booting the GPU: power-cycle the node.
	// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/789 (2025-02-20).
	InitCauseGFW = "gfw-boot"
	// InitCauseGSP: "RmInitAdapter: Cannot initialize GSP firmware RM"
	// without a more specific line: the GPU System Processor firmware did
	// not start; NVIDIA's XID catalogue resolves a GPU initialisation
	// failure (XID 143, GPU_INIT_ERROR) with RESET_GPU.
	// https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
	InitCauseGSP = "gsp-init"
	// InitCauseBAR: "This PCI I/O region assigned to your NVIDIA device is
	// invalid: BARn is 0M": the host firmware gave the GPU no memory window
	// (above-4G decoding / resizable BAR off, or too little MMIO space): a
	// platform setting. https://github.com/Dunedan/mbp-2016-linux/issues/60.
	InitCauseBAR = "bar-invalid"
	// InitCauseUnsupported: "The NVIDIA GPU ... installed in this system is
	// not supported by the NVIDIA ... driver release": the driver branch
	// does not support the GPU (NVIDIA's driver README, "Supported GPUs").
	InitCauseUnsupported = "unsupported-gpu"
	// InitCauseRMInit: RmInitAdapter / rm_init_adapter failed with no line
	// naming a stage: the resource manager could not start the GPU; reset
	// it (NVIDIA's XID catalogue: GPU_INIT_ERROR, RESET_GPU).
	InitCauseRMInit = "rm-init"
	// InitCauseProbe: the driver's probe did not take the GPU ("NVIDIA
	// probe routine failed", "No NVIDIA graphics adapter probed", "probe of
	// ... failed with error"): another driver (nouveau) holds it, or the GPU
	// did not answer on PCI; the lines before it say which.
	InitCauseProbe = "probe"
)

// Causes of losing a GPU the driver had brought up, without (or before)
// an XID. NVIDIA's XID catalogue resolves the same conditions reported as
// XIDs (119 GSP RPC timeout, 120 GSP error) with RESET_GPU:
// https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
const (
	// RuntimeCauseMemsys: "Memory Subsystem Error detected" (a sysmembar
	// that timed out). https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1230
	RuntimeCauseMemsys = "memory-subsystem-error"
	// RuntimeCauseGSPHeartbeat: "_kgspIsHeartbeatTimedOut: Heartbeat timed
	// out": the GSP firmware stopped answering.
	// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1230
	RuntimeCauseGSPHeartbeat = "gsp-heartbeat-timeout"
	// RuntimeCauseGSPRPC: "GSP Timeout" / "Timeout waiting for RPC from
	// GSP": an RPC to the GSP did not return.
	// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/446
	RuntimeCauseGSPRPC = "gsp-rpc-timeout"
)

var runtimeCauseRules = []initCauseRule{
	{RuntimeCauseMemsys, XIDReset, regexp.MustCompile(`Memory Subsystem Error detected`)},
	{RuntimeCauseGSPHeartbeat, XIDReset, regexp.MustCompile(`Heartbeat timed out`)},
	{RuntimeCauseGSPRPC, XIDReset, regexp.MustCompile(`\*+ GSP Timeout \*+|Timeout waiting for RPC from GSP`)},
}

// initCauseRule is one cause's lines and action, in order of specificity.
type initCauseRule struct {
	cause, action string
	re            *regexp.Regexp
}

var initCauseRules = []initCauseRule{
	{InitCauseGSPWPR2, XIDReset, regexp.MustCompile(`WPR2 already up|likely in a bad state and may need to be reset`)},
	{InitCauseFSP, XIDReset, regexp.MustCompile(`kfspSendBootCommands|Timed out waiting for FSP|kfspDumpDebugState|FSP boot`)},
	{InitCauseGFW, XIDReboot, regexp.MustCompile(`GFW_BOOT|GFW boot`)},
	{InitCauseGSP, XIDReset, regexp.MustCompile(`Cannot initialize GSP firmware RM|Failed to boot GSP|GSP-RM initialization failed`)},
	{InitCauseBAR, "platform", regexp.MustCompile(`PCI I/O region assigned to your NVIDIA device is invalid|failed to allocate (?:a )?PCI`)},
	{InitCauseUnsupported, "driver", regexp.MustCompile(`installed in this system is not supported by the`)},
	{InitCauseRMInit, XIDReset, regexp.MustCompile(`RmInitAdapter failed|rm_init_adapter failed`)},
	{InitCauseProbe, "investigate", reProbeFailed},
}

// matchCause returns the rule whose lines rec is one of; false for none.
func matchCause(rules []initCauseRule, rec string) (initCauseRule, bool) {
	for _, r := range rules {
		if r.re.MatchString(rec) {
			return r, true
		}
	}
	return initCauseRule{}, false
}

// specificity ranks a cause: lower is more specific.
func specificity(cause string) int {
	for i, r := range initCauseRules {
		if r.cause == cause {
			return i
		}
	}
	for i, r := range runtimeCauseRules {
		if r.cause == cause {
			return i
		}
	}
	return len(initCauseRules)
}

// reDriverDevice is the driver's index of a GPU at the start of its
// message: "NVRM: GPU6 _kgspBootGspRm: ...".
var reDriverDevice = regexp.MustCompile(`NVRM: (GPU\d{1,3}) `)

func driverDevice(rec string) string {
	if m := reDriverDevice.FindStringSubmatch(rec); m != nil {
		return m[1]
	}
	return ""
}

// reInitBus is the GPU a driver initialisation line names: "GPU
// 0000:a1:00.0:", "(PCI:0000:0a:00.0)", "GPU 0000:01:00".
var reInitBus = regexp.MustCompile(`(?:GPU |PCI:)([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-9A-Fa-f])?\b`)

// driverInit files the driver's initialisation messages by GPU. A cause
// line that names no GPU ("GPU6 RmInitAdapter: Cannot initialize GSP
// firmware RM") waits for the next line that does ("GPU 0000:a1:00.0:
// RmInitAdapter failed!"), as the driver prints them in that order.
type driverInit struct {
	byBus     map[string]int
	byRuntime map[string]int
	pending   *initCauseRule
	pendMsg   string
}

// record files one message; it reports whether the message was one.
func (d *driverInit) record(r *DmesgReport, rec string) bool {
	if rule, ok := matchCause(runtimeCauseRules, rec); ok {
		d.runtime(r, rule, rec)
		return true
	}
	rule, ok := matchCause(initCauseRules, rec)
	if !ok {
		return false
	}
	r.ProbeFailed = true
	if len(r.ProbeFailures) < 20 && reProbeFailed.MatchString(rec) {
		r.ProbeFailures = append(r.ProbeFailures, truncate(rec, 300))
	}
	m := reInitBus.FindStringSubmatch(rec)
	if m == nil {
		if d.pending == nil || specificity(rule.cause) < specificity(d.pending.cause) {
			d.pending, d.pendMsg = &rule, rec
		}
		return true
	}
	msg := rec
	if d.pending != nil && specificity(d.pending.cause) < specificity(rule.cause) {
		rule, msg = *d.pending, d.pendMsg
	}
	d.pending = nil
	fileFailure(&r.DriverInitFailures, d.byBus, m[1], driverDevice(msg), rule, msg)
	return true
}

// runtime files a message of a GPU the driver lost, by its bus ID where
// the message names one, else by the driver's index of it.
func (d *driverInit) runtime(r *DmesgReport, rule initCauseRule, rec string) {
	bus, dev := "", driverDevice(rec)
	if m := reInitBus.FindStringSubmatch(rec); m != nil {
		bus = m[1]
	}
	if d.byRuntime == nil {
		d.byRuntime = map[string]int{}
	}
	key := bus
	if key == "" {
		key = dev
	}
	fileFailure(&r.DriverRuntimeFailures, d.byRuntime, key, dev, rule, rec)
	if i, ok := d.byRuntime[strings.ToLower(key)]; ok && bus == "" {
		r.DriverRuntimeFailures[i].BusID = ""
	}
}

func (d *driverInit) add(r *DmesgReport, bus string, rule initCauseRule, msg string) {
	fileFailure(&r.DriverInitFailures, d.byBus, bus, driverDevice(msg), rule, msg)
}

// fileFailure counts one failure line on the GPU key names (its bus ID,
// or the driver's index), keeping the most specific cause.
func fileFailure(list *[]DriverFailure, index map[string]int, key, dev string, rule initCauseRule, msg string) {
	k := strings.ToLower(key)
	if i, ok := index[k]; ok {
		f := &(*list)[i]
		f.Count++
		if f.Device == "" {
			f.Device = dev
		}
		if specificity(rule.cause) < specificity(f.Cause) {
			f.Cause, f.Action, f.FirstMessage = rule.cause, rule.action, truncate(msg, 300)
		}
		return
	}
	if len(*list) >= maxRecords {
		return
	}
	index[k] = len(*list)
	*list = append(*list, DriverFailure{BusID: key, Device: dev, Cause: rule.cause, Action: rule.action, Count: 1, FirstMessage: truncate(msg, 300)})
}

// done files a cause that no line naming a GPU followed: on the one GPU
// that failed, if only one did (the driver's retry names the stage after
// the failure), as a failure of no named GPU if none did, and not at all
// when several GPUs failed (it cannot be told whose it is).
func (d *driverInit) done(r *DmesgReport) {
	p := d.pending
	d.pending = nil
	switch {
	case p == nil:
	case len(r.DriverInitFailures) == 0:
		d.add(r, "", *p, d.pendMsg)
	case len(r.DriverInitFailures) == 1:
		d.add(r, r.DriverInitFailures[0].BusID, *p, d.pendMsg)
	}
}

// initActionText is what a failure's action asks of the operator.
var initActionText = map[string]string{
	XIDReset:      "reset the GPU (nvidia-smi -r, or drain and reboot the node); replace it if it recurs",
	XIDReboot:     "power-cycle the node (a cold boot re-runs the GPU's VBIOS)",
	"platform":    "fix the host's firmware settings (enable above-4G decoding / resizable BAR, enough MMIO space)",
	"driver":      "install a driver branch that supports this GPU",
	"investigate": "read the driver's messages before it (another driver such as nouveau bound to the GPU, or a GPU that does not answer on PCI)",
}

// judgeDriverInit fails the log on each GPU the driver could not bring up.
func judgeDriverInit(r *DmesgReport, j *judge) {
	for _, f := range r.DriverInitFailures {
		what := "a GPU"
		if f.BusID != "" {
			what = "GPU " + f.BusID
		}
		j.fail("driver-probe-failed", f.BusID, "the NVIDIA driver failed to initialise %s (%s, x%d): %s; %s", what, f.Cause, f.Count, truncate(f.FirstMessage, 200), initActionText[f.Action])
	}
	for _, f := range r.DriverRuntimeFailures {
		what := f.Device
		if f.BusID != "" {
			what = "GPU " + f.BusID
		}
		j.fail("driver-gpu-lost", f.BusID, "the NVIDIA driver lost contact with %s (%s, x%d): %s; %s", what, f.Cause, f.Count, truncate(f.FirstMessage, 200), initActionText[f.Action])
	}
}
