package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/probe"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// preflightOptions are the flags of `gpuctl preflight` and the ways it
// reaches the machine (tests replace them).
type preflightOptions struct {
	streams *IOStreams
	f       *Factory
	out     *outputFlag

	gpus               int
	product            string
	driver             string
	driverMin          string
	link               string
	specFile           string
	env, pool          string
	baselines          string
	cudaSample         string
	fromDir            string
	evidenceDir        string
	toolTimeout        time.Duration
	continueAfterFail  bool
	quiet              bool
	tools              preflightTools
	exp                accept.Expectations
	bl                 *accept.Baselines
	visible            accept.VisibleDevices
	visibleFromRuntime bool
}

// preflightTools is how a live preflight reads the machine: the NVML
// prober, PATH, the environment and the tools it runs.
type preflightTools struct {
	newProber func() (probe.Prober, error)
	lookPath  func(string) (string, error)
	lookupEnv func(string) (string, bool)
	// run runs name with args (and env added to gpuctl's) and returns
	// its stdout and stderr together, at most probe.MaxInputBytes, and its
	// exit code; err when it could not be started or was stopped.
	run func(ctx context.Context, env []string, name string, args ...string) ([]byte, int, error)
}

func systemPreflightTools() preflightTools {
	return preflightTools{newProber: probe.NewSystemProber, lookPath: execLookPath, lookupEnv: os.LookupEnv, run: runTool}
}

func newPreflightCommand(streams *IOStreams, f *Factory) *cobra.Command {
	return newPreflightCommandWith(streams, f, systemPreflightTools())
}

func newPreflightCommandWith(streams *IOStreams, f *Factory, tools preflightTools) *cobra.Command {
	o := &preflightOptions{streams: streams, f: f, tools: tools}
	cmd := &cobra.Command{
		Use:   "preflight",
		Short: "Check this pod's GPUs before a job starts (an init container)",
		Long: `Preflight runs accept's quick node-local stages on the machine it runs on, for an
init container in a job's own pod: no Kubernetes API access, no RBAC, no privilege.

  inventory  NVML (a gpuctl built with -tags nvml), else nvidia-smi -q -x and
             nvidia-smi nvlink -s from PATH: GPU count and model, driver, ECC, retired
             pages, row remapping, NVLink, MIG off
  topology   nvidia-smi topo -m: the GPU link class between every GPU pair
  cuda       the CUDA vectorAdd sample once on every GPU (vectorAdd on PATH, or
             --cuda-sample PATH; the Containerfile's image has it); SKIPPED,
             saying so, when there is none

Each stage is judged by the parsers, judges and thresholds accept uses, against
--gpus, --product, --driver (exact or a prefix), --driver-min and --link, and/or
--spec FILE [--env] [--pool] as accept reads them. Only the GPUs the pod was given
are checked (when tools run; --from-dir judges its outputs as saved): a list of
GPUs in NVIDIA_VISIBLE_DEVICES sets the GPU count expected
(unless --gpus), and GPUs listed by UUID are the only ones NVML's report keeps;
"none" or "void" there is INCONCLUSIVE.

--from-dir DIR judges saved outputs instead of running tools: nvidia-smi-q.xml (or
nvidia-smi-q.txt, or nvml.json from gpuctl probe nvml -o json), nvidia-smi-nvlink.txt
(optional), topo.txt, and vectoradd-0.txt, vectoradd-1.txt, ... (or vectoradd.txt,
the run on GPU 0).

A stage that FAILs skips the rest (--continue runs them). A short summary goes to
stderr (-q: none); -o json prints one document with each stage's verdict, reason
and findings. Preflight is a gate, not a record: it signs nothing (gpuctl accept
does). --evidence-dir DIR keeps what it read there, named as --from-dir reads it,
with preflight.json (the -o json document): a folder the job's containers share
(an emptyDir) keeps the outputs the verdict was made from. FAIL exits 3 and
INCONCLUSIVE 4: as an init container, any exit but 0 keeps the job's containers
from starting on the node.

` + ExitCodeHelp + `
  preflight exits 0 PASS, 3 FAIL, 4 INCONCLUSIVE (SKIPPED stages do not count).`,
		Example: `  # on a node, or in a container given all 8 GPUs of an H100 node
  gpuctl preflight --gpus 8 --product "H100 80GB HBM3" --driver-min 550 --link NV18

  # as an init container of a job's pod (gpuctl generate writes this per pool
  # of spec.acceptance.preflight: manifests/<env>/workload/<pool>-preflight.yaml);
  # it asks for the GPUs the training container has, which the pod then holds once
  initContainers:
  - name: gpuctl-preflight
    image: registry.example.com/platform/gpuctl:v0.1.0
    command: [/usr/local/bin/gpuctl]
    args: [preflight, --gpus, "8", --product, NVIDIA H100 80GB HBM3, --evidence-dir, /var/lib/gpuctl/preflight]
    resources: {limits: {nvidia.com/gpu: "8"}}

  # against the spec's pool
  gpuctl preflight --spec /etc/gpuctl/cluster.yaml --env prod --pool train-h100

  # judge saved outputs
  gpuctl preflight --from-dir ./node-outputs -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.gpus, "gpus", 0, "GPUs the pod must see (default: NVIDIA_VISIBLE_DEVICES's list, else the spec pool's)")
	fl.StringVar(&o.product, "product", "", "GPU product every GPU must be (nvidia-smi's name, e.g. \"H100 80GB HBM3\")")
	fl.StringVar(&o.driver, "driver", "", "driver every GPU must run, exact (550.90.07) or a prefix of whole components (550)")
	fl.StringVar(&o.driverMin, "driver-min", "", "oldest driver accepted (e.g. 550 or 550.54.15)")
	fl.StringVar(&o.link, "link", "", "GPU link class every GPU pair must have in topo -m (e.g. NV18; default the SKU's baseline)")
	fl.StringVar(&o.specFile, "spec", "", "cluster spec with the node pool's expectations")
	fl.StringVar(&o.env, "env", "", "environment of the spec")
	fl.StringVar(&o.pool, "pool", "", "node pool of the spec (needed when it has several)")
	fl.StringVar(&o.baselines, "baselines", "", "baselines file replacing the shipped ones (their GPU link classes)")
	fl.StringVar(&o.cudaSample, "cuda-sample", "", "the CUDA vectorAdd binary (default vectorAdd on PATH)")
	fl.StringVar(&o.fromDir, "from-dir", "", "judge the saved outputs in DIR instead of running tools")
	fl.StringVar(&o.evidenceDir, "evidence-dir", "", "keep the outputs read and preflight.json in DIR (created)")
	fl.BoolVar(&o.continueAfterFail, "continue", false, "run the stages after one that FAILs")
	fl.DurationVar(&o.toolTimeout, "tool-timeout", 2*time.Minute, "time limit of each tool run")
	fl.BoolVarP(&o.quiet, "quiet", "q", false, "no summary on stderr")
	o.out = addOutputFlag(cmd, "text", "text", "json")
	return cmd
}

// linkClass is a GPU link class of nvidia-smi topo -m's legend.
var linkClass = regexp.MustCompile(`^(NV[0-9]{1,3}|SYS|NODE|PHB|PXB|PIX)$`)

// complete checks the flags and resolves the expectations and baselines.
func (o *preflightOptions) complete() error {
	if err := o.out.validate(); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	o.bl = accept.DefaultBaselines()
	if o.baselines != "" {
		bl, err := accept.LoadBaselines(o.baselines)
		if err != nil {
			return usageErrorf("%v", err)
		}
		o.bl = bl
	}
	if o.link != "" {
		o.bl = o.bl.WithGPULink(o.link, "--link "+o.link)
	}
	if o.fromDir == "" {
		v, set := o.tools.lookupEnv("NVIDIA_VISIBLE_DEVICES")
		o.visible, o.visibleFromRuntime = accept.ParseVisibleDevices(v, set), set
	}
	return o.completeExpectations()
}

// validate checks the flags' values, then how they combine.
func (o *preflightOptions) validate() error {
	switch {
	case o.gpus < 0:
		return usageErrorf("--gpus %d: the number of GPUs must be positive", o.gpus)
	case o.link != "" && !linkClass.MatchString(o.link):
		return usageErrorf("--link %q: want a topo -m link class (NV18, NV12, SYS, NODE, PHB, PXB, PIX)", o.link)
	case o.driverMin != "" && !driverVersionForm.MatchString(o.driverMin):
		return usageErrorf("--driver-min %q: want a driver version such as 550 or 550.54.15", o.driverMin)
	case o.driver != "" && !driverVersionForm.MatchString(o.driver):
		return usageErrorf("--driver %q: want a driver version such as 550 or 550.54.15", o.driver)
	case o.toolTimeout <= 0:
		return usageErrorf("--tool-timeout must be positive")
	}
	return o.validateCombination()
}

// validateCombination refuses flags that do not go together.
func (o *preflightOptions) validateCombination() error {
	switch {
	case o.specFile == "" && (o.env != "" || o.pool != ""):
		return usageErrorf("--env and --pool need --spec")
	case o.fromDir != "" && o.cudaSample != "":
		return usageErrorf("--from-dir judges saved outputs and runs nothing: --cuda-sample is for a live run")
	case o.fromDir != "" && o.evidenceDir != "":
		return usageErrorf("--from-dir judges saved outputs: they are the evidence already (--evidence-dir is for a live run)")
	}
	return nil
}

// driverVersionForm is a driver version: dotted numbers.
var driverVersionForm = regexp.MustCompile(`^[0-9]{1,4}(\.[0-9]{1,4}){0,2}$`)

// completeExpectations reads --spec's pool, then lets the flags and the
// pod's GPU list override what it says.
func (o *preflightOptions) completeExpectations() error {
	var sources []string
	if o.specFile != "" {
		doc, err := spec.Load(o.specFile, o.streams.In)
		if err != nil {
			return withCode(ExitUsage, err)
		}
		if o.exp, err = accept.SpecExpectations(doc, o.env, o.pool, o.f.Catalogue); err != nil {
			return usageErrorf("%v", err)
		}
		sources = append(sources, o.exp.Source)
	}
	var flags []string
	set := func(name string, ok bool) {
		if ok {
			flags = append(flags, "--"+name)
		}
	}
	set("gpus", o.gpus > 0)
	set("product", o.product != "")
	set("driver", o.driver != "")
	set("driver-min", o.driverMin != "")
	if o.gpus > 0 {
		o.exp.GPUCount = o.gpus
	}
	if o.product != "" {
		o.exp.GPUProduct = o.product
	}
	if o.driver != "" {
		o.exp.DriverVersion = o.driver
	}
	o.exp.DriverMin = o.driverMin
	if len(flags) > 0 {
		sources = append(sources, "flags "+strings.Join(flags, ", "))
	}
	if n := len(o.visible.IDs); n > 0 && o.gpus == 0 {
		o.exp.GPUCount = n
		sources = append(sources, fmt.Sprintf("NVIDIA_VISIBLE_DEVICES (%d GPUs)", n))
	}
	o.exp.Source = strings.Join(sources, "; ")
	if o.exp.Source == "" {
		o.exp.Source = "none given"
	}
	return nil
}

// run judges the stages, prints the summary and the report, keeps the
// evidence, and exits by the verdict.
func (o *preflightOptions) run(ctx context.Context) error {
	src, done, err := o.source()
	if err != nil {
		return err
	}
	defer done()
	pf := accept.NewPreflight(o.exp, o.bl, o.f.Parser)
	kept := map[string][]byte{}
	if o.visible.None {
		for _, st := range accept.PreflightStages {
			pf.Judge(st, accept.StageOutput{Harness: fmt.Sprintf("the container was given no GPU (NVIDIA_VISIBLE_DEVICES=%q)", o.visible.Value)})
		}
	} else if err := judgePreflight(ctx, pf, src, o.continueAfterFail, kept); err != nil {
		return err
	}
	rep := pf.Report()
	if !o.quiet {
		writePreflightSummary(o.streams, rep)
	}
	if o.out.value == render.FormatJSON {
		if err := render.JSON(o.streams.Out, rep); err != nil {
			return err
		}
	}
	if o.evidenceDir != "" {
		if err := writePreflightEvidence(o.evidenceDir, rep, kept); err != nil {
			return err
		}
	}
	return silentExit(stageVerdictExitCode(rep.Verdict))
}

// source is where the outputs come from: --from-dir's folder, else this
// machine's tools; done releases it.
func (o *preflightOptions) source() (preflightSource, func(), error) {
	if o.fromDir == "" {
		return &liveSource{o: o}, func() {}, nil
	}
	d, err := openDirSource(o.fromDir)
	if err != nil {
		return nil, nil, usageErrorf("--from-dir: %v", err)
	}
	return d, d.close, nil
}

// judgePreflight gathers and judges each stage in order; the CUDA sample
// runs on as many GPUs as the inventory read. A FAIL skips the stages
// after it unless cont. Every log read goes into kept under its
// --from-dir file name.
func judgePreflight(ctx context.Context, pf *accept.Preflight, src preflightSource, cont bool, kept map[string][]byte) error {
	stop := ""
	for _, st := range accept.PreflightStages {
		if err := ctx.Err(); err != nil {
			return err
		}
		if stop != "" {
			pf.Skip(st, stop)
			continue
		}
		out, skip := src.stage(ctx, st, pf.GPUs())
		if skip != "" {
			pf.Skip(st, skip)
			continue
		}
		for c, log := range out.Logs {
			kept[evidenceFile(c)] = log
		}
		if r := pf.Judge(st, out); r.Verdict == diag.Fail && !cont {
			stop = fmt.Sprintf("stage %s FAILED (use --continue to run the rest)", st)
		}
	}
	return nil
}

// writePreflightEvidence writes the logs kept and preflight.json (the -o
// json document) into dir, creating it.
func writePreflightEvidence(dir string, rep accept.PreflightReport, kept map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--evidence-dir: %w", err)
	}
	var doc bytes.Buffer
	if err := render.JSON(&doc, rep); err != nil {
		return err
	}
	kept[preflightReportFile] = doc.Bytes()
	for _, name := range slices.Sorted(maps.Keys(kept)) {
		if err := writeFileAtomic(filepath.Join(dir, name), kept[name], 0o644); err != nil {
			return fmt.Errorf("--evidence-dir: %w", err)
		}
	}
	return nil
}

// preflightReportFile is the -o json document's name in --evidence-dir.
const preflightReportFile = "preflight.json"

// stageVerdictExitCode maps a run verdict to the exit-code table.
func stageVerdictExitCode(v diag.Verdict) int {
	switch v {
	case diag.Pass:
		return ExitOK
	case diag.Fail:
		return ExitCheckFailed
	}
	return ExitInconclusive
}

// writePreflightSummary writes the verdict and one line per stage.
func writePreflightSummary(s *IOStreams, rep accept.PreflightReport) {
	fmt.Fprintf(s.ErrOut, "preflight %s (expectations: %s)\n", rep.Verdict, rep.Expectations.Source)
	for _, r := range rep.Stages {
		fmt.Fprintf(s.ErrOut, "  %-10s %-12s %s\n", r.Name, r.Verdict, r.Reason)
	}
}

// errToolMissing: a tool preflight runs is not on PATH.
var errToolMissing = errors.New("not found on PATH")
