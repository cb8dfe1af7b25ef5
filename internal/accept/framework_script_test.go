package accept

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// torchPython returns the Python interpreter that has torch: GPUCTL_PYTHON
// when set, else the first of /usr/bin/python3 (Debian's python3-torch)
// and python3 on PATH that imports torch. Without one the test skips, unless
// GPUCTL_REQUIRE_TORCH is set (make test sets it): then it fails.
func torchPython(t *testing.T) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3", "python3"}
	if p := os.Getenv("GPUCTL_PYTHON"); p != "" {
		candidates = []string{p}
	}
	for _, p := range candidates {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := exec.CommandContext(ctx, p, "-c", "import torch, torch.distributed").Run()
		cancel()
		if err == nil {
			return p
		}
	}
	if os.Getenv("GPUCTL_REQUIRE_TORCH") != "" {
		t.Fatalf("GPUCTL_REQUIRE_TORCH is set and none of %v imports torch (apt-get install python3-torch, or set GPUCTL_PYTHON)", candidates)
	}
	t.Skipf("no python with torch among %v (set GPUCTL_PYTHON; GPUCTL_REQUIRE_TORCH=1 makes this a failure)", candidates)
	return ""
}

// runFrameworkCPU runs the embedded script as the framework stage does, but
// on CPU: torchrun with two ranks (gloo) and small sizes. -r 1 -t 1: torch
// 1.13's torchrun on Python 3.11 fails at its default redirects ("'NoneType'
// object has no attribute 'get'", https://github.com/meta-llama/llama/issues/86);
// with them rank output is tee'd to the console with a "[default0]:"
// prefix, which the parser allows.
func runFrameworkCPU(t *testing.T, py string, env ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "framework.py")
	if err := os.WriteFile(script, []byte(frameworkScript), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// torchrun's rendezvous listens on loopback only, on a port free now:
	// --standalone's fixed 29400 (torch 1.13) fails when two runs share the
	// machine. No GPU is used even where one exists.
	cmd := exec.CommandContext(ctx, py, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=2", "-r", "1", "-t", "1",
		"--rdzv_backend=c10d", "--rdzv_endpoint=127.0.0.1:"+strconv.Itoa(freePort(t)), "--rdzv_id="+filepath.Base(dir),
		"--log_dir", filepath.Join(dir, "logs"), script, "--device", "cpu", "--steps", "200", "--matmul-n", "256", "--allreduce-elems", "65536", "--dir", dir)
	cmd.Env = append(os.Environ(), append([]string{"CUDA_VISIBLE_DEVICES=", "OMP_NUM_THREADS=1", "PYTHONUNBUFFERED=1"}, env...)...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err != nil {
		t.Fatalf("torchrun: %v\n%s", err, b.String())
	}
	return b.Bytes()
}

// TestFrameworkScriptCPU runs the embedded checks for real on CPU, parses
// their output with the real parser and judges it: every check ok; then
// with the corrupt-checkpoint hook, the checkpoint check FAILs and so does
// the stage, the other checks still ok.
func TestFrameworkScriptCPU(t *testing.T) {
	py := torchPython(t)
	for _, tc := range []struct {
		name    string
		env     []string
		failed  string
		verdict diag.ReportVerdict
	}{
		{"healthy", nil, "", diag.ReportOK},
		{"corrupt checkpoint", []string{"GPUCTL_FRAMEWORK_CORRUPT_CHECKPOINT=1"}, "checkpoint", diag.ReportFail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := runFrameworkCPU(t, py, tc.env...)
			rep, err := probe.Parse(probe.KindAuto, log)
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, log)
			}
			r, ok := rep.(*probe.FrameworkReport)
			if !ok || r.Verdict != tc.verdict || !r.Summary {
				t.Fatalf("report %T verdict %s summary %v; findings %+v\n%s", rep, rep.Common().Verdict, ok && r.Summary, rep.Common().Findings, log)
			}
			if r.World != 2 || r.Backend != "gloo" || r.Device != "cpu" || len(r.Checks) != 5 {
				t.Errorf("world %d backend %s device %s checks %d", r.World, r.Backend, r.Device, len(r.Checks))
			}
			for _, c := range r.Checks {
				if want := c.Name != tc.failed; c.OK != want || len(c.Ranks) != 2 {
					t.Errorf("%s: ok %v (want %v), %d ranks; error %+v values %v", c.Name, c.OK, want, len(c.Ranks), c.Error, c.Values)
				}
			}
			if strings.Join(r.Failed, ",") != tc.failed {
				t.Errorf("summary failed %v, want %q", r.Failed, tc.failed)
			}
			res := Judge(StageFramework, out(ContainerFramework, log), Expectations{}, nil, ProbeParser(), &Observed{})
			if tc.failed == "" {
				// On CPU the stage is inconclusive by design: it judges GPUs.
				if res.Verdict != diag.Inconclusive || !strings.Contains(res.Reason, "ran on cpu") {
					t.Errorf("judge: %s %s", res.Verdict, res.Reason)
				}
				return
			}
			if res.Verdict != diag.Fail || res.Cause != CauseNode || !strings.Contains(res.Reason, "framework check checkpoint failed") || !strings.Contains(res.Reason, "mismatched 1 (threshold 0)") {
				t.Errorf("judge: %s (%s) %s", res.Verdict, res.Cause, res.Reason)
			}
		})
	}
}

// freePort is a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
