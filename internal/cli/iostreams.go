package cli

import (
	"bytes"
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// IOStreams are the standard streams of one invocation. Nothing below Main
// touches os.Stdout or os.Stderr directly.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutTTY reports whether Out is a terminal (aligned tables) or not
	// (plain, tab-separated text).
	OutTTY bool
	// ErrTTY reports whether ErrOut is a terminal (live progress views) or
	// not (plain progress lines).
	ErrTTY bool
	// Color reports whether styled output is wanted: Out is a terminal and
	// NO_COLOR is not set (https://no-color.org).
	Color bool
}

// SystemStreams returns the process's streams.
func SystemStreams() *IOStreams {
	return &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()),
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd()),
		Color:  isatty.IsTerminal(os.Stdout.Fd()) && os.Getenv("NO_COLOR") == "",
	}
}

// TestStreams returns streams backed by buffers, for tests.
func TestStreams() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}
