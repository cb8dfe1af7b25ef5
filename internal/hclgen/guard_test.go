package hclgen

import (
	"cmp"
	"fmt"
	"math/big"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// terraformFunctions are the Terraform functions the guardrails use, from
// go-cty's function library (and HCL's can).
var terraformFunctions = map[string]function.Function{
	"can":      tryfunc.CanFunc,
	"alltrue":  allTrueFunc,
	"contains": stdlib.ContainsFunc,
	"distinct": stdlib.DistinctFunc,
	"flatten":  stdlib.FlattenFunc,
	"floor":    stdlib.FloorFunc,
	"join":     stdlib.JoinFunc,
	"keys":     stdlib.KeysFunc,
	"length":   stdlib.LengthFunc,
	"lookup":   stdlib.LookupFunc,
	"merge":    stdlib.MergeFunc,
	"regex":    stdlib.RegexFunc,
	"slice":    stdlib.SliceFunc,
	"split":    stdlib.SplitFunc,
	"tonumber": stdlib.MakeToFunc(cty.Number),
	"tostring": stdlib.MakeToFunc(cty.String),
	"values":   stdlib.ValuesFunc,
}

// allTrueFunc is Terraform's alltrue (go-cty's stdlib has none): true when
// every element of a list of bools is true (an empty list is true).
var allTrueFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Bool)}},
	Type:   function.StaticReturnType(cty.Bool),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		for it := args[0].ElementIterator(); it.Next(); {
			_, v := it.Element()
			if v.IsNull() || !v.True() {
				return cty.False, nil
			}
		}
		return cty.True, nil
	},
})

// guardedSpec is an EKS pool whose nodes run an exact driver (a custom AMI),
// so the Terraform carries numeric version guardrails.
func guardedSpec(driver, cuda string) *spec.ClusterSpec {
	return &spec.ClusterSpec{Metadata: spec.Metadata{Name: "g"}, Spec: spec.Spec{
		Provider: spec.ProviderEKS, ClusterName: "c", CUDA: cuda,
		Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: spec.DevicePluginHelm}},
		NodePools: []spec.NodePool{{
			Name: "train", Role: spec.RoleTraining, MachineType: "p5.48xlarge", OSImage: "CUSTOM",
			GPU:         spec.GPU{Count: 8, Driver: driver},
			Autoscaling: spec.Autoscaling{Max: 2},
		}},
	}}
}

type guards struct {
	validations  map[string][]hcl.Expression // variable -> conditions
	defaults     map[string]cty.Value
	locals       map[string]cty.Value
	precondition []hcl.Expression
}

func parseGuards(t *testing.T, cs *spec.ClusterSpec) guards {
	t.Helper()
	files, err := Generate(cs, Options{SpecFile: "g.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	g := guards{validations: map[string][]hcl.Expression{}, defaults: map[string]cty.Value{}, locals: map[string]cty.Value{}}
	for _, f := range files {
		hf, diags := hclparse.NewParser().ParseHCL(f.Data, f.Name)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		for _, b := range hf.Body.(*hclsyntax.Body).Blocks {
			switch b.Type {
			case "locals":
				for name, a := range b.Body.Attributes {
					v, diags := a.Expr.Value(&hcl.EvalContext{Functions: terraformFunctions})
					if diags.HasErrors() {
						t.Fatalf("local %s: %s", name, diags.Error())
					}
					g.locals[name] = v
				}
			case "variable":
				if d, ok := b.Body.Attributes["default"]; ok {
					v, _ := d.Expr.Value(nil)
					g.defaults[b.Labels[0]] = v
				}
				for _, vb := range b.Body.Blocks {
					g.validations[b.Labels[0]] = append(g.validations[b.Labels[0]], vb.Body.Attributes["condition"].Expr)
				}
			case "resource":
				for _, lc := range b.Body.Blocks {
					if lc.Type != "lifecycle" {
						continue
					}
					for _, pre := range lc.Body.Blocks {
						g.precondition = append(g.precondition, pre.Body.Attributes["condition"].Expr)
					}
				}
			}
		}
	}
	return g
}

// eval evaluates conditions with the variables set to vars (others at their
// defaults) and reports whether all hold.
func (g guards) eval(t *testing.T, exprs []hcl.Expression, vars map[string]string) bool {
	t.Helper()
	vals := map[string]cty.Value{}
	for k, v := range vars {
		vals[k] = cty.StringVal(v)
	}
	return g.evalValues(t, exprs, vals)
}

// evalValues is eval with values of any type.
func (g guards) evalValues(t *testing.T, exprs []hcl.Expression, set map[string]cty.Value) bool {
	t.Helper()
	vals := map[string]cty.Value{}
	for k, v := range g.defaults {
		vals[k] = v
	}
	for k, v := range set {
		vals[k] = v
	}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vals), "local": cty.ObjectVal(g.locals)}, Functions: terraformFunctions}
	for _, e := range exprs {
		v, diags := e.Value(ctx)
		if diags.HasErrors() {
			// Terraform treats an error in a condition as a failed check.
			return false
		}
		if v.IsNull() || !v.True() {
			return false
		}
	}
	return true
}

// TestGuardAgreesWithValidate enumerates driver x CUDA pairs (with and
// without a cuda-compat package): every driver and CUDA version of the
// matrix's tables, each driver minimum with the version just below it, one
// driver per branch, and versions outside the tables. On every pair it runs
// validate (the driver and CUDA rules) and DriverRunsCUDA; the generated
// guards (variable validations and preconditions, evaluated with the
// Terraform functions they use) must pass exactly when validate reports no
// error.
//
// Evaluating the guards is what costs (about 1 ms a pair in cty), so they
// are evaluated once per equivalence class of pairs. The guards read a CUDA
// version only through the facts cudaClass lists (its release's native
// minimum, else its minor's; its major's compatibility floor; whether its
// minor was never released, is in the table or lies outside the table's
// range; whether the cuda-compat package covers it; its format) and a driver
// only through driverClass (its branch, which every branch range, NFB list
// and GPU or machine bound compares, and its order against the class's
// native minimum, floor and the GPU's minimum driver; its format). Two pairs
// of one class therefore get the same guard verdict, and the test holds
// validate to one verdict per class on every pair: a pair where validate
// judges by a fact the guards cannot see fails here, as it would have failed
// the guard.
func TestGuardAgreesWithValidate(t *testing.T) {
	judged := map[string]bool{rules.RuleCUDADriverMin: true, rules.RuleCUDAUnknown: true, rules.RuleCUDAForwardCompat: true,
		rules.RuleSpecVersion: true, rules.RuleGPUDriverBranch: true}
	tab := matrix.CUDADriverGuard()
	drivers := map[string]bool{"1000.1": true, "470.256.02": true}
	for _, m := range []map[string]string{tab.Native, tab.Floors} {
		for _, d := range m {
			if d == "" {
				continue
			}
			drivers[d] = true
			for _, n := range neighbours(d) {
				drivers[n] = true
			}
		}
	}
	for _, b := range matrix.DriverBranches() {
		drivers[fmt.Sprintf("%d.10.01", b.Branch)] = true
	}
	cudas := map[string]bool{"10.2": true, "14.0": true, "13.6": true, "12.10": true, "11.9": true, "12.7.1": true, "12.4.9": true, "13.5.7": true}
	for k := range tab.Native {
		cudas[k] = true
	}
	for _, k := range tab.NeverReleased {
		cudas[k] = true
	}
	gpu, ok := matrix.PoolGPU(spec.ProviderEKS, &guardedSpec("", "").Spec.NodePools[0])
	machine, known := LookupMachine(spec.ProviderEKS, guardedSpec("", "").Spec.NodePools[0].MachineType)
	if !ok || !known {
		t.Fatal("the guarded pool's GPU or machine type is not in the matrix")
	}
	asOf := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	n, disagree, classes := 0, 0, 0
	for _, compat := range []string{"", "13.0"} {
		base := guardedSpec("580.95.05", "12.8")
		base.Spec.NodePools[0].CUDACompat = compat
		g := parseGuards(t, base)
		if len(g.precondition) == 0 {
			t.Fatal("no driver precondition generated")
		}
		var fwd *matrix.ForwardGuard
		if f, ok := matrix.CUDAForwardGuard(compat); ok {
			fwd = &f
		}
		bf := newBranchFacts(gpu, machine, fwd)
		verdicts := map[string]bool{} // class -> validate's verdict (no error) on its first pair
		for _, c := range sortedKeys(cudas) {
			cc := cudaClass(tab, fwd, c)
			for _, d := range sortedKeys(drivers) {
				cs := guardedSpec(d, c)
				cs.Spec.NodePools[0].CUDACompat = compat
				var errs []string
				for _, f := range rules.Validate(cs, rules.Options{AsOf: asOf}) {
					if f.Severity == diag.SeverityError && judged[f.Rule] {
						errs = append(errs, f.Rule+": "+f.Message)
					}
				}
				n++
				if ok, why := matrix.DriverRunsCUDA(d, c, compat, true); ok != (len(cudaErrs(errs)) == 0) {
					t.Errorf("cudaCompat %q, driver %s, CUDA %s: DriverRunsCUDA says %v (%s); validate errors %q", compat, d, c, ok, why, errs)
				}
				key := cc.key + " " + driverClass(d, cc, gpu.MinDriver, bf)
				valid, seen := verdicts[key]
				if seen {
					if valid != (len(errs) == 0) {
						t.Errorf("cudaCompat %q, driver %s, CUDA %s: validate errors %q, but not on the first pair of its class %s: it judges by a fact the guards do not read", compat, d, c, errs, key)
					}
					continue
				}
				verdicts[key] = len(errs) == 0
				classes++
				vars := map[string]string{"train_driver_version": d, "cuda_version": c}
				guard := g.eval(t, g.validations["train_driver_version"], vars) && g.eval(t, g.validations["cuda_version"], vars) && g.eval(t, g.precondition, vars)
				if guard != (len(errs) == 0) {
					disagree++
					if disagree <= 20 {
						t.Errorf("cudaCompat %q, driver %s, CUDA %s: guard passes %v; validate errors %q", compat, d, c, guard, errs)
					}
				}
			}
		}
	}
	t.Logf("%d driver x CUDA x cudaCompat cases in %d classes", n, classes)
	if n < 1000 || classes < 200 {
		t.Errorf("only %d pairs in %d classes enumerated", n, classes)
	}
	if disagree > 0 {
		t.Errorf("%d of %d classes disagree", disagree, classes)
	}
	// The cases: 535.129.03 with CUDA 12.4 is a warning in validate
	// (minor-version compatibility), so the guard passes; 535 with CUDA
	// 12.8 likewise; a driver below the 12.x floor fails.
	g := parseGuards(t, guardedSpec("580.95.05", "12.8"))
	for _, c := range []struct {
		driver, cuda string
		ok           bool
	}{
		{"535.129.03", "12.4", true},
		{"535.129.03", "12.8", true},
		{"535.54.14", "12.2.2", true}, // "535.54.14" >= "535.104.05" as strings; older as numbers, but above the 12.x floor
		{"525.60.12", "12.4", false},
		{"575.57.08", "13.0", false}, // 13.x floor is 580.65.06
		{"1000.1", "13.0", true},     // 1000 > 580 (as strings "1000" < "580")
		{"580.95.05", "12.7", false}, // never released
		{"580.95.05", "14.0", true},  // outside the matrix: not judged
	} {
		vars := map[string]string{"train_driver_version": c.driver, "cuda_version": c.cuda}
		got := g.eval(t, g.validations["train_driver_version"], vars) && g.eval(t, g.validations["cuda_version"], vars) && g.eval(t, g.precondition, vars)
		if got != c.ok {
			t.Errorf("driver %s, CUDA %s: guard says %v, want %v", c.driver, c.cuda, got, c.ok)
		}
	}
	for _, bad := range []string{"", "latest", "535.104.05.1", "535..1", "v535.1"} {
		if g.eval(t, g.validations["train_driver_version"], map[string]string{"train_driver_version": bad}) {
			t.Errorf("driver %q passed the format validation", bad)
		}
	}
	for _, bad := range []string{"12.x", "twelve", "12", "12.4.1.1"} {
		if g.eval(t, g.validations["cuda_version"], map[string]string{"cuda_version": bad}) {
			t.Errorf("CUDA %q passed the validation", bad)
		}
	}
}

// cudaFormat and driverFormat are the format validations of the CUDA and
// driver variables (cudaFormatCondition, versionFormatRE).
var (
	cudaFormat   = regexp.MustCompile(`^[0-9]{1,6}\.[0-9]{1,6}(\.[0-9]{1,6})?$`)
	driverFormat = regexp.MustCompile(`^[0-9]{1,6}(\.[0-9]{1,6}){0,2}$`)
)

// cudaFacts is what the generated guards read of one CUDA version: key
// names its class; native and floor (version strings, "" for none) are the
// thresholds its drivers are ordered against.
type cudaFacts struct {
	key, native, floor string
}

// cudaClass is the class of CUDA version c under the CUDA table tab and the
// pool's cuda-compat package fwd (nil for none), as the precondition reads
// it: a minor in cuda_never_released fails whatever the driver; one that
// is not in the table passes when it lies outside the table's minor range
// and fails inside it; for one in the table, the release's native minimum
// (cuda_native_min_driver by release, else cuda_minor_min_driver by minor),
// its major's cuda_minor_compat_floor and whether the package's CUDA covers
// it. The format validation comes first; the cuda-compat precondition reads
// the package's CUDA bound on every version.
func cudaClass(tab matrix.CUDAGuard, fwd *matrix.ForwardGuard, c string) cudaFacts {
	if !cudaFormat.MatchString(c) {
		return cudaFacts{key: "cuda{format=false}"}
	}
	parts := strings.Split(c, ".")
	nums := make([]string, len(parts))
	for i, p := range parts {
		v, _ := strconv.Atoi(p)
		nums[i] = strconv.Itoa(v)
	}
	mk := nums[0] + "." + nums[1]
	major, _ := strconv.Atoi(nums[0])
	minor, _ := strconv.Atoi(nums[1])
	mn := major*1000000 + minor
	covered := fwd != nil && fwd.CUDA[0]*1000000+fwd.CUDA[1] >= mn
	if slices.Contains(tab.NeverReleased, mk) {
		return cudaFacts{key: fmt.Sprintf("cuda{never-released compat=%v}", covered)}
	}
	if _, known := tab.MinorNewest[mk]; !known {
		outside := mn < tab.Oldest[0]*1000000+tab.Oldest[1] || mn > tab.Newest[0]*1000000+tab.Newest[1]
		return cudaFacts{key: fmt.Sprintf("cuda{unlisted outside=%v compat=%v}", outside, covered)}
	}
	native, hasNative := tab.Native[strings.Join(nums, ".")]
	if !hasNative {
		native = tab.MinorNewest[mk]
	}
	floor, hasFloor := tab.Floors[nums[0]]
	return cudaFacts{native: native, floor: floor, key: fmt.Sprintf("cuda{native=%q floor=%v:%q compat=%v}", native, hasFloor, floor, covered)}
}

// driverClass is the class of driver d against the facts of a CUDA class,
// the GPU's minimum driver gpuMin and the branch facts bf: its order (-1, 0,
// 1; 2 where there is no threshold) against each driver threshold, its
// branch's class and its format.
func driverClass(d string, c cudaFacts, gpuMin string, bf branchFacts) string {
	format := driverFormat.MatchString(d)
	head, _, _ := strings.Cut(d, ".")
	branch, _ := strconv.Atoi(head)
	return fmt.Sprintf("driver{format=%v branch=%s native=%d floor=%d gpu=%d}",
		format, bf.class(branch), versionOrder(d, c.native), versionOrder(d, c.floor), versionOrder(d, gpuMin))
}

// branchFacts are the driver branches the guards compare a driver's branch
// with: the GPU's and the machine type's branch bounds, the cuda-compat
// package's branch ranges, native and newest branch (bounds), and its New
// Feature Branches (nfb).
type branchFacts struct {
	bounds []int
	nfb    []int
}

func newBranchFacts(gpu matrix.GPUProduct, m Machine, fwd *matrix.ForwardGuard) branchFacts {
	bf := branchFacts{bounds: []int{gpu.MinDriverBranch, gpu.LastDriverBranch, m.MinDriverBranch, m.MaxDriverBranch}}
	if fwd != nil {
		bf.bounds = append(bf.bounds, fwd.Native, fwd.Above)
		for _, r := range fwd.RunsOn {
			bf.bounds = append(bf.bounds, r[0], r[1])
		}
		bf.nfb = fwd.NFB
	}
	return bf
}

// class is branch b's order against every bound and whether it is a New
// Feature Branch.
func (bf branchFacts) class(b int) string {
	order := make([]int, len(bf.bounds))
	for i, x := range bf.bounds {
		order[i] = cmp.Compare(b, x)
	}
	return fmt.Sprintf("%v nfb=%v", order, slices.Contains(bf.nfb, b))
}

// versionOrder compares versions a and b numerically (versionNumber): -1,
// 0 or 1; 2 where b is empty or either is not a version.
func versionOrder(a, b string) int {
	x, errA := versionNumber(a)
	y, errB := versionNumber(b)
	if b == "" || errA != nil || errB != nil {
		return 2
	}
	var bx, by big.Int
	bx.SetString(x, 10)
	by.SetString(y, 10)
	return bx.Cmp(&by)
}

// cudaErrs drops GPU-DRIVER-BRANCH findings (DriverRunsCUDA judges only the
// CUDA rules).
func cudaErrs(errs []string) []string {
	var out []string
	for _, e := range errs {
		if !strings.HasPrefix(e, rules.RuleGPUDriverBranch+":") {
			out = append(out, e)
		}
	}
	return out
}

// neighbours are the versions just below d (in its last component; for a
// bare branch, the newest version of the branch before).
func neighbours(d string) []string {
	parts := strings.Split(d, ".")
	last, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range []int{last - 1} {
		if n < 0 {
			continue
		}
		p := append(append([]string(nil), parts[:len(parts)-1]...), strconv.Itoa(n))
		out = append(out, strings.Join(p, "."))
	}
	if len(parts) == 1 {
		out = append(out, fmt.Sprintf("%d.99.99", last-1))
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestGKEDriverGuardrails(t *testing.T) {
	cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "g"}, Spec: spec.Spec{
		Provider: spec.ProviderGKE, ClusterName: "c", Region: "r",
		NodePools: []spec.NodePool{
			{Name: "cos", MachineType: "a3-highgpu-8g", OSImage: "COS_CONTAINERD", GPU: spec.GPU{Driver: "LATEST"}, Autoscaling: spec.Autoscaling{Max: 1}},
			{Name: "ubuntu", MachineType: "g2-standard-24", OSImage: "UBUNTU_CONTAINERD", GPU: spec.GPU{Driver: "DEFAULT"}, Autoscaling: spec.Autoscaling{Max: 1}},
		},
	}}
	g := parseGuards(t, cs)
	for _, c := range []struct {
		name, value string
		ok          bool
	}{
		{"cos_gpu_driver_version", "LATEST", true},
		{"cos_gpu_driver_version", "535.129.03", false},
		{"ubuntu_gpu_driver_version", "LATEST", false}, // COS only
		{"ubuntu_gpu_driver_version", "DEFAULT", true},
		{"cos_gpu_type", "nvidia-h100-80gb", true},
		{"cos_gpu_type", "nvidia-h100-mega-80gb", false}, // a3-highgpu has H100 80GB
		{"ubuntu_gpu_type", "nvidia-tesla-a100", false},
	} {
		if got := g.eval(t, g.validations[c.name], map[string]string{c.name: c.value}); got != c.ok {
			t.Errorf("%s = %s: validation says %v, want %v", c.name, c.value, got, c.ok)
		}
	}
	for count, ok := range map[int]bool{8: true, 4: false, 1: false} {
		vals := map[string]cty.Value{}
		for k, v := range g.defaults {
			vals[k] = v
		}
		vals["cos_gpu_count"] = cty.NumberIntVal(int64(count))
		ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vals)}, Functions: terraformFunctions}
		all := true
		for _, e := range g.validations["cos_gpu_count"] {
			v, diags := e.Value(ctx)
			all = all && !diags.HasErrors() && v.True()
		}
		if all != ok {
			t.Errorf("a3-highgpu-8g with %d GPUs: validation says %v, want %v", count, all, ok)
		}
	}
}

func TestVersionNumber(t *testing.T) {
	for v, want := range map[string]string{"535.104.05": "535000104000005", "12.4": "12000004000000", "1000": "1000000000000000"} {
		got, err := versionNumber(v)
		if err != nil || got != want {
			t.Errorf("versionNumber(%q) = %s, %v; want %s", v, got, err, want)
		}
	}
	if _, err := versionNumber("535.x"); err == nil {
		t.Error("versionNumber accepted 535.x")
	}
	_ = fmt.Sprint
}

// TestGuardGolden holds the generated guards of a pool with an exact driver
// and a cuda-compat package (no example pins one) in golden files.
func TestGuardGolden(t *testing.T) {
	cs := guardedSpec("570.195.03", "12.8")
	cs.Spec.NodePools[0].CUDACompat = "13.0"
	cs.Spec.NodePools[0].CUDA = "13.0"
	files, err := Generate(cs, Options{SpecFile: "guarded.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name == "variables.tf" || f.Name == "node_pools.tf" {
			golden.Compare(t, filepath.Join("testdata", "golden-guard", f.Name), f.Data, *update)
		}
	}
}

// TestEKSPerPoolSubnets: each node group of examples/eks-p5-g6.yaml gets the
// subnets of its own zones, and the placement-group pool takes one zone only.
func TestEKSPerPoolSubnets(t *testing.T) {
	var cs *spec.ClusterSpec
	for _, ex := range golden.ValidExamples(t, "../../examples/eks-p5-g6.yaml", asOf) {
		if ex.Env == "" {
			cs = ex.Spec
		}
	}
	files, err := Generate(cs, Options{SpecFile: "x.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	g := parseGuards(t, cs)
	byZone := cty.MapVal(map[string]cty.Value{
		"us-east-1a": cty.ListVal([]cty.Value{cty.StringVal("subnet-a")}),
		"us-east-1b": cty.ListVal([]cty.Value{cty.StringVal("subnet-b")}),
	})
	vals := map[string]cty.Value{"subnet_ids_by_zone": byZone}
	for k, v := range g.defaults {
		vals[k] = v
	}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vals)}, Functions: terraformFunctions}
	want := map[string][]string{"train_h100": {"subnet-a"}, "infer_l4": {"subnet-a", "subnet-b"}}
	for _, f := range files {
		if f.Name != "node_pools.tf" {
			continue
		}
		hf, _ := hclparse.NewParser().ParseHCL(f.Data, f.Name)
		for _, b := range hf.Body.(*hclsyntax.Body).Blocks {
			if b.Type != "resource" || b.Labels[0] != "aws_eks_node_group" {
				continue
			}
			v, diags := b.Body.Attributes["subnet_ids"].Expr.Value(ctx)
			if diags.HasErrors() {
				t.Fatalf("%s: %s", b.Labels[1], diags.Error())
			}
			var got []string
			for _, s := range v.AsValueSlice() {
				got = append(got, s.AsString())
			}
			if fmt.Sprint(got) != fmt.Sprint(want[b.Labels[1]]) {
				t.Errorf("%s: subnets %v, want %v", b.Labels[1], got, want[b.Labels[1]])
			}
			delete(want, b.Labels[1])
		}
	}
	if len(want) > 0 {
		t.Errorf("node groups missing: %v", want)
	}
	two := cty.ListVal([]cty.Value{cty.StringVal("us-east-1a"), cty.StringVal("us-east-1b")})
	vals["train_h100_zones"] = two
	ctx.Variables["var"] = cty.ObjectVal(vals)
	ok := true
	for _, e := range g.validations["train_h100_zones"] {
		v, diags := e.Value(ctx)
		ok = ok && !diags.HasErrors() && v.True()
	}
	if ok {
		t.Error("the placement-group pool accepted two zones")
	}
}
