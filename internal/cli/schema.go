package cli

import (
	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/spec"
)

func newSchemaCommand(streams *IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the cluster spec (for editors)",
		Long: `Print the JSON Schema of the gpuctl ClusterSpec (` + spec.APIVersion + `).

Point your editor's YAML language server at it to get completion and
unknown-field checks while writing a spec.`,
		Example: `  gpuctl schema > clusterspec.schema.json
  # then, first line of the spec file, for the YAML language server:
  # yaml-language-server: $schema=./clusterspec.schema.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := spec.JSONSchema()
			if err != nil {
				return err
			}
			_, err = streams.Out.Write(append(b, '\n'))
			return err
		},
	}
}
