package matrix

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestData loads every embedded file and holds each entry to provenance:
// a source URL and an as_of date, on the entry or on the group it is in.
func TestData(t *testing.T) {
	if _, err := load(); err != nil {
		t.Fatalf("embedded data does not load: %v", err)
	}
	files, err := fs.Glob(dataFS, "data/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no data files: %v", err)
	}
	for _, name := range files {
		b, _ := dataFS.ReadFile(name)
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var problems []string
		checkProvenance(doc, name, false, &problems)
		for _, p := range problems {
			t.Error(p)
		}
	}
}

func checkProvenance(n any, path string, inherited bool, problems *[]string) {
	switch v := n.(type) {
	case map[string]any:
		src, hasSrc := v["source"].(string)
		asOf, hasAsOf := v["as_of"].(string)
		if hasSrc && !strings.HasPrefix(src, "https://") {
			*problems = append(*problems, fmt.Sprintf("%s: source %q is not an https URL", path, src))
		}
		if hasAsOf && asOf == "" {
			*problems = append(*problems, fmt.Sprintf("%s: empty as_of", path))
		}
		here := inherited || (hasSrc && hasAsOf)
		for k, c := range v {
			checkProvenance(c, path+"."+k, here, problems)
		}
	case []any:
		for i, c := range v {
			p := fmt.Sprintf("%s[%d]", path, i)
			if m, ok := c.(map[string]any); ok {
				_, s := m["source"]
				_, a := m["as_of"]
				if !inherited && !(s && a) {
					*problems = append(*problems, fmt.Sprintf("%s: entry without source and as_of", p))
				}
			}
			checkProvenance(c, p, inherited, problems)
		}
	}
}

func TestDataIndex(t *testing.T) {
	c := cat()
	// Every machine's GPU exists, every EKS instance has an architecture.
	for prov, ms := range c.machines {
		for name, m := range ms {
			if m.GPU != "" {
				if _, ok := c.products[m.GPU]; !ok {
					t.Errorf("%s %s: unknown GPU %s", prov, name, m.GPU)
				}
			}
			if m.Arch != "amd64" && m.Arch != "arm64" {
				t.Errorf("%s %s: arch %q", prov, name, m.Arch)
			}
			if m.Source == "" || m.AsOf == "" {
				t.Errorf("%s %s: no provenance", prov, name)
			}
		}
	}
	// Ranges in the reference were expanded into explicit entries.
	for _, name := range []string{"g5g.xlarge", "g5g.2xlarge", "g5g.4xlarge", "g5g.8xlarge", "g5g.16xlarge", "g5g.metal", "g6f.large", "g6f.xlarge", "g7e.2xlarge", "g7e.4xlarge"} {
		if _, ok := LookupMachine("eks", name); !ok {
			t.Errorf("eks %s missing", name)
		}
	}
	for _, name := range []string{"g2-standard-4", "g2-standard-8", "g2-standard-12", "g2-standard-16", "g2-standard-32", "g4-standard-6", "g4-standard-12", "g4-standard-24"} {
		if _, ok := LookupMachine("gke", name); !ok {
			t.Errorf("gke %s missing", name)
		}
	}
	// Toolkit table is in version order and every minimum parses.
	for i := 1; i < len(c.cuda.Toolkits); i++ {
		if !c.cuda.Toolkits[i-1].version.Less(c.cuda.Toolkits[i].version) {
			t.Errorf("toolkits out of order at %s", c.cuda.Toolkits[i].Release)
		}
	}
	// Releases are named as NVIDIA names them: one "X.Y GA" per minor
	// (ga: true), updates "X.Y Update N" numbered 1, 2, ... in version
	// order, and every release of 13.x names its driver branch or minimum.
	updates := map[string]int{}
	for _, tk := range c.cuda.Toolkits {
		mm := fmt.Sprintf("%d.%d", tk.version[0], minor(tk.version))
		switch {
		case !tk.exists() || strings.HasSuffix(tk.Release, " RC"):
		case tk.GA:
			if tk.Release != mm+" GA" {
				t.Errorf("toolkit %s (%s): a GA release is named %q", tk.Release, tk.Version, mm+" GA")
			}
		default:
			updates[mm]++
			if want := fmt.Sprintf("%s Update %d", mm, updates[mm]); tk.Release != want {
				t.Errorf("toolkit %s (%s): want release %q", tk.Release, tk.Version, want)
			}
		}
		if tk.exists() && tk.version[0] >= 13 && tk.Branch == 0 && tk.MinDriver == "" {
			t.Errorf("toolkit %s has neither a driver branch nor a minimum driver", tk.Release)
		}
	}
	// A driver branch is released before its end of life, and a branch a
	// toolkit pairs with is in the lifecycle table.
	for _, b := range c.drivers.Branches {
		if b.Released == "" || b.eol.IsZero() {
			continue
		}
		rel, err := parseDate(b.Released)
		if err != nil {
			t.Errorf("R%d released: %v", b.Branch, err)
			continue
		}
		if !rel.Before(b.eol) {
			t.Errorf("R%d: released %s is not before its end of life %s", b.Branch, b.Released, b.EOL)
		}
	}
	for _, tk := range c.cuda.Toolkits {
		if _, ok := c.branches[tk.Branch]; tk.Branch != 0 && !ok {
			t.Errorf("toolkit %s pairs with R%d, which drivers.yaml lacks", tk.Release, tk.Branch)
		}
	}
}

// TestGKECOSLimits: every machine type a COS limit names is in the
// catalogue, its failing milestones are past its limit, and the GKE minors
// the driver table maps to COS milestones give them (1.33: COS 121, 1.35:
// COS 125).
func TestGKECOSLimits(t *testing.T) {
	ls := cat().gcp.GKE.COSLimits
	if len(ls) == 0 {
		t.Fatal("no cos_limits")
	}
	for _, l := range ls {
		for _, name := range l.MachineTypes {
			if _, ok := LookupMachine("gke", name); !ok {
				t.Errorf("cos_limits names %s, which is not a GKE machine type", name)
			}
		}
		for _, f := range l.Failing {
			if f <= l.COSMax {
				t.Errorf("cos_limits %v: failing milestone %d is not past cos_max %d", l.MachineTypes, f, l.COSMax)
			}
		}
		if l.Source == "" || l.AsOf == "" {
			t.Errorf("cos_limits %v without source or as_of", l.MachineTypes)
		}
	}
	for k8s, want := range map[string]int{"1.33": 121, "1.35": 125, "1.34.10-gke.1236000": 125, "1.36": 129, "1.32": 0, "": 0} {
		if got, _ := GKECOSMilestone(k8s); got != want {
			t.Errorf("GKECOSMilestone(%q) = %d, want %d", k8s, got, want)
		}
	}
	if l := GKECOSLimitFor("a3-highgpu-8g"); l == nil || l.COSMax != 121 {
		t.Errorf("GKECOSLimitFor(a3-highgpu-8g) = %+v", l)
	}
}
