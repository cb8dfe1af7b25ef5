package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/spec"
)

func newMatrixCommand(streams *IOStreams, f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Ask the version matrix what-if questions (GPU, driver, CUDA, machine types)",
		Long: `The version matrix is the set of sourced facts gpuctl validates against: CUDA toolkit
minimum drivers and compatibility, GPU products, driver branches and their end of life, GKE
and EKS machine types, EKS AMIs, GPU Operator and device plugin releases, NCCL settings. Every
answer names its sources and the date the facts were true (as_of).`,
		Example: `  gpuctl matrix check --gpu H100 --driver 535.129.03 --cuda 12.4
  gpuctl matrix cuda 12.4
  gpuctl matrix gpus
  gpuctl matrix machines --provider gke
  gpuctl matrix tables`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newMatrixCheckCommand(streams, f), newMatrixCUDACommand(streams), newMatrixGPUsCommand(streams),
		newMatrixMachinesCommand(streams), newMatrixDriversCommand(streams, f), newMatrixTablesCommand(streams, f),
		newMatrixAMIsCommand(streams))
	for _, sub := range cmd.Commands() {
		honourContext(sub)
	}
	return cmd
}

// honourContext makes cmd stop before it answers when its context is done
// (Ctrl-C, SIGTERM): RunWithFactory turns the error into exit 130 or 143,
// and nothing is printed. The matrix answers from embedded data in
// microseconds, so the check before the answer is the one that matters.
func honourContext(cmd *cobra.Command) {
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if err := c.Context().Err(); err != nil {
			return err
		}
		return run(c, args)
	}
}

// ---- matrix check ----

type matrixCheckOptions struct {
	streams *IOStreams
	query   rules.Query
	strict  bool
	asOf    asOfFlag
	out     *outputFlag
}

func newMatrixCheckCommand(streams *IOStreams, f *Factory) *cobra.Command {
	o := &matrixCheckOptions{streams: streams, asOf: asOfFlag{now: f.Now}}
	cmd := &cobra.Command{
		Use:   "check --gpu GPU --driver VERSION --cuda VERSION",
		Short: "Check whether a GPU, driver and CUDA version work together",
		Long: `Check a GPU / driver / CUDA combination against the same rules "gpuctl validate" applies to a
node pool: minimum drivers, minor-version and forward compatibility, architecture support, driver
branch end of life, MIG and open kernel modules. Every flag is optional; rules that need a missing
one are skipped.

Exits 3 when the combination has an error (with --strict, also a warning), 2 on bad flags.`,
		Example: `  # CUDA 12.4 images on a 535 driver: runs only under minor-version compatibility
  gpuctl matrix check --gpu H100 --driver 535.129.03 --cuda 12.4

  # Forward compatibility on an EOL branch, evaluated at a fixed date
  gpuctl matrix check --gpu H100 --driver 570.211.01 --cuda 13.0 --cuda-compat 13.0 --as-of 2026-11-29

  # Does GH200 load the proprietary kernel modules? (no)
  gpuctl matrix check --gpu GH200 --kernel-modules proprietary -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.query.GPU, "gpu", "", "GPU product or GKE accelerator type (H100, A10G, nvidia-l4, \"NVIDIA H100 80GB HBM3\")")
	fl.StringVar(&o.query.Driver, "driver", "", "exact NVIDIA driver version (535.129.03)")
	fl.StringVar(&o.query.CUDA, "cuda", "", "CUDA toolkit version of the workload images (12.4, 12.2.2)")
	fl.StringVar(&o.query.CUDACompat, "cuda-compat", "", "version of the cuda-compat (forward compatibility) package in use (13.0)")
	fl.StringVar(&o.query.KernelModules, "kernel-modules", "", "kernel modules: open or proprietary")
	fl.StringVar(&o.query.MIGProfile, "mig-profile", "", "MIG profile to check for the GPU (1g.10gb)")
	fl.BoolVar(&o.query.WorkloadPTX, "workload-ptx", false, "the images embed PTX the driver can JIT for newer GPUs")
	fl.BoolVar(&o.strict, "strict", false, "count warnings as errors (exit 3)")
	o.asOf.addFlag(cmd)
	o.out = addViewFlag(cmd, matrixCheckFormats)
	return cmd
}

func (o *matrixCheckOptions) complete() error { return o.asOf.complete() }

func (o *matrixCheckOptions) validate() error {
	if err := o.out.validate(); err != nil {
		return err
	}
	q := o.query
	if q.GPU == "" && q.Driver == "" && q.CUDA == "" && q.CUDACompat == "" {
		return usageErrorf("nothing to check: give at least one of --gpu, --driver, --cuda, --cuda-compat")
	}
	return nil
}

// matrixCheckReport is the JSON form of `matrix check` (a contract: stable
// names, [] never null).
type matrixCheckReport struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	AsOf       string           `json:"asOf"`
	Query      matrixCheckQuery `json:"query"`
	Findings   []diag.Finding   `json:"findings"`
	Summary    diag.Summary     `json:"summary"`
}

type matrixCheckQuery struct {
	GPU           string `json:"gpu,omitempty"`
	GPUProduct    string `json:"gpuProduct,omitempty"`
	Driver        string `json:"driver,omitempty"`
	CUDA          string `json:"cuda,omitempty"`
	CUDACompat    string `json:"cudaCompat,omitempty"`
	KernelModules string `json:"kernelModules,omitempty"`
	MIGProfile    string `json:"migProfile,omitempty"`
	WorkloadPTX   bool   `json:"workloadPTX,omitempty"`
}

func (o *matrixCheckOptions) run(_ context.Context) error {
	fs := rules.Check(o.query, rules.Options{AsOf: o.asOf.t})
	sum := diag.Summarize(fs)
	q := o.query
	rq := matrixCheckQuery{GPU: q.GPU, Driver: q.Driver, CUDA: q.CUDA, CUDACompat: q.CUDACompat,
		KernelModules: q.KernelModules, MIGProfile: q.MIGProfile, WorkloadPTX: q.WorkloadPTX}
	if g, ok := matrix.LookupGPU(q.GPU); ok {
		rq.GPUProduct = g.ID
	}
	r := matrixCheckReport{APIVersion: spec.APIVersion, Kind: "MatrixCheck", AsOf: o.asOf.date(), Query: rq, Findings: fs, Summary: sum}
	if err := writeOutput(o.streams, o.out, matrixCheckFormats, r); err != nil {
		return err
	}
	if checksFailed(sum, o.strict) {
		return silentExit(ExitCheckFailed)
	}
	return nil
}

// matrixCheckFormats are the output formats of `matrix check`.
var matrixCheckFormats = viewFormats[matrixCheckReport]{tableFormat(writeMatrixCheckTable), jsonFormat[matrixCheckReport]()}

// writeMatrixCheckTable writes what was checked, the findings and the
// summary line.
func writeMatrixCheckTable(s *IOStreams, r matrixCheckReport) error {
	w, q, fs := s.Out, r.Query, r.Findings
	var subject []string
	if q.GPU != "" {
		g := q.GPU
		if q.GPUProduct != "" && !strings.EqualFold(q.GPUProduct, q.GPU) {
			g += " (" + q.GPUProduct + ")"
		}
		subject = append(subject, "GPU "+g)
	}
	if q.Driver != "" {
		subject = append(subject, "driver "+q.Driver)
	}
	if q.CUDA != "" {
		subject = append(subject, "CUDA "+q.CUDA)
	}
	if q.CUDACompat != "" {
		subject = append(subject, "cuda-compat "+q.CUDACompat)
	}
	if q.KernelModules != "" {
		subject = append(subject, q.KernelModules+" kernel modules")
	}
	if q.MIGProfile != "" {
		subject = append(subject, "MIG "+q.MIGProfile)
	}
	fmt.Fprintf(w, "%s, as of %s\n\n", strings.Join(subject, ", "), r.AsOf)
	if len(fs) == 0 {
		fmt.Fprintln(w, "OK: no findings.")
	}
	if err := matrixWriteFindings(w, fs); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", matrixSummaryLine(r.Summary))
	return nil
}

// matrixWriteFindings prints findings as "SEVERITY RULE PATH MESSAGE" with
// the fix under each, then the sources.
func matrixWriteFindings(w io.Writer, fs []diag.Finding) error {
	var sources []string
	seen := map[string]bool{}
	for _, f := range fs {
		fmt.Fprintf(w, "%-7s  %s  %s\n", strings.ToUpper(string(f.Severity)), f.Rule, f.Path)
		fmt.Fprintf(w, "         %s\n", f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "         fix: %s\n", f.Fix)
		}
		for _, s := range f.Sources {
			if !seen[s] {
				seen[s] = true
				sources = append(sources, s)
			}
		}
	}
	if len(sources) > 0 {
		fmt.Fprintln(w, "\nSources:")
		for _, s := range sources {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	return nil
}

func matrixSummaryLine(s diag.Summary) string {
	plural := func(n int, word string) string {
		if n == 1 {
			return fmt.Sprintf("1 %s", word)
		}
		return fmt.Sprintf("%d %ss", n, word)
	}
	return fmt.Sprintf("%s, %s, %s", plural(s.Errors, "error"), plural(s.Warnings, "warning"), plural(s.Infos, "note"))
}

// ---- matrix cuda ----

type matrixCUDAOptions struct {
	streams *IOStreams
	version string
	out     *outputFlag
}

func newMatrixCUDACommand(streams *IOStreams) *cobra.Command {
	o := &matrixCUDAOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "cuda VERSION",
		Short: "Show what a CUDA toolkit version needs from the driver",
		Long: `Show the minimum driver of a CUDA toolkit version for full support, the floor under
minor-version compatibility (and what does not work there), and the driver branches its
cuda-compat package runs on. "X.Y" means X.Y GA; "X.Y.Z" is matched against NVIDIA's release
numbers (12.2.2 is 12.2 Update 2, 11.0.2 is 11.0 GA).

Exits 2 for a version that does not parse, was never released (12.7) or is not in the matrix.`,
		Example: `  gpuctl matrix cuda 12.4
  gpuctl matrix cuda 12.2.2 -o json`,
		Args: exactArgs(1, "one CUDA VERSION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.version = args[0]
			if err := o.out.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	o.out = addViewFlag(cmd, matrixCUDAFormats)
	return cmd
}

type matrixCUDAReport struct {
	APIVersion        string   `json:"apiVersion"`
	Kind              string   `json:"kind"`
	Version           string   `json:"version"`
	Release           string   `json:"release"`
	MinDriver         string   `json:"minDriver,omitempty"`
	Branch            string   `json:"branch,omitempty"`
	MinorCompatFloor  string   `json:"minorCompatFloor,omitempty"`
	MinorCompatLimits []string `json:"minorCompatLimits"`
	ForwardCompat     []string `json:"forwardCompatBranches"`
	NativeBranch      string   `json:"nativeBranch,omitempty"`
	Notes             []string `json:"notes"`
	Sources           []string `json:"sources"`
	AsOf              string   `json:"asOf"`
}

func matrixBranchName(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("R%d", n)
}

func (o *matrixCUDAOptions) run() error {
	t, err := matrix.CUDAFacts(o.version)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	r := matrixCUDAReport{APIVersion: spec.APIVersion, Kind: "CUDAToolkit", Version: t.Version, Release: t.Release,
		MinDriver: t.MinDriver, Branch: matrixBranchName(t.Branch), MinorCompatFloor: t.MinorCompatFloor,
		MinorCompatLimits: matrixNonNil(t.MinorCompatLimits), ForwardCompat: []string{}, NativeBranch: matrixBranchName(t.NativeBranch),
		Notes: matrixNonNil(t.Notes), Sources: matrixNonNil(t.Sources), AsOf: t.AsOf}
	for _, b := range t.ForwardCompat {
		r.ForwardCompat = append(r.ForwardCompat, matrixBranchName(b))
	}
	return writeOutput(o.streams, o.out, matrixCUDAFormats, r)
}

// matrixCUDAFormats are the output formats of `matrix cuda`.
var matrixCUDAFormats = viewFormats[matrixCUDAReport]{tableFormat(writeMatrixCUDATable), jsonFormat[matrixCUDAReport]()}

// writeMatrixCUDATable writes the toolkit's driver needs, its limits under
// minor-version compatibility, notes and sources.
func writeMatrixCUDATable(s *IOStreams, r matrixCUDAReport) error {
	w := s.Out
	fmt.Fprintf(w, "CUDA %s (%s)\n", r.Version, r.Release)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	switch {
	case r.MinDriver != "":
		fmt.Fprintf(tw, "  minimum driver (full support):\t>= %s\n", r.MinDriver)
	case r.Branch != "":
		fmt.Fprintf(tw, "  minimum driver (full support):\tan %s driver (the release notes give the branch only)\n", r.Branch)
	default:
		fmt.Fprintf(tw, "  minimum driver (full support):\tnot in the matrix\n")
	}
	if r.MinorCompatFloor != "" {
		fmt.Fprintf(tw, "  minor-version compatibility:\t>= %s, with limits (below)\n", r.MinorCompatFloor)
	}
	if len(r.ForwardCompat) > 0 {
		fmt.Fprintf(tw, "  forward compatibility:\tcuda-compat on %s (data-center GPUs, LTSB/PB branches in support)\n", strings.Join(r.ForwardCompat, ", "))
	}
	if r.NativeBranch != "" {
		fmt.Fprintf(tw, "  native from:\t%s\n", r.NativeBranch)
	}
	fmt.Fprintf(tw, "  as of:\t%s\n", r.AsOf)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.MinorCompatLimits) > 0 {
		fmt.Fprintln(w, "\nUnder minor-version compatibility:")
		for _, l := range r.MinorCompatLimits {
			fmt.Fprintf(w, "  - %s\n", l)
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	fmt.Fprintln(w, "\nSources:")
	for _, s := range r.Sources {
		fmt.Fprintf(w, "  %s\n", s)
	}
	return nil
}

func matrixNonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ---- matrix gpus ----

func newMatrixGPUsCommand(streams *IOStreams) *cobra.Command {
	var out *outputFlag
	cmd := &cobra.Command{
		Use:     "gpus",
		Short:   "List the GPU products the matrix knows",
		Example: "  gpuctl matrix gpus\n  gpuctl matrix gpus -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			return writeOutput(streams, out, gpuListFormats, gpuList{spec.APIVersion, "GPUList", matrix.GPUs()})
		},
	}
	out = addViewFlag(cmd, gpuListFormats)
	return cmd
}

// gpuList is `matrix gpus -o json`.
type gpuList struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Items      []matrix.GPUProduct `json:"items"`
}

var gpuListFormats = viewFormats[gpuList]{tableFormat(writeGPUTable), jsonFormat[gpuList]()}

func writeGPUTable(s *IOStreams, l gpuList) error {
	tw := tabwriter.NewWriter(s.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tARCH\tCC\tMEMORY\tMIG\tDRIVER BRANCHES\tCUDA\tSOURCE")
	for _, g := range l.Items {
		mig := "-"
		if g.MIG {
			mig = "yes"
		}
		cuda := g.MinCUDA + "+"
		if g.MaxCUDA != "" {
			cuda = g.MinCUDA + "-" + g.MaxCUDA
		}
		mem := "-"
		if g.MemoryGiB > 0 {
			mem = fmt.Sprintf("%d GB", g.MemoryGiB)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.Arch, g.ComputeCapability, mem, mig, gpuDriverRange(g), cuda, g.Source)
	}
	return tw.Flush()
}

// gpuDriverRange is the drivers a GPU runs on: a minimum version, a span
// of branches, or any.
func gpuDriverRange(g matrix.GPUProduct) string {
	switch {
	case g.MinDriver != "":
		return ">= " + g.MinDriver
	case g.MinDriverBranch != 0 && g.LastDriverBranch != 0:
		return fmt.Sprintf("R%d-R%d", g.MinDriverBranch, g.LastDriverBranch)
	case g.MinDriverBranch != 0:
		return fmt.Sprintf("R%d+", g.MinDriverBranch)
	case g.LastDriverBranch != 0:
		return fmt.Sprintf("<= R%d", g.LastDriverBranch)
	}
	return "any"
}

// ---- matrix machines ----

func newMatrixMachinesCommand(streams *IOStreams) *cobra.Command {
	var out *outputFlag
	var provider string
	cmd := &cobra.Command{
		Use:     "machines",
		Short:   "List the GKE machine types and EKS instance types with GPUs",
		Example: "  gpuctl matrix machines --provider gke\n  gpuctl matrix machines --provider eks -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			providers := []string{spec.ProviderGKE, spec.ProviderEKS}
			switch provider {
			case "":
			case spec.ProviderGKE, spec.ProviderEKS:
				providers = []string{provider}
			default:
				return usageErrorf("--provider %q: want gke or eks", provider)
			}
			var ms []matrix.Machine
			for _, p := range providers {
				ms = append(ms, matrix.Machines(p)...)
			}
			return writeOutput(streams, out, machineListFormats, machineList{spec.APIVersion, "MachineList", ms})
		},
	}
	cmd.Flags().StringVar(&provider, "provider", "", "gke or eks (default both)")
	out = addViewFlag(cmd, machineListFormats)
	return cmd
}

// machineList is `matrix machines -o json`.
type machineList struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Items      []matrix.Machine `json:"items"`
}

var machineListFormats = viewFormats[machineList]{tableFormat(writeMachineTable), jsonFormat[machineList]()}

func writeMachineTable(s *IOStreams, l machineList) error {
	tw := tabwriter.NewWriter(s.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tNAME\tGPUS\tARCH\tGPU NETWORK\tSOURCE")
	for _, m := range l.Items {
		net := m.Fabric
		if m.EFA {
			net = fmt.Sprintf("efa (%d cards)", m.NetworkCards)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Provider, m.Name, machineGPUs(m), m.Arch, net, m.Source)
	}
	return tw.Flush()
}

// machineGPUs is what a machine type holds: "8 x H100", a fraction of a
// GPU, or the accelerators it can attach.
func machineGPUs(m matrix.Machine) string {
	switch {
	case m.Attachable != nil:
		var acc []string
		for a := range m.Attachable {
			acc = append(acc, a)
		}
		sort.Strings(acc)
		return "attach " + strings.Join(acc, ", ")
	case m.GPUFraction > 0:
		return fmt.Sprintf("%g x %s", m.GPUFraction, m.GPU)
	case m.AcceleratorType != "":
		return fmt.Sprintf("%d x %s", m.GPUCount, m.AcceleratorType)
	}
	return fmt.Sprintf("%d x %s", m.GPUCount, m.GPU)
}

// ---- matrix tables ----

func newMatrixTablesCommand(streams *IOStreams, f *Factory) *cobra.Command {
	var out *outputFlag
	asOf := asOfFlag{now: f.Now}
	cmd := &cobra.Command{
		Use:   "tables",
		Short: "List the embedded tables with their date and age",
		Long: `Each table of the embedded data is dated by its newest row's as_of. Each has a refresh
period, by how often its source changes (GKE's driver table and release schedule: 120 days, EKS
AMI types: 60, API enums: 365). A table older than its period at the date checked at is marked
stale: facts that changed since are unknown to this gpuctl (MATRIX-DATA-STALE, an info note).`,
		Example: "  gpuctl matrix tables --as-of 2026-12-02",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			if err := asOf.complete(); err != nil {
				return err
			}
			return writeOutput(streams, out, tableListFormats, newTableList(asOf))
		},
	}
	asOf.addFlag(cmd)
	out = addViewFlag(cmd, tableListFormats)
	return cmd
}

// tableList is `matrix tables -o json`: each embedded table's date and its
// age at AsOf.
type tableList struct {
	APIVersion     string      `json:"apiVersion"`
	Kind           string      `json:"kind"`
	AsOf           string      `json:"asOf"`
	StaleAfterDays int         `json:"staleAfterDays"`
	Items          []tableItem `json:"items"`
}

type tableItem struct {
	Table   string `json:"table"`
	AsOf    string `json:"asOf"`
	AgeDays int    `json:"ageDays"`
	Stale   bool   `json:"stale"`
	// RefreshDays is the table's refresh period: it is stale when older.
	RefreshDays int `json:"refreshDays"`
	// SourceEnd says where the table's source stops when it was checked
	// against it after its newest row ("checked 2026-12-02: ...").
	SourceEnd string `json:"sourceEnd,omitempty"`
}

func newTableList(asOf asOfFlag) tableList {
	items := []tableItem{}
	for _, t := range matrix.TableDates() {
		age, stale := t.Age(asOf.t)
		it := tableItem{t.Table, t.Date.Format("2006-01-02"), age, stale, t.RefreshDays(), ""}
		if e, ok := t.SourceEnd(); ok {
			it.SourceEnd = "checked " + e.Checked + ": " + e.Why
		}
		items = append(items, it)
	}
	return tableList{spec.APIVersion, "MatrixTableList", asOf.date(), matrix.StaleAfterDays, items}
}

var tableListFormats = viewFormats[tableList]{tableFormat(writeTableTable), jsonFormat[tableList]()}

func writeTableTable(s *IOStreams, l tableList) error {
	fmt.Fprintf(s.Out, "Embedded tables as of %s (each stale past its refresh period; %d days unless stated)\n\n", l.AsOf, l.StaleAfterDays)
	tw := tabwriter.NewWriter(s.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tDATE\tAGE (DAYS)\tREFRESH (DAYS)\tSTALE")
	for _, it := range l.Items {
		stale := "-"
		if it.Stale {
			stale = "stale"
		}
		if it.SourceEnd != "" {
			stale += " (source ends)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", it.Table, it.AsOf, it.AgeDays, it.RefreshDays, stale)
	}
	return tw.Flush()
}

// ---- matrix drivers ----

func newMatrixDriversCommand(streams *IOStreams, f *Factory) *cobra.Command {
	var out *outputFlag
	asOf := asOfFlag{now: f.Now}
	cmd := &cobra.Command{
		Use:     "drivers",
		Short:   "List NVIDIA driver branches with their type and end of life",
		Example: "  gpuctl matrix drivers --as-of 2026-11-29",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			if err := asOf.complete(); err != nil {
				return err
			}
			if note := cmp.Or(matrix.DataStaleNote(asOf.t), matrix.TableStaleNote(asOf.t)); note != "" {
				fmt.Fprintf(streams.ErrOut, "note: %s (%s)\n", note, rules.RuleDataStale)
			}
			return writeOutput(streams, out, driverListFormats, newDriverList(asOf))
		},
	}
	asOf.addFlag(cmd)
	out = addViewFlag(cmd, driverListFormats)
	return cmd
}

// driverList is `matrix drivers -o json`: each branch's status at AsOf.
type driverList struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	AsOf       string       `json:"asOf"`
	Items      []driverItem `json:"items"`
}

type driverItem struct {
	Branch      string `json:"branch"`
	Type        string `json:"type"`
	EOL         string `json:"eol"`
	Status      string `json:"status"`
	LatestKnown string `json:"latestKnown,omitempty"`
	Source      string `json:"source"`
	AsOf        string `json:"asOf"`
}

func newDriverList(asOf asOfFlag) driverList {
	var items []driverItem
	for _, b := range matrix.DriverBranches() {
		status := "in support"
		switch {
		case b.EndOfLife(asOf.t):
			status = "end of life"
		case b.Type == "NFB":
			status = "new feature branch (not for production)"
		case b.Type == "":
			status = "unknown"
		}
		items = append(items, driverItem{matrixBranchName(b.Branch), b.Type, b.EOL, status, b.LatestKnown, b.Source, b.AsOf})
	}
	return driverList{spec.APIVersion, "DriverBranchList", asOf.date(), items}
}

var driverListFormats = viewFormats[driverList]{tableFormat(writeDriverTable), jsonFormat[driverList]()}

func writeDriverTable(s *IOStreams, l driverList) error {
	fmt.Fprintf(s.Out, "Driver branches as of %s\n\n", l.AsOf)
	tw := tabwriter.NewWriter(s.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BRANCH\tTYPE\tEOL\tSTATUS\tLATEST KNOWN\tSOURCE")
	for _, it := range l.Items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", it.Branch, matrixOrDash(it.Type), matrixOrDash(it.EOL), it.Status, matrixOrDash(it.LatestKnown), it.Source)
	}
	return tw.Flush()
}

func matrixOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
