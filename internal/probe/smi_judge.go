package probe

import (
	"fmt"
	"strings"
)

// LoadUtilizationPercent is the GPU utilization at or above which a GPU
// counts as under load for the PCIe link rules. NVIDIA documents that the
// current link generation and width "may be reduced when the GPU is not in
// use" (nvidia-smi --help-query-gpu, pcie.link.gen.current), so a narrower
// or slower link only means something while the GPU works.
const LoadUtilizationPercent = 20

// judgeSMI applies the health rules to an nvidia-smi report.
func judgeSMI(r *SMIReport, j *judge) {
	if e := r.Error; e != nil {
		judgeFailure(j, e)
	}
	if r.Format == "" {
		if r.Error == nil {
			j.unusable("not-nvidia-smi", "", "the input is not nvidia-smi output in a known shape")
		}
		return
	}
	if len(r.GPUs) == 0 && r.Error == nil {
		j.unusable("no-gpus-in-output", "", "the output describes no GPU")
		j.unusable("not-exercised", "", "no GPU block or row was read (%s output): no GPU of the node was examined", r.Format)
	}
	if r.Format == "xml" && len(r.GPUs) > 0 && r.DriverVersion == "" {
		// Every nvidia-smi -q -x prints <driver_version>; without it the
		// document was cut or assembled by hand, so what else is missing
		// cannot be told.
		j.unusable("driver-version-missing", "", "the XML has no <driver_version>: it is not a complete nvidia-smi -q -x document")
	}
	if r.AttachedGPUs != nil && *r.AttachedGPUs != len(r.GPUs) && r.Error == nil {
		j.unusable("gpu-count-mismatch", "", "nvidia-smi reports %d attached GPUs but the output describes %d: the output is incomplete, so the other GPUs cannot be judged", *r.AttachedGPUs, len(r.GPUs))
	}
	judgeDuplicateBusIDs(j, r.GPUs)
	judgeGPUs(j, r.GPUs)
}

// judgeDuplicateBusIDs reports bus IDs that more than one GPU of the
// output has: a PCI address names one device, so the output holds several
// outputs (of one node, or of nodes alike) and its GPU count is wrong.
func judgeDuplicateBusIDs(j *judge, gpus []SMIGPU) {
	seen := map[string]int{}
	var dups []string
	for i := range gpus {
		id := gpus[i].BusID
		if id == "" {
			continue
		}
		if seen[id]++; seen[id] == 2 {
			dups = append(dups, id)
		}
	}
	if len(dups) > 0 {
		j.unusable("duplicate-bus-id", "", "%d bus IDs appear more than once (%s): the output describes %d GPUs but holds several outputs, so it cannot say which GPUs the node has", len(dups), truncate(strings.Join(dups, ", "), 200), len(gpus))
	}
}

// judgeFailure turns a nvidia-smi/NVML failure message into a finding.
func judgeFailure(j *judge, e *SMIError) {
	if e.NodeProblem() {
		msg := map[string]string{
			FailureDriverNotLoaded:       "nvidia-smi cannot communicate with the NVIDIA driver: the kernel module is not loaded or not responding",
			FailureDriverLibraryMismatch: "the NVML library and the loaded kernel module are different driver versions (reboot or reload the module after a driver upgrade)",
			FailureDeviceHandle:          "a GPU cannot be read (device handle unavailable); it may have fallen off the bus",
			FailureGPULost:               "a GPU is lost; the node needs a reboot to recover it",
			FailureNoDevices:             "the driver sees no GPU",
			FailureNVMLNotFound:          "libnvidia-ml.so is missing: the NVIDIA driver is not installed",
		}[e.Kind]
		j.fail(e.Kind, e.BusID, "%s: %q", msg, truncate(e.Message, 200))
		return
	}
	msg := map[string]string{
		FailureNVMLUnknownError: "NVML failed to initialise with an unknown error; inside a container this is usually the runtime losing access to the device nodes",
		FailureNoPermission:     "NVML lacks permission to open the GPUs; the tool's environment is at fault, not the node",
		FailureNVMLNotLoadable:  "libnvidia-ml.so could not be loaded in the tool's container (is the container runtime 'nvidia'?)",
		FailureSMIMissing:       "nvidia-smi is not present where the tool ran",
	}[e.Kind]
	j.unusable(e.Kind, e.BusID, "%s: %q", msg, truncate(e.Message, 200))
}

// gpuLabel names a GPU in findings: its bus ID, else its UUID, else index.
func gpuLabel(g *SMIGPU) string {
	switch {
	case g.BusID != "":
		return g.BusID
	case g.UUID != "":
		return g.UUID
	}
	return fmt.Sprintf("%d", g.Index)
}

// judgeGPUs applies the per-GPU rules shared by nvidia-smi and NVML reports.
func judgeGPUs(j *judge, gpus []SMIGPU) {
	anyActiveLink := false
	for i := range gpus {
		for _, l := range gpus[i].NVLinks {
			anyActiveLink = anyActiveLink || l.Active
		}
	}
	for i := range gpus {
		g := &gpus[i]
		id := gpuLabel(g)
		judgeMemory(j, g, id)
		judgeResets(j, g, id)
		for _, f := range g.ErrFields {
			j.fail("gpu-err", id, "nvidia-smi shows ERR! for %s", f)
		}
		judgeFabric(j, g, id)
		judgePCIe(j, g, id)
		judgeNVLinks(j, g, id, anyActiveLink)
		for _, reason := range g.ClockEventReasons {
			if strings.HasPrefix(reason, "hw_") {
				j.warn("clocks-hw-slowdown", id, "clocks are held down by the hardware (%s)", reason)
			}
		}
	}
}

// isTrue reports whether a tri-state flag is known and set.
func isTrue(b *bool) bool { return b != nil && *b }

// judgeMemory judges the GPU memory's errors and repairs: ECC counters,
// the SRAM threshold, page retirement, row remapping and HBM channel repair.
func judgeMemory(j *judge, g *SMIGPU, id string) {
	if v := g.ECCUncorrectedVolatile; v != nil && *v > 0 {
		j.fail("ecc-uncorrectable", id, "%d uncorrectable ECC errors since the driver loaded", *v)
	} else if v := g.ECCUncorrectedAggregate; v != nil && *v > 0 {
		j.warn("ecc-uncorrectable-history", id, "%d uncorrectable ECC errors over the GPU's life (none since the driver loaded)", *v)
	}
	if isTrue(g.SRAMThresholdExceeded) {
		j.fail("sram-threshold-exceeded", id, "the SRAM uncorrectable error threshold is exceeded")
	}
	if isTrue(g.RetiredPagesPending) {
		j.fail("retired-pages-pending", id, "a page retirement is pending: the GPU needs a reset or reboot before the bad page is excluded")
	}
	if isTrue(g.RowRemapFailure) {
		j.fail("row-remap-failure", id, "row remapping failed: the GPU has run out of spare rows and should be replaced")
	}
	if isTrue(g.RowRemapPending) {
		j.fail("row-remap-pending", id, "a row remap is pending: the GPU needs a reset to activate it")
	}
	if isTrue(g.ChannelRepairPending) {
		j.fail("channel-repair-pending", id, "an HBM channel repair is pending: the GPU needs a reset to activate it")
	}
}

// judgeResets judges the flags that ask for a reset: a pending TPC repair,
// a required reset, a recommended drain and reset.
func judgeResets(j *judge, g *SMIGPU, id string) {
	if isTrue(g.TPCRepairPending) {
		j.fail("tpc-repair-pending", id, "a TPC repair is pending: the GPU needs a reset to activate it")
	}
	if isTrue(g.ResetRequired) {
		j.fail("gpu-reset-required", id, "nvidia-smi reports that the GPU requires a reset")
	}
	if isTrue(g.DrainAndResetRecommended) {
		j.fail("drain-and-reset-recommended", id, "nvidia-smi recommends draining the GPU and resetting it")
	}
}

func judgeFabric(j *judge, g *SMIGPU, id string) {
	state, status := strings.ToLower(g.FabricState), strings.ToLower(g.FabricStatus)
	switch {
	case state == "" || na(g.FabricState):
	case state == "completed":
		if status != "" && !na(g.FabricStatus) && status != "success" {
			j.fail("fabric-failed", id, "NVSwitch fabric registration completed with status %q", g.FabricStatus)
		}
	default:
		j.unusable("fabric-not-ready", id, "NVSwitch fabric state is %q (is nvidia-fabricmanager running?)", g.FabricState)
	}
}

func judgePCIe(j *judge, g *SMIGPU, id string) {
	narrower := g.PCIeWidthCurrent != nil && g.PCIeWidthMax != nil && *g.PCIeWidthCurrent < *g.PCIeWidthMax
	slower := g.PCIeGenCurrent != nil && g.PCIeGenMax != nil && *g.PCIeGenCurrent < *g.PCIeGenMax
	if !narrower && !slower {
		return
	}
	link := fmt.Sprintf("gen %s x%s (max gen %s x%s)", itoa(g.PCIeGenCurrent), itoa(g.PCIeWidthCurrent), itoa(g.PCIeGenMax), itoa(g.PCIeWidthMax))
	loaded := g.UtilizationGPUPercent != nil && *g.UtilizationGPUPercent >= LoadUtilizationPercent
	if !loaded {
		j.info("pcie-link-idle", id, "PCIe link at %s while the GPU is not under load; links train down when idle", link)
		return
	}
	if narrower {
		j.fail("pcie-width-degraded", id, "PCIe link at %s under %d%% load: the link is narrower than it can be (reseat or check the riser)", link, *g.UtilizationGPUPercent)
	}
	if slower {
		j.warn("pcie-gen-degraded", id, "PCIe link at %s under %d%% load: the link is slower than its maximum", link, *g.UtilizationGPUPercent)
	}
}

// nvlinkBoard reports whether a product name is an SXM or HGX module, whose
// NVLinks are wired on the baseboard: with every link down such a GPU is cut
// off from its peers, whatever the other GPUs show.
func nvlinkBoard(name string) bool {
	u := strings.ToUpper(name)
	return strings.Contains(u, "SXM") || strings.Contains(u, "HGX")
}

func judgeNVLinks(j *judge, g *SMIGPU, id string, anyActive bool) {
	switch g.NVLinkStatus {
	case NVLinkMIGMode:
		j.info("nvlink-mig-mode", id, "NVLink is not queried while the GPU is in MIG mode")
	case NVLinkNotSupported:
		j.info("nvlink-not-supported", id, "the GPU has no NVLink")
	}
	if len(g.NVLinks) == 0 {
		return
	}
	var down []string
	for _, l := range g.NVLinks {
		if !l.Active {
			down = append(down, fmt.Sprintf("%d", l.Link))
		}
	}
	switch {
	case len(down) == 0:
	case len(down) < len(g.NVLinks) || anyActive:
		j.fail("nvlink-inactive", id, "%d of %d NVLinks are inactive (links %s)", len(down), len(g.NVLinks), strings.Join(down, ", "))
	case nvlinkBoard(g.Name):
		j.fail("nvlink-all-inactive", id, "all NVLinks of %s are inactive: an SXM/HGX GPU's links are wired on the baseboard, so the GPU is cut off from its peers", g.Name)
	default:
		j.warn("nvlink-all-inactive", id, "all %d NVLinks are inactive; no GPU shows an active link, so NVLink may simply not be bridged", len(g.NVLinks))
	}
}

func itoa(p *int) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprintf("%d", *p)
}
