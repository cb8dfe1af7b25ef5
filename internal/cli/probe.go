package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/probe"
)

// probeOptions are the flags of `gpuctl probe nvml`.
type probeOptions struct {
	streams *IOStreams
	output  *outputFlag
	// NewProber builds the NVML prober; tests replace it.
	NewProber func() (probe.Prober, error)
}

func newProbeCommand(streams *IOStreams) *cobra.Command {
	return newProbeCommandWith(streams, probe.NewSystemProber)
}

func newProbeCommandWith(streams *IOStreams, newProber func() (probe.Prober, error)) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Read this node's GPUs directly",
		Long: `Probe reads the GPUs of the machine it runs on.

` + ExitCodeHelp,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	o := &probeOptions{streams: streams, NewProber: newProber}
	nvmlCmd := &cobra.Command{
		Use:   "nvml",
		Short: "Read the GPUs through NVML and judge them",
		Long: `Probe nvml reads every GPU through NVML (libnvidia-ml.so, part of the NVIDIA
driver): identity, memory, ECC counters, retired pages, remapped rows, PCIe
link, NVLinks, temperature, power, clock event reasons and MIG mode. Fields
NVML does not support on a GPU are left unknown, which is not a failure.

It needs a gpuctl built with cgo and the nvml build tag
(CGO_ENABLED=1 go build -tags nvml ./cmd/gpuctl); other builds, and machines
without the NVIDIA driver, exit 4 with a message saying so.

` + ExitCodeHelp + `
  probe nvml exits 0 for ok, 3 for fail, 4 for unknown or no NVML.`,
		Example: `  # On a GPU node
  gpuctl probe nvml -o json | jq '.gpus[] | {busId, rowRemapPending}'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.output.validate(); err != nil {
				return err
			}
			return o.Run(cmd)
		},
	}
	o.output = addViewFlag(nvmlCmd, probeFormats)
	cmd.AddCommand(nvmlCmd)
	return cmd
}

// Run probes and prints the report.
func (o *probeOptions) Run(cmd *cobra.Command) error {
	p, err := o.NewProber()
	if err != nil {
		return withCode(ExitInconclusive, err)
	}
	rep, err := p.Probe(cmd.Context())
	switch {
	case errors.Is(err, probe.ErrNVMLUnavailable), errors.Is(err, probe.ErrNVMLNotCompiled):
		return withCode(ExitInconclusive, fmt.Errorf("%w (is this a GPU node with the NVIDIA driver installed?)", err))
	case err != nil:
		return err
	}
	if err := writeOutput(o.streams, o.output, probeFormats, probe.Report(rep)); err != nil {
		return err
	}
	return silentExit(verdictExitCode(rep.Verdict))
}

// probeFormats are the output formats of a probe report (gpuctl probe nvml,
// gpuctl parse): the report itself, its keys the contract, or its tables.
var probeFormats = viewFormats[probe.Report]{tableFormat(writeProbeTable), jsonFormat[probe.Report](), yamlFormat[probe.Report]()}

func writeProbeTable(s *IOStreams, r probe.Report) error {
	return render.ProbeReport(s.Out, render.FormatTable, s.OutTTY, r, probeView(r))
}
