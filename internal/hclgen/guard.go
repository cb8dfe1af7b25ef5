package hclgen

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// Guardrails: expressions in the generated Terraform that compare versions
// numerically, component by component, so that a hand edit of a variable
// that breaks compatibility fails at `terraform plan`. They replace the
// common hand-written check that compares "535.54.14" < "535.104.05" as
// strings (which says false) with arithmetic on the components.
//
// A version "A.B.C" is compared as the number A*10^12 + B*10^6 + C; missing
// components count as 0 and each component may have up to 6 digits, which
// the format validation enforces first.

// versionFormatRE is the Terraform regex a version variable must match.
const versionFormatRE = `^[0-9]{1,6}(\\.[0-9]{1,6}){0,2}$`

// The CUDA -> driver facts come from package matrix (matrix.CUDADriverGuard,
// matrix.CUDAForwardGuard), built by the same function validate judges
// with, so the guards accept exactly what validate accepts without an error.

// versionNumberExpr is the HCL expression that turns the version held by the
// reference ref (e.g. "var.cuda_version") into its comparable number.
func versionNumberExpr(ref string) string {
	padded := `split(".", "${` + ref + `}.0.0")`
	return fmt.Sprintf("(tonumber(%[1]s[0]) * 1000000000000 + tonumber(%[1]s[1]) * 1000000 + tonumber(%[1]s[2]))", padded)
}

// versionNumber is the Go twin of versionNumberExpr for a constant version,
// written as an integer literal.
func versionNumber(v string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) == 0 || len(parts) > 3 {
		return "", fmt.Errorf("version %q: want 1 to 3 numeric components", v)
	}
	n := new(big.Int)
	for i := 0; i < 3; i++ {
		c := 0
		if i < len(parts) {
			var err error
			c, err = strconv.Atoi(parts[i])
			if err != nil || c < 0 || c > 999999 {
				return "", fmt.Errorf("version %q: component %q is not a number below 10^6", v, parts[i])
			}
		}
		n.Mul(n, big.NewInt(1000000))
		n.Add(n, big.NewInt(int64(c)))
	}
	return n.String(), nil
}

// isExactVersion reports whether s is a numeric dotted version such as
// "550.90.07" (as opposed to GKE's DEFAULT or LATEST).
func isExactVersion(s string) bool {
	_, err := versionNumber(s)
	return err == nil && s != ""
}

// versionFormatCondition is the validation condition of a version variable.
func versionFormatCondition(ref string) string {
	return fmt.Sprintf(`can(regex(%s, %s))`, "\""+versionFormatRE+"\"", ref)
}

// cudaFormatCondition is the validation condition of a CUDA version
// variable: major.minor or major.minor.patch, as validate reads them.
func cudaFormatCondition(ref string) string {
	return fmt.Sprintf(`can(regex("^[0-9]{1,6}\\.[0-9]{1,6}(\\.[0-9]{1,6})?$", %s))`, ref)
}

// noMinimum stands for "the matrix knows no native minimum" in the CUDA
// locals (numbers only).
const noMinimum = "-1"

// cudaLocals writes the CUDA table of the matrix as locals the driver
// guards read (variables.tf).
func (g *gen) cudaLocals() {
	t := matrix.CUDADriverGuard()
	num := func(m map[string]string) cty.Value {
		vals := map[string]cty.Value{}
		for k, d := range m {
			n := noMinimum
			if d != "" {
				n, _ = versionNumber(d)
			}
			vals[k] = cty.MustParseNumberVal(n)
		}
		return cty.MapVal(vals)
	}
	body := g.variables()
	comment(body,
		"CUDA -> driver facts of gpuctl's matrix, as driver numbers (A.B.C = A*10^12 + B*10^6 + C), read by the",
		"driver preconditions exactly as `gpuctl validate` reads them. Native: minimum driver of each release for",
		"full support (X.Y is X.Y GA; -1: none known); minor: the newest release of each minor, for updates the",
		"table lacks; floor: minor-version compatibility (older drivers run a release with a warning, as validate says).",
		"Sources: "+strings.Join(t.Sources, ", ")+" (as of "+t.AsOf+").")
	l := body.AppendNewBlock("locals", nil).Body()
	l.SetAttributeValue("cuda_native_min_driver", num(t.Native))
	l.SetAttributeValue("cuda_minor_min_driver", num(t.MinorNewest))
	l.SetAttributeValue("cuda_minor_compat_floor", num(t.Floors))
	l.SetAttributeValue("cuda_never_released", stringList(t.NeverReleased))
	body.AppendNewline()
}

// cudaParts are HCL expressions over the CUDA version in ref.
func cudaParts(ref string) (minorKey, releaseKey, majorKey, minorNum string) {
	minorKey = fmt.Sprintf(`join(".", [for c in slice(split(".", %s), 0, 2) : tostring(tonumber(c))])`, ref)
	releaseKey = fmt.Sprintf(`join(".", [for c in split(".", %s) : tostring(tonumber(c))])`, ref)
	majorKey = fmt.Sprintf(`tostring(tonumber(split(".", %s)[0]))`, ref)
	minorNum = fmt.Sprintf(`(tonumber(split(".", %[1]s)[0]) * 1000000 + tonumber(split(".", %[1]s)[1]))`, ref)
	return
}

// branchExpr is the driver branch (first component) of the version in ref.
func branchExpr(ref string) string { return fmt.Sprintf(`tonumber(split(".", %s)[0])`, ref) }

// inRanges is "branch lies in one of ranges" ([from, to) pairs).
func inRanges(branch string, ranges [][2]int) string {
	if len(ranges) == 0 {
		return "false"
	}
	var parts []string
	for _, r := range ranges {
		if r[1] >= 1<<30 {
			parts = append(parts, fmt.Sprintf("%s >= %d", branch, r[0]))
			continue
		}
		parts = append(parts, fmt.Sprintf("(%s >= %d && %s < %d)", branch, r[0], branch, r[1]))
	}
	return "(" + strings.Join(parts, " || ") + ")"
}

// intList is an HCL list of integers.
func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// driverGuard writes the guards of a pool whose nodes run a known exact
// driver: the <pool>_driver_version variable with the GPU's (and the machine
// type's) driver range as validations, and, where the pool has a CUDA
// version, preconditions that accept exactly the driver and CUDA pairs
// validate accepts without an error: the release's native minimum, else
// the minor-version compatibility floor of its major, else the pool's
// cuda-compat package (forward compatibility); a CUDA minor the matrix knows
// was never released fails, one outside the matrix is not judged (as
// validate says). The spec's own values must pass: generate never writes
// Terraform that fails its own precondition (a waived error stops it here).
func (g *gen) driverGuard(p *pool, lifecycle *body) error {
	if p.driver == "" {
		return nil
	}
	name := p.id + "_driver_version"
	validations, err := g.driverValidations(p, "var."+name)
	if err != nil {
		return err
	}
	variable(g.variables(), name, fmt.Sprintf("NVIDIA driver version on the nodes of pool %s (node label %s).", p.Name, LabelDriverVersion), "string", cty.StringVal(p.driver), validations...)
	cref := g.cudaRef(p)
	if cref == "" {
		return nil
	}
	if ok, why := matrix.DriverRunsCUDA(p.driver, p.cuda, p.CUDACompat, g.dataCenterGPU(p)); !ok {
		return fmt.Errorf("pool %s: driver %s and CUDA %s fail the generated guard (%s): fix the spec rather than waive the finding", p.Name, p.driver, p.cuda, why)
	}
	var fwd *matrix.ForwardGuard
	if p.CUDACompat != "" && g.dataCenterGPU(p) {
		if f, ok := matrix.CUDAForwardGuard(p.CUDACompat); ok {
			fwd = &f
		}
	}
	cudaPrecondition(lifecycle, p, "var."+name, cref, fwd)
	if fwd != nil {
		forwardPrecondition(lifecycle, p, "var."+name, cref, fwd)
	}
	return nil
}

// driverValidations are the validations of the driver variable ref of pool
// p: its format, and the driver range of its GPU and its machine type.
func (g *gen) driverValidations(p *pool, ref string) ([][2]string, error) {
	name := strings.TrimPrefix(ref, "var.")
	validations := [][2]string{{versionFormatCondition(ref), name + " must be a numeric driver version such as 550.90.07."}}
	if gpu, ok := matrix.PoolGPU(g.s.Provider, p.NodePool); ok {
		if gpu.MinDriver != "" {
			n, err := versionNumber(gpu.MinDriver)
			if err != nil {
				return nil, fmt.Errorf("pool %s: minimum driver of %s: %w", p.Name, gpu.ID, err)
			}
			validations = append(validations, [2]string{fmt.Sprintf("%s >= %s", versionNumberExpr(ref), n),
				fmt.Sprintf("%s GPUs need driver %s or newer (compared numerically).", gpu.ID, gpu.MinDriver)})
		}
		if gpu.MinDriverBranch > 0 {
			validations = append(validations, [2]string{fmt.Sprintf("%s >= %d", branchExpr(ref), gpu.MinDriverBranch),
				fmt.Sprintf("%s GPUs need an R%d or newer driver.", gpu.ID, gpu.MinDriverBranch)})
		}
		if gpu.LastDriverBranch > 0 {
			validations = append(validations, [2]string{fmt.Sprintf("%s <= %d", branchExpr(ref), gpu.LastDriverBranch),
				fmt.Sprintf("%s GPUs are supported up to the R%d driver branch.", gpu.ID, gpu.LastDriverBranch)})
		}
	}
	if !p.known {
		return validations, nil
	}
	if p.machine.MinDriverBranch > 0 {
		validations = append(validations, [2]string{fmt.Sprintf("%s >= %d", branchExpr(ref), p.machine.MinDriverBranch),
			fmt.Sprintf("%s needs an R%d or newer driver.", p.machine.Name, p.machine.MinDriverBranch)})
	}
	if p.machine.MaxDriverBranch > 0 {
		validations = append(validations, [2]string{fmt.Sprintf("%s <= %d", branchExpr(ref), p.machine.MaxDriverBranch),
			fmt.Sprintf("%s is supported up to the R%d driver branch.", p.machine.Name, p.machine.MaxDriverBranch)})
	}
	return validations, nil
}

// cudaPrecondition writes the precondition that driver ref runs CUDA cref:
// the release's native minimum, else its major's minor-version
// compatibility floor, else the cuda-compat package fwd (nil for none); a
// minor the matrix knows was never released fails, one outside it passes.
func cudaPrecondition(lifecycle *body, p *pool, ref, cref string, fwd *matrix.ForwardGuard) {
	t := matrix.CUDADriverGuard()
	mk, rk, jk, mn := cudaParts(cref)
	dn := versionNumberExpr(ref)
	native := fmt.Sprintf("lookup(local.cuda_native_min_driver, %s, lookup(local.cuda_minor_min_driver, %s, %s))", rk, mk, noMinimum)
	floor := fmt.Sprintf("lookup(local.cuda_minor_compat_floor, %s, %s)", jk, noMinimum)
	runs := fmt.Sprintf("(%[1]s >= 0 && %[2]s >= %[1]s) || (%[3]s >= 0 && %[2]s >= %[3]s)", native, dn, floor)
	if fwd != nil {
		runs += fmt.Sprintf(" || (%d >= %s && %s)", fwd.CUDA[0]*1000000+fwd.CUDA[1], mn, inRanges(branchExpr(ref), fwd.RunsOn))
	}
	lo, hi := t.Oldest[0]*1000000+t.Oldest[1], t.Newest[0]*1000000+t.Newest[1]
	cond := fmt.Sprintf("contains(local.cuda_never_released, %s) ? false : (contains(keys(local.cuda_minor_min_driver), %s) ? (%s) : (%s < %d || %s > %d))",
		mk, mk, runs, mn, lo, mn, hi)
	pre := lifecycle.AppendNewBlock("precondition", nil).Body()
	pre.SetAttributeRaw("condition", expr(cond))
	msg := fmt.Sprintf("The driver of pool %s cannot run its CUDA version: it is below the release's minimum driver and below the minor-version compatibility floor of its major", p.Name)
	if fwd != nil {
		msg += fmt.Sprintf(", and cuda-compat %s does not serve it", p.CUDACompat)
	}
	msg += ", or that CUDA version was never released (compared numerically, as `gpuctl validate` judges it: CUDA-DRIVER-MIN, CUDA-UNKNOWN)."
	pre.SetAttributeValue("error_message", cty.StringVal(msg))
}

// forwardPrecondition writes the precondition that the cuda-compat package
// fwd serves CUDA cref on driver ref: at least that CUDA, on a branch it
// runs on that is no New Feature Branch (or one that runs it natively).
func forwardPrecondition(lifecycle *body, p *pool, ref, cref string, fwd *matrix.ForwardGuard) {
	_, _, _, mn := cudaParts(cref)
	b := branchExpr(ref)
	newer := "false" // the package runs on no branch: any driver outside it fails
	if fwd.Above > 0 {
		newer = fmt.Sprintf("%s > %d", b, fwd.Above)
	}
	ok := fmt.Sprintf("%s ? !contains(%s, %s) : %s", inRanges(b, fwd.RunsOn), intList(fwd.NFB), b, newer)
	if fwd.Native > 0 {
		ok = fmt.Sprintf("%s >= %d || (%s)", b, fwd.Native, ok)
	}
	pre := lifecycle.AppendNewBlock("precondition", nil).Body()
	pre.SetAttributeRaw("condition", expr(fmt.Sprintf("%d >= %s && (%s)", fwd.CUDA[0]*1000000+fwd.CUDA[1], mn, ok)))
	pre.SetAttributeValue("error_message", cty.StringVal(fmt.Sprintf(
		"cuda-compat %s on pool %s must be at least the images' CUDA version and run on the driver's branch (not a New Feature Branch); %s (CUDA-FORWARD-COMPAT).", p.CUDACompat, p.Name, fwd.Source)))
}

// dataCenterGPU reports whether the pool's GPU is a data-center product (or
// unknown): forward compatibility serves only those.
func (g *gen) dataCenterGPU(p *pool) bool {
	gpu, ok := matrix.PoolGPU(g.s.Provider, p.NodePool)
	return !ok || gpu.DataCenter
}

// Node labels the generated Terraform sets from guarded variables, so that
// each guard variable feeds the resource it guards (and the nodes say what
// they were checked for).
const (
	// LabelDriverVersion is the NVIDIA driver version the pool's nodes run,
	// from <pool>_driver_version.
	LabelDriverVersion = "gpuctl.dev/driver-version"
	// LabelCUDAVersion is the CUDA version the pool's driver was checked
	// against, from cuda_version (or <pool>_cuda_version).
	LabelCUDAVersion = "gpuctl.dev/cuda-version"
)

// labelsExpr is the node labels of p: its static labels, merged with the
// guarded driver and CUDA variables where the pool has a driver guard.
func (g *gen) labelsExpr(p *pool) (raw, bool) {
	if p.driver == "" {
		return raw{}, false
	}
	extra := []string{fmt.Sprintf("%s = var.%s_driver_version", quote(LabelDriverVersion), p.id)}
	if ref := g.cudaRef(p); ref != "" {
		extra = append(extra, fmt.Sprintf("%s = %s", quote(LabelCUDAVersion), ref))
	}
	sort.Strings(extra)
	return expr(fmt.Sprintf("merge(%s, {\n%s\n})", mapTokens(p.labels).text, strings.Join(extra, "\n"))), true
}

// setLabels writes attr (labels) of a pool resource.
func (g *gen) setLabels(body *body, attr string, p *pool) {
	if toks, ok := g.labelsExpr(p); ok {
		body.SetAttributeRaw(attr, toks)
		return
	}
	body.SetAttributeRaw(attr, mapTokens(p.labels))
}
