// Package cli is gpuctl's command tree: flags, configuration, output and the
// mapping of results to exit codes. It is the only package that prints or
// exits.
package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

// Main runs gpuctl with os.Args and returns the process exit code.
// SIGINT (Ctrl-C) and SIGTERM cancel the context every command runs under,
// with a *SignalError as the cause; a command that stops for it exits 130 or
// 143 (accept first deletes what it created and reports its own verdict).
// A command that has not returned signalGrace after the signal (its own
// grace in signalGraces) is left behind: Main reports the signal and
// returns its exit code all the same.
func Main() int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return runUntilSignal(ctx, cancel, sigs, os.Args[1:], SystemStreams(), Run)
}

// signalGrace is how long Main waits after SIGINT or SIGTERM for the
// command to stop on its own before it exits without it: every loop of
// gpuctl sees the context within a second of wall time at most, but one
// library call (a parse, a write) may not, and a CI job's cancel must end
// the process.
const signalGrace = 700 * time.Millisecond

// signalGraces are the commands that finish what they started after a
// signal, with how long Main waits for them: accept deletes the Jobs it
// created and reports its verdict (each delete bounded by its own timeout;
// cutting that short would leave Jobs on the cluster), so Main waits for
// it however long; generate renames its staged files into place.
var signalGraces = map[string]time.Duration{
	"accept":   noGraceLimit,
	"generate": 5 * time.Second,
}

// noGraceLimit is a grace that does not end.
const noGraceLimit = time.Duration(math.MaxInt64)

// graceOf is how long Main waits after a signal for the command args run.
func graceOf(args []string) time.Duration {
	if g, ok := signalGraces[commandOf(args)]; ok {
		return g
	}
	return signalGrace
}

// runUntilSignal runs run(ctx, args, streams) and returns its exit code.
// The first signal from sigs cancels ctx with a *SignalError; then a
// command that has not returned within its grace (graceOf) is not waited
// for: the signal is reported as a stopped command reports it ("error:
// interrupted by SIGTERM; stopped, nothing more written") and its exit
// code (130, 143) returned.
func runUntilSignal(ctx context.Context, cancel context.CancelCauseFunc, sigs <-chan os.Signal, args []string, streams *IOStreams,
	run func(context.Context, []string, *IOStreams) int) int {
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, streams) }()
	var sig *SignalError
	select {
	case code := <-done:
		return code
	case s := <-sigs:
		sig = &SignalError{Signal: s}
	}
	cancel(sig)
	grace := time.NewTimer(graceOf(args))
	defer grace.Stop()
	select {
	case code := <-done:
		return code
	case <-grace.C:
	}
	fmt.Fprintf(streams.ErrOut, "error: %s; stopped, nothing more written\n", sig)
	return sig.ExitCode()
}

// commandOf is the top-level command args run: the first argument that is
// not a flag (the root command has no flag that takes a value).
func commandOf(args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// SignalError is the cause of a context cancelled by a signal.
type SignalError struct{ Signal os.Signal }

func (e *SignalError) Error() string {
	switch e.Signal {
	case os.Interrupt:
		return "interrupted by SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "interrupted by SIGTERM"
	}
	return "interrupted by " + e.Signal.String()
}

// ExitCode is 128 plus the signal's number, as shells report it: 130 for
// SIGINT, 143 for SIGTERM.
func (e *SignalError) ExitCode() int {
	if e.Signal == syscall.SIGTERM {
		return ExitTerminated
	}
	return ExitInterrupted
}

// Run executes gpuctl with args on streams, with the real dependencies
// (NewFactory), and returns the exit code.
func Run(ctx context.Context, args []string, streams *IOStreams) int {
	return RunWithFactory(ctx, args, streams, NewFactory())
}

// RunWithFactory executes gpuctl with args on streams and the dependencies
// of f, and returns the exit code. A panic below is reported as a tool
// error, never as a Go stack trace (unless GPUCTL_DEBUG is set).
func RunWithFactory(ctx context.Context, args []string, streams *IOStreams, f *Factory) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(streams.ErrOut, "error: internal error: %v (please report this)\n", r)
			if os.Getenv("GPUCTL_DEBUG") != "" {
				fmt.Fprintf(streams.ErrOut, "%s\n", debug.Stack())
			}
			code = ExitToolError
		}
	}()
	root := newRootCommand(streams, f)
	root.SetArgs(args)
	cmd := root
	err := unknownCommand(root, args)
	if err == nil {
		cmd, err = root.ExecuteContextC(ctx)
	}
	if err == nil {
		return ExitOK
	}
	var sig *SignalError
	if errors.Is(err, context.Canceled) && errors.As(context.Cause(ctx), &sig) {
		fmt.Fprintf(streams.ErrOut, "error: %s; stopped, nothing more written\n", sig)
		return sig.ExitCode()
	}
	code = exitCodeOf(err)
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return code
	}
	writeErrorDocument(streams, cmd, args, f.Now(), err)
	msg := err.Error()
	if ee != nil && ee.Usage && cmd != nil && !strings.Contains(msg, "--help") {
		msg += fmt.Sprintf("\nRun '%s --help' for usage.", cmd.CommandPath())
	}
	fmt.Fprintf(streams.ErrOut, "error: %s\n", msg)
	return code
}
