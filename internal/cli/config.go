package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// bindEnv fills every flag of cmd that the user did not set from the
// environment variable GPUCTL_<FLAG> (dashes become underscores, e.g.
// GPUCTL_AS_OF for --as-of). A flag on the command line always wins. A fresh
// viper instance per invocation keeps runs independent.
func bindEnv(cmd *cobra.Command) error {
	v := viper.New()
	v.SetEnvPrefix("GPUCTL")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	var firstErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || firstErr != nil {
			return
		}
		if !v.IsSet(f.Name) {
			return
		}
		val := v.GetString(f.Name)
		if err := cmd.Flags().Set(f.Name, val); err != nil {
			firstErr = usageErrorf("environment GPUCTL_%s=%q: %v", strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")), val, err)
		}
	})
	return firstErr
}

// outputFlag is the one -o flag of a command, restricted to formats.
type outputFlag struct {
	value   string
	formats []string
}

func addOutputFlag(cmd *cobra.Command, def string, formats ...string) *outputFlag {
	o := &outputFlag{value: def, formats: formats}
	cmd.Flags().StringVarP(&o.value, "output", "o", def, "output format: "+strings.Join(formats, "|"))
	return o
}

func (o *outputFlag) validate() error {
	for _, f := range o.formats {
		if o.value == f {
			return nil
		}
	}
	return usageErrorf("unknown output format %q (want one of %s)", o.value, strings.Join(o.formats, ", "))
}

func (o *outputFlag) String() string { return o.value }
