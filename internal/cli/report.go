package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/diag"
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
table comes first, sortable by every column (node, verdict, bandwidth,
nccl-multi, GPUs, driver, regressions), with each node's
nccl-multi outcome (verdict, busbw, partners) and its regressions since its
previous record (how many, the first; the node's section lists them all).

Records written before gpuctl recorded nccl.rows and topology still show, without
the curve and the grid. With --key every record is verified as 'gpuctl verify'
does (signature, payload, subject); without it the records are read unverified
and the page says so. Each record is marked with its trust: "verified" (with
the key's ID), "signed, not verified" (no --key, or the key did not verify it)
or "unsigned"; only a verified record's verdict has the verdict's colour, any
other says "PASS — not verified" or "PASS — unsigned" on a hatched badge. A
record whose stated verdict is not the one its stages give is flagged. A
RECORD that is a folder stands for the record files below it (NODE/RUN-ID/
record.dsse.json, statement.intoto.json, record.offline.dsse.json; at most
` + fmt.Sprint(maxReportRecords) + ` records, ` + fmt.Sprint(maxReportDepth) + ` folders deep, links not followed). The page goes to
--out FILE (written whole or not at all; a line on stderr names the file
and how many records it shows), or to stdout when that is not a
terminal. Without --key a record whose subject does not name its predicate's
node is flagged on the page and on stderr. A record that is not an acceptance
record, or whose JSON decoders would read differently (a member twice, names
that differ only in case, data after the value), is shown as refused and named
on stderr.

Exit 0 when the page was written (whatever the records' verdicts), 2 for a
record file that cannot be read (missing, not a regular file, larger than
` + fmt.Sprint(record.MaxRecordBytes>>20) + ` MiB), a folder with no record file, or when every file was refused (the
page is still written and names them), 3 when --key is given and a record
does not verify (the page is written and shows what failed).

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
		if st, err := os.Stat(filepath.Dir(o.out)); err != nil || !st.IsDir() {
			return usageErrorf("--out %s: folder %s does not exist; create it first", o.out, filepath.Dir(o.out))
		}
	}
	files, closeFolders, err := recordFiles(ctx, paths)
	if err != nil {
		return err
	}
	defer closeFolders()
	rep, err := buildReport(ctx, files, verifier)
	if err != nil {
		return err
	}
	if err := o.writePage(ctx, rep); err != nil {
		return err
	}
	if o.out != "" {
		fmt.Fprintln(o.streams.ErrOut, wroteReportLine(o.out, rep))
	}
	return o.warn(rep)
}

// wroteReportLine says on stderr what --out received: "wrote report.html:
// 3 records (1 refused)".
func wroteReportLine(path string, rep *report.Report) string {
	line := fmt.Sprintf("wrote %s: %d record", path, len(rep.Nodes))
	if len(rep.Nodes) != 1 {
		line += "s"
	}
	if rep.Refused > 0 {
		line += fmt.Sprintf(" (%d refused)", rep.Refused)
	}
	return line
}

// verifier is the public key of --key as a verifier; nil without --key
// (records are read unverified).
func (o *reportOptions) verifier(ctx context.Context) (dsse.Verifier, error) {
	if o.key == "" {
		return nil, nil
	}
	return loadPublicKey(ctx, o.key, "report")
}

// buildReport reads the record files (regular files of at most
// record.MaxRecordBytes, safefs) and builds the report; a file that cannot
// be read is bad input (exit 2), a record that is not one is shown as
// refused. ctx is checked before each file.
func buildReport(ctx context.Context, files []recordFile, verifier dsse.Verifier) (*report.Report, error) {
	inputs := make([]report.Input, 0, len(files))
	for _, f := range files {
		data, err := readContext(ctx, f.read)
		if err != nil {
			return nil, readError("reading record", err)
		}
		inputs = append(inputs, report.Input{Path: f.path, Data: data})
	}
	rep, err := report.Build(ctx, inputs, verifier)
	if errors.Is(err, record.ErrRecordFormat) {
		return nil, withCode(ExitUsage, err) // bad data, not a wrong use: no --help hint
	}
	return rep, err
}

// writePage writes the page to --out (whole or not at all), else stdout.
// The page is rendered whole before anything is written; a cancel while it
// renders stops it (the writer returns ctx's error) and writes nothing.
func (o *reportOptions) writePage(ctx context.Context, rep *report.Report) error {
	var page bytes.Buffer
	if err := render.ReportHTML(ctxWriter{ctx, &page}, rep, o.title); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if err := ctx.Err(); err != nil {
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

// warn says on stderr what the page flags: refused records, records whose
// subject names another node (without --key), records whose verdict and
// stages disagree, and records that did not verify with --key, which exit
// 3; when every record was refused, exit 2.
func (o *reportOptions) warn(rep *report.Report) error {
	for _, n := range rep.Nodes {
		switch {
		case n.Refused:
			fmt.Fprintf(o.streams.ErrOut, "REFUSED: %s: %s\n", n.Record, diag.OneLine(strings.Join(n.Problems, "; ")))
		case !n.HasPredicate:
			fmt.Fprintf(o.streams.ErrOut, "NOT verified: %s: %s\n", n.Record, diag.OneLine(strings.Join(n.Problems, "; ")))
		case !rep.KeyChecked:
			for _, pr := range n.Problems {
				fmt.Fprintf(o.streams.ErrOut, "warning: %s: %s\n", n.Record, diag.OneLine(pr))
			}
		}
		if n.Disagreement != "" {
			fmt.Fprintf(o.streams.ErrOut, "warning: %s: %s\n", n.Record, diag.OneLine(n.Disagreement))
		}
	}
	refused := 0
	for _, n := range rep.Nodes {
		if n.Refused {
			refused++
		}
	}
	switch {
	case refused == len(rep.Nodes):
		return silentExit(ExitUsage) // nothing on the page is a record
	case rep.Unverified > 0:
		return silentExit(ExitCheckFailed)
	}
	return nil
}

// ctxWriter is w that fails with ctx's error once ctx is done, so that a
// long render stops at its next write.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
