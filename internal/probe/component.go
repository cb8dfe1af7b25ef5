package probe

import (
	"regexp"
	"slices"
	"strings"
)

// ComponentLogReport is the log of a Kubernetes GPU component (the NVIDIA
// device plugin, the GPU Operator's validators). Such a log is context, not a
// test of the node (VERDICTS.md: "not a parse kind"), so its verdict is
// unknown, except where the log states a health fact: GPUs the device
// plugin marked unhealthy fail it. Its Failure says what the component ran
// into.
type ComponentLogReport struct {
	Header
	// Component: "nvidia-device-plugin", "gpu-operator-validator" or "".
	Component string `json:"component"`
	// Failure is the nvidia-smi/NVML failure the log shows, if any.
	Failure *SMIError `json:"failure"`
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

var (
	reGoLogPrefix  = regexp.MustCompile(`^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? `)
	reKlogPrefix   = regexp.MustCompile(`^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ \S+:\d+\] `)
	reRFC3339Nano  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}) `)
	componentHints = []struct{ marker, component string }{
		{"Loading NVML", "nvidia-device-plugin"},
		{"k8s-device-plugin", "nvidia-device-plugin"},
		{"Retreiving plugins", "nvidia-device-plugin"},
		{"Retrieving plugins", "nvidia-device-plugin"},
		{"nvidia.com/gpu", "nvidia-device-plugin"},
		{"running command chroot with args [/run/nvidia/driver", "gpu-operator-validator"},
		{"/run/nvidia/validations", "gpu-operator-validator"},
		{"driver-validation", "gpu-operator-validator"},
	}
)

// componentOf names the component whose log data is, or "".
func componentOf(data []byte) string {
	ls := lines(data)
	prefixed := 0
	for _, l := range ls {
		if reGoLogPrefix.MatchString(l) || reKlogPrefix.MatchString(l) || reRFC3339Nano.MatchString(l) {
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
	for _, l := range lines(data) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		r.Lines++
		if strings.Contains(strings.ToLower(l), "retrying") {
			r.Retries++
		}
		if m := reMarkedUnhealthy.FindStringSubmatch(l); m != nil && !slices.Contains(r.Unhealthy, m[1]) && len(r.Unhealthy) < maxRecords {
			r.Unhealthy = append(r.Unhealthy, m[1])
		}
	}
	if len(r.Unhealthy) > 0 {
		// A health fact the component states, not context: the GPUs are
		// gone from the node's allocatable resources.
		j.fail("component-gpu-unhealthy", "", "the device plugin marked %d GPU(s) unhealthy and withdrew them from the node: %s", len(r.Unhealthy), strings.Join(r.Unhealthy, ", "))
	}
	name := r.Component
	if name == "" {
		name = "the component"
	}
	if r.Failure != nil {
		j.unusable("component-"+r.Failure.Kind, r.Failure.BusID, "%s log (context only, not a test of the node) shows %s: %q", name, r.Failure.Kind, truncate(r.Failure.Message, 200))
		if r.Retries > 0 {
			j.info("component-retries", "", "%s retried %d times without success", name, r.Retries)
		}
	} else if len(r.Unhealthy) == 0 {
		j.unusable("component-log", "", "%s log: context only, not a test of the node", name)
	}
	j.done()
	fillNil(r)
	return r
}
