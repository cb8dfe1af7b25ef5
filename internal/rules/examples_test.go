package rules

import (
	"path/filepath"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// The examples under examples/: each "as written" spec yields the findings a
// GPU platform expert raises; each corrected one validates with no error
// and no warning, in its base and every environment (as of 2026-11-29).
var exampleFindings = map[string][]struct {
	rule string
	sev  diag.Severity
}{
	"gke-a100-as-written.yaml": {
		{RuleMachineAccel, diag.SeverityError}, {RuleGKEDriverOption, diag.SeverityError}, {RulePluginConflict, diag.SeverityError},
		{RuleDriverEOL, diag.SeverityWarning}, {RuleNCCLNetSocket, diag.SeverityInfo}, {RuleNCCLIBDisable, diag.SeverityInfo},
		{RuleNCCLUnknownEnv, diag.SeverityWarning}, {RulePolicyCostTags, diag.SeverityWarning}, {RuleGKEK8sSupport, diag.SeverityWarning},
		{RuleSpecProviderField, diag.SeverityWarning}, {RuleDiskSize, diag.SeverityWarning},
	},
	"gke-a100-n1-machine-as-written.yaml": {
		{RuleMachineUnknown, diag.SeverityError}, {RuleGKEDriverOption, diag.SeverityError}, {RulePluginConflict, diag.SeverityError},
		{RuleNCCLNetSocket, diag.SeverityInfo}, {RuleNCCLIBDisable, diag.SeverityInfo},
	},
	"eks-inference-as-written.yaml": {
		{RuleEKSAMIK8s, diag.SeverityError}, {RulePluginMissing, diag.SeverityError}, {RuleEKSAMIEOL, diag.SeverityWarning},
		{RuleLabelGFDManaged, diag.SeverityWarning}, {RuleDriverEOL, diag.SeverityWarning},
	},
	"eks-spot-training-as-written.yaml": {
		{RulePoolMixed, diag.SeverityWarning}, {RulePolicyTaint, diag.SeverityWarning}, {RuleEKSAMIK8s, diag.SeverityError},
		{RulePluginMissing, diag.SeverityError}, {RuleEFADisabled, diag.SeverityWarning}, {RuleDiskSize, diag.SeverityWarning},
	},
}

var cleanExamples = []string{"gke-h100-l4.yaml", "gke-a100.yaml", "eks-inference.yaml", "eks-spot-training.yaml", "eks-p5-g6.yaml",
	"eks-p5-training-efa.yaml", "gke-operator-mig.yaml", "eks-arm-capacity-block.yaml", "gke-a3-ultra-rdma.yaml", "eks-p5-capacity-block-efa.yaml"}

func TestExamples(t *testing.T) {
	for name, want := range exampleFindings {
		t.Run(name, func(t *testing.T) {
			fs := validateFile(t, filepath.Join("..", "..", "examples", name), asOf20261129)
			for _, w := range want {
				if !hasFinding(fs, w.rule, w.sev) {
					t.Errorf("want %s %s, got:\n%s", w.sev, w.rule, dump(fs))
				}
			}
		})
	}
	for _, name := range cleanExamples {
		t.Run(name, func(t *testing.T) {
			doc, err := spec.Load(filepath.Join("..", "..", "examples", name), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, env := range append([]string{""}, doc.Environments()...) {
				cs, err := doc.Resolve(env)
				if err != nil {
					t.Fatal(err)
				}
				fs := ApplyWaivers(Validate(cs, Options{AsOf: asOf20261129}), cs.Spec.Waivers, asOf20261129)
				for _, f := range fs {
					if f.Severity != diag.SeverityInfo {
						t.Errorf("environment %q: %s %s %s: %s", env, f.Severity, f.Rule, f.Path, f.Message)
					}
				}
			}
		})
	}
}

// TestCapacityBlockExample changes the shipped Capacity Block example the
// ways EKS and the VPC CNI refuse: an older VPC CNI than efa-only
// interfaces need (and not with efaOnly false), a version that is none, a
// second instance type; and the EFA training pool of eks-p5-training-efa
// opted out of its placement group.
func TestCapacityBlockExample(t *testing.T) {
	load := func(name string) *spec.ClusterSpec {
		doc, err := spec.Load(filepath.Join("..", "..", "examples", name), nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := doc.Resolve("")
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	off := false
	for _, c := range []struct {
		name      string
		file      string
		mod       func(cs *spec.ClusterSpec, p *spec.NodePool)
		rule, at  string
		sev       diag.Severity
		wantFound bool
	}{
		{"VPC CNI 1.18.3", "eks-p5-capacity-block-efa.yaml", func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.VPCCNI.Version = "1.18.3" }, RuleEFAVPCCNI, "spec.addons.vpcCni.version", diag.SeverityError, true},
		{"VPC CNI 1.18.3, efaOnly false", "eks-p5-capacity-block-efa.yaml", func(cs *spec.ClusterSpec, p *spec.NodePool) {
			cs.Spec.Addons.VPCCNI.Version, p.EFA.EFAOnly = "1.18.3", &off
		}, RuleEFAVPCCNI, "spec.addons.vpcCni.version", diag.SeverityError, false},
		{"VPC CNI version that is none", "eks-p5-capacity-block-efa.yaml", func(cs *spec.ClusterSpec, p *spec.NodePool) { cs.Spec.Addons.VPCCNI.Version = "1.x" }, RuleSpecVersion, "spec.addons.vpcCni.version", diag.SeverityError, true},
		{"two instance types on the block", "eks-p5-capacity-block-efa.yaml", func(cs *spec.ClusterSpec, p *spec.NodePool) {
			p.MachineType, p.InstanceTypes = "", []string{"p5.48xlarge", "p5e.48xlarge"}
		}, RuleEKSCapacityBlock, "spec.nodePools[0].instanceTypes", diag.SeverityError, true},
		{"placementGroup none on the dev pool", "eks-p5-training-efa.yaml", func(cs *spec.ClusterSpec, p *spec.NodePool) {
			p.Capacity, p.PlacementGroup = spec.CapacityOnDemand, spec.PlacementGroupNone
		}, RuleEFAPlacement, "spec.nodePools[0].placementGroup", diag.SeverityWarning, true},
		{"placementGroup cluster on the block", "eks-p5-training-efa.yaml", func(cs *spec.ClusterSpec, p *spec.NodePool) {}, RuleEFAPlacement, "spec.nodePools[0].placementGroup", diag.SeverityInfo, true},
	} {
		cs := load(c.file)
		c.mod(cs, &cs.Spec.NodePools[0])
		found := false
		for _, f := range Validate(cs, Options{AsOf: asOf20261129}) {
			if f.Rule == c.rule && f.Path == c.at && f.Severity == c.sev {
				found = true
			}
		}
		if found != c.wantFound {
			t.Errorf("%s: %s %s at %s found %v, want %v", c.name, c.sev, c.rule, c.at, found, c.wantFound)
		}
	}
}
