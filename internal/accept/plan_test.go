package accept

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"
)

// TestDryRunJobsAreTheRunsJobs plans a run the way `accept --dry-run` does
// (PlanNode, printed through MarshalYAML as a YAML stream) and runs the same
// Plan for real against a fake clientset, for the same node object and the
// same driver CUDA version (12.2 in the GFD labels and in nvidia-smi's
// output). The Jobs printed and the Jobs the API server receives are the
// same, apart from the run id and the names made from it.
func TestDryRunJobsAreTheRunsJobs(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Plan)
	}{
		{"default stages", func(*Plan) {}},
		{"dcgm privileged", func(p *Plan) {
			p.Stages = append(p.Stages, StageDCGM)
			p.AllowPrivileged, p.DCGMLevel, p.NCCLMaxBytes = true, 3, "2G"
		}},
		{"probe image and overrides", func(p *Plan) {
			p.ProbeImage = "registry.example.com/gpuctl:v1-nvml"
			// The nccl override fits the driver; the cuda one needs a newer
			// CUDA, so neither path creates the cuda Job.
			p.Images = map[Stage]string{StageNCCL: "registry.example.com/nccl-tests:2.13.8-cuda12.1", StageCUDA: "registry.example.com/vectoradd:cuda12.9"}
		}},
		{"subset", func(p *Plan) { p.Stages = []Stage{StageTopology, StageNCCL} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.plan.Continue = true // every selected stage runs, whatever the verdicts
			tc.edit(&h.plan)

			// The dry run: planned up front from the node object.
			node := gpuNode("gpu-node-1", 8)
			dry := h.plan
			dry.RunID = "20261129t110000-0001"
			np, err := PlanNode(dry, node)
			if err != nil {
				t.Fatal(err)
			}
			var stream bytes.Buffer
			for i, d := range DryRunObjects(dry.Namespace, []*NodePlan{np}) {
				b, err := MarshalYAML(d)
				if err != nil {
					t.Fatal(err)
				}
				if i > 0 {
					stream.WriteString("---\n")
				}
				stream.Write(b)
			}
			var printed []*batchv1.Job
			for _, doc := range strings.Split(stream.String(), "\n---\n") {
				var j batchv1.Job
				if err := yaml.Unmarshal([]byte(doc), &j); err != nil {
					t.Fatal(err)
				}
				if j.Kind == "Job" {
					printed = append(printed, &j)
				}
			}

			// The real run: the Jobs the fake API server receives.
			var mu sync.Mutex
			var created []*batchv1.Job
			h.client.PrependReactor("create", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
				mu.Lock()
				defer mu.Unlock()
				created = append(created, a.(k8stesting.CreateAction).GetObject().(*batchv1.Job).DeepCopy())
				return false, nil, nil
			})
			run(t, h, succeed)

			if len(printed) == 0 {
				t.Fatal("the dry run prints no Job")
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(normalisedJobs(t, printed, dry.RunID), normalisedJobs(t, created, h.plan.RunID)); diff != "" {
				t.Errorf("dry-run Jobs (-) differ from the run's (+):\n%s", diff)
			}
		})
	}
}

// normalisedJobs returns the Jobs as generic JSON with the run id and the
// names made from it replaced, so that two runs compare equal.
func normalisedJobs(t *testing.T, jobs []*batchv1.Job, runID string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, j := range jobs {
		j = j.DeepCopy()
		if want := JobName(Stage(j.Labels[LabelStage]), runID); j.Name != want {
			t.Errorf("Job %s, want the name %s", j.Name, want)
		}
		for _, labels := range []map[string]string{j.Labels, j.Spec.Template.Labels} {
			if labels[LabelRunID] != runID {
				t.Errorf("Job %s: run id label %q, want %q", j.Name, labels[LabelRunID], runID)
			}
			labels[LabelRunID] = "RUN-ID"
		}
		j.Name = "NAME"
		raw, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestBindingsOfTwoIdentitiesDiffer: --bind user:alice and --bind
// serviceaccount:ops:acceptor give bindings of their own names (valid DNS
// subdomains), so that applying both keeps both.
func TestBindingsOfTwoIdentitiesDiffer(t *testing.T) {
	a, _ := ParseSubject("user:alice@example.com")
	b, _ := ParseSubject("serviceaccount:ops:acceptor")
	rbA, crbA := BuildBindings("gpuctl", a)
	rbB, crbB := BuildBindings("gpuctl", b)
	if rbA.Name == rbB.Name || crbA.Name == crbB.Name {
		t.Errorf("bindings share names: %s %s / %s %s", rbA.Name, rbB.Name, crbA.Name, crbB.Name)
	}
	for _, n := range []string{rbA.Name, rbB.Name, crbA.Name, crbB.Name} {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Errorf("binding name %q: %v", n, errs)
		}
	}
	if !strings.Contains(rbA.Name, "user-alice-example.com") || !strings.Contains(crbB.Name, "sa-ops-acceptor") {
		t.Errorf("names do not say whose: %s, %s", rbA.Name, crbB.Name)
	}
}
