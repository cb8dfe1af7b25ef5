package helmgen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/golden"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// workloadOf returns the workload files of pool in ms: the pod template,
// the component's kustomization.yaml and its patch (nil where missing).
func workloadOf(ms []File, pool string) (tpl, kust, patch []byte) {
	for _, f := range ms {
		switch f.Name {
		case WorkloadDir + "/" + pool + "-pod-template.yaml":
			tpl = f.Data
		case WorkloadDir + "/" + pool + "/kustomization.yaml":
			kust = f.Data
		case WorkloadDir + "/" + pool + "/" + workloadPatchFile:
			patch = f.Data
		}
	}
	return tpl, kust, patch
}

// TestWorkloadFiles: every shipped example's GKE GPUDirect pool (A3 High
// TCPX, A3 Mega TCPXO, A3 Ultra RDMA) gets a pod template that decodes
// strictly as a Kubernetes PodTemplateSpec, a kustomization.yaml that
// decodes strictly as Kustomize's Component, and a patch that decodes
// strictly as a Deployment; the template's sidecar, annotations, volumes
// and training container's mounts are what fabric.Build gives the pool
// (the code accept's rank pods come from), the sidecar at the image the
// matrix pairs with the installer nccl.yaml deploys, and no other pool
// gets workload files.
func TestWorkloadFiles(t *testing.T) {
	fabrics := map[string]int{}
	for _, ex := range golden.ValidExamples(t, "../../examples/*.yaml", asOf) {
		ms, err := Manifests(ex.Spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for i := range ex.Spec.Spec.NodePools {
			p := &ex.Spec.Spec.NodePools[i]
			params, ok := fabric.SpecParams(&ex.Spec.Spec, p)
			if !ok {
				continue
			}
			want++
			pod, err := fabric.Build(params)
			if err != nil {
				t.Fatal(err)
			}
			fabrics[pod.Fabric]++
			checkWorkload(t, ex.Dir+" "+p.Name, ms, p, pod)
		}
		got := 0
		for _, f := range ms {
			if strings.HasSuffix(f.Name, "-pod-template.yaml") {
				got++
			}
		}
		if got != want {
			t.Errorf("%s: %d pod templates, want %d", ex.Dir, got, want)
		}
	}
	for _, f := range []string{matrix.FabricTCPX, matrix.FabricTCPXO, matrix.FabricRoCE} {
		if fabrics[f] == 0 {
			t.Errorf("no shipped example has a %s pool", f)
		}
	}
}

func checkWorkload(t *testing.T, name string, ms []File, p *spec.NodePool, pod fabric.Pod) {
	t.Helper()
	tplData, kustData, patchData := workloadOf(ms, objectName(p.Name))
	if tplData == nil || kustData == nil || patchData == nil {
		t.Fatalf("%s: workload files missing", name)
	}
	var tpl corev1.PodTemplateSpec
	if err := yaml.UnmarshalStrict(tplData, &tpl); err != nil {
		t.Fatalf("%s: the pod template is not a PodTemplateSpec: %v", name, err)
	}
	if diff := cmp.Diff(pod.Sidecars, tpl.Spec.InitContainers); diff != "" {
		t.Errorf("%s: sidecars differ from fabric.Build's (-fabric +template):\n%s", name, diff)
	}
	if diff := cmp.Diff(pod.Annotations, tpl.Annotations); diff != "" {
		t.Errorf("%s: annotations differ from fabric.Build's (-fabric +template):\n%s", name, diff)
	}
	if diff := cmp.Diff(pod.Volumes, tpl.Spec.Volumes[1:]); diff != "" {
		t.Errorf("%s: volumes differ (-fabric +template):\n%s", name, diff)
	}
	c := tpl.Spec.Containers[0]
	if c.Image == "" && !bytes.Contains(tplData, []byte("# "+trainingImageNote+"\n")) {
		t.Errorf("%s: the training container has no image and the header does not say so", name)
	}
	if diff := cmp.Diff(pod.Mounts, c.VolumeMounts[1:]); diff != "" || c.Name != WorkloadContainer || c.VolumeMounts[0].MountPath != "/dev/shm" {
		t.Errorf("%s: container %s mounts (-fabric +template):\n%s", name, c.Name, diff)
	}
	if tpl.Spec.NodeSelector[spec.LabelPool] != p.Name || tpl.Labels[spec.LabelPool] != p.Name {
		t.Errorf("%s: not pinned to its pool: %v %v", name, tpl.Spec.NodeSelector, tpl.Labels)
	}
	if im, _ := matrix.FabricImages(pod.Fabric); im.RxDM != "" {
		if len(tpl.Spec.InitContainers) != 1 || tpl.Spec.InitContainers[0].Image != im.RxDM || !bytes.Contains(manifest(ms, "nccl.yaml"), []byte("image: "+im.Installer+"\n")) {
			t.Errorf("%s: the sidecar is not the one coupled to the installer nccl.yaml deploys (%+v)", name, im)
		}
	}
	var k types.Kustomization
	if err := yaml.UnmarshalStrict(kustData, &k); err != nil || k.Kind != types.ComponentKind || k.APIVersion != types.ComponentVersion || len(k.Patches) != 1 || k.Patches[0].Path != workloadPatchFile {
		t.Errorf("%s: kustomization.yaml %+v: %v", name, k, err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(patchData, &d); err != nil || !cmp.Equal(d.Spec.Template.Spec.InitContainers, tpl.Spec.InitContainers) || d.Spec.Template.Spec.Tolerations != nil {
		t.Errorf("%s: the patch is not the template without tolerations: %v", name, err)
	}
}

func manifest(ms []File, name string) []byte {
	for _, f := range ms {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// TestWorkloadComponentApplies: the A3 Mega example's Kustomize component,
// built by Kustomize itself (krusty) into a kustomization with a Job and a
// Deployment whose training container has its own image, env and mount,
// gives both the tcpxo-daemon sidecar, the device and multi-networking
// annotations, the aperture devices and NCCL variables, and keeps what the
// workload had; a Service in the same kustomization is left alone.
func TestWorkloadComponentApplies(t *testing.T) {
	ex := golden.ValidExamples(t, "../../examples/gke-a3-mega-tcpxo.yaml", asOf)[0]
	ms, err := Manifests(ex.Spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs := filesys.MakeFsInMemory()
	for _, f := range ms {
		if strings.HasPrefix(f.Name, WorkloadDir+"/train-h100-mega/") {
			if err := fs.WriteFile("/app/"+f.Name, f.Data); err != nil {
				t.Fatal(err)
			}
		}
	}
	const container = `      containers:
      - name: training
        image: nvcr.io/nvidia/pytorch:25.01-py3
        env: [{name: MY_VAR, value: "1"}]
        volumeMounts: [{name: data, mountPath: /data}]
      volumes: [{name: data, emptyDir: {}}]
`
	files := map[string]string{
		"/app/kustomization.yaml": "resources: [job.yaml, deploy.yaml, svc.yaml]\ncomponents: [" + WorkloadDir + "/train-h100-mega]\n",
		"/app/job.yaml":           "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n" + container,
		"/app/deploy.yaml":        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: serve}\nspec:\n  selector: {matchLabels: {app: serve}}\n  template:\n    metadata: {labels: {app: serve}, annotations: {mine: kept}}\n    spec:\n" + container,
		"/app/svc.yaml":           "apiVersion: v1\nkind: Service\nmetadata: {name: train}\nspec: {clusterIP: None}\n",
	}
	for name, data := range files {
		if err := fs.WriteFile(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, "/app")
	if err != nil {
		t.Fatal(err)
	}
	im, _ := matrix.FabricImages(matrix.FabricTCPXO)
	for _, r := range res.Resources() {
		if r.GetKind() == "Service" {
			if a := r.GetAnnotations(); len(a) != 0 {
				t.Errorf("the Service was patched: %v", a)
			}
			continue
		}
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			Spec struct {
				Template corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		checkPatched(t, r.GetKind(), o.Spec.Template, im.RxDM)
	}
}

func checkPatched(t *testing.T, kind string, tpl corev1.PodTemplateSpec, rxdm string) {
	t.Helper()
	ps := tpl.Spec
	if len(ps.InitContainers) != 1 || ps.InitContainers[0].Name != "tcpxo-daemon" || ps.InitContainers[0].Image != rxdm {
		t.Errorf("%s: sidecar %+v", kind, ps.InitContainers)
	}
	a := tpl.Annotations
	if !strings.Contains(a[fabric.AnnotationDevicesPrefix+"tcpxo-daemon"], "- path: /dev/dmabuf_import_helper\n") ||
		a["networking.gke.io/default-interface"] != "eth0" || !strings.Contains(a["networking.gke.io/interfaces"], `{"interfaceName":"eth8","network":"train-h100-mega-gpunic-8"}`) {
		t.Errorf("%s: annotations %v", kind, a)
	}
	if kind == "Deployment" && a["mine"] != "kept" {
		t.Errorf("the Deployment's own annotation is gone: %v", a)
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("%s: containers %+v (the patch added one: its name is not the workload's)", kind, ps.Containers)
	}
	c := ps.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	if c.Image != "nvcr.io/nvidia/pytorch:25.01-py3" || env["MY_VAR"] != "1" || env["NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"] != "/dev/aperture_devices" ||
		env["NCCL_FASTRAK_IFNAME"] != "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8" || env["LD_LIBRARY_PATH"] != "/usr/local/nvidia/lib64" {
		t.Errorf("%s: container image %s env %v", kind, c.Image, env)
	}
	if mounts["/data"] != "data" || mounts["/dev/aperture_devices"] != "aperture-devices" || mounts["/usr/local/nvidia/lib64"] != "nvidia-lib64" {
		t.Errorf("%s: mounts %v", kind, mounts)
	}
	if q := c.Resources.Limits["nvidia.com/gpu"]; q.Value() != 8 || c.SecurityContext == nil || c.SecurityContext.Capabilities == nil {
		t.Errorf("%s: GPUs %s, security context %+v", kind, q.String(), c.SecurityContext)
	}
	vols := map[string]bool{}
	for _, v := range ps.Volumes {
		vols[v.Name] = true
	}
	if !vols["data"] || !vols["aperture-devices"] || !vols["dshm"] {
		t.Errorf("%s: volumes %v", kind, vols)
	}
}
