//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/golden"
)

// TestSignalWhileBlocked: a gpuctl blocked reading its standard input (a
// pipe that nobody writes) stops on SIGINT with exit 130 and on SIGTERM
// with 143, and writes nothing. gpuctl refuses a FIFO named as a file, so
// the blocking read is of "-". It signals once gpuctl has started and sits
// idle in that read (waitForIdle), never after a fixed sleep alone; the
// deadlines only keep a regression from hanging the suite.
func TestSignalWhileBlocked(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildGpuctl(t, dir)
	cases := []struct {
		args []string
		sig  syscall.Signal
		code int
	}{
		{[]string{"validate", "-"}, syscall.SIGINT, 130},
		{[]string{"validate", "-"}, syscall.SIGTERM, 143},
		{[]string{"generate", "all", "-", "--out", filepath.Join(dir, "out")}, syscall.SIGINT, 130},
		{[]string{"parse", "nvidia-smi", "-"}, syscall.SIGTERM, 143},
	}
	for _, c := range cases {
		t.Run(c.args[0]+"-"+c.sig.String(), func(t *testing.T) {
			signalBlocked(t, bin, c.args, c.sig, c.code)
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("interrupted generate left %s/out (%v)", dir, err)
	}
}

// signalBlocked runs gpuctl args with a standard input that stays open and
// empty, signals it once it is idle in the read, and wants exit code.
func signalBlocked(t *testing.T, bin string, args []string, sig syscall.Signal, code int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = r, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer cmd.Process.Kill()
	if err := waitForIdle(cmd.Process.Pid, done); err != nil {
		t.Fatalf("gpuctl %s: %v; stderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != code {
			t.Fatalf("gpuctl %s after %s: %v, want exit %d; stderr:\n%s", strings.Join(args, " "), sig, err, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("gpuctl %s still running 30 s after %s", strings.Join(args, " "), sig)
	}
}

// waitForIdle returns once process pid has started and then used no CPU
// time for 200 ms (blocked in a read: Main's signal handling is installed
// before any command reads), or after 1 s where there is no /proc; an
// error when it ends first or is not idle within 30 s.
func waitForIdle(pid int, done <-chan error) error {
	start := time.Now()
	last, idleSince := time.Duration(-1), time.Now()
	for time.Since(start) < 30*time.Second {
		used, ok := procCPU(pid)
		switch {
		case !ok && time.Since(start) >= time.Second:
			return nil
		case ok && used != last:
			last, idleSince = used, time.Now()
		case ok && time.Since(start) >= 300*time.Millisecond && time.Since(idleSince) >= 200*time.Millisecond:
			return nil
		}
		select {
		case exit := <-done:
			return fmt.Errorf("exited before it blocked reading standard input: %v", exit)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return errors.New("still busy after 30 s")
}

// buildGpuctl builds the binary into dir (the signal handling is Main's,
// so the tests signal a real process).
func buildGpuctl(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "gpuctl")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// midRunPools and midRunRecords size the inputs of TestSignalMidRun: large
// enough that each command is still working when it is signalled (a
// second or more of CPU time each), legitimate (bench's spec of
// midRunPools pools as `gpuctl generate terraform` writes it, and copies of
// a signed record fixture) and within the caps on one input.
const (
	midRunPools   = 1000
	midRunRecords = 1000
)

// TestSignalMidRun: import and validate of a Terraform folder of 1,000
// node pools and report over 1,000 signed records stop on SIGTERM while
// they work, with exit 143 within a second, and report leaves no page (or
// any other file) behind. Each is signalled once it has used
// signalAfterCPU of CPU time (so it is past start-up and into the loop
// that must watch the context), never after a fixed sleep alone.
func TestSignalMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildGpuctl(t, t.TempDir())
	tf, records := midRunInputs(t, bin, dir)
	page := filepath.Join(dir, "page.html")
	cases := [][]string{
		{"import", tf},
		{"validate", tf, "--as-of", "2026-11-29"},
		append(append([]string{"report"}, records...), "--out", page),
	}
	for _, args := range cases {
		t.Run(args[0], func(t *testing.T) {
			before := listTree(t, dir)
			signalMidRun(t, bin, dir, args)
			if _, err := os.Stat(page); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("interrupted %s left %s (%v)", args[0], page, err)
			}
			if after := listTree(t, dir); after != before {
				t.Errorf("interrupted %s changed the folder:\nbefore:\n%s\nafter:\n%s", args[0], before, after)
			}
		})
	}
}

// midRunInputs writes the Terraform folder (generate terraform of a spec of
// midRunPools pools) and midRunRecords copies of the signed PASS record
// under dir; it returns the folder and the records' paths.
func midRunInputs(t *testing.T, bin, dir string) (string, []string) {
	t.Helper()
	spec := filepath.Join(dir, "pools.yaml")
	if err := os.WriteFile(spec, golden.GKEPools(midRunPools), 0o644); err != nil {
		t.Fatal(err)
	}
	gen := exec.Command(bin, "generate", "terraform", spec, "--as-of", "2026-11-29", "--out", filepath.Join(dir, "gen"))
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("generate terraform: %v\n%s", err, out)
	}
	record, err := os.ReadFile(filepath.Join(repoRoot, "internal", "accept", "testdata", "records", "h100-pass.dsse.json"))
	if err != nil {
		t.Fatal(err)
	}
	var records []string
	for i := range midRunRecords {
		p := filepath.Join(dir, "records", fmt.Sprintf("node-%04d.dsse.json", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, record, 0o644); err != nil {
			t.Fatal(err)
		}
		records = append(records, p)
	}
	return filepath.Join(dir, "gen", "terraform", "base"), records
}

// signalAfterCPU is how much CPU time a command has used when
// TestSignalMidRun signals it.
const signalAfterCPU = 150 * time.Millisecond

// signalMidRun starts gpuctl args in dir, sends SIGTERM once it has used
// signalAfterCPU, and fails unless it exits 143 within a second saying it
// was interrupted.
func signalMidRun(t *testing.T, bin, dir string, args []string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer cmd.Process.Kill()
	if err := waitForCPU(cmd.Process.Pid, signalAfterCPU, done); err != nil {
		t.Fatalf("gpuctl %s: %v: make the input larger; stderr:\n%s", args[0], err, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 143 {
			t.Fatalf("gpuctl %s after SIGTERM: %v, want exit 143; stderr:\n%s", args[0], err, tail(stderr.String()))
		}
		if took := time.Since(sent); took > time.Second {
			t.Errorf("gpuctl %s took %s after SIGTERM to exit; want at most 1 s", args[0], took.Round(time.Millisecond))
		}
		if !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("stderr does not say it was interrupted:\n%s", tail(stderr.String()))
		}
	case <-time.After(time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("gpuctl %s still running 1 s after SIGTERM", args[0])
	}
}

// waitForCPU returns once process pid has used at least cpu of CPU time
// (user + system, from /proc/PID/stat; where there is no /proc, once cpu of
// wall time has passed), and an error when it ends first or takes 60 s.
func waitForCPU(pid int, cpu time.Duration, done <-chan error) error {
	start := time.Now()
	for {
		used, ok := procCPU(pid)
		if !ok {
			used = time.Since(start)
		}
		if used >= cpu {
			return nil
		}
		select {
		case exit := <-done:
			return fmt.Errorf("finished (%v) after %s of CPU, before it could be signalled", exit, used)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Since(start) > 60*time.Second {
			return fmt.Errorf("used only %s of CPU in 60 s", used)
		}
	}
}

// procCPU is the user + system time of pid from /proc/PID/stat (fields 14
// and 15, in clock ticks of 1/100 s).
func procCPU(pid int) (time.Duration, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// the command name (field 2) is in parentheses and may hold spaces
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// listTree lists the files under dir with their sizes, one a line.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !d.IsDir() {
			fmt.Fprintf(&b, "%s %d\n", p, info.Size())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// tail is the last lines of a long stderr.
func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}
