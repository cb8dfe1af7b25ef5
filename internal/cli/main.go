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
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], SystemStreams())
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
