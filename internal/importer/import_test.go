package importer

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/hclgen"
	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/spec"
)

var update = flag.Bool("update", false, "rewrite the golden spec.golden.yaml and findings.golden.txt of every fixture")

// fixtureRoot holds one folder per fixture: the files to import, SOURCE.md
// (which public example's structure it follows), spec.golden.yaml (the
// imported spec) and findings.golden.txt (what validate reports).
const fixtureRoot = "../../testdata/import"

// asOf is the date the expected findings are judged at.
var asOf = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// fixtures lists the fixture folders.
func fixtures(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		t.Fatal("no fixtures")
	}
	return out
}

// importFixture imports a fixture as `gpuctl import` run from the
// repository root would: paths in the output read testdata/import/...
func importFixture(t *testing.T, name string) *Result {
	t.Helper()
	dir := filepath.Join(fixtureRoot, name)
	opts := fixtureOptions(dir)
	res, err := Import(fixturePaths(dir), opts)
	if err != nil {
		t.Fatalf("import %s: %v", name, err)
	}
	return res
}

// fixtureOptions are the options of a fixture's args file: one flag and
// its value a line.
func fixtureOptions(dir string) Options {
	opts := Options{}
	if data, err := os.ReadFile(filepath.Join(dir, "args")); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if k, v, ok := strings.Cut(l, " "); ok {
				switch k {
				case "--var":
					opts.Vars = append(opts.Vars, v)
					opts.VarArgs = append(opts.VarArgs, VarArg{Var: v})
				case "--var-file":
					opts.VarFiles = append(opts.VarFiles, filepath.Join(dir, v))
					opts.VarArgs = append(opts.VarArgs, VarArg{File: filepath.Join(dir, v)})
				case "--from":
					opts.From = v
				case "--cluster-name":
					opts.ClusterName = v
				case "--region":
					opts.Region = v
				case "--kubernetes-version":
					opts.KubernetesVersion = v
				}
			}
		}
	}
	return opts
}

// fixturePaths are the paths a fixture imports: those its paths file
// lists, one a line, else the folder.
func fixturePaths(dir string) []string {
	data, err := os.ReadFile(filepath.Join(dir, "paths"))
	if err != nil {
		return []string{dir}
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, filepath.Join(dir, l))
		}
	}
	return out
}

func rel(s string) string { return strings.ReplaceAll(s, "../../", "") }

// findingLines are the findings of validate on the imported spec, one a
// line: severity, rule, file:line, path, message.
func findingLines(t *testing.T, res *Result) string {
	t.Helper()
	doc, err := res.Document("imported")
	if err != nil {
		t.Fatalf("imported spec does not load: %v\n%s", err, res.YAML())
	}
	cr, err := check.Document(doc, check.Options{AsOf: asOf, Origins: res.Locate, Unknown: unknownOpts(res)})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range res.Annotate(cr.Findings) {
		fmt.Fprintf(&b, "%s %s %s:%d %s: %s\n", f.Severity, f.Rule, rel(f.File), f.Line, f.Path, rel(f.Message))
	}
	return b.String()
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/importer -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", file, d)
	}
}

// TestFixtures imports every fixture and compares the spec and the
// findings with their goldens.
func TestFixtures(t *testing.T) {
	names := fixtures(t)
	// Issue 15 asks for at least 15 fixtures over every source. The count
	// may only grow.
	if len(names) < 15 {
		t.Errorf("%d fixtures, want at least 15", len(names))
	}
	froms := map[string]int{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(fixtureRoot, name)
			if _, err := os.Stat(filepath.Join(dir, "SOURCE.md")); err != nil {
				t.Errorf("fixture has no SOURCE.md naming the public example it follows")
			}
			if _, err := os.Stat(filepath.Join(dir, "error.golden.txt")); err == nil {
				// A fixture of what import refuses: the error is the golden.
				_, err := Import(fixturePaths(dir), fixtureOptions(dir))
				if err == nil {
					t.Fatal("import succeeded; the fixture expects an error")
				}
				froms["error"]++
				golden(t, filepath.Join(dir, "error.golden.txt"), rel(err.Error())+"\n")
				return
			}
			res := importFixture(t, name)
			froms[res.From]++
			golden(t, filepath.Join(dir, "spec.golden.yaml"), rel(string(res.YAML())))
			golden(t, filepath.Join(dir, "findings.golden.txt"), findingLines(t, res))
		})
	}
	for _, f := range Froms {
		if froms[f] < 2 {
			t.Errorf("%d fixtures of %s, want at least 2", froms[f], f)
		}
	}
	if froms["error"] < 1 {
		t.Errorf("no fixture of an import error")
	}
}

// notRoundTripped are the fixtures that gpuctl generate cannot write back,
// and why.
var notRoundTripped = map[string]string{}

// TestRoundTrip imports each Terraform fixture, and each blueprint and
// Karpenter fixture whose import validates without errors, generates
// Terraform from the spec, imports that and compares the GPU-relevant
// attributes.
func TestRoundTrip(t *testing.T) {
	n := 0
	for _, name := range fixtures(t) {
		if _, err := os.Stat(filepath.Join(fixtureRoot, name, "error.golden.txt")); err == nil {
			continue
		}
		res := importFixture(t, name)
		if res.From != FromTerraform && hasErrorFindings(t, res) {
			continue // a blueprint or Karpenter import that validates with errors: its findings are the golden
		}
		t.Run(name, func(t *testing.T) {
			if helmgen.UsesKarpenter(&res.Spec.Spec) {
				// Karpenter's pools come back from generate karpenter.
				n++
				roundTripKarpenter(t, res.Spec)
				return
			}
			files, err := hclgen.Generate(res.Spec, hclgen.Options{SpecFile: "spec.yaml"})
			if why, ok := notRoundTripped[name]; ok {
				if err == nil {
					t.Fatalf("listed as not round-tripped (%s), but generate writes it", why)
				}
				return
			}
			if err != nil {
				t.Fatalf("generate: %v", err)
			}
			n++
			dir := t.TempDir()
			for _, f := range files {
				if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			again, err := Import([]string{dir}, Options{})
			if err != nil {
				t.Fatalf("import of the generated Terraform: %v", err)
			}
			comparePools(t, res.Spec, again.Spec)
		})
	}
	if n < 3 {
		t.Errorf("%d fixtures round-tripped, want at least 3", n)
	}
}

// roundTripKarpenter writes the Karpenter objects of cs (generate
// karpenter), imports them and compares the pools with cs's.
func roundTripKarpenter(t *testing.T, cs *spec.ClusterSpec) *spec.ClusterSpec {
	t.Helper()
	files, err := helmgen.Karpenter(cs, helmgen.Options{SpecFile: "spec.yaml"})
	if err != nil {
		t.Fatalf("generate karpenter: %v", err)
	}
	if len(files) != 1 {
		t.Fatalf("generate karpenter wrote %d files, want karpenter.yaml", len(files))
	}
	dir := t.TempDir()
	path := filepath.Join(dir, files[0].Name)
	if err := os.WriteFile(path, files[0].Data, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := Import([]string{path}, Options{From: FromKarpenter})
	if err != nil {
		t.Fatalf("import of the generated Karpenter YAML: %v", err)
	}
	if again.Spec.Spec.Addons.Autoscaler != spec.AutoscalerKarpenter {
		t.Errorf("addons.autoscaler %q after the round trip, want karpenter", again.Spec.Spec.Addons.Autoscaler)
	}
	comparePools(t, cs, again.Spec)
	return again.Spec
}

// TestKarpenterRoundTripExample: the NodePools and EC2NodeClasses that
// generate karpenter writes for examples/eks-karpenter-gpu.yaml import back
// to the example's pools: instance types, taints, capacity (a Capacity
// Block and its reservation, on-demand), max nodes from the GPU limit,
// disks, RAID0, EFA with efa-only cards, labels.
func TestKarpenterRoundTripExample(t *testing.T) {
	doc, err := spec.Load(filepath.Join("..", "..", "examples", "eks-karpenter-gpu.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := doc.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	again := roundTripKarpenter(t, cs)
	caps := map[string]string{}
	for _, p := range again.Spec.NodePools {
		caps[p.Name] = p.Capacity
	}
	if caps["train-p5-cb"] != spec.CapacityCapacityBlock || caps["infer-l4"] != spec.CapacityOnDemand {
		t.Errorf("capacities after the round trip %v, want train-p5-cb capacity-block, infer-l4 on-demand", caps)
	}
}

// hasErrorFindings reports whether validate finds errors in res's spec.
func hasErrorFindings(t *testing.T, res *Result) bool {
	t.Helper()
	lines := "\n" + findingLines(t, res)
	return strings.Contains(lines, "\nerror ")
}

// gpuAttrs are the GPU-relevant attributes of a pool, as generate writes
// them back.
type gpuAttrs struct {
	Machine        []string
	GPUType        string
	GPUCount       int
	Driver         string
	OSImage        string
	Capacity       string
	Reservation    string
	Autoscaling    spec.Autoscaling
	Taints         []spec.Taint
	Labels         map[string]string
	Zones          []string
	PlacementGroup string
	EFA            bool
	EFAInterfaces  int
	EFAOnly        bool
	DiskSizeGB     int
	DiskType       string
	// LocalStorage is the pool's effective localStorage
	// (matrix.EffectiveLocalStorage; none and unset both write nothing).
	LocalStorage string
}

func attrs(s *spec.Spec, p *spec.NodePool, generated bool) gpuAttrs {
	a := gpuAttrs{Machine: p.MachineTypes(), OSImage: p.OSImage, Capacity: p.Capacity, Reservation: p.Reservation,
		Autoscaling: p.Autoscaling, Taints: p.Taints, Labels: p.Labels, PlacementGroup: p.PlacementGroup,
		EFA: p.EFA.Enabled, DiskSizeGB: p.DiskSizeGB, Driver: p.GPU.Driver, DiskType: p.DiskType}
	if eff := matrix.EffectiveLocalStorage(s.Provider, p); eff == spec.LocalStorageRAID0 {
		a.LocalStorage = eff
	}
	a.EFAInterfaces, _ = matrix.PoolEFAInterfaces(s.Provider, p)
	// efa-only cards exist only with more than one EFA interface
	a.EFAOnly = p.EFA.Enabled && a.EFAInterfaces > 1 && p.EFA.EFAOnlyCards()
	if s.Provider == spec.ProviderEKS {
		// The group the launch template names: "cluster" on a Capacity
		// Block and the default of an EFA training pool are decided there.
		a.PlacementGroup = spec.EKSPlacementGroup(p)
	}
	if s.Provider == spec.ProviderGKE {
		a.Zones = p.Zones
		a.GPUType = matrix.PoolAcceleratorType(s.Provider, p)
		a.GPUCount, _ = matrix.PoolGPUsPerNode(s.Provider, p)
	}
	if !generated {
		// What generate writes for what the spec leaves to the platform.
		a.Labels = s.NodeLabels(p)
		if a.Capacity == "" && s.Provider == spec.ProviderEKS {
			a.Capacity = spec.CapacityOnDemand
		}
		if s.Provider == spec.ProviderGKE && a.Driver == "" {
			a.Driver = matrix.GKEUnsetDriver(s.KubernetesVersion, false)
		}
		if s.Provider == spec.ProviderEKS && a.OSImage == "" {
			a.OSImage = "AL2023_x86_64_NVIDIA"
		}
		if s.Provider == spec.ProviderEKS && a.DiskType == "" && a.DiskSizeGB > 0 {
			a.DiskType = "gp3" // generate's volume type
		}
	}
	if generated && a.Labels != nil {
		// Labels generate adds from its driver guard variables: they say
		// what the nodes were checked for, not what the original set.
		l := map[string]string{}
		for k, v := range a.Labels {
			if k != hclgen.LabelDriverVersion && k != hclgen.LabelCUDAVersion {
				l[k] = v
			}
		}
		a.Labels = l
	}
	if len(a.Labels) == 0 {
		a.Labels = nil
	}
	sort.Strings(a.Zones)
	return a
}

func comparePools(t *testing.T, orig, again *spec.ClusterSpec) {
	t.Helper()
	if len(orig.Spec.NodePools) != len(again.Spec.NodePools) {
		t.Fatalf("%d pools, %d after the round trip", len(orig.Spec.NodePools), len(again.Spec.NodePools))
	}
	byName := map[string]*spec.NodePool{}
	for i := range again.Spec.NodePools {
		byName[again.Spec.NodePools[i].Name] = &again.Spec.NodePools[i]
	}
	for i := range orig.Spec.NodePools {
		p := &orig.Spec.NodePools[i]
		q := byName[p.Name]
		if q == nil {
			t.Errorf("pool %s lost in the round trip", p.Name)
			continue
		}
		want, got := attrs(&orig.Spec, p, false), attrs(&again.Spec, q, true)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("pool %s: GPU-relevant attributes differ after generate (-original +regenerated):\n%s", p.Name, cmp.Diff(want, got))
		}
	}
}

// TestFindingPointsAtTerraform: a finding on an imported folder names the
// .tf file and line of the value it is about.
func TestFindingPointsAtTerraform(t *testing.T) {
	res := importFixture(t, "gke-node-pool-tfvars")
	doc, err := res.Document("imported")
	if err != nil {
		t.Fatal(err)
	}
	cr, err := check.Document(doc, check.Options{AsOf: asOf, Origins: res.Locate})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range cr.Findings {
		switch f.Rule {
		case rules.RuleMachineAccel:
			// count = 1 in main.tf line 87 while the tfvars machine type has 2 GPUs
			found++
			if rel(f.File) != "testdata/import/gke-node-pool-tfvars/main.tf" || f.Line != 87 {
				t.Errorf("%s at %s:%d, want main.tf:87 (guest_accelerator count)", f.Rule, f.File, f.Line)
			}
		case rules.RuleGKEK8sSupport:
			found++
			if !strings.HasSuffix(f.File, "main.tf") || f.Line != 49 {
				t.Errorf("%s at %s:%d, want main.tf:49 (min_master_version)", f.Rule, f.File, f.Line)
			}
		}
	}
	if found != 2 {
		t.Errorf("found %d of the 2 expected findings: %v", found, cr.Findings)
	}
	if o := res.Origins["spec.nodePools[0].machineType"]; !strings.HasSuffix(o.File, "terraform.tfvars") || o.Line != 3 {
		t.Errorf("machineType from %v, want terraform.tfvars:3", o)
	}
}

// TestYAMLSourceAttributes: blueprints and Karpenter YAML do not round-trip
// through generate (it writes Terraform); their GPU-relevant attributes
// are asserted here, beside the goldens.
func TestYAMLSourceAttributes(t *testing.T) {
	yes := true
	no := false
	nvidiaTaint := []spec.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}
	for _, c := range []struct {
		fixture string
		pool    int
		want    spec.NodePool
	}{
		{"blueprint-a3-mega-tcpxo", 0, spec.NodePool{Name: "a3-megagpu-8g-h100mega", Role: spec.RoleTraining, MachineType: "a3-megagpu-8g",
			Zones: []string{"us-east5-a"}, OSImage: "COS_CONTAINERD", GPU: spec.GPU{Type: "nvidia-h100-mega-80gb", Count: 8, Driver: "DEFAULT"},
			Capacity: spec.CapacityReservation, Reservation: "a3mega-res-01", Autoscaling: spec.Autoscaling{Min: 4, Max: 4}, DiskSizeGB: 100,
			Taints: nvidiaTaint, NCCL: spec.NCCL{Plugin: "tcpxo"}, AutoUpgrade: &no, AutoRepair: &yes}},
		{"blueprint-g2-l4-spot", 0, spec.NodePool{Name: "l4-spot", MachineType: "g2-standard-8", Zones: []string{"asia-southeast1-b", "asia-southeast1-c"},
			OSImage: "COS_CONTAINERD", Capacity: spec.CapacitySpot, Autoscaling: spec.Autoscaling{Min: 0, Max: 6}, DiskSizeGB: 100,
			Labels: map[string]string{"workload": "inference"}, Taints: []spec.Taint{{Key: "workload", Value: "inference", Effect: "NoSchedule"}},
			AutoUpgrade: &yes, AutoRepair: &yes}},
		{"karpenter-p5-efa", 0, spec.NodePool{Name: "p5-train", MachineType: "p5.48xlarge", Zones: []string{"us-east-2b"}, OSImage: "AL2023_x86_64_NVIDIA",
			Capacity: spec.CapacityReservation, Reservation: "cr-0a1b2c3d4e5f60718", Autoscaling: spec.Autoscaling{Max: 4}, DiskSizeGB: 500, DiskType: "gp3",
			Labels: map[string]string{"workload": "training", "gpu": "h100"}, Taints: []spec.Taint{{Key: "nvidia.com/gpu", Value: "true", Effect: "NoSchedule"}},
			EFA: spec.EFA{Enabled: true, EFAOnly: &yes}, PlacementGroup: "p5-train-cluster"}},
		{"karpenter-g6-bottlerocket", 0, spec.NodePool{Name: "g6-inference", InstanceTypes: []string{"g6.2xlarge", "g6.4xlarge", "g6.8xlarge", "g6.xlarge"},
			OSImage: "BOTTLEROCKET_x86_64_NVIDIA", Capacity: spec.CapacitySpot, Autoscaling: spec.Autoscaling{Max: 16}, DiskSizeGB: 200, DiskType: "gp3",
			Labels: map[string]string{"workload": "inference"}, Taints: []spec.Taint{{Key: "nvidia.com/gpu", Effect: "NoSchedule"}}}},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			res := importFixture(t, c.fixture)
			if len(res.Spec.Spec.NodePools) <= c.pool {
				t.Fatalf("%d pools", len(res.Spec.Spec.NodePools))
			}
			if d := cmp.Diff(c.want, res.Spec.Spec.NodePools[c.pool]); d != "" {
				t.Errorf("pool differs (-want +got):\n%s", d)
			}
		})
	}
}

// TestBlueprintExpressions: $(...) as gcluster reads it.
func TestBlueprintExpressions(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []exprPart
		err  bool
	}{
		{in: "plain", want: []exprPart{{text: "plain"}}},
		{in: "$(vars.a)-x", want: []exprPart{{text: "vars.a", expr: true}, {text: "-x"}}},
		{in: `$(ghpc_stage("./a(b).yaml"))`, want: []exprPart{{text: `ghpc_stage("./a(b).yaml")`, expr: true}}},
		{in: `\$(vars.a)`, want: []exprPart{{text: "$(vars.a)"}}},
		{in: "$(vars.a", err: true},
	} {
		got, err := splitExprs(c.in)
		if (err != nil) != c.err {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if !c.err && !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %+v, want %+v", c.in, got, c.want)
		}
	}
}

// One EFA interface in the launch template is efa.interfaces 1, and
// generate writes one interface back, not one per network card of p5.
func TestEKSOneEFAInterfaceRoundTrips(t *testing.T) {
	dir := t.TempDir()
	tf := `provider "aws" {
  region = "us-east-1"
}
resource "aws_launch_template" "p5" {
  network_interfaces {
    device_index       = 0
    network_card_index = 0
    interface_type     = "efa"
  }
}
resource "aws_eks_node_group" "p5" {
  cluster_name    = "ml"
  node_group_name = "p5"
  instance_types  = ["p5.48xlarge"]
  ami_type        = "AL2023_x86_64_NVIDIA"
  launch_template {
    id      = aws_launch_template.p5.id
    version = aws_launch_template.p5.latest_version
  }
  scaling_config {
    desired_size = 2
    min_size     = 0
    max_size     = 4
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Import([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Spec.Spec.NodePools[0]
	if !p.EFA.Enabled || p.EFA.Interfaces != 1 {
		t.Fatalf("efa %+v, want enabled with 1 interface", p.EFA)
	}
	skipped := false
	for _, s := range res.Skipped {
		if strings.Contains(s.What, "desired_size") && strings.Contains(s.Reason, "desired_size 2") {
			skipped = true
		}
	}
	if !skipped {
		t.Errorf("desired_size is not listed as skipped: %+v", res.Skipped)
	}
	files, err := hclgen.Generate(res.Spec, hclgen.Options{SpecFile: "spec.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		n += len(regexp.MustCompile(`interface_type\s*=\s*"efa"`).FindAllString(string(f.Data), -1))
	}
	if n != 1 {
		t.Errorf("generated Terraform has %d EFA interfaces, want 1", n)
	}
}

// TestYAMLErrors: what import cannot read is said with file:line:col and
// what to write instead.
func TestYAMLErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bp := "blueprint_name: bad\nvars:\n  zone: us-central1-a\n  project_id: p\ndeployment_groups:\n- group: primary\n  modules:\n  - id: l4\n    source: modules/compute/gke-node-pool\n    settings:\n      zones: [$(vars.zonez)]\n      machine_type: g2-standard-8\n"
	broken := "blueprint_name: bad\ndeployment_groups:\n- group: primary\n  modules: [a, b\n"
	tests := []struct {
		name, file, text, from string
		want                   []string // substrings of the error
		not                    string
	}{
		{"undefined var", "bp.yaml", bp, "", []string{`bp.yaml:11: vars.zonez: the blueprint has no var "zonez"; did you mean zone? (the blueprint defines vars project_id, zone)`}, ""},
		{"undefined var far from all", "bp2.yaml", strings.Replace(bp, "zonez", "region", 1), "", []string{`no var "region"; the blueprint defines vars project_id, zone`}, "did you mean"},
		{"blueprint syntax", "broken.yaml", broken, FromBlueprint, []string{"broken.yaml:4:"}, "["},
		{"karpenter syntax", "kp.yaml", "apiVersion: karpenter.sh/v1\nkind: NodePool\nspec: {a: 1\n", FromKarpenter, []string{"kp.yaml:3:"}, "["},
		{"undetected syntax", "odd.yaml", "x: [1, 2\n", "", []string{"odd.yaml:1:"}, "cannot tell"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Import([]string{write(tt.file, tt.text)}, Options{From: tt.from})
			if err == nil {
				t.Fatal("no error")
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\nwant it to contain %q", msg, w)
				}
			}
			if regexp.MustCompile(`\[\d+:\d+\]`).MatchString(msg) {
				t.Errorf("error %q has goccy's [line:col] form", msg)
			}
			if tt.not != "" && tt.not != "[" && strings.Contains(msg, tt.not) {
				t.Errorf("error %q should not say %q", msg, tt.not)
			}
			if !regexp.MustCompile(`^[a-z0-9]+\.yaml:\d+(:\d+)?: `).MatchString(msg) {
				t.Errorf("error %q does not start with file:line", msg)
			}
		})
	}
}

// TestDocumentOfLargeImport: the file-size cap of spec files does not apply
// to the spec an import builds in memory.
func TestDocumentOfLargeImport(t *testing.T) {
	res := importFixture(t, "gke-tfvars-json-order")
	pool := res.Spec.Spec.NodePools[0]
	for len(res.YAML()) <= spec.MaxFileBytes {
		for i := 0; i < 2000; i++ {
			p := pool
			p.Name = fmt.Sprintf("l4-%d", len(res.Spec.Spec.NodePools))
			res.Spec.Spec.NodePools = append(res.Spec.Spec.NodePools, p)
		}
	}
	doc, err := res.Document("imported")
	if err != nil {
		t.Fatalf("Document: %v", err)
	}
	if got, want := len(doc.Spec.Spec.NodePools), len(res.Spec.Spec.NodePools); got != want {
		t.Fatalf("%d pools, want %d", got, want)
	}
}

// TestRuleIDsRegistered: the rule ID Annotate matches is the catalogue's.
func TestRuleIDsRegistered(t *testing.T) {
	if ruleSpecUnknown != rules.RuleSpecUnknown {
		t.Errorf("ruleSpecUnknown = %q, want %q", ruleSpecUnknown, rules.RuleSpecUnknown)
	}
	if ruleSpecRequired != rules.RuleSpecRequired {
		t.Errorf("ruleSpecRequired = %q, want %q", ruleSpecRequired, rules.RuleSpecRequired)
	}
}
