package cli

import (
	"context"
	"os"
	"syscall"
	"testing"
)

// TestMatrixHonoursContext: every matrix command stops on Ctrl-C or
// SIGTERM with exit 130 or 143 and prints no answer.
func TestMatrixHonoursContext(t *testing.T) {
	for _, args := range [][]string{
		{"matrix", "check", "--gpu", "H100", "--driver", "535.129.03", "--cuda", "12.4"},
		{"matrix", "cuda", "12.4"},
		{"matrix", "gpus"},
		{"matrix", "machines", "--provider", "gke"},
		{"matrix", "drivers"},
	} {
		for _, c := range []struct {
			sig  os.Signal
			code int
		}{{os.Interrupt, ExitInterrupted}, {syscall.SIGTERM, ExitTerminated}} {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(&SignalError{Signal: c.sig})
			streams, _, out, _ := TestStreams()
			if code := Run(ctx, args, streams); code != c.code {
				t.Errorf("%v after %v: exit %d, want %d", args, c.sig, code, c.code)
			}
			if out.Len() != 0 {
				t.Errorf("%v after %v printed %q", args, c.sig, out.String())
			}
		}
		// Not cancelled: the same command answers.
		streams, _, out, _ := TestStreams()
		if code := Run(context.Background(), args, streams); code != ExitOK && code != ExitCheckFailed {
			t.Errorf("%v: exit %d", args, code)
		}
		if out.Len() == 0 {
			t.Errorf("%v printed nothing", args)
		}
	}
}
