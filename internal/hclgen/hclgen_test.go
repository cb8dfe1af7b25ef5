package hclgen

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestGolden generates every valid example environment and compares with
// testdata/golden/<example>/<env>/; -update rewrites them.
func TestGolden(t *testing.T) {
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		t.Run(ex.Dir, func(t *testing.T) {
			files, err := Generate(ex.Spec, Options{SpecFile: ex.Name + ".yaml", Environment: ex.Env})
			if err != nil {
				t.Fatal(err)
			}
			again, err := Generate(ex.Spec, Options{SpecFile: ex.Name + ".yaml", Environment: ex.Env})
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range files {
				if !bytes.Equal(f.Data, again[i].Data) {
					t.Errorf("%s: two runs differ", f.Name)
				}
				golden.Compare(t, filepath.Join("testdata", "golden", ex.Dir, f.Name), f.Data, *update)
			}
		})
	}
}

// TestEscaping feeds template sequences and quotes straight to hclgen (no
// validation in between) and checks that every value reads back literally.
func TestEscaping(t *testing.T) {
	evil := []string{
		`${file("/etc/passwd")}`,
		`%{ for x in y }${x}%{ endfor }`,
		`"} resource "null_resource" "x" {`,
		"line\nbreak } # not a comment",
		`\" $${ok} %%{ok}`,
	}
	for _, provider := range []string{spec.ProviderGKE, spec.ProviderEKS} {
		for _, s := range evil {
			labels := map[string]string{"x": s, s: "key"}
			cs := &spec.ClusterSpec{Metadata: spec.Metadata{Name: s}, Spec: spec.Spec{
				Provider: provider, Region: s, ClusterName: s, CUDA: "12.4",
				Tags: map[string]string{"team": s},
				NodePools: []spec.NodePool{{
					Name: s, Role: spec.RoleTraining, MachineType: s, Zones: []string{s}, OSImage: s,
					GPU:      spec.GPU{Type: "nvidia-" + s, Count: 1, Driver: "550.90.07"},
					Capacity: spec.CapacityReservation, Reservation: s,
					Autoscaling: spec.Autoscaling{Min: 0, Max: 2}, DiskSizeGB: 100, Labels: labels,
					Taints:            []spec.Taint{{Key: s, Value: s, Effect: "NoSchedule"}},
					PlacementGroup:    s,
					MaintenanceWindow: s,
				}},
			}}
			files, err := Generate(cs, Options{SpecFile: s, Environment: s})
			if err != nil {
				t.Fatalf("%s %q: %v", provider, s, err)
			}
			parser := hclparse.NewParser()
			for _, f := range files {
				hf, diags := parser.ParseHCL(f.Data, f.Name)
				if diags.HasErrors() {
					t.Fatalf("%s %q: %s does not parse: %s\n%s", provider, s, f.Name, diags.Error(), f.Data)
				}
				body := hf.Body.(*hclsyntax.Body)
				for _, b := range body.Blocks {
					if b.Type != "resource" {
						continue
					}
					if len(b.Labels) != 2 || !identRE.MatchString(b.Labels[1]) {
						t.Errorf("resource label %q is not an identifier", b.Labels)
					}
					want := map[string]cty.Value{}
					switch b.Labels[0] {
					case "google_container_node_pool":
						want["name"] = cty.StringVal(s)
						nc := findBlock(b.Body, "node_config")
						checkAttr(t, nc, "labels", func(v cty.Value) {
							got := v.AsValueMap()
							if got["x"].AsString() != s || got[s].AsString() != "key" {
								t.Errorf("labels read back as %#v", v)
							}
						})
						checkAttr(t, nc, "machine_type", func(v cty.Value) {
							if v.AsString() != s {
								t.Errorf("machine_type = %q, want %q", v.AsString(), s)
							}
						})
					case "aws_eks_node_group":
						want["node_group_name"] = cty.StringVal(s)
						checkAttr(t, b.Body, "tags", func(v cty.Value) {
							if v.AsValueMap()["team"].AsString() != s {
								t.Errorf("tags read back as %#v", v)
							}
						})
					case "aws_launch_template":
						pl := findBlock(b.Body, "placement")
						checkAttr(t, pl, "group_name", func(v cty.Value) {
							if v.AsString() != s {
								t.Errorf("placement group = %q, want %q", v.AsString(), s)
							}
						})
					}
					for name, w := range want {
						checkAttr(t, b.Body, name, func(v cty.Value) {
							if !v.RawEquals(w) {
								t.Errorf("%s = %#v, want %#v", name, v, w)
							}
						})
					}
				}
			}
		}
	}
}

func findBlock(body *hclsyntax.Body, typ string) *hclsyntax.Body {
	for _, b := range body.Blocks {
		if b.Type == typ {
			return b.Body
		}
	}
	return nil
}

func checkAttr(t *testing.T, body *hclsyntax.Body, name string, check func(cty.Value)) {
	t.Helper()
	if body == nil {
		t.Errorf("block with %s missing", name)
		return
	}
	a, ok := body.Attributes[name]
	if !ok {
		t.Errorf("attribute %s missing", name)
		return
	}
	// Guarded labels merge variables in (gpuctl.dev/driver-version): those
	// read as "var" here; every literal must still read back as written.
	vars := map[string]cty.Value{}
	for _, tr := range a.Expr.Variables() {
		if tr.RootName() == "var" && len(tr) > 1 {
			if at, ok := tr[1].(hcl.TraverseAttr); ok {
				vars[at.Name] = cty.StringVal("var")
			}
		}
	}
	v, diags := a.Expr.Value(&hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vars)}, Functions: terraformFunctions})
	if diags.HasErrors() {
		t.Errorf("%s does not evaluate to a literal: %s", name, diags.Error())
		return
	}
	check(v)
}

func TestIdent(t *testing.T) {
	for in, want := range map[string]string{"train-h100": "train_h100", "9x": "p_9x", "": "p_", "A.b/c": "a_b_c"} {
		if got := ident(in); got != want || !identRE.MatchString(got) {
			t.Errorf("ident(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGPUDirectTCPXNetworks: an A3 High pool whose workloads use
// GPUDirect-TCPX gets its 4 GPU NIC networks, and the variable's validation
// rejects another count.
func TestGPUDirectTCPXNetworks(t *testing.T) {
	doc, err := spec.Load("../../examples/gke-h100-l4.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := doc.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Generate(cs, Options{SpecFile: "gke-h100-l4.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range out {
		files[filepath.Base(f.Name)] = f.Data
	}
	pools := string(files["node_pools.tf"])
	if got := strings.Count(pools, "additional_node_network_configs {"); got != 4 {
		t.Fatalf("additional_node_network_configs blocks = %d, want 4 for GPUDirect-TCPX on a3-highgpu-8g", got)
	}
	if !strings.Contains(string(files["variables.tf"]), "length(var.train_h100_gpu_nic_networks) == 4") {
		t.Errorf("no length validation on the GPU NIC networks variable")
	}
}

// TestKubernetesVersionBinds: an environment whose only change is
// kubernetesVersion generates different Terraform, and the node pools read
// the version (GKE google_container_node_pool.version, EKS
// aws_eks_node_group.version).
func TestKubernetesVersionBinds(t *testing.T) {
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		if ex.Env != "" || (ex.Name != "gke-h100-l4" && ex.Name != "eks-p5-g6") {
			continue
		}
		t.Run(ex.Name, func(t *testing.T) {
			other := *ex.Spec
			other.Spec.KubernetesVersion = "1.35"
			a, err := Generate(ex.Spec, Options{SpecFile: "x.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			b, err := Generate(&other, Options{SpecFile: "x.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			changed := false
			for i := range a {
				changed = changed || !bytes.Equal(a[i].Data, b[i].Data)
			}
			if !changed {
				t.Fatal("changing only kubernetesVersion left the Terraform unchanged")
			}
			for _, f := range b {
				if f.Name == "variables.tf" && !strings.Contains(string(f.Data), `default     = "1.35"`) {
					t.Errorf("variables.tf has no kubernetes_version default 1.35:\n%s", f.Data)
				}
				if f.Name != "node_pools.tf" {
					continue
				}
				hf, diags := hclparse.NewParser().ParseHCL(f.Data, f.Name)
				if diags.HasErrors() {
					t.Fatal(diags.Error())
				}
				pools := 0
				for _, blk := range hf.Body.(*hclsyntax.Body).Blocks {
					if blk.Type != "resource" || (blk.Labels[0] != "google_container_node_pool" && blk.Labels[0] != "aws_eks_node_group") {
						continue
					}
					pools++
					a, ok := blk.Body.Attributes["version"]
					if !ok {
						t.Errorf("%s.%s has no version", blk.Labels[0], blk.Labels[1])
						continue
					}
					if tr := a.Expr.Variables(); len(tr) != 1 || tr[0].RootName() != "var" || tr[0][1].(hcl.TraverseAttr).Name != "kubernetes_version" {
						t.Errorf("%s.%s: version does not read var.kubernetes_version", blk.Labels[0], blk.Labels[1])
					}
				}
				if pools == 0 {
					t.Error("no node pool resources")
				}
			}
		})
	}
}

// TestEKSAutoRepair: nodePools[].autoRepair: true writes node_repair_config.
func TestEKSAutoRepair(t *testing.T) {
	on := true
	cs := guardedSpec("580.95.05", "12.8")
	cs.Spec.NodePools[0].AutoRepair = &on
	files, err := Generate(cs, Options{SpecFile: "x.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name == "node_pools.tf" && !strings.Contains(string(f.Data), "node_repair_config {\n    enabled = true\n  }") {
			t.Errorf("no node_repair_config:\n%s", f.Data)
		}
	}
}

// TestCheckAgreesWithGenerate: Check fails exactly where Generate does,
// with the same error.
func TestCheckAgreesWithGenerate(t *testing.T) {
	var specs []*spec.ClusterSpec
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		specs = append(specs, ex.Spec)
		bad := *ex.Spec
		bad.Spec.NodePools = append([]spec.NodePool{{Name: "x", MachineType: "no-such-machine"}}, ex.Spec.Spec.NodePools...)
		specs = append(specs, &bad)
		other := *ex.Spec
		other.Spec.Provider = "azure"
		specs = append(specs, &other)
	}
	failed := 0
	for _, cs := range specs {
		_, gerr := Generate(cs, Options{SpecFile: "x.yaml"})
		cerr := Check(cs)
		if fmt.Sprint(gerr) != fmt.Sprint(cerr) {
			t.Errorf("%s: Generate: %v, Check: %v", cs.Metadata.Name, gerr, cerr)
		}
		if gerr != nil {
			failed++
		}
	}
	if failed == 0 {
		t.Error("no spec fails to generate")
	}
}

// TestGPUDirectRDMANetworks: an A3 Ultra pool on GPUDirect RDMA (gIB) gets
// its extra gVNIC and then its 8 RDMA NICs as additional node networks, in
// that order; the RDMA variable's validations accept its defaults (one VPC
// network, 8 subnetworks) and reject another count, a second network or a
// shared subnetwork.
func TestGPUDirectRDMANetworks(t *testing.T) {
	doc, err := spec.Load("../../examples/gke-a3-ultra-rdma.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := doc.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Generate(cs, Options{SpecFile: "gke-a3-ultra-rdma.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	var pools string
	for _, f := range out {
		if filepath.Base(f.Name) == "node_pools.tf" {
			pools = string(f.Data)
		}
	}
	if got := strings.Count(pools, "additional_node_network_configs {"); got != 9 {
		t.Fatalf("additional_node_network_configs blocks = %d, want 9 (1 gVNIC + 8 RDMA NICs) on a3-ultragpu-8g", got)
	}
	gv, rd := strings.Index(pools, "var.train_h200_gvnic_networks[0].network"), strings.Index(pools, "var.train_h200_gpu_nic_networks[0].network")
	if gv < 0 || rd < 0 || gv > rd || !strings.Contains(pools, "var.train_h200_gpu_nic_networks[7].subnetwork") {
		t.Errorf("the gVNIC network must come first, then the 8 RDMA NICs:\n%s", pools)
	}
	g := parseGuards(t, cs)
	const v = "train_h200_gpu_nic_networks"
	def := g.defaults[v].AsValueSlice()
	if len(def) != 8 || len(g.validations[v]) != 3 || len(g.validations["train_h200_gvnic_networks"]) != 1 {
		t.Fatalf("defaults %v, validations %d", def, len(g.validations[v]))
	}
	nic := func(network, subnetwork string) cty.Value {
		return cty.ObjectVal(map[string]cty.Value{"network": cty.StringVal(network), "subnetwork": cty.StringVal(subnetwork)})
	}
	with := func(i int, n cty.Value) cty.Value {
		l := append([]cty.Value(nil), def...)
		l[i] = n
		return cty.ListVal(l)
	}
	net0, sub0 := def[0].GetAttr("network").AsString(), def[0].GetAttr("subnetwork").AsString()
	for _, c := range []struct {
		name string
		val  cty.Value
		ok   bool
	}{
		{"defaults", cty.ListVal(def), true},
		{"7 NICs", cty.ListVal(def[:7]), false},
		{"a second network", with(7, nic("other-net", "other-sub")), false},
		{"a shared subnetwork", with(7, nic(net0, sub0)), false},
		{"other names, one network", cty.ListVal([]cty.Value{nic("n", "s0"), nic("n", "s1"), nic("n", "s2"), nic("n", "s3"), nic("n", "s4"), nic("n", "s5"), nic("n", "s6"), nic("n", "s7")}), true},
	} {
		if got := g.evalValues(t, g.validations[v], map[string]cty.Value{v: c.val}); got != c.ok {
			t.Errorf("%s: validations say %v, want %v", c.name, got, c.ok)
		}
	}
}
