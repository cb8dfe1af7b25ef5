package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/accept"
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
	var verifier dsse.Verifier // nil: read unverified
	if o.key != "" {
		pemBytes, err := readContext(ctx, func() ([]byte, error) { return readLimited(o.key, maxKeyBytes) })
		if err != nil {
			return readError("reading key", err)
		}
		if isPrivateKeyPEM(pemBytes) {
			return usageErrorf("--key %s is a private key; report takes the public key (PREFIX.pub from gpuctl keygen)", o.key)
		}
		v, err := record.LoadSignerVerifier(pemBytes)
		if err != nil {
			return usageErrorf("%s: %v", o.key, err)
		}
		verifier = v
	}
	if o.out != "" {
		if st, err := os.Stat(o.out); err == nil && st.IsDir() {
			return usageErrorf("--out %s is a folder; name the HTML file to write", o.out)
		}
	}
	inputs := make([]report.Input, 0, len(paths))
	for _, p := range paths {
		data, err := readContext(ctx, func() ([]byte, error) { return readLimited(p, record.MaxRecordBytes) })
		if err != nil {
			return readError("reading record", err)
		}
		inputs = append(inputs, report.Input{Path: p, Data: data})
	}
	rep, err := report.Build(ctx, inputs, verifier)
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, record.ErrRecordFormat):
		return withCode(ExitUsage, err) // bad data, not a wrong use: no --help hint
	case err != nil:
		return err
	}
	var page bytes.Buffer
	if err := render.ReportHTML(&page, reportView(rep, o.title)); err != nil {
		return err
	}
	if o.out == "" {
		if _, err := o.streams.Out.Write(page.Bytes()); err != nil {
			return err
		}
	} else if err := writeFileAtomic(o.out, page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", o.out, err)
	}
	if rep.Mismatched > 0 {
		for _, n := range rep.Nodes {
			for _, pr := range n.Problems {
				fmt.Fprintf(o.streams.ErrOut, "warning: %s: %s\n", n.Record, pr)
			}
		}
	}
	if rep.Unverified > 0 {
		for _, n := range rep.Nodes {
			if !n.HasPredicate {
				fmt.Fprintf(o.streams.ErrOut, "NOT verified: %s: %s\n", n.Record, strings.Join(n.Problems, "; "))
			}
		}
		return silentExit(ExitCheckFailed)
	}
	return nil
}

// reportView is the page of a report.
func reportView(r *report.Report, title string) render.ReportPage {
	p := render.ReportPage{Title: title, KeyChecked: r.KeyChecked}
	if p.Title == "" {
		p.Title = "gpuctl acceptance report"
		switch {
		case len(r.Nodes) == 1 && r.Nodes[0].Name != "":
			p.Title += ": " + r.Nodes[0].Name
		case len(r.Nodes) > 1:
			p.Title += fmt.Sprintf(": %d records", len(r.Nodes))
		}
	}
	if len(r.Nodes) > 1 {
		f := &render.ReportFleet{Unverified: r.Unverified}
		for _, v := range []diag.Verdict{diag.Pass, diag.Fail, diag.Inconclusive} {
			if n := r.Fleet[v]; n > 0 {
				f.Counts = append(f.Counts, render.ReportCount{Verdict: v, N: n})
			}
		}
		p.Fleet = f
	}
	for i, n := range r.Nodes {
		p.Nodes = append(p.Nodes, reportNodeView(i, n))
	}
	return p
}

func reportNodeView(i int, n report.Node) render.ReportNode {
	v := render.ReportNode{ID: "node-" + strconv.Itoa(i+1), Record: n.Record, Verified: n.Verified, Problems: n.Problems, KeyID: n.KeyID,
		HasPredicate: n.HasPredicate, Name: n.Name, RunID: n.RunID, Verdict: n.Verdict, FirstProblem: n.FirstProblem,
		NodeFindings: n.NodeFindings, Regressions: n.Regressions}
	if !n.HasPredicate {
		return v
	}
	fact := func(label, value string) {
		if value != "" {
			v.Facts = append(v.Facts, render.ReportFact{Label: label, Value: value})
		}
	}
	fact("run", n.RunID)
	if !n.Started.IsZero() {
		fact("started", n.Started.UTC().Format(time.RFC3339))
	}
	if n.Duration > 0 {
		fact("took", n.Duration.Round(time.Second).String())
	}
	if n.Rejudged {
		fact("re-judged", "offline, from saved evidence")
	}
	fact("pool", n.Pool)
	fact("instance type", n.InstanceType)
	if n.GPUCount > 0 {
		fact("GPUs", fmt.Sprintf("%d x %s", n.GPUCount, n.GPUProduct))
	}
	fact("driver", n.Driver)
	fact("CUDA (driver)", n.CUDA)
	fact("previous record", n.Previous)
	fact("gpuctl", n.Gpuctl)
	for _, s := range n.Stages {
		rs := render.ReportStage{Name: s.Name, Verdict: s.Verdict, Cause: s.Cause, Reason: s.Reason}
		if s.Duration > 0 {
			rs.Duration = s.Duration.Round(time.Second).String()
		}
		for _, e := range s.Evidence {
			rs.Evidence = append(rs.Evidence, render.ReportEvidence{Name: e.Name, Bytes: e.Bytes, SHA256: e.SHA256})
		}
		v.Stages = append(v.Stages, rs)
	}
	for _, g := range n.GPUs {
		v.GPUs = append(v.GPUs, render.ReportGPU{Index: g.Index, BusID: g.BusID, UUID: g.UUID, Serial: g.Serial, VBIOS: g.VBIOS,
			InfoROM: g.InfoROM, Worst: g.Worst, Findings: g.Findings})
	}
	if c := n.NCCL; c != nil {
		rn := &render.ReportNCCL{Verdict: c.Verdict, BusbwGBps: c.BusBandwidthGBps, LargestBytes: c.LargestBytes, RowsRecorded: c.RowsRecorded}
		for _, pt := range c.Points {
			rn.Points = append(rn.Points, render.ReportPoint{SizeBytes: pt.SizeBytes, BusbwGBps: pt.BusbwGBps,
				OutOfPlace: halfView(pt.OutOfPlace), InPlace: halfView(pt.InPlace)})
		}
		if b := c.Baseline; b != nil {
			rn.Baseline = &render.ReportBaseline{SKU: b.SKU, MinGBps: b.MinGBps, MinAlgo: b.MinAlgo, ExpectedGBps: b.ExpectedGBps,
				ExpectedAlgo: b.ExpectedAlgo, MinBytes: b.MinBytes, Origin: b.Origin, Sources: b.Sources}
		}
		v.NCCL = rn
	}
	if t := n.Topology; t != nil {
		rt := &render.ReportTopology{Devices: t.Devices}
		for _, d := range t.Devices {
			if name := t.NICNames[d]; name != "" {
				d += " (" + name + ")"
			}
			rt.Labels = append(rt.Labels, d)
		}
		for _, row := range t.Cells {
			var cells []render.ReportCell
			for _, c := range row {
				cells = append(cells, render.ReportCell{Link: c.Link, Class: string(c.Class)})
			}
			rt.Rows = append(rt.Rows, cells)
		}
		v.Topology = rt
	}
	return v
}

func halfView(m *accept.NCCLMeasurement) *render.ReportHalf {
	if m == nil {
		return nil
	}
	h := &render.ReportHalf{TimeUs: m.TimeUs, AlgbwGBps: m.AlgbwGBps, BusbwGBps: m.BusBandwidthGBps}
	if m.Wrong != nil {
		h.Wrong = strconv.FormatFloat(*m.Wrong, 'f', -1, 64)
	}
	return h
}
