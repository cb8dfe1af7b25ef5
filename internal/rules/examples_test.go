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
		{RuleSpecProviderField, diag.SeverityWarning},
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
		{RulePluginMissing, diag.SeverityError}, {RuleEFADisabled, diag.SeverityWarning},
	},
}

var cleanExamples = []string{"gke-h100-l4.yaml", "gke-a100.yaml", "eks-inference.yaml", "eks-spot-training.yaml", "eks-p5-g6.yaml",
	"eks-p5-training-efa.yaml", "gke-operator-mig.yaml", "eks-arm-capacity-block.yaml", "gke-a3-ultra-rdma.yaml"}

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
