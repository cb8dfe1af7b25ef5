package matrix

import (
	"slices"
	"sort"
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestLocalDisksCover: every GPU machine of gcp.yaml and aws.yaml has a
// row in localssd.yaml, except the ones listed here, whose local disks no
// source gpuctl reads gives (a new machine without a row fails here).
func TestLocalDisksCover(t *testing.T) {
	notCaptured := map[string][]string{
		spec.ProviderGKE: {"a4x-highgpu-4g-nolssd"},
		spec.ProviderEKS: {"g3.16xlarge", "g3.4xlarge", "g3.8xlarge", "g3s.xlarge", "p2.16xlarge", "p2.8xlarge", "p2.xlarge", "p6e-gb200.36xlarge"},
	}
	c := cat()
	for prov, ms := range c.machines {
		var missing []string
		for name, m := range ms {
			if m.Family {
				continue
			}
			if _, ok := LookupLocalDisks(prov, name); !ok {
				missing = append(missing, name)
			}
		}
		sort.Strings(missing)
		if !slices.Equal(missing, notCaptured[prov]) {
			t.Errorf("%s machines without local disk facts = %v, want %v", prov, missing, notCaptured[prov])
		}
	}
}

func TestLookupLocalDisks(t *testing.T) {
	cases := []struct {
		prov, name      string
		fixed, optional bool
		count, totalGB  int
	}{
		{"gke", "a3-highgpu-8g", true, false, 16, 0},
		{"gke", "a3-megagpu-8g", true, false, 16, 0},
		{"gke", "a3-ultragpu-8g", true, false, 32, 0},
		{"gke", "a4-highgpu-8g", true, false, 32, 0},
		{"gke", "a2-ultragpu-8g", true, false, 0, 0},
		{"gke", "a2-highgpu-8g", false, true, 0, 0},
		{"gke", "g2-standard-8", false, true, 0, 0},
		{"gke", "n1-standard-8", false, true, 0, 0},
		{"eks", "p5.48xlarge", true, false, 0, 30400},
		{"eks", "p4d.24xlarge", true, false, 0, 8000},
		{"eks", "g6.xlarge", true, false, 0, 250},
		{"eks", "g6e.48xlarge", true, false, 0, 7600},
		{"eks", "g5g.xlarge", false, false, 0, 0},
		{"eks", "p3.16xlarge", false, false, 0, 0},
	}
	for _, tc := range cases {
		d, ok := LookupLocalDisks(tc.prov, tc.name)
		if !ok || d.Fixed != tc.fixed || d.Optional != tc.optional || d.Count != tc.count || d.TotalGB != tc.totalGB || d.Source == "" || d.AsOf == "" {
			t.Errorf("LookupLocalDisks(%s, %s) = %+v, %v", tc.prov, tc.name, d, ok)
		}
	}
	if _, ok := LookupLocalDisks("gke", "p5.48xlarge"); ok {
		t.Error("an EKS instance type has GKE local SSD facts")
	}
	if !GKEFixedLocalSSDs("a4x-highgpu-4g") || GKEFixedLocalSSDs("g2-standard-8") || GKEFixedLocalSSDs("a4x-highgpu-4g-nolssd") {
		t.Error("GKEFixedLocalSSDs disagrees with localssd.yaml")
	}
}

func TestEffectiveLocalStorage(t *testing.T) {
	cases := []struct {
		name, prov, role, machine string
		types                     []string
		asked, want               string
	}{
		{"GKE training A3 Mega: on by default", "gke", "training", "a3-megagpu-8g", nil, "", "raid0"},
		{"GKE training, none turns it off", "gke", "training", "a3-megagpu-8g", nil, "none", "none"},
		{"GKE inference A3 Mega: unset stays unset", "gke", "inference", "a3-megagpu-8g", nil, "", ""},
		{"GKE training G2: optional SSDs are not attached by default", "gke", "training", "g2-standard-8", nil, "", ""},
		{"GKE raid0 asked on G2 stays raid0 (the generator says how)", "gke", "inference", "g2-standard-8", nil, "raid0", "raid0"},
		{"EKS training p5: on by default", "eks", "training", "p5.48xlarge", nil, "", "raid0"},
		{"EKS training p3: EBS only", "eks", "training", "p3.16xlarge", nil, "", ""},
		{"EKS raid0 asked on g5g: nothing to RAID", "eks", "training", "g5g.xlarge", nil, "raid0", ""},
		{"EKS raid0 asked on an uncaptured type is kept", "eks", "training", "p2.xlarge", nil, "raid0", "raid0"},
		{"EKS training over types all with NVMe", "eks", "training", "", []string{"g6e.12xlarge", "g6e.24xlarge"}, "", "raid0"},
		{"EKS training with one EBS-only type", "eks", "training", "", []string{"g6.xlarge", "g5g.xlarge"}, "", ""},
	}
	for _, tc := range cases {
		p := &spec.NodePool{Name: "p", Role: tc.role, MachineType: tc.machine, InstanceTypes: tc.types, LocalStorage: tc.asked}
		if got := EffectiveLocalStorage(tc.prov, p); got != tc.want {
			t.Errorf("%s: EffectiveLocalStorage = %q, want %q", tc.name, got, tc.want)
		}
	}
}
