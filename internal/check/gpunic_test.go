package check

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/hclgen"
	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestGPUNICNamesAgree: for the GPUDirect pool of each GKE example (TCPX on
// A3 High; RDMA on A3 Ultra: its extra gVNIC, then its 8 RDMA NICs), the
// Terraform's additional node networks (each
// network_config.additional_node_network_configs block, in NIC order,
// resolved against the defaults of the variables it reads), the
// GKENetworkParamSets of nccl.yaml (vpc, vpcSubnet, deviceMode) and the pod
// annotation on the pool's NCCL ConfigMap (ethN -> Network) name the same
// networks and objects, NIC for NIC; the annotation attaches the NICs NCCL
// uses (every GPU NIC on TCPX, the RDMA NICs on RDMA).
func TestGPUNICNamesAgree(t *testing.T) {
	for _, c := range []struct {
		example string
		// modes are the GKENetworkParamSets' deviceModes in NIC order.
		modes []string
		// attached are the interfaces the pods attach, after eth0.
		attached []string
	}{
		{"gke-h100-l4", repeat("NetDevice", 4), ifaces(1, 4)},
		{"gke-a3-ultra-rdma", append([]string{"NetDevice"}, repeat("RDMA", 8)...), ifaces(2, 9)},
	} {
		t.Run(c.example, func(t *testing.T) {
			data, err := os.ReadFile("../../examples/" + c.example + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			doc, err := spec.Parse(c.example+".yaml", data)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Document(doc, Options{AsOf: asOf, Generate: true})
			if err != nil {
				t.Fatal(err)
			}
			env := res.Envs[0]
			tf := terraformNICs(t, env.Terraform)
			if len(tf) != len(c.modes) {
				t.Fatalf("Terraform additional node networks %v, want %d", tf, len(c.modes))
			}
			ms, err := env.Layers.Manifests(helmgen.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var params []nicNet
			var modes []string
			paramOf := map[string]int{}    // GKENetworkParamSet name -> NIC index
			network := map[string]string{} // Network name -> its GKENetworkParamSet
			var podIfaces string
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
							VPC, VPCSubnet, DeviceMode string
							ParametersRef              struct{ Name string }
						}
					}
					if err := yaml.Unmarshal([]byte(d), &o); err != nil {
						t.Fatal(err)
					}
					switch o.Kind {
					case "GKENetworkParamSet":
						paramOf[o.Metadata.Name] = len(params)
						params = append(params, nicNet{o.Spec.VPC, o.Spec.VPCSubnet})
						modes = append(modes, o.Spec.DeviceMode)
					case "Network":
						network[o.Metadata.Name] = o.Spec.ParametersRef.Name
					case "ConfigMap":
						if v := o.Metadata.Annotations[helmgen.AnnotationPodInterfaces]; v != "" {
							podIfaces = v
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
			if strings.Join(modes, " ") != strings.Join(c.modes, " ") {
				t.Errorf("deviceModes %v, want %v", modes, c.modes)
			}
			var refs []struct{ InterfaceName, Network string }
			if err := json.Unmarshal([]byte(podIfaces), &refs); err != nil || len(refs) != len(c.attached)+1 || refs[0].InterfaceName != "eth0" || refs[0].Network != "default" {
				t.Fatalf("pod interfaces %q: %v", podIfaces, err)
			}
			for i, r := range refs[1:] {
				if r.InterfaceName != c.attached[i] {
					t.Errorf("attached interface %d is %s, want %s", i+1, r.InterfaceName, c.attached[i])
				}
				// ethN is the node's N-th additional network.
				var n int
				fmt.Sscanf(r.InterfaceName, "eth%d", &n)
				ps, ok := network[r.Network]
				if idx, known := paramOf[ps]; !ok || !known || idx != n-1 {
					t.Errorf("%s -> Network %q (parameters %q): not NIC %d's", r.InterfaceName, r.Network, ps, n)
				}
			}
		})
	}
}

type nicNet struct{ Network, Subnetwork string }

// terraformNICs are the additional node networks of the (one) node pool of
// the generated Terraform, in block order, each network and subnetwork
// evaluated with the variables at their defaults.
func terraformNICs(t *testing.T, files []hclgen.File) []nicNet {
	t.Helper()
	vars := map[string]cty.Value{}
	var blocks []*hclsyntax.Body
	for _, f := range files {
		hf, diags := hclparse.NewParser().ParseHCL(f.Data, f.Name)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		for _, b := range hf.Body.(*hclsyntax.Body).Blocks {
			switch b.Type {
			case "variable":
				if d, ok := b.Body.Attributes["default"]; ok {
					v, diags := d.Expr.Value(nil)
					if diags.HasErrors() {
						t.Fatal(diags)
					}
					vars[b.Labels[0]] = v
				}
			case "resource":
				for _, nb := range b.Body.Blocks {
					if nb.Type != "network_config" {
						continue
					}
					for _, an := range nb.Body.Blocks {
						if an.Type == "additional_node_network_configs" {
							blocks = append(blocks, an.Body)
						}
					}
				}
			}
		}
	}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vars)}}
	var out []nicNet
	for _, b := range blocks {
		var n nicNet
		for attr, dst := range map[string]*string{"network": &n.Network, "subnetwork": &n.Subnetwork} {
			v, diags := b.Attributes[attr].Expr.Value(ctx)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			*dst = v.AsString()
		}
		out = append(out, n)
	}
	return out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func ifaces(first, last int) []string {
	var out []string
	for i := first; i <= last; i++ {
		out = append(out, fmt.Sprintf("eth%d", i))
	}
	return out
}
