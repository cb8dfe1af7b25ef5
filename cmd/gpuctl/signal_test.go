//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
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
// Main's. It signals once gpuctl has opened the FIFO (waitForReader), never
// after a fixed sleep; the deadlines only keep a regression from hanging
// the suite.
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
			// Wait until gpuctl has the FIFO open for reading (so Main's
			// signal handler is installed), then hold the write end open
			// without writing: gpuctl stays blocked in read(2).
			w, err := waitForReader(fifo, done)
			if err != nil {
				t.Fatalf("gpuctl %s: %v; stderr:\n%s", strings.Join(c.args, " "), err, stderr.String())
			}
			defer w.Close()
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

// waitForReader returns the write end of fifo once a process has it open
// for reading: opening a FIFO for writing without blocking fails with ENXIO
// until a reader has opened it (or is blocked opening it). It gives up when
// the process ends first (done receives its exit) or after 30 s.
func waitForReader(fifo string, done <-chan error) (*os.File, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return w, nil
		}
		if !errors.Is(err, syscall.ENXIO) {
			return nil, err
		}
		select {
		case exit := <-done:
			return nil, fmt.Errorf("exited before opening the FIFO: %v", exit)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, errors.New("did not open the FIFO within 30 s")
		}
	}
}
