package helmgen

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gpuctl/gpuctl/internal/fabric"
	"github.com/gpuctl/gpuctl/internal/matrix"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// The workload side of the GKE GPUDirect pools (TCPX, TCPXO, RDMA with
// gIB): what a training pod adds to run NCCL over the pool's GPU NICs,
// built by internal/fabric, the code `gpuctl accept` builds its nccl-multi
// rank pods with, so that the two never differ. Per pool, under
// manifests/<env>/workload/:
//
//   - <pool>-pod-template.yaml: a PodTemplateSpec (the receive-path
//     sidecar, the device and multi-networking annotations, volumes, the
//     training container's NCCL environment, mounts and security context),
//     to copy into a JobSet's or any controller's pod template;
//   - <pool>/kustomization.yaml (kind Component) and <pool>/fabric-patch.yaml:
//     the same as a strategic merge patch of every Deployment, StatefulSet
//     and Job of a kustomization that lists the folder under components.
//
// Neither is applied by itself: the folder holds no object of its own.

// WorkloadDir is the folder of the workload files under manifests/<env>/.
const WorkloadDir = "workload"

// WorkloadContainer is the name of the training container in the pod
// template and the patch: a strategic merge patch merges containers by
// name, so the training container of a workload that uses the component
// must have this name.
const WorkloadContainer = "training"

// trainingImageNote is the pod template's header line on what the template
// leaves to the workload: the API server rejects a container without an
// image (spec.containers[0].image: Required value).
const trainingImageNote = "The training container has no image and no command: set the workload's own (the API server rejects a container without an image)."

// WorkloadKinds are the kinds the Kustomize component patches (a Kustomize
// patch target's kind is a regular expression): those whose pod template is
// spec.template.
const WorkloadKinds = "Deployment|StatefulSet|Job"

// Kustomize's Component kind and its API version.
// Source: https://kubectl.docs.kubernetes.io/guides/config_management/components/
// (2026-12-03) and sigs.k8s.io/kustomize/api/types (v0.21.1), whose
// ComponentKind and ComponentVersion they are.
const (
	kustomizeComponentVersion = "kustomize.config.k8s.io/v1alpha1"
	kustomizeComponentKind    = "Component"
)

// poolWorkload is one pool's workload side: the fabric pod and the pod
// template it makes.
type poolWorkload struct {
	pool     *spec.NodePool
	pod      fabric.Pod
	template corev1.PodTemplateSpec
}

// workloadPods are the workload sides of the GKE pools whose NCCL transport
// is a GPUDirect fabric with GPU NICs gpuctl attaches (fabric.SpecNetworks),
// in spec order. Errors: one fabric.Build gives (a fact the pool lacks).
func workloadPods(s *spec.Spec) ([]poolWorkload, error) {
	var out []poolWorkload
	for i := range s.NodePools {
		p := &s.NodePools[i]
		w, ok, err := workloadPod(s, p)
		if err != nil {
			return nil, fmt.Errorf("pool %s: %w", p.Name, err)
		}
		if ok {
			out = append(out, w)
		}
	}
	return out, nil
}

// workloadPod is pool p's workload side; false for a pool without one.
func workloadPod(s *spec.Spec, p *spec.NodePool) (poolWorkload, bool, error) {
	params, ok := fabric.SpecParams(s, p)
	if !ok {
		return poolWorkload{}, false, nil
	}
	pod, err := fabric.Build(params)
	if err != nil || pod.Fabric == "" {
		return poolWorkload{}, false, err
	}
	// /dev/shm in memory, as every reference workload and accept's rank
	// pods mount it: NCCL's shared-memory transport outgrows the
	// container runtime's 64 MiB default.
	c := corev1.Container{
		Name:         WorkloadContainer,
		VolumeMounts: []corev1.VolumeMount{{Name: "dshm", MountPath: "/dev/shm"}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
			corev1.ResourceName(gpuResource): resource.MustParse(fmt.Sprint(params.GPUs)),
		}},
	}
	tpl := corev1.PodTemplateSpec{}
	tpl.Labels = map[string]string{spec.LabelPool: p.Name}
	tpl.Spec.NodeSelector = map[string]string{spec.LabelPool: p.Name}
	tpl.Spec.Tolerations = tolerationsFor([]spec.NodePool{withGKEGPUTaint(*p)}, false)
	tpl.Spec.Containers = []corev1.Container{c}
	tpl.Spec.Volumes = []corev1.Volume{{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}}
	tpl.Annotations = pod.Apply(&tpl.Spec, &tpl.Spec.Containers[0], nil)
	return poolWorkload{pool: p, pod: pod, template: tpl}, true, nil
}

// gpuResource is the device plugin's whole-GPU resource, which GKE's own
// plugin advertises too.
const gpuResource = "nvidia.com/gpu"

// withGKEGPUTaint is pool p with the taint GKE puts on its GPU nodes
// (gkeGPUTaint) where the spec does not list it.
func withGKEGPUTaint(p spec.NodePool) spec.NodePool {
	if !slices.ContainsFunc(p.Taints, func(t spec.Taint) bool { return t.Key == gkeGPUTaint.Key && t.Effect == gkeGPUTaint.Effect }) {
		p.Taints = append(slices.Clip(p.Taints), gkeGPUTaint)
	}
	return p
}

// workloadPatch is the Kustomize component's strategic merge patch: the
// pod template under spec.template. Its kind and name are placeholders, as
// the component's patch target selects the objects it applies to.
type workloadPatch struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   map[string]string `json:"metadata"`
	Spec       struct {
		Template corev1.PodTemplateSpec `json:"template"`
	} `json:"spec"`
}

// kustomizeComponent is a kustomization.yaml of kind Component with
// patches (the fields of sigs.k8s.io/kustomize/api/types.Kustomization
// that it sets).
type kustomizeComponent struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Patches    []kustomizePatch `json:"patches"`
}

type kustomizePatch struct {
	Path   string          `json:"path"`
	Target kustomizeTarget `json:"target"`
}

type kustomizeTarget struct {
	Kind string `json:"kind"`
}

// workloadPatchFile is the patch's file name in the component's folder.
const workloadPatchFile = "fabric-patch.yaml"

// workloadFiles are the workload files of every pool with a workload side
// (names relative to manifests/<env>/).
func workloadFiles(cs *spec.ClusterSpec, ws []poolWorkload, opts Options) ([]File, error) {
	var out []File
	for _, w := range ws {
		dir := WorkloadDir + "/" + objectName(w.pool.Name)
		notes := workloadNotes(w)
		tpl, err := marshalWorkload(w.template)
		if err != nil {
			return nil, err
		}
		patch := workloadPatch{APIVersion: "apps/v1", Kind: "Deployment", Metadata: map[string]string{"name": "gpuctl-fabric-" + objectName(w.pool.Name)}}
		// Tolerations have no merge key: a strategic merge patch would
		// replace the workload's own list, so the patch leaves them out.
		patch.Spec.Template = *w.template.DeepCopy()
		patch.Spec.Template.Spec.Tolerations = nil
		pb, err := marshalWorkload(patch)
		if err != nil {
			return nil, err
		}
		kb, err := marshalWorkload(kustomizeComponent{APIVersion: kustomizeComponentVersion, Kind: kustomizeComponentKind,
			Patches: []kustomizePatch{{Path: workloadPatchFile, Target: kustomizeTarget{Kind: WorkloadKinds}}}})
		if err != nil {
			return nil, err
		}
		usage := fmt.Sprintf("Use: list this folder under components: in your kustomization; it patches every %s there (their training container named %s).", strings.ReplaceAll(WorkloadKinds, "|", ", "), WorkloadContainer)
		out = append(out,
			File{Name: WorkloadDir + "/" + objectName(w.pool.Name) + "-pod-template.yaml", Data: append(header(cs, opts, append(notes,
				"A PodTemplateSpec: copy it into a JobSet's or another controller's pod template (the training container is "+WorkloadContainer+"), or use the Kustomize component in "+objectName(w.pool.Name)+"/.",
				trainingImageNote)...), tpl...)},
			File{Name: dir + "/kustomization.yaml", Data: append(header(cs, opts, append(notes, usage)...), kb...)},
			File{Name: dir + "/" + workloadPatchFile, Data: append(header(cs, opts, append(notes,
				"The component's patch (kustomization.yaml beside it): its kind and name are placeholders, the component's target selects what it patches.",
				"It sets no tolerations (a strategic merge patch replaces a list without a merge key): tolerate "+taintList(w.template.Spec.Tolerations)+" in the workload.")...), pb...)},
		)
	}
	return out, nil
}

// workloadNotes are the workload files' header lines: what the pod side
// is, what it needs, the prelude the training container must run, the
// image versions and their sources.
func workloadNotes(w poolWorkload) []string {
	notes := []string{
		fmt.Sprintf("The workload side of pool %s's %s: what a training pod adds to run NCCL over the pool's GPU NICs,", w.pool.Name, w.pod.Name),
		"built by the code gpuctl accept builds its nccl-multi rank pods with (the annotations name the Network objects of nccl.yaml).",
	}
	if len(w.pod.Privileged) > 0 {
		notes = append(notes, "It needs the Pod Security level privileged (teams.yaml gives the namespaces of the pool's teams that): "+strings.Join(w.pod.Privileged, "; ")+".")
	}
	if v, ok := w.pod.Env["LD_LIBRARY_PATH"]; ok {
		notes = append(notes, "LD_LIBRARY_PATH="+v+" (where the NCCL plugin installer puts the plugin and NCCL) replaces the image's own value: where the image sets one (NGC's PyTorch images do), export LD_LIBRARY_PATH=\""+v+":${LD_LIBRARY_PATH}\" in the command instead, as accept's rank pods do.")
	}
	if w.pod.Prelude != "" {
		notes = append(notes, "Before NCCL starts, the training container must run: "+w.pod.Prelude)
	}
	if im, ok := matrix.FabricImages(w.pod.Fabric); ok && im.RxDM != "" {
		notes = append(notes, fmt.Sprintf("The sidecar %s is coupled to the NCCL plugin installer %s that nccl.yaml's installer DaemonSet runs (one release; upgrade both together). Source: %s (as of %s).",
			im.RxDM, im.Installer, strings.Join(im.Sources, " "), im.AsOf))
	}
	return append(notes, "Sources: "+strings.Join(w.pod.Sources, " "))
}

// taintList names the taints tols tolerate, for people.
func taintList(tols []corev1.Toleration) string {
	var out []string
	for _, t := range tols {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		out = append(out, s+":"+string(t.Effect))
	}
	return strings.Join(out, ", ")
}

// creationTimestamp is the null creationTimestamp every ObjectMeta writes.
var creationTimestamp = regexp.MustCompile(`(?m)^ *creationTimestamp: null\n`)

// marshalWorkload writes o as multiDoc's objects are written (one YAML
// document), without ObjectMeta's null creationTimestamp at any depth.
func marshalWorkload(o any) ([]byte, error) {
	b, err := marshalObject(o)
	if err != nil {
		return nil, err
	}
	return creationTimestamp.ReplaceAll(b, nil), nil
}
