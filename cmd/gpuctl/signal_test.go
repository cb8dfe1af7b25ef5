//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalWhileBlocked: a gpuctl blocked reading a FIFO that no process
// writes stops on SIGINT with exit 130 and on SIGTERM with 143, and writes
// nothing. The binary is built for the test, since the signal handling is
// Main's. The deadline only keeps a regression from hanging the suite.
func TestSignalWhileBlocked(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gpuctl")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fifo := filepath.Join(dir, "spec.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		sig  syscall.Signal
		code int
	}{
		{[]string{"validate", fifo}, syscall.SIGINT, 130},
		{[]string{"validate", fifo}, syscall.SIGTERM, 143},
		{[]string{"generate", "all", fifo, "--out", filepath.Join(dir, "out")}, syscall.SIGINT, 130},
		{[]string{"parse", "nvidia-smi", fifo}, syscall.SIGTERM, 143},
		{[]string{"verify", fifo, "--key", fifo}, syscall.SIGINT, 130},
	}
	for _, c := range cases {
		t.Run(c.args[0]+"-"+c.sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, c.args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Give it time to block in open(2) on the FIFO; a signal
			// before the handler is installed would kill it with the
			// signal instead of an exit code, which the test reports.
			time.Sleep(300 * time.Millisecond)
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != c.code {
					t.Fatalf("gpuctl %s after %s: %v, want exit %d; stderr:\n%s", strings.Join(c.args, " "), c.sig, err, c.code, stderr.String())
				}
				if !strings.Contains(stderr.String(), "interrupted") {
					t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("gpuctl %s still running 30 s after %s", strings.Join(c.args, " "), c.sig)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("interrupted generate left %s/out (%v)", dir, err)
	}
}
