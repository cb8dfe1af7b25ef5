package accept

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpuctl/gpuctl/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
// compareGolden holds got to testdata/name (-update rewrites it).
func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Compare(t, filepath.Join("testdata", name), got, *update)
}

func testJobSpec(st Stage) JobSpec {
	img, _ := ChooseImage(st, "", "12.2")
	return JobSpec{
		Stage: st, RunID: "20261129t120000-abcd", Namespace: "gpuctl", Node: "gpu-node-1", GPUs: 8,
		Taints: []corev1.Taint{
			{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule},
			{Key: "dedicated", Effect: corev1.TaintEffectNoExecute},
		},
		Image: img, Deadline: 10 * time.Minute, TTL: time.Hour, DCGMLevel: 2, NCCLMaxBytes: "8G",
	}
}

func TestBuildJobGolden(t *testing.T) {
	for _, tc := range []struct {
		name       string
		stage      Stage
		privileged bool
		gpus       int
		probeImage string
	}{
		{"inventory", StageInventory, false, 8, ""},
		{"inventory-privileged", StageInventory, true, 8, ""},
		{"inventory-probe-image", StageInventory, false, 8, "registry.example.com/gpuctl:v0.1.0-nvml"},
		{"inventory-probe-image-privileged", StageInventory, true, 8, "registry.example.com/gpuctl:v0.1.0-nvml"},
		{"topology", StageTopology, false, 8, ""},
		{"cuda", StageCUDA, false, 2, ""},
		{"nccl", StageNCCL, false, 8, ""},
		{"dcgm-privileged", StageDCGM, true, 8, ""},
		{"network", StageNetwork, false, 8, ""},
		{"framework", StageFramework, false, 8, ""},
		{"diagnostics-privileged", StageDiagnostics, true, 8, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testJobSpec(tc.stage)
			s.AllowPrivileged, s.GPUs, s.ProbeImage = tc.privileged, tc.gpus, tc.probeImage
			job := BuildJob(s)
			got, err := MarshalYAML(job)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, "job-"+tc.name+".yaml", got)
			if BuildJob(s) == job {
				t.Fatal("BuildJob must return a fresh object")
			}
		})
	}
}

// TestBuildJobInvariants checks what every stage's Job must have, whatever
// the golden files say.
func TestBuildJobInvariants(t *testing.T) {
	for _, st := range []Stage{StageInventory, StageTopology, StageCUDA, StageNCCL, StageDCGM, StageNetwork, StageFramework} {
		for _, priv := range []bool{false, true} {
			s := testJobSpec(st)
			s.AllowPrivileged = priv
			j := BuildJob(s)
			ps := j.Spec.Template.Spec
			if *j.Spec.BackoffLimit != 0 || *j.Spec.ActiveDeadlineSeconds != 600 || *j.Spec.TTLSecondsAfterFinished != 3600 {
				t.Errorf("%s: backoffLimit/activeDeadlineSeconds/ttl = %d/%d/%d", st, *j.Spec.BackoffLimit, *j.Spec.ActiveDeadlineSeconds, *j.Spec.TTLSecondsAfterFinished)
			}
			if ps.NodeName != "gpu-node-1" || *ps.AutomountServiceAccountToken || ps.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("%s: nodeName %q automount %v restart %s", st, ps.NodeName, *ps.AutomountServiceAccountToken, ps.RestartPolicy)
			}
			if len(ps.Tolerations) != 2 || ps.Tolerations[1].Operator != corev1.TolerationOpExists {
				t.Errorf("%s: tolerations %+v", st, ps.Tolerations)
			}
			for _, m := range []map[string]string{j.Labels, j.Spec.Template.Labels} {
				if m[LabelManagedBy] != "gpuctl" || m[LabelRunID] != s.RunID || m[LabelStage] != string(st) {
					t.Errorf("%s: labels %v", st, m)
				}
			}
			for _, c := range allContainers(ps) {
				if *c.SecurityContext.Privileged && !priv {
					t.Errorf("%s: container %s privileged without --allow-privileged", st, c.Name)
				}
			}
			if gpus := podGPURequest(ps); gpus != 8 {
				t.Errorf("%s: pod asks for %d GPUs, want all 8", st, gpus)
			}
		}
	}
}

// TestBuildJobProbeImage: with a probe image, inventory runs one
// unprivileged, non-root container with gpuctl probe nvml and every GPU; the
// dmesg container of --allow-privileged stays on the stage's image.
func TestBuildJobProbeImage(t *testing.T) {
	for _, priv := range []bool{false, true} {
		s := testJobSpec(StageInventory)
		s.ProbeImage, s.AllowPrivileged = "registry.example.com/gpuctl:v0.1.0-nvml", priv
		cs := allContainers(BuildJob(s).Spec.Template.Spec)
		want := 1
		if priv {
			want = 2
		}
		if len(cs) != want {
			t.Fatalf("privileged %v: %d containers", priv, len(cs))
		}
		c := cs[0]
		q := c.Resources.Limits[ResourceGPU]
		if c.Name != ContainerNVML || c.Image != s.ProbeImage || strings.Join(c.Command, " ") != "gpuctl probe nvml -o json" || q.Value() != 8 {
			t.Errorf("container %s %s %v gpus %d", c.Name, c.Image, c.Command, q.Value())
		}
		if *c.SecurityContext.Privileged || c.SecurityContext.RunAsNonRoot == nil || !*c.SecurityContext.RunAsNonRoot || *c.SecurityContext.RunAsUser != nonRootUID {
			t.Errorf("security context %+v", c.SecurityContext)
		}
		if priv && (cs[1].Name != ContainerDmesg || cs[1].Image != s.Image.Ref) {
			t.Errorf("dmesg container %s %s", cs[1].Name, cs[1].Image)
		}
	}
}

func TestBuildRBACGolden(t *testing.T) {
	role, cr := BuildRBAC("gpuctl")
	a, _ := MarshalYAML(role)
	b, _ := MarshalYAML(cr)
	compareGolden(t, "rbac.yaml", append(append(a, []byte("---\n")...), b...))
}

// allContainers returns a pod's init containers and containers, in the
// order they run.
func allContainers(ps corev1.PodSpec) []corev1.Container {
	return append(append([]corev1.Container(nil), ps.InitContainers...), ps.Containers...)
}

// podGPURequest is the number of GPUs a pod asks the scheduler and the
// kubelet for: the larger of the most any init container asks for (they
// run one at a time) and the sum over the containers. Source:
// https://kubernetes.io/docs/concepts/workloads/pods/init-containers/#resource-sharing-within-containers (read 2026-12-02).
func podGPURequest(ps corev1.PodSpec) int64 {
	var initMax, sum int64
	for _, c := range ps.InitContainers {
		q := c.Resources.Limits[ResourceGPU]
		initMax = max(initMax, q.Value())
	}
	for _, c := range ps.Containers {
		q := c.Resources.Limits[ResourceGPU]
		sum += q.Value()
	}
	return max(initMax, sum)
}

// TestBuildNodeJob: the node-local stages of a run in one Job: every
// stage's containers in run order (the last one the pod's container),
// names unique (network's nvidia-smi-topo renamed), one /dev/shm, the
// stages in the annotation, the deadline the sum of the stages', every GPU
// asked for once, and the Job named after its first stage.
func TestBuildNodeJob(t *testing.T) {
	var specs []JobSpec
	for _, st := range []Stage{StageInventory, StageTopology, StageCUDA, StageNCCL, StageDCGM, StageNetwork, StageFramework} {
		specs = append(specs, testJobSpec(st))
	}
	j := BuildNodeJob(specs)
	ps := j.Spec.Template.Spec
	var names []string
	for _, c := range allContainers(ps) {
		names = append(names, c.Name)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("container %s twice in %v", n, names)
		}
		seen[n] = true
	}
	pcs := PodContainers(specs)
	if len(pcs) != len(names) {
		t.Fatalf("%d pod containers listed, %d in the pod", len(pcs), len(names))
	}
	for i, pc := range pcs {
		if pc.Name != names[i] {
			t.Errorf("container %d: listed %s, in the pod %s", i, pc.Name, names[i])
		}
	}
	if !seen["network-"+ContainerSMITopo] || !seen[ContainerSMITopo] {
		t.Errorf("topology's and network's topo -m containers: %v", names)
	}
	if names[0] != ContainerSMIQuery || names[len(names)-1] != ContainerFramework || len(ps.Containers) != 1 {
		t.Errorf("order %v (containers %d)", names, len(ps.Containers))
	}
	if len(ps.Volumes) != 1 || ps.Volumes[0].Name != "dshm" {
		t.Errorf("volumes %+v", ps.Volumes)
	}
	if got := j.Annotations[AnnotationStages]; got != "inventory,topology,cuda,nccl,dcgm,network,framework" {
		t.Errorf("stages annotation %q", got)
	}
	if *j.Spec.ActiveDeadlineSeconds != 7*600 || j.Name != JobName(StageInventory, specs[0].RunID) || j.Labels[LabelStage] != string(StageInventory) {
		t.Errorf("deadline %d, name %s, stage label %s", *j.Spec.ActiveDeadlineSeconds, j.Name, j.Labels[LabelStage])
	}
	if gpus := podGPURequest(ps); gpus != 8 {
		t.Errorf("node Job asks for %d GPUs, want 8", gpus)
	}
	// Each vectoradd container runs on the GPU of its number, in bus order.
	for _, c := range ps.InitContainers {
		if n, ok := strings.CutPrefix(c.Name, containerVecAdd); ok {
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
			if env["CUDA_VISIBLE_DEVICES"] != n || env["CUDA_DEVICE_ORDER"] != "PCI_BUS_ID" {
				t.Errorf("%s: env %v", c.Name, env)
			}
		}
	}
}
