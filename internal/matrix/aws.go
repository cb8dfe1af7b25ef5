package matrix

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuctl/gpuctl/internal/spec"
)

// aws.yaml: the EC2 instance types and families with GPUs, the EKS AMI
// types and the EKS Kubernetes versions; their index (the EKS machines).

// awsFile is data/aws.yaml as decoded; indexed by (*catalog).indexAWS.
type awsFile struct {
	InstanceTypes    []instanceFact `yaml:"instance_types"`
	InstanceFamilies []familyFact   `yaml:"instance_families"`
	AMITypes         []amiFact      `yaml:"ami_types"`
	EKSVersions      eksVersions    `yaml:"eks_versions"`
	VPCCNI           vpcCNIFact     `yaml:"vpc_cni"`
}

// vpcCNIFact is what the Amazon VPC CNI add-on must be for the pools'
// network interfaces.
type vpcCNIFact struct {
	Provenance `yaml:",inline"`
	// EFAOnlyMin is the oldest VPC CNI version that supports efa-only
	// network interfaces.
	EFAOnlyMin string `yaml:"efa_only_min"`
}

type instanceFact struct {
	Provenance      `yaml:",inline"`
	Name            string  `yaml:"name"`
	GPU             string  `yaml:"gpu"`
	Count           int     `yaml:"count"`
	Fraction        float64 `yaml:"fraction"`
	GPUMemoryGiB    float64 `yaml:"gpu_memory_gib"`
	Arch            string  `yaml:"arch"`
	EFA             bool    `yaml:"efa"`
	NetworkCards    int     `yaml:"network_cards"`
	Network         string  `yaml:"network"`
	Spot            *bool   `yaml:"spot"`
	MaxDriverBranch int     `yaml:"max_driver_branch"`
}

type familyFact struct {
	Provenance      `yaml:",inline"`
	Family          string `yaml:"family"`
	GPU             string `yaml:"gpu"`
	Arch            string `yaml:"arch"`
	MinDriverBranch int    `yaml:"min_driver_branch"`
}

type amiFact struct {
	Provenance   `yaml:",inline"`
	Name         string `yaml:"name"`
	Arch         string `yaml:"arch"`
	NVIDIA       bool   `yaml:"nvidia"`
	ShipsDriver  bool   `yaml:"ships_driver"`
	Driver       string `yaml:"driver"`
	DriverBranch int    `yaml:"driver_branch"`
	// DriverCurrent is the driver of the newest AMI release as of AsOf;
	// pools that do not pin a releaseVersion get it (or a later one).
	DriverCurrent     string `yaml:"driver_current"`
	ShipsDevicePlugin bool   `yaml:"ships_device_plugin"`
	KubernetesMin     string `yaml:"kubernetes_min"`
	KubernetesMax     string `yaml:"kubernetes_max"`
	EndOfSupport      string `yaml:"end_of_support"`
	Windows           bool   `yaml:"windows"`
	Custom            bool   `yaml:"custom"`
	// ShipsToolkit: the NVIDIA Container Toolkit is installed and the
	// container runtime configured for it.
	ShipsToolkit bool `yaml:"ships_toolkit"`
	// Glibc is the host's glibc version, where a rule needs it.
	Glibc       string `yaml:"glibc"`
	GlibcSource string `yaml:"glibc_source"`

	endOfSupport time.Time
}

type eksVersions struct {
	Provenance `yaml:",inline"`
	Versions   []eksVersion `yaml:"versions"`
}

type eksVersion struct {
	Kubernetes  string `yaml:"kubernetes"`
	Released    string `yaml:"released"`
	EndStandard string `yaml:"end_standard"`
	EndExtended string `yaml:"end_extended"`
	Note        string `yaml:"note"`
	Source      string `yaml:"source"`

	endStandard, endExtended time.Time
}

// indexAWS indexes aws.yaml: the instance types as EKS machines (each of a
// known GPU, with its family's minimum driver branch), the AMI types by
// name, and the dates of the AMIs and EKS versions.
func (c *catalog) indexAWS() error {
	machines := map[string]Machine{}
	for _, m := range c.aws.InstanceTypes {
		if _, ok := c.products[m.GPU]; !ok {
			return fmt.Errorf("instance %s: unknown gpu %q", m.Name, m.GPU)
		}
		machines[m.Name] = eksMachine(m)
	}
	for _, f := range c.aws.InstanceFamilies {
		if err := c.applyFamily(f, machines); err != nil {
			return err
		}
	}
	c.setMachines(spec.ProviderEKS, machines)
	c.amis = map[string]*amiFact{}
	for i := range c.aws.AMITypes {
		a := &c.aws.AMITypes[i]
		if err := a.index(); err != nil {
			return err
		}
		c.amis[a.Name] = a
	}
	for i := range c.aws.EKSVersions.Versions {
		if err := c.aws.EKSVersions.Versions[i].index(); err != nil {
			return err
		}
	}
	if _, err := ParseVersion(c.aws.VPCCNI.EFAOnlyMin); err != nil {
		return fmt.Errorf("vpc_cni.efa_only_min: %w", err)
	}
	return nil
}

// VPCCNIEFAOnlyMin returns the oldest Amazon VPC CNI version that supports
// efa-only network interfaces ("1.18.4") and the sources that say so.
func VPCCNIEFAOnlyMin() (Version, []string) {
	f := cat().aws.VPCCNI
	return MustVersion(f.EFAOnlyMin), f.sources()
}

// eksMachine is the Machine of instance type m; its series is the name's
// family ("p5" of "p5.48xlarge"), its fabric EFA where it has EFA.
func eksMachine(m instanceFact) Machine {
	mc := Machine{Provider: spec.ProviderEKS, Name: m.Name, Series: strings.SplitN(m.Name, ".", 2)[0], GPU: m.GPU,
		GPUCount: m.Count, GPUFraction: m.Fraction, GPUMemoryGiB: m.GPUMemoryGiB, Arch: m.Arch, EFA: m.EFA,
		NetworkCards: m.NetworkCards, Spot: m.Spot == nil || *m.Spot, MaxDriverBranch: m.MaxDriverBranch,
		Fabric: FabricNone, Note: m.Note, Source: m.Source, AsOf: m.AsOf}
	if m.EFA {
		mc.Fabric = FabricEFA
	}
	return mc
}

// applyFamily gives the listed sizes of instance family f its minimum
// driver branch; the family's GPU must be known and be every size's.
func (c *catalog) applyFamily(f familyFact, machines map[string]Machine) error {
	if _, ok := c.products[f.GPU]; !ok {
		return fmt.Errorf("instance family %s: unknown gpu %q", f.Family, f.GPU)
	}
	for name, mc := range machines {
		if mc.Series != f.Family {
			continue
		}
		if mc.GPU != f.GPU {
			return fmt.Errorf("instance %s: gpu %s, but family %s has %s", name, mc.GPU, f.Family, f.GPU)
		}
		mc.MinDriverBranch = f.MinDriverBranch
		machines[name] = mc
	}
	return nil
}

// eksFamilyMachine is the Machine of an instance type of a family the
// matrix knows but whose sizes it does not list ("g7.2xlarge"), with
// Family set; false when name is of no such family.
func (c *catalog) eksFamilyMachine(name string) (Machine, bool) {
	fam, size, found := strings.Cut(name, ".")
	if !found || size == "" {
		return Machine{}, false
	}
	for _, f := range c.aws.InstanceFamilies {
		if fam == f.Family {
			return Machine{Provider: spec.ProviderEKS, Name: name, Series: fam, GPU: f.GPU, Arch: f.Arch,
				MinDriverBranch: f.MinDriverBranch, Fabric: FabricNone, Spot: true, Family: true,
				Note: f.Note, Source: f.Source, AsOf: f.AsOf}, true
		}
	}
	return Machine{}, false
}

// index parses the AMI type's end of support and its versions (drivers,
// Kubernetes bounds, glibc).
func (a *amiFact) index() error {
	if a.EndOfSupport != "" {
		var err error
		if a.endOfSupport, err = parseDate(a.EndOfSupport); err != nil {
			return fmt.Errorf("ami %s: %w", a.Name, err)
		}
	}
	for _, s := range []string{a.Driver, a.DriverCurrent, a.KubernetesMin, a.KubernetesMax, a.Glibc} {
		if s != "" {
			if _, err := parseV("ami "+a.Name, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// index parses the EKS version's end of standard and extended support.
func (v *eksVersion) index() error {
	var err error
	if v.EndStandard != "" {
		if v.endStandard, err = parseDate(v.EndStandard); err != nil {
			return fmt.Errorf("eks version %s end_standard: %w", v.Kubernetes, err)
		}
	}
	if v.EndExtended != "" {
		if v.endExtended, err = parseDate(v.EndExtended); err != nil {
			return fmt.Errorf("eks version %s end_extended: %w", v.Kubernetes, err)
		}
	}
	return nil
}

// EKSIMDSHopLimit is the instance metadata PUT response hop limit gpuctl
// gives EKS GPU nodes, with IMDSv2 required: 2, what EC2 sets for AMIs
// flagged imdsSupport v2.0 (the EKS AL2023 and Bottlerocket AMIs), so that
// pods off the host network (a CSI node plugin, an SDK's region lookup) get
// an IMDSv2 token. The launch templates of managed node groups and the
// EC2NodeClasses of Karpenter both write it, so a pool behaves the same
// under either (Karpenter's own default is 1).
// Sources: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configuring-IMDS-new-instances.html,
// https://karpenter.sh/docs/concepts/nodeclasses/#specmetadataoptions (2026-12-03)
const EKSIMDSHopLimit = 2
