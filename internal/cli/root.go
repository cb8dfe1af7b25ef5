package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// NewRootCommand builds the gpuctl command tree bound to streams, with the
// real dependencies (NewFactory).
func NewRootCommand(streams *IOStreams) *cobra.Command {
	return newRootCommand(streams, NewFactory())
}

// newRootCommand builds the command tree bound to streams and f. Every
// top-level command is listed here; a command's own subcommands are added by
// its constructor.
func newRootCommand(streams *IOStreams, f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "gpuctl",
		Short: "Plan, validate, generate and accept GPU node pools on Kubernetes (GKE and EKS)",
		Long: `gpuctl checks a GPU cluster spec against a sourced version matrix (GPU, machine
type, driver, CUDA, OS image, Kubernetes, device plugin, NCCL), generates the
Terraform and Helm values that implement it, and accepts new GPU nodes with
staged probes that end in a signed acceptance record.

` + ExitCodeHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every command reads the flags it was not given from GPUCTL_<FLAG>.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			noColorFlag(cmd, streams)
			return nil
		},
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetIn(streams.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError(c, "%v%s", err, flagSuggestion(c, err))
	})
	root.Version = rootVersion()
	root.SetVersionTemplate("gpuctl {{.Version}}\n")
	root.Flags().BoolP("version", "", false, "print gpuctl's version (gpuctl version -o json for the build details)")
	root.PersistentFlags().Bool(noColorName, false, "print no colours, as NO_COLOR=1 does (https://no-color.org)")

	root.AddCommand(
		newAcceptCommand(streams, f),
		newDocsCommand(streams),
		newExplainCommand(streams),
		newGenerateCommand(streams, f),
		newImportCommand(streams),
		newKeygenCommand(streams),
		newMatrixCommand(streams, f),
		newParseCommand(streams),
		newPlanCommand(streams, f),
		newPreflightCommand(streams, f),
		newProbeCommand(streams),
		newReportCommand(streams),
		newSchemaCommand(streams),
		newValidateCommand(streams, f),
		newVerifyCommand(streams),
		newVersionCommand(streams),
	)

	// cobra adds its help and completion commands while executing; adding
	// them now lets unknownCommand see them and usageArgs type their
	// argument errors.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	registerCompletions(root, f)
	usageArgs(root)
	return root
}

// noColorName is the persistent flag that turns colour off.
const noColorName = "no-color"

// noColorFlag turns streams' colour off when cmd was given --no-color (or
// GPUCTL_NO_COLOR): the same as NO_COLOR, for a user who cannot set the
// environment.
func noColorFlag(cmd *cobra.Command, streams *IOStreams) {
	if off, _ := cmd.Flags().GetBool(noColorName); off {
		streams.Color = false
	}
}

// usageError is a usage error (exit 2) about c that says how to get help.
func usageError(c *cobra.Command, format string, args ...any) error {
	return usageErrorf("%s\nRun '%s --help' for usage.", fmt.Sprintf(format, args...), c.CommandPath())
}

// flagSuggestion is " (did you mean --strict?)" when err is pflag's
// unknown-flag error for a flag name close to one of c's flags, else "".
func flagSuggestion(c *cobra.Command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	best, bestD := "", 3 // at most two edits away
	seen := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := levenshtein.ComputeDistance(name, f.Name); d < bestD || (d == bestD && f.Name < best) {
			best, bestD = f.Name, d
		}
	}
	c.Flags().VisitAll(seen)
	c.InheritedFlags().VisitAll(seen)
	if best == "" || bestD > 2 {
		return ""
	}
	return fmt.Sprintf(" (did you mean --%s?)", best)
}

// commandName is c's path without the root's name: "matrix cuda".
func commandName(c *cobra.Command) string {
	if !c.HasParent() {
		return c.Name()
	}
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// Positional-argument checks. Each returns a usage error that names what the
// command wants and how to get help; want is a phrase such as
// "a KIND and a FILE".

// noArgs accepts no arguments. On a command with subcommands an argument is
// an unknown subcommand.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if c.HasAvailableSubCommands() {
		return unknownSubcommand(c, args[0])
	}
	return usageError(c, "%s takes no arguments, got %s", commandName(c), quoteArgs(args))
}

// exactArgs accepts exactly n arguments.
func exactArgs(n int, want string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError(c, "%s takes %s, got %s", commandName(c), want, countArgs(args))
		}
		return nil
	}
}

// minimumArgs accepts n or more arguments; want reads "at least one SPEC file".
func minimumArgs(n int, want string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return usageError(c, "%s needs %s", commandName(c), want)
		}
		return nil
	}
}

// maximumArgs accepts up to n arguments; want reads "at most one RULE".
func maximumArgs(n int, want string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) > n {
			return usageError(c, "%s takes %s, got %s", commandName(c), want, countArgs(args))
		}
		return nil
	}
}

func unknownSubcommand(c *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default, which it sets only in its own lookup
	}
	if s := c.SuggestionsFor(name); len(s) > 0 && !c.DisableSuggestions {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, ", "))
	}
	return usageError(c, "%s", msg)
}

func countArgs(args []string) string {
	switch len(args) {
	case 0:
		return "none"
	case 1:
		return "1 argument"
	}
	return fmt.Sprintf("%d arguments", len(args))
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(q, " ")
}

// usageArgs makes every argument check in the tree under c return a usage
// error, so that those of cobra's own commands (completion) exit 2 as ours
// do. Errors that already carry an exit code pass through.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(c *cobra.Command, args []string) error {
			err := check(c, args)
			var ee *ExitError
			if err == nil || errors.As(err, &ee) {
				return err
			}
			return usageError(c, "%v", err)
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// unknownCommand returns a usage error when args name no command of root.
// cobra finds the same error inside Execute but returns it untyped: a
// command without an argument check (root itself) is looked up by cobra's
// legacy rule, which refuses an unknown first word.
func unknownCommand(root *cobra.Command, args []string) error {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		return nil // cobra adds its shell-completion command only while executing
	}
	c, rest, err := root.Find(args)
	if err == nil {
		return nil
	}
	if c == nil {
		c = root
	}
	for _, a := range rest {
		if !strings.HasPrefix(a, "-") {
			return unknownSubcommand(c, a)
		}
	}
	return usageError(c, "%s", strings.TrimSpace(err.Error()))
}
