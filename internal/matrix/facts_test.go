package matrix

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestLookupGPUAliases(t *testing.T) {
	for name, want := range map[string]string{
		"H100":                  "H100-SXM",
		"nvidia-h100-80gb":      "H100-SXM",
		"H100 SXM":              "H100-SXM",
		"NVIDIA H100 80GB HBM3": "H100-SXM",
		"nvidia-h100-mega-80gb": "H100-SXM",
		"A10G":                  "A10G",
		"NVIDIA-A10G":           "A10G",
		"L4":                    "L4",
		"nvidia-l4":             "L4",
		"nvidia-tesla-a100":     "A100-40GB",
		"nvidia-a100-80gb":      "A100-80GB",
		"Tesla V100-SXM2-16GB":  "V100",
		"gh200":                 "GH200",
		"nvidia-rtx-pro-6000":   "RTX-PRO-6000",
		"GeForce RTX 4090":      "RTX-4090",
	} {
		g, ok := LookupGPU(name)
		if !ok || g.ID != want {
			t.Errorf("LookupGPU(%q) = %q, %v; want %q", name, g.ID, ok, want)
		}
	}
	if _, ok := LookupGPU("RTX 9999"); ok {
		t.Error("LookupGPU(RTX 9999) found something")
	}
	if _, ok := LookupGPU(""); ok {
		t.Error("LookupGPU(\"\") found something")
	}
}

func TestGPUFacts(t *testing.T) {
	v100, _ := LookupGPU("V100")
	if v100.LastDriverBranch != 580 || v100.MaxCUDA != "12.9" || v100.MIG {
		t.Errorf("V100 = %+v", v100)
	}
	k80, _ := LookupGPU("K80")
	if k80.LastDriverBranch != 470 || k80.MaxCUDA != "11.8" {
		t.Errorf("K80 = %+v", k80)
	}
	b200, _ := LookupGPU("B200")
	if !b200.OpenModulesOnly || b200.MinDriverBranch != 570 || b200.MinCUDA != "12.8" || !b200.MIG {
		t.Errorf("B200 = %+v", b200)
	}
	h200, _ := LookupGPU("H200")
	// No H200 minimum of its own is invented: only Hopper's floor (R520).
	if h200.MinDriverBranch != 520 || h200.MinDriver != "" || h200.MIGMinDriver != "550.90.07" {
		t.Errorf("H200 minimum: %+v", h200)
	}
	l4, _ := LookupGPU("L4")
	if l4.MIG || l4.MinCUDA != "11.8" || l4.MinDriverBranch != 520 {
		t.Errorf("L4 = %+v", l4)
	}
	if len(GPUs()) < 20 {
		t.Errorf("GPUs() = %d products", len(GPUs()))
	}
}

func TestLookupMachine(t *testing.T) {
	cases := []struct {
		provider, name, accel, gpu string
		count                      int
		arch                       string
	}{
		{"gke", "a2-ultragpu-8g", "nvidia-a100-80gb", "A100-80GB", 8, "amd64"},
		{"gke", "a2-highgpu-1g", "nvidia-tesla-a100", "A100-40GB", 1, "amd64"},
		{"gke", "a3-megagpu-8g", "nvidia-h100-mega-80gb", "H100-SXM", 8, "amd64"},
		{"gke", "g2-standard-24", "nvidia-l4", "L4", 2, "amd64"},
		{"gke", "g2-standard-32", "nvidia-l4", "L4", 1, "amd64"},
		{"gke", "a4x-highgpu-4g", "nvidia-gb200", "GB200", 4, "arm64"},
		{"eks", "g5.xlarge", "", "A10G", 1, "amd64"},
		{"eks", "g5g.8xlarge", "", "T4G", 1, "arm64"},
		{"eks", "p4d.24xlarge", "", "A100-40GB", 8, "amd64"},
		{"eks", "p4de.24xlarge", "", "A100-80GB", 8, "amd64"},
		{"eks", "p5.48xlarge", "", "H100-SXM", 8, "amd64"},
		{"eks", "p6e-gb200.36xlarge", "", "GB200", 4, "arm64"},
	}
	for _, c := range cases {
		m, ok := LookupMachine(c.provider, c.name)
		if !ok || m.AcceleratorType != c.accel || m.GPU != c.gpu || m.GPUCount != c.count || m.Arch != c.arch {
			t.Errorf("LookupMachine(%s, %s) = %+v, %v", c.provider, c.name, m, ok)
		}
	}
	n1, ok := LookupMachine("gke", "n1-standard-8")
	if !ok || n1.GPU != "" || n1.Attachable["nvidia-tesla-t4"] == nil || n1.Attachable["nvidia-tesla-a100"] != nil {
		t.Errorf("n1-standard-8 = %+v", n1)
	}
	p5, _ := LookupMachine("eks", "p5.48xlarge")
	if !p5.EFA || p5.NetworkCards != 32 || p5.Fabric != FabricEFA {
		t.Errorf("p5.48xlarge = %+v", p5)
	}
	// G7 sizes are listed (2 GPUs on the 12xlarge, unlike g6e's 4); another
	// size still matches the family with an unknown count.
	g7, ok := LookupMachine("eks", "g7.12xlarge")
	if !ok || g7.Family || g7.GPU != "RTX-PRO-4500" || g7.GPUCount != 2 || g7.MinDriverBranch != 595 || !g7.EFA {
		t.Errorf("g7.12xlarge = %+v, %v", g7, ok)
	}
	for name, want := range map[string]int{"g7.2xlarge": 1, "g7.4xlarge": 1, "g7.8xlarge": 1, "g7.24xlarge": 4, "g7.48xlarge": 8} {
		if m, ok := LookupMachine("eks", name); !ok || m.GPUCount != want || m.Family {
			t.Errorf("%s = %d GPUs (family %v, found %v), want %d", name, m.GPUCount, m.Family, ok, want)
		}
	}
	// Previous-generation types carry their GPU and count (EC2 counts one
	// GK210 of a K80 and one GM204 of an M60 as a GPU).
	for name, want := range map[string]struct {
		gpu   string
		count int
	}{"p2.xlarge": {"K80", 1}, "p2.8xlarge": {"K80", 8}, "p2.16xlarge": {"K80", 16}, "g3s.xlarge": {"M60", 1}, "g3.4xlarge": {"M60", 1}, "g3.8xlarge": {"M60", 2}, "g3.16xlarge": {"M60", 4}} {
		if m, ok := LookupMachine("eks", name); !ok || m.Family || m.GPU != want.gpu || m.GPUCount != want.count {
			t.Errorf("%s = %+v (found %v), want %d x %s", name, m, ok, want.count, want.gpu)
		}
	}
	if m, ok := LookupMachine("eks", "g7.96xlarge"); !ok || !m.Family || m.MinDriverBranch != 595 {
		t.Errorf("g7.96xlarge = %+v, %v: want the g7 family", m, ok)
	}
	if _, ok := LookupMachine("gke", "n1-standard-8-a100"); ok {
		t.Error("n1-standard-8-a100 exists")
	}
	near := NearestMachines("gke", "n1-standard-8-a100", 3)
	if len(near) != 3 || near[0] != "n1-standard-8" || !slices.Contains(near, "a2-highgpu-1g") {
		t.Errorf("NearestMachines(n1-standard-8-a100) = %v", near)
	}
	if got := NearestMachines("eks", "p5.48xl", 1); len(got) != 1 || got[0] != "p5.48xlarge" {
		t.Errorf("NearestMachines(p5.48xl) = %v", got)
	}
}

func TestCUDAFacts(t *testing.T) {
	for v, want := range map[string]struct{ release, min string }{
		"12.4":   {"12.4 GA", "550.54.14"},
		"12.4.0": {"12.4 GA", "550.54.14"},
		"12.4.1": {"12.4 Update 1", "550.54.15"},
		"12.2.2": {"12.2 Update 2", "535.104.05"},
		"11.0":   {"11.0 GA", "450.51.05"},
		"11.0.2": {"11.0 GA", "450.51.05"},
		"11.0.3": {"11.0 Update 1", "450.51.06"},
		"13.0":   {"13.0 GA", "580.65.06"},
	} {
		f, err := CUDAFacts(v)
		if err != nil || f.Release != want.release || f.MinDriver != want.min {
			t.Errorf("CUDAFacts(%s) = %s %s, %v; want %s %s", v, f.Release, f.MinDriver, err, want.release, want.min)
		}
		if len(f.Sources) == 0 || f.AsOf == "" {
			t.Errorf("CUDAFacts(%s) has no provenance", v)
		}
	}
	f, _ := CUDAFacts("12.4")
	if f.MinorCompatFloor != "525.60.13" || !slices.Equal(f.ForwardCompat, []int{535}) {
		t.Errorf("CUDAFacts(12.4) compat = %q %v", f.MinorCompatFloor, f.ForwardCompat)
	}
	f, _ = CUDAFacts("13.4")
	if f.Branch != 615 || f.MinDriver != "" {
		t.Errorf("CUDAFacts(13.4) = %+v", f)
	}
	// Update releases of the branch-only 13.x minors are their own rows:
	// "13.3.1" is 13.3 Update 1 and "13.4.2" 13.4 Update 1, not GA with a
	// fallback note; 13.4.1 is 13.4 GA (its third digit is a build number).
	for v, want := range map[string]struct {
		release string
		branch  int
	}{
		"13.3": {"13.3 GA", 610}, "13.3.0": {"13.3 GA", 610}, "13.3.1": {"13.3 Update 1", 610},
		"13.4": {"13.4 GA", 615}, "13.4.0": {"13.4 GA", 615}, "13.4.1": {"13.4 GA", 615}, "13.4.2": {"13.4 Update 1", 615},
		"13.5": {"13.5 GA", 620}, "13.5.0": {"13.5 GA", 620},
	} {
		f, err := CUDAFacts(v)
		if err != nil || f.Release != want.release || f.Branch != want.branch {
			t.Errorf("CUDAFacts(%s) = %s R%d, %v; want %s R%d", v, f.Release, f.Branch, err, want.release, want.branch)
		}
		for _, n := range f.Notes {
			if strings.Contains(n, "is not in the matrix") {
				t.Errorf("CUDAFacts(%s) falls back: %s", v, n)
			}
		}
	}
	if f, _ := CUDAFacts("13.3.2"); !strings.Contains(strings.Join(f.Notes, " "), "13.3 Update 1 (the newest known release of 13.3)") {
		t.Errorf("CUDAFacts(13.3.2) notes = %q, want the fallback to 13.3 Update 1", f.Notes)
	}
	for _, bad := range []string{"12.7", "12.7.1", "11.9", "12.10", "abc", "12", "15.0"} {
		if _, err := CUDAFacts(bad); err == nil {
			t.Errorf("CUDAFacts(%s) succeeded", bad)
		}
	}
}

func TestDriverBranches(t *testing.T) {
	at := asOf20261129
	r535, _ := LookupBranch(535)
	r580, _ := LookupBranch(580)
	r570, _ := LookupBranch(570)
	r610, _ := LookupBranch(610)
	if !r535.EndOfLife(at) || r580.EndOfLife(at) || !r570.EndOfLife(at) || r580.Type != "LTSB" || r610.Type != "NFB" {
		t.Errorf("branches: 535 %+v 580 %+v 570 %+v", r535, r580, r570)
	}
	// R570 was in support before its February 2026 EOL.
	if r570.EndOfLife(mustDate("2026-02-28")) || !r570.EndOfLife(mustDate("2026-03-01")) {
		t.Error("R570 EOL boundary wrong")
	}
	if !r580.InSupport(at) || r535.InSupport(at) {
		t.Error("InSupport wrong")
	}
}

func TestNCCLBaseline(t *testing.T) {
	for _, sku := range []string{"H100-SXM-8", "h100-sxm-x8", "p5.48xlarge", "a3-highgpu-8g", "H100", "NVIDIA H100 80GB HBM3"} {
		b, ok := NCCLBaseline(sku)
		if !ok || b.ID != "H100-SXM-8" || b.MinBusBandwidthGBps != 450 || b.MaxBusBandwidthGBps != 480 || b.Algo != "NVLS (default)" || len(b.Sources) == 0 {
			t.Errorf("NCCLBaseline(%s) = %+v, %v", sku, b, ok)
		}
		// The acceptance minimum is 90% of the RING figure, not of NVLS's.
		if b.AcceptanceMinBusBandwidthGBps != 333 || b.AcceptanceAlgo != "RING" {
			t.Errorf("NCCLBaseline(%s) acceptance = %v with %s, want 333 with RING", sku, b.AcceptanceMinBusBandwidthGBps, b.AcceptanceAlgo)
		}
	}
	if b, ok := NCCLBaseline("H100-SXM-8-RING"); !ok || b.MinBusBandwidthGBps != 370 || b.Algo != "RING" {
		t.Errorf("NCCLBaseline(H100-SXM-8-RING) = %+v, %v", b, ok)
	}
	if b, ok := NCCLBaseline("NDR-400-PER-NIC"); !ok || b.MinBusBandwidthGBps != 46 || b.GPUs != 0 {
		t.Errorf("NCCLBaseline(NDR-400-PER-NIC) = %+v, %v", b, ok)
	}
	if _, ok := NCCLBaseline("L4"); ok {
		t.Error("NCCLBaseline(L4) invents a baseline")
	}
}

// TestNCCLBaselineSet: each acceptance minimum is min_fraction of the
// lowest figure, of the algorithm min_algo names, and the expected text
// says which algorithm each figure assumes.
func TestNCCLBaselineSet(t *testing.T) {
	asOf, bs := NCCLBaselines()
	if asOf == "" || len(bs) < 4 {
		t.Fatalf("NCCLBaselines() = %q, %d entries", asOf, len(bs))
	}
	frac := cat().nccl.Baselines.MinFraction
	noFigure := 0
	for _, b := range bs {
		if b.NoFigure != "" {
			// No published figure: no minimum, no figures, a source of where it was looked for.
			noFigure++
			if b.MinBusBandwidthGBps != 0 || len(b.Figures) != 0 || len(b.Sources) == 0 || b.AsOf == "" {
				t.Errorf("%s: no_figure with a minimum, figures or without source: %+v", b.SKU, b)
			}
			continue
		}
		lowest := b.Figures[0]
		for _, f := range b.Figures {
			if f.MinBusBandwidthGBps < lowest.MinBusBandwidthGBps {
				lowest = f
			}
			if f.Algo == "" || len(f.Sources) == 0 || f.AsOf == "" {
				t.Errorf("%s: figure %+v lacks algo, source or as_of", b.SKU, f)
			}
		}
		if lowest.Algo != b.MinAlgo {
			t.Errorf("%s: minimum assumes %s, lowest figure is %s's", b.SKU, b.MinAlgo, lowest.Algo)
		}
		if want := math.Floor(frac * lowest.MinBusBandwidthGBps); b.MinBusBandwidthGBps != want {
			t.Errorf("%s: minimum %v, want %v (%v x %v)", b.SKU, b.MinBusBandwidthGBps, want, frac, lowest.MinBusBandwidthGBps)
		}
		if _, ok := LookupGPU(b.GPU); !ok {
			t.Errorf("%s: unknown GPU %s", b.SKU, b.GPU)
		}
	}
	if got, want := bs[0].ExpectedText(), "~450-480 GB/s with NVLS (default), ~370 GB/s with NCCL_ALGO=RING"; bs[0].SKU != "h100-sxm-x8" || got != want {
		t.Errorf("%s expected %q, want %q", bs[0].SKU, got, want)
	}
	if noFigure != 3 {
		t.Errorf("%d SKUs say they have no published figure, want 3 (L4, L40S, A10G)", noFigure)
	}
}

// TestMultiNodeBaselines: each fabric's machines find its baseline; a
// minimum is min_fraction of the lowest figure of min_algo; a fabric with
// no published figure says so and has no minimum.
func TestMultiNodeBaselines(t *testing.T) {
	frac := cat().nccl.Baselines.MinFraction
	for machine, want := range map[string]struct {
		fabric string
		min    float64
	}{
		"a3-highgpu-8g": {FabricTCPX, 80}, "a3-edgegpu-8g": {FabricTCPX, 80}, "a3-megagpu-8g": {FabricTCPXO, 270},
		"p5.48xlarge": {FabricEFA, 332}, "p5e.48xlarge": {FabricEFA, 332}, "p5en.48xlarge": {FabricEFA, 332},
		"a3-ultragpu-8g": {FabricRoCE, 331}, "a4-highgpu-8g": {FabricRoCE, 331},
	} {
		b, ok := MultiNodeBaseline(machine)
		if !ok || b.Fabric != want.fabric || b.MinBusBandwidthGBps != want.min || len(b.Sources) == 0 || b.AsOf == "" {
			t.Errorf("MultiNodeBaseline(%s) = %+v, %v; want fabric %s minimum %v", machine, b, ok, want.fabric, want.min)
			continue
		}
		if want.min == 0 {
			if b.NoFigure == "" || len(b.Figures) != 0 {
				t.Errorf("%s: no minimum but no no_figure reason: %+v", machine, b)
			}
			continue
		}
		lowest := NCCLBusBandwidth{MaxBusBandwidthGBps: math.Inf(1)}
		for _, f := range b.Figures {
			if len(f.Sources) == 0 || f.AsOf == "" {
				t.Errorf("%s: figure without source: %+v", machine, f)
			}
			if f.Algo == b.MinAlgo && f.MaxBusBandwidthGBps < lowest.MaxBusBandwidthGBps {
				lowest = f
			}
		}
		// The minimum is 90% of the lowest figure at the largest size it gives (max_gbps of a
		// size range: tcpx; the guide's 300 GB/s expectation: tcpxo; the 16-node p5en run:
		// efa), of the lowest end for an estimate range (roce).
		base := lowest.MaxBusBandwidthGBps
		if lowest.Estimate != "" {
			base = lowest.MinBusBandwidthGBps
		}
		if got := math.Floor(frac * base); got != b.MinBusBandwidthGBps {
			t.Errorf("%s: minimum %v, want %v (%v x %v)", machine, b.MinBusBandwidthGBps, got, frac, base)
		}
	}
	if _, ok := MultiNodeBaseline("g5.48xlarge"); ok {
		t.Error("a machine without a GPU fabric has a multi-node baseline")
	}
}

// TestNearestGPUsUsesShortNames: a typo of a product name suggests it.
func TestNearestGPUsUsesShortNames(t *testing.T) {
	got := NearestGPUs("H1000", 3)
	if len(got) == 0 || got[0] != "H100" {
		t.Errorf("NearestGPUs(H1000) = %v, want H100 first", got)
	}
}
