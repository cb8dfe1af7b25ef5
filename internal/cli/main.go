// Package cli is gpuctl's command tree: flags, configuration, output and the
// mapping of results to exit codes. It is the only package that prints or
// exits.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
)

// Main runs gpuctl with os.Args and returns the process exit code.
// SIGINT (Ctrl-C) and SIGTERM cancel the context every command runs under,
// with a *SignalError as the cause; a command that stops for it exits 130 or
// 143 (accept first deletes what it created and reports its own verdict).
func Main() int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			cancel(&SignalError{Signal: s})
		case <-ctx.Done():
		}
	}()
	return Run(ctx, os.Args[1:], SystemStreams())
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
	msg := err.Error()
	if ee != nil && ee.Usage && cmd != nil && !strings.Contains(msg, "--help") {
		msg += fmt.Sprintf("\nRun '%s --help' for usage.", cmd.CommandPath())
	}
	fmt.Fprintf(streams.ErrOut, "error: %s\n", msg)
	return code
}
