package hclgen

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// The provider schemas in the repository's testdata/reference/tf-schemas
// (terraform providers schema -json), by resource type.
const schemaDir = "../../testdata/reference/tf-schemas/"

type resourceSchema struct {
	block *tfjson.SchemaBlock
	enums map[string][]string // dotted attribute path -> allowed values (aws x_enum)
}

func loadSchemas(t *testing.T) map[string]resourceSchema {
	t.Helper()
	out := map[string]resourceSchema{}
	for _, f := range []string{"google.json", "aws.json"} {
		data, err := os.ReadFile(schemaDir + f)
		if err != nil {
			t.Fatal(err)
		}
		var ps tfjson.ProviderSchemas
		if err := json.Unmarshal(data, &ps); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var raw struct {
			ProviderSchemas map[string]struct {
				ResourceSchemas map[string]struct {
					Block rawBlock `json:"block"`
				} `json:"resource_schemas"`
			} `json:"provider_schemas"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		for pname, p := range ps.Schemas {
			for rname, r := range p.ResourceSchemas {
				enums := map[string][]string{}
				raw.ProviderSchemas[pname].ResourceSchemas[rname].Block.collectEnums("", enums)
				out[rname] = resourceSchema{block: r.Block, enums: enums}
			}
		}
	}
	return out
}

// rawBlock reads the x_enum extension that terraform-json does not know.
type rawBlock struct {
	Attributes map[string]struct {
		Enum []string `json:"x_enum"`
	} `json:"attributes"`
	BlockTypes map[string]struct {
		Block rawBlock `json:"block"`
	} `json:"block_types"`
}

func (b rawBlock) collectEnums(prefix string, out map[string][]string) {
	for name, a := range b.Attributes {
		if len(a.Enum) > 0 {
			out[prefix+name] = a.Enum
		}
	}
	for name, bt := range b.BlockTypes {
		bt.Block.collectEnums(prefix+name+".", out)
	}
}

// metaArguments are Terraform's own, valid in every resource.
var metaArguments = map[string]bool{"count": true, "for_each": true, "provider": true, "depends_on": true, "lifecycle": true}

// TestProviderSchemas checks every resource, attribute and nested block of
// every generated .tf against the real provider schemas: names, nesting and
// block counts, required attributes, literal value types and the aws enums.
// Variables, outputs and the terraform block are checked against
// Terraform's own language.
func TestProviderSchemas(t *testing.T) {
	schemas := loadSchemas(t)
	seen := map[string]bool{}
	cases := golden.ValidExamples(t, "../../examples/*.yaml", asOf)
	// No shipped example pins an EKS release_version (a real one comes from
	// the AMI's SSM parameter at apply time): check the attribute's shape on
	// a copy of one that does.
	doc, err := spec.Load("../../examples/eks-arm-capacity-block.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := doc.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	pinned.Spec.NodePools[0].ReleaseVersion = "1.68.0-test"
	cases = append(cases, golden.Example{Name: "eks-arm-capacity-block", Dir: "release-version-pinned", Spec: pinned})
	// An unset GKE driver (written as GKE's default for the version) and a
	// node auto-provisioning pool (no resource) stay valid too.
	for _, k8s := range []string{"1.33", "1.29", ""} {
		gdoc, err := spec.Load("../../examples/gke-h100-l4.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		unset, err := gdoc.Resolve("")
		if err != nil {
			t.Fatal(err)
		}
		unset.Spec.KubernetesVersion = k8s
		unset.Spec.NodePools[0].GPU.Driver = ""
		unset.Spec.NodePools[1].AutoProvisioned = true
		cases = append(cases, golden.Example{Name: "gke-h100-l4", Dir: "unset-driver-" + k8s, Spec: unset})
	}
	// Guarded pools (exact driver, cuda-compat, auto repair, own CUDA) on
	// both providers.
	on := true
	guarded := guardedSpec("570.195.03", "12.8")
	guarded.Spec.NodePools[0].CUDACompat, guarded.Spec.NodePools[0].CUDA, guarded.Spec.NodePools[0].AutoRepair = "13.0", "13.0", &on
	guarded.Spec.KubernetesVersion = "1.34"
	cases = append(cases, golden.Example{Name: "guarded", Dir: "guarded-eks", Spec: guarded})
	gg := &spec.ClusterSpec{Metadata: spec.Metadata{Name: "g"}, Spec: spec.Spec{
		Provider: spec.ProviderGKE, ClusterName: "c", Region: "r", CUDA: "12.8", KubernetesVersion: "1.34",
		Addons: spec.Addons{DevicePlugin: spec.DevicePlugin{Provider: spec.DevicePluginHelm}},
		NodePools: []spec.NodePool{{Name: "train", MachineType: "a3-highgpu-8g", OSImage: "UBUNTU_CONTAINERD",
			GPU: spec.GPU{Driver: "580.95.05"}, AutoRepair: &on, Autoscaling: spec.Autoscaling{Max: 1}}},
	}}
	cases = append(cases, golden.Example{Name: "guarded", Dir: "guarded-gke", Spec: gg})
	for _, ex := range cases {
		files, err := Generate(ex.Spec, Options{SpecFile: ex.Name + ".yaml", Environment: ex.Env})
		if err != nil {
			t.Fatal(err)
		}
		if ex.Dir == "release-version-pinned" {
			found := false
			for _, f := range files {
				found = found || strings.Contains(string(f.Data), `release_version`)
			}
			if !found {
				t.Errorf("a pinned releaseVersion generated no release_version")
			}
		}
		for _, f := range files {
			where := ex.Dir + "/" + f.Name
			hf, diags := hclparse.NewParser().ParseHCL(f.Data, where)
			if diags.HasErrors() {
				t.Fatalf("%s: %s", where, diags.Error())
			}
			for _, b := range hf.Body.(*hclsyntax.Body).Blocks {
				switch b.Type {
				case "resource":
					rs, ok := schemas[b.Labels[0]]
					if !ok {
						t.Errorf("%s: resource type %s is not in the provider schemas", where, b.Labels[0])
						continue
					}
					seen[b.Labels[0]] = true
					for _, e := range checkBlock(b.Body, rs.block, rs.enums, "", true) {
						t.Errorf("%s: %s.%s: %s", where, b.Labels[0], b.Labels[1], e)
					}
				case "variable":
					checkLanguageBlock(t, where, b, map[string]bool{"description": true, "type": true, "default": true, "sensitive": true, "nullable": true}, map[string]bool{"validation": true})
					for _, v := range b.Body.Blocks {
						checkLanguageBlock(t, where, v, map[string]bool{"condition": true, "error_message": true}, nil)
					}
				case "output":
					checkLanguageBlock(t, where, b, map[string]bool{"description": true, "value": true, "sensitive": true}, nil)
				case "terraform":
					checkLanguageBlock(t, where, b, map[string]bool{"required_version": true}, map[string]bool{"required_providers": true})
				case "locals":
					// Any names; values only (no nested blocks).
					if len(b.Labels) != 0 || len(b.Body.Blocks) != 0 {
						t.Errorf("%s: locals block with labels or nested blocks", where)
					}
				default:
					t.Errorf("%s: unexpected top-level block %s", where, b.Type)
				}
			}
		}
	}
	for _, want := range []string{"google_container_node_pool", "aws_eks_node_group", "aws_launch_template", "aws_placement_group"} {
		if !seen[want] {
			t.Errorf("no example generated a %s: the schema check does not cover it", want)
		}
	}
}

func checkLanguageBlock(t *testing.T, where string, b *hclsyntax.Block, attrs, blocks map[string]bool) {
	t.Helper()
	for name := range b.Body.Attributes {
		if !attrs[name] {
			t.Errorf("%s: %s block has unknown argument %s", where, b.Type, name)
		}
	}
	for _, nb := range b.Body.Blocks {
		if !blocks[nb.Type] {
			t.Errorf("%s: %s block has unknown block %s", where, b.Type, nb.Type)
		}
	}
}

// checkBlock returns the problems of body against the schema block.
func checkBlock(body *hclsyntax.Body, sb *tfjson.SchemaBlock, enums map[string][]string, prefix string, top bool) []string {
	var errs []string
	names := make([]string, 0, len(body.Attributes))
	for name := range body.Attributes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		a := body.Attributes[name]
		sa, ok := sb.Attributes[name]
		if !ok {
			if _, isBlock := sb.NestedBlocks[name]; isBlock {
				errs = append(errs, fmt.Sprintf("%s%s is a block, written as an attribute", prefix, name))
			} else {
				errs = append(errs, fmt.Sprintf("unknown attribute %s%s", prefix, name))
			}
			continue
		}
		if sa.Computed && !sa.Optional && !sa.Required {
			errs = append(errs, fmt.Sprintf("attribute %s%s is read-only (computed)", prefix, name))
		}
		v, diags := a.Expr.Value(&hcl.EvalContext{})
		if diags.HasErrors() || !v.IsWhollyKnown() {
			continue // a reference: the type is Terraform's to check at plan time
		}
		if _, err := convert.Convert(v, sa.AttributeType); err != nil {
			errs = append(errs, fmt.Sprintf("attribute %s%s: value of type %s does not fit %s: %v", prefix, name, v.Type().FriendlyName(), sa.AttributeType.FriendlyName(), err))
			continue
		}
		if allowed, ok := enums[prefix+name]; ok && v.Type() == cty.String {
			if !contains(allowed, v.AsString()) {
				errs = append(errs, fmt.Sprintf("attribute %s%s = %q, want one of %s", prefix, name, v.AsString(), strings.Join(allowed, ", ")))
			}
		}
	}
	for name, sa := range sb.Attributes {
		if sa.Required {
			if _, ok := body.Attributes[name]; !ok {
				errs = append(errs, fmt.Sprintf("required attribute %s%s missing", prefix, name))
			}
		}
	}
	counts := map[string]int{}
	for _, nb := range body.Blocks {
		if top && metaArguments[nb.Type] {
			continue
		}
		bt, ok := sb.NestedBlocks[nb.Type]
		if !ok {
			errs = append(errs, fmt.Sprintf("unknown block %s%s", prefix, nb.Type))
			continue
		}
		counts[nb.Type]++
		errs = append(errs, checkBlock(nb.Body, bt.Block, enums, prefix+nb.Type+".", false)...)
	}
	for name, bt := range sb.NestedBlocks {
		n := uint64(counts[name])
		if bt.MinItems > 0 && n < bt.MinItems {
			errs = append(errs, fmt.Sprintf("block %s%s: %d given, at least %d required", prefix, name, n, bt.MinItems))
		}
		if bt.MaxItems > 0 && n > bt.MaxItems {
			errs = append(errs, fmt.Sprintf("block %s%s: %d given, at most %d allowed", prefix, name, n, bt.MaxItems))
		}
		if bt.NestingMode == tfjson.SchemaNestingModeSingle && n > 1 {
			errs = append(errs, fmt.Sprintf("block %s%s is single, given %d times", prefix, name, n))
		}
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSchemaCheckCatchesMistakes makes sure the checker itself fails on the
// mistakes it exists to catch.
func TestSchemaCheckCatchesMistakes(t *testing.T) {
	schemas := loadSchemas(t)
	cases := map[string]string{
		"unknown attribute":  `resource "aws_eks_node_group" "x" { cluster_name = "c"  node_role_arn = "r"  subnet_ids = ["s"]  instance_type = "p5.48xlarge"  scaling_config { desired_size = 0  min_size = 0  max_size = 1 } }`,
		"missing required":   `resource "aws_eks_node_group" "x" { cluster_name = "c"  subnet_ids = ["s"]  scaling_config { desired_size = 0  min_size = 0  max_size = 1 } }`,
		"bad enum":           `resource "aws_eks_node_group" "x" { cluster_name = "c"  node_role_arn = "r"  subnet_ids = ["s"]  ami_type = "AL2_x86_64_NVIDIA"  scaling_config { desired_size = 0  min_size = 0  max_size = 1 } }`,
		"unknown block":      `resource "google_container_node_pool" "x" { cluster = "c"  node_config { gpu { count = 1 } } }`,
		"too many blocks":    `resource "google_container_node_pool" "x" { cluster = "c"  management { auto_repair = true }  management { auto_repair = true } }`,
		"wrong type":         `resource "google_container_node_pool" "x" { cluster = "c"  node_config { labels = ["a"] } }`,
		"read-only attr":     `resource "google_container_node_pool" "x" { cluster = "c"  operation = "x" }`,
		"min items of block": `resource "aws_eks_node_group" "x" { cluster_name = "c"  node_role_arn = "r"  subnet_ids = ["s"] }`,
	}
	for name, src := range cases {
		hf, diags := hclparse.NewParser().ParseHCL([]byte(strings.NewReplacer("  ", "\n", "{ ", "{\n", " }", "\n}").Replace(src)), name)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", name, diags.Error())
		}
		b := hf.Body.(*hclsyntax.Body).Blocks[0]
		rs := schemas[b.Labels[0]]
		if errs := checkBlock(b.Body, rs.block, rs.enums, "", true); len(errs) == 0 {
			t.Errorf("%s: the schema check found nothing", name)
		}
	}
}
