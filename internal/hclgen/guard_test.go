package hclgen

import (
	"fmt"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// terraformFunctions are the Terraform functions the guardrails use, from
// go-cty's function library (and HCL's can).
var terraformFunctions = map[string]function.Function{
	"can":      tryfunc.CanFunc,
	"contains": stdlib.ContainsFunc,
	"floor":    stdlib.FloorFunc,
	"length":   stdlib.LengthFunc,
	"lookup":   stdlib.LookupFunc,
	"regex":    stdlib.RegexFunc,
	"split":    stdlib.SplitFunc,
	"tonumber": stdlib.MakeToFunc(cty.Number),
}

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
	precondition []hcl.Expression
}

func parseGuards(t *testing.T, cs *spec.ClusterSpec) guards {
	t.Helper()
	files, err := Generate(cs, Options{SpecFile: "g.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	g := guards{validations: map[string][]hcl.Expression{}, defaults: map[string]cty.Value{}}
	for _, f := range files {
		hf, diags := hclparse.NewParser().ParseHCL(f.Data, f.Name)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		for _, b := range hf.Body.(*hclsyntax.Body).Blocks {
			switch b.Type {
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
	for k, v := range g.defaults {
		vals[k] = v
	}
	for k, v := range vars {
		vals[k] = cty.StringVal(v)
	}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vals)}, Functions: terraformFunctions}
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

func TestGuardrailsCompareNumerically(t *testing.T) {
	// From matrix's tables: CUDA 12.2.2 (12.2 Update 2) needs 535.104.05;
	// H100 needs R525 or newer.
	if d, ok := MinDriverForCUDA("12.2.2"); !ok || d != "535.104.05" {
		t.Fatalf("matrix: CUDA 12.2.2 needs %q, %v; the cases below assume 535.104.05", d, ok)
	}
	if d, ok := MinDriverForGPU("H100-SXM"); !ok || !isExactVersion(d) {
		t.Fatalf("matrix: no minimum driver for H100-SXM (%q)", d)
	}
	gpuMin, _ := MinDriverForGPU("H100-SXM")
	g := parseGuards(t, guardedSpec("535.129.03", "12.2.2"))
	if len(g.precondition) != 2 {
		t.Fatalf("want 2 preconditions (CUDA major floor, exact CUDA minimum), got %d", len(g.precondition))
	}
	cases := []struct {
		driver, cuda string
		ok           bool
	}{
		{"535.129.03", "12.2.2", true},
		{"535.104.05", "12.2.2", true},
		{"535.54.14", "12.2.2", false}, // "535.54.14" >= "535.104.05" as strings, older as numbers
		{"535.54.14", "12.2", true},    // 12.2 GA needs 535.54.03; only the 12.x floor is checked here
		{"525.60.13", "12.4", true},    // minor-version compatibility floor of 12.x
		{"525.60.12", "12.4", false},
		{"520.61.05", "12.0", false},
		{"575.57.08", "13.0", false}, // 13.x needs R580
		{"580.65.06", "13.0", true},
		{"1000.1", "13.0", true}, // 1000 > 580 (as strings "1000" < "580")
	}
	for _, c := range cases {
		vars := map[string]string{"train_driver_version": c.driver, "cuda_version": c.cuda}
		got := g.eval(t, g.validations["train_driver_version"], vars) && g.eval(t, g.validations["cuda_version"], vars) && g.eval(t, g.precondition, vars)
		if got != c.ok {
			t.Errorf("driver %s, CUDA %s: guardrails say %v, want %v", c.driver, c.cuda, got, c.ok)
		}
	}
	// The GPU's minimum driver is a validation of the driver variable.
	for drv, ok := range map[string]bool{"580.95.05": true, "470.256.02": false, gpuMin: true} {
		if got := g.eval(t, g.validations["train_driver_version"], map[string]string{"train_driver_version": drv}); got != ok {
			t.Errorf("H100 with driver %s: validation says %v, want %v", drv, got, ok)
		}
	}
	// Malformed values fail the format validations instead of erroring later.
	for _, bad := range []string{"", "535", "latest", "535.104.05.1", "535..1", "v535.1"} {
		if bad == "535" {
			continue // a bare branch is a valid version (535.0.0)
		}
		if g.eval(t, g.validations["train_driver_version"], map[string]string{"train_driver_version": bad}) {
			t.Errorf("driver %q passed the format validation", bad)
		}
	}
	for _, bad := range []string{"12.x", "twelve", "14.0"} {
		if g.eval(t, g.validations["cuda_version"], map[string]string{"cuda_version": bad}) {
			t.Errorf("CUDA %q passed the validation", bad)
		}
	}
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
