package cli

import (
	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/plan"
	"github.com/gpuctl/gpuctl/internal/spec"
)

func newSchemaCommand(streams *IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "schema [plan]",
		Short: "Print the JSON Schema of the cluster spec (for editors), or of plan's JSON",
		Long: `Print the JSON Schema of the gpuctl ClusterSpec (` + spec.APIVersion + `).

Point your editor's YAML language server at it to get completion and
unknown-field checks while writing a spec. ` + "`gpuctl schema plan`" + ` prints the
schema of ` + "`gpuctl plan -o json`" + ` instead, for pipelines that consume plans.`,
		Example: `  gpuctl schema > clusterspec.schema.json
  # then, first line of the spec file, for the YAML language server:
  # yaml-language-server: $schema=./clusterspec.schema.json`,
		Args:      maximumArgs(1, "nothing, or plan"),
		ValidArgs: []string{"plan"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if args[0] != "plan" {
					return usageErrorf("unknown schema %q: want plan, or no argument for the spec's", args[0])
				}
				_, err := streams.Out.Write(plan.Schema)
				return err
			}
			b, err := spec.JSONSchema()
			if err != nil {
				return err
			}
			_, err = streams.Out.Write(append(b, '\n'))
			return err
		},
	}
}
