package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// NewRootCommand builds the gpuctl command tree bound to streams. Every
// top-level command is listed here; a command's own subcommands are added by
// its constructor.
func NewRootCommand(streams *IOStreams) *cobra.Command {
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

	root.AddCommand(
		newAcceptCommand(streams),
		newExplainCommand(streams),
		newGenerateCommand(streams),
		newKeygenCommand(streams),
		newMatrixCommand(streams),
		newParseCommand(streams),
		newProbeCommand(streams),
		newSchemaCommand(streams),
		newValidateCommand(streams),
		newVerifyCommand(streams),
		newVersionCommand(streams),
	)
	return root
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
