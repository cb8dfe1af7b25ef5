package probe

import (
	"regexp"
	"slices"
	"strings"
)

// ComponentLogReport is the log of a Kubernetes GPU component: the NVIDIA
// device plugin, GPU feature discovery, the GPU Operator's validators, the
// MIG manager, dcgm-exporter or nv-hostengine. Such a log is context, not a
// test of the node (VERDICTS.md: "not a parse kind"), so its verdict is
// unknown, except where the log states a health fact, which gpuctl takes as
// stated and does not judge further: NVML failed to initialise, GPUs marked
// unhealthy, or a validation failed for a cause of the GPU stack fail it. A
// fatal exit for another cause (configuration, API server) is a warning.
// The log may be klog, logrus text (time="..." level=fatal msg="..."), slog
// text (level=ERROR msg="..."), JSON lines, nv-hostengine's log or plain
// "Error: ..." lines.
type ComponentLogReport struct {
	Header
	// Component: "nvidia-device-plugin", "gpu-feature-discovery",
	// "gpu-operator-validator", "nvidia-mig-manager", "dcgm-exporter",
	// "nv-hostengine" or "".
	Component string `json:"component"`
	// Version is the component's version where its log prints it
	// ("4.3.1-4.4.1" for dcgm-exporter, "2.3.1" for nv-hostengine), or "".
	Version string `json:"version,omitempty"`
	// Failure is the nvidia-smi/NVML failure the log shows, if any.
	Failure *SMIError `json:"failure"`
	// NVMLInitFailed is true when the component says NVML did not
	// initialise; NVMLError is the NVML error it gives ("Unknown Error",
	// "ERROR_LIBRARY_NOT_FOUND", "could not load NVML library", ...; ""
	// when the line names none).
	NVMLInitFailed bool   `json:"nvmlInitFailed,omitempty"`
	NVMLError      string `json:"nvmlError,omitempty"`
	// ValidationFailed are the GPU Operator validations that failed, each
	// "COMPONENT: cause" with COMPONENT driver, toolkit, cuda workload,
	// plugin, ... as the validator names it ("error validating driver
	// installation: ..."). In the order first seen, each once.
	ValidationFailed []string `json:"validationFailed,omitempty"`
	// Fatal is the message of the component's fatal exit (logrus or JSON
	// level fatal, klog's F lines), "" when there is none.
	Fatal string `json:"fatal,omitempty"`
	// Retries counts "retrying" lines (the validators loop until the driver
	// appears).
	Retries int `json:"retries"`
	Lines   int `json:"lines"`
	// Unhealthy are the devices the NVIDIA device plugin says it marked
	// unhealthy ("'nvidia.com/gpu' device marked unhealthy: GPU-..."): it
	// withdrew them from the node's allocatable GPUs, so the node has
	// fewer GPUs than it should. In the order first seen, each once.
	Unhealthy []string `json:"unhealthyDevices,omitempty"`
}

// reMarkedUnhealthy is the device plugin's line for a device it withdrew:
// "'nvidia.com/gpu' device marked unhealthy: GPU-<uuid>" (k8s-device-plugin,
// internal/plugin/server.go; NVIDIA/k8s-device-plugin#189).
var reMarkedUnhealthy = regexp.MustCompile(`device marked unhealthy: (\S+)`)

// The log line shapes of the components (checked 2026-12-03):
//   - Go's log package: "2020/08/10 19:09:42 ..." (device plugin before 0.10);
//   - klog: "I1203 08:19:06.123456       1 main.go:269] ..." (device plugin,
//     GFD: https://github.com/NVIDIA/k8s-device-plugin/blob/main/cmd/nvidia-device-plugin/main.go);
//   - an RFC 3339 time first (kubectl logs --timestamps, the validator's
//     shell loop);
//   - logrus text: time="2024-02-04T15:02:01Z" level=fatal msg="..." (GPU
//     Operator validator, https://github.com/NVIDIA/gpu-operator/blob/main/cmd/nvidia-validator/main.go;
//     dcgm-exporter before 3.3.9);
//   - slog text: time=2025-09-09T20:19:25.097Z level=ERROR msg="..."
//     (dcgm-exporter since 3.3.9, https://github.com/NVIDIA/dcgm-exporter/blob/main/pkg/cmd/app.go);
//   - JSON lines: {"time":"...","level":"ERROR","msg":"..."} (slog's JSON
//     handler, dcgm-exporter --log-format json);
//   - nv-hostengine: "2021-11-23 00:15:20.507 ERROR [76:76] ..." (DCGM's
//     log, NVIDIA/dcgm-exporter#27).
var (
	reGoLogPrefix    = regexp.MustCompile(`^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? `)
	reKlogPrefix     = regexp.MustCompile(`^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ \S+:\d+\] `)
	reRFC3339Nano    = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}) `)
	reKeyValuePrefix = regexp.MustCompile(`^(?:time=(?:"[^"]*"|\S+) )?level=[A-Za-z]+ msg=`)
	reJSONLogPrefix  = regexp.MustCompile(`^\{"(?:time|ts|level|msg)":`)
	reHostEngineLine = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+ (?:DEBUG|INFO|WARN|WARNING|ERROR|CRIT|FATAL|VERB)\s+\[\d+:\d+\] `)
	componentLineRes = []*regexp.Regexp{reGoLogPrefix, reKlogPrefix, reRFC3339Nano, reKeyValuePrefix, reJSONLogPrefix, reHostEngineLine}
	// componentHints name the component from a marker its log prints; the
	// more specific names come first (a dcgm-exporter log names
	// nv-hostengine, a GFD log names nvidia.com/gpu labels).
	componentHints = []struct{ marker, component string }{
		{"dcgm-exporter", "dcgm-exporter"},
		{"Cannot init NVML library", "dcgm-exporter"},
		{"Cannot initialize the hostengine", "nv-hostengine"},
		{"DcgmHostEngineHandler", "nv-hostengine"},
		{"nv-hostengine", "nv-hostengine"},
		{"gpu-feature-discovery", "gpu-feature-discovery"},
		{"features.d/gfd", "gpu-feature-discovery"},
		{"nvidia-mig-manager", "nvidia-mig-manager"},
		{"mig-parted", "nvidia-mig-manager"},
		{"nvidia-device-plugin", "nvidia-device-plugin"},
		{"Starting NVIDIA Device Plugin", "nvidia-device-plugin"},
		{"Loading NVML", "nvidia-device-plugin"},
		{"k8s-device-plugin", "nvidia-device-plugin"},
		{"Retreiving plugins", "nvidia-device-plugin"},
		{"Retrieving plugins", "nvidia-device-plugin"},
		{"nvidia.com/gpu", "nvidia-device-plugin"},
		{"running command chroot with args [/run/nvidia/driver", "gpu-operator-validator"},
		{"/run/nvidia/validations", "gpu-operator-validator"},
		{"driver-validation", "gpu-operator-validator"},
		{"nvidia-operator-validator", "gpu-operator-validator"},
		{"error validating ", "gpu-operator-validator"},
	}
)

// componentLine tells whether l has one of the components' line shapes; a
// plain "Error: ..." line (DCGM's, in dcgm-exporter's log) counts too.
func componentLine(l string) bool {
	if strings.HasPrefix(l, "Error: ") {
		return true
	}
	return slices.ContainsFunc(componentLineRes, func(re *regexp.Regexp) bool { return re.MatchString(l) })
}

// componentOf names the component whose log data is, or "": at least half
// of the lines have a component's line shape and a marker names it.
func componentOf(data []byte) string {
	ls := lines(data)
	prefixed := 0
	for _, l := range ls {
		if componentLine(l) {
			prefixed++
		}
	}
	if prefixed == 0 || prefixed*2 < len(ls) {
		return ""
	}
	s := string(data)
	for _, h := range componentHints {
		if strings.Contains(s, h.marker) {
			return h.component
		}
	}
	return ""
}

// ParseComponentLog reads a GPU component's log.
func ParseComponentLog(data []byte) *ComponentLogReport {
	r := &ComponentLogReport{Component: componentOf(data), Failure: FindFailure(data)}
	j := newJudge(&r.Header, KindComponentLog)
	cr := componentReader{r: r}
	for _, l := range lines(data) {
		cr.line(l)
	}
	judgeComponentLog(r, j)
	j.done()
	fillNil(r)
	return r
}

// The health facts the components state, each from the component's source
// (checked 2026-12-03):
//   - NVML did not initialise: "Failed to initialize NVML: <error>." (device
//     plugin, internal/plugin/factory.go; GFD's "failed to initialize NVML:
//     <error>", internal/rm/nvml_manager.go; DCGM's "Error: Failed to
//     initialize NVML" and nv-hostengine's "Cannot initialize the
//     hostengine: Error: Failed to initialize NVML"), "Cannot init NVML
//     library; err: <error>" (dcgm-exporter,
//     internal/pkg/nvmlprovider/provider.go), "nvml init failed: <error>"
//     (device plugin, factory.go);
//   - a GPU Operator validation failed: "Error: error validating
//     <driver|toolkit|plugin|...> installation: <cause>" or "error
//     validating cuda workload: <cause>" (gpu-operator,
//     cmd/nvidia-validator/main.go);
//   - a fatal exit: logrus or JSON level fatal, klog's F lines.
var (
	reNVMLInitFailed = regexp.MustCompile(`(?i)(?:failed to initialize NVML|Cannot init NVML library|nvml init failed)(?:(?::|; err:) (.+))?`)
	reValidation     = regexp.MustCompile(`error validating (.+?) (?:installation|workload): (.+)`)
	reLogrusFatal    = regexp.MustCompile(`\blevel=(?:fatal|panic) msg=(.+)`)
	reJSONFatal      = regexp.MustCompile(`"level":"(?i:fatal|panic)".*?"msg":"((?:[^"\\]|\\.)*)"`)
	reKlogFatal      = regexp.MustCompile(`^F\d{4} [^\]]*\] (.+)`)
	reFatalLines     = []*regexp.Regexp{reLogrusFatal, reJSONFatal, reKlogFatal}
	// componentVersions are the lines that print a component's version:
	// dcgm-exporter's "Starting dcgm-exporter" Version=... (text and JSON,
	// pkg/cmd/app.go), nv-hostengine's "version:2.3.1;arch:...", the
	// validator's "version: ..." (main.go) and klog's "Starting NVIDIA
	// Device Plugin" version=<, the value (a commit or a release) on the
	// next line (main.go).
	componentVersions = []*regexp.Regexp{
		regexp.MustCompile(`msg="?Starting dcgm-exporter"? Version=(\S+)`),
		regexp.MustCompile(`"msg":"Starting dcgm-exporter","Version":"([^"]+)"`),
		regexp.MustCompile(`\bversion:(\d[\w.\-]*);arch:`),
		regexp.MustCompile(`msg="version: ([^"\s]+)"`),
		regexp.MustCompile(`"Starting [^"]+" version="?(v?\d[\w.\-+]*)`),
	}
	reKlogVersionOpen = regexp.MustCompile(`"Starting [^"]+" version=<$`)
)

// componentReader reads a component's log line by line into r.
type componentReader struct {
	r *ComponentLogReport
	// versionNext: the previous line opened klog's multi-line version value
	// ("version=<"), so this line holds the version.
	versionNext bool
}

func (cr *componentReader) line(l string) {
	r := cr.r
	if strings.TrimSpace(l) == "" {
		return
	}
	r.Lines++
	if strings.Contains(strings.ToLower(l), "retrying") {
		r.Retries++
	}
	if m := reMarkedUnhealthy.FindStringSubmatch(l); m != nil && !slices.Contains(r.Unhealthy, m[1]) && len(r.Unhealthy) < maxRecords {
		r.Unhealthy = append(r.Unhealthy, m[1])
	}
	cr.version(l)
	cr.nvml(l)
	if m := reValidation.FindStringSubmatch(l); m != nil && len(r.ValidationFailed) < maxRecords {
		v := m[1] + ": " + logValue(m[2])
		if !slices.Contains(r.ValidationFailed, v) {
			r.ValidationFailed = append(r.ValidationFailed, v)
		}
	}
	if r.Fatal == "" {
		for _, re := range reFatalLines {
			if m := re.FindStringSubmatch(l); m != nil {
				r.Fatal = logValue(m[1])
				break
			}
		}
	}
}

func (cr *componentReader) version(l string) {
	r := cr.r
	if cr.versionNext {
		cr.versionNext = false
		if f := strings.Fields(l); r.Version == "" && len(f) > 0 {
			r.Version = f[0]
		}
		return
	}
	if r.Version != "" {
		return
	}
	if reKlogVersionOpen.MatchString(strings.TrimSpace(l)) {
		cr.versionNext = true
		return
	}
	for _, re := range componentVersions {
		if m := re.FindStringSubmatch(l); m != nil {
			r.Version = m[1]
			return
		}
	}
}

// nvml reads a line that says NVML did not initialise: the first such line
// that names an error gives NVMLError.
func (cr *componentReader) nvml(l string) {
	r := cr.r
	m := reNVMLInitFailed.FindStringSubmatch(l)
	if m == nil {
		return
	}
	r.NVMLInitFailed = true
	if r.NVMLError == "" && m[1] != "" {
		r.NVMLError = logValue(m[1])
	}
}

// logValue is the text of a log message or value as the line has it,
// without the log format around it: quotes, escapes, a trailing period,
// nv-hostengine's " [file:line] [function]" tail, JSON's closing brace.
func logValue(s string) string {
	if i := strings.Index(s, " ["); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, `","`); i >= 0 {
		s = s[:i]
	}
	s = strings.ReplaceAll(s, `\"`, `"`)
	return strings.TrimRight(strings.Trim(strings.TrimSpace(s), `"`), `."}`)
}

// nvmlErrorMeanings say what an NVML error means for the node (nvmlReturn_t,
// https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html,
// checked 2026-12-03); matched in lower case on the component's error text,
// which is nvmlErrorString's text or the Go binding's ERROR_* name.
var nvmlErrorMeanings = []struct{ marker, meaning string }{
	{"unknown error", "the driver returned an unexpected error; in a container this is often lost access to the device nodes"},
	{"error_unknown", "the driver returned an unexpected error; in a container this is often lost access to the device nodes"},
	{"version mismatch", "the kernel module and the user-space NVML library are different versions (a driver upgrade without a reboot or module reload)"},
	{"library_not_found", "libnvidia-ml is not in the component's container (no NVIDIA runtime or toolkit injection) or the driver is not installed"},
	{"could not load nvml", "libnvidia-ml is not in the component's container (no NVIDIA runtime or toolkit injection) or the driver is not installed"},
	{"libnvidia-ml", "libnvidia-ml is not in the component's container (no NVIDIA runtime or toolkit injection) or the driver is not installed"},
	{"permission", "the component may not open the GPU device nodes"},
	{"driver not loaded", "the NVIDIA kernel module is not loaded"},
	{"driver_not_loaded", "the NVIDIA kernel module is not loaded"},
}

func nvmlErrorMeaning(e string) string {
	low := strings.ToLower(e)
	for _, m := range nvmlErrorMeanings {
		if strings.Contains(low, m.marker) {
			return m.meaning
		}
	}
	return ""
}

// validationNotGPUCauses are causes of a failed GPU Operator validation
// that are the cluster's, not the node's GPU stack: the validator could not
// reach the API server or read its own configuration (cmd/nvidia-validator/main.go's
// error texts, checked 2026-12-03).
var validationNotGPUCauses = []string{"cluster config", "k8s client", "unable to fetch node", "unable to retrieve", "cannot list", "cannot delete", "failed to create cuda validation pod", "status file", "workload config", "invalid -", "forbidden", "unauthorized", "connection refused", "no such host"}

func validationNotGPU(v string) bool {
	low := strings.ToLower(v)
	return slices.ContainsFunc(validationNotGPUCauses, func(c string) bool { return strings.Contains(low, c) })
}

// judgeComponentLog turns the facts the log states into findings. The
// component's word is taken as stated; gpuctl does not judge the GPUs
// beyond it.
func judgeComponentLog(r *ComponentLogReport, j *judge) {
	name := r.Component
	if name == "" {
		name = "the component"
	}
	if len(r.Unhealthy) > 0 {
		// A health fact the component states, not context: the GPUs are
		// gone from the node's allocatable resources.
		j.fail("component-gpu-unhealthy", "", "the device plugin marked %d GPU(s) unhealthy and withdrew them from the node: %s", len(r.Unhealthy), strings.Join(r.Unhealthy, ", "))
	}
	if r.NVMLInitFailed {
		judgeComponentNVML(r, j, name)
	}
	gpuCause := judgeValidations(r, j, name)
	if r.Fatal != "" && !r.NVMLInitFailed && !gpuCause {
		j.unusable("component-fatal", "", "%s exited: %q; the log does not say the GPUs are at fault (configuration, API server, permissions), so the node's GPUs are not judged", name, truncate(r.Fatal, 200))
	}
	judgeComponentFailure(r, j, name)
	if len(j.h.Findings) == 0 {
		j.unusable("component-log", "", "%s log: context only, not a test of the node", name)
	}
}

func judgeComponentNVML(r *ComponentLogReport, j *judge, name string) {
	e := r.NVMLError
	if e == "" {
		e = "no error given"
	}
	why := nvmlErrorMeaning(r.NVMLError)
	if why != "" {
		why = ": " + why
	}
	j.fail("component-nvml-init-failed", "", "%s says NVML did not initialise (%s)%s; the GPUs are unusable to it on this node", name, e, why)
}

// judgeValidations fails the log for a validation that failed for a cause
// of the GPU stack and warns for one that failed for the cluster's; it
// reports whether any failed for the GPU stack's.
func judgeValidations(r *ComponentLogReport, j *judge, name string) bool {
	var gpu, cluster []string
	for _, v := range r.ValidationFailed {
		if validationNotGPU(v) {
			cluster = append(cluster, v)
		} else {
			gpu = append(gpu, v)
		}
	}
	if len(gpu) > 0 {
		j.fail("component-validation-failed", "", "%s: validation failed, so the GPU Operator does not deploy the GPU stack's next stage on the node: %s", name, truncate(strings.Join(gpu, "; "), 300))
	}
	if len(cluster) > 0 {
		j.unusable("component-validation-failed", "", "%s: validation failed for a cause of the cluster, not the GPUs: %s", name, truncate(strings.Join(cluster, "; "), 300))
	}
	return len(gpu) > 0
}

// judgeComponentFailure reports the nvidia-smi/NVML failure the log shows
// as context (the component ran a tool that failed), unless it is the NVML
// failure already judged.
func judgeComponentFailure(r *ComponentLogReport, j *judge, name string) {
	if r.Failure == nil || r.NVMLInitFailed && strings.Contains(r.Failure.Message, "NVML") {
		return
	}
	j.unusable("component-"+r.Failure.Kind, r.Failure.BusID, "%s log (context only, not a test of the node) shows %s: %q", name, r.Failure.Kind, truncate(r.Failure.Message, 200))
	if r.Retries > 0 {
		j.info("component-retries", "", "%s retried %d times without success", name, r.Retries)
	}
}
