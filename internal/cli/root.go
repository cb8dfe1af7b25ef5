package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// NewRootCommand builds the gpuctl command tree bound to streams, with the
// real dependencies (NewFactory).
func NewRootCommand(streams *IOStreams) *cobra.Command {
	return newRootCommand(streams, NewFactory())
}

// newRootCommand builds the command tree bound to streams and f.
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
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetIn(streams.In)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErrorf("%v\nRun '%s --help' for usage.", err, c.CommandPath())
	})
	root.CompletionOptions.HiddenDefaultCmd = true

	for _, add := range commandConstructors {
		root.AddCommand(add(streams))
	}
	root.AddCommand(newAcceptCommand(streams, f))
	return root
}

// commandConstructors lists every subcommand; each command file appends to it
// in an init function so that commands stay one per file.
var commandConstructors []func(*IOStreams) *cobra.Command

func register(f func(*IOStreams) *cobra.Command) {
	commandConstructors = append(commandConstructors, f)
}

// isCobraUsageError recognises cobra's own argument errors, which carry no
// exit code of ours.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, s := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "received ", "unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
