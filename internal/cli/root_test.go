package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every argument check in the tree, ours and cobra's, refuses with a usage
// error (exit 2) that names the command's help.
func TestArgChecksReturnUsageErrors(t *testing.T) {
	streams, _, _, _ := TestStreams()
	root := NewRootCommand(streams)
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Args == nil {
			return
		}
		for _, args := range [][]string{nil, {"a", "b", "c", "d", "e", "f"}} {
			err := c.Args(c, args)
			if err == nil {
				continue
			}
			checked++
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != ExitUsage {
				t.Errorf("%s %q: %T %v, want an ExitError with code %d", c.CommandPath(), args, err, err, ExitUsage)
				continue
			}
			if hint := "Run '" + c.CommandPath() + " --help' for usage."; !strings.HasSuffix(err.Error(), hint) {
				t.Errorf("%s %q: %q does not end in %q", c.CommandPath(), args, err, hint)
			}
		}
	}
	walk(root)
	if checked < 10 {
		t.Fatalf("only %d refusals checked; is the command tree empty?", checked)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"no-such-command"}, "error: unknown command \"no-such-command\" for \"gpuctl\"\nRun 'gpuctl --help' for usage.\n"},
		{[]string{"no-such-command", "--help"}, "error: unknown command \"no-such-command\" for \"gpuctl\"\nRun 'gpuctl --help' for usage.\n"},
		{[]string{"validate"}, "error: validate needs at least one SPEC file\nRun 'gpuctl validate --help' for usage.\n"},
		{[]string{"parse", "auto"}, "error: parse takes a KIND and a FILE (or - for stdin), got 1 argument\nRun 'gpuctl parse --help' for usage.\n"},
		{[]string{"schema", "x", "y"}, "error: schema takes nothing, plan or record, got 2 arguments\nRun 'gpuctl schema --help' for usage.\n"},
		{[]string{"schema", "x"}, "error: unknown schema \"x\": want plan, record, or no argument for the spec's\nRun 'gpuctl schema --help' for usage.\n"},
		{[]string{"plan"}, "error: plan takes a SPEC file, got none\nRun 'gpuctl plan --help' for usage.\n"},
		{[]string{"probe", "nvm"}, "error: unknown command \"nvm\" for \"gpuctl probe\" (did you mean nvml?)\nRun 'gpuctl probe --help' for usage.\n"},
		{[]string{"version", "--no-such-flag"}, "error: unknown flag: --no-such-flag\nRun 'gpuctl version --help' for usage.\n"},
	} {
		streams, _, out, errOut := TestStreams()
		code := Run(context.Background(), tc.args, streams)
		if code != ExitUsage {
			t.Errorf("gpuctl %q: exit %d, want %d (stderr %q)", tc.args, code, ExitUsage, errOut)
		}
		if !strings.HasSuffix(errOut.String(), tc.want) {
			t.Errorf("gpuctl %q: stderr %q, want it to end in %q", tc.args, errOut, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("gpuctl %q: stdout %q, want nothing", tc.args, out)
		}
	}
}

// Help and shell completion are not refused as unknown commands.
func TestHelpAndCompletionStillRun(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"help", "validate"}, {"--help"}, {"completion", "bash"}, {"__complete", "vali"}} {
		streams, _, out, errOut := TestStreams()
		if code := Run(context.Background(), args, streams); code != ExitOK {
			t.Errorf("gpuctl %q: exit %d (stderr %q)", args, code, errOut)
		}
		if out.Len() == 0 {
			t.Errorf("gpuctl %q printed nothing", args)
		}
	}
}

// --no-color (and GPUCTL_NO_COLOR) turns colour off as NO_COLOR does, on
// every command; without it the streams keep their colour.
func TestNoColorFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want bool
	}{
		{[]string{"version"}, "", true},
		{[]string{"--no-color", "version"}, "", false},
		{[]string{"version", "--no-color"}, "", false},
		{[]string{"explain", "SPEC-DECODE", "--no-color"}, "", false},
		{[]string{"version"}, "true", false},
	} {
		t.Setenv("GPUCTL_NO_COLOR", tc.env)
		streams, _, _, errOut := TestStreams()
		streams.Color = true
		if code := Run(context.Background(), tc.args, streams); code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, code, errOut)
		}
		if streams.Color != tc.want {
			t.Errorf("%q (GPUCTL_NO_COLOR=%q): colour %v, want %v", tc.args, tc.env, streams.Color, tc.want)
		}
	}
}
