package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
	"github.com/gpuctl/gpuctl/internal/safefs"
)

// parseOptions are the flags and arguments of `gpuctl parse`.
type parseOptions struct {
	streams *IOStreams
	Kind    probe.Kind
	File    string
	output  *outputFlag
}

func newParseCommand(streams *IOStreams) *cobra.Command {
	o := &parseOptions{streams: streams}
	kinds := make([]string, len(probe.ParseKinds))
	for i, k := range probe.ParseKinds {
		kinds[i] = string(k)
	}
	cmd := &cobra.Command{
		Use:   "parse KIND FILE|-",
		Short: "Read a GPU tool's output and judge the node from it",
		Long: `Parse reads what a GPU node printed and says whether it shows a healthy node.

KIND is the tool that printed it:
  nvidia-smi     nvidia-smi -q -x, -q, the default table, --query-gpu CSV, -L,
                 nvlink -s, and its failure messages
  topo           nvidia-smi topo -m
  nccl           nccl-tests (all_reduce_perf and the others; text or -J JSON)
  cuda           CUDA samples deviceQuery and vectorAdd
  dcgm           dcgmi diag (text or -j JSON)
  dmesg          kernel log: dmesg in any timestamp style, journalctl -k,
                 /dev/kmsg lines (GPU XIDs and NVSwitch SXids)
  component-log  a Kubernetes GPU component's log: device plugin, GPU feature
                 discovery, GPU Operator validators, MIG manager,
                 dcgm-exporter, nv-hostengine (klog, logrus or slog text,
                 JSON lines); context only, unless it states a health fact
  rdma-sysfs     the accept network stage's /sys/class/infiniband dump
  ibv-devinfo    ibv_devinfo [-v] (RDMA devices, ports, states, rates)
  rdma-link      iproute2's rdma link [show]
  fi-info        libfabric's fi_info -p efa (EFA domains)
  nvml           gpuctl probe nvml -o json
  framework      gpuctl's PyTorch checks (accept's framework stage): matmul,
                 all-reduce, training, checkpoint, inference
  auto           detect the kind

FILE is a file, or - for standard input. Input over 16 MiB is refused.

The report has a verdict: ok (the output shows a healthy node), fail (it
shows a node problem) or unknown (the output cannot tell: truncated, garbled,
an error of the tool's environment, or a run that exercised nothing of the
GPUs), with findings that say why. Among them:
  not-exercised  the run tested no GPU: dcgmi diag with only its Deployment
                 checks run (every Integration, Hardware and Stress test
                 skipped), nccl-tests without a single result row or that
                 stops below 1 MiB, nvidia-smi output without a GPU block
  mixed-input    the input holds several outputs: a tool's output twice, or
                 the logs of several pods (kubectl logs --prefix)
  duplicate-bus-id  nvidia-smi GPUs that share a PCI bus ID (outputs pasted
                 together)
  nccl-busbw-drop  nccl-tests' bus bandwidth at the largest size is more than
                 2x (unknown) or 4x (fail) below the curve's own peak, sizes of
                 1 MiB and more, out-of-place and in-place apart
  nccl-duplicate-size  nccl-tests result rows after the summary lines (runs
                 pasted together without the second one's parameter line)
'gpuctl explain RULE' gives every finding's long form: what it says, how
gpuctl decides, the fix and its sources (gpuctl explain xid-reset); 'gpuctl
explain' lists them all, with the validation rules.

A component log is not a test of the node: gpuctl takes the health facts the
log states as stated and does not judge the hardware beyond them. A component
that says NVML did not initialise (component-nvml-init-failed), that it marked
a GPU unhealthy (component-gpu-unhealthy) or a GPU Operator validation that
failed for a cause of the GPU stack (component-validation-failed) fails the
log: the GPUs are unusable to Kubernetes there. A fatal exit for another cause
(configuration, API server, permissions) is unknown (component-fatal), and a
log with no health fact stays context only (unknown).

The input may be UTF-16 with a BOM (a Windows PowerShell redirect), have a
UTF-8 BOM, CRLF line ends, ANSI colours, a Markdown fence, kubectl logs
--prefix and --timestamps on every line, and mpirun --tag-output's rank tags:
they are removed before reading.

` + ExitCodeHelp + `
  parse exits 0 for ok, 3 for fail, 4 for unknown or unrecognised input,
  2 when the input cannot be read.`,
		Example: `  # Which GPUs need a reset, from nvidia-smi's XML
  nvidia-smi -q -x > smi.xml && gpuctl parse nvidia-smi smi.xml

  # Detect the kind; JSON for jq
  gpuctl parse auto all_reduce.log -o json | jq '.avgBusbwGBps'

  # From standard input
  dmesg -T | gpuctl parse dmesg -`,
		Args:              exactArgs(2, "a KIND and a FILE (or - for stdin)"),
		ValidArgs:         kinds,
		SilenceUsage:      true,
		DisableAutoGenTag: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.output = addViewFlag(cmd, probeFormats)
	return cmd
}

// Complete fills the options from the arguments.
func (o *parseOptions) Complete(args []string) error {
	o.Kind, o.File = probe.Kind(args[0]), args[1]
	return nil
}

// Validate checks the kind and the output format.
func (o *parseOptions) Validate() error {
	if !slices.Contains(probe.ParseKinds, o.Kind) {
		return usageErrorf("unknown kind %q: want one of %v", o.Kind, probe.ParseKinds)
	}
	if err := o.output.validate(); err != nil {
		return err
	}
	return nil
}

// Run reads the input, parses it, prints the report and exits by verdict.
func (o *parseOptions) Run(ctx context.Context) error {
	data, err := readContext(ctx, o.read)
	if err != nil {
		return err
	}
	rep, err := probe.Parse(o.Kind, data)
	switch {
	case errors.Is(err, probe.ErrUnrecognized):
		return withCode(ExitInconclusive, fmt.Errorf("%s: %w; name the kind instead of auto (gpuctl parse --help lists them)", o.name(), err))
	case errors.Is(err, probe.ErrInputTooLarge):
		return usageErrorf("%s: %v", o.name(), err)
	case err != nil:
		return withCode(ExitUsage, err)
	}
	if err := writeOutput(o.streams, o.output, probeFormats, rep); err != nil {
		return err
	}
	return silentExit(verdictExitCode(rep.Common().Verdict))
}

func (o *parseOptions) name() string {
	if o.File == "-" {
		return "standard input"
	}
	return o.File
}

func (o *parseOptions) read() ([]byte, error) {
	if o.File == "-" {
		data, err := probe.ReadLimited(o.streams.In)
		if err != nil {
			return nil, usageErrorf("reading standard input: %v", err)
		}
		return data, nil
	}
	data, err := safefs.ReadFile(o.File, toolOutput)
	if err != nil {
		return nil, usageErrorf("cannot read %v", err)
	}
	return data, nil
}

// toolOutput is a file of a tool's output that parse reads, under probe's
// cap.
var toolOutput = safefs.Kind{Name: "tool output", Max: probe.MaxInputBytes}

// verdictExitCode maps a verdict to the exit-code table.
func verdictExitCode(v diag.ReportVerdict) int {
	switch v {
	case diag.ReportOK:
		return ExitOK
	case diag.ReportFail:
		return ExitCheckFailed
	}
	return ExitInconclusive
}
