package probe

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// TestComponentLogFormats reads each component's health facts in the log
// formats the committed real logs do not cover. The lines are the
// components' own format strings (cited at componentLineRes and
// reNVMLInitFailed) filled in; the device plugin's klog header is the one
// its users post (NVIDIA/k8s-device-plugin issues).
func TestComponentLogFormats(t *testing.T) {
	for _, tc := range []struct {
		name, log          string
		component, version string
		verdict            diag.ReportVerdict
		rule               string
		nvmlError          string
		validations, fatal string
	}{
		{
			name: "device plugin klog, NVML not found",
			log: `I0724 06:09:00.921957       1 main.go:235] "Starting NVIDIA Device Plugin" version=<
	3c378193
	commit: 3c378193fcebf6e955f0d65bd6f2aeed099ad8ea
 >
I0724 06:09:00.922013       1 main.go:238] Starting FS watcher for /var/lib/kubelet/device-plugins
I0724 06:09:00.922061       1 main.go:245] Starting OS watcher.
I0724 06:09:00.922272       1 main.go:260] Starting Plugins.
I0724 06:09:00.922303       1 main.go:317] Loading configuration.
E0724 06:09:00.925002       1 factory.go:99] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.
E0724 06:09:00.925010       1 factory.go:100] If this is a GPU node, did you set the docker default runtime to ` + "`nvidia`" + `?
W0724 06:09:00.925030       1 factory.go:106] nvml init failed: ERROR_LIBRARY_NOT_FOUND
I0724 06:09:00.925040       1 main.go:416] No devices found. Waiting indefinitely.
`,
			component: "nvidia-device-plugin", version: "3c378193", verdict: diag.ReportFail, rule: "component-nvml-init-failed", nvmlError: "ERROR_LIBRARY_NOT_FOUND",
		},
		{
			name: "GFD klog, driver/library mismatch, exits",
			log: `I1203 08:00:00.000001       1 main.go:163] Starting OS watcher.
I1203 08:00:00.000002       1 main.go:168] Loading configuration.
I1203 08:00:00.000003       1 main.go:180] "outputFile": "/etc/kubernetes/node-feature-discovery/features.d/gfd"
E1203 08:00:00.000004       1 main.go:127] failed to create resource manager: failed to initialize NVML: Driver/library version mismatch
`,
			component: "gpu-feature-discovery", verdict: diag.ReportFail, rule: "component-nvml-init-failed", nvmlError: "Driver/library version mismatch",
		},
		{
			name: "validator logrus, driver validation failed",
			log: `time="2026-11-02T10:00:00Z" level=info msg="version: 9a3b1c2d"
time="2026-11-02T10:00:00Z" level=info msg="Attempting to validate a driver container installation"
time="2026-11-02T10:00:05Z" level=info msg="Error: error validating driver installation: error creating symlinks: failed to get device nodes: no such file or directory"
`,
			component: "gpu-operator-validator", version: "9a3b1c2d", verdict: diag.ReportFail, rule: "component-validation-failed",
			validations: "driver: error creating symlinks: failed to get device nodes: no such file or directory",
		},
		{
			name: "validator logrus, plugin validation failed on the API server",
			log: `time="2026-11-02T10:00:00Z" level=info msg="version: 9a3b1c2d"
time="2026-11-02T10:00:01Z" level=info msg="Error: error validating plugin installation: error getting k8s client - Unauthorized"
`,
			component: "gpu-operator-validator", version: "9a3b1c2d", verdict: diag.ReportUnknown, rule: "component-validation-failed",
			validations: "plugin: error getting k8s client - Unauthorized",
		},
		{
			name: "dcgm-exporter JSON lines, insufficient permissions",
			log: `{"time":"2026-11-02T10:00:00Z","level":"INFO","msg":"Starting dcgm-exporter","Version":"4.4.1-4.6.0"}
{"time":"2026-11-02T10:00:00Z","level":"INFO","msg":"Attempting to initialize NVML library."}
{"time":"2026-11-02T10:00:00Z","level":"ERROR","msg":"Cannot init NVML library; err: Insufficient Permissions"}
`,
			component: "dcgm-exporter", version: "4.4.1-4.6.0", verdict: diag.ReportFail, rule: "component-nvml-init-failed", nvmlError: "Insufficient Permissions",
		},
		{
			name: "dcgm-exporter slog without time, NVML fine, fatal config error",
			log: `level=INFO msg="Starting dcgm-exporter" Version=4.8.4
level=ERROR msg="Could not read metrics file '/etc/dcgm-exporter/custom.csv'; err: open /etc/dcgm-exporter/custom.csv: no such file or directory"
`,
			component: "dcgm-exporter", version: "4.8.4", verdict: diag.ReportUnknown, rule: "component-log",
		},
		{
			name: "logrus fatal of the API server",
			log: `time="2026-11-02T10:00:00Z" level=info msg="Starting dcgm-exporter"
time="2026-11-02T10:00:01Z" level=fatal msg="failed to get pod resources: connection refused"
`,
			component: "dcgm-exporter", verdict: diag.ReportUnknown, rule: "component-fatal", fatal: "failed to get pod resources: connection refused",
		},
		{
			name: "klog fatal",
			log: `I1203 08:00:00.000001       1 main.go:163] Starting OS watcher.
F1203 08:00:00.000002       1 main.go:99] unable to load config: open /config/config.yaml: no such file or directory
I1203 08:00:00.000003       1 main.go:1] nvidia.com/gpu
`,
			component: "nvidia-device-plugin", verdict: diag.ReportUnknown, rule: "component-fatal", fatal: "unable to load config: open /config/config.yaml: no such file or directory",
		},
		{
			name: "healthy device plugin: context only",
			log: `I0724 06:09:00.921957       1 main.go:235] "Starting NVIDIA Device Plugin" version=<
	3c378193
 >
I0724 06:09:00.922272       1 main.go:260] Starting Plugins.
I0724 06:09:00.940000       1 server.go:165] Starting GRPC server for 'nvidia.com/gpu'
I0724 06:09:00.941000       1 server.go:125] Registered device plugin for 'nvidia.com/gpu' with Kubelet
`,
			component: "nvidia-device-plugin", version: "3c378193", verdict: diag.ReportUnknown, rule: "component-log",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := Detect([]byte(tc.log))
			if err != nil || k != KindComponentLog {
				t.Fatalf("Detect = %q, %v", k, err)
			}
			rep, err := Parse(KindAuto, []byte(tc.log))
			if err != nil {
				t.Fatal(err)
			}
			r := rep.(*ComponentLogReport)
			eq(t, "component", r.Component, tc.component)
			eq(t, "version", r.Version, tc.version)
			eq(t, "verdict", r.Verdict, tc.verdict)
			if !hasRule(&r.Header, tc.rule) {
				t.Errorf("no %s finding:\n%s", tc.rule, dumpFindings(&r.Header))
			}
			eq(t, "nvml init failed", r.NVMLInitFailed, tc.rule == "component-nvml-init-failed")
			eq(t, "nvml error", r.NVMLError, tc.nvmlError)
			eq(t, "validations", strings.Join(r.ValidationFailed, "; "), tc.validations)
			eq(t, "fatal", r.Fatal, tc.fatal)
			checkJSONContract(t, r)
		})
	}
}

// TestComponentLogNeedsItsShape: a log line shape alone, or a component's
// name in text that is not its log, is not a component log.
func TestComponentLogNeedsItsShape(t *testing.T) {
	for _, in := range []string{
		"time=\"2026-11-02T10:00:00Z\" level=info msg=\"listening on :8080\"\n",
		"We deploy dcgm-exporter and nv-hostengine on every node.\nThe exporter says: Cannot init NVML library\n",
	} {
		if got := componentOf([]byte(in)); got != "" {
			t.Errorf("componentOf(%q) = %q, want none", in, got)
		}
	}
}
