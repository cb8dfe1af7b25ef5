package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/report"
)

type reportOptions struct {
	streams *IOStreams
	key     string
	out     string
	title   string
}

func newReportCommand(streams *IOStreams) *cobra.Command {
	o := &reportOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "report RECORD... [--out report.html]",
		Short: "Write an HTML page of acceptance records: verdicts, GPU health, NCCL curve, topology",
		Long: `Write one self-contained HTML page (inline CSS and SVG, a few lines of script
to sort tables; it loads nothing from the network) for one or many acceptance
records of 'gpuctl accept' (record.dsse.json, or the unsigned
statement.intoto.json): per node the verdict of the run and of each stage, the
GPUs and their health findings, the NCCL bus bandwidth against message size
(log scale; one point per size in the record) with the baseline's minimum and
expected figures drawn in, the nvidia-smi topo -m matrix as a coloured grid, and
the evidence files with their sizes and sha256. With several records a fleet
table comes first, sortable by node, verdict and bandwidth.

Records written before gpuctl recorded nccl.rows and topology still show, without
the curve and the grid. With --key every record is verified as 'gpuctl verify'
does (signature, payload, subject); without it the records are read unverified
and the page says so. The page goes to --out FILE (written whole or not at all), or
to stdout when that is not a terminal. Without --key a record whose subject
does not name its predicate's node is flagged on the page and on stderr.

Exit 0 when the page was written (whatever the records' verdicts), 2 for a
record that cannot be read or is not an acceptance record, 3 when --key is given
and a record does not verify (the page is written and shows what failed).

` + ExitCodeHelp,
		Example: `  gpuctl report gpuctl-evidence/gpu-node-1/20261129t154400-a1b2/record.dsse.json --out report.html
  gpuctl report gpuctl-evidence/*/*/record.dsse.json --key accept.pub --out fleet.html
  gpuctl report record.dsse.json > report.html`,
		Args: minimumArgs(1, "at least one RECORD file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args)
		},
	}
	cmd.Flags().StringVar(&o.key, "key", "", "public key (PEM) of the signer: verify every record (default: read unverified)")
	cmd.Flags().StringVar(&o.out, "out", "", "write the page to this file (default: stdout)")
	cmd.Flags().StringVar(&o.title, "title", "", "the page's title (default: \"gpuctl acceptance report\" and the node or node count)")
	return cmd
}

func (o *reportOptions) run(ctx context.Context, paths []string) error {
	if o.out == "" && o.streams.OutTTY {
		return usageErrorf("report writes an HTML page; name the file with --out FILE, or redirect stdout (> report.html)")
	}
	verifier, err := o.verifier(ctx)
	if err != nil {
		return err
	}
	if o.out != "" {
		if st, err := os.Stat(o.out); err == nil && st.IsDir() {
			return usageErrorf("--out %s is a folder; name the HTML file to write", o.out)
		}
	}
	rep, err := buildReport(ctx, paths, verifier)
	if err != nil {
		return err
	}
	if err := o.writePage(rep); err != nil {
		return err
	}
	return o.warn(rep)
}

// verifier is the public key of --key as a verifier; nil without --key
// (records are read unverified).
func (o *reportOptions) verifier(ctx context.Context) (dsse.Verifier, error) {
	if o.key == "" {
		return nil, nil
	}
	return loadPublicKey(ctx, o.key, "report")
}

// buildReport reads the record files (each at most record.MaxRecordBytes)
// and builds the report; a record that is not one is bad input (exit 2).
func buildReport(ctx context.Context, paths []string, verifier dsse.Verifier) (*report.Report, error) {
	inputs := make([]report.Input, 0, len(paths))
	for _, p := range paths {
		data, err := readContext(ctx, func() ([]byte, error) { return readLimited(p, record.MaxRecordBytes) })
		if err != nil {
			return nil, readError("reading record", err)
		}
		inputs = append(inputs, report.Input{Path: p, Data: data})
	}
	rep, err := report.Build(ctx, inputs, verifier)
	switch {
	case errors.Is(err, context.Canceled):
		return nil, err
	case errors.Is(err, record.ErrRecordFormat):
		return nil, withCode(ExitUsage, err) // bad data, not a wrong use: no --help hint
	}
	return rep, err
}

// writePage writes the page to --out (whole or not at all), else stdout.
func (o *reportOptions) writePage(rep *report.Report) error {
	var page bytes.Buffer
	if err := render.ReportHTML(&page, rep, o.title); err != nil {
		return err
	}
	if o.out == "" {
		_, err := o.streams.Out.Write(page.Bytes())
		return err
	}
	if err := writeFileAtomic(o.out, page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", o.out, err)
	}
	return nil
}

// warn says on stderr what the page flags: records whose subject names
// another node (without --key) and records that did not verify, which
// exit 3.
func (o *reportOptions) warn(rep *report.Report) error {
	if rep.Mismatched > 0 {
		for _, n := range rep.Nodes {
			for _, pr := range n.Problems {
				fmt.Fprintf(o.streams.ErrOut, "warning: %s: %s\n", n.Record, pr)
			}
		}
	}
	if rep.Unverified == 0 {
		return nil
	}
	for _, n := range rep.Nodes {
		if !n.HasPredicate {
			fmt.Fprintf(o.streams.ErrOut, "NOT verified: %s: %s\n", n.Record, strings.Join(n.Problems, "; "))
		}
	}
	return silentExit(ExitCheckFailed)
}
