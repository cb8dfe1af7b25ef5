package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// The rules of the findings that stand, in validate's -o json, yaml and
// sarif documents, for an input it could not read or a wrong use of the
// command (exit 2 all the same; stderr says it as for -o table).
const (
	// ruleSpecDecode: a YAML file could not be read or decoded (missing
	// file, YAML syntax, a tab, an unknown field, a wrong type).
	ruleSpecDecode = "SPEC-DECODE"
	// ruleImportDecode: a Terraform folder or file, a blueprint or
	// Karpenter YAML could not be read or imported (HCL syntax, a cap, no
	// GPU node pool).
	ruleImportDecode = "IMPORT-DECODE"
	// ruleUsage: a wrong flag, flag value or argument.
	ruleUsage = "CLI-USAGE"
)

// errorDocumentAnnotation marks a command whose usage errors are written
// as its -o json|yaml|sarif document too (writeErrorDocument).
const errorDocumentAnnotation = "gpuctl.dev/error-document"

// inputRules describe the rules above for SARIF's rule table.
var inputRules = map[string]render.RuleInfo{
	ruleSpecDecode: {ID: ruleSpecDecode, Title: "Spec not decoded",
		Summary: "The file could not be read or decoded as YAML of its kind, so nothing in it was validated.",
		Help:    "The file is missing or not a regular file, or its YAML has a syntax error, a tab in its indentation, an unknown field or a value of the wrong type. The finding points at the line and column; fix it there and run validate again."},
	ruleImportDecode: {ID: ruleImportDecode, Title: "Input not imported",
		Summary: "The Terraform, blueprint or Karpenter input could not be read or imported, so nothing in it was validated.",
		Help:    "The input has a syntax error (the finding points at the line and column), passes a cap on what gpuctl reads, or holds no GPU node pool. `gpuctl import PATH` shows what gpuctl reads from it."},
	ruleUsage: {ID: ruleUsage, Title: "Wrong use of the command",
		Summary: "A flag, a flag value or an argument was wrong, so nothing was validated.",
		Help:    "`gpuctl validate --help` lists the flags and arguments."},
}

// errorFinding is err, why file (a PATH; "" for none) was not validated,
// as an error finding at the file:line:column err names: its rule
// ruleUsage for a usage error, ruleSpecDecode for a spec decoding error
// (*spec.Error), else ruleImportDecode. The message is err's without the
// location.
func errorFinding(file string, err error) diag.Finding {
	f := diag.Finding{Rule: ruleImportDecode, Severity: diag.SeverityError, File: file, Message: err.Error()}
	var se *spec.Error
	var at interface{ Position() (string, int, int) }
	switch {
	case isUsage(err):
		f.Rule = ruleUsage
		f.Message = strings.SplitN(f.Message, "\n", 2)[0] // without the --help hint
	case errors.As(err, &se):
		f.Rule, f.File, f.Line, f.Column, f.Path = ruleSpecDecode, se.File, se.Line, se.Column, se.Path
	case errors.As(err, &at):
		f.File, f.Line, f.Column = at.Position()
	}
	f.Message = withoutLocation(f.Message, f.File, f.Line, f.Column)
	return f
}

// withoutLocation is msg without its leading "FILE:LINE:COL: " or
// "FILE: ".
func withoutLocation(msg, file string, line, col int) string {
	if file == "" {
		return msg
	}
	if line > 0 {
		if rest, ok := strings.CutPrefix(msg, fmt.Sprintf("%s:%d:%d: ", file, line, col)); ok {
			return rest
		}
	}
	if rest, ok := strings.CutPrefix(msg, file+": "); ok {
		return rest
	}
	return msg
}

// machineReadable reports whether format is a document with findings.
func machineReadable(format string) bool {
	return format == render.FormatJSON || format == render.FormatYAML || format == "sarif"
}

// writeInputError writes, for -o json, yaml and sarif, the report of acc
// with err, why file was not validated, as a finding (and, for an import
// that found no GPU node pool, its lists in imports). It returns err
// marked as written, so Main prints it on stderr and writes no other
// document; -o table gets err as it is.
func (o *validateOptions) writeInputError(acc *validated, file string, err error) error {
	if !machineReadable(o.output.value) || errors.Is(err, context.Canceled) {
		return err
	}
	acc.all = append(acc.all, errorFinding(file, err))
	rep := acc.report(o)
	if res := noPools(err); res != nil {
		rep.Imports = append(rep.Imports, importLists(file, res, err.Error()))
	}
	_ = writeOutput(o.streams, o.output, o.formats(), rep)
	return written(err)
}

// written marks err (exit 2) as already written in the command's document.
func written(err error) error {
	var ee *ExitError
	if errors.As(err, &ee) {
		c := *ee
		c.Written = true
		return &c
	}
	return &ExitError{Code: ExitUsage, Err: err, Written: true}
}

// writeErrorDocument writes, when err exits 2 and was not written yet
// (ExitError.Written), cmd is marked with errorDocumentAnnotation and args
// ask for -o json, yaml or sarif (or GPUCTL_OUTPUT does), a validation
// report whose one finding is err: a usage error, or an input error found
// before any file was validated. args are the command line as Main got it
// (flag parsing may have stopped before -o).
func writeErrorDocument(streams *IOStreams, cmd *cobra.Command, args []string, now time.Time, err error) {
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage || ee.Written || cmd == nil || cmd.Annotations[errorDocumentAnnotation] == "" {
		return
	}
	format, paths := outputOf(cmd, args)
	if !machineReadable(format) {
		return
	}
	file := ""
	if len(paths) > 0 && !isUsage(err) {
		file = paths[0]
	}
	rep := render.NewValidationReport(spec.APIVersion, paths, now.Format(dateLayout), []string{}, []diag.Finding{errorFinding(file, err)})
	o := &validateOptions{streams: streams, output: &outputFlag{value: format}}
	_ = writeOutput(streams, o.output, o.formats(), rep)
}

// outputOf is the -o format args give cmd (GPUCTL_OUTPUT when they give
// none) and the PATH arguments after cmd's name, read again from args
// without the flags cmd does not have.
func outputOf(cmd *cobra.Command, args []string) (string, []string) {
	fs := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.AddFlagSet(cmd.Flags())
	_ = fs.Parse(knownFlags(fs, args))
	out := fs.Lookup("output")
	if out == nil {
		return "", nil
	}
	format := out.Value.String()
	if !out.Changed {
		if env := os.Getenv(envName("output")); env != "" {
			format = env
		}
	}
	rest := fs.Args()
	for i, a := range rest {
		if a == cmd.Name() {
			return format, rest[i+1:]
		}
	}
	return format, rest
}

// isUsage reports whether err is a usage error (a wrong flag, flag value
// or argument).
func isUsage(err error) bool {
	var ee *ExitError
	return errors.As(err, &ee) && ee.Usage
}

// knownFlags are args without the flags fs does not have (pflag would
// stop at the first, or take the argument after it as its value).
func knownFlags(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if name, long := strings.CutPrefix(a, "--"); long {
			if name, _, _ = strings.Cut(name, "="); name != "" && fs.Lookup(name) == nil {
				continue
			}
		} else if len(a) > 1 && a[0] == '-' && fs.ShorthandLookup(a[1:2]) == nil {
			continue
		}
		out = append(out, a)
	}
	return out
}
