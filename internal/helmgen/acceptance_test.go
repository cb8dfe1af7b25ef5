package helmgen

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// sweepExample is the shipped example's base spec.
func sweepExample(t *testing.T) *spec.ClusterSpec {
	t.Helper()
	for _, ex := range golden.ValidExamples(t, "../../examples/gke-h100-acceptance-sweep.yaml", asOf) {
		if ex.Env == "" {
			return ex.Spec
		}
	}
	t.Fatal("the acceptance sweep example has no valid base spec")
	return nil
}

// acceptanceDocs are acceptance.yaml's objects of cs, each as a generic map.
func acceptanceDocs(t *testing.T, cs *spec.ClusterSpec) []map[string]any {
	t.Helper()
	files, err := Manifests(cs, Options{SpecFile: "s.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name != "acceptance.yaml" {
			continue
		}
		var out []map[string]any
		for _, d := range bytes.Split(f.Data, []byte("\n---\n"))[1:] {
			var m map[string]any
			if err := yaml.Unmarshal(d, &m); err != nil {
				t.Fatalf("acceptance.yaml: %v\n%s", err, d)
			}
			out = append(out, m)
		}
		return out
	}
	t.Fatal("no acceptance.yaml")
	return nil
}

// TestAcceptanceRBACIsAccepts: the Role, ClusterRole, Events Role and
// bindings of acceptance.yaml are, object for object, what accept's
// dry run prints for the sweep's features bound to the sweep's
// ServiceAccount (`accept --dry-run -o yaml --bind
// serviceaccount:gpuctl-acceptance:gpuctl-accept-sweep`).
func TestAcceptanceRBACIsAccepts(t *testing.T) {
	cs := sweepExample(t)
	docs := acceptanceDocs(t, cs)
	want := accept.DryRunObjectsWith("gpuctl-acceptance", nil, []accept.Subject{{Kind: "ServiceAccount", Namespace: "gpuctl-acceptance", Name: "gpuctl-accept-sweep"}}, accept.RBACFeatures{Sweep: true, RecordsConfigMap: true})
	var got []map[string]any
	for _, d := range docs {
		if strings.HasPrefix(d["apiVersion"].(string), "rbac.authorization.k8s.io/") {
			got = append(got, d)
		}
	}
	if len(got) != len(want) || len(want) != 6 {
		t.Fatalf("%d RBAC objects, accept's dry run prints %d (want 6: Role, ClusterRole, Events Role, 3 bindings)", len(got), len(want))
	}
	for i, w := range want {
		b, err := accept.MarshalYAML(w)
		if err != nil {
			t.Fatal(err)
		}
		var wm map[string]any
		if err := yaml.Unmarshal(b, &wm); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(wm, got[i]); d != "" {
			t.Errorf("object %d differs from accept's (-accept +generated):\n%s", i, d)
		}
	}
}

// TestAcceptanceCronJob holds the CronJob to the sweep contract: one run
// at a time, the contract's command line from spec.acceptance, the key
// read-only, no privilege, and no GPU toleration.
func TestAcceptanceCronJob(t *testing.T) {
	cs := sweepExample(t)
	docs := acceptanceDocs(t, cs)
	cj := docs[len(docs)-1]
	if cj["kind"] != "CronJob" || docs[0]["kind"] != "Namespace" || docs[1]["kind"] != "ServiceAccount" {
		t.Fatalf("kinds: first %v, %v, last %v", docs[0]["kind"], docs[1]["kind"], cj["kind"])
	}
	if docs[1]["automountServiceAccountToken"] != false {
		t.Error("the ServiceAccount mounts its token everywhere; only the sweep's pod should")
	}
	s := dig(cj, "spec").(map[string]any)
	if s["concurrencyPolicy"] != "Forbid" || s["schedule"] != "0 3 * * *" || s["timeZone"] != "Etc/UTC" || s["startingDeadlineSeconds"] == nil {
		t.Errorf("CronJob spec: %v", s)
	}
	pod := dig(cj, "spec", "jobTemplate", "spec", "template", "spec").(map[string]any)
	c := pod["containers"].([]any)[0].(map[string]any)
	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	want := "accept --sweep -l cloud.google.com/gke-nodepool=train-h100 -n gpuctl-acceptance --stages kubernetes,inventory,topology,cuda --parallel 2 --max-unhealthy 10% --key /var/run/gpuctl/key/accept.key --records-configmap -q -o json"
	if got := strings.Join(args, " "); got != want {
		t.Errorf("command line:\n got %s\nwant %s", got, want)
	}
	sc := c["securityContext"].(map[string]any)
	if sc["readOnlyRootFilesystem"] != true || sc["privileged"] != false || sc["allowPrivilegeEscalation"] != false || sc["runAsNonRoot"] != true {
		t.Errorf("container securityContext: %v", sc)
	}
	if dig(pod, "securityContext", "seccompProfile", "type") != "RuntimeDefault" || pod["automountServiceAccountToken"] != true || pod["tolerations"] != nil {
		t.Errorf("pod: seccomp %v, token %v, tolerations %v", dig(pod, "securityContext", "seccompProfile", "type"), pod["automountServiceAccountToken"], pod["tolerations"])
	}
	for _, m := range c["volumeMounts"].([]any) {
		if mm := m.(map[string]any); mm["name"] == "key" && mm["readOnly"] != true {
			t.Errorf("key mounted writable: %v", mm)
		}
	}
}

// TestAcceptanceRecordsVolume: with a PersistentVolumeClaim the records go
// to its path through --evidence-dir, and the claim is mounted there.
func TestAcceptanceRecordsVolume(t *testing.T) {
	cs := sweepExample(t)
	a := *cs.Spec.Acceptance
	a.Records = spec.AcceptanceRecords{PersistentVolumeClaim: &spec.RecordsVolume{ClaimName: "gpuctl-records", Path: "/records/"}}
	cs.Spec.Acceptance = &a
	args, err := SweepArgs(&cs.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(args, "--evidence-dir"); i < 0 || args[i+1] != SweepRecordsDir || slices.Contains(args, "--records-configmap") {
		t.Errorf("args %v", args)
	}
	cj, err := sweepCronJob(&cs.Spec)
	if err != nil {
		t.Fatal(err)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	var claim, sub string
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	for _, m := range pod.Containers[0].VolumeMounts {
		if m.MountPath == SweepRecordsDir {
			sub = m.SubPath
		}
	}
	if claim != "gpuctl-records" || sub != "records" {
		t.Errorf("claim %q subPath %q", claim, sub)
	}
	objs, err := buildAcceptance(&cs.Spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if r, ok := o.(*rbacv1.Role); ok && slices.ContainsFunc(r.Rules, func(p rbacv1.PolicyRule) bool { return slices.Contains(p.Resources, "configmaps") }) {
			t.Errorf("records on a PersistentVolumeClaim, yet Role %s grants ConfigMaps: %+v", r.Name, r.Rules)
		}
	}
}

// TestSweepSelector: the pools by the platform's node-pool label, unless
// the spec names a selector.
func TestSweepSelector(t *testing.T) {
	pools := []spec.NodePool{{Name: "train_b"}, {Name: "infer-a"}}
	for _, c := range []struct {
		name string
		s    spec.Spec
		want string
	}{
		{"gke", spec.Spec{Provider: spec.ProviderGKE, NodePools: pools}, "cloud.google.com/gke-nodepool in (infer-a,train_b)"},
		{"eks", spec.Spec{Provider: spec.ProviderEKS, NodePools: pools[1:]}, "eks.amazonaws.com/nodegroup=infer-a"},
		{"karpenter", spec.Spec{Provider: spec.ProviderEKS, Addons: spec.Addons{Autoscaler: spec.AutoscalerKarpenter}, NodePools: pools}, "karpenter.sh/nodepool in (infer-a,train-b)"},
		{"given", spec.Spec{Provider: spec.ProviderGKE, NodePools: pools, Acceptance: &spec.Acceptance{Selector: "gpuctl.dev/accept-sweep=true"}}, "gpuctl.dev/accept-sweep=true"},
	} {
		if got, err := SweepSelector(&c.s); err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := SweepSelector(&spec.Spec{Provider: spec.ProviderGKE}); err == nil {
		t.Error("no pool and no selector: no error")
	}
}

// TestAcceptanceStagesShapeRBAC: a fleet stage adds the Services rule, a
// dcgm stage raises the namespace's Pod Security level to baseline.
func TestAcceptanceStagesShapeRBAC(t *testing.T) {
	cs := sweepExample(t)
	a := *cs.Spec.Acceptance
	a.Stages = []string{"inventory", "dcgm", "nccl-multi"}
	cs.Spec.Acceptance = &a
	objs, err := buildAcceptance(&cs.Spec)
	if err != nil {
		t.Fatal(err)
	}
	want := accept.DryRunObjectsWith("gpuctl-acceptance", nil, []accept.Subject{SweepSubject(&a)}, accept.RBACFeatures{Sweep: true, RecordsConfigMap: true, Multi: true})
	if d := cmp.Diff(want, objs[2:2+len(want)]); d != "" {
		t.Errorf("RBAC with nccl-multi (-want +got):\n%s", d)
	}
	docs := acceptanceDocs(t, cs)
	if l := dig(docs[0], "metadata", "labels", "pod-security.kubernetes.io/enforce"); l != "baseline" {
		t.Errorf("namespace enforces %v with dcgm, want baseline", l)
	}
}

// TestAcceptanceImagesAndPrivilege: acceptance.images are accept's --image
// STAGE=REF in stage order, allowPrivileged its --allow-privileged, and the
// namespace then enforces what accept.PodSecurityLevel says with it.
func TestAcceptanceImagesAndPrivilege(t *testing.T) {
	cs := sweepExample(t)
	a := *cs.Spec.Acceptance
	a.Stages = []string{"kubernetes", "inventory", "cuda", "nccl-multi"}
	a.Images = map[string]string{"nccl-multi": "mirror.example/nccl:24.05", "cuda": "mirror.example/cuda-sample:12@sha256:" + strings.Repeat("b", 64)}
	a.AllowPrivileged = true
	cs.Spec.Acceptance = &a
	args, err := SweepArgs(&cs.Spec)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(args, " ")
	want := "--image cuda=mirror.example/cuda-sample:12@sha256:" + strings.Repeat("b", 64) + " --image nccl-multi=mirror.example/nccl:24.05 --allow-privileged -q -o json"
	if !strings.HasSuffix(got, want) {
		t.Errorf("command line %s\nwant it to end with %s", got, want)
	}
	docs := acceptanceDocs(t, cs)
	if l := dig(docs[0], "metadata", "labels", "pod-security.kubernetes.io/enforce"); l != "privileged" {
		t.Errorf("namespace enforces %v with allowPrivileged and nccl-multi, want privileged", l)
	}
	if fs := sweepStageFindings(&cs.Spec); len(fs) != 0 {
		t.Errorf("allowPrivileged over a TCPX pool of 4 nodes: %v", fs)
	}
	a.AllowPrivileged = false
	fs := sweepStageFindings(&cs.Spec)
	if len(fs) != 1 || fs[0].Path != "spec.acceptance.stages[3]" || !strings.Contains(fs[0].Message, "GPUDirect-TCPX rank pods need the privileged Pod Security level") {
		t.Errorf("nccl-multi over TCPX without allowPrivileged: %+v", fs)
	}
}

// TestSpecStageImages: the stages spec.acceptance.images may not name are
// those accept runs no image for, and spec knows every accept stage.
func TestSpecStageImages(t *testing.T) {
	for _, name := range spec.AcceptStages {
		st, err := accept.ParseStage(name)
		if err != nil {
			t.Fatal(err)
		}
		if noImage := slices.Contains(spec.StagesWithoutImage, name); noImage == accept.RunsImage(st) {
			t.Errorf("stage %s: spec.StagesWithoutImage says %v, accept.RunsImage %v", name, noImage, accept.RunsImage(st))
		}
	}
}

// TestSweepStageNeedsEveryStage: over the example's four TCPX nodes
// without allowPrivileged, every node stage of accept's table is allowed
// (their Pod Security level is the namespace's label) and every fleet
// stage is refused; with allowPrivileged every stage is allowed.
func TestSweepStageNeedsEveryStage(t *testing.T) {
	cs := sweepExample(t)
	for _, st := range append(append([]accept.Stage{}, accept.AllStages...), accept.FleetStages...) {
		for _, priv := range []bool{false, true} {
			a := *cs.Spec.Acceptance
			a.Stages, a.AllowPrivileged = []string{string(st)}, priv
			c := *cs
			c.Spec.Acceptance = &a
			fs := sweepStageFindings(&c.Spec)
			if want := accept.IsFleetStage(st) && !priv; (len(fs) > 0) != want {
				t.Errorf("stage %s, allowPrivileged %v: findings %v, want refused %v", st, priv, fs, want)
			}
		}
	}
}

// TestSweepDeadline: the sweep's Job stops past spec.acceptance.timeout,
// else past the bound of the pools' autoscaling.max nodes, parallel at a
// time, under accept's time limits (the example: 4 nodes, 2 at a time:
// two waves of a node's run and its cleanup, 61m, plus 10m); a pool
// without autoscaling.max needs the timeout.
func TestSweepDeadline(t *testing.T) {
	cs := sweepExample(t)
	deadline := func(cs *spec.ClusterSpec) any {
		docs := acceptanceDocs(t, cs)
		return dig(docs[len(docs)-1], "spec", "jobTemplate", "spec", "activeDeadlineSeconds")
	}
	if got := deadline(cs); got != float64(2*61*60+10*60) {
		t.Errorf("derived activeDeadlineSeconds %v, want %d", got, 2*61*60+10*60)
	}
	a := *cs.Spec.Acceptance
	a.Timeout = "3h"
	withTimeout := *cs
	withTimeout.Spec.Acceptance = &a
	if got := deadline(&withTimeout); got != float64(3*3600) {
		t.Errorf("timeout 3h: activeDeadlineSeconds %v", got)
	}
	unbounded := *cs
	unbounded.Spec.NodePools = slices.Clone(cs.Spec.NodePools)
	unbounded.Spec.NodePools[0].Autoscaling.Max = 0
	if _, err := SweepDeadline(&unbounded.Spec); err == nil || !strings.Contains(err.Error(), "node pool train-h100 has no autoscaling.max to bound the sweep's time by; set acceptance.timeout") {
		t.Errorf("a pool without max: %v", err)
	}
	unbounded.Spec.Acceptance = &a
	if d, err := SweepDeadline(&unbounded.Spec); err != nil || d != 3*time.Hour {
		t.Errorf("a pool without max, timeout 3h: %v %v", d, err)
	}
}
