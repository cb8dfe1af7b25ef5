package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is stamped at build time with -ldflags "-X github.com/gpuctl/gpuctl/internal/cli.Version=v1.2.3".
var Version = ""

// BuildVersion returns the stamped version, else the module version from the
// build info, else "devel".
func BuildVersion() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

func newVersionCommand(streams *IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print gpuctl's version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(streams.Out, "gpuctl %s\n", BuildVersion())
			return err
		},
	}
}
