package matrix

import (
	"fmt"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// The local NVMe SSDs of the GPU machines (data/localssd.yaml): what
// GKE's ephemeral_storage_local_ssd_config and EKS's RAID-0 of the
// instance store have to work with, and the effective localStorage of a
// pool that follows from them.

// localSSDFile is data/localssd.yaml as decoded; indexed by
// (*catalog).indexLocalSSD.
type localSSDFile struct {
	GKE []gkeLocalSSDFact `yaml:"gke"`
	EKS []eksNVMeFact     `yaml:"eks"`
}

// gkeLocalSSDFact is one GKE machine type (or, with Series, every type of
// a series) and how it comes with Local SSDs.
type gkeLocalSSDFact struct {
	Provenance `yaml:",inline"`
	Machine    string `yaml:"machine"`
	Series     string `yaml:"series"`
	// LocalSSDs is fixed (the type always has its Local SSDs) or optional
	// (the instance asks for a number of them).
	LocalSSDs string `yaml:"local_ssds"`
	Count     int    `yaml:"count"`
}

// eksNVMeFact is one EC2 instance type's NVMe instance store.
type eksNVMeFact struct {
	Provenance   `yaml:",inline"`
	InstanceType string `yaml:"instance_type"`
	NVMeGB       int    `yaml:"nvme_gb"`
}

// Values of gkeLocalSSDFact.LocalSSDs.
const (
	localSSDsFixed    = "fixed"
	localSSDsOptional = "optional"
)

// LocalDisks is what local NVMe SSDs one GPU machine type comes with.
type LocalDisks struct {
	// Provider is gke or eks; Machine the machine or instance type.
	Provider string `json:"provider"`
	Machine  string `json:"machine"`
	// Fixed: every machine of the type comes with its local NVMe SSDs
	// (GKE: A2 Ultra, A3, A4, A4X; EKS: an instance store of NVMe
	// volumes). Nothing has to attach them; something has to use them.
	Fixed bool `json:"fixed"`
	// Optional (GKE): the type takes a chosen number of Local SSDs (N1,
	// A2 Standard, G2, G4) and has none unless the pool asks.
	Optional bool `json:"optional,omitempty"`
	// Count (GKE) is the number of Local SSDs (375 GB each) of a Fixed
	// type where a source gives it; 0 where not captured.
	Count int `json:"count,omitempty"`
	// TotalGB (EKS) is the instance store's NVMe size in GB (EC2
	// DescribeInstanceTypes InstanceStorageInfo.TotalSizeInGB); 0: EBS only.
	TotalGB int    `json:"totalGB,omitempty"`
	Note    string `json:"note,omitempty"`
	Source  string `json:"source"`
	AsOf    string `json:"asOf"`
}

// indexLocalSSD checks localssd.yaml: every row names a machine of
// gcp.yaml (machine or series) or aws.yaml, once, and GKE rows are fixed
// or optional, with a count only when fixed.
func (c *catalog) indexLocalSSD() error {
	c.localDisks = map[string]map[string]LocalDisks{spec.ProviderGKE: {}, spec.ProviderEKS: {}}
	for _, f := range c.localSSD.GKE {
		if err := c.indexGKELocalSSD(f); err != nil {
			return err
		}
	}
	for _, f := range c.localSSD.EKS {
		if _, ok := c.machines[spec.ProviderEKS][f.InstanceType]; !ok {
			return fmt.Errorf("eks %s: not an instance type of aws.yaml", f.InstanceType)
		}
		if err := c.addLocalDisks(LocalDisks{Provider: spec.ProviderEKS, Machine: f.InstanceType, Fixed: f.NVMeGB > 0, TotalGB: f.NVMeGB,
			Note: f.Note, Source: f.Source, AsOf: f.AsOf}); err != nil {
			return err
		}
	}
	return nil
}

// indexGKELocalSSD adds one gke row: its machine, or every machine of its
// series.
func (c *catalog) indexGKELocalSSD(f gkeLocalSSDFact) error {
	if f.LocalSSDs != localSSDsFixed && f.LocalSSDs != localSSDsOptional {
		return fmt.Errorf("gke %s%s: local_ssds %q is neither fixed nor optional", f.Machine, f.Series, f.LocalSSDs)
	}
	if f.Count < 0 || (f.Count > 0 && f.LocalSSDs != localSSDsFixed) {
		return fmt.Errorf("gke %s%s: count %d on a %s row", f.Machine, f.Series, f.Count, f.LocalSSDs)
	}
	var names []string
	for name, m := range c.machines[spec.ProviderGKE] {
		if name == f.Machine || (f.Series != "" && m.Series == f.Series) {
			names = append(names, name)
		}
	}
	if len(names) == 0 || (f.Machine != "") == (f.Series != "") {
		return fmt.Errorf("gke %s%s: names no machine type of gcp.yaml (give machine or series)", f.Machine, f.Series)
	}
	for _, name := range names {
		d := LocalDisks{Provider: spec.ProviderGKE, Machine: name, Fixed: f.LocalSSDs == localSSDsFixed, Optional: f.LocalSSDs == localSSDsOptional,
			Count: f.Count, Note: f.Note, Source: f.Source, AsOf: f.AsOf}
		if err := c.addLocalDisks(d); err != nil {
			return err
		}
	}
	return nil
}

func (c *catalog) addLocalDisks(d LocalDisks) error {
	if _, dup := c.localDisks[d.Provider][d.Machine]; dup {
		return fmt.Errorf("%s %s: listed twice", d.Provider, d.Machine)
	}
	c.localDisks[d.Provider][d.Machine] = d
	return nil
}

// LookupLocalDisks returns the local NVMe SSDs of GKE machine type or EKS
// instance type machine (provider "gke" or "eks"); false when the matrix
// has not captured them.
func LookupLocalDisks(provider, machine string) (LocalDisks, bool) {
	d, ok := cat().localDisks[provider][machine]
	return d, ok
}

// GKEFixedLocalSSDs reports whether GKE machine type mt comes with a fixed
// number of Local SSDs (GKE's local_ssd_count 0 then means all of them;
// on other machines 0 means none).
// Source: https://docs.cloud.google.com/compute/docs/disks/add-local-ssd and
// the GKE API's EphemeralStorageLocalSsdConfig.local_ssd_count
// (https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig; 2026-12-03).
func GKEFixedLocalSSDs(mt string) bool {
	d, ok := LookupLocalDisks(spec.ProviderGKE, mt)
	return ok && d.Fixed
}

// PoolLocalDisks says what local NVMe SSDs the nodes of pool p (on
// provider) have: all is true when every one of its machine types comes
// with them (Fixed), none when one of them is known to have none (an EKS
// type with EBS only, a GKE type that takes Local SSDs only when asked);
// both false when the matrix has not captured a type. without names the
// types with none.
func PoolLocalDisks(provider string, p *spec.NodePool) (all, none bool, without []string) {
	types := p.MachineTypes()
	all = len(types) > 0
	for _, t := range types {
		d, ok := LookupLocalDisks(provider, t)
		switch {
		case !ok:
			all = false
		case !d.Fixed:
			all, none = false, true
			without = append(without, t)
		}
	}
	return all, none, without
}

// EffectiveLocalStorage is what becomes of the local NVMe SSDs of pool p
// on provider, the one answer the generators (GKE and EKS Terraform,
// Karpenter) and validate follow:
//   - localStorage none: spec.LocalStorageNone;
//   - localStorage raid0: spec.LocalStorageRAID0, except on an EKS pool
//     whose instance types have no NVMe instance store ("": nothing to
//     RAID; validate's POOL-LOCAL-STORAGE says so);
//   - unset: spec.LocalStorageRAID0 for a training pool (role training)
//     whose every machine type comes with local NVMe SSDs (LocalDisks
//     Fixed), else "" (nothing is written; inference and other pools
//     keep the platform's default).
func EffectiveLocalStorage(provider string, p *spec.NodePool) string {
	all, none, _ := PoolLocalDisks(provider, p)
	switch p.LocalStorage {
	case spec.LocalStorageNone:
		return spec.LocalStorageNone
	case spec.LocalStorageRAID0:
		if provider == spec.ProviderEKS && none {
			return ""
		}
		return spec.LocalStorageRAID0
	}
	if p.Role == spec.RoleTraining && all {
		return spec.LocalStorageRAID0
	}
	return ""
}
