package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/matrix"
)

// compatSubject is what the GPU / driver / CUDA rules look at. Validate
// builds one per pool; Check builds one from a what-if query.
type compatSubject struct {
	who string // "pool train-h100: " or ""

	gpu     *matrix.GPUProduct
	gpuPath string

	driver matrix.DriverRef
	// driverUnknown explains why the driver cannot be judged ("GKE LATEST").
	driverUnknown     string
	driverUnknownPath string
	// driverNote is a whole clause on why the driver is not known (GKE's
	// driver table has no row for the version); driverNoteSources back it.
	driverNote        string
	driverBeyond      bool // the note says the cluster is beyond the table
	driverNoteSources []string

	cuda, cudaPath     string
	compat, compatPath string
	workloadPTX        bool

	kernelModules, kernelModulesPath string

	mig        bool // MIG requested
	migProfile string
	migPath    string

	machine     *matrix.Machine
	machinePath string
}

func poolSubject(pc *matrix.PoolFacts) compatSubject {
	s := compatSubject{
		who: fmt.Sprintf("pool %s: ", pc.Pool.Name), gpu: pc.GPU, gpuPath: pc.GPUPath, driver: pc.Driver,
		cuda: pc.CUDA, cudaPath: pc.CUDAPath, compat: pc.Pool.CUDACompat, compatPath: pc.Field(".cudaCompat"),
		workloadPTX: pc.Pool.WorkloadPTX, machine: pc.Machine,
	}
	if pc.Pool.Name == "" {
		s.who = ""
	}
	for _, rm := range pc.Machines {
		if rm.Known {
			s.machinePath = rm.Path
			break
		}
	}
	if km := pc.Pool.GPU.KernelModules; km != "" {
		s.kernelModules, s.kernelModulesPath = km, pc.Field(".gpu.kernelModules")
	} else if pc.OperatorDriver && pc.OperatorKMT != "" {
		s.kernelModules, s.kernelModulesPath = pc.OperatorKMT, "spec.addons.gpuOperator.driver.kernelModuleType"
	}
	sh := pc.Pool.GPU.Sharing
	if sh.Strategy == "mig" || (sh.Strategy == "time-slicing" && sh.MIGProfile != "") {
		s.mig, s.migProfile = true, sh.MIGProfile
		s.migPath = pc.Field(".gpu.sharing.strategy")
		if sh.MIGProfile != "" {
			s.migPath = pc.Field(".gpu.sharing.migProfile")
		}
	}
	if !pc.Driver.Known() {
		switch {
		case pc.GKEDriverNote != "":
			s.driverNote, s.driverNoteSources, s.driverBeyond = pc.GKEDriverNote, pc.GKEDriverSources, pc.GKEDriverBeyond
			s.driverUnknownPath = pc.Field(".gpu.driver")
		case pc.AMI != nil && pc.AMI.Custom:
			s.driverUnknown = "the driver of the custom AMI (set gpu.driver to the version it ships)"
			s.driverUnknownPath = pc.Field(".gpu.driver")
		}
	}
	return s
}

// checkCompat runs the CUDA <-> driver <-> GPU rules on one subject.
func (v *validator) checkCompat(s compatSubject) {
	if s.cuda != "" {
		v.checkCUDA(&s)
	}
	if s.compat != "" {
		v.checkForwardCompat(&s)
	}
	if s.gpu != nil {
		v.checkGPUDriver(&s)
		v.checkOpenModules(&s)
		v.checkMIG(&s)
	}
	if s.driver.Known() {
		v.checkLifecycle(&s)
	} else if (s.driverUnknown != "" || s.driverNote != "") && (s.cuda != "" || s.gpu != nil) {
		what := []string{}
		if s.cuda != "" {
			what = append(what, "CUDA "+s.cuda+" compatibility")
		}
		if s.gpu != nil {
			what = append(what, s.gpu.ID+" driver support")
		}
		what = append(what, "the driver's lifecycle")
		switch {
		case s.driverNote != "" && s.driverBeyond:
			v.beyond(s.driverUnknownPath, fmt.Sprintf("%s%s, its %s cannot be judged", s.who, s.driverNote, joinAnd(what)), s.driverNoteSources...)
			return
		case s.driverNote != "":
			v.unknown(s.driverUnknownPath, fmt.Sprintf("%s%s, its %s cannot be judged", s.who, s.driverNote, joinAnd(what)), s.driverNoteSources...)
			return
		}
		v.unknown(s.driverUnknownPath, fmt.Sprintf("%sthe matrix does not know %s, so %s cannot be judged", s.who, s.driverUnknown, joinAnd(what)))
	}
}

// checkCUDA: the CUDA version exists; the driver supports it fully, under
// minor-version compatibility, or not at all.
func (v *validator) checkCUDA(s *compatSubject) {
	r := v.c.ResolveCUDA(s.cuda)
	if !v.checkCUDAVersion(s, r) {
		return
	}
	// Forward compatibility replaces the driver check for CUDA versions the
	// cuda-compat package covers.
	if s.compat != "" {
		if cv, err := matrix.ParseVersion(s.compat); err == nil && !cv.Less(matrix.Version{r.Version[0], minorOf(r.Version)}) && v.compatUsable(s) {
			return
		}
	}
	if !s.driver.Known() {
		return
	}
	c := cudaDriver{s: s, d: s.driver, t: r.Toolkit, fam: v.c.CUDAFamily(r.Version.Major()), major: r.Version.Major()}
	c.name = fmt.Sprintf("CUDA %s (%s)", s.cuda, c.t.Release)
	if c.d.Exact != nil {
		v.checkCUDAExactDriver(c)
		return
	}
	v.checkCUDABranchDriver(c)
}

// checkCUDAVersion: the CUDA version is one, was released, and is in the
// matrix (SPEC-VERSION, CUDA-UNKNOWN-VERSION, MATRIX-UNKNOWN-FACT); false
// when its driver cannot be judged.
func (v *validator) checkCUDAVersion(s *compatSubject, r matrix.CUDAResolution) bool {
	who := s.who
	if s.cudaPath == "spec.cuda" {
		who = "" // a cluster-wide fact: one finding, not one per pool
	}
	switch {
	case r.Err != nil:
		v.add(RuleSpecVersion, diag.SeverityError, s.cudaPath, fmt.Sprintf("%sCUDA version %q: %v", who, s.cuda, unwrapMsg(r.Err)), "Write the CUDA toolkit version of the images, e.g. \"12.4\" or \"12.2.2\".")
		return false
	case r.Nonexistent:
		msg := fmt.Sprintf("%sCUDA %s was never released", who, s.cuda)
		if r.Toolkit != nil && r.Toolkit.Note != "" {
			msg = who + r.Toolkit.Note // the note says it was never released
			if who != "" {
				msg = who + lowerFirst(r.Toolkit.Note)
			}
		}
		v.add(RuleCUDAUnknown, diag.SeverityError, s.cudaPath, msg, "", srcCUDANotes)
		return false
	case r.Unknown:
		v.cudaOutside(s, who)
		return false
	case r.Fallback:
		v.unknown(s.cudaPath, fmt.Sprintf("%sCUDA %s is not in the release table; it is judged as %s, the newest known release of %d.%d (a later update may need a newer driver)",
			who, s.cuda, r.Toolkit.Release, r.Version[0], minorOf(r.Version)), srcCUDANotes)
	}
	return true
}

// cudaOutside notes a CUDA version outside the matrix's toolkit table: a
// release newer than its newest is beyond the table (a warning naming the
// table and its date), an older one a note.
func (v *validator) cudaOutside(s *compatSubject, who string) {
	oldest, newest := v.c.CUDA().Toolkits[0].Release, v.c.NewestCUDA().Release
	if given, err := matrix.ParseVersion(s.cuda); err == nil && v.c.NewestCUDA().ParsedVersion().Less(given) {
		v.beyond(s.cudaPath, fmt.Sprintf("%sCUDA %s is newer than the matrix's CUDA toolkit table (as of %s, newest %s): the matrix is older than the images, so their driver needs cannot be judged",
			who, s.cuda, matrix.TableAsOf("cuda toolkits"), newest), srcCUDANotes)
		return
	}
	v.unknown(s.cudaPath, fmt.Sprintf("%sCUDA %s is outside the matrix (it knows %s to %s); its driver needs cannot be judged",
		who, s.cuda, oldest, newest), srcCUDANotes)
}

// cudaDriver is a subject's known driver against its CUDA toolkit release.
type cudaDriver struct {
	s     *compatSubject
	d     matrix.DriverRef
	t     *matrix.Toolkit
	fam   *matrix.MinorCompatFamily // nil when the matrix has no floor for the major
	major int                       // the CUDA major version
	name  string                    // "CUDA 12.4 (12.4.0)", for messages
}

// below reports a driver under the toolkit's minimum need: it runs under
// minor-version compatibility when floorOK (CUDA-MINOR-COMPAT), not at all
// otherwise (CUDA-DRIVER-MIN).
func (v *validator) below(c cudaDriver, floorOK bool, need string) {
	s, d := c.s, c.d
	if floorOK {
		v.add(RuleCUDAMinorCompat, "", d.Path,
			fmt.Sprintf("%s%s is below the %s minimum for %s, so it runs only under CUDA %d.x minor-version compatibility (>= %s): PTX JIT of CUDA %s PTX does not work (Triton, torch.compile, NVRTC without nvJitLink, PTX-only images fail) and features that need a newer driver fail with cudaErrorCallRequiresNewerDriver",
				s.who, d.Describe(), need, c.name, c.fam.Major, c.fam.Floor, s.cuda),
			fmt.Sprintf("Upgrade the driver to %s or later, or build the images with a CUDA version the driver supports natively.", need),
			c.t.Source, srcMinorCompat)
		return
	}
	floor := "none"
	if c.fam != nil {
		floor = c.fam.Floor
	}
	v.add(RuleCUDADriverMin, "", d.Path,
		fmt.Sprintf("%s%s cannot run %s: it needs %s, and even CUDA %d.x minor-version compatibility needs >= %s",
			s.who, d.Describe(), c.name, need, c.major, floor),
		fmt.Sprintf("Upgrade the driver to %s or later, or build the images with an older CUDA.", need),
		c.t.Source, srcMinorCompat)
}

// checkCUDAExactDriver judges an exact driver: the one judgement the
// generated guards share (CUDANeeds, ExactDriverRuns).
func (v *validator) checkCUDAExactDriver(c cudaDriver) {
	t := c.t
	native, _ := v.c.CUDANeeds(t)
	need := "an unknown minimum"
	switch {
	case t.MinDriverVersion() != nil:
		need = t.MinDriver
	case t.Branch != 0:
		need = fmt.Sprintf("an R%d driver", t.Branch)
	}
	ok, minorOnly := v.c.ExactDriverRuns(t, c.d.Exact)
	switch {
	case ok && native == nil:
		v.unknown(c.s.cudaPath, fmt.Sprintf("%sthe minimum driver of %s is not in the matrix (%s); with %s it runs at least under minor-version compatibility", c.s.who, c.name, t.Note, c.d.Describe()), t.Source)
	case ok && minorOnly:
		v.below(c, true, need)
	case !ok:
		v.below(c, false, need)
	}
}

// floorOK reports whether a driver branch is at or above the family's
// floor; known is false when the branch is the floor's own, whose exact
// version is not known.
func (c cudaDriver) floorOK() (ok, known bool) {
	switch {
	case c.fam == nil:
		return false, true
	case c.d.Branch > c.fam.FloorVersion().Major():
		return true, true
	case c.d.Branch < c.fam.FloorVersion().Major():
		return false, true
	}
	return false, false
}

// checkCUDABranchDriver judges a driver of which only the branch is known.
func (v *validator) checkCUDABranchDriver(c cudaDriver) {
	s, d, t := c.s, c.d, c.t
	switch {
	case t.MinDriverVersion() != nil:
		switch {
		case d.Branch > t.MinDriverVersion().Major():
			return
		case d.Branch == t.MinDriverVersion().Major():
			v.unknown(d.Path, fmt.Sprintf("%s%s: %s needs >= %s; the exact version the branch runs is not known", s.who, d.Describe(), c.name, t.MinDriver), t.Source)
			return
		}
		ok, known := c.floorOK()
		if !known {
			v.unknown(d.Path, fmt.Sprintf("%s%s is below the %s minimum for %s; whether it reaches the minor-compatibility floor cannot be told from the branch alone", s.who, d.Describe(), t.MinDriver, c.name), t.Source)
			return
		}
		v.below(c, ok, t.MinDriver)
	case t.Branch != 0:
		if d.Branch >= t.Branch {
			return
		}
		ok, known := c.floorOK()
		if !known {
			v.unknown(d.Path, fmt.Sprintf("%s%s is older than R%d, which %s needs", s.who, d.Describe(), t.Branch, c.name), t.Source)
			return
		}
		v.below(c, ok, fmt.Sprintf("an R%d driver", t.Branch))
	default:
		if ok, known := c.floorOK(); known && !ok {
			v.below(c, false, "an unknown minimum")
			return
		}
		v.unknown(s.cudaPath, fmt.Sprintf("%sthe minimum driver of %s is not in the matrix (%s); with %s it runs at least under minor-version compatibility", s.who, c.name, t.Note, d.Describe()), t.Source)
	}
}

func unwrapMsg(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "CUDA version") {
		return msg[i+2:]
	}
	return msg
}

// compatUsable reports whether the cuda-compat package can serve on the
// subject's GPU and driver (support problems aside, which
// checkForwardCompat reports).
func (v *validator) compatUsable(s *compatSubject) bool {
	cv, err := matrix.ParseVersion(s.compat)
	if err != nil || len(cv) < 2 {
		return false
	}
	p := v.c.CompatPackage(cv)
	if p == nil || (s.gpu != nil && !s.gpu.DataCenter) || !s.driver.Known() {
		return false
	}
	return v.c.ForwardServes(p, s.driver.Branch)
}

func intsToStrings(xs []int) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprint(x)
	}
	return out
}

// checkForwardCompat judges a cuda-compat package on the subject's GPU and
// driver.
func (v *validator) checkForwardCompat(s *compatSubject) {
	fc := v.c.CUDA().Forward
	cv, err := matrix.ParseVersion(s.compat)
	if err != nil || len(cv) < 2 {
		v.add(RuleSpecVersion, diag.SeverityError, s.compatPath, fmt.Sprintf("%scudaCompat %q is not a CUDA major.minor version", s.who, s.compat), "Write the CUDA version of the cuda-compat package, e.g. \"13.0\".")
		return
	}
	pkg := "cuda-compat-" + fmt.Sprintf("%d-%d", cv[0], minorOf(cv))
	p := v.c.CompatPackage(cv)
	if p == nil {
		v.add(RuleCUDAForwardCompat, diag.SeverityError, s.compatPath, fmt.Sprintf("%sthe forward-compatibility matrix has no %s package", s.who, pkg), "Use a cuda-compat version the matrix lists (12.2-12.9, 13.0-13.4).", fc.Source)
		return
	}
	if s.gpu != nil && !s.gpu.DataCenter {
		v.add(RuleCUDAForwardCompat, diag.SeverityError, s.compatPath,
			fmt.Sprintf("%s%s does not run on %s: forward compatibility is only for NVIDIA data-center GPUs (and select NGC Server Ready RTX SKUs); it fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)", s.who, pkg, s.gpu.Name),
			"Upgrade the driver so it runs the CUDA version natively.", fc.Source)
		return
	}
	if s.cuda != "" {
		if c, err := matrix.ParseVersion(s.cuda); err == nil && len(c) >= 2 && (matrix.Version{cv[0], minorOf(cv)}).Less(matrix.Version{c[0], minorOf(c)}) {
			v.add(RuleCUDAForwardCompat, diag.SeverityError, s.compatPath,
				fmt.Sprintf("%s%s is older than the images' CUDA %s, so it does not bring the driver support they need", s.who, pkg, s.cuda),
				fmt.Sprintf("Use cuda-compat-%d-%d to match the images.", c[0], minorOf(c)), fc.Source)
		}
	}
	v.checkForwardCompatDriver(s, p, pkg, fc.Source)
}

// checkForwardCompatDriver: the package against the driver it runs on
// (CUDA-FORWARD-COMPAT): not needed, not published for the branch, or
// listed for other branches; src is the matrix's source.
func (v *validator) checkForwardCompatDriver(s *compatSubject, p *matrix.CompatPackage, pkg, src string) {
	d := s.driver
	if !d.Known() {
		return
	}
	if p.Native != 0 && d.Branch >= p.Native {
		v.add(RuleCUDAForwardCompat, diag.SeverityWarning, s.compatPath,
			fmt.Sprintf("%s%s runs CUDA %s natively: %s is not needed, and none is published for R%d+ drivers", s.who, d.Describe(), p.CUDA, pkg, p.Native),
			"Remove cudaCompat.", src)
		return
	}
	if !v.c.ForwardServes(p, d.Branch) {
		if len(p.RunsOn) > 0 && d.Branch > p.RunsOn[len(p.RunsOn)-1] {
			v.add(RuleCUDAForwardCompat, diag.SeverityWarning, s.compatPath,
				fmt.Sprintf("%s%s runs CUDA %s without %s (no package is published for its branch)", s.who, d.Describe(), p.CUDA, pkg),
				"Remove cudaCompat.", src)
			return
		}
		on := "no driver branch"
		if len(p.RunsOn) > 0 {
			on = matrix.BranchList(p.RunsOn)
		}
		v.add(RuleCUDAForwardCompat, diag.SeverityError, d.Path,
			fmt.Sprintf("%s%s does not run on %s: the forward-compatibility matrix lists it for %s", s.who, pkg, d.Describe(), on),
			"Use a driver branch the package lists, or one that runs the CUDA version natively.", src)
		return
	}
	v.checkForwardCompatBranch(s, pkg, src)
}

// checkForwardCompatBranch: forward compatibility is supported only on
// production branches in support (CUDA-FORWARD-COMPAT).
func (v *validator) checkForwardCompatBranch(s *compatSubject, pkg, src string) {
	d := s.driver
	b, ok := matrix.LookupDriverBranch(d.Branch)
	switch {
	case !ok:
		v.unknown(d.Path, fmt.Sprintf("%sthe lifecycle of R%d is not in the matrix, so whether it is a supported forward-compatibility target cannot be judged", s.who, d.Branch), src)
	case b.Type == "NFB":
		v.add(RuleCUDAForwardCompat, diag.SeverityError, d.Path,
			fmt.Sprintf("%s%s with %s: R%d is a New Feature Branch, which NVIDIA does not support as a forward-compatibility target", s.who, pkg, d.Describe(), d.Branch),
			"Use an LTSB or PB branch in support (R580, R595).", src, b.Source)
	case b.EndOfLife(v.asOf):
		v.add(RuleCUDAForwardCompat, diag.SeverityWarning, d.Path,
			fmt.Sprintf("%s%s with %s: R%d (%s) reached end of life in %s, and forward compatibility is supported only on branches in support (as of %s)", s.who, pkg, d.Describe(), d.Branch, b.Type, eolText(b), v.date(v.asOf)),
			"Move to an LTSB or PB branch in support (R580 LTSB to June 2028, R595 PB to March 2027), or to one that runs the CUDA version natively.", src, b.Source)
	}
}

// checkGPUDriver: CUDA targets the GPU's architecture; the driver branch is
// inside the GPU's (and the instance type's) supported range.
func (v *validator) checkGPUDriver(s *compatSubject) {
	v.checkGPUArchCUDA(s)
	if !s.driver.Known() {
		return
	}
	v.checkGPUDriverRange(s)
	v.checkMachineDriverRange(s)
	if pf := v.c.Product(s.gpu.ID); pf != nil && pf.MinDriverUndocumented && s.driver.Branch >= s.gpu.MinDriverBranch {
		v.unknown(s.gpuPath, fmt.Sprintf("%sNVIDIA documents no minimum driver of %s's own beyond its architecture's (R%d), so %s is not judged further", s.who, s.gpu.ID, s.gpu.MinDriverBranch, s.driver.Describe()), s.gpu.Source)
	}
}

// checkGPUArchCUDA: the CUDA version targets the GPU's architecture
// (GPU-ARCH-CUDA).
func (v *validator) checkGPUArchCUDA(s *compatSubject) {
	g := s.gpu
	c, err := matrix.ParseVersion(s.cuda)
	if s.cuda == "" || err != nil || len(c) < 2 {
		return
	}
	cm := matrix.Version{c[0], minorOf(c)}
	switch {
	case g.MaxCUDA != "" && matrix.MustVersion(g.MaxCUDA).Less(cm):
		removed := ""
		for _, r := range v.c.CUDA().ArchRemovals {
			if r.Arch == g.Arch {
				removed = r.RemovedIn
			}
		}
		v.add(RuleGPUArchCUDA, "", s.cudaPath,
			fmt.Sprintf("%s%s is %s; CUDA %s removed %s support, so CUDA %s cannot target it (build with CUDA <= %s)", s.who, g.ID, g.Arch, removed, g.Arch, s.cuda, g.MaxCUDA),
			fmt.Sprintf("Build the images with CUDA %s or older, or move to a newer GPU.", g.MaxCUDA), srcArchMatrix, srcCUDA13Notes)
	case g.MinCUDA != "" && cm.Less(matrix.MustVersion(g.MinCUDA)):
		msg := fmt.Sprintf("%s%s (%s, compute capability %s) is first targeted by CUDA %s; images built with CUDA %s carry no code for it", s.who, g.ID, g.Arch, g.ComputeCapability, g.MinCUDA, s.cuda)
		if s.workloadPTX {
			v.add(RuleGPUArchCUDA, diag.SeverityInfo, s.cudaPath, msg+"; workloadPTX says they embed PTX the driver JIT-compiles at start-up (slower start, no architecture-specific kernels)",
				fmt.Sprintf("Rebuild the images with CUDA %s or later to ship native code.", g.MinCUDA), srcArchMatrix, srcCUDANotes)
			return
		}
		v.add(RuleGPUArchCUDA, diag.SeverityWarning, s.cudaPath, msg+" and run only if they embed PTX the driver can JIT (not sm_90a-specific kernels)",
			fmt.Sprintf("Build the images with CUDA %s or later (or set workloadPTX: true if they embed JIT-able PTX).", g.MinCUDA), srcArchMatrix, srcCUDANotes)
	}
}

// driverFix is the fix text of a driver finding: the platform default's own
// advice, else the branches that fit. It is built only for a finding (it
// was most of the driver check of a pool without one).
func (v *validator) driverFix(s *compatSubject) string {
	if s.driver.Fix != "" {
		return s.driver.Fix
	}
	return v.branchAdvice(s.gpu, s.machine)
}

// checkGPUDriverRange: the driver is in the GPU's supported range
// (GPU-DRIVER-BRANCH).
func (v *validator) checkGPUDriverRange(s *compatSubject) {
	g, d := s.gpu, s.driver
	switch {
	case g.MinDriver != "" && d.Exact != nil && d.Exact.Less(matrix.MustVersion(g.MinDriver)):
		v.add(RuleGPUDriverBranch, "", d.Path, fmt.Sprintf("%s%s needs driver >= %s; %s is older", s.who, g.ID, g.MinDriver, d.Describe()), v.driverFix(s), append([]string{g.Source}, d.Sources...)...)
	case g.MinDriverBranch != 0 && d.Branch < g.MinDriverBranch:
		min := fmt.Sprintf("R%d", g.MinDriverBranch)
		if g.MinDriver != "" {
			min = ">= " + g.MinDriver
		}
		v.add(RuleGPUDriverBranch, "", d.Path, fmt.Sprintf("%s%s (%s) needs a %s driver; %s is older", s.who, g.ID, g.Arch, min, d.Describe()), v.driverFix(s), append([]string{g.Source}, d.Sources...)...)
	case g.MinDriver != "" && d.Exact == nil && d.Branch == matrix.MustVersion(g.MinDriver).Major():
		v.unknown(d.Path, fmt.Sprintf("%s%s needs >= %s; the exact version of %s is not known", s.who, g.ID, g.MinDriver, d.Describe()), g.Source)
	}
	if g.LastDriverBranch != 0 && d.Branch > g.LastDriverBranch {
		v.add(RuleGPUDriverBranch, "", d.Path, fmt.Sprintf("%s%s (%s) is supported up to the R%d branch; %s is newer and does not support it", s.who, g.ID, g.Arch, g.LastDriverBranch, d.Describe()), v.driverFix(s), srcArchMatrix, g.Source)
	}
}

// checkMachineDriverRange: the driver is in the machine type's supported
// range (GPU-DRIVER-BRANCH).
func (v *validator) checkMachineDriverRange(s *compatSubject) {
	m, d := s.machine, s.driver
	if m == nil {
		return
	}
	if m.MinDriverBranch != 0 && d.Branch < m.MinDriverBranch {
		v.add(RuleGPUDriverBranch, "", d.Path, fmt.Sprintf("%s%s needs an R%d+ driver; %s is older (%s)", s.who, m.Name, m.MinDriverBranch, d.Describe(), m.Note), "Build a custom AMI (or Bottlerocket variant) with an R595+ driver.", m.Source)
	}
	if m.MaxDriverBranch != 0 && d.Branch > m.MaxDriverBranch {
		v.add(RuleGPUDriverBranch, "", d.Path, fmt.Sprintf("%s%s is not supported by %s (supported up to R%d)", s.who, m.Name, d.Describe(), m.MaxDriverBranch), fmt.Sprintf("Use an R%d driver.", m.MaxDriverBranch), m.Source)
	}
}

// branchAdvice names the branches in support at the evaluation date that
// fit the GPU, for fix texts.
func (v *validator) branchAdvice(g *matrix.GPUProduct, m *matrix.Machine) string {
	var ok []string
	for _, b := range matrix.DriverBranches() {
		if !b.InSupport(v.asOf) {
			continue
		}
		if !branchFits(b.Branch, g, m) {
			continue
		}
		ok = append(ok, fmt.Sprintf("R%d (%s, EOL %s)", b.Branch, b.Type, eolText(b)))
	}
	if len(ok) == 0 {
		if g != nil {
			return fmt.Sprintf("No driver branch in support as of %s fits %s: plan to replace the hardware.", v.date(v.asOf), g.ID)
		}
		return "Use a driver branch in support."
	}
	who := "the GPU"
	if g != nil {
		who = g.ID
	}
	return fmt.Sprintf("Use a branch in support that fits %s: %s.", who, strings.Join(ok, ", "))
}

// branchFits reports whether driver branch n is in the supported range of
// the GPU and of the machine type (either may be nil).
func branchFits(n int, g *matrix.GPUProduct, m *matrix.Machine) bool {
	if g != nil && ((g.MinDriverBranch != 0 && n < g.MinDriverBranch) || (g.LastDriverBranch != 0 && n > g.LastDriverBranch)) {
		return false
	}
	return m == nil || ((m.MinDriverBranch == 0 || n >= m.MinDriverBranch) && (m.MaxDriverBranch == 0 || n <= m.MaxDriverBranch))
}

// checkOpenModules: Blackwell and GH200 need the open kernel modules.
func (v *validator) checkOpenModules(s *compatSubject) {
	if !s.gpu.OpenModulesOnly || s.kernelModules != "proprietary" {
		return
	}
	v.add(RuleGPUOpenModules, "", s.kernelModulesPath,
		fmt.Sprintf("%s%s (%s) is supported only by the open GPU kernel modules; the proprietary modules do not load on it", s.who, s.gpu.ID, s.gpu.Arch),
		"", srcOpenModules, s.gpu.Source)
}

// checkMIG: MIG only on MIG-capable GPUs, with a profile of that GPU, on a
// driver at or above the GPU's MIG minimum.
func (v *validator) checkMIG(s *compatSubject) {
	if !s.mig {
		return
	}
	g := s.gpu
	if !g.MIG {
		v.add(RuleMIGUnsupported, "", s.migPath,
			fmt.Sprintf("%s%s (%s) does not support MIG; MIG-capable products are A30, A100, H100, H200, GH200, B200, GB200, B300, GB300 and RTX PRO Blackwell", s.who, g.ID, g.Arch),
			"Share the GPU with time-slicing or MPS, or use a MIG-capable GPU.", srcMIGGPUs)
		return
	}
	switch {
	case s.migProfile == "":
		v.add(RuleMIGProfile, "", s.migPath, fmt.Sprintf("%sMIG needs a profile; %s offers %s", s.who, g.ID, strings.Join(g.MIGProfiles, ", ")), "Set gpu.sharing.migProfile.", srcMIGProfiles)
	case len(g.MIGProfiles) == 0:
		v.unknown(s.migPath, fmt.Sprintf("%sthe MIG profiles of %s are not in the matrix, so %q cannot be checked", s.who, g.ID, s.migProfile), srcMIGProfiles)
	case !slices.Contains(g.MIGProfiles, s.migProfile):
		v.add(RuleMIGProfile, "", s.migPath, fmt.Sprintf("%sMIG profile %q does not exist on %s; it offers %s", s.who, s.migProfile, g.ID, strings.Join(g.MIGProfiles, ", ")),
			fmt.Sprintf("Use one of %s.", strings.Join(g.MIGProfiles, ", ")), srcMIGProfiles, g.Source)
	}
	d := s.driver
	if g.MIGMinDriver == "" || !d.Known() {
		return
	}
	min := matrix.MustVersion(g.MIGMinDriver)
	if (d.Exact != nil && d.Exact.Less(min)) || (d.Exact == nil && d.Branch < min.Major()) {
		v.add(RuleMIGDriverMin, "", d.Path, fmt.Sprintf("%sMIG on %s needs driver >= %s; %s is older", s.who, g.ID, g.MIGMinDriver, d.Describe()),
			fmt.Sprintf("Upgrade the driver to %s or later.", g.MIGMinDriver), srcMIGDeploy)
	}
}

// checkLifecycle: EOL branches and New Feature Branches.
func (v *validator) checkLifecycle(s *compatSubject) {
	d := s.driver
	b, ok := matrix.LookupDriverBranch(d.Branch)
	if !ok {
		v.unknown(d.Path, fmt.Sprintf("%sdriver branch R%d is not in the matrix; its lifecycle cannot be judged", s.who, d.Branch), srcDriverSupport)
		return
	}
	if b.EndOfLife(v.asOf) {
		typ := b.Type
		if typ == "" {
			typ = "branch"
		}
		v.add(RuleDriverEOL, "", d.Path,
			fmt.Sprintf("%s%s is on R%d (%s), past end of life (%s) as of %s: no more security or bug fixes", s.who, d.Describe(), d.Branch, typ, eolText(b), v.date(v.asOf)),
			v.branchAdvice(s.gpu, s.machine), b.Source)
	}
	if b.Type == "NFB" {
		v.add(RuleDriverNFBProd, "", d.Path,
			fmt.Sprintf("%s%s is on R%d, a New Feature Branch: short-lived, not for production, not a forward-compatibility target", s.who, d.Describe(), d.Branch),
			v.branchAdvice(s.gpu, s.machine), b.Source)
	}
}

func eolText(b matrix.DriverBranch) string {
	if b.EOL == "" {
		return "no date"
	}
	if strings.Count(b.EOL, "-") == 1 {
		if t, err := matrix.ParseMonthOrDate(b.EOL); err == nil {
			return t.AddDate(0, -1, 0).Format("January 2006")
		}
	}
	return b.EOL
}
