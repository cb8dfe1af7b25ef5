package cli

import (
	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/plan"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/spec"
)

func newSchemaCommand(streams *IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "schema [plan|record]",
		Short: "Print the JSON Schema of the cluster spec (for editors), of plan's JSON or of the acceptance record",
		Long: `Print the JSON Schema of the gpuctl ClusterSpec (` + spec.APIVersion + `).

Point your editor's YAML language server at it to get completion and
unknown-field checks while writing a spec. ` + "`gpuctl schema plan`" + ` prints the
schema of ` + "`gpuctl plan -o json`" + ` instead, for pipelines that consume plans;
` + "`gpuctl schema record`" + ` the schema of the predicate of the acceptance record
that ` + "`gpuctl accept`" + ` signs (` + record.PredicateType + `).`,
		Example: `  gpuctl schema > clusterspec.schema.json
  # then, first line of the spec file, for the YAML language server:
  # yaml-language-server: $schema=./clusterspec.schema.json`,
		Args:      maximumArgs(1, "nothing, plan or record"),
		ValidArgs: []string{"plan", "record"},
		RunE: func(cmd *cobra.Command, args []string) error {
			which := ""
			if len(args) == 1 {
				which = args[0]
			}
			switch which {
			case "plan":
				_, err := streams.Out.Write(plan.Schema)
				return err
			case "record":
				return writeSchema(streams, record.JSONSchema)
			case "":
				return writeSchema(streams, spec.JSONSchema)
			}
			return usageErrorf("unknown schema %q: want plan, record, or no argument for the spec's", which)
		},
	}
}

// writeSchema writes the schema schema returns, with a final newline.
func writeSchema(streams *IOStreams, schema func() ([]byte, error)) error {
	b, err := schema()
	if err != nil {
		return err
	}
	_, err = streams.Out.Write(append(b, '\n'))
	return err
}
