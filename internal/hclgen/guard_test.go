package hclgen

import (
	"fmt"
	"path/filepath"
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
// without a cuda-compat package) and, for each, evaluates the generated
// guards (variable validations and preconditions, with the Terraform
// functions they use) and runs validate on a spec with that driver and CUDA
// version: the guards must pass exactly when validate reports no error from
// the driver and CUDA rules.
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
	asOf := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	n, disagree := 0, 0
	for _, compat := range []string{"", "13.0"} {
		base := guardedSpec("580.95.05", "12.8")
		base.Spec.NodePools[0].CUDACompat = compat
		g := parseGuards(t, base)
		if len(g.precondition) == 0 {
			t.Fatal("no driver precondition generated")
		}
		for _, d := range sortedKeys(drivers) {
			for _, c := range sortedKeys(cudas) {
				cs := guardedSpec(d, c)
				cs.Spec.NodePools[0].CUDACompat = compat
				var errs []string
				for _, f := range rules.Validate(cs, rules.Options{AsOf: asOf}) {
					if f.Severity == diag.SeverityError && judged[f.Rule] {
						errs = append(errs, f.Rule+": "+f.Message)
					}
				}
				vars := map[string]string{"train_driver_version": d, "cuda_version": c}
				guard := g.eval(t, g.validations["train_driver_version"], vars) && g.eval(t, g.validations["cuda_version"], vars) && g.eval(t, g.precondition, vars)
				n++
				if guard != (len(errs) == 0) {
					disagree++
					if disagree <= 20 {
						t.Errorf("cudaCompat %q, driver %s, CUDA %s: guard passes %v; validate errors %q", compat, d, c, guard, errs)
					}
				}
				if ok, why := matrix.DriverRunsCUDA(d, c, compat, true); ok != (len(cudaErrs(errs)) == 0) {
					t.Errorf("cudaCompat %q, driver %s, CUDA %s: DriverRunsCUDA says %v (%s); validate errors %q", compat, d, c, ok, why, errs)
				}
			}
		}
	}
	if disagree > 0 {
		t.Errorf("%d of %d pairs disagree", disagree, n)
	}
	t.Logf("%d driver x CUDA x cudaCompat cases agree", n)
	if n < 1000 {
		t.Errorf("only %d pairs enumerated", n)
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
