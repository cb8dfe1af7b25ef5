package check

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestGPUNICNamesAgree: for the GPUDirect-TCPX pool of the GKE example, the
// Terraform's GPU NIC networks (the default of var.<pool>_gpu_nic_networks,
// in NIC order), the GKENetworkParamSets of nccl.yaml (vpc, vpcSubnet) and
// the pod annotation on the pool's NCCL ConfigMap (eth1..ethN -> Network)
// name the same networks and objects, NIC for NIC.
func TestGPUNICNamesAgree(t *testing.T) {
	data, err := os.ReadFile("../../examples/gke-h100-l4.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := spec.Parse("gke-h100-l4.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Document(doc, Options{AsOf: asOf, Generate: true})
	if err != nil {
		t.Fatal(err)
	}
	env := res.Envs[0]
	// Terraform: network names per NIC.
	type net struct{ Network, Subnetwork string }
	var tf []net
	for _, f := range env.Terraform {
		if f.Name != "variables.tf" {
			continue
		}
		hf, diags := hclparse.NewParser().ParseHCL(f.Data, f.Name)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		content, _, _ := hf.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "variable", LabelNames: []string{"name"}}}})
		for _, b := range content.Blocks {
			if !strings.HasSuffix(b.Labels[0], "_gpu_nic_networks") {
				continue
			}
			attrs, _ := b.Body.JustAttributes()
			v, diags := attrs["default"].Expr.Value(nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			for _, e := range v.AsValueSlice() {
				tf = append(tf, net{e.GetAttr("network").AsString(), e.GetAttr("subnetwork").AsString()})
			}
		}
	}
	if len(tf) != 4 {
		t.Fatalf("Terraform GPU NIC networks %v, want 4 (a3-highgpu-8g)", tf)
	}
	ms, err := env.Layers.Manifests(helmgen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var params []net
	paramOf := map[string]int{}    // GKENetworkParamSet name -> NIC index
	network := map[string]string{} // Network name -> its GKENetworkParamSet
	var ifaces string
	for _, f := range ms {
		if f.Name != "nccl.yaml" {
			continue
		}
		for _, d := range strings.Split(string(f.Data), "\n---\n") {
			var o struct {
				Kind     string
				Metadata struct {
					Name        string
					Annotations map[string]string
				}
				Spec struct {
					VPC, VPCSubnet string
					ParametersRef  struct{ Name string }
				}
			}
			if err := yaml.Unmarshal([]byte(d), &o); err != nil {
				t.Fatal(err)
			}
			switch o.Kind {
			case "GKENetworkParamSet":
				paramOf[o.Metadata.Name] = len(params)
				params = append(params, net{o.Spec.VPC, o.Spec.VPCSubnet})
			case "Network":
				network[o.Metadata.Name] = o.Spec.ParametersRef.Name
			case "ConfigMap":
				if v := o.Metadata.Annotations[helmgen.AnnotationPodInterfaces]; v != "" {
					ifaces = v
				}
			}
		}
	}
	if len(params) != len(tf) {
		t.Fatalf("GKENetworkParamSets %v, Terraform %v", params, tf)
	}
	for i := range tf {
		if params[i] != tf[i] {
			t.Errorf("NIC %d: GKENetworkParamSet %v, Terraform %v", i+1, params[i], tf[i])
		}
	}
	var refs []struct{ InterfaceName, Network string }
	if err := json.Unmarshal([]byte(ifaces), &refs); err != nil || len(refs) != len(tf)+1 || refs[0].InterfaceName != "eth0" || refs[0].Network != "default" {
		t.Fatalf("pod interfaces %q: %v", ifaces, err)
	}
	for i, r := range refs[1:] {
		if want := "eth" + string(rune('1'+i)); r.InterfaceName != want {
			t.Errorf("interface %d is %s, want %s", i+1, r.InterfaceName, want)
		}
		ps, ok := network[r.Network]
		if !ok || paramOf[ps] != i {
			t.Errorf("%s -> Network %q (parameters %q): not NIC %d's", r.InterfaceName, r.Network, ps, i+1)
		}
	}
}
