package matrix

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

func TestMIGInstances(t *testing.T) {
	for _, c := range []struct {
		gpu, profile string
		want         int
	}{
		{"nvidia-a100-80gb", "1g.10gb", 7},
		{"nvidia-tesla-a100", "1g.10gb", 4}, // A100 40GB: 1g.10gb is the doubled 1g
		{"nvidia-tesla-a100", "1g.5gb", 7},
		{"H100", "1g.20gb", 4},
		{"H100", "1g.10gb+me", 1},
		{"H100", "2g.20gb", 3},
		{"H100", "3g.40gb", 2},
		{"H200", "4g.71gb", 1},
		{"B200", "7g.180gb", 1},
		{"A30", "1g.6gb", 4},
		{"A30", "2g.12gb", 2},
		{"NVIDIA RTX PRO 6000 Blackwell Server Edition", "2g.48gb", 2},
	} {
		g, ok := LookupGPU(c.gpu)
		if !ok {
			t.Fatalf("LookupGPU(%s) failed", c.gpu)
		}
		got, err := MIGInstances(g, c.profile)
		if err != nil || got != c.want {
			t.Errorf("MIGInstances(%s, %s) = %d, %v; want %d", c.gpu, c.profile, got, err, c.want)
		}
	}
	for _, c := range []struct{ gpu, profile, want string }{
		{"H100", "big", "does not exist on H100-SXM"},
		{"H100", "1g.5gb", "does not exist on H100-SXM"},
		{"L4", "1g.6gb", "L4 has no MIG"},
		{"GB200", "1g.23gb", "profiles of GB200 are not in the matrix"},
		{"RTX PRO 6000", "1g.24gb+gfx", "instances per GPU not in the matrix"},
	} {
		g, _ := LookupGPU(c.gpu)
		if _, err := MIGInstances(g, c.profile); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MIGInstances(%s, %s) error %v, want %q", c.gpu, c.profile, err, c.want)
		}
	}
}

// TestMIGData: every GPU with MIG profiles says where they come from, and
// no profile holds more instances than the GPU's maximum.
func TestMIGData(t *testing.T) {
	for _, p := range cat().gpus.Products {
		if p.MIG == nil || len(p.MIG.Profiles) == 0 {
			continue
		}
		if p.MIG.Source == "" || p.MIG.AsOf == "" {
			t.Errorf("%s: MIG profiles without source and as_of", p.ID)
		}
		for _, prof := range p.MIG.Profiles {
			if prof.Instances < 0 || prof.Instances > p.MIG.MaxInstances {
				t.Errorf("%s %s: %d instances, max %d", p.ID, prof.Name, prof.Instances, p.MIG.MaxInstances)
			}
		}
	}
}

func TestGPUsPerNode(t *testing.T) {
	for _, c := range []struct {
		provider, machine string
		count, want       int
		ok                bool
	}{
		{"eks", "p5.48xlarge", 0, 8, true},
		{"gke", "a3-highgpu-8g", 0, 8, true},
		{"", "a3-highgpu-8g", 0, 8, true}, // any provider
		{"", "p5.48xlarge", 0, 8, true},
		{"gke", "a2-highgpu-1g", 0, 1, true},
		{"gke", "n1-standard-8", 0, 0, false}, // N1: attached GPUs are counted in the spec
		{"gke", "n1-standard-8", 2, 2, true},
		{"eks", "no-such.type", 0, 0, false},
		{"eks", "p5.48xlarge", 4, 4, true}, // the spec's count is what the node is expected to have
	} {
		got, ok := GPUsPerNode(c.provider, c.machine, c.count)
		if got != c.want || ok != c.ok {
			t.Errorf("GPUsPerNode(%q, %q, %d) = %d, %v; want %d, %v", c.provider, c.machine, c.count, got, ok, c.want, c.ok)
		}
	}
	// A pool of several sizes: the most GPUs one of its nodes can have.
	for types, want := range map[string]int{"g6.xlarge,g6.12xlarge": 4, "g6.48xlarge,g6.xlarge": 8, "no-such.type,g6.2xlarge": 1} {
		if n, ok := PoolGPUsPerNode("eks", &spec.NodePool{InstanceTypes: strings.Split(types, ",")}); n != want || !ok {
			t.Errorf("PoolGPUsPerNode(%s) = %d, %v; want %d", types, n, ok, want)
		}
	}
	if _, ok := PoolGPUsPerNode("eks", &spec.NodePool{InstanceTypes: []string{"no-such.type"}}); ok {
		t.Error("PoolGPUsPerNode(unknown type) invents a count")
	}
	p := &spec.NodePool{InstanceTypes: []string{"p4d.24xlarge"}}
	if n, ok := PoolGPUsPerNode("eks", p); n != 8 || !ok {
		t.Errorf("PoolGPUsPerNode(p4d) = %d, %v", n, ok)
	}
}

func TestGPUResolver(t *testing.T) {
	// gpu.type wins; else the machine type's GPU.
	if g, ok := PoolGPU("gke", &spec.NodePool{MachineType: "a3-highgpu-8g"}); !ok || g.ID != "H100-SXM" {
		t.Errorf("PoolGPU(a3-highgpu-8g) = %s, %v", g.ID, ok)
	}
	if g, ok := PoolGPU("gke", &spec.NodePool{MachineType: "n1-standard-8", GPU: spec.GPU{Type: "nvidia-tesla-t4"}}); !ok || g.ID != "T4" {
		t.Errorf("PoolGPU(n1 + T4) = %s, %v", g.ID, ok)
	}
	if _, ok := PoolGPU("gke", &spec.NodePool{MachineType: "n1-standard-8"}); ok {
		t.Error("PoolGPU(n1 without gpu.type) invents a GPU")
	}
	for _, c := range []struct {
		p    spec.NodePool
		want string
	}{
		{spec.NodePool{MachineType: "a3-highgpu-8g", GPU: spec.GPU{Type: "H100"}}, "nvidia-h100-80gb"},
		{spec.NodePool{MachineType: "a3-highgpu-8g"}, "nvidia-h100-80gb"},
		{spec.NodePool{MachineType: "n1-standard-8", GPU: spec.GPU{Type: "nvidia-tesla-t4"}}, "nvidia-tesla-t4"},
		{spec.NodePool{MachineType: "n1-standard-8"}, ""},
	} {
		if got := PoolAcceleratorType("gke", &c.p); got != c.want {
			t.Errorf("PoolAcceleratorType(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
	for _, c := range []struct {
		exp, obs string
		want     bool
	}{
		{"nvidia-h100-80gb", "NVIDIA H100 80GB HBM3", true}, // GKE accelerator type vs nvidia-smi
		{"H100-SXM", "NVIDIA-H100-80GB-HBM3", true},         // product ID vs GFD label
		{"A100-80GB", "NVIDIA H100 80GB HBM3", false},
		{"H100", "NVIDIA H100 80GB HBM3", true},
		{"L4", "NVIDIA L40", false},
		{"NVIDIA-Future-X9", "NVIDIA Future X9 96GB", true}, // unknown to the matrix: word match
		{"", "NVIDIA H100 80GB HBM3", false},
	} {
		if got := SameGPU(c.exp, c.obs); got != c.want {
			t.Errorf("SameGPU(%q, %q) = %v", c.exp, c.obs, got)
		}
	}
	if !GPUNameContains("NVIDIA-A100-SXM4-40GB", "A100 SXM4") || GPUNameContains("NVIDIA A100-PCIE-40GB", "A100-SXM4") || GPUNameContains("x", "") {
		t.Error("GPUNameContains")
	}
}

// TestPrintedGPUNames: every name gpus.yaml says a tool prints resolves to
// its product through the one resolver (LookupGPU, SameGPU), and so do the
// strings of issue 9 and the derived forms (GFD's dashes, MIG suffixes).
func TestPrintedGPUNames(t *testing.T) {
	c := cat()
	n := 0
	for _, p := range c.gpus.Products {
		for _, pn := range p.Printed {
			n++
			if pn.Source == "" || pn.AsOf == "" {
				t.Errorf("%s: printed %q has no source", p.ID, pn.Name)
			}
			if !SameGPU(p.ID, pn.Name) {
				t.Errorf("SameGPU(%s, %q) = false (%s prints it)", p.ID, pn.Name, pn.By)
			}
			if pn.FamilyName {
				continue
			}
			if g, ok := LookupGPU(pn.Name); !ok || g.ID != p.ID {
				t.Errorf("LookupGPU(%q) = %s, %v; want %s (%s prints it)", pn.Name, g.ID, ok, p.ID, pn.By)
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d printed names", n)
	}
	for name, want := range map[string]string{
		// nvidia-smi
		"NVIDIA H200 141GB HBM3e": "H200", "NVIDIA H200": "H200", "NVIDIA H100 80GB HBM3": "H100-SXM",
		"NVIDIA A100-SXM4-80GB": "A100-80GB", "NVIDIA A100-SXM4-40GB": "A100-40GB", "Tesla T4": "T4",
		"NVIDIA A10G": "A10G", "NVIDIA L4": "L4", "NVIDIA H100 NVL": "H100-NVL", "Tesla V100-SXM2-16GB": "V100",
		// GPU Feature Discovery
		"NVIDIA-H100-80GB-HBM3": "H100-SXM", "NVIDIA-H200": "H200", "NVIDIA-A100-SXM4-80GB": "A100-80GB",
		"NVIDIA-A100-SXM4-80GB-MIG-1g.10gb": "A100-80GB", "A100-SXM4-40GB-MIG-1g.5gb": "A100-40GB",
		"NVIDIA-H100-80GB-HBM3-MIG-3g.40gb": "H100-SXM", "NVIDIA-H200-MIG-1g.18gb+me": "H200", "NVIDIA-L40S": "L40S",
		"NVIDIA H100 NVL MIG 3g.47gb": "H100-NVL",
		// EC2 GpuInfo names and Karpenter's instance-gpu-name
		"H100": "H100-SXM", "A10G": "A10G", "L40S": "L40S", "T4g": "T4G", "t4g": "T4G", "h200": "H200", "l4": "L4",
		"b200": "B200", "b300": "B300", "rtx-pro-server-6000": "RTX-PRO-6000", "rtx-pro-4500": "RTX-PRO-4500",
	} {
		if g, ok := LookupGPU(name); !ok || g.ID != want {
			t.Errorf("LookupGPU(%q) = %s, %v; want %s", name, g.ID, ok, want)
		}
	}
	for _, c := range []struct {
		exp, obs string
		want     bool
	}{
		{"A100-80GB", "a100", true}, {"A100-40GB", "A100", true}, // EC2 prints A100 on p4d and p4de
		{"H100", "NVIDIA H100 PCIe", true}, // the family name matches any H100
		{"H100-SXM", "NVIDIA H100 PCIe", false},
		{"H200", "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", false},
		{"A100-80GB", "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", true},
		{"nvidia-h200-141gb", "NVIDIA H200 141GB HBM3e", true},
		{"A100", "NVIDIA H100 80GB HBM3", false},
	} {
		if got := SameGPU(c.exp, c.obs); got != c.want {
			t.Errorf("SameGPU(%q, %q) = %v, want %v", c.exp, c.obs, got, c.want)
		}
	}
	if _, ok := LookupGPU("MIG 1g.10gb"); ok {
		t.Error("a bare MIG profile resolves to a GPU")
	}
}

// TestCorpusGPUNames: the product names of the real nvidia-smi outputs in
// testdata/corpus resolve.
func TestCorpusGPUNames(t *testing.T) {
	re := regexp.MustCompile(`(?m)(?:Product Name\s+: |<product_name>|^GPU \d+: )(NVIDIA [^(<\n]+?|Tesla [^(<\n]+?)\s*(?:\(UUID|<|$)`)
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "corpus", "nvidia-smi", "*"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "corpus", "nvlink-ecc-mig", "*"))
	seen := 0
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			name := strings.TrimSpace(m[1])
			if strings.Contains(name, "RTX 4000 SFF") { // a workstation GPU the catalogue does not list
				continue
			}
			seen++
			if _, ok := LookupGPU(name); !ok {
				t.Errorf("%s: %q does not resolve", filepath.Base(f), name)
			}
		}
	}
	if seen < 10 {
		t.Errorf("only %d product names found in the corpus", seen)
	}
}

// TestEveryGPUHasDriverFloor: every product, Kepler through Blackwell Ultra,
// has a first driver branch (its own or its architecture's), below its last
// one where a branch dropped it; the architectures that were dropped carry
// their last branch (Kepler after R470; Maxwell, Pascal and Volta after R580).
func TestEveryGPUHasDriverFloor(t *testing.T) {
	last := map[string]int{"Kepler": 470, "Maxwell": 580, "Pascal": 580, "Volta": 580}
	for _, g := range GPUs() {
		if g.MinDriverBranch == 0 {
			t.Errorf("%s (%s): no driver branch floor", g.ID, g.Arch)
		}
		if g.LastDriverBranch != 0 && g.LastDriverBranch < g.MinDriverBranch {
			t.Errorf("%s: floor R%d above its last branch R%d", g.ID, g.MinDriverBranch, g.LastDriverBranch)
		}
		if want, dropped := last[g.Arch]; dropped && g.LastDriverBranch != want {
			t.Errorf("%s (%s): last branch R%d, want R%d", g.ID, g.Arch, g.LastDriverBranch, want)
		}
		if _, dropped := last[g.Arch]; !dropped && g.LastDriverBranch != 0 {
			t.Errorf("%s (%s): last branch R%d on an architecture still supported", g.ID, g.Arch, g.LastDriverBranch)
		}
	}
	for id, want := range map[string]int{"K80": 346, "P100": 367, "V100": 384, "T4": 410, "T4G": 410, "H200": 520, "B300": 580} {
		if g, ok := LookupGPU(id); !ok || g.MinDriverBranch != want {
			t.Errorf("%s floor = R%d, want R%d", id, g.MinDriverBranch, want)
		}
	}
}
