package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/importer"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// yamlDir reports whether file is a folder validate reads as YAML files
// (no --from, no .tf files in it), with its files (importer.DirFiles).
func (o *validateOptions) yamlDir(file string) ([]importer.DirFile, bool, error) {
	if o.tf.from != "" || file == "-" {
		return nil, false, nil
	}
	if st, err := os.Stat(file); err != nil || !st.IsDir() {
		return nil, false, nil // a file, or one load says cannot be read
	}
	tf, files, err := importer.DirFiles(file, o.tf.root)
	if err != nil || tf {
		return nil, false, err
	}
	return files, true, nil
}

// validateDir validates the files of the folder dir: each spec on its
// own, its Karpenter files together as one import (as `--from karpenter
// DIR` reads them); the rest are listed as skipped with the reason. A file
// that cannot be decoded is its finding (and an error line on stderr),
// and validate then exits 2 once every file was judged. Errors: the
// pipeline's.
func (o *validateOptions) validateDir(ctx context.Context, acc *validated, copts check.Options, dir string, files []importer.DirFile) error {
	var karpenter []string
	specs := 0
	for _, f := range files {
		switch f.From {
		case importer.FromSpec:
			specs++
			doc, err := spec.Parse(f.File, f.Data)
			if err != nil {
				o.dirInputError(acc, f.File, importer.FromSpec, specError(err))
				continue
			}
			if err := o.checkInto(ctx, acc, copts, f.File, doc, nil); err != nil {
				return err
			}
		case importer.FromKarpenter:
			karpenter = append(karpenter, f.File)
		default:
			acc.skipped = append(acc.skipped, render.SkippedFile{File: f.File, Reason: f.Reason})
		}
	}
	if specs+len(karpenter) == 0 {
		err := fmt.Errorf("%s: no .tf files, gpuctl specs or Karpenter YAML%s; say what it holds with --from", dir, skippedList(acc.skipped))
		return o.writeInputError(acc, dir, withCode(ExitUsage, err))
	}
	if len(karpenter) == 0 {
		return nil
	}
	doc, imported, err := o.load(ctx, dir, karpenter, importer.FromKarpenter)
	if err != nil {
		o.dirInputError(acc, dir, importer.FromKarpenter, err)
		return nil
	}
	return o.checkInto(ctx, acc, copts, dir, doc, imported)
}

// dirInputError records err, why file of a folder was not validated, as
// its finding and result, and says it on stderr as Main says an error.
func (o *validateOptions) dirInputError(acc *validated, file, from string, err error) {
	fmt.Fprintf(o.streams.ErrOut, "error: %s\n", err)
	f := errorFinding(file, err)
	acc.all = append(acc.all, f)
	acc.results = append(acc.results, render.NewFileResult(file, from, nil))
	acc.results[len(acc.results)-1].Summary.Errors = 1
	acc.failed++
}

// maxSkippedNamed is how many skipped files an error names.
const maxSkippedNamed = 3

// skippedList is " (skipped: FILE: REASON; ...)" for the first skipped
// files, "" for none.
func skippedList(skipped []render.SkippedFile) string {
	if len(skipped) == 0 {
		return ""
	}
	var parts []string
	for i, s := range skipped {
		if i == maxSkippedNamed {
			parts = append(parts, fmt.Sprintf("and %d more (-o json lists them)", len(skipped)-i))
			break
		}
		parts = append(parts, s.File+": "+s.Reason)
	}
	return " (skipped " + strings.Join(parts, "; ") + ")"
}
