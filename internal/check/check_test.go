package check

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/helmgen"
	"github.com/gpuctl/gpuctl/internal/rules"
	"github.com/gpuctl/gpuctl/internal/spec"
)

var asOf = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// eksSpec is a valid EKS spec with NVIDIA's device plugin chart at
// pluginVersion ("" for the newest), followed by extra (more of spec:).
func eksSpec(pluginVersion, extra string) string {
	v := ""
	if pluginVersion != "" {
		v = fmt.Sprintf(", version: %q", pluginVersion)
	}
	return `apiVersion: gpuctl.dev/v1alpha1
kind: ClusterSpec
metadata: {name: c}
spec:
  provider: eks
  region: us-east-1
  clusterName: c
  kubernetesVersion: "1.34"
  tags: {cost-center: ml-platform, team: research, workload-type: inference}
  addons: {autoscaler: cluster-autoscaler,
    devicePlugin: {provider: helm` + v + `}}
  nodePools:
    - name: infer
      role: inference
      instanceTypes: [g6.xlarge]
      osImage: AL2023_x86_64_NVIDIA
      gpu: {count: 1}
      autoscaling: {min: 0, max: 2}
      taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
` + extra
}

func parse(t *testing.T, text string) *spec.Document {
	t.Helper()
	doc, err := spec.Parse("spec.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func find(fs []diag.Finding, rule string) []diag.Finding {
	var out []diag.Finding
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func dump(fs []diag.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s:%d:%d %s %s [%s] %s: %s\n", f.File, f.Line, f.Column, f.Severity, f.Rule, f.Environment, f.Path, f.Message)
	}
	return b.String()
}

func TestDocumentValid(t *testing.T) {
	t.Parallel()
	res, err := Document(parse(t, eksSpec("", "")), Options{AsOf: asOf, Generate: true})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary(); s.Errors != 0 || s.Warnings != 0 {
		t.Fatalf("summary %+v:\n%s", s, dump(res.Findings))
	}
	if len(res.Envs) != 1 || res.Envs[0].Name != "" || res.Envs[0].Spec == nil {
		t.Fatalf("envs %+v", res.Envs)
	}
	if res.Envs[0].Layers == nil || len(res.Envs[0].Terraform) == 0 {
		t.Fatal("a valid spec's layers are not built")
	}
	vs, err := res.Envs[0].Layers.Values(helmgen.Options{SpecFile: "spec.yaml"})
	if err != nil || len(vs) == 0 || vs[0].Name != "nvidia-device-plugin.values.yaml" {
		t.Fatalf("values %v, %v", vs, err)
	}
}

// A waiver in the spec that covers the spec's only error lets the layers be
// built: what validate passes, generate writes.
func TestDocumentWaivedErrorBuilds(t *testing.T) {
	t.Parallel()
	// Autoscaling min above max is an error (SPEC-AUTOSCALING).
	bad := strings.Replace(eksSpec("", ""), "autoscaling: {min: 0, max: 2}", "autoscaling: {min: 3, max: 2}", 1)
	res, err := Document(parse(t, bad), Options{AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	if got := find(res.Findings, rules.RuleSpecAutoscaling); len(got) != 1 || got[0].Severity != diag.SeverityError {
		t.Fatalf("want one SPEC-AUTOSCALING error:\n%s", dump(res.Findings))
	}
	if res.Envs[0].Layers != nil || res.Envs[0].Terraform != nil {
		t.Error("layers built for a spec with an error")
	}
	waived := bad + `  waivers:
    - {rule: SPEC-AUTOSCALING, path: "spec.nodePools[0].autoscaling*", reason: test, expires: "2027-01-31"}
`
	for _, generate := range []bool{false, true} {
		res, err = Document(parse(t, waived), Options{AsOf: asOf, Generate: generate})
		if err != nil {
			t.Fatal(err)
		}
		if s := res.Summary(); s.Errors != 0 {
			t.Fatalf("generate=%v: waived spec has errors:\n%s", generate, dump(res.Findings))
		}
		got := find(res.Findings, rules.RuleSpecAutoscaling)
		if len(got) != 1 || got[0].Severity != diag.SeverityInfo || got[0].Waiver != "test" {
			t.Errorf("generate=%v: want the finding waived: %+v", generate, got)
		}
		if res.Envs[0].Layers == nil || (generate && len(res.Envs[0].Terraform) == 0) {
			t.Errorf("generate=%v: a spec whose errors are waived is not built", generate)
		}
		if !generate && res.Envs[0].Terraform != nil {
			t.Errorf("generate=false: Terraform written for validate, which only checks that it builds")
		}
	}
}

// A chart version without a key list: a warning at the version field
// naming the versions gpuctl can write; an error for generation that no
// waiver lifts; no layers either way.
func TestDocumentChartVersion(t *testing.T) {
	t.Parallel()
	text := eksSpec("0.14.5", "")
	waivers := &spec.WaiverSet{File: "w.yaml", Waivers: []spec.Waiver{{Rule: rules.RuleGenChartVersion, Reason: "later", Expires: "2027-01-31"}}}
	for _, c := range []struct {
		generate bool
		waivers  *spec.WaiverSet
		sev      diag.Severity
		waiver   string
	}{
		{false, nil, diag.SeverityWarning, ""},
		{false, waivers, diag.SeverityInfo, "later"},
		{true, nil, diag.SeverityError, ""},
		{true, waivers, diag.SeverityError, ""},
	} {
		res, err := Document(parse(t, text), Options{AsOf: asOf, Generate: c.generate, Waivers: c.waivers})
		if err != nil {
			t.Fatal(err)
		}
		got := find(res.Findings, rules.RuleGenChartVersion)
		if len(got) != 1 {
			t.Fatalf("generate=%v: want one %s:\n%s", c.generate, rules.RuleGenChartVersion, dump(res.Findings))
		}
		f := got[0]
		if f.Severity != c.sev || f.Waiver != c.waiver {
			t.Errorf("generate=%v waivers=%v: severity %s waiver %q, want %s %q", c.generate, c.waivers != nil, f.Severity, f.Waiver, c.sev, c.waiver)
		}
		// devicePlugin: {provider: helm, version: "0.14.5"} is line 11;
		// the version key starts at column 36.
		if f.File != "spec.yaml" || f.Line != 11 || f.Column != 36 || f.Path != "spec.addons.devicePlugin.version" {
			t.Errorf("position %s:%d:%d %s", f.File, f.Line, f.Column, f.Path)
		}
		if !strings.Contains(f.Message, "0.14.5") || !strings.HasSuffix(f.Message, "it can write 18 versions from 0.15.0 to 0.20.0") || !strings.Contains(f.Fix, "0.15.0, 0.15.1, 0.16.0, 0.16.1, 0.16.2, 0.17.0, 0.17.1, 0.17.2, 0.17.3, 0.17.4, 0.18.0, 0.18.1, 0.18.2, 0.19.0, 0.19.1, 0.19.2, 0.19.3, 0.20.0") {
			t.Errorf("message %q", f.Message)
		}
		if len(f.Sources) != 1 || !strings.Contains(f.Sources[0], "k8s-device-plugin") {
			t.Errorf("sources %v", f.Sources)
		}
		if res.Envs[0].Layers != nil {
			t.Error("layers built without a key list")
		}
	}
	// The rule is known to explain (and so to waivers).
	if r, ok := rules.LookupRule(rules.RuleGenChartVersion); !ok || r.Severity != diag.SeverityWarning || len(r.Sources) == 0 {
		t.Errorf("rule %+v, %v", r, ok)
	}
	// A version that does not parse is SPEC-VERSION's, not reported twice.
	res, err := Document(parse(t, eksSpec("latest", "")), Options{AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	if len(find(res.Findings, rules.RuleGenChartVersion)) != 0 || len(find(res.Findings, rules.RuleSpecVersion)) == 0 {
		t.Errorf("unparsable version:\n%s", dump(res.Findings))
	}
}

// The findings of an environment point at its overlay; one it shares with
// the base spec is reported once, for the base.
func TestDocumentEnvironments(t *testing.T) {
	t.Parallel()
	text := eksSpec("0.14.5", `  environments:
    dev:
      nodePools:
        - name: infer
          autoscaling: {min: 0, max: 1}
    old:
      addons:
        devicePlugin: {version: "0.14.4"}
`)
	doc := parse(t, text)
	res, err := Document(doc, Options{AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Environments(), ","); got != ",dev,old" {
		t.Errorf("environments %q", got)
	}
	got := find(res.Findings, rules.RuleGenChartVersion)
	if len(got) != 2 {
		t.Fatalf("want the base's finding and old's:\n%s", dump(res.Findings))
	}
	if got[0].Environment != "" || got[0].Line != 11 {
		t.Errorf("base finding %+v", got[0])
	}
	if got[1].Environment != "old" || got[1].Path != "spec.environments.old.addons.devicePlugin.version" || got[1].Line != 27 {
		t.Errorf("old's finding %s:%d:%d [%s] %s", got[1].File, got[1].Line, got[1].Column, got[1].Environment, got[1].Path)
	}

	one, err := Document(doc, Options{AsOf: asOf, Env: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Envs) != 1 || one.Envs[0].Name != "old" {
		t.Errorf("--env old checked %v", one.Environments())
	}
	if _, err := Document(doc, Options{AsOf: asOf, Env: "staging"}); err == nil {
		t.Error("an unknown environment is not an error")
	}
	if _, err := Document(doc, Options{}); err == nil {
		t.Error("a zero AsOf is not an error")
	}
}

// What the generators refuse is a GEN-BUILD error in validate too.
func TestDocumentBuildError(t *testing.T) {
	t.Parallel()
	text := strings.Replace(eksSpec("", ""), "- name: infer", "- name: default", 1)
	res, err := Document(parse(t, text), Options{AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	got := find(res.Findings, rules.RuleGenBuild)
	if len(got) != 1 || got[0].Severity != diag.SeverityError || !strings.Contains(got[0].Message, `pool name "default" is reserved`) || got[0].Line == 0 {
		t.Fatalf("want a GEN-BUILD error:\n%s", dump(res.Findings))
	}
	if res.Envs[0].Layers != nil {
		t.Error("layers of an unbuildable spec")
	}
	if !StopsGeneration(rules.RuleGenBuild) || !StopsGeneration(rules.RuleGenChartVersion) || StopsGeneration(rules.RuleSpecAutoscaling) {
		t.Error("StopsGeneration")
	}
}

// TestDocumentPluginSelectorLeavesPoolOut: NVIDIA's chart with a nodeSelector
// that leaves the Bottlerocket pool out (it runs its own plugin) is a clean
// spec for both the matrix and the generators' cross-check: no conflict, no
// "DaemonSet does not select its pool".
func TestDocumentPluginSelectorLeavesPoolOut(t *testing.T) {
	t.Parallel()
	doc := parse(t, `apiVersion: gpuctl.dev/v1alpha1
kind: ClusterSpec
metadata: {name: mixed}
spec:
  provider: eks
  region: us-east-1
  clusterName: c
  kubernetesVersion: "1.34"
  addons:
    devicePlugin: {provider: helm, nodeSelector: {plugin: nvidia}}
    autoscaler: cluster-autoscaler
  nodePools:
    - name: al2023
      role: inference
      instanceTypes: [g6.xlarge]
      osImage: AL2023_x86_64_NVIDIA
      labels: {plugin: nvidia}
      autoscaling: {min: 0, max: 2}
      taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    - name: br
      role: inference
      instanceTypes: [g6.xlarge]
      osImage: BOTTLEROCKET_x86_64_NVIDIA
      autoscaling: {min: 0, max: 2}
      taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
`)
	res, err := Document(doc, Options{AsOf: asOf, Generate: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		if f.Severity != diag.SeverityInfo {
			t.Errorf("unexpected %s %s %s: %s", f.Severity, f.Rule, f.Path, f.Message)
		}
	}
}

// TestTeamPoolReference: a team's pools entry that names no node pool is an
// error at its own file:line:column, with the closest pool name; in an
// environment, at the overlay's entry, checked against the environment's
// pools.
func TestTeamPoolReference(t *testing.T) {
	t.Parallel()
	text := eksSpec("0.17.1", `  teams:
    - name: research
    - name: serving
      pools: [infer, infr]
  environments:
    dev:
      teams:
        - name: serving
          pools: [inferr]
`)
	res, err := Document(parse(t, text), Options{AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	got := find(res.Findings, rules.RuleSpecReference)
	if len(got) != 2 {
		t.Fatalf("want one finding for the base and one for dev:\n%s", dump(res.Findings))
	}
	for i, want := range []struct {
		env, path, name string
		line, col       int
	}{
		{"", "spec.teams[1].pools[1]", "infr", 23, 22},
		{"dev", "spec.environments.dev.teams[0].pools[0]", "inferr", 28, 19},
	} {
		f := got[i]
		if f.Severity != diag.SeverityError || f.Environment != want.env || f.Path != want.path || f.File != "spec.yaml" || f.Line != want.line || f.Column != want.col {
			t.Errorf("finding %d: %s:%d:%d %s [%s] %s, want %s:%d:%d [%s] %s", i, f.File, f.Line, f.Column, f.Severity, f.Environment, f.Path, "spec.yaml", want.line, want.col, want.env, want.path)
		}
		if !strings.Contains(f.Message, fmt.Sprintf("%q", want.name)) || !strings.Contains(f.Message, `did you mean "infer"?`) {
			t.Errorf("finding %d: message %q", i, f.Message)
		}
	}
}

// A pool without autoscaling bounds (an imported node count that was
// unknown) is written by generate with a maximum of 0 nodes: generate
// warns; validate, judging what the spec says, does not.
func TestDocumentGenerateWarnsOfEmptyPool(t *testing.T) {
	t.Parallel()
	text := strings.Replace(eksSpec("", ""), "      autoscaling: {min: 0, max: 2}\n", "", 1)
	for _, generate := range []bool{true, false} {
		res, err := Document(parse(t, text), Options{AsOf: asOf, Generate: generate})
		if err != nil {
			t.Fatal(err)
		}
		got := find(res.Findings, rules.RuleSpecAutoscaling)
		if !generate {
			if len(got) != 0 {
				t.Errorf("validate: %s", dump(got))
			}
			continue
		}
		if len(got) != 1 || got[0].Severity != diag.SeverityWarning || got[0].Path != "spec.nodePools[0].autoscaling.max" ||
			!strings.Contains(got[0].Message, "can never have a node") {
			t.Errorf("generate: want one SPEC-AUTOSCALING warning at autoscaling.max, got:\n%s", dump(res.Findings))
		}
	}
}

// TestGeneratorRuleIDs: the rule IDs helmgen reports are the catalogue's.
func TestGeneratorRuleIDs(t *testing.T) {
	for got, want := range map[string]string{
		helmgen.RuleDaemonSetToleration: rules.RuleGenDaemonSetToleration,
		helmgen.RuleDaemonSetSelector:   rules.RuleGenDaemonSetSelector,
		helmgen.RuleKueueResource:       rules.RuleGenKueueResource,
		helmgen.RuleDevicePluginOwner:   rules.RuleGenDevicePluginOwner,
		helmgen.RuleAcceptStageNeeds:    rules.RuleAcceptStageNeeds,
	} {
		if _, ok := rules.LookupRule(got); got != want || !ok {
			t.Errorf("helmgen rule %q, want the registered %q", got, want)
		}
	}
}
