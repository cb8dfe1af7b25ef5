package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuctl/gpuctl/internal/cli/render"
)

// A view is what a command writes on stdout; its viewFormats are the
// formats -o offers for it, each with its writer. A command declares them
// once, addViewFlag makes -o accept exactly their names (help, completion,
// errors) and writeOutput writes the view in the one chosen. A new output
// format for a command is one entry in its list and the renderer it calls.

// viewFormat is one -o value of a view V and the function that writes V
// in it to the streams' Out.
type viewFormat[V any] struct {
	name  string
	write func(s *IOStreams, v V) error
}

// viewFormats are a view's formats in the order -o's help lists them, the
// default first.
type viewFormats[V any] []viewFormat[V]

func (fs viewFormats[V]) names() []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out
}

// addViewFlag adds -o to cmd, accepting the names of formats (the first
// the default).
func addViewFlag[V any](cmd *cobra.Command, formats viewFormats[V]) *outputFlag {
	names := formats.names()
	return addOutputFlag(cmd, names[0], names...)
}

// writeOutput writes v in the format out holds (validated). A format the
// view does not have is an error: -o accepted a value no writer takes.
func writeOutput[V any](s *IOStreams, out *outputFlag, formats viewFormats[V], v V) error {
	for _, f := range formats {
		if f.name == out.value {
			return f.write(s, v)
		}
	}
	return fmt.Errorf("no %s writer for this output", out.value)
}

// tableFormat is -o table, written by write.
func tableFormat[V any](write func(s *IOStreams, v V) error) viewFormat[V] {
	return viewFormat[V]{render.FormatTable, write}
}

// jsonFormat is -o json: the view itself, its keys the contract.
func jsonFormat[V any]() viewFormat[V] {
	return viewFormat[V]{render.FormatJSON, func(s *IOStreams, v V) error { return render.JSON(s.Out, v) }}
}

// yamlFormat is -o yaml: the view with the keys of its JSON.
func yamlFormat[V any]() viewFormat[V] {
	return viewFormat[V]{render.FormatYAML, func(s *IOStreams, v V) error { return render.YAML(s.Out, v) }}
}

// outputFlag is the one -o flag of a command, restricted to formats.
// Aliases name other spellings of a format ("text" for "table"); validate
// replaces them by the format.
type outputFlag struct {
	value   string
	formats []string
	aliases map[string]string
	flags   *pflag.FlagSet
}

func addOutputFlag(cmd *cobra.Command, def string, formats ...string) *outputFlag {
	o := &outputFlag{value: def, formats: formats, flags: cmd.Flags()}
	cmd.Flags().StringVarP(&o.value, "output", "o", def, "output format: "+strings.Join(formats, "|"))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	return o
}

// alias makes name another spelling of format.
func (o *outputFlag) alias(name, format string) *outputFlag {
	if o.aliases == nil {
		o.aliases = map[string]string{}
	}
	o.aliases[name] = format
	if f := o.flags.Lookup("output"); f != nil {
		f.Usage += fmt.Sprintf(" (%s: %s)", name, format)
	}
	return o
}

func (o *outputFlag) validate() error {
	if f, ok := o.aliases[o.value]; ok {
		o.value = f
	}
	for _, f := range o.formats {
		if o.value == f {
			return nil
		}
	}
	want := strings.Join(o.formats, ", ")
	if f := o.flags.Lookup("output"); f != nil && len(f.Annotations[fromEnvAnnotation]) > 0 {
		return usageErrorf("%s=%q: unknown output format for this command (want one of %s, or unset %s)", envName("output"), o.value, want, envName("output"))
	}
	return usageErrorf("unknown output format %q (want one of %s)", o.value, want)
}

func (o *outputFlag) String() string { return o.value }
