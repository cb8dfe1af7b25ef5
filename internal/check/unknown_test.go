package check

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/rules/rulecases"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// TestUnknownIsNotAbsent: the pipeline hands the unknown facts to the
// rules and returns what they could not judge; the same spec without them
// is judged as before (absent).
func TestUnknownIsNotAbsent(t *testing.T) {
	cs := rulecases.Bases["minimal-eks"]()
	cs.Spec.Addons.DevicePlugin = spec.DevicePlugin{}
	cs.Spec.KubernetesVersion = ""
	unk := map[string]rules.Unknown{
		"spec.addons.devicePlugin.provider": {Reason: "module.eks_data_addons (aws-ia/eks-data-addons/aws) sets enable_nvidia_device_plugin and is not read"},
		"spec.kubernetesVersion":            {Reason: "it depends on var.cluster_version, which has no value", Hint: "pass --kubernetes-version VERSION"},
	}
	absent, err := Document(docOf(t, cs), Options{AsOf: rulecases.AsOf})
	if err != nil {
		t.Fatal(err)
	}
	if absent.Summary().Errors == 0 || len(absent.NotJudged()) != 0 {
		t.Fatalf("absent: want DEVICE-PLUGIN-MISSING and nothing not judged, got %+v %+v", absent.Findings, absent.NotJudged())
	}
	res, err := Document(docOf(t, cs), Options{AsOf: rulecases.AsOf, Unknown: unk})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		if f.Severity == diag.SeverityError {
			t.Errorf("error from an unknown value: %s %s", f.Rule, f.Message)
		}
	}
	nj := res.NotJudged()
	if len(nj) != 2 || nj[0].Path != "spec.addons.devicePlugin.provider" || nj[1].Path != "spec.kubernetesVersion" || !nj[1].Deciding {
		t.Fatalf("NotJudged %+v", nj)
	}
	if !strings.Contains(strings.Join(nj[0].Checks, ","), rules.RulePluginMissing) || !strings.Contains(nj[1].Hint, "--kubernetes-version") {
		t.Errorf("NotJudged %+v", nj)
	}
	if res.Summary().Warnings == 0 {
		t.Error("an unknown Kubernetes version gives no warning")
	}
}
