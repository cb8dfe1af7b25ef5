package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/accept"
)

// rankPod runs accept --dry-run for the nccl-multi stage of a spec's pool
// and returns the rank pods' template.
func rankPod(t *testing.T, args ...string) corev1.PodTemplateSpec {
	t.Helper()
	f := NewFactory()
	f.Now = func() time.Time { return time.Date(2026, 12, 2, 15, 44, 0, 0, time.UTC) }
	f.Random = func() uint16 { return 0xa1b2 }
	streams, _, out, errOut := TestStreams()
	code := RunWithFactory(context.Background(), append([]string{"accept", "--dry-run", "-o", "yaml", "--stages", "kubernetes,nccl-multi", "--allow-privileged"}, args...), streams, f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(errOut.String(), "INCONCLUSIVE") {
		t.Errorf("the dry run notes a problem: %s", errOut)
	}
	for _, d := range strings.Split(out.String(), "\n---\n") {
		var job batchv1.Job
		if err := yaml.Unmarshal([]byte(d), &job); err != nil {
			t.Fatal(err)
		}
		if job.Kind == "Job" && job.Labels[accept.LabelStage] == string(accept.StageNCCLMulti) {
			return job.Spec.Template
		}
	}
	t.Fatalf("no nccl-multi Job in the dry run:\n%s", out)
	return corev1.PodTemplateSpec{}
}

func limit(c corev1.Container, r corev1.ResourceName) resource.Quantity { return c.Resources.Limits[r] }

func mountsOf(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, v := range c.VolumeMounts {
		m[v.MountPath] = v.Name
	}
	return m
}

func hostPaths(ps corev1.PodSpec) map[string]string {
	m := map[string]string{}
	for _, v := range ps.Volumes {
		if v.HostPath != nil {
			m[v.Name] = v.HostPath.Path
		}
	}
	return m
}

// TestAcceptDryRunEFARankPods: the p5 pool's rank pods request what the
// worker of awsome-distributed-training's EFA NCCL test requests
// (micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml at
// 7217859f67bc693c52ff175ccc6082c41dbd7a1b: nvidia.com/gpu 8,
// vpc.amazonaws.com/efa 32, hugepages-2Mi 5120Mi, memory 32000Mi, as limits
// and requests) and run with FI_PROVIDER=efa.
func TestAcceptDryRunEFARankPods(t *testing.T) {
	t.Parallel()
	pod := rankPod(t, "--spec", filepath.Join("..", "..", "examples", "eks-p5-training-efa.yaml"), "--pool", "train-p5")
	c := pod.Spec.Containers[0]
	for r, want := range map[corev1.ResourceName]string{"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32", "hugepages-2Mi": "5120Mi", "memory": "32000Mi"} {
		if q := limit(c, r); q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("limit %s = %s, want %s", r, q.String(), want)
		}
		if r != "nvidia.com/gpu" {
			if q := c.Resources.Requests[r]; q.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("request %s = %s, want %s", r, q.String(), want)
			}
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["FI_PROVIDER"] != "efa" || env["NCCL_DEBUG"] != "INFO" {
		t.Errorf("env %v", env)
	}
	if mountsOf(c)["/dev/shm"] == "" {
		t.Error("no /dev/shm mount")
	}
}

// TestAcceptDryRunTCPXORankPods: an A3 Mega pool's rank pods have what the
// pods of Google's TCPXO NCCL test have (cluster-toolkit
// examples/gke-a3-megagpu/nccl-test-latest.yaml at
// 1047080375afbb44da4b596be314634e7486af4a): the tcpxo-daemon at
// tcpgpudmarxd-dev:v1.0.21 running entrypoint_rxdm_container.sh
// --num_hops=2 (no deprecated --num_nics) with NET_ADMIN and NET_BIND_SERVICE, the
// devices.gke.io/container.tcpxo-daemon GPUs and dmabuf_import_helper,
// eth0 on default and eth1..eth8 on the GPU networks, the host's
// /home/kubernetes/bin/nvidia/lib64 at /usr/local/nvidia/lib64 and
// /dev/aperture_devices, and NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY.
func TestAcceptDryRunTCPXORankPods(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "gke-a3-ultra-rdma.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer("a3-ultragpu-8g", "a3-megagpu-8g", "nvidia-h200-141gb", "nvidia-h100-mega-80gb", "plugin: gib", "plugin: tcpxo").Replace(string(data))
	file := filepath.Join(t.TempDir(), "a3-mega.yaml")
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := rankPod(t, "--spec", file, "--pool", "train-h200")
	ps := pod.Spec
	if len(ps.InitContainers) != 1 {
		t.Fatalf("init containers: %+v", ps.InitContainers)
	}
	sc := ps.InitContainers[0]
	if sc.Name != "tcpxo-daemon" || sc.Image != "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21" || !strings.Contains(strings.Join(sc.Command, " "), "/fts/entrypoint_rxdm_container.sh --num_hops=2") || strings.Contains(strings.Join(sc.Command, " "), "--num_nics") {
		t.Errorf("sidecar %s %s %v", sc.Name, sc.Image, sc.Command)
	}
	if sc.RestartPolicy == nil || *sc.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Error("the sidecar is not a native sidecar (restartPolicy Always)")
	}
	if caps := sc.SecurityContext.Capabilities.Add; len(caps) != 2 || caps[0] != "NET_ADMIN" || caps[1] != "NET_BIND_SERVICE" {
		t.Errorf("sidecar capabilities %v", caps)
	}
	ann := pod.Annotations
	for _, d := range []string{"/dev/nvidia0", "/dev/nvidia7", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/dmabuf_import_helper"} {
		if !strings.Contains(ann["devices.gke.io/container.tcpxo-daemon"], "- path: "+d+"\n") {
			t.Errorf("device annotation lacks %s", d)
		}
	}
	ifs := ann["networking.gke.io/interfaces"]
	if ann["networking.gke.io/default-interface"] != "eth0" || !strings.HasPrefix(ifs, `[{"interfaceName":"eth0","network":"default"},{"interfaceName":"eth1","network":"`) || !strings.Contains(ifs, `"interfaceName":"eth8"`) || strings.Contains(ifs, "eth9") {
		t.Errorf("interfaces %s", ifs)
	}
	hp := hostPaths(ps)
	m := mountsOf(ps.Containers[0])
	if hp[m["/usr/local/nvidia/lib64"]] != "/home/kubernetes/bin/nvidia/lib64" || hp[m["/dev/aperture_devices"]] != "/dev/aperture_devices" {
		t.Errorf("mounts %v host paths %v", m, hp)
	}
	found := false
	for _, e := range ps.Containers[0].Env {
		found = found || (e.Name == "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY" && e.Value == "/dev/aperture_devices")
	}
	if !found {
		t.Error("NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY not set")
	}
}

// TestAcceptDryRunRDMARankPods: an A3 Ultra pool's rank pods attach as
// cluster-toolkit's examples/gke-a3-ultragpu/nccl-jobset-example.yaml (at
// 1047080375afbb44da4b596be314634e7486af4a) does: eth0 on default, eth2..eth9
// on the pool's RDMA networks (the extra gVNIC, eth1, is left out), the
// host's /home/kubernetes/bin/nvidia at /usr/local/nvidia and
// /home/kubernetes/bin/gib at /usr/local/gib, gIB's set_nccl_env.sh sourced
// before NCCL starts, NCCL_NET=gIB.
func TestAcceptDryRunRDMARankPods(t *testing.T) {
	t.Parallel()
	pod := rankPod(t, "--spec", filepath.Join("..", "..", "examples", "gke-a3-ultra-rdma.yaml"), "--pool", "train-h200")
	ifs := pod.Annotations["networking.gke.io/interfaces"]
	if !strings.HasPrefix(ifs, `[{"interfaceName":"eth0","network":"default"},{"interfaceName":"eth2","network":"`) || !strings.Contains(ifs, `"interfaceName":"eth9"`) || strings.Contains(ifs, `"eth1"`) {
		t.Errorf("interfaces %s", ifs)
	}
	c := pod.Spec.Containers[0]
	hp, m := hostPaths(pod.Spec), mountsOf(c)
	if hp[m["/usr/local/nvidia"]] != "/home/kubernetes/bin/nvidia" || hp[m["/usr/local/gib"]] != "/home/kubernetes/bin/gib" {
		t.Errorf("mounts %v host paths %v", m, hp)
	}
	if !strings.Contains(c.Command[2], ". /usr/local/gib/scripts/set_nccl_env.sh") {
		t.Error("gIB's set_nccl_env.sh is not sourced")
	}
	found := false
	for _, e := range c.Env {
		found = found || (e.Name == "NCCL_NET" && e.Value == "gIB")
	}
	if !found {
		t.Error("NCCL_NET=gIB not set")
	}
}

// TestAcceptConflictingFlags: --no-diagnostics with --stages ...,diagnostics
// and a negative --gpus are usage errors (exit 2) that name the flag.
func TestAcceptConflictingFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"accept", "n1", "--no-diagnostics", "--stages", "kubernetes,diagnostics"}, "--no-diagnostics turns off the diagnostics stage"},
		{[]string{"accept", "--dry-run", "--gpus", "-3"}, "--gpus -3: the number of GPUs of a node must be positive"},
	} {
		streams, _, _, errOut := TestStreams()
		if code := RunWithFactory(context.Background(), c.args, streams, NewFactory()); code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// generatedFile runs generate manifests on spec and returns the file at
// path (manifests/base/...).
func generatedFile(t *testing.T, specFile, path string) []byte {
	t.Helper()
	streams, _, out, errOut := TestStreams()
	if code := RunWithFactory(context.Background(), []string{"generate", "manifests", specFile, "--as-of", "2026-11-29"}, streams, NewFactory()); code != 0 {
		t.Fatalf("generate: exit %d: %s", code, errOut)
	}
	marker := "# ==> " + path + " <==\n"
	_, rest, ok := strings.Cut(out.String(), marker)
	if !ok {
		t.Fatalf("generate wrote no %s", path)
	}
	body, _, _ := strings.Cut(rest, "# ==> ")
	return []byte(body)
}

// TestGeneratedWorkloadMatchesRankPods: for each shipped GKE GPUDirect pool
// (A3 Mega TCPXO, A3 High TCPX, A3 Ultra RDMA), the pod template generate
// writes has the sidecar, the annotations (devices, networks), the fabric's
// volumes and the training container's fabric mounts and NCCL variables
// that accept --spec gives its nccl-multi rank pods: generate and accept
// do not drift.
func TestGeneratedWorkloadMatchesRankPods(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ example, pool string }{
		{"gke-a3-mega-tcpxo", "train-h100-mega"},
		{"gke-h100-l4", "train-h100"},
		{"gke-a3-ultra-rdma", "train-h200"},
	} {
		file := filepath.Join("..", "..", "examples", c.example+".yaml")
		rank := rankPod(t, "--spec", file, "--pool", c.pool)
		var tpl corev1.PodTemplateSpec
		if err := yaml.UnmarshalStrict(generatedFile(t, file, "manifests/base/workload/"+c.pool+"-pod-template.yaml"), &tpl); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rank.Spec.InitContainers, tpl.Spec.InitContainers); diff != "" {
			t.Errorf("%s: sidecars (-accept +generate):\n%s", c.example, diff)
		}
		for k, v := range tpl.Annotations {
			if rank.Annotations[k] != v {
				t.Errorf("%s: annotation %s: accept %q, generate %q", c.example, k, rank.Annotations[k], v)
			}
		}
		if len(tpl.Annotations) < 2 {
			t.Errorf("%s: annotations %v", c.example, tpl.Annotations)
		}
		checkSubset(t, c.example+" volumes", rank.Spec.Volumes, tpl.Spec.Volumes, func(v corev1.Volume) string { return v.Name })
		checkSubset(t, c.example+" mounts", rank.Spec.Containers[0].VolumeMounts, tpl.Spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) string { return m.MountPath })
		rankEnv := map[string]string{}
		for _, e := range rank.Spec.Containers[0].Env {
			rankEnv[e.Name] = e.Value
		}
		for _, e := range tpl.Spec.Containers[0].Env {
			if e.Name == "LD_LIBRARY_PATH" {
				// accept puts it ahead of the image's own path in the command
				// (prependLibraryPath); the template sets it, as Google's
				// references do, and its header says so.
				if !strings.Contains(rank.Spec.Containers[0].Command[2], `export LD_LIBRARY_PATH="`+e.Value+`:${LD_LIBRARY_PATH:-}"`) {
					t.Errorf("%s: accept does not prepend LD_LIBRARY_PATH %s", c.example, e.Value)
				}
				continue
			}
			if rankEnv[e.Name] != e.Value {
				t.Errorf("%s: %s: accept %q, generate %q", c.example, e.Name, rankEnv[e.Name], e.Value)
			}
		}
		if !cmp.Equal(rank.Spec.Containers[0].SecurityContext, tpl.Spec.Containers[0].SecurityContext) {
			t.Errorf("%s: security contexts differ", c.example)
		}
	}
}

// checkSubset fails unless every element of gen is in acc, the same under
// the same key.
func checkSubset[T any](t *testing.T, what string, acc, gen []T, key func(T) string) {
	t.Helper()
	have := map[string]T{}
	for _, a := range acc {
		have[key(a)] = a
	}
	for _, g := range gen {
		if a, ok := have[key(g)]; !ok || !cmp.Equal(a, g) {
			t.Errorf("%s: generate's %s is not accept's (%+v)", what, key(g), a)
		}
	}
}
