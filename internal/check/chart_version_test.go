package check

import (
	"strings"
	"testing"

	"github.com/gpuctl/gpuctl/internal/rules"
)

// TestChartVersionNotAVersion: a chart version that does not parse is an
// error finding for validate and generate (SPEC-VERSION), and stays one
// for generate when SPEC-VERSION is waived (GEN-BUILD): generate stops on
// the error finding instead of asking Files for layers that were never
// built (an internal error).
func TestChartVersionNotAVersion(t *testing.T) {
	const base = `apiVersion: gpuctl.dev/v1alpha1
kind: ClusterSpec
metadata: {name: ml}
spec:
  provider: gke
  region: us-central1
  clusterName: ml
  kubernetesVersion: "1.33"
  releaseChannel: EXTENDED
  cuda: "12.4"
  tags: {cost-center: ml, team: research, workload-type: inference}
  addons:
    devicePlugin: {provider: gke-managed}
    dcgmExporter: {enabled: true, version: "4.2foo"}
  nodePools:
    - name: infer
      role: inference
      machineType: g2-standard-24
      zones: [us-central1-a]
      osImage: COS_CONTAINERD
      gpu: {type: nvidia-l4, count: 2, driver: LATEST}
      autoscaling: {min: 0, max: 2}
      taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
`
	const waiver = "  waivers: [{rule: SPEC-VERSION, path: spec.addons.dcgmExporter.version, reason: known, expires: 2027-06-01}]\n"
	for _, c := range []struct {
		text     string
		generate bool
		rule     string
	}{
		{base, false, rules.RuleSpecVersion},
		{base, true, rules.RuleSpecVersion},
		{base + waiver, true, rules.RuleGenBuild},
	} {
		res, err := Document(parse(t, c.text), Options{AsOf: asOf, Generate: c.generate})
		if err != nil {
			t.Fatal(err)
		}
		if !hasErrors(res.Findings) || len(find(res.Findings, c.rule)) == 0 {
			t.Errorf("generate %v, waived %v: no %s error:\n%s", c.generate, strings.Contains(c.text, "waivers"), c.rule, dump(res.Findings))
		}
	}
	// Waived in validate, the finding is info and nothing else is added.
	res, err := Document(parse(t, base+waiver), Options{AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	if hasErrors(res.Findings) || len(find(res.Findings, rules.RuleGenBuild)) > 0 {
		t.Errorf("validate, waived:\n%s", dump(res.Findings))
	}
}
