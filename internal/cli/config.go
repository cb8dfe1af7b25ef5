package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// fromEnvAnnotation marks a flag whose value bindEnv took from the
// environment, so that an error about the value can name the variable.
const fromEnvAnnotation = "gpuctl.dev/from-env"

// envName is the environment variable of flag name: GPUCTL_AS_OF for as-of.
func envName(name string) string {
	return "GPUCTL_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// bindEnv fills every flag of cmd that the user did not set from the
// environment variable GPUCTL_<FLAG> (dashes become underscores, e.g.
// GPUCTL_AS_OF for --as-of). A flag on the command line always wins. A fresh
// viper instance per invocation keeps runs independent. A command without
// an -o flag says on stderr that it ignores GPUCTL_OUTPUT.
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
		if check := envChecks[f.Name]; check != nil {
			if err := check(val); err != nil {
				firstErr = usageErrorf("%s=%q: %v", envName(f.Name), val, err)
				return
			}
		}
		if err := cmd.Flags().Set(f.Name, val); err != nil {
			firstErr = usageErrorf("%s", envValueError(f, val, err))
			return
		}
		_ = cmd.Flags().SetAnnotation(f.Name, fromEnvAnnotation, []string{"true"})
	})
	if firstErr == nil && cmd.Flags().Lookup("output") == nil && !quietAboutOutput(cmd) {
		if val := v.GetString("output"); val != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: %s=%s ignored: '%s' has no -o flag\n", envName("output"), val, cmd.CommandPath())
		}
	}
	return firstErr
}

// envChecks check the values that flags take as plain strings and commands
// parse later, so that a bad value from the environment is refused with the
// variable's name rather than the flag's.
var envChecks = map[string]func(string) error{
	"as-of": checkDateEnv,
}

// quietAboutOutput: help and shell completion never mention GPUCTL_OUTPUT.
func quietAboutOutput(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		switch c.Name() {
		case "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return true
		}
	}
	return false
}

// envValueError says why the environment's value val does not fit flag f,
// naming the variable and what the flag takes.
func envValueError(f *pflag.Flag, val string, err error) string {
	if f.Value.Type() == "bool" {
		return fmt.Sprintf("%s=%q: want true or false (also 1/0, t/f)", envName(f.Name), val)
	}
	if ne := (*strconv.NumError)(nil); errors.As(err, &ne) {
		return fmt.Sprintf("%s=%q: want %s %s", envName(f.Name), val, article(f.Value.Type()), f.Value.Type())
	}
	return fmt.Sprintf("%s=%q: %v", envName(f.Name), val, err)
}

func article(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
