package cli

import (
	"context"
	"encoding/json"
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
		{"matrix", "tables"},
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

// TestMatrixTables: `matrix tables` dates each table by its own newest
// as_of and marks the ones past the stale limit, so one old table shows
// beside newer ones.
func TestMatrixTables(t *testing.T) {
	streams, _, out, _ := TestStreams()
	if code := Run(context.Background(), []string{"matrix", "tables", "--as-of", "2026-12-02", "-o", "json"}, streams); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var l tableList
	if err := json.Unmarshal(out.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	got := map[string]tableItem{}
	for _, it := range l.Items {
		got[it.Table] = it
	}
	if it := got["gcp gke.driver_install"]; it.AsOf != "2026-08-20" || it.AgeDays != 104 || it.Stale || it.RefreshDays != 120 {
		t.Errorf("gcp gke.driver_install = %+v", it)
	}
	if it := got["drivers branches"]; it.AsOf == "" || it.Stale {
		t.Errorf("drivers branches = %+v", it)
	}
	if l.StaleAfterDays != 120 || l.AsOf != "2026-12-02" {
		t.Errorf("list = %+v", l)
	}
}
